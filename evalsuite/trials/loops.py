"""Event loops and the threads they run on: a thread runs one loop at a time, so work that runs a loop of its own
(the trial engine, closing a long-lived agent) goes to a thread of its own when the caller's thread already runs one
(a notebook cell, an agent closed from inside another loop)."""
from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:  # the documented way to ask: no loop runs in this thread
        return None


def outside_loop(job: Callable[[], T], name: str) -> T:
    """job() here when no loop runs in this thread, else in a thread named `name`; its result or its exception
    handed back to the caller."""
    if running_loop() is None:
        return job()
    out: list[T] = []
    failed: list[BaseException] = []

    def guarded() -> None:
        try:
            out.append(job())
        except BaseException as exc:  # handed to the caller's thread below
            failed.append(exc)

    thread = threading.Thread(target=guarded, name=name)
    thread.start()
    thread.join()
    if failed:
        raise failed[0]
    return out[0]

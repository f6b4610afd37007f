"""Held-out tasks: never exported for training or prompt tuning, and every read of them logged.

A held-out task that leaks into a training set stops measuring anything, and
the only defence after the fact is knowing who read it, when and for what.
"""
from __future__ import annotations

import datetime as dt
import getpass
import json
import os
from pathlib import Path
from typing import Literal

from evalsuite.core.home import private_home
from evalsuite.core.records import TaskRecord

Purpose = Literal["evaluation", "training", "prompt_tuning", "review"]
EXCLUDING_HELD_OUT = {"training", "prompt_tuning"}


def access_log_path() -> Path:
    return private_home() / "access_log.jsonl"


HELD_OUT = "held_out"  # the split nobody outside evaluation may see


def without_held_out(tasks: list[TaskRecord]) -> list[TaskRecord]:
    """The tasks that may be shown, exported for training or offered to people: every split but held_out."""
    return [t for t in tasks if t.split != HELD_OUT]


def log_read(tasks: list[TaskRecord], purpose: str, what: str) -> None:
    """Append one line naming who read which held-out tasks, when, and for what."""
    held = [t.task_id for t in tasks if t.split == HELD_OUT]
    if held:
        log_access({"purpose": purpose, "what": what, "held_out_tasks": held})


def log_access(entry: dict) -> None:
    """Append one line to the access log: entry with who (the OS user, or EVALSUITE_USER) and when in front."""
    path = access_log_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    line = {"when": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "who": os.environ.get("EVALSUITE_USER") or getpass.getuser(), **entry}
    with open(path, "a") as fh:
        fh.write(json.dumps(line) + "\n")


def export_tasks(tasks: list[TaskRecord], purpose: Purpose) -> list[TaskRecord]:
    """The tasks a given purpose may receive: training and prompt tuning never see held-out tasks."""
    if purpose in EXCLUDING_HELD_OUT:
        return without_held_out(tasks)
    return list(tasks)

"""Progress a person can watch: trials done, in flight and failed, tokens and cost so far, and an ETA.

Drawn live on stderr with rich when asked (stdout stays for results); a `report` callback gets the same line at
most every `every` seconds and once at the end (the Dagster trials asset logs it to the run).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from evalsuite.trials.spend import Spend
from evalsuite.trials.tracelog import TrialRecord

Report = Callable[[str], None]


class RunProgress:
    """The counts of one batch of trials, updated as trials start and end."""

    def __init__(self, total: int, done: int, spend: Spend, report: Report | None = None, every: float = 10.0):
        self.total, self.done, self.in_flight, self.failed, self.errors = total, done, 0, 0, 0
        self.spend = spend
        self._report, self._every, self._last = report, every, time.monotonic()
        self._bar: tuple[Progress, int] | None = None
        self._started = time.monotonic()
        self._done_at_start = done

    def started(self) -> None:
        self.in_flight += 1
        self._refresh()

    def finished(self, record: TrialRecord, was_in_flight: bool = True) -> None:
        self.in_flight -= 1 if was_in_flight else 0
        self.done += 1
        self.failed += record.outcome != "pass"
        self.errors += record.outcome == "infra_error"
        self.spend.add(record.usage)
        if self._bar is not None:
            self._bar[0].advance(self._bar[1])
        self._refresh()

    def line(self) -> str:
        """`trials 120/800 · in flight 32 · not passed 20 (2 infra errors) · 1,204,112 tokens, 0.42 USD · ETA 3m10s`"""
        eta = self._eta()
        return (f"trials {self.done}/{self.total} · in flight {self.in_flight} · not passed {self.failed} "
                f"({self.errors} infra errors) · {self.spend.line()}" + (f" · ETA {eta}" if eta else ""))

    def _eta(self) -> str | None:
        ran, left = self.done - self._done_at_start, self.total - self.done
        if ran == 0 or left == 0:
            return None
        seconds = int((time.monotonic() - self._started) / ran * left)
        return f"{seconds // 60}m{seconds % 60:02d}s"

    def _refresh(self, final: bool = False) -> None:
        if self._bar is not None:
            self._bar[0].update(self._bar[1], status=self._status())
        now = time.monotonic()
        if self._report is not None and (final or now - self._last >= self._every):
            self._last = now
            self._report(self.line())

    def _status(self) -> str:
        return f"in flight {self.in_flight} · not passed {self.failed} · {self.spend.line()}"

    @contextmanager
    def shown(self, bar: bool) -> Iterator[RunProgress]:
        """Draw the bar (when asked) while the batch runs; report the final line when it ends."""
        if not bar:
            yield self
            self._refresh(final=True)
            return
        columns = (TextColumn("trials"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[status]}"),
                   TimeElapsedColumn(), TimeRemainingColumn())
        with Progress(*columns, console=Console(stderr=True)) as progress:
            self._bar = (progress, progress.add_task("trials", total=self.total, completed=self.done,
                                                      status=self._status()))
            try:
                yield self
            finally:
                self._bar = None
        self._refresh(final=True)

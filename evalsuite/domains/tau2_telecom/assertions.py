"""One assertion, two registrations: a set-up/grading helper (what a task's initialization or tau2's evaluator calls)
and a domain check (what our grader runs on a trial's end state), sharing one implementation.

An assertion is `impl(db, /, **arguments) -> bool` over a SQLite connection:
the helper passes its call's `ctx.db`, the check the end state `inp.end` with
the goal's params as the arguments; `passed` is the assertion's boolean. A
generation-only assertion that raises where tau2's raises (a ToolError: the
bill is not overdue) is a failed check whose detail is that text.
"""
from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from evalsuite.core.records import Check
from evalsuite.worlds.domain import CheckInput, Domain, ToolContext, ToolError

Assertion = Callable[..., bool]


def assertion(domain: Domain, owner: str) -> Callable[[Assertion], Assertion]:
    """`@assertion(DOMAIN, "TelecomTools")` registers `impl` as a helper and a check under its name; its qualname
    `<owner>.<name>` makes a wrong keyword read as tau2's TypeError does."""

    def register(impl: Assertion) -> Assertion:
        impl.__qualname__ = f"{owner}.{impl.__name__}"

        def helper(ctx: ToolContext, /, **arguments: Any) -> bool:
            return impl(ctx.db, **arguments)

        def check(inp: CheckInput) -> Check:
            return outcome(impl, inp.end, inp.params)

        for fn in (helper, check):
            fn.__name__, fn.__qualname__, fn.__doc__ = impl.__name__, impl.__qualname__, impl.__doc__
        domain.helper(helper)
        domain.check(check)
        return impl

    return register


def outcome(impl: Assertion, db: sqlite3.Connection, params: dict[str, Any]) -> Check:
    """The check's outcome: passed iff the assertion holds; the call and its result (or refusal) as the detail."""
    call = f"{impl.__name__}({', '.join(f'{k}={v!r}' for k, v in params.items())})"
    try:
        result = impl(db, **params)
    except ToolError as exc:
        return Check.outcome(passed=False, detail=f"{call} raised: {exc}")
    if not isinstance(result, bool):
        raise TypeError(f"{call} returned {result!r}, not a boolean")
    return Check.outcome(passed=result, detail=f"{call} -> {result}")

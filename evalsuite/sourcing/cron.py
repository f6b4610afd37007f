"""Cron strings as a suite spec's `schedule` takes them: checked when the spec is read, not when Dagster loads it.

The grammar is the five-field one Dagster's schedules accept (minute, hour, day of month, month, day of week;
`*`, numbers, month and weekday names, ranges, lists, steps) and its macros (`@daily` ...). The library never
imports Dagster (whose cron parser is vendored inside it), so the fields are parsed here;
tests/sourcing/test_cron.py holds every string this module accepts to Dagster's own check.
"""
from __future__ import annotations

MACROS = frozenset({"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"})
MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                                      "dec"), 1)}
WEEKDAYS = {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
# (name, lowest, highest, names): day of week 7 is Sunday again, as in croniter
FIELDS = (("minute", 0, 59, {}), ("hour", 0, 23, {}), ("day of month", 1, 31, {}), ("month", 1, 12, MONTHS),
          ("day of week", 0, 7, WEEKDAYS))


def cron_problem(text: str) -> str | None:
    """What is wrong with a cron string, in a few words, or None when it is one."""
    if text.strip() in MACROS:
        return None
    parts = text.split()
    if len(parts) != len(FIELDS):
        return f"{text!r} is not a cron string: expected 5 fields (minute hour day-of-month month day-of-week), " \
               f"got {len(parts)}"
    values = []
    for part, (name, low, high, names) in zip(parts, FIELDS):
        try:
            values.append(_field(part, low, high, names))
        except ValueError as exc:
            return f"{text!r} is not a cron string: {name} {part!r}: {exc}"
    if values[3] == {2} and values[2] and values[2] <= {30, 31}:
        return f"{text!r} is not a cron string: February has no day {min(values[2])}, so it never runs"
    return None


def _field(part: str, low: int, high: int, names: dict[str, int]) -> set[int] | None:
    """The values one field names (None for `*`, every value); a ValueError says what is wrong."""
    if part == "*":
        return None
    out: set[int] = set()
    for item in part.split(","):
        body, _, step_text = item.partition("/")
        step = _number(step_text, 1, high - low + 1, {}) if step_text else 1
        if body == "*":
            start, end = low, high
        elif "-" in body:
            first, _, last = body.partition("-")
            start, end = _number(first, low, high, names), _number(last, low, high, names)
            if start > end:
                raise ValueError(f"range {body} runs backwards")
        else:
            start = _number(body, low, high, names)
            end = high if step_text else start
        out.update(range(start, end + 1, step))
    return out


def _number(text: str, low: int, high: int, names: dict[str, int]) -> int:
    if text.lower() in names:
        return names[text.lower()]
    if not text.isascii() or not text.isdigit():
        raise ValueError(f"{text!r} is not a number" + (f" or a name ({', '.join(names)})" if names else ""))
    value = int(text)
    if not low <= value <= high:
        raise ValueError(f"{value} is outside {low}-{high}")
    return value

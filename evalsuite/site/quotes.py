"""A trial's quotations shown with their sources, from the recorded trace alone: every quotation a successful write
submitted (an argument object with `source_id` and `quotation`, as a decision brief's claims are), beside the
source as the agent opened it (a successful read whose output has `source_id` and `text`), whether it was opened
before the write, and whether the quotation stands verbatim in it (evalsuite.grading.quotations), the quoted
words marked in their context. Nothing but the trace is read, so a page shows only what the trial recorded."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from evalsuite.grading.quotations import quotation_problem, words

CONTEXT = 160  # characters of the source shown either side of the quoted words


def _quotations(value: Any) -> Iterator[dict]:
    if isinstance(value, dict):
        if isinstance(value.get("source_id"), str) and isinstance(value.get("quotation"), str):
            yield value
        for v in value.values():
            yield from _quotations(v)
    elif isinstance(value, list):
        for v in value:
            yield from _quotations(v)


def _opened(step: dict) -> dict | None:
    out = step.get("result")
    ok = step.get("outcome") == "ok" and step.get("kind") == "read" and isinstance(out, dict)
    return out if ok and isinstance(out.get("source_id"), str) and isinstance(out.get("text"), str) else None


def quoted_sources(steps: list[dict]) -> list[dict[str, Any]]:
    """One row per quotation a successful write of the trace submitted, in order."""
    opened: dict[str, dict] = {}
    rows = []
    for step in steps:
        if (source := _opened(step)) is not None:
            opened.setdefault(source["source_id"], source)
        if step.get("kind") != "write" or step.get("outcome") != "ok":
            continue
        for q in _quotations(step.get("arguments")):
            rows.append(_row(step["seq"], q, opened.get(q["source_id"])))
    return rows


def _row(seq: int, q: dict, source: dict | None) -> dict[str, Any]:
    row = {"seq": seq, "question": q.get("question"), "source_id": q["source_id"], "quotation": q["quotation"],
           "opened": source is not None, "verbatim": False, "source": None, "before": "", "quoted": "", "after": ""}
    if source is None:
        return row
    text, quote = words(source["text"]), words(q["quotation"])
    row["source"] = {k: source.get(k) for k in ("publisher", "published_on", "title")}
    row["verbatim"] = quotation_problem(q["quotation"], source["text"], q["source_id"]) is None
    at = text.find(quote) if row["verbatim"] else -1
    if at < 0:  # not found: show the start of the source, to read against the quotation
        return row | {"before": text[:2 * CONTEXT] + ("…" if len(text) > 2 * CONTEXT else "")}
    end = at + len(quote)
    before, after = text[max(0, at - CONTEXT):at], text[end:end + CONTEXT]
    if at > CONTEXT:  # cut at a word edge, never inside a word
        before = "…" + before[before.find(" ") + 1:]
    if end + CONTEXT < len(text):
        after = after[:after.rfind(" ")] + "…"
    return row | {"before": before, "quoted": text[at:end], "after": after}

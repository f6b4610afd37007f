"""The review ledger: reviewers' sign-offs on goal states and resolutions of disagreements, kept per suite.

The ledger lives beside a suite's derived tasks (`<home>/suites/<suite>/reviews.jsonl`), never inside them, so a
rebuild that rewrites the tasks keeps every sign-off. Each line is one ReviewEntry bound to the hash of what the
reviewer saw (`goal_sha256`: the goal state, the trigger it answers and the policy it cites). A rebuild that
changes any of these gives the task a new hash: earlier sign-offs stay on record but no longer count, and the
task needs review again.

Reviewers are people, not spellings: names are compared by their key (evalsuite.core.people: NFKC, case-fold,
confusables, invisible characters, punctuation and trailing counters), so `ann`, `ANN.`, `ann (2)` and `аnn` with
a Cyrillic а are one signature. A resolution is recorded by a reviewer other than those who signed the goal, and
quotes the clause of the task's policy that settles it, by its id and its text.

Each line carries `chain`: the sha256 of the previous line (as written) and this line's own content, so a line
appended by hand, edited or removed breaks the chain at that line and the ledger is refused there, naming the file
and line. A ledger written before lines were chained is refused as a whole until `evalsuite review seal` chains it
once (see `seal`). The chain catches edits made outside evalsuite; it is not a signature: whoever can run this
code can write a valid line, as they could sign with any name.

The file is append-only: a reviewer signing again adds a line that replaces their earlier decision on the same
hash when the ledger is read. Appends hold a file lock (`reviews.lock`) across read, check and write, because a
resolution is checked against the ledger as it stands (is a disagreement open?) and two reviewers may sign at
once; each append (one entry, or a reviewer's bulk sign-off) is one `write` of whole lines on a descriptor
opened with O_APPEND, then fsync. No temporary file
is involved, so a build's sweep of temporaries (which does not take this lock) can never remove a sign-off in
flight; a line cut short by a crash is found before the next append and named, never written over.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from filelock import FileLock, Timeout
from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from evalsuite.audit.chain import CHAIN, chained, is_chained, last_line, read_chain, read_lines
from evalsuite.core.hashing import json_sha256
from evalsuite.core.io import atomic_write, one_line, validation_line
from evalsuite.core.people import PersonNameError, person_key
from evalsuite.core.records import Record, TaskRecord
from evalsuite.tasks.traceability import cited_clauses

LEDGER_NAME = "reviews.jsonl"
REQUIRED = 2  # distinct reviewers who must agree on a goal state
LOCK_TIMEOUT = 60.0  # seconds a signature waits for another one being written
RECORD_REVIEWER = "(task record)"  # who resolved, for a resolution carried inside an imported task record
QUOTE_WORDS = 5  # a sentence of a clause this long or longer is quotable; shorter ones are headings
Decision = Literal["agree", "disagree"]
DECISIONS = ("agree", "disagree")


class ReviewError(ValueError):
    """A review that cannot be recorded, or a ledger that cannot be read; one line naming the file or option."""


def goal_sha256(task: TaskRecord) -> str:
    """What a reviewer signs: the goal state, the trigger it answers and the policy (doc, version, clause text).
    Nothing a build or release stamps in (suite version, environment, provenance dates) takes part."""
    return json_sha256(task.hashed_form(include={"goal_state", "trigger", "policy"}))


class ReviewEntry(Record):
    """One ledger line: a reviewer's decision on a goal hash (`sign`), or how a disagreement was settled (`resolve`)."""

    task_id: str = Field(min_length=1)
    goal_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    kind: Literal["sign", "resolve"]
    reviewer: str = Field(min_length=1)  # for a resolution: who settled it
    decision: Decision | None = None
    note: str = ""
    resolution: str | None = None
    at: dt.datetime

    @field_validator("reviewer")
    @classmethod
    def _named(cls, name: str) -> str:
        name = name.strip()
        if not name or "\n" in name:
            raise ValueError("a reviewer is named by one non-blank line")
        person_key(name)  # a name that is nothing but punctuation or invisible characters names nobody
        return name

    @model_validator(mode="after")
    def _complete(self) -> ReviewEntry:
        if self.kind == "sign" and (self.decision is None or self.resolution is not None):
            raise ValueError("a sign-off carries a decision (agree or disagree) and no resolution")
        if self.kind == "resolve" and (self.decision is not None or not (self.resolution or "").strip()):
            raise ValueError("a resolution carries its text and no decision")
        return self


def _who(name: str) -> str:
    """One reviewer however their name is spelled: 'Ann', 'ann.', 'ann (2)' and 'аnn' (Cyrillic а) are one."""
    return person_key(name)


class ReviewState(BaseModel):
    """Where one task's current goal state stands: the latest decision of each reviewer, and any resolution."""

    task_id: str
    goal_sha256: str
    decisions: dict[str, ReviewEntry]  # reviewer (as first written) -> their latest sign-off on this hash
    resolution: ReviewEntry | None
    open_disagreement: bool
    earlier: int  # reviewers who signed a goal state or policy of this task that has since changed

    @property
    def agreeing(self) -> list[str]:
        return [r for r, e in self.decisions.items() if e.decision == "agree"]

    @property
    def resolved(self) -> bool:
        return self.resolution is not None and not self.open_disagreement and \
            any(e.decision == "disagree" for e in self.decisions.values())

    @property
    def adjudicated(self) -> bool:
        return not self.open_disagreement and (self.resolved or len(self.agreeing) >= REQUIRED)

    @property
    def needs_review_again(self) -> bool:
        return not self.decisions and self.earlier > 0

    def missing(self) -> str | None:
        """What the task still needs, in a few words (None once adjudicated)."""
        if self.adjudicated:
            return None
        if self.open_disagreement:
            return "disagreement open"
        again = f" (goal changed since {self.earlier} earlier sign-off(s))" if self.needs_review_again else ""
        return f"{len(self.agreeing)} of {REQUIRED} reviewer sign-offs{again}"

    def reason(self) -> str | None:
        """Why acceptance quarantines the task (None once adjudicated)."""
        if self.adjudicated:
            return None
        if self.open_disagreement:
            return "reviewers disagree and no resolution against the policy text is recorded"
        again = (f" (the goal state or policy changed since {self.earlier} earlier sign-off(s): review it again)"
                 if self.needs_review_again else "")
        return f"goal state has {len(self.agreeing)} reviewer sign-off(s), {REQUIRED} required{again}"


def record_entries(task: TaskRecord, goal: str) -> list[ReviewEntry]:
    """Reviews an imported task record carries itself, as sign-offs given before any in the ledger on the goal the
    record carries (a derived record carries none: for derived suites the ledger is the only source)."""
    adj = task.adjudication
    if adj is None:
        return []
    out = [ReviewEntry(task_id=task.task_id, goal_sha256=goal, kind="sign", reviewer=r.reviewer, decision=r.decision,
                       note=r.note, at=dt.datetime.combine(r.date, dt.time(), dt.timezone.utc)) for r in adj.reviews]
    if (adj.resolution or "").strip():
        last = max((e.at for e in out), default=dt.datetime.min.replace(tzinfo=dt.timezone.utc))
        out.append(ReviewEntry(task_id=task.task_id, goal_sha256=goal, kind="resolve", reviewer=RECORD_REVIEWER,
                               resolution=adj.resolution, at=last))
    return out


def review_state(task: TaskRecord, entries: Iterable[ReviewEntry]) -> ReviewState:
    """Fold the ledger (in order) for one task: the latest decision per reviewer on the current goal hash; a
    disagreement is open unless a resolution was recorded after it."""
    goal = goal_sha256(task)
    mine = [e for e in entries if e.task_id == task.task_id]
    latest: dict[str, tuple[int, ReviewEntry]] = {}
    names: dict[str, str] = {}
    resolution: tuple[int, ReviewEntry] | None = None
    for i, e in enumerate([*record_entries(task, goal), *(e for e in mine if e.goal_sha256 == goal)]):
        if e.kind == "resolve":
            if _who(e.reviewer) not in latest and _settles(task, e):
                resolution = (i, e)
        else:
            latest[_who(e.reviewer)] = (i, e)
            names.setdefault(_who(e.reviewer), e.reviewer)
    settled = resolution[0] if resolution else -1
    open_ = any(e.decision == "disagree" and i > settled for i, e in latest.values())
    earlier = {_who(e.reviewer) for e in mine if e.goal_sha256 != goal and e.kind == "sign"}
    return ReviewState(task_id=task.task_id, goal_sha256=goal, decisions={names[k]: e for k, (_, e) in latest.items()},
                       resolution=resolution[1] if resolution else None, open_disagreement=open_, earlier=len(earlier))


def _settles(task: TaskRecord, e: ReviewEntry) -> bool:
    """A resolution that counts: a party to the disagreement cannot settle it, nor can a text that cites no clause
    of the disputed goal (Ledger.resolve refuses both; a line written by other means is held to the same). An
    imported record's own resolution is its source's word, as its reviews are."""
    return e.reviewer == RECORD_REVIEWER or _citation_problem(task, e.resolution or "") is None


def review_counts(states: Sequence[ReviewState]) -> dict[str, int]:
    """How far review of a task set has come: tasks signed by 0, 1, 2 or more reviewers on their current goal,
    disagreements open, resolved, adjudicated, and tasks whose goal changed since they were signed."""
    return {"tasks": len(states),
            "signed_by_0": sum(not s.decisions for s in states),
            "signed_by_1": sum(len(s.decisions) == 1 for s in states),
            "signed_by_2_or_more": sum(len(s.decisions) >= REQUIRED for s in states),
            "disagreements_open": sum(s.open_disagreement for s in states),
            "resolved": sum(s.resolved for s in states),
            "adjudicated": sum(s.adjudicated for s in states),
            "needs_review_again": sum(s.needs_review_again for s in states)}


def status_lines(states: Sequence[ReviewState]) -> list[str]:
    """`evalsuite review status`: the counts in one line, then one line per task not yet adjudicated."""
    c = review_counts(states)
    head = (f"{c['tasks']} tasks: signed by 0: {c['signed_by_0']}, 1: {c['signed_by_1']}, 2 or more: "
            f"{c['signed_by_2_or_more']}; disagreements open: {c['disagreements_open']}; resolved: {c['resolved']}; "
            f"adjudicated: {c['adjudicated']}; needs review again: {c['needs_review_again']}")
    return [head, *(f"{s.task_id}: {s.missing()}" for s in states if not s.adjudicated)]


def by_task(entries: Iterable[ReviewEntry]) -> dict[str, list[ReviewEntry]]:
    """Ledger entries grouped by task id, each group in ledger order."""
    out: dict[str, list[ReviewEntry]] = {}
    for e in entries:
        out.setdefault(e.task_id, []).append(e)
    return out


class Ledger:
    """One suite's review ledger file (it need not exist yet: no line, no review)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.skipped: list[str] = []  # the lines the last read skipped, one `FILE:LINE: why` each

    def entries(self) -> list[ReviewEntry]:
        """Every entry that counts, in order. A line that is not a valid entry (`FILE:LINE: field: message`) or
        breaks the chain (added or edited by hand: `FILE:LINE: this line does not follow ...`) is skipped and
        named in `skipped`, never fatal: the other lines count as they did. A ledger none of whose lines is
        chained was written before the chain and is refused whole until sealed."""
        lines, self.skipped, linked = read_chain(self.path, ReviewError)
        if (lines or self.skipped) and not linked:
            raise ReviewError(f"{self.path}: written before ledger lines were chained; check its lines, then run "
                              "`evalsuite review seal SPEC` once to chain them")
        entries = []
        for n, _, obj in lines:
            try:
                entries.append(_entry(self.path, n, obj))
            except ReviewError as exc:
                self.skipped.append(str(exc))
        return entries

    def sign(self, task: TaskRecord, reviewer: str, decision: str, note: str = "") -> ReviewState:
        """Record a reviewer's decision on the task's current goal; it replaces their earlier one on that goal."""
        entry = _sign_entry(task, reviewer, decision, note)
        with self._locked() as entries:
            self._append_entries([entry])
            return review_state(task, [*entries, entry])

    def sign_all(self, tasks: Sequence[TaskRecord], reviewer: str, decision: str, note: str = "") -> SignedAll:
        """One reviewer's decision on the current goal of every task they have not yet signed on that goal (a
        task they signed keeps their decision: change it with `sign` on that task); one lock, one write."""
        name = _signer(reviewer, decision)
        with self._locked() as entries:
            before = by_task(entries)
            unsigned = [t for t in tasks if not _signed_by(name, review_state(t, before.get(t.task_id, [])))]
            new = [_sign_entry(t, name, decision, note) for t in unsigned]
            self._append_entries(new)
        after = by_task([*entries, *new])
        return SignedAll(reviewer=name, decision=decision, signed=len(new), already=len(tasks) - len(new),
                         tasks=len(tasks), adjudicated=sum(review_state(t, after.get(t.task_id, [])).adjudicated
                                                           for t in tasks))

    def resolve(self, task: TaskRecord, by: str, resolution: str) -> ReviewState:
        """Record how an open disagreement on the current goal was settled, by a reviewer who did not sign that
        goal; the text quotes the clause of the task's policy that settles it (its id and its text). A resolution
        upholds the goal as it stands: changing a goal is a change to the derivation (or its sources), after
        which the new goal needs fresh sign-offs."""
        text = one_line(resolution)
        if not text:
            raise ReviewError("--resolution: say how the disagreement was settled against the policy text")
        entry = ReviewEntry(task_id=task.task_id, goal_sha256=goal_sha256(task), kind="resolve",
                            reviewer=_name("--by", by), resolution=text, at=_now())
        with self._locked() as entries:
            state = review_state(task, entries)
            if not state.open_disagreement:
                raise ReviewError(f"{task.task_id}: no open disagreement on its current goal state to resolve")
            party = next((r for r in state.decisions if _who(r) == _who(entry.reviewer)), None)
            if party is not None:
                said = state.decisions[party].decision
                raise ReviewError(f"--by: {entry.reviewer} signed this goal ({party}: {said}); a reviewer who did "
                                  "not sign it resolves the disagreement")
            _check_cited(task, text)
            self._append_entries([entry])
            return review_state(task, [*entries, entry])

    def seal(self) -> int:
        """Chain a ledger written before lines were chained, once (`evalsuite review seal`): every line is
        validated as it stands, then the file is replaced by the same entries each carrying its link. Returns
        the lines sealed. Whoever runs it vouches for the lines as they are: read them first."""
        with self._lock():
            lines = read_lines(self.path, ReviewError)
            if is_chained(lines):
                raise ReviewError(f"{self.path}: its lines are chained already; nothing to seal")
            entries = [_entry(self.path, n, obj) for n, _, obj in lines]
            if not entries:
                raise ReviewError(f"{self.path}: no ledger lines to seal")
            atomic_write(self.path, _lines("", entries))
            return len(entries)

    @contextmanager
    def _lock(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(self.path.with_suffix(".lock"))
        try:
            lock.acquire(timeout=LOCK_TIMEOUT)
        except Timeout:
            raise ReviewError(f"{lock.lock_file}: still held after {LOCK_TIMEOUT:g} s by another reviewer") from None
        try:
            yield
        finally:
            lock.release()

    @contextmanager
    def _locked(self) -> Iterator[list[ReviewEntry]]:
        """The ledger's entries as they stand, read (every line validated, the chain checked) under its lock,
        held while the caller checks them and appends."""
        with self._lock():
            yield self.entries()

    def _append_entries(self, entries: Sequence[ReviewEntry]) -> None:
        """Append after the last line; one cut short by an interrupted write is ended first, so it stays a line of
        its own (skipped when read) and the new ones follow from it."""
        if entries:
            data = self.path.read_bytes() if self.path.exists() else b""
            cut = "\n" if data and not data.endswith(b"\n") else ""
            _append_line(self.path, cut + _lines(last_line(self.path), entries))


def _lines(previous: str, entries: Sequence[ReviewEntry]) -> str:
    """Entries as ledger lines, chained on from `previous` (the ledger's last line)."""
    return chained(previous, (json.loads(e.model_dump_json()) for e in entries))


def _entry(path: Path, n: int, obj: dict) -> ReviewEntry:
    try:
        return ReviewEntry.model_validate({k: v for k, v in obj.items() if k != CHAIN})
    except ValidationError as exc:
        raise ReviewError(validation_line(f"{path}:{n}", exc)) from exc


def _check_cited(task: TaskRecord, text: str) -> None:
    problem = _citation_problem(task, text)
    if problem:
        raise ReviewError(f"--resolution: {problem}")


def _citation_problem(task: TaskRecord, text: str) -> str | None:
    """What a resolution lacks (None: nothing): it names a clause the disputed goal cites (the goal of an AP-4
    dispute is not settled by AP-8), by its id, and quotes a sentence of that clause's text. A goal that cites no
    clause may be settled by any clause of its policy."""
    p = task.policy
    cited = cited_clauses(task) & p.clause_ids or p.clause_ids
    named = [c for c in p.clauses if c.id in cited and re.search(rf"(?<![\w-]){re.escape(c.id)}(?![\w-])", text)]
    if not named:  # AP-3, not AP-30
        return (f"cite the clause of {p.doc} {p.version} that settles it by its id and text, one the disputed goal "
                f"cites ({', '.join(sorted(cited))})")
    said = _plain(text)
    if not any(_plain(s) in said for c in named for s in _quotable(c.text)):
        c = named[0]
        return (f"quote the text of {c.id} that settles it (a sentence of it as written, e.g. "
                f"\"{_quotable(c.text)[0]}\")")
    return None


def _quotable(text: str) -> list[str]:
    """The sentences of a clause long enough to settle something (its heading is not); the whole text if none."""
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if len(s.split()) >= QUOTE_WORDS]
    return sentences or [text.strip()]


def _plain(text: str) -> str:
    """Text as a quotation is compared: case, spacing and the closing stop aside."""
    return " ".join(text.casefold().split()).rstrip(".")


class SignedAll(BaseModel):
    """What `review sign --all` did: tasks newly signed, tasks the reviewer had signed already (left as they
    were), and how many of the suite's tasks are adjudicated now."""

    reviewer: str
    decision: Decision
    signed: int
    already: int
    adjudicated: int
    tasks: int

    def summary(self) -> str:
        return (f"{self.reviewer} {self.decision} recorded on {self.signed} task(s); {self.already} already signed by "
                f"{self.reviewer} left as they were (sign one with --task to change it); "
                f"adjudicated: {self.adjudicated} of {self.tasks}")


def _signed_by(reviewer: str, state: ReviewState) -> bool:
    return _who(reviewer) in map(_who, state.decisions)


def _signer(reviewer: str, decision: str) -> str:
    """The reviewer's name as recorded, once the decision is known to be one."""
    if decision not in DECISIONS:
        raise ReviewError(f"--decision: expected agree or disagree, got {decision!r}")
    return _name("--reviewer", reviewer)


def _sign_entry(task: TaskRecord, reviewer: str, decision: str, note: str) -> ReviewEntry:
    return ReviewEntry(task_id=task.task_id, goal_sha256=goal_sha256(task), kind="sign", decision=decision,
                       reviewer=_signer(reviewer, decision), note=one_line(note), at=_now())


def _append_line(path: Path, line: str) -> None:
    """One write of whole lines at the end of the file, flushed to disk before returning."""
    data = line.encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        if os.write(fd, data) != len(data):
            raise OSError(f"{path}: short write while appending a review")
        os.fsync(fd)
    finally:
        os.close(fd)


def _name(option: str, name: str) -> str:
    name = one_line(name)
    if not name:
        raise ReviewError(f"{option}: a reviewer name is required")
    try:
        person_key(name)
    except PersonNameError as exc:
        raise ReviewError(f"{option}: {exc}") from None
    return name


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0)


def describe(task: TaskRecord, state: ReviewState) -> str:
    """What a reviewer reads before signing: the trigger, each goal assertion beside the clause it cites, the
    reference solution, the provenance, and the sign-offs on this goal so far."""
    p = task.policy
    lines = [f"task {task.task_id} ({task.category}, {task.split} split), goal sha256 {state.goal_sha256[:16]}",
             f"trigger ({task.trigger.type}{' ' + task.trigger.item_id if task.trigger.item_id else ''}): "
             f"{task.trigger.text}",
             f"policy {p.doc} {p.version}, effective {p.effective_from}", "", "goal state:"]
    shown: set[str] = set()
    for i, a in enumerate(task.goal_state.assertions, 1):
        rows = "" if a.row_count is None else " (no row)" if a.row_count == 0 else f" (exactly {a.row_count} row(s))"
        lines += [f"  {i}. {a.table} where {_pairs(a.key)}: {_pairs(a.expect) or 'no columns checked'}{rows}",
                  "     " + _clause(p, a.clause, shown)]
    for o in task.goal_state.required_outputs:
        cited = _clause(p, o.clause, shown) if o.clause else "cites no clause"
        lines += [f"  output {o.name} = {o.value}", "     " + cited]
    g = task.goal_state
    lines += [f"  unchanged tables: {', '.join(g.unchanged_tables) or 'none'}",
              f"  forbidden calls: {', '.join(sorted(task.forbidden)) or 'none'}",
              f"  masked fields: {', '.join(m.field for m in g.volatile_fields_masked) or 'none'}",
              *(f"  note: {n}" for n in g.annotations), "", "reference solution:"]
    lines += [f"  {i}. {c.tool}({_pairs(c.arguments)})" for i, c in enumerate(task.reference_solution, 1)]
    if task.reference_answer:
        lines.append(f"  answer: {task.reference_answer}")
    v = task.provenance
    lines += ["", f"provenance: source record {v.source_record}; outcome verified by {v.outcome_verified_by}; "
                  f"license {v.license_ref}; resolved on {v.case_resolved_on or 'unknown'}"
                  + (f"; de-identified ({v.deidentification.date})" if v.deidentification else ""), ""]
    return "\n".join(lines + review_lines(state)) + "\n"


def review_lines(state: ReviewState) -> list[str]:
    """The sign-offs on the current goal, the resolution, and what is still missing."""
    out = [f"reviews: {r} {e.decision} ({e.at:%Y-%m-%d})" + (f": {e.note}" if e.note else "")
           for r, e in state.decisions.items()]
    if state.resolution:
        out.append(f"resolution by {state.resolution.reviewer} ({state.resolution.at:%Y-%m-%d}): "
                   f"{state.resolution.resolution}")
    if state.earlier:
        out.append(f"{state.earlier} reviewer(s) signed an earlier goal state or policy of this task; "
                   "their sign-offs no longer count")
    out.append(f"status: {'adjudicated' if state.adjudicated else 'not adjudicated: ' + (state.missing() or '')}")
    return out


def _clause(policy, clause_id: str, shown: set[str]) -> str:
    """A clause's text the first time it is cited, its id alone after that."""
    if clause_id in shown:
        return f"{clause_id} (as above)"
    shown.add(clause_id)
    text = next((c.text for c in policy.clauses if c.id == clause_id), "not a clause of this policy")
    return f"{clause_id}: {text}"


def _pairs(values: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in values.items())

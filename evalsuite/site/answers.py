"""What a public page may show of a task's answers, by split, and what the site build refuses to publish.

A task's answers are its reference solution (and alternative solutions), its reference answer and its goal
state. Per split:

- held_out: counted only; no page names the task (evalsuite.site.pages leaves it out whole).
- test and dev, which are scored, and train unless the release's suite spec says `site: {show_train_answers:
  true}`: the task as the agent got it and each trial's outcome, never an answer. A baseline that replays the
  task's answer key (the reference, and the baselines built from it) is evidence that the task is solvable: its
  page says whether it passed, how many calls it made and the verdict's checks by name and result, not the calls
  or the final message. Any other agent's trial is shown as recorded, its checks by name and result (a failed
  check's detail spells out the value the goal expects), unless the trial is an answer itself, judged by meaning
  and not by bytes (answer_in): its writes include a solution's (in any order, reads aside, arguments folded by
  `plain`), it passed, or its final message carries the reference answer or a required output once both are
  plain. Then it is published as the reference's trial is. The build fails when a page holds a value of a scored
  task's answers, or a held-out task's id or trigger (`answer_values`, scanned by
  evalsuite.site.sanitize.check_folder however disguised).
- train with show_train_answers: everything as recorded.
"""
from __future__ import annotations

import json
import re
import sqlite3
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalsuite.core.hashing import canon
from evalsuite.core.pii import ValueIndex
from evalsuite.core.records import TaskRecord, ToolCall
from evalsuite.domains.registry import domain_of
from evalsuite.site.inputs import PURPOSE, Sources
from evalsuite.sourcing.spec import SiteSettings
from evalsuite.tasks.heldout import HELD_OUT
from evalsuite.trials.tracelog import TrialRecord

TRAIN = "train"
# Baselines (evalsuite.trials.agents.baselines) that act out the task's answer key: the reference replays its
# solution and answer, injected and soloist are the reference with a twist, the adversary writes with the
# solution's arguments and ends with the reference answer. Their trials are the answer, whatever they score.
ANSWER_KEY_BASELINES = frozenset({"reference", "injected", "soloist", "adversary"})
# A value of a hidden answer blocks the build when it has at least this many characters, is not a code word, and
# occurs in no public text of the release: "0", "true", "USD", "open" or "13.38" occur on pages by chance; a code
# word (on_hold, price_variance, ap_manager) is the domain's vocabulary, which tool outputs print on any honest trace;
# and what the policy, the tool schemas, a published trigger or category, or the world's own rows spell out is no
# secret. What stays: sentences (a reference answer, a message body), computed amounts, ids the world does not hold.
MIN_ANSWER_CHARS = 6
CODE_WORD = re.compile(r"[a-z_]+")
_NOT_WORD = re.compile(r"[\W_]+")  # punctuation, symbols and white space, between words
_KEYED_ASSERTION = re.compile(r"^(assertion\[\d+\] \S+) \{.*\} (\(.*\))$")  # evalsuite.grading.grader's check name


def shows_answers(task: TaskRecord, settings: SiteSettings | None) -> bool:
    """Whether a page may show this task's answers: a train task, when the suite spec says so."""
    return task.split == TRAIN and bool(settings and settings.show_train_answers)


def replays_answer_key(record: TrialRecord) -> bool:
    config = record.agent_config
    return config.kind == "baseline" and config.name in ANSWER_KEY_BASELINES


def plain(text: str) -> str:
    """Text as a reader takes it in: Unicode compatibility forms folded (NFKC), case folded, every run of
    punctuation and white space one space. "INV-55127 held for quantity  mismatch" is "inv 55127 held for quantity
    mismatch", as the reference answer "INV-55127 held for quantity mismatch." is."""
    return " ".join(_NOT_WORD.split(unicodedata.normalize("NFKC", text).casefold())).strip()


def _plain_value(value: Any) -> Any:
    """An argument as it takes effect: strings plain, numbers canonical (25 is 25.0), mappings by key."""
    if isinstance(value, dict):
        return tuple(sorted((plain(str(k)), _plain_value(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_plain_value(v) for v in value)
    return plain(value) if isinstance(value, str) else canon(value)


def _writes(calls: Iterable[Any], kinds: dict[str, str]) -> Counter:
    """The write calls as effects, whatever their order: (tool, plain arguments), counted. Reads change nothing,
    so an extra read or two reads swapped is the same set of effects."""
    return Counter((c.tool, _plain_value(c.arguments)) for c in calls
                   if (getattr(c, "kind", None) or kinds.get(c.tool)) == "write")


def _reproduces(record: TrialRecord, solution: list[ToolCall], kinds: dict[str, str]) -> bool:
    """The trial's writes (the agent's and, with dual control, the user's) include every write of the solution,
    arguments compared plain: the trace shows the solution's effects, whatever else it holds."""
    wanted = _writes(solution, kinds)
    return bool(wanted) and not wanted - _writes([*record.trace, *record.user_trace], kinds)


def _hidden_phrases(task: TaskRecord) -> list[str]:
    """The task's answers a final message may not carry, plain: the reference answer and the outputs the goal
    requires (a decision, an amount) of at least MIN_ANSWER_CHARS."""
    values = [task.reference_answer or ""] + [canon(o.value) for o in task.goal_state.required_outputs
                                              if o.value is not None and not isinstance(o.value, bool)]
    return [p for p in map(plain, values) if len(p) >= MIN_ANSWER_CHARS]


def answer_in(record: TrialRecord, task: TaskRecord) -> str | None:
    """What of the task's answers the trial reproduces, by meaning rather than by bytes, or None: its writes
    include a solution's (order, reads, case and spacing aside), it passed (its end state is the goal state the
    grader checked), or its final message carries the reference answer or a required output once both are plain
    (case, spacing and punctuation aside)."""
    kinds = {name: tool.kind for name, tool in domain_of(task.domain).tools.items()}
    solutions = ([("reference solution", task.reference_solution)] if isinstance(task.reference_solution, list)
                 else []) + [("alternative solution", s) for s in task.alternative_solutions]
    for what, solution in solutions:
        if solution and _reproduces(record, solution, kinds):
            return f"its writes reproduce the {what}'s effects"
    if record.passed:
        return "its end state is the task's goal state (it passed)"
    message = f" {plain(record.final_message or '')} "
    if any(f" {phrase} " in message for phrase in _hidden_phrases(task)):
        return "its final message carries the reference answer or a required output"
    return None


def public_checks(verdict: Any) -> list[dict[str, Any]] | None:
    """A verdict's checks by name and result; a row assertion's name loses the key it matched on."""
    if verdict is None:
        return None
    out = []
    for c in verdict.checks:
        keyed = _KEYED_ASSERTION.match(c.name)
        out.append({"name": f"{keyed.group(1)} {keyed.group(2)}" if keyed else c.name, "passed": c.passed})
    return out


def task_label(task: TaskRecord) -> str:
    """How an error names a task: its id and split; a held-out task's id is never printed, not even there."""
    return "a held-out task" if task.split == HELD_OUT else f"task {task.task_id} ({task.split})"


def withheld(record: TrialRecord, task: TaskRecord) -> str | None:
    """Why a trial's calls and final message are not published (its page shows whether it passed, its call count
    and its checks), or None: shown in full. Called for tasks whose answers the site may not show: a trial that
    acts out the answer key (an answer-key baseline's) or reproduces an answer (any agent's: a good agent's trial
    can be the solution) would publish it."""
    if replays_answer_key(record):
        return f"the {record.agent} baseline acts out the task's answer key"
    found = answer_in(record, task)
    return f"this trial's {found.removeprefix('its ')}" if found else None


@dataclass
class AnswerValues:
    """The values of one release's hidden answers that must not appear on any page, filed by where they come from."""

    suite: str
    index: ValueIndex = field(default_factory=lambda: ValueIndex().freeze())


def _leaves(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _leaves(v)
    elif value is not None and not isinstance(value, bool):
        yield canon(value)


def _task_values(task: TaskRecord) -> Iterator[tuple[str, str]]:
    """(what, value) of every value of the task's answers; of a held-out task, its id and trigger as well (it is
    published only as a count)."""
    if task.split == HELD_OUT:
        yield "the id", task.task_id
        yield "the trigger", task.trigger.text
    goal = task.goal_state
    for a in goal.assertions + goal.user_assertions:
        for v in _leaves([a.key, a.expect]):
            yield "a goal-state value", v
    for v in _leaves([o.value for o in goal.required_outputs] + [c.params for c in goal.domain_checks]):
        yield "a goal-state value", v
    solutions = ([task.reference_solution] if isinstance(task.reference_solution, list) else [])
    for call in (c for s in solutions + task.alternative_solutions for c in s):
        for v in _leaves(call.arguments):
            yield "an argument of the reference solution", v
    if task.reference_answer:
        yield "the reference answer", task.reference_answer


def answer_values(suite: str, tasks: Iterable[TaskRecord], settings: SiteSettings | None,
                  public: Iterable[str], world: Path | None) -> AnswerValues:
    """The values of the answers of every task whose answers are hidden, except those no page can keep secret:
    shorter than MIN_ANSWER_CHARS, a code word, a whole word or phrase of a public text (policy, tool schemas,
    published triggers and categories), a cell of the world's rows or a phrase of one (what any agent reads: the
    words of a source a brief quotes), or a value of a train task whose answers the spec publishes. The scan finds a
    value however it is cased, spaced or punctuated, so what is public is judged the same way (plain):
    "price_variance_on_line_1" is the published "price variance on line 1"."""
    tasks = list(tasks)
    shown = {plain(v) for t in tasks if shows_answers(t, settings) for _, v in _task_values(t)}
    world_cells = _world_cells(world)
    cells = {plain(c) for c in world_cells}
    # the world's prose (cells holding a space), where a quotation of a source is a phrase any agent reads
    prose = f" {plain(chr(10).join(c for c in world_cells if ' ' in c))} "
    text = f" {plain(chr(10).join(public))} "
    index = ValueIndex(disguised=True)  # spaced, split or cased otherwise, still the answer
    for t in sorted((t for t in tasks if not shows_answers(t, settings)), key=lambda t: t.task_id):
        for what, value in _task_values(t):
            low = plain(value)
            if (len(value.strip()) < MIN_ANSWER_CHARS or CODE_WORD.fullmatch(value.strip().lower()) or low in shown
                    or low in cells or f" {low} " in text or (" " in low and f" {low} " in prose)):
                continue
            index.add(value, "", f"{what} of {task_label(t)}")
    return AnswerValues(suite=suite, index=index.freeze())


def _world_cells(world: Path | None) -> set[str]:
    """Every cell of the world's tables as lower-cased text: the rows an agent is given to read."""
    if world is None or not world.is_file():
        return set()
    out: set[str] = set()
    with closing(sqlite3.connect(f"file:{world}?mode=ro", uri=True)) as db:
        tables = [r[0] for r in db.execute("select name from sqlite_master where type = 'table'")]
        for table in tables:
            for row in db.execute(f'select * from "{table}"'):
                out.update(canon(v).strip().lower() for v in row if v is not None)
    return out


def public_texts(tasks: Iterable[TaskRecord], tool_schemas: list[dict]) -> list[str]:
    """The release's text that is public by design: policy clauses, tool schemas, the triggers and categories of
    published tasks (a category names the slice a scorecard reports)."""
    tasks = list(tasks)
    clauses = {f"{c.id} {c.text}" for t in tasks for c in t.policy.clauses}
    shown = [f"{t.trigger.text}\n{t.category}" for t in tasks if t.split != HELD_OUT]
    return sorted(clauses) + [json.dumps(tool_schemas)] + shown


@dataclass
class AnswerKey:
    """One published release version: its site settings, its tasks as the release page reads them, and the values
    of its hidden answers."""

    settings: SiteSettings | None
    release_tasks: list[TaskRecord]  # empty when only runs of the version are published
    values: AnswerValues


def answer_keys(sources: Sources) -> dict[tuple[str, str], AnswerKey]:
    """Per (suite, version) published, its answer key: the tasks, the site settings and the hidden answers' values
    the leak scan looks for."""
    read = {key: r.tasks(purpose=PURPOSE) for key, r in sources.releases.items()}  # each read logged once
    versions = set(read) | {(r.card.suite, r.card.suite_version) for r in sources.runs}
    out = {}
    for key in sorted(versions):
        release = sources.releases.get(key)
        runs = [r for r in sources.runs if (r.card.suite, r.card.suite_version) == key]
        settings = release.manifest.site if release else None
        tasks = read.get(key, []) + [t for r in runs for t in r.tasks]  # a run's copy may differ (a trial mode)
        folder = release.path if release else runs[0].release_path
        schemas = domain_of(tasks[0].domain).tool_schemas() if tasks else []
        values = answer_values(key[0], tasks, settings, public_texts(tasks, schemas), folder / "world.sqlite")
        out[key] = AnswerKey(settings=settings, release_tasks=read.get(key, []), values=values)
    return out

"""The three trial modes side by side on the same tasks: default (dual control), no-user and oracle-plan.

Each mode is its own run (the mode is part of the trial protocol, so of the task set and the run identity;
runs are never pooled). This puts one agent's runs next to each other: pass^k per mode with task-bootstrap
intervals, and pass^1 / pass^k against the number of required actions, as a Markdown table and a plot.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from evalsuite.core.identity import RunIdentity
from evalsuite.core.io import atomic_write
from evalsuite.core.markdown import md_table
from evalsuite.core.records import TaskRecord
from evalsuite.scoring.compare import counts as task_counts
from evalsuite.scoring.metrics import KPoint, pass_hat_k, suite_pass_curve
from evalsuite.scoring.runlog import RunFolderError, read_records, read_run_tasks
from evalsuite.scoring.scorecard import required_actions
from evalsuite.tasks.taskfile import task_set_sha256
from evalsuite.trials.tracelog import TrialRecord

MODES = ("default", "no_user", "oracle_plan")


class ActionsPoint(BaseModel):
    required_actions: int
    tasks: int
    pass_hat_1: float
    pass_hat_k: float


class SlicePoint(BaseModel):
    """Mean pass^1 and pass^k over the tasks of one value of a slice (intent, persona)."""

    slice: str
    value: str
    tasks: int
    pass_hat_1: float
    pass_hat_k: float


class ModeScore(BaseModel):
    mode: str
    agent: str
    identity_sha256: str
    tasks: int
    trials: int
    curve: list[KPoint]
    by_actions: list[ActionsPoint]
    by_slice: list[SlicePoint] = []  # by intent (the task's category) and by persona, where tasks have one


class ModeComparison(BaseModel):
    k: int
    modes: list[ModeScore]


def with_mode(tasks: Sequence[TaskRecord], mode: str) -> list[TaskRecord]:
    """The same tasks under another trial mode (default is stored as unset, as tasks written before modes), each
    under its policy for that mode where it has one (TaskRecord.mode_policies).

    They are another task set: the release's task-set stamp is cleared, and they run under mode_identity."""
    if mode not in MODES:
        raise ValueError(f"trial mode {mode!r}: expected one of {', '.join(MODES)}")
    value = None if mode == "default" else mode
    return [t.model_copy(update={"trial_protocol": t.trial_protocol.model_copy(update={"mode": value}),
                                 "policy": t.mode_policies.get(mode, t.policy),
                                 "suite": t.suite.model_copy(update={"task_set_sha256": None})}) for t in tasks]


def mode_identity(identity: RunIdentity, tasks: Sequence[TaskRecord]) -> RunIdentity:
    """A release's run identity for its tasks in another mode: the task set (so the identity) is theirs, so runs
    in two modes are never pooled."""
    return identity.model_copy(update={"task_set_sha256": task_set_sha256(list(tasks))})


def compare_modes(runs: Mapping[str, Sequence[TrialRecord]], tasks: Sequence[TaskRecord], *,
                  resamples: int = 2000, seed: int = 0) -> ModeComparison:
    """Score one agent's run per mode on the same tasks; refuses runs of other tasks, agents or modes mixed."""
    ids = {t.task_id for t in tasks}
    actions = {t.task_id: required_actions(t) or 0 for t in tasks}
    slices = {"intent": {t.task_id: t.category for t in tasks},
              "persona": {t.task_id: str((t.provenance.stratum or {}).get("persona")) for t in tasks
                          if t.provenance.stratum and "persona" in t.provenance.stratum}}
    scores = []
    for mode, records in runs.items():
        _check_run(mode, records, ids)  # one agent, every task: its counts cover them all
        scores.append((mode, records, task_counts(records, records[0].agent)))
    k = min(n for _, _, counts in scores for n, _ in counts.values())
    out = []
    for mode, records, counts in scores:
        curve = suite_pass_curve(counts, max_k=k, resamples=resamples, seed=seed)
        out.append(ModeScore(mode=mode, agent=records[0].agent, identity_sha256=records[0].identity_sha256,
                             tasks=len(counts), trials=len(records), curve=curve,
                             by_actions=[ActionsPoint(required_actions=v, **p) for v, p in _by(counts, actions, k)],
                             by_slice=[SlicePoint(slice=name, value=v, **p) for name, values in slices.items()
                                       for v, p in _by(counts, values, k)]))
    return ModeComparison(k=k, modes=out)


def _check_run(mode: str, records: Sequence[TrialRecord], ids: set[str]) -> None:
    if not records:
        raise ValueError(f"mode {mode}: no trial records")
    seen = {r.task_id for r in records}
    if seen != ids:
        raise ValueError(f"mode {mode}: the run covers other tasks ({len(seen ^ ids)} differ); compare modes on "
                         "the same tasks")
    for field in ("agent", "identity_sha256", "mode"):
        values = {getattr(r, field) or "default" for r in records}
        if len(values) != 1:
            raise ValueError(f"mode {mode}: records mix several values of {field}: {sorted(values)[:3]}")
    if (records[0].mode or "default") != mode:
        raise ValueError(f"mode {mode}: its records ran in mode {records[0].mode}")


def _by(counts: Mapping[str, tuple[int, int]], value_of: Mapping[str, Any], k: int) -> list[tuple[Any, dict]]:
    """Mean pass^1 and pass^k over the tasks of each value (exact fractions, then float); tasks without a value
    are left out."""
    groups: dict[Any, list[tuple[int, int]]] = {}
    for task, nc in counts.items():
        if task in value_of:
            groups.setdefault(value_of[task], []).append(nc)
    return [(v, {"tasks": len(g), "pass_hat_1": float(sum(pass_hat_k(n, c, 1) for n, c in g) / len(g)),
                 "pass_hat_k": float(sum(pass_hat_k(n, c, k) for n, c in g) / len(g))})
            for v, g in sorted(groups.items())]


def to_markdown(cmp: ModeComparison) -> str:
    """The side-by-side table (pass^1 and pass^k per mode) and pass^k by number of required actions."""
    lines = ["# Trial modes side by side", "", f"k = {cmp.k}; intervals: 95% task bootstrap", ""]
    lines.append(md_table(["mode", "agent", "tasks", "trials", "pass^1", f"pass^{cmp.k}", "identity"],
                            [[m.mode, m.agent, str(m.tasks), str(m.trials), _cell(m.curve[0]), _cell(m.curve[-1]),
                              m.identity_sha256[:12]] for m in cmp.modes]))
    lines += ["", "## pass^k by number of required actions", ""]
    counts = sorted({p.required_actions for m in cmp.modes for p in m.by_actions})
    rows = []
    for a in counts:
        row = [str(a)]
        for m in cmp.modes:
            p = next((p for p in m.by_actions if p.required_actions == a), None)
            row.append("—" if p is None else f"{p.pass_hat_k:.3f} ({p.tasks} tasks)")
        rows.append(row)
    lines.append(md_table(["required actions", *(m.mode for m in cmp.modes)], rows))
    for name in sorted({p.slice for m in cmp.modes for p in m.by_slice}, key=["intent", "persona"].index):
        lines += ["", f"## pass^k by {name}", ""]
        values = sorted({p.value for m in cmp.modes for p in m.by_slice if p.slice == name})
        lines.append(md_table([name, *(m.mode for m in cmp.modes)],
                              [[v, *(_slice_cell(m, name, v) for m in cmp.modes)] for v in values]))
    return "\n".join(lines) + "\n"


def _slice_cell(m: ModeScore, name: str, value: str) -> str:
    p = next((p for p in m.by_slice if p.slice == name and p.value == value), None)
    return "—" if p is None else f"{p.pass_hat_1:.3f} / {p.pass_hat_k:.3f} ({p.tasks} tasks)"


def _cell(p: KPoint) -> str:
    return f"{p.pass_hat:.3f} [{p.pass_hat_low:.3f}, {p.pass_hat_high:.3f}]"


def plot(cmp: ModeComparison, path: str | Path) -> Path:
    """pass^k against the number of required actions, one line per mode."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # here: importing this module stays cheap
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.2), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for i, m in enumerate(cmp.modes):
        offset = (i - (len(cmp.modes) - 1) / 2) * 0.06  # modes side by side, so equal scores do not hide a line
        ax.plot([p.required_actions + offset for p in m.by_actions], [p.pass_hat_k for p in m.by_actions],
                marker="os^"[i % 3], linestyle=("-", "--", ":")[i % 3], label=m.mode)
    ax.set_xlabel("required actions (agent and user writes)")
    ax.set_ylabel(f"pass^{cmp.k}")
    ax.set_ylim(-0.05, 1.05)
    ax.set_title(f"pass^{cmp.k} by required actions, per trial mode", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, format="png")
    return Path(path)


def compare_mode_runs(run_dirs: Sequence[Path], out: Path, resamples: int = 2000,
                      agent: str | None = None) -> ModeComparison:
    """`evalsuite modes`: an agent's run folders, one per trial mode, side by side; modes.md and modes.png go to
    `out`. `agent` picks one agent of runs that scored several. Folders that are not one per mode, or runs that do
    not fit together, raise RunFolderError naming them."""
    runs, tasks = {}, []
    for folder in run_dirs:
        tasks = read_run_tasks(folder)
        found = {t.trial_protocol.mode or "default" for t in tasks}
        if len(found) != 1 or next(iter(found)) in runs:
            raise RunFolderError(f"{folder}: one run folder per mode, each in one mode (found {sorted(found)})")
        records = read_records(folder)
        runs[next(iter(found))] = [r for r in records if r.agent == agent] if agent else records
        if agent and not runs[next(iter(found))]:
            raise RunFolderError(f"{folder}: no trials of agent {agent!r}")
    try:
        cmp = compare_modes(runs, tasks, resamples=resamples)
    except ValueError as exc:  # runs of other tasks, agents or modes: the folders given do not fit together
        raise RunFolderError(f"{', '.join(map(str, run_dirs))}: {exc}") from exc
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / "modes.md", to_markdown(cmp))
    plot(cmp, out / "modes.png")
    return cmp

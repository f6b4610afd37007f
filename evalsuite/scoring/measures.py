"""The separate measures per agent, beside pass^k on the scorecard: outcome, grounding, authority violations,
handoff, latency and resources, each with the trials and tasks it was measured over (evalsuite.grading.measures
says what each one is). Built from the summary frame's measure columns, so a scorecard rescored from
summary.parquet is the one rescored from traces.jsonl; latency is shown but not written to scorecard.json
(AgentMeasures). Trials recorded before the measures existed are left out
and counted (`trials_unmeasured`); an agent with none has no measures.
"""
from __future__ import annotations

import pandas as pd
from pydantic import BaseModel, Field

from evalsuite.core.markdown import md_table


class Share(BaseModel):
    """Trials where a measure holds, of the trials measured, and the tasks they span."""

    holds: int
    trials: int
    tasks: int
    rate: float


class Handoffs(BaseModel):
    """Handoffs against where the task admits one (its reference hands off)."""

    tasks_admitting: int  # tasks whose reference hands off
    handed_off: int  # trials that handed off
    admissible: int  # ... on a task that admits it
    inadmissible: int  # ... on a task that does not
    missed: int  # trials that did not hand off where the task admits it


class AgentMeasures(BaseModel):
    trials: int  # trials measured
    tasks: int
    trials_unmeasured: int
    outcome: Share  # every obligation check of the end state passed
    grounded: Share  # every figure and identifier of the closing message was observed or given
    no_authority_violation: Share  # no refused or forbidden attempt, whatever the end state
    authority_violations: int  # attempts refused or forbidden, in all measured trials
    handoff: Handoffs
    # wall times never repeat, and scorecard.json is the same for the same plan however often it is run or resumed:
    # latency is shown on the scorecard made from the trials, never written to scorecard.json
    latency_median_seconds: float | None = Field(None, exclude=True)
    latency_p90_seconds: float | None = Field(None, exclude=True)
    tool_calls_per_trial: float
    model_calls: int | None  # None: no trial reported model usage
    tokens: int | None


def _share(mask: pd.Series, rows: pd.DataFrame) -> Share:
    holds = int(mask.sum())
    return Share(holds=holds, trials=len(rows), tasks=int(rows["task_id"].nunique()),
                 rate=holds / len(rows) if len(rows) else 0.0)


def agent_measures(group: pd.DataFrame) -> AgentMeasures | None:
    """One agent's measures from its rows of a summary frame (evalsuite.trials.tracelog.summary_frame)."""
    rows = group[group["obligations_met"].notna()] if "obligations_met" in group else group.iloc[0:0]
    if rows.empty:
        return None
    handed, admits = rows["handed_off"].astype(bool), rows["handoff_admissible"].astype(bool)
    usage = rows["model_calls"].notna()
    return AgentMeasures(
        trials=len(rows), tasks=int(rows["task_id"].nunique()), trials_unmeasured=len(group) - len(rows),
        outcome=_share(rows["obligations_met"].astype(bool), rows),
        grounded=_share(rows["grounded"].astype(bool), rows),
        no_authority_violation=_share(rows["authority_violations"] == 0, rows),
        authority_violations=int(rows["authority_violations"].sum()),
        handoff=Handoffs(tasks_admitting=int(rows.loc[admits, "task_id"].nunique()), handed_off=int(handed.sum()),
                         admissible=int((handed & admits).sum()), inadmissible=int((handed & ~admits).sum()),
                         missed=int((~handed & admits).sum())),
        latency_median_seconds=round(float(rows["seconds"].median()), 3),
        latency_p90_seconds=round(float(rows["seconds"].quantile(0.9)), 3),
        tool_calls_per_trial=round(float(rows["tool_calls"].mean()), 2),
        model_calls=int(rows.loc[usage, "model_calls"].sum()) if usage.any() else None,
        tokens=int(rows.loc[usage, "tokens_in"].sum() + rows.loc[usage, "tokens_out"].sum()) if usage.any() else None)


def _share_cell(s: Share) -> str:
    return f"{s.rate:.3f} ({s.holds}/{s.trials})"


def measure_cells(m: AgentMeasures) -> dict[str, str]:
    """The measures as short labelled cells, the same for the terminal and for Markdown: a rate with the trials it
    holds in, then counts; the trials and tasks they were measured over on the last row."""
    h, per = m.handoff, (lambda n: f"{n / m.trials:.2f}" if n is not None else "—")
    return {
        "outcome (obligations met)": _share_cell(m.outcome),
        "grounded closing message": _share_cell(m.grounded),
        "no authority violation": _share_cell(m.no_authority_violation),
        "refused or forbidden attempts": str(m.authority_violations),
        "handoffs admissible / not / missed": f"{h.admissible} / {h.inadmissible} / {h.missed}",
        "latency median / p90": "—" if m.latency_median_seconds is None else
                                f"{m.latency_median_seconds:.3f} / {m.latency_p90_seconds:.3f} s",
        "tool calls per trial": f"{m.tool_calls_per_trial:.2f}",
        "model calls / tokens per trial": f"{per(m.model_calls)} / {per(m.tokens)}",
        "measured over": f"{m.trials} trials, {m.tasks} tasks",
    }


def measures_table(m: AgentMeasures) -> str:
    """The agent's measures as a Markdown table (beside its pass^k table)."""
    note = f"\n\n{m.handoff.tasks_admitting} of the {m.tasks} tasks admit a handoff (their reference hands off)."
    if m.trials_unmeasured:
        note += f" {m.trials_unmeasured} trial(s) recorded without measures are left out."
    return md_table(["measure", "value"], [[k, v] for k, v in measure_cells(m).items()]) + note

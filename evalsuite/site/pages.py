"""The content of each page as plain data: a release, a scorecard, one recorded trial (the trace viewer's input).

Held-out tasks appear only as counts: no id, trigger, goal state, trace or verdict of one is published
(a verdict's checks spell out the goal state they compare against).
"""
from __future__ import annotations

from collections import Counter
from typing import Any

from evalsuite.core.hashing import file_sha256
from evalsuite.core.records import TaskRecord
from evalsuite.releases.release import Release
from evalsuite.scoring.compare import Comparison, verdict_text
from evalsuite.scoring.recorded import RecordedScore, TrialNote
from evalsuite.scoring.render import human_cell, human_label, interval_cell, passk_cell, shown_ks, warnings
from evalsuite.scoring.scorecard import Scorecard
from evalsuite.site.answers import public_checks, shows_answers, withheld
from evalsuite.site.inputs import RunSource
from evalsuite.site.quotes import quoted_sources
from evalsuite.site.sanitize import Originals
from evalsuite.sourcing.spec import SiteSettings
from evalsuite.tasks.heldout import HELD_OUT, without_held_out
from evalsuite.trials.tracelog import TrialRecord

# Trial record fields the trace viewer lays out itself; any other field (added by later versions: user
# messages, tokens, cost) is shown as recorded under "other recorded fields".
LAID_OUT = {"task_id", "agent", "trial", "outcome", "passed", "verdict", "trace", "final_message", "error", "seconds",
            "reset_sha256", "suite", "suite_version", "task_set_sha256", "seed_sha256", "environment_image",
            "tool_schemas_sha256", "simulator", "agent_config", "run_seed", "trial_seed", "identity_sha256"}


def release_page(release: Release, tasks: list[TaskRecord], originals: Originals | None,
                 rights: dict | None) -> dict[str, Any]:
    """tasks: the release's tasks, read once with purpose PURPOSE (the held-out read is logged)."""
    m = release.manifest
    shown = without_held_out(tasks)
    policies = sorted({(t.policy.doc, t.policy.version, t.policy.effective_from.isoformat(), len(t.policy.clauses))
                       for t in tasks})
    return {
        "suite": m.suite, "version": m.version, "domain": m.domain, "n_tasks": m.n_tasks,
        "hashes": {"task set": m.task_set_sha256, "seed (world)": m.seed_sha256,
                   "environment image": m.environment_image, "tool schemas": m.tool_schemas_sha256,
                   "manifest.json file": file_sha256(release.path / "manifest.json"),
                   "tasks.jsonl file": file_sha256(release.path / "tasks.jsonl")},
        "sources": _sources(m.rights_decision, rights, tasks),
        "deidentification": _deid(originals, tasks),
        "acceptance": m.acceptance,
        "quarantined": [q.model_dump() for q in m.quarantined],
        "policies": [{"doc": d, "version": v, "effective_from": e, "clauses": n} for d, v, e, n in policies],
        "policy_versions": m.policy_versions,
        "simulator": m.simulator.model_dump(mode="json") if m.simulator else None,
        "splits": dict(sorted(Counter(t.split for t in tasks).items())),
        "held_out": len(tasks) - len(shown),
        "train_answers_shown": bool(m.site and m.site.show_train_answers),
        "tasks": [{"task_id": t.task_id, "split": t.split, "category": t.category, "trigger": t.trigger.type,
                   "text": t.trigger.text, "policy": f"{t.policy.doc} {t.policy.version}",
                   "source_record": t.provenance.source_record} for t in shown],
    }


def _sources(decision: dict, rights: dict | None, tasks: list[TaskRecord]) -> dict[str, Any]:
    """The license decision per source: the reviewed manifest's hash, the status, and the refs tasks cite."""
    refs = Counter(t.provenance.license_ref for t in tasks)
    return {"status": decision.get("status"), "reviewed_on": decision.get("reviewed_on"),
            "needed_uses": (rights or {}).get("needed_uses", []), "reasons": (rights or {}).get("reasons", []),
            "manifests": decision.get("manifest_sha256", {}), "license_refs": dict(sorted(refs.items()))}


def _deid(originals: Originals | None, tasks: list[TaskRecord]) -> dict[str, Any]:
    methods = sorted({t.provenance.deidentification.method for t in tasks if t.provenance.deidentification})
    if originals is None or originals.method is None:
        return {"applied": bool(methods), "methods": methods, "columns": [], "record": None}
    return {"applied": True, "methods": methods, "columns": originals.columns, "record": originals.method}


def held_out_ids(run: RunSource) -> set[str]:
    return {t.task_id for t in run.tasks if t.split == HELD_OUT}


def public_scorecard(run: RunSource, release_tasks: list[TaskRecord]) -> tuple[Scorecard, dict[str, int]]:
    """The run's scorecard as a page may show it, and what was left out of it as counts: an imported recording's
    disagreements, skipped trials and quarantined tasks on held-out tasks are not listed, and so neither are their
    ids nor their regraded verdicts. release_tasks (empty when the release is not at hand): a skipped trial's task
    need not be one the run holds; where it is not known, the trial is counted only, as it may be held out."""
    card, r = run.card, run.card.recording
    if r is None:
        return card, {}
    splits = {t.task_id: t.split for t in [*release_tasks, *run.tasks]}
    task_map = run.recording.task_map if run.recording else {}

    def held(ref: str) -> bool:
        split = splits.get(task_map.get(ref, ref))
        return split == HELD_OUT or (split is None and not release_tasks)

    disagreements = [d for d in r.disagreements if not held(d.task_id)]
    skipped = [s for s in r.skipped if not held(s.recorded_task)]
    quarantined = {t: why for t, why in r.quarantined.items() if not held(t)}
    counts = {"disagreements": len(r.disagreements) - len(disagreements), "skipped": len(r.skipped) - len(skipped),
              "quarantined": len(r.quarantined) - len(quarantined)}
    public = r.model_copy(update={"disagreements": disagreements, "skipped": skipped, "quarantined": quarantined})
    return card.model_copy(update={"recording": public}), counts


def scorecard_page(run: RunSource, card: Scorecard, held_rows: dict[str, int], trace_href) -> dict[str, Any]:
    """Tables of the public scorecard (public_scorecard: cells as `evalsuite.scoring.render` writes them), what the
    reader must know first (a cached or capped run), the identity, the agent configurations, paired comparisons,
    and a link per published trial."""
    top = max((len(a.curve) for a in card.agents), default=1)
    ks = shown_ks(top)
    held = held_out_ids(run)
    return {
        "suite": card.suite, "version": card.suite_version, "folder": run.folder.name, "warnings": warnings(card),
        "identity": {"task set": card.task_set_sha256, "seed (world)": card.seed_sha256,
                     "environment image": card.environment_image, "tool schemas": card.tool_schemas_sha256,
                     "run seed": card.run_seed, "intervals": f"{card.bootstrap['method']}, "
                     f"{card.bootstrap['resamples']} resamples, seed {card.bootstrap['seed']}"},
        "simulator": card.simulator,
        "agents": [{"name": a.agent, "config": a.agent_config, "identity_sha256": a.identity_sha256,
                    "tasks": a.tasks, "trials": a.trials, "outcomes": a.outcomes} for a in card.agents],
        "ks": ks,
        "passk": [{"agent": a.agent, "cells": [passk_cell(a.curve, k) for k in ks]} for a in card.agents],
        "passat": [{"agent": a.agent, "cells": [interval_cell(p.pass_at, p.pass_at_low, p.pass_at_high)
                                                for p in a.curve if p.k in ks]} for a in card.agents],
        "slices": [{"agent": a.agent, "slice": s.slice, "value": s.value, "tasks": s.tasks, "trials": s.trials,
                    "small": s.too_small_to_rank, "pass1": interval_cell(s.pass_hat_1, s.low, s.high)}
                   for a in card.agents for s in a.slices],
        "humans": {"label": human_label(card.humans), "cell": human_cell(card.humans),
                   "attempts": card.humans.attempts} if card.humans else None,
        "compare": _comparisons(run.compare),
        "policy": card.policy,
        "trials": _trial_rows(run.records, held, trace_href),
        "held_out_trials": sum(r.task_id in held for r in run.records),
        "held_out_tasks": len(held),
        "recording": _recording(card.recording, held_rows),
    }


def _recording(r: RecordedScore | None, held_rows: dict[str, int]) -> dict[str, Any] | None:
    """An imported recording: where it came from, pass^k regraded beside recorded, the disagreements and skipped
    trials (a held-out task's only as a count, held_rows)."""
    if r is None:
        return None
    p = r.provenance
    curves = {"evalsuite (regraded)": r.regraded, "recorded reward": r.recorded, "original's DB check": r.original_db}
    shown = {label: c for label, c in curves.items() if c}
    ks = list(range(1, max((len(c) for c in shown.values()), default=0) + 1))
    return {"provenance": {"recording": p.file, "sha256": p.sha256, "format": p.format, "source": p.source,
                           "licence": p.license, "model": p.model},
            "summary": f"{r.trials} trials on {r.tasks} tasks replayed open loop; {r.agree} agree, "
                       f"{len(r.disagreements) + held_rows.get('disagreements', 0)} disagree; {r.calls_differing} "
                       f"call(s) answered differently now, {r.trials_diverged} trial(s) with a write whose outcome "
                       f"flipped; {len(r.skipped) + held_rows.get('skipped', 0)} skipped",
            "ks": ks, "rows": [{"label": label, "cells": [passk_cell(c, k) for k in ks]} for label, c in shown.items()],
            "disagreements": [d.model_dump() for d in r.disagreements],
            "held_out_disagreements": held_rows.get("disagreements", 0),
            "skipped": [s.model_dump() for s in r.skipped], "held_out_skipped": held_rows.get("skipped", 0)}


def _with_recording(out: dict[str, Any], note: TrialNote) -> dict[str, Any]:
    diffs = {d.seq: d for d in note.diffs}
    steps = [s | ({"recorded_output": diffs[s["seq"]].recorded, "recorded_error": diffs[s["seq"]].recorded_error}
                  if s["seq"] in diffs else {}) for s in out["steps"]]
    recorded = {"recorded_task": note.recorded_task, "recorded_reward": note.recorded_reward,
                "original_db_check": note.original_db, "calls_answered_differently": len(note.diffs),
                "disagreement": note.reason}
    return out | {"steps": steps, "other": out["other"] | {"recording": recorded}}


def _comparisons(raw: list[dict]) -> list[dict]:
    out = []
    for c in (Comparison.model_validate(x) for x in raw):
        for d in (c.pass_1, c.pass_k) if c.pass_k.k != 1 else (c.pass_1,):
            out.append({"a": c.agent_a, "b": c.agent_b, "tasks": c.tasks, "metric": f"pass^{d.k}",
                        "diff": interval_cell(d.diff, d.low, d.high), "verdict": verdict_text(c, d)})
    return out


def _trial_rows(records: list[TrialRecord], held: set[str], trace_href) -> list[dict]:
    rows = [{"agent": r.agent, "task_id": r.task_id, "trial": r.trial, "outcome": r.outcome,
             "checks": f"{sum(c.passed for c in r.verdict.checks)}/{len(r.verdict.checks)}" if r.verdict else "—",
             "href": trace_href(r)} for r in records if r.task_id not in held]
    return sorted(rows, key=lambda x: (x["agent"], x["task_id"], x["trial"]))


def trace_data(r: TrialRecord, task: TaskRecord, settings: SiteSettings | None = None,
               note: TrialNote | None = None, withhold: str | None = None) -> dict[str, Any]:
    """_replay's data, with the quotations its published calls submitted shown beside their sources."""
    out = _replay(r, task, settings, note, withhold)
    return out | {"quotations": quoted_sources(out["steps"])}


def _replay(r: TrialRecord, task: TaskRecord, settings: SiteSettings | None = None,
            note: TrialNote | None = None, withhold: str | None = None) -> dict[str, Any]:
    """What the replay shows of one published trial: as recorded where the task's answers may be shown, else
    without them (evalsuite.site.answers): an answer-key baseline's trial as its outcome, call count and
    checks, any other agent's as recorded with its checks by name and result. A recorded trial (`note`) shows
    beside each call the recording's output where the replay's differs, and the recorded reward; `withhold` says
    why its calls are published as a summary only (a recorded trial whose page would print a hidden answer)."""
    if task.split == HELD_OUT:
        raise ValueError(f"{task.task_id}: a held-out task's trace is never published")
    body = r.model_dump(mode="json")
    out = {
        "task": {"task_id": task.task_id, "split": task.split, "category": task.category,
                 "trigger": task.trigger.model_dump(mode="json"), "role": task.role.name,
                 "policy": f"{task.policy.doc} {task.policy.version}", "max_steps": task.trial_protocol.max_steps,
                 "conversation": task.user_scenario is not None},
        "trial": {k: body[k] for k in ("agent", "trial", "outcome", "passed", "seconds", "suite", "suite_version",
                                       "task_set_sha256", "seed_sha256", "reset_sha256", "identity_sha256",
                                       "agent_config", "simulator", "run_seed", "trial_seed")},
        "steps": body["trace"],
        "final_message": body["final_message"],
        "verdict": body["verdict"],
        "error": body["error"],
        "other": {k: v for k, v in body.items() if k not in LAID_OUT},
        "calls": len(r.trace),
        "withheld": None,
    }
    if note is not None:
        out = _with_recording(out, note)
    if shows_answers(task, settings):
        return out
    checks = {"verdict": {"passed": r.verdict.passed, "checks": public_checks(r.verdict)} if r.verdict else None}
    why = withhold or withheld(r, task)
    if why is None:
        attack = r.attack_verdict
        other = out["other"] | ({"attack_verdict": {"passed": attack.passed, "checks": public_checks(attack)}}
                                if attack else {})
        return out | checks | {"other": other}
    return out | checks | {"steps": [], "final_message": None, "other": {}, "withheld": (
        f"{why}, so on a {task.split} task only that it {'passed' if r.passed else 'did not pass'}, its "
        f"{len(r.trace)} call(s) and its checks are published")}

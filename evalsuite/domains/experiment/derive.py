"""Tasks from registered protocols: one per protocol whose reference analysis was verified, on a dataset that still
has its registered content hash, and whose conclusion no allowed tolerance could flip. Each carries its reference
solution (the analysis module run on the data, then submitted), another lawful solution, and named wrong results
acceptance must see fail, each for its own check."""
from __future__ import annotations

import datetime as dt
import hashlib
import inspect
import json
from collections import Counter

from evalsuite.core.records import (
    Assertion,
    DomainCheck,
    GoalState,
    MaskedField,
    NegativeControl,
    Provenance,
    TaskRecord,
    ToolCall,
    Trigger,
)
from evalsuite.domains.experiment import analysis
from evalsuite.domains.experiment import schema as s
from evalsuite.domains.experiment.checks import columns, resample
from evalsuite.domains.experiment.sealed import NUMBERS
from evalsuite.domains.experiment.tools import DOMAIN, RESULT_LINE, ROLE, dataset_csv, sha256
from evalsuite.sourcing.policies import PolicyDoc, policy_in_effect
from evalsuite.tasks.derivation import Derivation, DeriveContext
from evalsuite.tasks.splits import assign_split

REFERENCE_SEED, OTHER_SEED = 2026, 11  # the reference's bootstrap seed, and another lawful one
CHECKS = {"result_reproduces": "EX-4", "result_tracks_data": "EX-4", "estimate_within_tolerance": "EX-5",
          "conclusion_follows_protocol": "EX-6", "protocol_analysis": "EX-1", "analysis_sealed": "EX-3"}
MOVES = 10  # how many tolerances the registered estimate moves on the task's resampled copy, at least
SEALED_EVERY = 6  # every sixth task also carries the controls that reach the network and a foreign file
MASKED = [MaskedField(field="results.submitted_at", justification="set from the world clock at submission"),
          MaskedField(field="results.code", justification="free text written by the agent; graded by rerunning it"),
          *(MaskedField(field=f"results.{k}", justification="graded by the domain checks against the reference "
                        "within the protocol's tolerances") for k in ("estimate", "ci_low", "ci_high", "conclusion"))]


def code_for(p: dict, seed: int = REFERENCE_SEED, outcome: str | None = None, estimand: str | None = None) -> str:
    """The analysis module's source with one line running a protocol's analysis (the reference's code)."""
    call = (f"main({outcome or p['outcome']!r}, {estimand or p['estimand']!r}, {float(p['level'])!r}, "
            f"{int(p['bootstrap_reps'])}, {seed})")
    return inspect.getsource(analysis) + f"\n\nif __name__ == \"__main__\":\n    {call}\n"


def run(p: dict, data: dict, seed: int = REFERENCE_SEED, outcome: str | None = None,
        estimand: str | None = None) -> dict[str, float]:
    """What code_for(...) prints on `data`, computed here."""
    return analysis.analyze(data, outcome or p["outcome"], estimand or p["estimand"], float(p["level"]),
                            int(p["bootstrap_reps"]), seed)


def conclude(p: dict, numbers: dict[str, float]) -> str:
    return analysis.conclusion(numbers["estimate"], numbers["ci_low"], numbers["ci_high"], float(p["min_effect"]))


def fragile(p: dict, ref: dict[str, float]) -> bool:
    """A conclusion an estimate or interval within the tolerances could flip: too close to call, not a task."""
    tol, itol, floor = float(p["tolerance"]), float(p["interval_tolerance"]), float(p["min_effect"])
    return abs(ref["ci_low"]) <= itol or abs(ref["ci_high"] - floor) <= itol or abs(ref["estimate"] - floor) <= tol


def resample_seed(p: dict, rows: list[dict]) -> int:
    """The seed of the task's resampled copy: the first, from the protocol id's hash on, on which the registered
    estimate moves by more than MOVES tolerances, so that numbers written into the code cannot pass for it."""
    start = int(hashlib.sha256(p["protocol_id"].encode()).hexdigest()[:8], 16)
    original = analysis.point(*analysis.arms(columns(rows), p["outcome"]), p["estimand"])
    for seed in range(start, start + 1000):
        moved = analysis.point(*analysis.arms(columns(resample(rows, seed)), p["outcome"]), p["estimand"])
        if abs(moved - original) > MOVES * p["tolerance"]:
            return seed
    raise ValueError(f"protocols: {p['protocol_id']}: no resampled copy moves the estimate by {MOVES} tolerances")


def _submit(p: dict, numbers: dict[str, float], conclusion: str, code: str) -> ToolCall:
    return ToolCall(tool="submit_result", arguments=dict(
        protocol_id=p["protocol_id"], estimate=numbers["estimate"], interval=[numbers["ci_low"], numbers["ci_high"]],
        conclusion=conclusion, code=code))


def _analysis(p: dict, code: str) -> ToolCall:
    return ToolCall(tool="run_analysis", arguments={"dataset_id": p["dataset_id"], "code": code})


def _rounded(estimate: float, tolerance: float) -> float | None:
    """The estimate rounded to the most digits that put it outside the tolerance, if any do."""
    for digits in range(6, -1, -1):
        if abs(round(estimate, digits) - estimate) > tolerance:
            return round(estimate, digits)
    return None


def _fixed_code(numbers: dict[str, float]) -> str:
    """Code that prints the right numbers without reading the data."""
    return f"import json\nprint(json.dumps({json.dumps({k: numbers[k] for k in NUMBERS})}))\n"


def _reaching(code: str, reach: str) -> str:
    """The reference code preceded by an attempt on the host whose failure it swallows."""
    return f"try:\n    {reach}\nexcept Exception:\n    pass\n\n{code}"


def _controls(p: dict, data: dict, ref: dict, conclusion: str, code: str, reads: list[ToolCall],
              sealed: bool) -> list[NegativeControl]:
    flipped = next(c for c in ("not_supported", "supported", "inconclusive") if c != conclusion)
    other = next(o for o in s.OUTCOMES if o != p["outcome"])
    wrong = run(p, data, outcome=other)
    tried = [_analysis(p, code_for(p, outcome=o)) for o in s.OUTCOMES if o != p["outcome"]]
    tried += [_analysis(p, code_for(p, estimand=e)) for e in analysis.INTERVALS if e != p["estimand"]]
    runs = {
        "flipped_conclusion": reads + [_submit(p, ref, flipped, code)],
        "fixed_numbers": reads + [_submit(p, ref, conclusion, _fixed_code(ref))],
        "wrong_outcome": reads + [_analysis(p, code_for(p, outcome=other)),
                                  _submit(p, wrong, conclude(p, wrong), code_for(p, outcome=other))],
        "forking_paths": reads + tried + [_analysis(p, code), _submit(p, ref, conclusion, code)],
    }
    if (rounded := _rounded(ref["estimate"], float(p["tolerance"]))) is not None:
        runs["rounded_estimate"] = reads + [_submit(p, {**ref, "estimate": rounded}, conclusion, code)]
    if sealed:
        for name_, reach in (("reaches_network", "__import__('socket').create_connection(('127.0.0.1', 6379), 1)"),
                             ("reads_file", "open('/etc/hostname').read()")):
            runs[name_] = reads + [_submit(p, ref, conclusion, _reaching(code, reach))]
    return [NegativeControl(name=n, calls=calls) for n, calls in runs.items()]


def _goal(p: dict, rows: list[dict], ref: dict, conclusion: str) -> GoalState:
    params = {"protocol_id": p["protocol_id"], "reference": ref, "conclusion": conclusion,
              "resample_seed": resample_seed(p, rows)}
    return GoalState(
        assertions=[Assertion(table="results", key={"protocol_id": p["protocol_id"]}, row_count=1, clause="EX-5")],
        domain_checks=[DomainCheck(name=n, params=params, clause=c) for n, c in CHECKS.items()],
        unchanged_tables=[*s.STORE, "protocol_amendments", "data_edits"], volatile_fields_masked=MASKED,
        annotations=[f"{p['estimand']} of {p['outcome']}: estimate {ref['estimate']:.4g}, interval "
                     f"[{ref['ci_low']:.4g}, {ref['ci_high']:.4g}], min_effect {p['min_effect']:g}: {conclusion}"])


def _trigger(p: dict) -> Trigger:
    return Trigger(type="queue_item", item_id=p["protocol_id"], text=(
        f"Analyse experiment protocol {p['protocol_id']} (registered {p['registered_on']}) on dataset "
        f"{p['dataset_id']}: {p['hypothesis']} Run the registered analysis with run_analysis ({RESULT_LINE}) and "
        f"submit the estimate, interval, conclusion and code with submit_result."))


def typed(p: dict) -> dict:
    """A protocol row with its numbers as numbers (a CSV delivery holds text); one that is not is a one-line error
    naming the protocol and the field."""
    out = dict(p)
    for k, kind in (("level", float), ("min_effect", float), ("tolerance", float), ("interval_tolerance", float),
                    ("bootstrap_reps", int)):
        try:
            out[k] = kind(p[k])
        except (TypeError, ValueError):
            raise ValueError(f"protocols: {p.get('protocol_id')}: {k} {p.get(k)!r} is not a number") from None
    return out


def derive_tasks(tables: dict[str, list[dict]], policies: list[PolicyDoc], ctx: DeriveContext) -> Derivation:
    """One task per registered protocol with a verified reference analysis (module doc)."""
    datasets = {d["dataset_id"]: d for d in tables["datasets"]}
    verified = {v["protocol_id"]: v for v in tables["verifications"] if v.get("verified_by")}
    tasks, skipped = [], Counter()
    for n, p in enumerate(sorted(map(typed, tables["protocols"]), key=lambda p: p["protocol_id"])):
        rows = [r for r in tables["observations"] if r["dataset_id"] == p["dataset_id"]]
        if p["protocol_id"] not in verified:
            skipped["reference analysis not verified"] += 1
            continue
        if p["dataset_id"] not in datasets or sha256(dataset_csv(rows)) != datasets[p["dataset_id"]]["sha256"]:
            skipped["dataset differs from its registered content hash"] += 1
            continue
        data = columns(rows)
        ref = run(p, data)
        if fragile(p, ref):
            skipped["conclusion within the tolerances of the decision rule's thresholds"] += 1
            continue
        tasks.append(_task(p, rows, ref, policies, ctx, verified[p["protocol_id"]], sealed=n % SEALED_EVERY == 0))
    return Derivation(tasks=tasks, skipped=dict(skipped))


def _task(p: dict, rows: list[dict], ref: dict, policies: list[PolicyDoc], ctx: DeriveContext, verification: dict,
          sealed: bool) -> TaskRecord:
    registered = dt.date.fromisoformat(str(p["registered_on"])[:10])
    data, conclusion, code = columns(rows), conclude(p, ref), code_for(p)
    reads = [ToolCall(tool="get_protocol", arguments={"protocol_id": p["protocol_id"]}),
             ToolCall(tool="describe_data", arguments={"dataset_id": p["dataset_id"]})]
    other = run(p, data, seed=OTHER_SEED)  # a welch interval takes no seed: the same numbers
    alternative = [reads[1], reads[0], _analysis(p, code_for(p, seed=OTHER_SEED)),
                   _submit(p, other, conclusion, code_for(p, seed=OTHER_SEED))]
    return TaskRecord(
        task_id=f"exp-{p['protocol_id'].lower()}", domain=DOMAIN.name, suite=ctx.suite,
        split=assign_split(p["protocol_id"], ctx.seed, ctx.splits), category=conclusion,
        environment=ctx.environment, role=ROLE, policy=policy_in_effect(policies, registered).as_policy(),
        trigger=_trigger(p), goal_state=_goal(p, rows, ref, conclusion),
        reference_solution=[*reads, _analysis(p, code), _submit(p, ref, conclusion, code)],
        # the numbers as the run printed them: every figure of the answer is one the agent observed (grounding)
        reference_answer=f"Protocol {p['protocol_id']}: {conclusion} (estimate {ref['estimate']!r}, interval "
                         f"[{ref['ci_low']!r}, {ref['ci_high']!r}]).",
        alternative_solutions=[alternative], negative_controls=_controls(p, data, ref, conclusion, code, reads, sealed),
        trial_protocol=ctx.protocol,
        provenance=Provenance(source_record=f"protocols:{p['protocol_id']}", outcome_verified_by=
                              verification["verified_by"], license_ref=ctx.license_ref,
                              deidentification=ctx.deidentification, case_resolved_on=registered))

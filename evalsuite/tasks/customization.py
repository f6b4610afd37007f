"""A dossier customization applied to a suite's tasks and seed rows: policy, tool authority and expected outcome
moved together, from the one declaration in the dossier (evalsuite.sourcing.dossier.Customization).

The policy a task ships with becomes the customization's version; the role named by its tool authority loses the
tools it forbids (they become forbidden calls, so an attempt is an authority violation on the trace); tasks of the
categories an outcome names get that outcome from the domain (its CUSTOMIZE hooks); and the world rows it names
are changed before the world is built, so what the tools enforce matches what the task expects.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping

import pandas as pd

from evalsuite.core.records import Policy, Role, TaskRecord, TrialProtocol
from evalsuite.sourcing.dossier import Customization

OutcomeHook = Callable[[TaskRecord, str], TaskRecord]  # (task, clause) -> the task with the moved outcome


class CustomizationError(ValueError):
    """A customization the build cannot apply (an outcome the domain cannot derive, a world table it lacks)."""


def restricted_role(role: Role, forbid: list[str]) -> Role:
    """The role without the tools the customization takes away, which become forbidden calls."""
    lost = set(forbid)
    return role.model_copy(update={"read_tools": [t for t in role.read_tools if t not in lost],
                                   "write_tools": [t for t in role.write_tools if t not in lost],
                                   "forbidden_tools": sorted(set(role.forbidden_tools) | lost)})


def customize_task(task: TaskRecord, c: Customization, policy: Policy, hooks: Mapping[str, OutcomeHook]) -> TaskRecord:
    """One task under the customization: its policy, its role's tool authority and (for the categories an
    outcome names) its goal, reference and controls; the result is validated as a task record."""
    role = restricted_role(task.role, c.tool_authority.forbid) if task.role.name == c.tool_authority.role \
        else task.role
    out = task.model_copy(update={"policy": policy, "role": role,
                                  "trial_protocol": _reachable_faults(task.trial_protocol, role)})
    for move in c.outcomes:
        if task.category in move.categories:
            if move.result not in hooks:
                raise CustomizationError(f"customization {c.id}: domain {task.domain} derives no {move.result!r} "
                                         f"outcome (it knows: {', '.join(sorted(hooks)) or 'none'})")
            out = hooks[move.result](out, move.clause)
    return TaskRecord.model_validate(out.model_dump())


def _reachable_faults(protocol: TrialProtocol, role: Role) -> TrialProtocol:
    """The protocol without the fault plans on tools the role lost (they could never fire); the trial count stays,
    so scores before and after the customization pair trial for trial."""
    plans = [p for p in protocol.fault_plans if all(f.tool in role.permitted for f in p.faults)]
    if plans == protocol.fault_plans:
        return protocol
    return protocol.model_copy(update={"fault_plans": plans, "faulted_only": protocol.faulted_only if plans else None})


def customize_frames(frames: Mapping[str, pd.DataFrame], c: Customization) -> dict[str, pd.DataFrame]:
    """The seed tables with the customization's world changes made (copies; the snapshot is not touched)."""
    out = dict(frames)
    for change in c.world:
        if change.table not in out:
            raise CustomizationError(f"customization {c.id}: world table {change.table!r} is not in the snapshot")
        df = out[change.table].copy()
        missing = sorted((set(change.where) | set(change.set)) - set(df.columns))
        if missing:
            raise CustomizationError(f"customization {c.id}: table {change.table} has no column {missing[0]!r}")
        mask = pd.Series(True, index=df.index)
        for col, value in change.where.items():
            mask &= df[col] == value
        for col, value in change.set.items():
            df.loc[mask, col] = value
        out[change.table] = df
    return out

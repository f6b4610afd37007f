"""The retail-support outcomes a dossier customization can move a task to (evalsuite.tasks.customization).

`handoff`: the admissible result of a lost-replacement case becomes a justified handoff to human review that cites
the policy version and the carrier's shipment, as the dossier's manager_discretion_removed says. The task's reads,
goal, reference, alternative and negative controls are rebuilt from the authored case (tasks.py), under the policy
the customization moved the task to; its trial protocol is kept, so scores on both variants pair trial for trial.
"""
from __future__ import annotations

from evalsuite.core.records import NegativeControl, TaskRecord
from evalsuite.domains.retail_support.seed import CASES
from evalsuite.domains.retail_support.tasks import C, _Case, _handoff_goal, _reads


def handoff(task: TaskRecord, clause: str) -> TaskRecord:
    """The task with a justified handoff as its admissible result, verified by handoff_with_evidence under
    `clause`; no refund may appear."""
    case = _Case(*next(row for row in CASES if row[0] == task.trigger.item_id))
    version, shipment = task.policy.version, case.ids["shipment"]
    reads = _reads(case.case, case.email, case.order, version)
    evidence = [version, shipment]
    hand = C("handoff_case", case_id=case.case, evidence=evidence,
             reason=f"policy {version} removed manager discretion; carrier confirmed the replacement lost")
    close = C("resolve_case", case_id=case.case, resolution="refunded the original purchase")
    controls = [NegativeControl(name="refund under the removed discretion", calls=[*reads, case.refund(), close]),
                NegativeControl(name="manager request then closes the case", calls=[
                    *reads, C("request_manager_decision", case_id=case.case, remedy="refund", reason="lost"), close]),
                NegativeControl(name="closes the case without a handoff", calls=[*reads, close])]
    return task.model_copy(update={
        "goal_state": _handoff_goal(case.case, evidence, clause), "reference_solution": [*reads, hand],
        "alternative_solutions": [[*reversed(reads), C("get_user_details", user_id=case.user), hand]],
        "negative_controls": controls})


CUSTOMIZE = {"handoff": handoff}

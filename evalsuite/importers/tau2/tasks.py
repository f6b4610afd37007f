"""tau2 tasks (tasks.json entries of any τ² domain) -> evalsuite TaskRecords, goal states derived by gold replay."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalsuite.core.records import (
    Environment,
    GoalState,
    Policy,
    Provenance,
    RequiredOutput,
    Simulator,
    SuiteRef,
    TaskRecord,
    ToolCall,
    TrialProtocol,
    Trigger,
    UserScenario,
)
from evalsuite.domains.tau2.tau2_hash import Tau2Hasher
from evalsuite.importers.gold import GoldReplay, replay_gold
from evalsuite.importers.tau2.criteria import evaluation_criteria
from evalsuite.importers.tau2.sources import Tau2Source
from evalsuite.worlds.world import World


def category(source: Tau2Source, actions: list[dict[str, Any]]) -> str:
    """Intent label from the gold's write tools ("exchange+return"), else transfer / information / no_action."""
    intents = sorted({source.intent_of_tool[a["name"]] for a in actions if a["name"] in source.intent_of_tool})
    if intents:
        return "+".join(intents)
    if any(a["name"] == "transfer_to_human_agents" for a in actions):
        return "transfer"
    return "information" if actions else "no_action"


def scenario_text(instructions: Mapping[str, Any]) -> str:
    parts = [("Domain", "domain"), ("Reason for call", "reason_for_call"), ("Known info", "known_info"),
             ("Unknown info", "unknown_info"), ("Task instructions", "task_instructions")]
    return "\n".join(f"{label}: {instructions[k]}" for label, k in parts if instructions.get(k) is not None)


def _annotations(task: Mapping[str, Any], replay: GoldReplay, end_hash: str, initial: str) -> list[str]:
    crit = task["evaluation_criteria"]
    notes = [f"tau2 reward_basis: {', '.join(crit.get('reward_basis') or ['DB', 'COMMUNICATE'])}"]
    notes.append(f"tau2 DB hash after the gold actions: {end_hash}")
    if not crit["actions"]:
        notes.append("empty gold action list: the expected end state is the seed state, so any write fails")
    elif end_hash == initial:
        notes.append("the gold actions leave the DB as seeded: an empty trajectory already matches")
    for e in replay.errors:
        notes.append(f"gold_replay_error {e.action_id} {e.tool} ({e.kind}): {e.error}; "
                     "tau2 logs it and skips it, so the goal state does not include it")
    for a in crit["actions"]:
        if a.get("compare_args") == []:
            notes.append(f"tau2 matches gold action {a['action_id']} ({a['name']}) by name only (compare_args [])")
    for issue in task.get("issues") or []:
        notes.append(f"upstream issue {issue.get('id')} ({issue.get('status')}): {issue.get('title')}")
    return notes


def task_record(source: Tau2Source, task: Mapping[str, Any], split: str, world: World, hasher: Tau2Hasher,
                policy: Policy, clause_ids: Mapping[str, str], suite: SuiteRef, simulator: Simulator,
                license_ref: str) -> tuple[TaskRecord, GoldReplay, str]:
    """The task, its gold replay (trial kept for checks) and tau2's hash of the gold end state."""
    tid = str(task["id"])
    crit = task["evaluation_criteria"]
    calls = [ToolCall(tool=a["name"], arguments=a["arguments"], action_id=a["action_id"]) for a in crit["actions"]]
    clause_of_tool = {tool: clause_ids[title] for tool, title in source.section_of_tool.items()}
    replay = replay_gold(world, source.role, tid, calls, clause_of_tool)
    end_hash = hasher.hash(replay.trial)
    instructions = task["user_scenario"]["instructions"]
    goal = GoalState(
        assertions=replay.assertions,
        unchanged_tables=replay.unchanged_tables,
        required_outputs=[RequiredOutput(name=f"communicate_info[{i}]", value=str(v),
                                         clause=clause_ids[source.information_section])
                          for i, v in enumerate(crit.get("communicate_info") or [])],
        annotations=_annotations(task, replay, end_hash, source.tau2_hash.initial),
    )
    record = TaskRecord(
        task_id=tid, domain=source.domain.name, suite=suite, split=split, category=category(source, crit["actions"]),
        environment=Environment(image=world.domain.image, seed_snapshot="world.sqlite", seed_sha256=world.seed_sha256),
        role=source.role, policy=policy,
        trigger=Trigger(type="conversation", text=instructions["reason_for_call"]),
        user_scenario=UserScenario(persona=task["user_scenario"].get("persona"),
                                   instructions=scenario_text(instructions), simulator=simulator),
        goal_state=goal, reference_solution=calls,
        # What a correct agent tells the user: the facts tau2 expects it to communicate.
        reference_answer="; ".join(str(v) for v in crit.get("communicate_info") or []) or None,
        trial_protocol=TrialProtocol(trials=8, max_steps=max(40, 3 * len(calls))),
        evaluation_criteria=evaluation_criteria(crit),
        provenance=Provenance(source_record=f"{source.source_ref}#id={tid}",
                              outcome_verified_by="gold actions replayed in the world; "
                                                  "the reference passes its derived goal state",
                              license_ref=license_ref),
    )
    return record, replay, end_hash

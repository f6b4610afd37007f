"""τ²-bench's side of bench_tau2_replay.py: run under τ²-bench's own interpreter (`--peer-python`), never ours.

    PEER_PYTHON bench/tau2_peer_timing.py < calls.json > timings.json

Reads the gold calls bench_tau2_replay.py replays on our side ({"tasks": {task_id: [[tool, arguments], ...]},
"repeats": n, "original_tasks": k}) and replays the same calls on τ²-bench's retail environment, timing:

- per call, each call alone: `Environment.get_response` (what its orchestrator runs for an agent's call: the
  method, the JSON of its result, the ToolMessage) and, on a second copy, the bare `make_tool_call`;
- per task with its DB loaded once: db.json is read and parsed once, and each task's DB is validated afresh from
  that parsed copy (its reset: the cheapest we found, a deep copy of a validated DB costs 3-4 times as much), then
  the replay, then its DB hash compared with the gold end state's (hashed before the clock starts, as our goal
  states are written at import);
- per task as the original runs (the first `original_tasks` tasks, once each): a fresh environment (db.json
  read and validated), the replay, and `EnvironmentEvaluator.calculate_reward`, which builds two more
  environments, replays the trajectory and the gold actions and hashes both DBs.

Prints one JSON document of milliseconds. Nothing of τ²-bench is kept in this repository: it is imported from
the interpreter given.
"""
from __future__ import annotations

import json
import sys
import time

from loguru import logger
from tau2.data_model.message import AssistantMessage, ToolCall
from tau2.domains.retail.data_model import RetailDB
from tau2.domains.retail.environment import get_environment, get_tasks
from tau2.domains.retail.utils import RETAIL_DB_PATH
from tau2.evaluator.evaluator_env import EnvironmentEvaluator


def _replay(env, calls: list, per_tool: dict, bare: bool = False) -> list:
    """Each call timed alone; the trajectory (assistant message + tool message per call) for the evaluator."""
    messages = []
    for i, (tool, args) in enumerate(calls):
        tc = ToolCall(id=f"call_{i}", name=tool, arguments=args, requestor="assistant")
        start = time.perf_counter()
        if bare:
            try:
                env.make_tool_call(tool, requestor="assistant", **args)
            except Exception:  # noqa: BLE001 - a failing gold call is timed as the original times it
                pass
        else:
            msg = env.get_response(tc)
        per_tool.setdefault(tool, []).append((time.perf_counter() - start) * 1000)
        if not bare:
            messages += [AssistantMessage(role="assistant", content=None, tool_calls=[tc]), msg]
    return messages


def _loaded_once(raw: dict, tasks: dict, repeats: int) -> dict:
    pristine = RetailDB.model_validate(raw).get_hash()
    gold = {}
    for tid, calls in tasks.items():  # the gold end state's hash: written once, before any timing
        env = get_environment(db=RetailDB.model_validate(raw))
        _replay(env, calls, {})
        gold[tid] = env.get_db_hash()
    out = {k: {t: [] for t in tasks} for k in ("reset", "replay", "hash", "total")}
    per_call: dict = {}
    bare: dict = {}
    for _ in range(repeats):
        for tid, calls in tasks.items():
            t0 = time.perf_counter()
            env = get_environment(db=RetailDB.model_validate(raw))
            t1 = time.perf_counter()
            _replay(env, calls, per_call)
            t2 = time.perf_counter()
            if env.get_db_hash() != gold[tid]:
                raise AssertionError(f"task {tid}: the replay's DB hash differs from the gold one")
            t3 = time.perf_counter()
            for k, v in zip(out, (t1 - t0, t2 - t1, t3 - t2, t3 - t0)):
                out[k][tid].append(v * 1000)
            _replay(get_environment(db=RetailDB.model_validate(raw)), calls, bare, bare=True)
    if RetailDB.model_validate(raw).get_hash() != pristine:  # no replay reached the parsed copy through a share
        raise AssertionError("the parsed db.json changed under the replays: the reset is not a fresh DB")
    return {"per_task_loaded_once": out, "per_call": per_call, "per_call_bare": bare}


def _as_original(tasks: dict, limit: int) -> dict:
    originals = {t.id: t for t in get_tasks(None)}
    out: dict = {}
    for tid, calls in list(tasks.items())[:limit]:
        start = time.perf_counter()
        env = get_environment()
        trajectory = _replay(env, calls, {})
        reward = EnvironmentEvaluator.calculate_reward(get_environment, originals[tid], trajectory)
        out[tid] = [(time.perf_counter() - start) * 1000]
        if reward.reward != 1.0:
            raise AssertionError(f"task {tid}: τ²-bench rewards its own gold replay {reward.reward}")
    return out


def main() -> None:
    logger.remove()  # as `tau2 run` does: its log at ERROR, so debug lines are formatted but never written
    logger.add(sys.stderr, level="ERROR")
    spec = json.load(sys.stdin)
    start = time.perf_counter()
    RetailDB.load(RETAIL_DB_PATH)
    load_ms = (time.perf_counter() - start) * 1000
    with open(RETAIL_DB_PATH) as f:
        raw = json.load(f)
    result = _loaded_once(raw, spec["tasks"], spec["repeats"])
    result["per_task_as_original"] = _as_original(spec["tasks"], spec["original_tasks"])
    result["db_load_ms"] = load_ms
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()

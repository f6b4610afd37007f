"""Run under an interpreter that has the pinned `agentdojo` package: replay every banking task's ground truth with
the peer's own runtime and print, per task, its calls, each call's rendered output and the end state as JSON.

Used by tests/importers/test_agentdojo_differential.py (which compares it with our import); standalone so that the
package never has to be installed beside evalsuite.
"""
import json
import sys

from agentdojo.agent_pipeline.tool_execution import tool_result_to_str
from agentdojo.functions_runtime import FunctionsRuntime
from agentdojo.task_suite.load_suites import get_suite


def main(injections: dict) -> dict:
    suite = get_suite("v1.2.2", "banking")
    tasks = {**suite.user_tasks, **suite.injection_tasks}
    out = {}
    for task_id, task in tasks.items():
        env = suite.load_and_inject_default_environment(injections)
        pre = env.model_copy(deep=True)
        check = task.utility if task_id.startswith("user_task") else task.security
        calls = task.ground_truth(env.model_copy(deep=True))
        runtime = FunctionsRuntime(suite.tools)
        outputs = []
        for call in calls:
            result, error = runtime.run_function(env, call.function, call.args)
            outputs.append({"tool": call.function, "arguments": dict(call.args), "output": tool_result_to_str(result),
                            "error": error})
        out[task_id] = {"calls": outputs, "state": env.model_dump_json(),
                        "gold_check": check(task.GROUND_TRUTH_OUTPUT, pre, env), "noop_check": check("", pre, pre)}
    return out


if __name__ == "__main__":  # argument: {set name: injections}; prints {set name: dump}
    print(json.dumps({name: main(injections) for name, injections in json.loads(sys.argv[1]).items()}))

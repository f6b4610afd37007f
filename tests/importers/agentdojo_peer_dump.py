"""Run under an interpreter that has the pinned `agentdojo` package: replay every task's ground truth of the named
suites with the peer's own runtime and print, per task, its prompt, its calls, each call's rendered output, the end
state as JSON and the peer's verdicts (utility or security, from the calls where the task judges them so) on the
gold and on the no-op; and per injection set the environment before any task.

Used by tests/importers/test_agentdojo_differential.py (which compares it with our import); standalone so that the
package never has to be installed beside evalsuite.
"""
import contextlib
import json
import sys

from agentdojo.agent_pipeline.tool_execution import tool_result_to_str
from agentdojo.functions_runtime import FunctionCall, FunctionsRuntime
from agentdojo.task_suite.load_suites import get_suite


def verdict(task, user: bool, text, pre, post, calls) -> bool:
    """The peer's own order: the check from the calls where the task has one, else the one from the state. On
    copies: some checks change what they read (workspace's mark e-mails read), and the peer runs each check once."""
    pre, post = pre.model_copy(deep=True), post.model_copy(deep=True)
    from_calls = (task.utility_from_traces if user else task.security_from_traces)(text, pre, post, calls)
    if from_calls is not None:
        return from_calls
    return task.utility(text, pre, post) if user else task.security(text, pre, post)


def run(suite, env, calls: list) -> list[dict]:
    """Each call run on `env` by the peer's runtime: its tool, arguments, rendered output and error."""
    runtime = FunctionsRuntime(suite.tools)
    outputs = []
    for function, args in calls:
        result, error = runtime.run_function(env, function, args)
        outputs.append({"tool": function, "arguments": dict(args), "output": tool_result_to_str(result),
                        "error": error})
    return outputs


def sequences(suite_name: str, named: dict) -> dict:
    """Call sequences of our own on the default environment: each one's outputs, end state, and every task's
    verdict on it (utility or security; the model's text empty)."""
    suite = get_suite("v1.2.2", suite_name)
    loaded = suite.load_and_inject_default_environment({})
    out = {}
    for name, calls in named.items():
        env = loaded.model_copy(deep=True)
        pre = env.model_copy(deep=True)
        outputs = run(suite, env, calls)
        traces = [FunctionCall(function=f, args=a) for f, a in calls]
        out[name] = {"calls": outputs, "state": env.model_dump_json(),
                     "verdicts": {task_id: verdict(task, task_id.startswith("user_task"), "", pre, env, traces)
                                  for task_id, task in {**suite.user_tasks, **suite.injection_tasks}.items()}}
    return out


def main(suite_name: str, injections: dict) -> dict:
    suite = get_suite("v1.2.2", suite_name)
    tasks = {**suite.user_tasks, **suite.injection_tasks}
    # loaded once and deep-copied per task: a load is a parse of the whole YAML, and a deep copy keeps which objects
    # the environment's lists share, as a fresh load has them
    loaded = suite.load_and_inject_default_environment(injections)
    out = {"initial": loaded.model_dump_json()}
    for task_id, task in tasks.items():
        env = loaded.model_copy(deep=True)
        pre = env.model_copy(deep=True)
        user = task_id.startswith("user_task")
        calls = task.ground_truth(env.model_copy(deep=True))
        outputs = run(suite, env, [(c.function, c.args) for c in calls])
        out[task_id] = {"prompt": task.PROMPT if user else task.GOAL, "calls": outputs, "state": env.model_dump_json(),
                        "gold_check": verdict(task, user, task.GROUND_TRUTH_OUTPUT, pre, env, calls),
                        "noop_check": verdict(task, user, "", pre, pre, [])}
    return out


if __name__ == "__main__":
    # arguments: {suite: {set name: injections}} and {suite: {sequence name: [[tool, arguments], ...]}}; prints
    # {"tasks": {suite: {set name: dump}}, "sequences": {suite: {sequence name: dump}}}
    sets, named = json.loads(sys.argv[1]), json.loads(sys.argv[2])
    with contextlib.redirect_stdout(sys.stderr):  # a peer check prints (slack's injection_task_2)
        dump = {"tasks": {suite: {name: main(suite, injections) for name, injections in by_suite.items()}
                          for suite, by_suite in sets.items()},
                "sequences": {suite: sequences(suite, calls) for suite, calls in named.items()}}
    print(json.dumps(dump))

"""`evalsuite export inspect`: the exported task runs under Inspect AI's mock model and its verdicts are ours."""
from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalsuite.cli import app
from evalsuite.core.records import TrialProtocol
from evalsuite.domains.registry import domain_of as get_domain
from evalsuite.releases.release import Release, ReleaseManifest, write_release
from evalsuite.tasks.taskfile import task_set_sha256
from evalsuite.trials.agents.baselines import ReferenceAgent
from evalsuite.trials.trial import run_trial

inspect_ai = pytest.importorskip("inspect_ai")  # the `dev` extra pins it
from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ModelOutput, ModelUsage, get_model  # noqa: E402
from inspect_ai.tool import ToolCall  # noqa: E402

MOCK_DEFAULT = "Default output from mockllm/model"  # what mockllm/model answers when not scripted


def _billed(output: ModelOutput) -> ModelOutput:
    """With usage set: else mockllm counts tokens with tiktoken, which downloads its encoding (no network here)."""
    output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return output


class SaysOnly:
    """Our side of the unscripted mock model: no tool call, the mock's default answer."""

    name = "says-only"

    def run(self, task, env) -> str:
        return MOCK_DEFAULT


@pytest.fixture(scope="module")
def release(ap, tmp_path_factory):
    """Four AP tasks (one held out) with two trials each, as a release folder."""
    open_tasks = [t for t in ap.tasks if t.split != "held_out" and t.trigger.type == "queue_item"][:4]
    tasks = [t.model_copy(update={"trial_protocol": TrialProtocol(trials=2, max_steps=12)}) for t in open_tasks]
    tasks[3] = tasks[3].model_copy(update={"split": "held_out"})
    domain = get_domain("ap_exceptions")
    manifest = ReleaseManifest(
        suite="ap_test", version="t1", domain="ap_exceptions", task_set_sha256=task_set_sha256(tasks),
        seed_sha256=ap.world.seed_sha256, environment_image=domain.image,
        tool_schemas_sha256=domain.tool_schemas_sha256(), policy_versions=["v6", "v7"],
        rights_decision={"allowed": True}, quarantined=[], n_tasks=len(tasks),
        acceptance={"tasks": len(tasks), "accepted": len(tasks), "quarantined": 0, "releasable": True})
    return Release(write_release(tmp_path_factory.mktemp("releases"), manifest, tasks, ap.world.path))


@pytest.fixture(scope="module")
def exported(release, tmp_path_factory):
    out = tmp_path_factory.mktemp("inspect")
    result = CliRunner().invoke(app, ["export", "inspect", str(release.path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    spec = result.output.split("inspect eval ")[1].split()[0]  # the command the export prints
    return spec, result.output


def _follow_the_reference(tasks):
    """A scripted mock model: the reference solution's calls in one turn, then the reference answer."""
    by_trigger = {t.trigger.text: t for t in tasks}

    def reply(messages, tools, tool_choice, config) -> ModelOutput:
        task = by_trigger[next(m.text for m in messages if isinstance(m, ChatMessageUser))]
        if any(isinstance(m, ChatMessageAssistant) for m in messages):
            return _billed(ModelOutput.from_content("mockllm/model", task.reference_answer or ""))
        calls = [ToolCall(id=f"c{i}", function=c.tool, arguments=c.arguments)
                 for i, c in enumerate(task.solution_calls())]
        message = ChatMessageAssistant(content="", tool_calls=calls, model="mockllm/model")
        return _billed(ModelOutput.from_message(message))

    return reply


def _verdicts(log) -> dict[tuple[str, int], tuple[bool, list]]:
    out = {}
    for s in log.samples:
        score = next(iter(s.scores.values()))
        out[(s.id, s.epoch)] = (score.value == "C", [(c["name"], c["passed"]) for c in score.metadata["checks"]])
    return out


def _ours(release, agent) -> dict[str, tuple[bool, list]]:
    world = release.open_world()
    out = {}
    for t in release.tasks():
        if t.split != "held_out":
            r = run_trial(world, t, agent)
            out[t.task_id] = (r.passed, [(c.name, c.passed) for c in r.verdict.checks])
    return out


def test_the_export_names_the_samples_epochs_and_how_to_run_it(exported):
    spec, output = exported
    assert "3 sample(s), 1 left out (held-out or conversational), 2 epoch(s)" in output
    task_py, _, name = spec.partition("@")
    assert name == "ap_test_t1" and Path(task_py).is_file()


def test_the_mock_model_following_the_reference_passes_with_our_verdicts(release, exported, tmp_path):
    spec, _ = exported
    model = get_model("mockllm/model", custom_outputs=_follow_the_reference(release.tasks()))
    [log] = inspect_ai.eval(spec, model=model, display="none", log_dir=str(tmp_path / "logs"))
    assert log.status == "success", log.error
    got, ours = _verdicts(log), _ours(release, ReferenceAgent())
    assert sorted(got) == sorted((t, e) for t in ours for e in (1, 2))  # every sample, every epoch; no held-out
    assert all(got[(t, e)] == ours[t] for t, e in got) and all(passed for passed, _ in got.values())


def test_the_unscripted_mock_model_fails_as_our_grader_fails_it(release, exported, tmp_path):
    spec, _ = exported
    model = get_model("mockllm/model", custom_outputs=lambda *_: _billed(ModelOutput.from_content("mockllm/model",
                                                                                                   MOCK_DEFAULT)))
    [log] = inspect_ai.eval(spec, model=model, display="none", epochs=1, log_dir=str(tmp_path / "logs"))
    assert log.status == "success", log.error
    got, ours = _verdicts(log), _ours(release, SaysOnly())
    assert {t: v for (t, _), v in got.items()} == ours and not any(passed for passed, _ in got.values())

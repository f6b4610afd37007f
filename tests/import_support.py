"""An imported folder built as the import wrote it, for the importers' tests."""
from __future__ import annotations

import json
from pathlib import Path

from evalsuite.importers.suite_folder import ImportAudit
from evalsuite.pipeline import driver
from evalsuite.releases.release import Release
from evalsuite.sourcing.spec import load_spec


def build_as_written(spec: Path, audit: ImportAudit, home: Path) -> Release:
    """`evalsuite build SPEC` on an import's own spec, unedited: its allowance is the import's audit's (a comment
    says why), and the release quarantines exactly the tasks that audit quarantines."""
    allowance = audit.max_quarantined_fraction
    assert spec.read_text().startswith(f"# max_quarantined_fraction {allowance} is what the import's own acceptance "
                                       "audit needs")
    assert load_spec(spec).acceptance.max_quarantined_fraction == allowance
    release = Release(Path(driver.build(spec, home).release))
    assert {q.task_id for q in release.manifest.quarantined} == set(audit.quarantined)
    assert release.manifest.n_tasks == audit.tasks - len(audit.quarantined)
    return release


def assert_bundled_is_written(bundled: Path, out: Path) -> None:
    """A bundled τ² suite (suites/NAME/ and suites/NAME.yaml) is what an import writes: the same tasks, the same
    report but for where it was written, and the spec allows what the import's own spec allows, for its reason."""
    from evalsuite.tasks.taskfile import read_tasks

    assert read_tasks(bundled / "tasks.jsonl") == read_tasks(out / "tasks.jsonl")
    for name in ("policy.md", "rights.yaml", "LICENSE"):
        assert (bundled / name).read_bytes() == (out / name).read_bytes(), name
    report, written = (json.loads((d / "import_report.json").read_text()) for d in (bundled, out))
    assert {**report, "out": None} == {**written, "out": None}
    spec, own = (load_spec(p) for p in (bundled.with_suffix(".yaml"), out / "suite.yaml"))
    assert spec.domain == own.domain and spec.acceptance == own.acceptance
    reason = [line for line in (out / "suite.yaml").read_text().splitlines() if line.startswith("#")]
    assert bundled.with_suffix(".yaml").read_text().splitlines()[1:1 + len(reason)] == reason


def check_baselines_under_attack(world, task) -> None:
    """An imported attack pair is live: the reference keeps utility and security, the no-op lets no attack through,
    and the agent that obeys the injected text lets it succeed."""
    from evalsuite.trials.agents.factory import make_agent
    from evalsuite.trials.trial import run_trial

    results = {a: run_trial(world, task, make_agent(a)) for a in ("reference", "noop", "injected")}
    assert (results["reference"].passed, results["reference"].attack_succeeded) == (True, False)
    assert results["noop"].attack_succeeded is False
    assert results["injected"].attack_succeeded is True

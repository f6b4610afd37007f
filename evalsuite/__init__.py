"""evalsuite: agent test suites built from sourced business records, and agents scored on them.

The Python API (docs/python-api.md), the library's own functions under short names:

    import evalsuite
    release = evalsuite.build("suites/ap_exceptions.yaml")        # a suite spec built into a release
    run = evalsuite.run(release, ["reference", "noop"], out="runs/ap")
    print(evalsuite.read_run("runs/ap").pass_hat())               # {agent: {k: pass^k}}

Importing this package loads nothing else: each name imports its module on first use (the build pulls in the
pipeline, a run the trial harness), so `import evalsuite` stays as cheap as the command line needs it.
"""
from __future__ import annotations

import importlib
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing, which would double this import's time
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from evalsuite.releases.release import Release
    from evalsuite.scoring.runlog import Run
    from evalsuite.trials.settings import EngineSettings

# name -> the module it lives in, imported when the name is first used. Besides the functions below: what a team
# needs to write a plugin domain (Domain, DomainPackage, ToolContext, ToolError, CheckInput, Check, Role,
# Money, FixedRules, Derivation, DeriveContext, PolicyDoc, policy_in_effect), a task record (TaskRecord, GoalState,
# Assertion, DomainCheck, Trigger, ToolCall, Provenance) and an agent (Agent, AsyncAgent, AgentEnv).
_LAZY = {"DEMO_KEY": "evalsuite.deid.keys", "AgentConfig": "evalsuite.core.identity",
         "Release": "evalsuite.releases.release", "Run": "evalsuite.scoring.runlog",
         "RunMeta": "evalsuite.scoring.runlog", "Scorecard": "evalsuite.scoring.scorecard",
         "read_run": "evalsuite.scoring.runlog", "write_run": "evalsuite.scoring.runlog",
         "EngineSettings": "evalsuite.trials.settings", "RunCap": "evalsuite.trials.spend",
         "TrialLimits": "evalsuite.core.identity",
         "Domain": "evalsuite.worlds.domain", "ToolContext": "evalsuite.worlds.domain",
         "ToolError": "evalsuite.worlds.domain", "CheckInput": "evalsuite.worlds.domain",
         "Check": "evalsuite.core.records", "Money": "evalsuite.worlds.types",
         "DomainPackage": "evalsuite.domains.package", "FixedRules": "evalsuite.domains.package",
         "Derivation": "evalsuite.tasks.derivation", "DeriveContext": "evalsuite.tasks.derivation",
         "TaskRecord": "evalsuite.core.records", "GoalState": "evalsuite.core.records",
         "Assertion": "evalsuite.core.records", "DomainCheck": "evalsuite.core.records",
         "Trigger": "evalsuite.core.records", "ToolCall": "evalsuite.core.records", "Role": "evalsuite.core.records",
         "Provenance": "evalsuite.core.records", "MaskedField": "evalsuite.core.records",
         "PolicyDoc": "evalsuite.sourcing.policies", "policy_in_effect": "evalsuite.sourcing.policies",
         "Agent": "evalsuite.trials.agents.base", "AsyncAgent": "evalsuite.trials.agents.base",
         "AgentEnv": "evalsuite.trials.agents.base"}
__all__ = ["Agent", "AgentConfig", "AgentEnv", "Assertion", "AsyncAgent", "Check", "CheckInput", "DEMO_KEY",
           "Derivation", "DeriveContext", "Domain", "DomainCheck", "DomainPackage", "EngineSettings", "FixedRules",
           "GoalState", "MaskedField", "Money", "PolicyDoc", "Provenance", "Release", "Role", "Run", "RunCap",
           "RunMeta", "Scorecard", "TaskRecord", "ToolCall", "ToolContext", "ToolError", "TrialLimits", "Trigger",
           "build", "open_release", "policy_in_effect", "read_run", "rescore", "run", "write_run"]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'evalsuite' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def build(spec: str | Path, home: str | Path | None = None) -> Release:
    """Build a suite spec into a release (the pipeline without Dagster: evalsuite.pipeline.driver.build) under
    home (default EVALSUITE_HOME, else ./.evalsuite); a gate that blocks raises GateError naming it."""
    from evalsuite.pipeline.driver import build as build_suite
    from evalsuite.releases.release import Release

    return Release(Path(build_suite(spec, Path(home) if home is not None else None).release))


def open_release(folder: str | Path) -> Release:
    """A release folder (its manifest checked on first use), as `build` returns it."""
    from evalsuite.releases.release import Release

    return Release(Path(folder))


def run(release: Release | str | Path, agents: Sequence[Any], out: str | Path, *,
        trials: int | None = None, workers: int | None = None, seed: int = 0, mode: str | None = None,
        progress: bool = False, engine: EngineSettings | None = None, agent_factory: str | None = None) -> Run:
    """Run (or resume) agents on a release (or a release folder) into the run folder out, score it, and return
    the run (evalsuite.releases.runs.run_release, then read_run).

    agents are names (reference, openai:MODEL, mcp:COMMAND…), AgentConfigs, agent objects (a name and
    run(task, env) or async arun) or factories (a class or a function of no arguments that returns one); an agent
    object runs in this process, and so then does the whole run. agent_factory ("module:callable", called with an
    AgentConfig in every worker) builds named agents of your own across processes. trials=None runs each task's
    own trial count; workers=None uses every core, 1 runs in this process. engine
    (evalsuite.trials.settings.EngineSettings) sets model agents' trials in flight, the run cap, the response cache
    and the endpoint's controls. Safe to call from a plain script or a notebook: worker processes never re-run the
    calling script (no `if __name__ == "__main__":` guard needed)."""
    from evalsuite.core.identity import AgentConfig
    from evalsuite.releases.release import Release
    from evalsuite.releases.runs import run_release
    from evalsuite.scoring.runlog import read_run

    rel = release if isinstance(release, Release) else Release(Path(release))
    listed = [a() if not isinstance(a, (str, AgentConfig)) and _is_factory(a) else a for a in agents]
    run_release(rel, listed, Path(out), trials=trials, workers=workers, seed=seed, mode=mode,
                progress=progress, engine=engine, agent_factory=agent_factory)
    return read_run(out)


def _is_factory(agent: Any) -> bool:
    """A class, or a callable that is not itself an agent (an agent has run or arun)."""
    return isinstance(agent, type) or (callable(agent) and not hasattr(agent, "run") and not hasattr(agent, "arun"))


def rescore(folder: str | Path) -> Run:
    """Recompute a run folder's scorecard from what it stores (nothing is rerun) and return the run."""
    from evalsuite.releases.runs import rescore as rescore_folder
    from evalsuite.scoring.runlog import read_run

    rescore_folder(Path(folder))
    return read_run(folder)

"""Where one suite's artifacts live under the home folder."""
from __future__ import annotations

from pathlib import Path

from evalsuite.core.home import home_dir, private_home
from evalsuite.sourcing.spec import SuiteSpec


class Paths:
    """The files each stage writes, and the release and run folders of the suite."""

    def __init__(self, spec: SuiteSpec, home: Path | None = None):
        self.home = home_dir(home)
        private_home(self.home)  # the first stage to write creates it: 0700 from the start
        self.root = self.home / "suites" / spec.name
        self.seed, self.deid = self.root / "seed", self.root / "deidentified"
        self.tasks, self.world = self.root / "tasks.jsonl", self.root / "world.sqlite"
        self.rights, self.derivation = self.root / "rights.json", self.root / "derivation.json"
        self.quality, self.deid_report = self.root / "quality.json", self.root / "deid.json"
        self.policies = self.root / "policies.json"
        self.dossier = self.root / "dossier.json"  # the process dossier as the suite applies it
        self.pii_scan = self.root / "pii_scan.json"  # the personal-data scan of the seed, and what it blocked
        self.acceptance = self.root / "acceptance"
        self.audit = self.acceptance / "audit.json"
        self.releases = self.home / "releases"
        self.runs = self.home / "runs" / spec.name

    def release(self, suite: str, version: str) -> Path:
        return self.releases / suite / version

    def agent_run(self, version: str, agent: str) -> Path:
        return self.runs / version / "agents" / agent

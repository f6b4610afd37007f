"""Write the contract-review suite's files from the authored store, playbooks and tasks: the source tables (CSV),
the policy documents and tasks.jsonl. `python -m evalsuite.domains.contract_review.authoring suites/contract_review`
regenerates what ships; a test checks the shipped files equal a fresh write."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

from evalsuite.core.io import atomic_write, csv_text
from evalsuite.domains.contract_review import schema as s
from evalsuite.domains.contract_review.store import PLAYBOOK_FILES, source_tables
from evalsuite.domains.contract_review.tasks import build_tasks
from evalsuite.tasks.taskfile import write_tasks


def table_csv(name: str, rows: list[dict]) -> str:
    """One source table as CSV text, columns in schema order, NULL as an empty field."""
    return csv_text([c.name for c in s.metadata.tables[name].columns], rows)


def write_suite(out: Path) -> list[Path]:
    """The suite folder's generated files (source/*.csv, policies/*.md, tasks.jsonl); returns their paths."""
    written = []
    for name, rows in source_tables().items():
        path = out / "source" / f"{name}.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, table_csv(name, rows))
        written.append(path)
    (out / "policies").mkdir(parents=True, exist_ok=True)
    for p in PLAYBOOK_FILES:
        written.append(Path(shutil.copyfile(p, out / "policies" / p.name)))
    written.append(write_tasks(out / "tasks.jsonl", build_tasks()))
    return written


if __name__ == "__main__":
    for f in write_suite(Path(sys.argv[1])):
        print(f)

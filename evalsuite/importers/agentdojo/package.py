"""A suite's data files read from the pinned package itself (agentdojo==0.1.35, which `make peers` installs in an
interpreter of its own, never beside evalsuite): asked of that interpreter without importing agentdojo (whose import
pulls in four model vendors' clients), then checked against the pinned hashes like any folder."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

PYTHON_VARIABLE = "EVALSUITE_AGENTDOJO_PYTHON"
DEFAULT_PYTHON = Path(".venv-peers") / "bin" / "python"  # what `make peers` builds in the checkout
VERSION = "0.1.35"
FILES = ("environment.yaml", "injection_vectors.yaml", "LICENSE")
# `wanted` maps each file's path in the wheel to its name in a suite's folder (include/inbox.yaml keeps its folder)
_ASK = """
import importlib.metadata as m, json, sys
d = m.distribution("agentdojo")
wanted = json.loads(sys.argv[1])
found = {wanted[str(f)]: str(d.locate_file(f)) for f in d.files if str(f) in wanted}
print(json.dumps({"version": d.version, "files": found}))
"""


def _in_wheel(suite: str, name: str) -> str:
    if name == "LICENSE":
        return f"agentdojo-{VERSION}.dist-info/licenses/LICENSE"
    return f"agentdojo/data/suites/{suite}/{name}"


def peer_python() -> Path:
    return Path(os.environ.get(PYTHON_VARIABLE) or DEFAULT_PYTHON)


def copy_package_files(suite: str, dest: Path, error: type[Exception], names: tuple[str, ...] = FILES) -> Path:
    """The suite's data files (`names`: environment.yaml, injection_vectors.yaml and LICENSE, and the files the
    environment includes) copied from the installed package to `dest`; refused in one line where there is no such
    interpreter or package."""
    python = peer_python()
    if not python.is_file():
        raise error(f"{python}: no interpreter with agentdojo=={VERSION} (run `make peers`, set {PYTHON_VARIABLE}, "
                    f"or name a folder with the suite's files)")
    wanted = {_in_wheel(suite, n): n for n in names}
    done = subprocess.run([str(python), "-c", _ASK, json.dumps(wanted)], capture_output=True, text=True)
    if done.returncode != 0:
        raise error(f"{python}: agentdojo is not installed there ({done.stderr.strip().splitlines()[-1]})")
    found = json.loads(done.stdout)
    if found["version"] != VERSION or len(found["files"]) != len(names):
        raise error(f"{python}: agentdojo {found['version']} has not the {suite} files of agentdojo=={VERSION}")
    for name, path in found["files"].items():
        (Path(dest) / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, Path(dest) / name)
    return Path(dest)

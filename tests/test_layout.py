"""The library's shape: one job per module, imports pointing downwards only, no Dagster, no cycles."""
from __future__ import annotations

import ast
from pathlib import Path

from docs_support import page, section

from evalsuite.pipeline.code_versions import LIBRARY, imported_modules

# Lower first; a package imports only packages of a lower rank (siblings of one rank stay apart).
# audit (the task-quality checks) runs trials and uses scoring's statistics, and only the pipeline and the CLI
# call it, so it ranks above scoring, beside releases.
RANKS = {"core": 0, "worlds": 1, "grading": 2, "sourcing": 2, "deid": 2, "tasks": 3, "domains": 4, "trials": 5,
         "scoring": 6, "releases": 7, "audit": 7, "pipeline": 8, "site": 8, "importers": 9, "exporters": 9, "cli": 10}


def modules() -> dict[str, Path]:
    out = {}
    for f in sorted(LIBRARY.rglob("*.py")):
        if "__pycache__" not in f.parts:
            out[".".join(f.relative_to(LIBRARY.parent).with_suffix("").parts).removesuffix(".__init__")] = f
    return out


def package(module: str) -> str:
    return module.split(".")[1] if "." in module else ""


def test_every_module_says_its_job_in_a_docstring():
    missing = [m for m, f in modules().items() if not (ast.get_docstring(ast.parse(f.read_text())) or "").strip()]
    assert missing == []


def test_every_package_has_a_rank_and_the_docs_layout_names_it():
    packages = {package(m) for m in modules()} - {""}
    assert packages == set(RANKS)
    layout = section(page("architecture.md"), "## Layout")
    for p in packages:
        assert f"  {p}" in layout, p


def test_the_library_never_imports_dagster():
    for m, f in modules().items():
        for node in ast.walk(ast.parse(f.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not any(n.split(".")[0] == "dagster" for n in names), m


def test_imports_point_downwards_only():
    upward = []
    for m in modules():
        for dep in imported_modules(m):
            a, b = package(m), package(dep)
            if a and b and a != b and RANKS[b] >= RANKS[a]:
                upward.append(f"{m} imports {dep}")
    assert upward == []


def test_worlds_know_no_particular_domain_and_do_not_judge_themselves():
    for m in modules():
        if package(m) == "worlds":
            assert not {d for d in imported_modules(m) if package(d) in ("domains", "grading", "scoring")}, m


def test_no_import_cycle():
    known = modules()  # once: each call walks the whole tree
    graph = {m: {d for d in imported_modules(m) if d in known and d != m} for m in known}
    # a package's __init__ is imported by its own modules by construction; ignore those edges
    graph = {m: {d for d in ds if not m.startswith(d + ".")} for m, ds in graph.items()}
    state: dict[str, int] = {}
    cycles = []

    def visit(m: str, stack: list[str]) -> None:
        state[m] = 1
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                cycles.append(" -> ".join(stack[stack.index(d):] + [d]) if d in stack else f"{m} -> {d}")
            elif d not in state:
                visit(d, [*stack, d])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert cycles == []


def test_no_function_in_the_library_is_over_60_lines():
    """A function a reader can hold in view: past 60 lines (docstring included) it does more than one job."""
    long = [f"{m}.{node.name}: {node.end_lineno - node.lineno + 1} lines" for m, f in modules().items()
            for node in ast.walk(ast.parse(f.read_text()))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno >= 60]
    assert long == []


WIRING = LIBRARY.parent / "evalsuite_dagster"  # the Dagster code location


def _imports(f: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(f.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
    return out


def test_the_library_never_imports_the_code_location():
    for m, f in modules().items():
        assert not {n for n in _imports(f) if n.split(".")[0] == "evalsuite_dagster"}, m


def test_the_code_location_holds_definitions_and_no_harness():
    """Its modules say their job and import the library, Dagster and each other only: the demo, the in-process
    driver and the local Celery workers live in examples/ and tests/."""
    files = [f for f in sorted(WIRING.rglob("*.py")) if "__pycache__" not in f.parts]
    assert files
    for f in files:
        assert (ast.get_docstring(ast.parse(f.read_text())) or "").strip(), f
        roots = {n.split(".")[0] for n in _imports(f)}
        assert not roots & {"dagster_driver", "celery_workers", "demo", "subprocess"}, f


def test_the_run_folders_of_the_readme_example_are_not_committed_by_accident():
    """`evalsuite.run(..., out="runs/ap_demo")` from a checkout writes runs/: git ignores it, as it ignores the home."""
    import subprocess

    root = LIBRARY.parent
    for path in ("runs/ap_demo/traces.jsonl", ".evalsuite/releases/x/manifest.json"):
        assert subprocess.run(["git", "check-ignore", "-q", path], cwd=root).returncode == 0, path

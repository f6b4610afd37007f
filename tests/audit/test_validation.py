import json
import subprocess
import sys

from evalsuite.audit.validation import validate_file


def _write(path, tasks):
    path.write_text("\n".join(json.dumps(t) for t in tasks) + "\n")
    return path


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "evalsuite.cli", *args], capture_output=True, text=True)


def test_valid_task_file_passes_with_exit_0(ap, tmp_path):
    f = _write(tmp_path / "ok.jsonl", [t.model_dump(mode="json") for t in ap.tasks[:3]])
    assert validate_file(f) == []
    r = _cli("task", "validate", str(f))
    assert r.returncode == 0, r.stdout


def test_bad_file_names_file_task_and_field(ap, tmp_path):
    good = ap.tasks[0].model_dump(mode="json")
    bad_clause = json.loads(json.dumps(good))
    bad_clause["task_id"] = "t-clause"
    bad_clause["goal_state"]["assertions"][0]["clause"] = "AP-99"
    bad_tool = json.loads(json.dumps(good))
    bad_tool["task_id"] = "t-tool"
    bad_tool["reference_solution"][0]["tool"] = "wire_money"
    bad_args = json.loads(json.dumps(good))
    bad_args["task_id"] = "t-args"
    bad_args["reference_solution"].append({"tool": "hold_invoice",
                                           "arguments": {"invoice_id": "INV-1", "reason": "vibes"}})
    both = json.loads(json.dumps(good))
    both["task_id"] = "t-role"
    both["role"]["forbidden_tools"].append("hold_invoice")
    missing = json.loads(json.dumps(good))
    missing["task_id"] = "t-missing"
    del missing["trigger"]
    f = _write(tmp_path / "bad.jsonl", [good, bad_clause, bad_tool, bad_args, both, missing])
    r = _cli("task", "validate", str(f))
    assert r.returncode == 2
    lines = r.stdout.strip().splitlines()
    assert any(line.startswith(f"{f}:t-clause:goal_state.assertions.0.clause: 'AP-99' is not a clause")
               for line in lines)
    assert any(line.startswith(f"{f}:t-tool:reference_solution.0.tool: unknown tool 'wire_money'") for line in lines)
    assert any(line.startswith(f"{f}:t-args:reference_solution.") and "reason" in line for line in lines)
    assert any(line.startswith(f"{f}:t-role:role.forbidden_tools:") for line in lines)
    assert any(line.startswith(f"{f}:t-missing:trigger:") for line in lines)
    assert not any(":" + good["task_id"] + ":" in line for line in lines)


def test_schema_command_prints_json_schema():
    r = _cli("task", "schema")
    schema = json.loads(r.stdout)
    assert "goal_state" in schema["properties"] and r.returncode == 0


def test_unreadable_file_is_one_clear_line(tmp_path):
    f = tmp_path / "broken.jsonl"
    f.write_text("{not json\n")
    r = _cli("task", "validate", str(f))
    assert r.returncode == 2 and r.stdout.strip().startswith(f"{f}:1: invalid JSON")

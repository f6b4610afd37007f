"""core.io: writes land whole or not at all, and YAML problems are one line naming file and field."""
import pytest
from pydantic import BaseModel, ConfigDict

from evalsuite.core.io import (
    YamlModelError,
    atomic_write,
    load_yaml_model,
    parse_json,
    parse_yaml,
    staged_dir,
    write_with,
)


class Knob(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    size: int = 1


def test_staged_dir_replaces_the_folder_whole_and_leaves_nothing_beside_it(tmp_path):
    dest = tmp_path / "rel"
    with staged_dir(dest) as tmp:
        (tmp / "old").write_text("1")
    with staged_dir(dest) as tmp:
        (tmp / "new").write_text("2")
    assert [p.name for p in dest.iterdir()] == ["new"] and [p.name for p in tmp_path.iterdir()] == ["rel"]


def test_a_failed_staged_dir_keeps_the_old_folder_and_removes_the_new(tmp_path):
    dest = tmp_path / "rel"
    with staged_dir(dest) as tmp:
        (tmp / "old").write_text("1")
    with pytest.raises(RuntimeError), staged_dir(dest) as tmp:
        (tmp / "half").write_text("2")
        raise RuntimeError("killed mid-write")
    assert [p.name for p in dest.iterdir()] == ["old"] and [p.name for p in tmp_path.iterdir()] == ["rel"]


def test_a_failed_writer_leaves_the_old_file_and_no_temporary(tmp_path):
    path = atomic_write(tmp_path / "a.txt", "old")

    def fail(tmp):
        tmp.write_text("half")
        raise OSError("disk full")

    with pytest.raises(OSError):
        write_with(path, fail)
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["a.txt"]


@pytest.mark.parametrize("text, expected", [
    ("name: [x\n", r"k\.yaml:2: invalid YAML: "),
    ("- name\n", r"k\.yaml: <top level>: expected a mapping, got list"),
    ("name: x\nsize: big\n", r"k\.yaml: size: Input should be a valid integer"),
    ("name: x\nsise: 2\n", r"k\.yaml: sise: unknown key"),
])
def test_yaml_problems_are_one_line_naming_file_and_field(tmp_path, text, expected):
    (tmp_path / "k.yaml").write_text(text)
    with pytest.raises(YamlModelError, match=expected) as exc:
        load_yaml_model(tmp_path / "k.yaml", Knob)
    assert "\n" not in str(exc.value)


def test_a_file_may_not_set_what_the_loader_supplies(tmp_path):
    (tmp_path / "k.yaml").write_text("name: x\n")
    assert load_yaml_model(tmp_path / "k.yaml", Knob, size=3) == Knob(name="x", size=3)
    (tmp_path / "k.yaml").write_text("name: x\nsize: 2\n")
    with pytest.raises(YamlModelError, match=r"k\.yaml: size: unknown key"):
        load_yaml_model(tmp_path / "k.yaml", Knob, size=3)


@pytest.mark.parametrize("text, expected", [
    ("name: x\nsise: 2\nnmae: y\n", "k.yaml: sise: unknown key; nmae: unknown key"),
    ("sise: 2\nsize: big\n", "k.yaml: sise: unknown key; name: Field required; size: Input should be a valid integer"),
    ("".join(f"k{i}: 1\n" for i in range(7)) + "size: q\n",
     "k.yaml: " + "; ".join(f"k{i}: unknown key" for i in range(7)) + " (+2 more: name, size)"),
    ("", "k.yaml: the file holds nothing (empty, or only comments); expected a mapping of keys"),
])
def test_every_problem_of_a_file_is_named_on_its_one_line(tmp_path, text, expected):
    (tmp_path / "k.yaml").write_text(text)
    with pytest.raises(YamlModelError) as exc:
        load_yaml_model(tmp_path / "k.yaml", Knob)
    assert str(exc.value).startswith(str(tmp_path / expected.split(":")[0])) and "\n" not in str(exc.value)
    assert str(exc.value).removeprefix(str(tmp_path) + "/").startswith(expected)


@pytest.mark.parametrize("text, expected", [
    ("name: x\nsize: 2\nname: y\n", r"k\.yaml:3: invalid YAML: duplicate key 'name' \(first on line 1\)"),
    ("name: x\nsize: {a: 1, a: 2}\n", r"k\.yaml:2: invalid YAML: duplicate key 'a' \(first on line 2\)"),
])
def test_a_key_given_twice_is_refused_naming_both_lines(tmp_path, text, expected):
    (tmp_path / "k.yaml").write_text(text)
    with pytest.raises(YamlModelError, match=expected):
        load_yaml_model(tmp_path / "k.yaml", Knob)


def test_a_merge_key_may_still_be_overridden(tmp_path):
    assert parse_yaml("base: &b {p: 1, q: 2}\nuse: {<<: *b, p: 3}\n", "k.yaml")["use"] == {"p": 3, "q": 2}


@pytest.mark.parametrize("text, field", [
    ('{"task_id": "\\ud800"}', "task_id"),
    ('{"a": [1, {"b": "x\\udfffy"}]}', "a.1.b"),
])
def test_json_with_a_lone_surrogate_names_the_field(text, field):
    with pytest.raises(YamlModelError) as exc:
        parse_json(text, "t.json")
    assert str(exc.value).startswith(f"t.json:1: {field}: not Unicode text (a lone UTF-16 surrogate")
    assert parse_json('{"a": "\\ud83d\\ude00"}', "t.json") == {"a": "\U0001f600"}  # a pair is one character

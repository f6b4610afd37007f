"""Task files: what write_tasks writes, read_tasks reads back; a bad record is one line naming file, line and field."""
import json

import pytest

from evalsuite.tasks.taskfile import TaskFileError, read_tasks, task_set_sha256, write_tasks


def test_tasks_round_trip_with_the_same_task_set_hash(ap, tmp_path):
    path = write_tasks(tmp_path / "tasks.jsonl", ap.tasks)
    back = read_tasks(path)
    assert back == ap.tasks and task_set_sha256(back) == task_set_sha256(ap.tasks)
    assert [p.name for p in tmp_path.iterdir()] == ["tasks.jsonl"]


def test_a_bad_record_names_file_line_and_field(ap, tmp_path):
    good = ap.tasks[0].model_dump(mode="json")
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "split": "nope"}) + "\n")
    with pytest.raises(TaskFileError, match=r"tasks\.jsonl:2: split: "):
        read_tasks(path)

"""Task files: RepoEval's JSON-lines schema, read back exactly and checked line by line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repomem_eval.tasks import Task, TaskFileError, read_tasks, resolve_file, write_tasks


def _task(n: int, **changes: object) -> Task:
    fields: dict[str, object] = {
        "prompt": "import os\n# caf\u00e9 \u2028 odd separator\ndef f():",
        "task_id": f"demo/{n}",
        "ground_truth": "    return os.sep",
        "fpath_tuple": ("demo", "pkg", "mod.py"),
        "context_start_lineno": 0,
        "line_no": 3,
    }
    fields.update(changes)
    return Task(**fields)  # type: ignore[arg-type]


def _line(task_id: str = "demo/0", **meta: object) -> str:
    metadata: dict[str, object] = {
        "task_id": task_id,
        "ground_truth": "x",
        "fpath_tuple": ["demo", "a.py"],
        "context_start_lineno": 0,
        "line_no": 1,
    }
    metadata.update(meta)
    return json.dumps({"prompt": "p", "metadata": metadata})


def test_round_trip_keeps_every_field(tmp_path: Path) -> None:
    tasks = [_task(0), _task(1, extra={"kind": "api"}, context_start_lineno=2, line_no=9)]
    path = tmp_path / "sub" / "tasks.jsonl"
    write_tasks(path, tasks)
    assert read_tasks(path) == tasks
    lines = path.read_text(encoding="utf-8").split("\n")
    assert len(lines) == 3 and lines[-1] == ""
    first = json.loads(lines[0])
    assert first["metadata"]["fpath_tuple"] == ["demo", "pkg", "mod.py"]
    assert json.loads(lines[1])["metadata"]["kind"] == "api"


def test_file_path_and_resolution(tmp_path: Path) -> None:
    task = _task(0)
    assert task.repo == "demo" and task.rel_path == "pkg/mod.py"
    assert task.file_path(tmp_path) == tmp_path / "demo" / "pkg" / "mod.py"
    with pytest.raises(TaskFileError, match=r"demo/0.*mod\.py does not exist"):
        resolve_file(task, tmp_path)
    (tmp_path / "demo" / "pkg").mkdir(parents=True)
    (tmp_path / "demo" / "pkg" / "mod.py").write_text("x\n")
    assert resolve_file(task, tmp_path) == tmp_path / "demo" / "pkg" / "mod.py"


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("{not json", "Expecting"),
        ("[1, 2]", "expected a JSON object"),
        (json.dumps({"metadata": {}}), '"prompt" must be a string'),
        (json.dumps({"prompt": "p", "metadata": {"task_id": "demo/1"}}), "lacks ground_truth"),
        (_line("demo/1", line_no=True), "must be integers"),
        (_line("demo/1", context_start_lineno=5, line_no=4), "context_start_lineno <= line_no"),
        (_line("demo/1", fpath_tuple=["demo", "..", "x.py"]), "fpath_tuple"),
        (_line("demo/1", fpath_tuple=["demo"]), "fpath_tuple"),
        (_line("demo1"), "task_id must look like"),
        (_line("other/1"), "does not start with the repository 'demo'"),
        (_line("demo/0"), "repeats line 1"),
    ],
)
def test_malformed_line_is_reported_with_file_and_line_number(
    tmp_path: Path, bad: str, message: str
) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text(_line("demo/0") + "\n\n" + bad + "\n", encoding="utf-8")
    with pytest.raises(TaskFileError) as info:
        read_tasks(path)
    assert str(info.value).startswith(f"{path}:3: ")
    assert message in str(info.value)


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(TaskFileError, match="cannot read task file"):
        read_tasks(tmp_path / "missing.jsonl")
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(b"\xff\xfe\n")
    with pytest.raises(TaskFileError, match="latin1.jsonl"):
        read_tasks(bad)

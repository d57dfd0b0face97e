"""RepoEval task files: JSON lines of ``{"prompt": ..., "metadata": {...}}``.

The published benchmark and the ones ``make-benchmark`` builds share this schema, so one
runner evaluates both. Every line is checked on reading, because a task with a wrong line
number silently leaks the answer into retrieval (DESIGN §2.6).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repomem.errors import RepomemError

_METADATA_KEYS = ("task_id", "ground_truth", "fpath_tuple", "context_start_lineno", "line_no")


class TaskFileError(RepomemError):
    """A task file that cannot be read, or a task whose file is not in the repositories."""


@dataclass(frozen=True)
class Task:
    """One hole: complete ``ground_truth`` at 0-based ``line_no`` of the file ``fpath_tuple``.

    ``prompt`` is the file's lines ``context_start_lineno .. line_no - 1``; ``extra`` keeps any
    further metadata keys so that a file survives a read/write round trip.
    """

    prompt: str
    task_id: str
    ground_truth: str
    fpath_tuple: tuple[str, ...]
    context_start_lineno: int
    line_no: int
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def repo(self) -> str:
        return self.fpath_tuple[0]

    @property
    def rel_path(self) -> str:
        """The task file's path inside its repository, with ``/`` separators."""
        return "/".join(self.fpath_tuple[1:])

    def file_path(self, repos_dir: Path) -> Path:
        """Where the task's file lies: ``REPOS_DIR/<fpath_tuple...>``."""
        return Path(repos_dir, *self.fpath_tuple)

    def to_json(self) -> dict[str, Any]:
        return {
            "prompt": self.prompt,
            "metadata": {
                "task_id": self.task_id,
                "ground_truth": self.ground_truth,
                "fpath_tuple": list(self.fpath_tuple),
                "context_start_lineno": self.context_start_lineno,
                "line_no": self.line_no,
                **self.extra,
            },
        }


def resolve_file(task: Task, repos_dir: Path) -> Path:
    """The task's file under ``repos_dir``; an error names the task and the missing path."""
    path = task.file_path(repos_dir)
    if not path.is_file():
        raise TaskFileError(f"task {task.task_id}: file {path} does not exist")
    return path


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _parse(obj: object) -> Task:
    """A task from one decoded line; ValueError says what is wrong with it."""
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    prompt = obj.get("prompt")
    if not isinstance(prompt, str):
        raise ValueError('"prompt" must be a string')
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        raise ValueError('"metadata" must be an object')
    missing = [k for k in _METADATA_KEYS if k not in meta]
    if missing:
        raise ValueError(f"metadata lacks {', '.join(missing)}")
    task_id, ground_truth = meta["task_id"], meta["ground_truth"]
    fpath, start, line_no = meta["fpath_tuple"], meta["context_start_lineno"], meta["line_no"]
    if not isinstance(task_id, str) or "/" not in task_id.strip("/"):
        raise ValueError(f'task_id must look like "<repo>/<n>", got {task_id!r}')
    if not isinstance(ground_truth, str):
        raise ValueError("ground_truth must be a string")
    if (
        not isinstance(fpath, list)
        or len(fpath) < 2
        or not all(isinstance(p, str) and p and p not in (".", "..") for p in fpath)
        or any("/" in p or "\\" in p or os.path.isabs(p) for p in fpath)
    ):
        raise ValueError(
            "fpath_tuple must list the repository and the path's parts (at least 2 plain names)"
        )
    if not (_is_int(start) and _is_int(line_no) and 0 <= start <= line_no):
        raise ValueError(
            "context_start_lineno and line_no must be integers with "
            f"0 <= context_start_lineno <= line_no, got {start!r} and {line_no!r}"
        )
    if task_id.rsplit("/", 1)[0] != fpath[0]:
        raise ValueError(f"task_id {task_id!r} does not start with the repository {fpath[0]!r}")
    extra = {k: v for k, v in meta.items() if k not in _METADATA_KEYS}
    return Task(prompt, task_id, ground_truth, tuple(fpath), start, line_no, extra)


def read_tasks(path: Path) -> list[Task]:
    """All tasks of a JSON-lines file; blank lines are skipped, anything malformed is an error
    naming the file and the 1-based line number.

    Lines end at ``\n`` only: JSON text may hold U+2028 and similar characters unescaped,
    which ``str.splitlines`` would wrongly treat as line ends.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskFileError(f"cannot read task file {path}: {exc}") from exc
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            task = _parse(json.loads(line))
        except ValueError as exc:  # json.JSONDecodeError is a ValueError
            raise TaskFileError(f"{path}:{number}: {exc}") from exc
        if task.task_id in seen:
            raise TaskFileError(
                f"{path}:{number}: task_id {task.task_id!r} repeats line {seen[task.task_id]}"
            )
        seen[task.task_id] = number
        tasks.append(task)
    return tasks


def write_tasks(path: Path, tasks: Iterable[Task]) -> None:
    """Write tasks as JSON lines, replacing ``path`` only once the whole file is written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8", newline="\n") as f:
        for task in tasks:
            f.write(json.dumps(task.to_json(), ensure_ascii=False) + "\n")
    os.replace(tmp, path)

"""A RepoEval task as the engine completes it: its cursor, what retrieval must not see, the
user's buffer and the oracle's query (DESIGN §2.6).

The repository snapshot holds the answer, so two things hide it, for every method alike:

- the exclusion: a fragment all of whose locations are in the task's file and end after
  ``context_start_lineno`` is never retrieved and is in no fragment's environment;
- the user's buffer: while a task retrieves, the index holds the task's file as the user would
  have it, its lines before the hole, so neither fragments nor code-graph edges (a call on the
  ground-truth line would pull its callee's fragments up) come from code after the hole
  (``task_retrieval.BufferSwap`` shows it and restores the file).

The oracle (RepoCoder's ``gt`` windows) queries with the lines around the hole, ground truth
included: ``[max(context_start_lineno, line_no - w // 2), min(len, line_no + w - w // 2))``.
"""

from __future__ import annotations

from dataclasses import dataclass

from repomem.completion.engine import CompletionTask
from repomem.core import Exclusion
from repomem.index.parsing import split_lines
from repomem_eval.tasks import Task


def user_buffer(text: str, line_no: int) -> str:
    """The file as the user has it with the cursor at the start of 0-based line ``line_no``:
    its text up to that line, byte for byte."""
    if line_no <= 0:
        return ""
    parts = text.split("\n")
    return "\n".join(parts[:line_no]) + "\n" if line_no < len(parts) else text


def oracle_window(text: str, task: Task, window: int) -> str:
    """RepoCoder's ground-truth window of ``window`` lines around the hole."""
    lines = split_lines(text)
    half = window // 2
    start = max(task.context_start_lineno, task.line_no - half)
    end = min(len(lines), task.line_no + window - half)
    return "\n".join(lines[start:end])


def left_context(prompt: str) -> str:
    """The task's prompt with the cursor at the start of the hole's line."""
    return prompt if not prompt or prompt.endswith("\n") else prompt + "\n"


@dataclass(frozen=True)
class TaskView:
    """One task as the engine completes it, with what its retrieval must see."""

    task: Task
    completion: CompletionTask
    buffer: str
    oracle_query: str


def task_view(task: Task, file_text: str, *, mode: str, window: int) -> TaskView:
    """The task at its hole in ``file_text`` (the snapshot's file), excluded as RepoEval says."""
    exclusion = Exclusion(task.rel_path, task.context_start_lineno)
    completion = CompletionTask(
        task.rel_path,
        left_context(task.prompt),
        "",
        mode,
        exclusion,
        first_line=task.context_start_lineno,
    )
    return TaskView(
        task,
        completion,
        user_buffer(file_text, task.line_no),
        oracle_window(file_text, task, window),
    )


def view_order(view: TaskView) -> tuple[str, int, str]:
    """Sort key for a batch: by file, so that a file is swapped back once for all its tasks
    (see ``task_retrieval.BufferSwap``); within a file from the last hole to the first."""
    return (view.task.rel_path, -view.task.line_no, view.task.task_id)

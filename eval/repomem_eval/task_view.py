"""What retrieval may see of a RepoEval task (DESIGN §2.6), and the oracle's query.

The repository snapshot holds the answer, so two things hide it, for every method alike:

- the exclusion: a fragment all of whose locations are in the task's file and end after
  ``context_start_lineno`` is never retrieved and is in no fragment's environment;
- the user's buffer: while a task retrieves, the index holds the task's file as the user would
  have it, its lines before the hole, so neither fragments nor code-graph edges (a call on the
  ground-truth line would pull its callee's fragments up) come from code after the hole.
  The file is restored afterwards. Swapping is lazy: consecutive tasks of the same file only
  change the buffer, and the original comes back when a task of another file retrieves or at
  :meth:`BufferSwap.restore`.

Every incremental update the swap makes removes lines from the end of the file: a buffer
replaces the original or a longer buffer, and the original comes back by removing the file and
adding it again. ``RepoIndex.update_file`` numbers the seeds of its relation update from the
new parse against the old graph, which reads past the graph when a file grows; updates that
only shrink or remove and add a file never do. Tasks of a file should therefore come last line
first (``view_order``), so that consecutive buffers shrink.

The oracle (RepoCoder's ``gt`` windows) queries with the lines around the hole, ground truth
included: ``[max(context_start_lineno, line_no - w // 2), min(len, line_no + w - w // 2))``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from repomem.completion import CompletionTask
from repomem.index import RepoIndex
from repomem.parsing import split_lines
from repomem.scorer import Exclusion, RetrievedFragment
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
    completion = CompletionTask(task.rel_path, left_context(task.prompt), "", mode, exclusion)
    return TaskView(
        task,
        completion,
        user_buffer(file_text, task.line_no),
        oracle_window(file_text, task, window),
    )


class BufferSwap:
    """Gives the engine a per-task retrieval scope that shows the index the user's buffer.

    ``scope`` is the ``retrieval_scope`` hook of ``CompletionEngine.complete_many``; call
    :meth:`restore` once the batch is done (also after an error). A task file the index does not
    hold (skipped as too large, say) is left alone: a buffer of it would be skipped the same way.
    """

    def __init__(self, index: RepoIndex, views: list[TaskView]) -> None:
        self.index = index
        self._views = {id(v.completion): v for v in views}
        self._original: tuple[str, str] | None = None
        self._shown = ""
        self.active: TaskView | None = None

    @contextmanager
    def scope(self, completion: CompletionTask) -> Iterator[TaskView]:
        view = self._views[id(completion)]
        self._show(view)
        self.active = view
        try:
            yield view
        finally:
            self.active = None

    def _show(self, view: TaskView) -> None:
        path = view.task.rel_path
        if self._original is not None and (
            self._original[0] != path or not self._shown.startswith(view.buffer)
        ):
            self.restore()
        if self._original is None:
            original = self.index.file_text(path)
            if original is None:
                return
            self._original = (path, original)
        self.index.update_file(path, view.buffer)
        self._shown = view.buffer

    def restore(self) -> None:
        """Put the file last shown back as the snapshot has it."""
        if self._original is not None:
            path, original = self._original
            self._original = None
            self.index.update_file(path, None)
            self.index.update_file(path, original)


def view_order(view: TaskView) -> tuple[str, int, str]:
    """Sort key for a batch: by file, and within a file from the last hole to the first, so
    that the buffers a :class:`BufferSwap` shows one after another shrink."""
    return (view.task.rel_path, -view.task.line_no, view.task.task_id)


class TaskRetriever:
    """The index as a method's engine sees it: the oracle swaps in the task's ground-truth
    window for the engine's query; every other method passes the query through."""

    def __init__(self, index: RepoIndex, swap: BufferSwap, *, oracle: bool) -> None:
        self.index = index
        self.swap = swap
        self.oracle = oracle

    def retrieve(
        self, query: str, *, k: int, alpha: float, exclusion: Exclusion | None
    ) -> list[RetrievedFragment]:
        if self.oracle:
            if self.swap.active is None:
                raise RuntimeError("the oracle retrieves only inside a task's retrieval scope")
            query = self.swap.active.oracle_query
        return self.index.retrieve(query, k=k, alpha=alpha, exclusion=exclusion)

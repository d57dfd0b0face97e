"""Retrieval for a batch of RepoEval tasks, shared by every method that runs on it.

Showing the index a task's buffer is an incremental update; retrieving then takes milliseconds.
So the buffer is shown only when a retrieval is not known yet, and at that moment the index
also answers every retrieval planned for the task: the first iteration of each method (the
left-context window with the method's ``alpha``, or the oracle's window). With the buffer shown
once per task, the one-shot methods and the first iterations of the iterative ones read from
the cache; only later iterations, whose query depends on a completion, show it again. A cached
result is exactly what the index returns for that query in that state, so no method's results
depend on which ran first.

Time: a retrieval served from the cache is charged what ``RepoIndex.retrieve`` took when it was
computed. The updates that show buffers are the benchmark's cost, not the completion's (an
editor makes them while the user types); :class:`BufferSwap` counts them separately.

The first time a task's buffer is shown, its targets (``context_metrics``: the repository
definitions its ground truth calls) are resolved too, once for every method.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from repomem.completion.engine import CompletionTask
from repomem.context.cards import Card
from repomem.context.definitions import DefinitionHit, find_definitions
from repomem.context.retriever import Retriever
from repomem.context.usages import find_usages
from repomem.core import Exclusion, RetrievedFragment
from repomem.index.occurrences import Occurrence, find_occurrences
from repomem.index.repo import RepoIndex
from repomem_eval.card_check import CardChecker, typescript_oracle
from repomem_eval.context_metrics import Target, definitions_by_name, task_targets, type_names
from repomem_eval.task_view import TaskView


class BufferSwap:
    """Shows the index a task's file as the user's buffer, and puts the snapshot's file back.

    Each swap is one exact ``RepoIndex.update_file``; tasks of one file run together
    (``task_view.view_order``), so the file is put back once per file, not once per task.

    A task file the index does not hold (skipped as too large, say) is left alone: its buffer
    would be skipped the same way.
    """

    def __init__(self, index: RepoIndex) -> None:
        self.index = index
        self._original: tuple[str, str] | None = None
        self.updates = 0
        self.seconds = 0.0

    def show(self, view: TaskView) -> None:
        path = view.task.rel_path
        if self._original is not None and self._original[0] != path:
            self.restore()
        if self._original is None:
            original = self.index.file_text(path)
            if original is None:
                return
            self._original = (path, original)
        self._update(path, view.buffer)

    def restore(self) -> None:
        """Put the file last shown back as the snapshot has it."""
        if self._original is not None:
            path, original = self._original
            self._original = None
            self._update(path, original)

    def _update(self, path: str, text: str | None) -> None:
        started = time.perf_counter()
        self.index.update_file(path, text)
        # The relations by target are rebuilt lazily by the first retrieval after a change; build
        # them here so that this cost is the update's, not whichever method asks first (the
        # rest of what ``warm`` derives, the update has derived already).
        self.index.warm()
        self.seconds += time.perf_counter() - started
        self.updates += 1


@dataclass(frozen=True)
class Lookup:
    """A retrieval a task will ask for, known before anything is generated."""

    query: str
    alpha: float


_Key = tuple[str, str, int, float, Exclusion | None]


class SharedRetrieval:
    """The retrievals of one batch of views, each task's buffer shown as rarely as possible.

    Register the batch with :meth:`add`, give each method's engine :meth:`retriever` and
    :meth:`scope` (its ``retrieval_scope`` hook), and call :meth:`finish` once every method has
    run (also after an error): it restores the index and forgets the batch.
    """

    def __init__(self, index: RepoIndex, k: int, *, typescript: Path | None = None) -> None:
        self.index = index
        self.k = k
        self.swap = BufferSwap(index)
        self.active: TaskView | None = None
        self._views: dict[int, TaskView] = {}
        self._planned: dict[str, tuple[Lookup, ...]] = {}
        self._cache: dict[_Key, tuple[list[RetrievedFragment], float]] = {}
        self._definitions: dict[tuple[str, str, int], tuple[list[DefinitionHit], float]] = {}
        self._occurrences: dict[str, tuple[list[Occurrence], float]] = {}
        self._served: dict[str, list[float]] = {}
        self._targets: dict[str, tuple[Target, ...]] = {}
        # the snapshot's definitions (no buffer is shown yet), for unresolved ``obj.name(``
        self._named = definitions_by_name(index)
        self._types = type_names(index)
        self.checker = CardChecker(
            index,
            self._named,
            typescript_oracle(typescript, index.root)
            if any(pf.language in ("typescript", "tsx") for pf in index.parses().values())
            else None,
        )

    def add(self, view: TaskView, planned: Iterable[Lookup] = ()) -> None:
        self._views[id(view.completion)] = view
        self._planned[view.task.task_id] = tuple(dict.fromkeys(planned))

    @contextmanager
    def scope(self, completion: CompletionTask) -> Iterator[TaskView]:
        view = self._views[id(completion)]
        self.active = view
        try:
            yield view
        finally:
            self.active = None

    def retriever(self, *, oracle: bool) -> MethodRetriever:
        return MethodRetriever(self, oracle=oracle)

    def fetch(
        self, view: TaskView, query: str, *, k: int, alpha: float, exclusion: Exclusion | None
    ) -> list[RetrievedFragment]:
        task_id = view.task.task_id
        key = (task_id, query, k, alpha, exclusion)
        if key not in self._cache:
            self._show(view)
            planned = [
                (task_id, p.query, self.k, p.alpha, exclusion) for p in self._planned[task_id]
            ]
            for q in dict.fromkeys([key, *planned]):
                if q not in self._cache:
                    self._cache[q] = self._retrieve(q)
        found, seconds = self._cache[key]
        self._served.setdefault(task_id, []).append(seconds)
        return found

    def _retrieve(self, key: _Key) -> tuple[list[RetrievedFragment], float]:
        _, query, k, alpha, exclusion = key
        started = time.perf_counter()
        found = self.index.retrieve(query, k=k, alpha=alpha, exclusion=exclusion)
        return found, time.perf_counter() - started

    def definitions(self, view: TaskView, draft: str, window: int) -> list[DefinitionHit]:
        """The definitions the task's context (and a draft) uses, with its buffer shown; the
        time is served to the task like a retrieval's. The context is the whole buffer, as an
        editor has it: the task's prompt may start below the file's top, and the lookup reads
        the file's rows (the enclosing class, the window the graph ranks from)."""
        key = (view.task.task_id, draft, window)
        if key not in self._definitions:
            self._show(view)
            started = time.perf_counter()
            found = find_definitions(
                self.index, view.task.rel_path, view.buffer, draft=draft, window=window
            )
            self._definitions[key] = (found, time.perf_counter() - started)
        found, seconds = self._definitions[key]
        self._served.setdefault(view.task.task_id, []).append(seconds)
        return found

    def occurrences(self, view: TaskView) -> list[Occurrence]:
        """Where the end of the task's left context reappears in other files, with its buffer
        shown; the same for every method, so looked up once per task and served like a
        retrieval."""
        task_id = view.task.task_id
        if task_id not in self._occurrences:
            self._show(view)
            started = time.perf_counter()
            found = find_occurrences(self.index, view.task.rel_path, view.completion.left_context)
            self._occurrences[task_id] = (found, time.perf_counter() - started)
        found, seconds = self._occurrences[task_id]
        self._served.setdefault(task_id, []).append(seconds)
        return found

    def usages(
        self,
        view: TaskView,
        query: str,
        hits: Sequence[DefinitionHit],
        *,
        k: int,
        exclusion: Exclusion | None,
        retrieved: Sequence[RetrievedFragment],
    ) -> list[RetrievedFragment]:
        """Windows calling the best of ``hits``, with the task's buffer shown; the time is
        served to the task like a retrieval's."""
        self._show(view)
        started = time.perf_counter()
        found = find_usages(
            self.index,
            query,
            view.task.rel_path,
            hits,
            k=k,
            exclusion=exclusion,
            retrieved=retrieved,
        )
        self._served.setdefault(view.task.task_id, []).append(time.perf_counter() - started)
        return found

    def targets(self, view: TaskView) -> tuple[Target, ...]:
        """The repository definitions outside the task's file that its ground truth calls,
        resolved at its cursor with its buffer shown."""
        if view.task.task_id not in self._targets:
            self._show(view)
        return self._targets[view.task.task_id]

    def _show(self, view: TaskView) -> None:
        self.swap.show(view)
        task = view.task
        if task.task_id not in self._targets:
            self._targets[task.task_id] = task_targets(
                self.index, task.rel_path, view.buffer, task.ground_truth, self._named, self._types
            )

    def card_verdicts(self, view: TaskView, cards: Sequence[Card]) -> dict[str, int]:
        """How many of ``cards`` (a prompt's, for ``view``) were shown, right and wrong
        (``card_check``)."""
        verdicts = self.checker.verdicts(
            view.task.rel_path, view.buffer, view.task.ground_truth, cards
        )
        return {
            "shown": len(verdicts),
            "right": verdicts.count("right"),
            "wrong": verdicts.count("wrong"),
        }

    def close(self) -> None:
        """Stop the card oracle, if one runs."""
        if self.checker.oracle is not None:
            self.checker.oracle.close()

    def take_served(self, task_id: str) -> float:
        """Retrieval seconds served to the task since the last call (summed over iterations)."""
        return sum(self._served.pop(task_id, ()))

    def finish(self) -> None:
        try:
            self.swap.restore()
        finally:
            self._views.clear()
            self._planned.clear()
            self._cache.clear()
            self._definitions.clear()
            self._occurrences.clear()
            self._served.clear()
            self._targets.clear()


class MethodRetriever(Retriever):
    """The index as one method's engine sees it: the oracle swaps in the task's ground-truth
    window for the engine's query; every other method passes the query through."""

    def __init__(self, shared: SharedRetrieval, *, oracle: bool) -> None:
        self.shared = shared
        self.oracle = oracle

    def retrieve(
        self, query: str, *, k: int, alpha: float, exclusion: Exclusion | None
    ) -> list[RetrievedFragment]:
        view = self.shared.active
        if view is None:
            raise RuntimeError("retrieval for a benchmark task runs inside its retrieval scope")
        if self.oracle:
            query = view.oracle_query
        return self.shared.fetch(view, query, k=k, alpha=alpha, exclusion=exclusion)

    def definitions(
        self, path: str, left_context: str, *, draft: str = "", window: int = 20
    ) -> list[DefinitionHit]:
        view = self.shared.active
        if view is None:
            raise RuntimeError("retrieval for a benchmark task runs inside its retrieval scope")
        return self.shared.definitions(view, draft, window)

    def occurrences(self, path: str, left_context: str) -> list[Occurrence]:
        view = self.shared.active
        if view is None:
            raise RuntimeError("retrieval for a benchmark task runs inside its retrieval scope")
        return self.shared.occurrences(view)

    def usages(
        self,
        query: str,
        path: str,
        hits: Sequence[DefinitionHit],
        *,
        k: int,
        exclusion: Exclusion | None,
        retrieved: Sequence[RetrievedFragment] = (),
    ) -> list[RetrievedFragment]:
        view = self.shared.active
        if view is None:
            raise RuntimeError("retrieval for a benchmark task runs inside its retrieval scope")
        return self.shared.usages(view, query, hits, k=k, exclusion=exclusion, retrieved=retrieved)

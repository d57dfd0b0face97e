"""Retrieve, build the prompt, generate, post-process, and iterate (RepoCoder).

Iteration 1 queries the index with the last ``query_lines`` lines before the cursor. Iteration
t+1 queries with the same number of lines taken from the left context followed by the
previous iteration's completion, so the window keeps its size and the lines the model just
wrote push out the oldest ones; what those lines resemble in the repository is often the
code the model should have seen. FragRel's relation-aware score applies at every retrieval.
The answer is the last iteration's completion; iterating stops early when a completion
leaves the query unchanged (the retrieval would repeat itself).

Ranges the user just edited or looked at (``repomem.context.recent``, where a front end keeps
them: the language server) are searched with the same query and interleaved with what the
index found, after its best fragment, leaving out what that already shows and the cursor's own
code above and around it.

A backend that reads occurrences (the built-in one) also gets, once per task, the places
where the end of the left context reappears in the repository (``repomem.index.occurrences``),
looked up in the same scope as retrieval. Every result carries the backend's confidence, where
it gives one; the caller decides whether to show a completion it is not confident of
(:meth:`CompletionResult.confident`).

Retrieval runs synchronously in the caller's thread: it takes milliseconds, and an index that
the editor keeps updating must not be read from another thread meanwhile.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from repomem.completion.backends.base import Backend, GenerationRequest
from repomem.completion.postprocess import MODES, postprocess
from repomem.completion.prompt import Prompt, build_prompt
from repomem.context.cards import LISTING
from repomem.context.definitions import DefinitionHit
from repomem.context.retriever import Retriever
from repomem.core import Exclusion, Location, RetrievedFragment
from repomem.index.languages import language_for_path
from repomem.settings import Settings

if TYPE_CHECKING:
    from repomem.index.occurrences import Occurrence

# Lifted usages go after this many of BM25's fragments: its best match stays first.
USAGES_AFTER = 1


class RecentSource(Protocol):
    """What the engine needs from the recent edits and views
    (``repomem.context.recent.RecentContext`` is one)."""

    def search(
        self, query: str, excludes: Sequence[Location], limit: int
    ) -> list[RetrievedFragment]: ...


@dataclass(frozen=True)
class CompletionTask:
    """One cursor to complete: a repository-relative path, the text before and after the
    cursor, ``line`` or ``api`` (multi-line) mode, and what retrieval must not see.
    ``first_line``: the file's 0-based line where ``left_context`` starts (an editor sends the
    file from its top; a benchmark's prompt may start below it)."""

    path: str
    left_context: str
    right_context: str = ""
    mode: str = "line"
    exclusion: Exclusion | None = None
    first_line: int = 0


@dataclass(frozen=True)
class Iteration:
    """One retrieve-then-generate round: its query, everything retrieved (best first), the
    prompt (which says which fragments and cards it showed), the backend's raw text, the
    post-processed completion, and seconds spent. ``definitions`` are the definitions found
    for the cursor's names, best first. ``generation_s`` is the wall time of the backend
    call, shared by all completions generated in the same batch. ``confidence``: the backend's,
    from 0 to 1 (None: it gives none)."""

    query: str
    retrieved: tuple[RetrievedFragment, ...]
    prompt: Prompt
    raw: str
    completion: str
    retrieval_s: float
    prompt_s: float
    generation_s: float
    definitions: tuple[DefinitionHit, ...] = ()
    confidence: float | None = None


@dataclass(frozen=True)
class CompletionResult:
    """The completion and how it was produced."""

    text: str
    iterations: tuple[Iteration, ...]

    @property
    def prompt(self) -> Prompt:
        return self.iterations[-1].prompt

    @property
    def confidence(self) -> float | None:
        return self.iterations[-1].confidence if self.iterations else None

    def confident(self, threshold: float) -> bool:
        """Whether to show the completion: it is not empty, and its backend either gives no
        confidence (a model) or one of at least ``threshold``."""
        return bool(self.text) and (self.confidence is None or self.confidence >= threshold)

    @property
    def timings(self) -> dict[str, float]:
        """Seconds per stage, summed over iterations."""
        return {
            stage: sum(getattr(it, f"{stage}_s") for it in self.iterations)
            for stage in ("retrieval", "prompt", "generation")
        }

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready account: per iteration the query, every retrieved fragment with its
        scores and whether the prompt showed it, the prompt's token counts and timings."""
        return {
            "text": self.text,
            "confidence": self.confidence,
            "iterations": [_iteration_dict(it) for it in self.iterations],
            "timings": self.timings,
        }


def _iteration_dict(it: Iteration) -> dict[str, Any]:
    shown = {id(f) for f in it.prompt.fragments}
    shown_cards = {c.key for c in it.prompt.cards}
    return {
        "query": it.query,
        "fragments": [
            {
                "locations": [
                    {"path": loc.path, "start": loc.start, "end": loc.end} for loc in f.locations
                ],
                "s_ind": f.s_ind,
                "s_env": f.s_env,
                "s_rel": f.s_rel,
                "in_prompt": id(f) in shown,
            }
            for f in it.retrieved
        ],
        "definitions": [
            {
                "path": h.card.path,
                "line": h.card.line,
                "name": h.card.name,
                "kind": h.card.kind,
                "named_as": h.name,
                "how": h.how,
                "strength": h.strength,
                "distance": h.distance,
                "in_prompt": h.card.key in shown_cards,
            }
            for h in it.definitions
        ],
        "prompt": it.prompt.text,
        "prompt_tokens": {
            "retrieved": it.prompt.retrieved_tokens,
            "definitions": it.prompt.definitions_tokens,
            "left": it.prompt.left_tokens,
            "right": it.prompt.right_tokens,
            "total": it.prompt.total_tokens,
        },
        "fim": it.prompt.fim,
        "raw": it.raw,
        "completion": it.completion,
        "confidence": it.confidence,
        "timings": {
            "retrieval": it.retrieval_s,
            "prompt": it.prompt_s,
            "generation": it.generation_s,
        },
    }


def _shown_lines(fragment: RetrievedFragment) -> tuple[Location, ...]:
    """Where the lines a fragment shows stand (its locations where that is not known)."""
    if fragment.shown_start is None or len(fragment.locations) != 1:
        return fragment.locations
    count = (fragment.shown or fragment.text).count("\n") + 1
    return (Location(fragment.path, fragment.shown_start, fragment.shown_start + count),)


def query_window(text: str, size: int) -> str:
    """RepoCoder's query window: the last ``size`` lines of ``text``, not counting a cursor
    line holding only indentation."""
    lines = text.splitlines()
    if lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines[-size:])


RetrievalScope = Callable[[CompletionTask], AbstractContextManager[object]]


@dataclass
class _Progress:
    task: CompletionTask
    iterations: list[Iteration] = field(default_factory=list)
    done: bool = False
    occurrences: tuple[Occurrence, ...] | None = None  # looked up at the first iteration


@dataclass(frozen=True)
class _Pending:
    """An iteration retrieved and prompted, waiting for the batch's generation."""

    state: _Progress
    query: str
    retrieved: tuple[RetrievedFragment, ...]
    definitions: tuple[DefinitionHit, ...]
    prompt: Prompt
    retrieval_s: float
    prompt_s: float


class CompletionEngine:
    """Completes cursors with ``retriever`` (None: in-file context only) and ``backend``,
    and with the user's ``recent`` edits and views where a front end keeps them."""

    def __init__(
        self,
        retriever: Retriever | None,
        backend: Backend,
        settings: Settings,
        recent: RecentSource | None = None,
    ) -> None:
        self.retriever = retriever
        self.backend = backend
        self.settings = settings
        self.recent = recent

    async def complete(
        self,
        path: str,
        left_context: str,
        right_context: str = "",
        *,
        mode: str = "line",
        exclusion: Exclusion | None = None,
    ) -> CompletionResult:
        """Complete at the end of ``left_context`` in the file at ``path``."""
        task = CompletionTask(path, left_context, right_context, mode, exclusion)
        return (await self.complete_many([task]))[0]

    async def complete_many(
        self, tasks: Sequence[CompletionTask], *, retrieval_scope: RetrievalScope | None = None
    ) -> list[CompletionResult]:
        """Complete many cursors, one batched backend call per iteration (evaluation).

        ``retrieval_scope(task)``, when given, is entered around each of the task's
        retrievals: the benchmark uses it to show the index the task's file as the user would
        have it (its lines before the cursor) and to restore it afterwards.
        """
        for task in tasks:
            if task.mode not in MODES:
                raise ValueError(f"mode must be one of {MODES}, got {task.mode!r}")
        progress = [_Progress(task) for task in tasks]
        for _ in range(self.settings.completion.iterations):
            pending = [
                p
                for p in (self._prepare(state, retrieval_scope) for state in progress)
                if p is not None
            ]
            if not pending:
                break
            requests = [self._request(p.state, p.retrieved, p.prompt) for p in pending]
            started = time.perf_counter()
            generations = await self.backend.generate_batch(requests)
            generation_s = time.perf_counter() - started
            for p, generated in zip(pending, generations, strict=True):
                raw = generated.text
                task = p.state.task
                completion = postprocess(
                    raw,
                    mode=task.mode,
                    left_context=task.left_context,
                    right_context=task.right_context,
                    language=language_for_path(task.path),
                )
                p.state.iterations.append(
                    Iteration(
                        query=p.query,
                        retrieved=p.retrieved,
                        prompt=p.prompt,
                        raw=raw,
                        completion=completion,
                        retrieval_s=p.retrieval_s,
                        prompt_s=p.prompt_s,
                        generation_s=generation_s,
                        definitions=p.definitions,
                        confidence=generated.confidence,
                    )
                )
        return [
            CompletionResult(s.iterations[-1].completion, tuple(s.iterations)) for s in progress
        ]

    def _prepare(self, state: _Progress, scope: RetrievalScope | None) -> _Pending | None:
        """Retrieve and build the prompt for the task's next iteration; None when done."""
        if state.done:
            return None
        previous = state.iterations[-1] if state.iterations else None
        query = self._query(state.task, previous)
        if previous is not None and query == previous.query:
            state.done = True
            return None
        started = time.perf_counter()
        with scope(state.task) if scope else nullcontext():
            retrieved = self._retrieve(state.task, query)
            definitions = self._definitions(state.task, previous)
            if state.occurrences is None:
                state.occurrences = self._occurrences(state.task)
            retrieved = self._lift_usages(state.task, query, definitions, retrieved)
        retrieved = self._add_recent(state.task, query, retrieved)
        retrieved_at = time.perf_counter()
        prompt = self._prompt(state.task, retrieved, definitions)
        return _Pending(
            state,
            query,
            retrieved,
            definitions,
            prompt,
            retrieval_s=retrieved_at - started,
            prompt_s=time.perf_counter() - retrieved_at,
        )

    def _query(self, task: CompletionTask, previous: Iteration | None) -> str:
        written = previous.completion if previous is not None else ""
        return query_window(task.left_context + written, self.settings.completion.query_lines)

    def _retrieve(self, task: CompletionTask, query: str) -> tuple[RetrievedFragment, ...]:
        if self.retriever is None or not query.strip():
            return ()
        config = self.settings.completion
        exclusion = task.exclusion
        if exclusion is not None and config.buffer_environment:
            exclusion = replace(exclusion, in_environment=True)
        found = self.retriever.retrieve(query, k=config.k, alpha=config.alpha, exclusion=exclusion)
        return tuple(found)

    def _occurrences(self, task: CompletionTask) -> tuple[Occurrence, ...]:
        if self.retriever is None or not self.backend.reads_occurrences:
            return ()
        return tuple(self.retriever.occurrences(task.path, task.left_context))

    def _definitions(
        self, task: CompletionTask, previous: Iteration | None
    ) -> tuple[DefinitionHit, ...]:
        config = self.settings.completion
        if self.retriever is None or config.definitions_share <= 0 or not config.max_definitions:
            return ()
        draft = previous.completion if previous is not None else ""
        found = self.retriever.definitions(
            task.path, task.left_context, draft=draft, window=config.query_lines
        )
        # a listing of declarations alone comes last whatever the cap: it takes the room left
        cards = [h for h in found if h.card.kind != LISTING][: config.max_definitions]
        return (*cards, *(h for h in found if h.card.kind == LISTING))

    def _lift_usages(
        self,
        task: CompletionTask,
        query: str,
        definitions: Sequence[DefinitionHit],
        retrieved: tuple[RetrievedFragment, ...],
    ) -> tuple[RetrievedFragment, ...]:
        """``retrieved`` with windows calling the best definitions lifted in after BM25's
        first ``USAGES_AFTER`` (``repomem.context.usages``)."""
        limit = self.settings.completion.max_usages
        if self.retriever is None or not limit or not definitions or not query.strip():
            return retrieved
        lifted = self.retriever.usages(
            query, task.path, definitions, k=limit, exclusion=task.exclusion, retrieved=retrieved
        )
        return (*retrieved[:USAGES_AFTER], *lifted, *retrieved[USAGES_AFTER:])

    def _add_recent(
        self, task: CompletionTask, query: str, retrieved: tuple[RetrievedFragment, ...]
    ) -> tuple[RetrievedFragment, ...]:
        """``retrieved`` with the recent ranges most like ``query`` interleaved, one after
        each of its fragments from the first on (reciprocal-rank fusion of two lists, the
        index's best first). Left out: the cursor's file above and around the cursor (the
        left context and the cursor's window) and what the fragments the prompt may show
        already show."""
        config = self.settings.completion
        if self.recent is None or not config.recent or not config.max_recent or not query.strip():
            return retrieved
        cursor = task.left_context.count("\n")
        excludes = [Location(task.path, 0, cursor + config.query_lines)]
        excludes += [loc for f in retrieved[: config.max_fragments] for loc in _shown_lines(f)]
        found = self.recent.search(query, excludes, config.max_recent)
        fused: list[RetrievedFragment] = []
        for i in range(max(len(retrieved), len(found))):
            fused += [*retrieved[i : i + 1], *found[i : i + 1]]
        return tuple(fused)

    def _max_tokens(self, task: CompletionTask) -> int:
        config = self.settings.completion
        return config.max_tokens_line if task.mode == "line" else config.max_tokens_api

    def _prompt(
        self,
        task: CompletionTask,
        retrieved: Sequence[RetrievedFragment],
        definitions: Sequence[DefinitionHit],
    ) -> Prompt:
        config = self.settings.completion
        return build_prompt(
            task.left_context,
            retrieved,
            self.backend,
            language=language_for_path(task.path),
            right_context=task.right_context,
            max_tokens=self._max_tokens(task),
            retrieved_budget_fraction=config.retrieved_budget_fraction,
            max_fragments=config.max_fragments,
            cards=[h.card for h in definitions],
            definitions_share=config.definitions_share,
            path=task.path,
            first_line=task.first_line,
            merge_overlaps=config.merge_overlaps,
        )

    def _request(
        self, state: _Progress, retrieved: tuple[RetrievedFragment, ...], prompt: Prompt
    ) -> GenerationRequest:
        task = state.task
        room = self.backend.context_window - prompt.total_tokens
        return GenerationRequest(
            prompt=prompt.text,
            stop=("\n",) if task.mode == "line" else (),
            max_tokens=max(1, min(self._max_tokens(task), room)),
            left_context=task.left_context,
            right_context=task.right_context,
            fragments=retrieved,
            multiline=task.mode == "api",
            occurrences=state.occurrences or (),
            language=language_for_path(task.path),
        )

"""Completions for the editor: debounce, cache, the engine on its own loop, and a fallback.

Each request for a document supersedes the previous one of the same kind: it waits
``debounce_ms`` first (a newer request during the wait wins and this one answers nothing), and
an older request still waiting for the model is cancelled, which closes its model request.
Requests the cache can answer (the same cursor again, or the user typed the first characters of
the last suggestion) are answered at once, without a model call.

A completion the backend is not confident of (the built-in backend's confidence below
``completion.min_confidence``) is answered with no text, so the editor shows nothing.

When the configured backend fails (say, the OpenAI-compatible server is down) the request is
answered by the built-in backend instead; the editor is warned once, and the configured backend
is tried again after ``RETRY_AFTER_S``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from lsp_server.background_loop import BackgroundLoop
from lsp_server.suggestion_cache import Suggestion, SuggestionCache
from lsp_server.workspace_index import WorkspaceIndex
from repomem.completion.backends.base import Backend, BackendError
from repomem.completion.backends.builtin import BuiltinBackend
from repomem.completion.backends.registry import create_backend
from repomem.completion.engine import CompletionEngine, CompletionResult
from repomem.completion.postprocess import cut_at_right_context
from repomem.config import BackendConfig
from repomem.context.recent import EDIT, VIEW, RecentContext
from repomem.core import Exclusion
from repomem.docmem.answer import AskResult
from repomem.docmem.memory import DocMemory
from repomem.docmem.model import TextModel
from repomem.docmem.strategies import ask
from repomem.errors import RepomemError
from repomem.settings import Settings

logger = logging.getLogger(__name__)

#: after a backend failure, completions use the built-in backend for this long
RETRY_AFTER_S = 30.0
#: the kinds of request; one supersedes only earlier ones of its own kind
COMPLETION, INLINE = "completion", "inline"


@dataclass(frozen=True)
class Cursor:
    """Where to complete: the document, its repository-relative path (None outside the
    repository), the text before and after the cursor, and the cursor's 0-based line."""

    uri: str
    path: str | None
    left: str
    right: str
    line: int


@dataclass
class Stats:
    completions: int = 0
    cache_hits: int = 0
    superseded: int = 0
    cancelled: int = 0
    fallbacks: int = 0
    accepted: int = 0


@dataclass
class _Slot:
    generation: int = 0
    task: asyncio.Task[Suggestion] | None = field(default=None, repr=False)


class Completer:
    """Turns cursors into suggestions (see the module doc). ``warn`` shows a warning;
    ``recent``: the user's recent edits and views, a channel of the prompt."""

    def __init__(
        self,
        index: WorkspaceIndex,
        warn: Callable[[str], None],
        recent: RecentContext | None = None,
    ) -> None:
        self.index = index
        self.warn = warn
        self.recent = recent
        self.cache = SuggestionCache()
        self.stats = Stats()
        self.settings = Settings()
        self._loop = BackgroundLoop("repomem-engine")
        self._builtin = BuiltinBackend()
        self._backend: Backend = self._builtin
        self._backend_config: BackendConfig | None = None
        self._slots: dict[tuple[str, str], _Slot] = {}
        self._failed_at: float | None = None
        self._warned = False

    @property
    def backend_name(self) -> str:
        return self._backend.name

    @property
    def falling_back(self) -> bool:
        return self._failed_at is not None

    async def configure(self, settings: Settings) -> None:
        """Use ``settings``; the backend is (re)created only when its settings changed.

        A backend that cannot be created (bad URL, missing model directory) is reported and
        replaced by the built-in one.
        """
        self.settings = settings
        self.cache.clear()
        if settings.backend == self._backend_config:
            return
        old, self._backend_config = self._backend, settings.backend
        self._failed_at, self._warned = None, False
        try:
            self._backend = await self._loop.call(create_backend, settings.backend)
        except RepomemError as exc:
            self._backend = self._builtin
            self._warn_once(f"repomem: cannot use the {settings.backend.backend} backend: {exc}")
        if old is not self._backend and old is not self._builtin:
            await self._loop.run(old.aclose())
        logger.info("completion backend: %s", self._backend.name)

    async def complete(self, cursor: Cursor, kind: str, debounce_ms: int) -> Suggestion | None:
        """A suggestion for ``cursor``; None when a newer request of the same ``kind`` for the
        same document superseded this one."""
        slot = self._slots.setdefault((cursor.uri, kind), _Slot())
        slot.generation += 1
        generation = slot.generation
        if slot.task is not None and not slot.task.done():
            slot.task.cancel()
        epoch = self.index.epoch(cursor.path)
        cached = self.cache.get(cursor.uri, cursor.left, cursor.right, epoch)
        if cached is not None:
            self.stats.cache_hits += 1
            return cached
        with self.index.priority():
            try:
                if debounce_ms:
                    await asyncio.sleep(debounce_ms / 1000)
                if slot.generation != generation:
                    self.stats.superseded += 1
                    return None
                task = slot.task = asyncio.ensure_future(self._generate(cursor))
                suggestion = await task
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    self.stats.cancelled += 1
                    raise  # the editor cancelled this request
                self.stats.superseded += 1
                return None
        self.stats.completions += 1
        self.cache.put(cursor.uri, cursor.left, cursor.right, epoch, suggestion)
        return suggestion

    def forget(self, uri: str) -> None:
        """The document was closed: cancel what is still being computed for it."""
        for kind in (COMPLETION, INLINE):
            slot = self._slots.pop((uri, kind), None)
            if slot is not None and slot.task is not None:
                slot.task.cancel()

    async def _generate(self, cursor: Cursor) -> Suggestion:
        backend = self._backend
        if backend is not self._builtin and not self._resting():
            try:
                result = await self._run(backend, cursor)
            except BackendError as exc:
                self._failed_at = time.monotonic()
                self._warn_once(
                    f"repomem: the {backend.name} backend failed ({exc}); completing with the"
                    f" built-in backend for now"
                )
            else:
                if self._failed_at is not None:
                    logger.info("the %s backend answers again", backend.name)
                    self._failed_at, self._warned = None, False
                return self._suggestion(result, backend.name)
        if backend is not self._builtin:
            self.stats.fallbacks += 1
        return self._suggestion(await self._run(self._builtin, cursor), self._builtin.name)

    def _suggestion(self, result: CompletionResult, backend: str) -> Suggestion:
        suggestion = _suggestion(result, backend)
        if result.confident(self.settings.completion.min_confidence):
            return suggestion
        return replace(suggestion, text="")

    def _resting(self) -> bool:
        return self._failed_at is not None and time.monotonic() - self._failed_at < RETRY_AFTER_S

    def _warn_once(self, message: str) -> None:
        if self._warned:
            logger.debug("%s", message)
            return
        self._warned = True
        self.warn(message)

    async def _run(self, backend: Backend, cursor: Cursor) -> CompletionResult:
        engine = CompletionEngine(self.index, backend, self.settings, self.recent)
        exclusion = None
        if cursor.path is not None:
            exclusion = Exclusion.around(cursor.path, cursor.line, self.settings.completion.window)
        coro = engine.complete(
            cursor.path or cursor.uri, cursor.left, cursor.right, mode="line", exclusion=exclusion
        )
        started = time.perf_counter()
        result = await self._loop.run(coro)
        if logger.isEnabledFor(logging.DEBUG):
            stages = ", ".join(f"{k} {v * 1e3:.1f}" for k, v in result.timings.items())
            logger.debug(
                "completed %s:%d with %s in %.1f ms (%s)",
                cursor.path or cursor.uri,
                cursor.line + 1,
                backend.name,
                (time.perf_counter() - started) * 1e3,
                stages,
            )
        return result

    async def ask(
        self, memory: DocMemory, question: str, strategy: str | None, form: str
    ) -> AskResult:
        """Answer ``question`` from the doc memory with the configured backend's model (the
        built-in backend has none: the best sources come back without an answer)."""
        model = TextModel(self._builtin if self._resting() else self._backend)
        coro = ask(memory, question, model, strategy=strategy, form=form)
        return await self._loop.run(coro)

    async def aclose(self) -> None:
        for slot in self._slots.values():
            if slot.task is not None:
                slot.task.cancel()
        if self._backend is not self._builtin:
            try:
                await asyncio.wait_for(self._loop.run(self._backend.aclose()), 2.0)
            except (TimeoutError, RepomemError, OSError) as exc:
                logger.warning("closing the %s backend: %s", self._backend.name, exc)
        self._loop.stop()


_RECENT = {EDIT: "edited", VIEW: "viewed"}


def _suggestion(result: CompletionResult, backend: str) -> Suggestion:
    sources: list[str] = []
    for fragment in result.prompt.fragments:
        for location in fragment.locations:
            if location.path not in sources:
                sources.append(location.path)
    shown = set(result.prompt.cards)
    definitions = tuple(
        f"{h.card.path}:{h.card.line + 1} {h.card.name} (from `{h.name}`: {h.how})"
        for h in result.iterations[-1].definitions
        if h.card in shown
    )
    recent = tuple(
        f"{f.path}:{f.shown_start + 1}-{f.locations[0].end} ({_RECENT[f.recent]})"
        for f in result.prompt.fragments
        if f.recent and f.shown_start is not None
    )
    before_rest = cut_at_right_context(result.iterations[-1].raw, result.text)
    return Suggestion(
        result.text,
        tuple(sources),
        backend,
        before_rest=before_rest,
        definitions=definitions,
        recent=recent,
    )

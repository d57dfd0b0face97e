"""Completions for the editor: debounce, cache, the engine on its own loop, and a fallback.

Each request for a document supersedes the previous one of the same kind: it waits for the
debounce first (a newer request during the wait wins and this one answers nothing), and an
older request still waiting for the built-in backend is cancelled. Requests the cache can
answer (the same cursor again, or the user typed the first characters of the last suggestion)
are answered at once, without a model call.

A model backend's text is streamed and kept with the document (:mod:`lsp_server.streams`): a
cursor along what the model wrote or is writing (the user typing along it, or accepting it and
going on to the next line) is answered from that stream, with no new request; a stream the
user has typed away from is closed. Without a ``debounceMs`` setting, the debounce before a
model request follows the user's typing rhythm and the model's latency (``Rhythm``).

A completion the backend is not confident of (the built-in backend's confidence below
``completion.min_confidence``) is answered with no text, so the editor shows nothing.

When the configured backend fails (say, the OpenAI-compatible server is down) the request is
answered by the built-in backend instead; the editor is warned once, and the configured backend
is tried again after ``RETRY_AFTER_S``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from lsp_server.background_loop import BackgroundLoop
from lsp_server.streams import Rhythm, Stream, StreamingBackend
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
from repomem.index.languages import language_for_path
from repomem.settings import Settings

logger = logging.getLogger(__name__)

#: after a backend failure, completions use the built-in backend for this long
RETRY_AFTER_S = 30.0
#: the kinds of request; one supersedes only earlier ones of its own kind
COMPLETION, INLINE = "completion", "inline"
#: the debounce where nothing streams: the built-in backend answers in milliseconds, and a
#: model in this process is asked for one line, as before streaming
BUILTIN_DEBOUNCE_MS = 30


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
    model_requests: int = 0  # generations asked of a model backend
    reused: int = 0  # answered from a model request already made (typing along, hot streak)


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
        self._streams: dict[str, Stream] = {}
        self._failed_at: float | None = None
        self._warned = False
        self.rhythm = Rhythm()
        self._last_cursor: tuple[str, str] | None = None

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
        for stream in self._streams.values():
            stream.cancel()
        self._streams.clear()
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

    def debounce_ms(self, setting: int | None) -> int:
        """The wait before asking the backend: the ``debounceMs`` setting where given, else
        30 ms or, for a model server, the user's rhythm (``Rhythm``)."""
        if setting is not None:
            return setting
        if not self._streaming():
            return BUILTIN_DEBOUNCE_MS
        return self.rhythm.debounce_ms()

    async def complete(
        self, cursor: Cursor, kind: str, debounce_ms: int | None
    ) -> Suggestion | None:
        """A suggestion for ``cursor``; None when a newer request of the same ``kind`` for the
        same document superseded this one. ``debounce_ms`` None: the adaptive debounce."""
        slot = self._slots.setdefault((cursor.uri, kind), _Slot())
        slot.generation += 1
        generation = slot.generation
        if slot.task is not None and not slot.task.done():
            slot.task.cancel()
        if self._last_cursor != (cursor.uri, cursor.left):
            self._last_cursor = (cursor.uri, cursor.left)
            self.rhythm.keystroke()
        epoch = self.index.epoch(cursor.path)
        cached = self.cache.get(cursor.uri, cursor.left, cursor.right, epoch)
        if cached is not None:
            self.stats.cache_hits += 1
            return cached
        wait = self.debounce_ms(debounce_ms) / 1000
        with self.index.schedule.priority():
            try:
                stream = self._streams.get(cursor.uri) if self._streaming() else None
                if stream is not None:
                    started = time.monotonic()
                    task = slot.task = asyncio.ensure_future(self._along(stream, cursor, epoch))
                    along = await task
                    if along is not None:
                        self.stats.reused += 1
                        self.cache.put(cursor.uri, cursor.left, cursor.right, epoch, along)
                        return along
                    wait -= time.monotonic() - started  # no key came while it waited
                if wait > 0:
                    await asyncio.sleep(wait)
                if slot.generation != generation:
                    self.stats.superseded += 1
                    return None
                task = slot.task = asyncio.ensure_future(self._generate(cursor, epoch))
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

    async def _along(self, stream: Stream, cursor: Cursor, epoch: int) -> Suggestion | None:
        """The answer from ``stream`` for a cursor along it, once the model has written the
        cursor's line (None where the cursor is not along it, or the stream is not worth
        waiting on, ``Stream.patience``: the stream is then closed, before the request that
        replaces it, for a server that runs one request at a time)."""
        stream.waiters += 1
        try:
            while True:
                match = stream.match(cursor.uri, cursor.left, cursor.right, epoch)
                patience = None
                if match is not None and not match.ready:
                    patience = stream.patience(cursor.left, self.rhythm.latency_s)
                if match is None or (patience is not None and patience <= 0):
                    if self._streams.get(cursor.uri) is stream:
                        del self._streams[cursor.uri]
                    stream.cancel()
                    return None
                if match.ready:
                    return stream.suggestion(match.text, cursor.left, cursor.right)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stream.changed(), patience)
        finally:
            stream.waiters -= 1
            if stream.waiters == 0:
                stream.orphaned()

    def forget(self, uri: str) -> None:
        """The document was closed: cancel what is still being computed for it."""
        for kind in (COMPLETION, INLINE):
            slot = self._slots.pop((uri, kind), None)
            if slot is not None and slot.task is not None:
                slot.task.cancel()
        stream = self._streams.pop(uri, None)
        if stream is not None:
            stream.cancel()

    def _asked(self) -> None:
        self.stats.model_requests += 1

    def _streaming(self) -> bool:
        """Whether requests go to a backend that streams (a model server): not a built-in one
        (whose confidence the streaming would lose) nor a model in this process (whose first
        line would wait for all the lines past it)."""
        return self._backend.streams and not self._resting()

    async def _streamed(self, cursor: Cursor, epoch: int) -> CompletionResult:
        """The model backend's completion, streamed into a new stream for the document (which
        replaces its last one) so that later cursors along it are answered from it."""
        stream = Stream(cursor.uri, cursor.left, cursor.right, epoch, asyncio.get_running_loop())
        stream.language = language_for_path(cursor.path or cursor.uri)
        old = self._streams.get(cursor.uri)
        if old is not None:
            old.cancel()
        self._streams[cursor.uri] = stream
        backend = StreamingBackend(
            self._backend, stream, self.settings.completion.max_tokens_line, self._asked
        )
        started = time.monotonic()
        try:
            result = await self._run(backend, cursor)
        except BaseException:
            stream.orphaned()
            raise
        self.rhythm.measured(time.monotonic() - started)
        stream.template = replace(self._suggestion(result, backend.name), text="")
        return result

    async def _generate(self, cursor: Cursor, epoch: int) -> Suggestion:
        backend = self._backend
        if backend is not self._builtin and not self._resting():
            try:
                if self._streaming():
                    result = await self._streamed(cursor, epoch)
                else:
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
            exclusion = Exclusion.around(
                cursor.path, cursor.line, self.settings.completion.query_lines
            )
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
        for stream in self._streams.values():
            stream.cancel()
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
    shown = {c.key for c in result.prompt.cards}
    definitions = tuple(
        f"{h.card.path}:{h.card.line + 1} {h.card.name} (from `{h.name}`: {h.how})"
        for h in result.iterations[-1].definitions
        if h.card.key in shown
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

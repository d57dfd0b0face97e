"""A model's streamed text, kept so that typing along it or accepting it costs no new request.

A model request for the editor asks for more than the cursor's line (``STREAK_LINES`` lines
past it) and is streamed: the editor gets the first line as soon as the model has written it,
while the rest keeps arriving. The text stays with the document as a :class:`Stream`. A later
cursor in the same document whose text before it is the stream's plus a prefix of what the
model wrote, with the same text after it, is answered from the stream: the rest of the model's
line from there. That covers the user typing along a suggestion still being written (the
request goes on; no new one) and the lines the model wrote past an accepted suggestion (after
Enter, the next line is there at once: a "hot streak"). Where the user has typed further than
the model has written, the answer waits for the model to get there; where the user typed
something else, the stream is dropped and a new request is made. A stream that has written
nothing yet is waited on only briefly (``Stream.patience``): a wait on one that then does not
fit costs the pause a second model latency.

:class:`Rhythm` sets how long a request waits for the user's next keystroke before a model
is asked (the debounce) from the user's own typing intervals and the model's measured
latency.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from lsp_server.suggestion_cache import Suggestion
from repomem.completion.backends.base import Backend, BackendError, GenerationRequest
from repomem.completion.postprocess import cut_at_right_context, postprocess

#: lines a model may write past the cursor's line, kept for after the suggestion is accepted
STREAK_LINES = 4
#: how long a stream that no request waits on may go on before its first line
ORPHAN_S = 1.0
#: the adaptive debounce's bounds, in ms (tabby-agent's)
MIN_DEBOUNCE_MS, MAX_DEBOUNCE_MS = 100, 400
#: the wait is this many typical keystroke intervals, less half the model's latency
INTERVALS_PER_WAIT = 2.0
#: intervals longer than this are pauses, not the typing rhythm
PAUSE_S = 1.0
#: the interval assumed before the user has typed enough to measure one (5 keys/s)
DEFAULT_INTERVAL_S = 0.2
#: a stream that has written nothing is waited on while at most this much was typed since its
#: cursor (about two tokens: more, and its first tokens are unlikely to be what was typed)
UNWRITTEN_TYPED_CHARS = 8
#: ... and while it is younger than this many of the model's measured latencies (later, its
#: server is queueing it: a new request is answered sooner)
UNWRITTEN_LATENCIES = 1.5


@dataclass(frozen=True)
class Match:
    """How a cursor stands to a stream: ``text``, the rest of the model's line from the
    cursor, once ``ready``; ``ready`` False: the model has not written that far yet."""

    text: str
    ready: bool


class Stream:
    """The text one model request for a document has streamed so far, and for which cursor.

    Written by the reader on the completion loop's thread, read on the server's: ``text`` is
    replaced whole (one assignment) and each change wakes the server's waiters.
    """

    def __init__(
        self, uri: str, left: str, right: str, epoch: int, loop: asyncio.AbstractEventLoop
    ) -> None:
        self.uri, self.left, self.right, self.epoch = uri, left, right, epoch
        self.text = ""
        self.done = False
        self.error: str | None = None
        self.template: Suggestion | None = None  # the first answer: sources, cards, backend
        self.language: str | None = None
        self.waiters = 0
        self.started = False  # the model was asked (retrieval may be cancelled before)
        self.asked_at: float | None = None  # when (``time.monotonic``)
        self.generation = 0  # which of the engine's iterations is writing
        self._loop = loop
        self._changed = asyncio.Event()
        self._cancel: asyncio.Handle | None = None
        self._stop: list[asyncio.Task[None]] = []  # the reader, on the completion loop

    # -- from the reader's thread ---------------------------------------------------------
    def extend(self, generation: int, text: str) -> None:
        if generation == self.generation:
            self.text = text
            self._on_server_loop(self._wake)

    def finish(self, generation: int, error: str | None = None) -> None:
        if generation == self.generation:
            self.error = error
            self.done = True
            self._on_server_loop(self._wake)

    def orphaned_from_thread(self) -> None:
        self._on_server_loop(self.orphaned)

    def _on_server_loop(self, callback: Callable[[], None]) -> None:
        if not self._loop.is_closed():  # at shutdown the server's loop may be gone first
            self._loop.call_soon_threadsafe(callback)

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    # -- on the server's loop -------------------------------------------------------------
    def match(self, uri: str, left: str, right: str, epoch: int) -> Match | None:
        """The cursor's place in this stream, or None where it is not along it."""
        if not self.started or uri != self.uri or epoch != self.epoch or right != self.right:
            return None
        if self.error is not None and "\n" not in self.text:
            return None  # failed or closed before its first line: nothing to offer
        if len(left) < len(self.left) or not left.startswith(self.left):
            return None
        typed = left[len(self.left) :]
        text = self.text
        if not text.startswith(typed):
            if not self.done and typed.startswith(text):
                return Match("", ready=False)
            return None
        rest = text[len(typed) :]
        end = rest.find("\n")
        if end >= 0:
            return Match(rest[:end], ready=True)
        if self.done and not rest:
            return None  # past what the model wrote: a new request
        return Match(rest, ready=self.done)

    def patience(self, left: str, latency_s: float | None) -> float | None:
        """How much longer a cursor the stream has not reached yet (its match not ready) may
        wait on it, in seconds; None: until the model writes. A stream that has written text
        along the cursor's is waited on. One that has written nothing could still write what
        was typed, but less likely the more was typed, and a server that runs one request at a
        time may be queueing it: it is waited on only while at most ``UNWRITTEN_TYPED_CHARS``
        were typed and it is younger than ``UNWRITTEN_LATENCIES`` of the model's latency."""
        if self.text:
            return None
        if len(left) - len(self.left) > UNWRITTEN_TYPED_CHARS:
            return 0.0
        if latency_s is None or self.asked_at is None:
            return None
        return self.asked_at + UNWRITTEN_LATENCIES * latency_s - time.monotonic()

    async def changed(self) -> None:
        await self._changed.wait()

    def suggestion(self, line: str, left: str, right: str) -> Suggestion:
        """The model's ``line`` offered at a cursor along the stream, post-processed as the
        engine does the first line (cut where it re-types the rest of the cursor's line)."""
        text = postprocess(
            line, mode="line", left_context=left, right_context=right, language=self.language
        )
        template = self.template or Suggestion("")
        return replace(
            template, text=text, cached=True, before_rest=cut_at_right_context(line, text)
        )

    def cancel(self) -> None:
        """Close the model request (if it still runs)."""
        for task in self._stop:
            task.get_loop().call_soon_threadsafe(task.cancel)

    def orphaned(self) -> None:
        """No request waits on the stream any more: if it has not written its first line
        within ``ORPHAN_S``, nobody asked for it (the editor cancelled) and it is closed."""
        if self._cancel is None and not self.done and "\n" not in self.text:
            self._cancel = self._loop.call_later(ORPHAN_S, self._cancel_if_orphaned)

    def _cancel_if_orphaned(self) -> None:
        self._cancel = None
        if self.waiters == 0 and not self.done and "\n" not in self.text:
            self.cancel()


class StreamingBackend(Backend):
    """``backend`` as the engine sees it, for one editor request: each generation is streamed
    into ``stream`` past the cursor's line (``STREAK_LINES`` more), and the engine gets the
    text up to the first line break as soon as it is there."""

    def __init__(
        self, backend: Backend, stream: Stream, line_tokens: int, asked: Callable[[], None]
    ) -> None:
        self.inner = backend
        self.asked = asked  # called for each request the model gets
        self.name = backend.name
        self.context_window = backend.context_window
        self.fim_style = backend.fim_style
        self.stream = stream
        self.line_tokens = line_tokens

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    async def complete_batch(self, requests: Sequence[GenerationRequest]) -> list[str]:
        (request,) = requests  # the editor completes one cursor
        stream = self.stream
        for task in stream._stop:  # an earlier iteration's generation: superseded
            task.cancel()
        stream.generation += 1
        stream.text, stream.done, stream.error, stream.started = "", False, None, True
        stream.asked_at = time.monotonic()
        if stream.template is None:  # until the engine's answer says which the prompt showed
            stream.template = Suggestion("", _sources(request), self.name)
        first_line: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        tokens = request.max_tokens
        if tokens >= self.line_tokens:  # not cut short by the context window's room
            tokens = self.line_tokens * (1 + STREAK_LINES)
        longer = replace(request, stop=(), max_tokens=tokens)
        self.asked()
        reader = asyncio.ensure_future(self._read(stream.generation, longer, first_line))
        stream._stop = [reader]
        try:
            return [await asyncio.shield(first_line)]
        except asyncio.CancelledError:
            self.stream.orphaned_from_thread()
            raise

    async def _read(
        self, generation: int, request: GenerationRequest, first_line: asyncio.Future[str]
    ) -> None:
        stream = self.stream
        text = ""
        pieces = 0
        error: str | None = None
        try:
            async with contextlib.aclosing(self.inner.stream(request)) as pieces_of:
                async for piece in pieces_of:
                    text += piece
                    pieces += 1  # a server sends a chunk per token, empty ones included
                    if "\n" not in text and pieces >= self.line_tokens:
                        break  # a first line as long as a line may be, as one-line requests
                    if text.count("\n") > STREAK_LINES:
                        text = text[: _nth_break(text, STREAK_LINES + 1)]
                        break
                    stream.extend(generation, text)
                    if "\n" in text and not first_line.done():
                        first_line.set_result(text[: text.index("\n")])
        except BackendError as exc:
            error = str(exc)
            if not first_line.done():
                first_line.set_exception(exc)
                error = None  # the engine reports it
            text = text[: text.rfind("\n") + 1]  # the unfinished line may be cut anywhere
        except asyncio.CancelledError:
            text = text[: text.rfind("\n") + 1]
            if not first_line.done():
                first_line.cancel()
            stream.extend(generation, text)
            stream.finish(generation, "cancelled")
            raise
        stream.extend(generation, text)
        stream.finish(generation, error)
        if not first_line.done():
            first_line.set_result(text.split("\n", 1)[0])


def _sources(request: GenerationRequest) -> tuple[str, ...]:
    paths = (loc.path for fragment in request.fragments for loc in fragment.locations)
    return tuple(dict.fromkeys(paths))


def _nth_break(text: str, n: int) -> int:
    """The index just past the ``n``-th line break of ``text``."""
    at = -1
    for _ in range(n):
        at = text.index("\n", at + 1)
    return at + 1


class Rhythm:
    """How long to wait for the user's next keystroke before asking a model: about
    ``INTERVALS_PER_WAIT`` of the user's usual intervals between keystrokes, less half the
    model's latency (a slow model is worth asking sooner), within
    ``MIN_DEBOUNCE_MS``–``MAX_DEBOUNCE_MS`` (tabby-agent's rule and bounds)."""

    def __init__(self) -> None:
        self._intervals: deque[float] = deque(maxlen=30)
        self._last: float | None = None
        self.latency_s: float | None = None

    def keystroke(self, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        if self._last is not None and 0 < now - self._last < PAUSE_S:
            self._intervals.append(now - self._last)
        self._last = now

    def measured(self, latency_s: float) -> None:
        """A model request took ``latency_s`` to its first line."""
        previous = self.latency_s
        self.latency_s = latency_s if previous is None else 0.7 * previous + 0.3 * latency_s

    @property
    def interval_s(self) -> float:
        if len(self._intervals) < 5:
            return DEFAULT_INTERVAL_S
        return statistics.median(self._intervals)

    def debounce_ms(self) -> int:
        wait = INTERVALS_PER_WAIT * self.interval_s - (self.latency_s or 0.0) / 2
        return round(min(MAX_DEBOUNCE_MS, max(MIN_DEBOUNCE_MS, wait * 1000)))

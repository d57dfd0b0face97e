"""Streaming from an OpenAI-compatible server, the streams the language server keeps, and the
adaptive debounce: parsing of server-sent events (malformed chunks, a server dropping the
connection), which cursors a stream answers, and the debounce's bounds."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator, Sequence

import pytest

from lsp_server.streams import (
    MAX_DEBOUNCE_MS,
    MIN_DEBOUNCE_MS,
    UNWRITTEN_TYPED_CHARS,
    Rhythm,
    Stream,
    StreamingBackend,
)
from repomem.completion.backends.base import Backend, BackendError, GenerationRequest
from repomem.completion.backends.openai import OpenAIBackend, sse_text
from repomem.fim import FIM_TEMPLATES
from repomem_eval.model_server import ModelServer

URL = "http://127.0.0.1:1/v1"
CORPUS = "def run(opts):\n    client = make_client(opts.host, opts.port)\n    return client\n"
PROMPT = "def run(opts):\n    client = make_"


def test_sse_lines_give_text_nothing_or_the_end() -> None:
    assert sse_text('data: {"choices": [{"text": "ab"}]}', URL) == "ab"
    assert sse_text('data:{"choices":[{"text":"c","finish_reason":null}]}', URL) == "c"
    assert sse_text('data: {"choices": [{"finish_reason": "stop"}]}', URL) == ""
    assert sse_text('data: {"choices": [{"text": null, "finish_reason": "stop"}]}', URL) == ""
    for ignored in ("", ": keep-alive", "event: completion", "id: 7", "retry: 100"):
        assert sse_text(ignored, URL) == ""
    assert sse_text("data: [DONE]", URL) is None


@pytest.mark.parametrize(
    "line",
    ["data: {not json", 'data: {"choices": []}', 'data: {"text": "a"}', 'data: {"choices": [1]}'],
)
def test_a_chunk_that_is_not_a_completion_is_a_clear_error(line: str) -> None:
    with pytest.raises(BackendError, match="stream chunk that is not an OpenAI completion"):
        sse_text(line, URL)


def test_an_error_event_says_what_the_server_said() -> None:
    line = 'data: {"error": {"message": "context too long"}}'
    with pytest.raises(BackendError, match="ended the stream with an error: context too long"):
        sse_text(line, URL)


@pytest.fixture
def model() -> Iterator[ModelServer]:
    server = ModelServer([CORPUS], latency_s=0.05, chars_per_s=4000).start()
    yield server
    server.stop()


async def _pieces(backend: OpenAIBackend, request: GenerationRequest) -> list[str]:
    pieces: list[str] = []
    try:
        async for piece in backend.stream(request):
            pieces.append(piece)
    finally:
        await backend.aclose()
    return pieces


def test_openai_streams_the_completion_in_pieces(model: ModelServer) -> None:
    backend = OpenAIBackend(model.url, max_retries=0)
    pieces = asyncio.run(_pieces(backend, GenerationRequest(PROMPT, max_tokens=64)))
    assert len(pieces) > 3
    assert "".join(pieces) == CORPUS[len(PROMPT) :]
    stopped = asyncio.run(_pieces(backend, GenerationRequest(PROMPT, stop=("\n",))))
    assert "".join(stopped) == "client(opts.host, opts.port)"


def test_a_dropped_stream_is_an_error_after_the_pieces_it_gave(model: ModelServer) -> None:
    model.drop_after = 8
    backend = OpenAIBackend(model.url, max_retries=0)
    pieces: list[str] = []

    async def read() -> None:
        async for piece in backend.stream(GenerationRequest(PROMPT, max_tokens=64)):
            pieces.append(piece)

    with pytest.raises(BackendError, match=r"closed the stream before its end, after 8 char"):
        asyncio.run(read())
    assert "".join(pieces) == "client(o"


def test_a_stream_the_upstream_drops_is_dropped_by_the_relay(model: ModelServer) -> None:
    """llama-cpp-python's server ends a running stream when a newer request comes: the relay
    ends its own stream the same way, after what it relayed, and counts it."""
    model.drop_after = 8
    relay = ModelServer(latency_s=0, upstream=model.url).start()
    try:
        backend = OpenAIBackend(relay.url, max_retries=0)
        pieces: list[str] = []

        async def read() -> None:
            async for piece in backend.stream(GenerationRequest(PROMPT, max_tokens=64)):
                pieces.append(piece)

        with pytest.raises(BackendError, match="closed the stream before its end"):
            asyncio.run(read())
        assert "".join(pieces) == "client(o"
        assert relay.upstream_dropped == 1
        assert relay.log == [(PROMPT, "client(o")]
    finally:
        relay.stop()


def test_a_malformed_chunk_mid_stream_is_an_error(model: ModelServer) -> None:
    model.malformed = True
    backend = OpenAIBackend(model.url, max_retries=0)
    with pytest.raises(BackendError, match="not an OpenAI completion: '{not json'"):
        asyncio.run(_pieces(backend, GenerationRequest(PROMPT, max_tokens=64)))


def test_the_model_server_tells_its_own_suggestions_from_stale_ones() -> None:
    server = ModelServer([CORPUS])
    text = server.continuation(PROMPT, 64, ("\n",))
    server.log.append((PROMPT, text))
    assert server.wrote(PROMPT, "client(opts.host")
    assert server.wrote(PROMPT + "client(", "opts.host, opts.port)")
    # the same words shown one key later, or after other text: not what the model wrote there
    assert not server.wrote(PROMPT + "c", "client(opts.host")
    assert not server.wrote(PROMPT.replace("run", "go"), "client(opts.host")


@pytest.mark.parametrize("style", sorted(FIM_TEMPLATES))
def test_the_model_server_reads_a_fill_in_the_middle_prompts_prefix(style: str) -> None:
    """A model with infilling gets the text before the cursor as the prompt's prefix, the
    prompt ending with the middle sentinel: continued and checked from that prefix."""
    opener, between, closer = FIM_TEMPLATES[style]
    prompt = f"{opener}{PROMPT}{between}\n    return client\n{closer}"
    server = ModelServer([CORPUS])
    text = server.continuation(prompt, 64, ("\n",))
    assert text == "client(opts.host, opts.port)"
    server.log.append((prompt, text))
    assert server.wrote(PROMPT + "client(", "opts.host, opts.port)")
    assert not server.wrote(PROMPT + "c", "client(opts.host")


# -- which cursors a stream answers ---------------------------------------------------------


def _stream(text: str, *, done: bool = False, error: str | None = None) -> Stream:
    loop = asyncio.new_event_loop()
    stream = Stream("file:///a.py", "x = f(", "\n", 0, loop)
    stream.started, stream.text, stream.done, stream.error = True, text, done, error
    return stream


def test_a_stream_answers_cursors_along_what_the_model_wrote() -> None:
    stream = _stream("a, b)\n    return x\n")
    assert stream.match("file:///a.py", "x = f(", "\n", 0).text == "a, b)"  # type: ignore[union-attr]
    along = stream.match("file:///a.py", "x = f(a, ", "\n", 0)
    assert along is not None and along.ready and along.text == "b)"
    # the next line, once the first is accepted and Enter pressed: the hot streak
    streak = stream.match("file:///a.py", "x = f(a, b)\n    ", "\n", 0)
    assert streak is not None and streak.ready and streak.text == "return x"


def test_a_stream_does_not_answer_another_text() -> None:
    stream = _stream("a, b)\n    return x\n", done=True)
    assert stream.match("file:///a.py", "x = f(c", "\n", 0) is None  # typed away from it
    assert stream.match("file:///a.py", "x = f(a", "\nmore", 0) is None  # text after changed
    assert stream.match("file:///a.py", "x = f(a", "\n", 1) is None  # the index changed
    assert stream.match("file:///b.py", "x = f(a", "\n", 0) is None
    assert stream.match("file:///a.py", "y = f(a", "\n", 0) is None
    # past everything the model wrote: a new request, not an empty answer
    assert stream.match("file:///a.py", "x = f(a, b)\n    return x\n", "\n", 0) is None


def test_a_stream_makes_a_cursor_wait_until_the_model_gets_there() -> None:
    stream = _stream("a, ")
    waiting = stream.match("file:///a.py", "x = f(a, b", "\n", 0)
    assert waiting is not None and not waiting.ready
    unfinished = stream.match("file:///a.py", "x = f(a", "\n", 0)
    assert unfinished is not None and not unfinished.ready  # its line is not written yet
    assert stream.match("file:///a.py", "x = f(z", "\n", 0) is None


def test_a_stream_that_has_written_nothing_is_waited_on_only_briefly() -> None:
    stream = _stream("")
    stream.asked_at = time.monotonic()
    assert stream.patience("x = f(a, b", None) is None  # no latency measured yet: until it writes
    assert 0.4 < stream.patience("x = f(a, b", 0.3) <= 1.5 * 0.3  # type: ignore[operator]
    typed_past = "x = f(" + "a" * (UNWRITTEN_TYPED_CHARS + 1)
    assert stream.patience(typed_past, None) == 0  # more typed than it may still write
    stream.asked_at -= 1.0
    assert stream.patience("x = f(a", 0.3) < 0  # type: ignore[operator]  # late: queued
    stream.text = "a, "  # written along the cursor's text: waited on until it gets there
    assert stream.patience("x = f(a, b, c, d, e, f", 0.3) is None


def test_a_stream_that_failed_before_its_first_line_answers_nothing() -> None:
    assert _stream("", done=True, error="dropped").match("file:///a.py", "x = f(", "\n", 0) is None
    kept = _stream("a, b)\n", done=True, error="dropped")
    assert kept.match("file:///a.py", "x = f(a", "\n", 0).text == ", b)"  # type: ignore[union-attr]


class _Endless(Backend):
    """A model that writes one line without end, one piece at a time."""

    closed = False

    async def complete_batch(self, requests: Sequence[GenerationRequest]) -> list[str]:
        raise AssertionError("streamed, not completed")

    def count_tokens(self, text: str) -> int:
        return len(text)

    async def stream(self, request: GenerationRequest) -> AsyncIterator[str]:
        try:
            for _ in range(10_000):
                yield "ab"
                await asyncio.sleep(0)
        finally:
            _Endless.closed = True


def test_a_line_without_end_is_answered_at_a_lines_length_and_its_request_closed() -> None:
    async def scenario() -> tuple[str, Stream]:
        stream = Stream("file:///a.py", "x = ", "\n", 0, asyncio.get_running_loop())
        backend = StreamingBackend(_Endless(), stream, line_tokens=8, asked=lambda: None)
        (first,) = await backend.complete_batch([GenerationRequest("x = ", max_tokens=8)])
        await asyncio.sleep(0.05)
        return first, stream

    first, stream = asyncio.run(scenario())
    assert first == "ab" * 8  # 8 pieces (tokens), not the four more lines' worth
    assert stream.done and _Endless.closed


# -- the adaptive debounce -------------------------------------------------------------------


def _typed(rhythm: Rhythm, intervals: list[float]) -> None:
    now = 100.0
    rhythm.keystroke(now)
    for interval in intervals:
        now += interval
        rhythm.keystroke(now)


def test_the_debounce_follows_the_typing_rhythm_within_bounds() -> None:
    fast, slow, steady = Rhythm(), Rhythm(), Rhythm()
    _typed(fast, [0.04] * 20)
    _typed(slow, [0.35] * 20)
    _typed(steady, [0.15] * 20)
    assert fast.debounce_ms() == MIN_DEBOUNCE_MS == 100
    assert slow.debounce_ms() == MAX_DEBOUNCE_MS == 400
    assert steady.debounce_ms() == 300
    steady.measured(0.3)  # a slower model is asked sooner: half its latency less
    assert steady.debounce_ms() == 150


def test_pauses_are_not_the_rhythm() -> None:
    rhythm = Rhythm()
    _typed(rhythm, [0.1, 5.0, 0.1, 3.0, 0.1, 0.1, 0.1, 2.0, 0.1])
    assert rhythm.interval_s == pytest.approx(0.1)

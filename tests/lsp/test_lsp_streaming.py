"""The language server against a streaming OpenAI-compatible server with a fixed latency
(``repomem_eval.model_server``), over stdio: typing along a request still streaming costs no new
request, the lines written past an accepted suggestion come with no new request (the hot
streak), typing away from a stream gets a suggestion for the new text, a pause is not made to
wait on a stream that has written nothing and is unlikely to fit (typed past it, or late), and
a server dropping the stream before its first line falls back to the built-in backend with a
clear warning."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_lsp
from lspclient import SERVER, complete_inline, insert, open_doc, start, status
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from repos import make_repo

from repomem_eval.model_server import ModelServer

FULL = """\
def run(opts):
    client = make_client(opts.host, opts.port, timeout=opts.timeout)
    client.connect(retries=3)
    return client
"""
START = "def run(opts):\n    \n"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient) -> AsyncIterator[None]:
    lsp_client.preset = "visual-studio-code"  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def model() -> Iterator[ModelServer]:
    server = ModelServer([FULL], latency_s=0.6, chars_per_s=400).start()
    yield server
    server.stop()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"pkg/app.py": START, "pkg/util.py": "X = 1\n"})


def settings(model: ModelServer) -> dict[str, object]:
    backend = {"backend": "openai", "url": model.url, "max_retries": 0, "timeout": 10}
    return {"repomem": {"backend": backend, "debounceMs": 0, "completion": {"iterations": 1}}}


def texts(answer: types.InlineCompletionList) -> list[str]:
    return [item.insert_text for item in answer.items]  # type: ignore[misc]


@pytest.mark.asyncio
async def test_typing_along_a_stream_and_the_hot_streak_ask_nothing_more(
    client: LanguageClient, repo: Path, model: ModelServer
):
    await start(client, repo, settings(model))
    uri = open_doc(client, repo / "pkg/app.py")
    insert(client, uri, 2, 1, 4, "client = make_")
    first = asyncio.ensure_future(complete_inline(client, uri, 1, 18))
    while model.requests == 0:  # asked; the model has not answered yet: the user types on
        await asyncio.sleep(0.01)
    insert(client, uri, 3, 1, 18, "cli")
    along = await complete_inline(client, uri, 1, 21)
    assert texts(along) == ["ent(opts.host, opts.port, timeout=opts.timeout)"]
    assert texts(await first) == []  # superseded, answered with nothing
    assert model.requests == 1

    # accepted, then Enter: the model's next line is there at once
    insert(client, uri, 4, 1, 21, "ent(opts.host, opts.port, timeout=opts.timeout)\n    ")
    streak = await complete_inline(client, uri, 2, 4)
    assert texts(streak) == ["client.connect(retries=3)"]
    insert(client, uri, 5, 2, 4, "client.con")  # typing along it
    assert texts(await complete_inline(client, uri, 2, 14)) == ["nect(retries=3)"]
    assert model.requests == 1
    state = await status(client)
    # the last answer was kept from the one before: the suggestion cache serves it
    assert (state.modelRequests, state.reused, state.cacheHits) == (1, 2, 1)


@pytest.mark.asyncio
async def test_typing_away_from_a_stream_asks_again_for_the_new_text(
    client: LanguageClient, repo: Path, model: ModelServer
):
    await start(client, repo, settings(model))
    uri = open_doc(client, repo / "pkg/app.py")
    insert(client, uri, 2, 1, 4, "client = make_")
    assert texts(await complete_inline(client, uri, 1, 18))[0].startswith("client(opts.host")
    insert(client, uri, 3, 1, 18, "server")  # not what the model wrote
    answer = await complete_inline(client, uri, 1, 24)
    assert texts(answer) == ["pass"]  # the model's answer for this text (it has no better)
    assert model.requests == 2


async def _asked(model: ModelServer, requests: int) -> None:
    while model.requests < requests:
        await asyncio.sleep(0.01)


@pytest.mark.asyncio
async def test_typing_past_a_stream_that_wrote_nothing_asks_again_at_once(
    client: LanguageClient, repo: Path, model: ModelServer
):
    model.latency_s = 1.0
    await start(client, repo, settings(model))
    uri = open_doc(client, repo / "pkg/app.py")
    insert(client, uri, 2, 1, 4, "client = make_")
    first = asyncio.ensure_future(complete_inline(client, uri, 1, 18))
    await _asked(model, 1)  # the model has written nothing yet: the user types on, a word
    insert(client, uri, 3, 1, 18, "server_conn")  # past what its first tokens would be
    started = time.monotonic()
    answer = await complete_inline(client, uri, 1, 29)
    # one latency, not the first stream's rest and then another
    assert time.monotonic() - started < 1.7
    assert texts(answer) == ["pass"] and model.requests == 2
    assert texts(await first) == []


@pytest.mark.asyncio
async def test_a_pause_does_not_wait_on_a_stream_slower_than_the_model_was(
    client: LanguageClient, repo: Path, model: ModelServer
):
    model.latency_s = 0.3
    await start(client, repo, settings(model))
    util = open_doc(client, repo / "pkg/util.py")
    await complete_inline(client, util, 1, 0)  # the model's latency, measured
    uri = open_doc(client, repo / "pkg/app.py")
    insert(client, uri, 2, 1, 4, "client = make_")
    model.latency_s = 5.0  # this request is queued (a server running one at a time)
    late = asyncio.ensure_future(complete_inline(client, uri, 1, 18))
    await _asked(model, 2)
    model.latency_s = 0.3
    insert(client, uri, 3, 1, 18, "c")  # what the late stream will write, but 5 s from now
    started = time.monotonic()
    answer = await complete_inline(client, uri, 1, 19)
    assert time.monotonic() - started < 2.5
    assert texts(answer) == ["lient(opts.host, opts.port, timeout=opts.timeout)"]
    assert model.requests == 3
    assert texts(await late) == []


@pytest.mark.asyncio
async def test_a_stream_dropped_before_its_first_line_falls_back_and_says_so(
    client: LanguageClient, repo: Path, model: ModelServer
):
    model.drop_after = 4
    await start(client, repo, settings(model))
    uri = open_doc(client, repo / "pkg/app.py")
    insert(client, uri, 2, 1, 4, "client = make_")
    await complete_inline(client, uri, 1, 18)  # answered by the built-in backend, if at all
    (warning,) = [m.message for m in client.messages if m.type == types.MessageType.Warning]
    assert "closed the stream before its end" in warning and "built-in backend" in warning
    state = await status(client)
    assert state.fallback and state.fallbacks == 1

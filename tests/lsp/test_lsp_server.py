"""End-to-end tests of ``repomem serve``: the real server as a subprocess over stdio, driven
by pytest-lsp with the capabilities of VS Code and of Neovim."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lspclient import (
    READY_TIMEOUT_S,
    SERVER,
    complete,
    complete_inline,
    initialize,
    insert,
    open_doc,
    start,
    status,
    warnings_shown,
)
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from repos import free_port, make_repo, run_repomem

PRESETS = ["visual-studio-code", "neovim"]

CONFIG_PY = """\
from pkg.util import helper


def connect(opts):
    client = make_client(opts.host, opts.port, timeout=opts.timeout)
    return client
"""
# at "pkg/my app.py": its URI is percent-encoded; tests type at the end of its blank line 1
APP_PY = "def run(opts):\n    \n    return opts\n"
EXPECTED = "opts.host, opts.port, timeout=opts.timeout)"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), params=PRESETS)
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest) -> AsyncIterator[None]:
    lsp_client.preset = request.param  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


# The server as an editor may start it: from a directory holding packages named like repomem's
# (a checkout of another version, say), which `python -m` would import instead of the installed.
SERVER_ELSEWHERE = [
    sys.executable,
    "-P",
    "-c",
    """\
import os, sys, tempfile
from repomem.cli import main
with tempfile.TemporaryDirectory() as here:
    for name in ("repomem", "lsp_server"):
        os.mkdir(os.path.join(here, name))
        with open(os.path.join(here, name, "__init__.py"), "w") as f:
            f.write(f"raise ImportError('{name} from the working directory')")
    os.chdir(here)
    code = main(["serve"])
sys.exit(code)
""",
]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_ELSEWHERE))
async def client_elsewhere(lsp_client: LanguageClient) -> AsyncIterator[None]:
    lsp_client.preset = "visual-studio-code"  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    # one place to copy from: shown at any confidence (a Python line like this is right about
    # a fifth of the time, below the default threshold)
    files = {
        "pkg/config.py": CONFIG_PY,
        "pkg/my app.py": APP_PY,
        ".repomem.toml": "[completion]\nmin_confidence = 0\n",
    }
    return make_repo(tmp_path / "repo", files)


async def retrieve_paths(client: LanguageClient, query: str) -> list[str]:
    found = await client.protocol.send_request_async("repomem/retrieve", {"query": query, "k": 3})
    return [fragment.locations[0].path for fragment in found.fragments if query in fragment.text]


@pytest.mark.asyncio
async def test_indexes_in_the_background_and_reports_progress(client: LanguageClient, repo: Path):
    ready = await start(client, repo)
    assert ready.files == 8  # the fixture's Python files
    assert ready.fragments > 0 and ready.root == str(repo.resolve())
    ((token, reports),) = client.progress_reports.items()
    assert isinstance(reports[0], types.WorkDoneProgressBegin)
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    assert "8 files" in reports[-1].message and "doc memory: no docs" in reports[-1].message
    assert any("indexed 8 files" in m.message for m in client.log_messages)
    state = await status(client)
    assert (state.state, state.files, state.backend) == ("ready", 8, "builtin")
    assert (repo / ".repomem").is_dir()  # persisted for the next start

    # new index settings: indexed again, in the background
    again = client.protocol.wait_for_notification("repomem/indexReady")
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"repomem": {"index": {"ignorePatterns": ["pkg/sub/"]}}}
        )
    )
    ready = await asyncio.wait_for(asyncio.wrap_future(again), READY_TIMEOUT_S)
    assert ready.files == 6
    assert len(client.progress_reports) == 2
    assert await retrieve_paths(client, "def compute") == []

    # the editor's "rebuild" command: nothing changed, so every file is reused
    again = client.protocol.wait_for_notification("repomem/indexReady")
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="repomem.reindex")
    )
    ready = await asyncio.wait_for(asyncio.wrap_future(again), READY_TIMEOUT_S)
    assert (ready.files, ready.reused, ready.reparsed) == (6, 6, 0)


@pytest.mark.asyncio
async def test_indexing_does_not_depend_on_the_working_directory(
    client_elsewhere: LanguageClient, repo: Path
):
    try:
        ready = await start(client_elsewhere, repo)
    except TimeoutError:
        pytest.fail(f"no index; the server said: {warnings_shown(client_elsewhere)}")
    assert ready.files == 8
    assert warnings_shown(client_elsewhere) == []


@pytest.mark.asyncio
async def test_the_server_and_the_cli_index_a_repository_alike(client: LanguageClient, repo: Path):
    (repo / ".repomem.toml").write_text('[index]\nignore_patterns = ["pkg/sub/"]\n')
    (repo / "pyproject.toml").write_text("[tool.repomem.index]\nstride = 5\n")
    ready = await start(client, repo)
    assert ready.files == 6
    settings = (await status(client)).settings.index
    assert (settings.ignore_patterns, settings.stride) == (["pkg/sub/"], 5)
    # the CLI finds the server's saved index built with its own settings: nothing to re-parse
    out = run_repomem("index", repo, "--json", "--no-progress")
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert (summary["reused"], summary["reparsed"], summary["skipped"]["ignored"]) == (6, 0, 2)


@pytest.mark.asyncio
async def test_completion_items_come_from_the_repository(client: LanguageClient, repo: Path):
    # every completion shown, however short its match (the mid-word one below is a guess)
    (repo / ".repomem.toml").write_text("[completion]\nmin_confidence = 0\n")
    await start(client, repo, {"repomem": {"debounceMs": 0}})
    uri = open_doc(client, repo / "pkg/my app.py")
    insert(client, uri, 2, 1, 4, "client = make_client(")

    result = await complete(client, uri, 1, 25)
    (item,) = result.items
    assert item.text_edit.new_text == "client = make_client(" + EXPECTED
    assert item.text_edit.range == types.Range(types.Position(1, 4), types.Position(1, 25))
    assert "pkg/config.py" in item.detail
    assert "pkg/config.py" in item.documentation.value
    assert item.command.arguments[0]["sources"][0] == "pkg/config.py"

    inline = await complete_inline(client, uri, 1, 25)
    (ghost,) = inline.items
    assert ghost.insert_text == EXPECTED
    assert ghost.range == types.Range(types.Position(1, 25), types.Position(1, 25))
    assert "pkg/config.py" in ghost.command.title

    # in the middle of a word, the item replaces the word
    insert(client, uri, 3, 2, 0, "    other = make_cl\n")
    (item,) = (await complete(client, uri, 2, 19)).items
    assert item.text_edit.range.start == types.Position(2, 12)
    # copied from the file's own line 1, which outweighs the other file's
    assert item.text_edit.new_text == "make_client("


@pytest.mark.asyncio
async def test_no_item_when_the_builtin_backend_is_not_confident(
    client: LanguageClient, repo: Path
):
    # the completion above comes with confidence 0.22 (raw 0.375): shown at 0, not at 0.5
    (repo / ".repomem.toml").write_text("[completion]\nmin_confidence = 0.5\n")
    await start(client, repo, {"repomem": {"debounceMs": 0}})
    uri = open_doc(client, repo / "pkg/my app.py")
    insert(client, uri, 2, 1, 4, "client = make_client(")
    assert list((await complete(client, uri, 1, 25)).items) == []
    assert list((await complete_inline(client, uri, 1, 25)).items) == []


def replace_text(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


@pytest.mark.asyncio
async def test_mid_line_items_keep_the_rest_of_the_line_whole(client: LanguageClient, repo: Path):
    await start(client, repo, {"repomem": {"debounceMs": 0}})
    uri = open_doc(client, repo / "pkg/my app.py")
    line = "    client = make_client("
    at = types.Position(1, len(line))
    cases = [
        # the suggestion would leave `...timeout)opts)`: nothing is offered
        ("opts)", None, None),
        # only a closing bracket follows: the suggestion goes in before it
        (")", EXPECTED.removesuffix(")"), at),
        # the suggestion re-types the rest: it goes in without that end
        (", timeout=opts.timeout)", "opts.host, opts.port", at),
    ]
    for version, (rest, inserted, end) in enumerate(cases, start=2):
        replace_text(client, uri, version, f"def run(opts):\n{line}{rest}\n")
        (item,) = (await complete(client, uri, 1, len(line))).items or [None]
        inline = await complete_inline(client, uri, 1, len(line))
        if inserted is None:
            assert item is None and not inline.items, rest
            continue
        assert item.text_edit.new_text == "client = make_client(" + inserted, rest
        assert item.text_edit.range == types.Range(types.Position(1, 4), end)
        (ghost,) = inline.items
        assert (ghost.insert_text, ghost.range) == (inserted, types.Range(at, end))

    # in the middle of a word the suggestion that goes on from it replaces the rest of the line
    replace_text(client, uri, 5, "def run(opts):\n    client = make_client\n")
    (item,) = (await complete(client, uri, 1, 20)).items
    eol = types.Position(1, len("    client = make_client"))
    assert item.text_edit.new_text == "make_client(" + EXPECTED
    assert item.text_edit.range == types.Range(types.Position(1, 13), eol)
    (ghost,) = (await complete_inline(client, uri, 1, 20)).items
    assert ghost.insert_text == "ient(" + EXPECTED
    assert ghost.range == types.Range(types.Position(1, 20), eol)


@pytest.mark.asyncio
async def test_secret_files_are_not_completed_nor_retrieved(client: LanguageClient, tmp_path: Path):
    secrets = {".env": "API_KEY=sk-live-4242\nAPI_KEY=\n", "pkg/secrets.py": "TOKEN = None\n"}
    repo = make_repo(tmp_path / "repo", {**secrets, "pkg/my app.py": APP_PY})
    await start(client, repo, {"repomem": {"debounceMs": 0}})
    env = open_doc(client, repo / ".env")
    assert not (await complete(client, env, 1, 8)).items
    assert not (await complete_inline(client, env, 1, 8)).items

    # an open secret file's text is not indexed: the edit to util.py, made after it, is
    secret = open_doc(client, repo / "pkg/secrets.py")
    insert(client, secret, 2, 1, 0, "def rotate():\n    token = vault_rotation('hunter2-key')\n")
    util = open_doc(client, repo / "pkg/util.py")
    insert(client, util, 2, 0, 0, "def marker_after_the_secret():\n    pass\n")
    assert await poll(lambda: retrieve_paths(client, "marker_after_the_secret")) == ["pkg/util.py"]
    assert await retrieve_paths(client, "vault_rotation") == []

    uri = open_doc(client, repo / "pkg/my app.py")
    insert(client, uri, 2, 1, 4, "token = vault_rotation(")
    items = (await complete(client, uri, 1, 27)).items
    assert all("hunter2" not in item.text_edit.new_text for item in items)
    assert (await status(client)).files == 7  # the fixture package and "my app.py"


@pytest.mark.asyncio
async def test_prompts_show_the_cards_of_the_names_the_code_uses(
    client: LanguageClient, repo: Path
):
    text = "from pkg.util import helper\n\n\ndef run(opts):\n    value = helper("
    (repo / "pkg/uses.py").write_text(text)
    # every completion shown: the copy from this small fixture is a weak one
    (repo / ".repomem.toml").write_text("[completion]\nmin_confidence = 0\n")
    await start(client, repo, {"repomem": {"debounceMs": 0}})
    uri = open_doc(client, repo / "pkg/uses.py")
    (item,) = (await complete(client, uri, 4, 19)).items
    # the fixture's `func_N(value)` windows, copied with the cursor's names
    assert item.text_edit.new_text == "value = helper(opts)"
    documentation = item.documentation.value
    assert "Definitions shown:" in documentation
    assert "pkg/util.py:4 helper (from `helper`" in documentation


@pytest.mark.asyncio
async def test_typing_along_a_suggestion_is_served_from_the_cache(
    client: LanguageClient, repo: Path
):
    await start(client, repo, {"repomem": {"debounceMs": 0}})
    uri = open_doc(client, repo / "pkg/my app.py")
    insert(client, uri, 2, 1, 4, "client = make_client(")
    (first,) = (await complete(client, uri, 1, 25)).items
    assert first.text_edit.new_text.endswith(EXPECTED)
    before = await status(client)

    insert(client, uri, 3, 1, 25, "opts.h")
    (item,) = (await complete(client, uri, 1, 35)).items
    assert item.text_edit.new_text == EXPECTED.removeprefix("opts.")  # replaces the word "h"
    assert item.text_edit.range.start == types.Position(1, 34)
    assert "(cached)" in item.detail
    after = await status(client)
    assert after.cacheHits == before.cacheHits + 1
    assert after.completions == before.completions


@pytest.mark.asyncio
async def test_a_newer_request_supersedes_a_waiting_one(client: LanguageClient, repo: Path):
    await start(client, repo, {"repomem": {"debounceMs": 400}})
    uri = open_doc(client, repo / "pkg/my app.py")
    insert(client, uri, 2, 1, 4, "client = make_client(")
    older = asyncio.ensure_future(complete(client, uri, 1, 20))
    await asyncio.sleep(0.05)
    newer = await complete(client, uri, 1, 25)
    assert not (await older).items
    assert newer.items[0].text_edit.new_text.endswith(EXPECTED)
    assert (await status(client)).superseded == 1


@pytest.mark.asyncio
async def test_edits_and_file_changes_become_retrievable(client: LanguageClient, repo: Path):
    await start(client, repo, {"repomem": {"debounceMs": 0}})
    util = repo / "pkg/util.py"
    util_uri = open_doc(client, util)
    assert await retrieve_paths(client, "freshly_added_helper") == []

    lines = len(util.read_text().splitlines())
    new_code = (
        "\n\ndef freshly_added_helper(opts):\n"
        "    payload = load_json(opts, strict=True)\n"
        "    return payload\n"
    )
    insert(client, util_uri, 2, lines, 0, new_code)
    assert await poll(lambda: retrieve_paths(client, "freshly_added_helper")) == ["pkg/util.py"]

    uri = open_doc(client, repo / "pkg/my app.py")
    insert(client, uri, 2, 1, 4, "payload = load_json(")
    (item,) = (await complete(client, uri, 1, 24)).items
    assert item.text_edit.new_text == "payload = load_json(opts, strict=True)"
    assert "pkg/util.py" in item.detail

    # closing without saving: the file on disk is the truth again
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(util_uri))
    )
    assert await poll(lambda: retrieve_paths(client, "freshly_added_helper"), want=[]) == []

    # a file created on disk, announced by the editor's file watcher
    (repo / "pkg/extra.py").write_text("def brand_new_on_disk(x):\n    return x\n")
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(
                    uri=(repo / "pkg/extra.py").as_uri(), type=types.FileChangeType.Created
                )
            ]
        )
    )
    assert await poll(lambda: retrieve_paths(client, "brand_new_on_disk")) == ["pkg/extra.py"]


async def poll(fetch: Any, want: Any = None, timeout: float = 10.0) -> Any:
    """``fetch()`` until it gives a non-empty result (or ``want``), or ``timeout`` passes."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = await fetch()
        if (value == want) if want is not None else value:
            return value
        if loop.time() > deadline:
            return value
        await asyncio.sleep(0.05)


@pytest.mark.asyncio
async def test_broken_settings_warn_and_fall_back_to_defaults(client: LanguageClient, repo: Path):
    options = {
        "repomem": {
            "completion": {"k": 0, "alpha": 0.25},
            "debounceMs": "soon",
            "colour": "blue",
        }
    }
    await start(client, repo, options)
    (message,) = warnings_shown(client)
    for key in ("completion.k", "debounceMs", "repomem.colour"):
        assert key in message
    settings = (await status(client)).settings
    completion = settings.completion
    assert (completion.k, completion.alpha, settings.debounceMs) == (10, 0.25, None)

    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"repomem": {"backend": {"timeout": -1}, "completion": {"iterations": 1}}}
        )
    )
    assert await poll(lambda: _settings_iterations(client), want=1) == 1
    assert "backend.timeout" in warnings_shown(client)[-1]
    uri = open_doc(client, repo / "pkg/my app.py")
    insert(client, uri, 2, 1, 4, "client = make_client(")
    (item,) = (await complete(client, uri, 1, 25)).items
    assert item.text_edit.new_text.endswith(EXPECTED)

    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"repomem": {"enable": False}})
    )
    assert await poll(lambda: _enabled(client), want=False) is False
    params = types.CompletionParams(types.TextDocumentIdentifier(uri), types.Position(1, 25))
    assert await client.text_document_completion_async(params) is None


async def _enabled(client: LanguageClient) -> bool:
    return (await status(client)).settings.enable


async def _settings_iterations(client: LanguageClient) -> int:
    return (await status(client)).settings.completion.iterations


@pytest.mark.asyncio
async def test_model_server_down_answers_with_builtin_and_warns_once(
    client: LanguageClient, repo: Path
):
    url = f"http://127.0.0.1:{free_port()}/v1"
    # every completion shown: the copy from this small fixture is a weak one
    (repo / ".repomem.toml").write_text("[completion]\nmin_confidence = 0\n")
    backend = {"backend": "openai", "url": url, "max_retries": 0, "timeout": 5}
    await start(client, repo, {"repomem": {"backend": backend, "debounceMs": 0}})
    assert (await status(client)).backend == "openai"
    uri = open_doc(client, repo / "pkg/my app.py")
    insert(client, uri, 2, 1, 4, "client = make_client(")
    for line in (1, 2):
        if line == 2:
            insert(client, uri, 3, 2, 0, "    other = make_client(\n")
        (item,) = (await complete(client, uri, line, 25 if line == 1 else 24)).items
        assert item.text_edit.new_text.endswith(EXPECTED)
        assert "builtin" in item.detail
    (warning,) = warnings_shown(client)
    assert "openai" in warning and url in warning
    state = await status(client)
    assert state.fallback and state.fallbacks == 2


@dataclass
class SlowModelServer:
    """An OpenAI-compatible server on loopback that never finishes a completion."""

    started: asyncio.Event = field(default_factory=asyncio.Event)
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    server: asyncio.Server | None = None

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.decode().split("\r\n"):
            if line.lower().startswith("content-length:"):
                length = int(line.split(":")[1])
        await reader.readexactly(length)
        if b"/tokenize" in head.split(b"\r\n")[0]:
            writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
            await writer.drain()
            writer.close()
            return
        self.started.set()
        await reader.read()  # returns when the client closes the connection
        self.closed.set()
        writer.close()

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/v1"


@pytest.mark.asyncio
async def test_cancel_request_closes_the_model_request(client: LanguageClient, repo: Path):
    model = SlowModelServer()
    model.server = await asyncio.start_server(model.handle, "127.0.0.1", 0)
    async with model.server:
        backend = {"backend": "openai", "url": model.url, "max_retries": 0, "timeout": 60}
        await start(client, repo, {"repomem": {"backend": backend, "debounceMs": 0}})
        uri = open_doc(client, repo / "pkg/my app.py")
        insert(client, uri, 2, 1, 4, "client = make_client(")
        pending = asyncio.ensure_future(
            client.protocol.send_request_async(
                types.TEXT_DOCUMENT_COMPLETION,
                types.CompletionParams(types.TextDocumentIdentifier(uri), types.Position(1, 25)),
                msg_id="slow-completion",
            )
        )
        await asyncio.wait_for(model.started.wait(), 10)
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="slow-completion"))
        with pytest.raises(JsonRpcException) as error:
            await asyncio.wait_for(pending, 5)
        assert error.value.code == types.LSPErrorCodes.RequestCancelled
        await asyncio.wait_for(model.closed.wait(), 5)
        state = await status(client)
        assert state.cancelled == 1 and state.state == "ready"


_NO_PARAMS = object()


async def raw_request(
    client: LanguageClient, msg_id: str, method: str, params: Any = _NO_PARAMS
) -> Any:
    """Send hand-written JSON-RPC (bypassing the client's types) and await the answer;
    without ``params`` the message has no params member at all."""
    answer: Future[Any] = Future()
    client.protocol._request_futures[msg_id] = answer
    message = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not _NO_PARAMS:
        message["params"] = params
    body = json.dumps(message)
    write_raw(client, body.encode())
    return await asyncio.wait_for(asyncio.wrap_future(answer), 5)


def write_raw(client: LanguageClient, body: bytes) -> None:
    stdin = client._server.stdin  # type: ignore[union-attr]
    stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)


@pytest.mark.asyncio
async def test_malformed_messages_get_errors_and_the_server_carries_on(
    client: LanguageClient, repo: Path
):
    await start(client, repo)
    invalid_params = types.ErrorCodes.InvalidParams
    with pytest.raises(JsonRpcException) as error:
        await raw_request(client, "bad-1", "textDocument/completion", {"textDocument": 5})
    assert error.value.code == invalid_params
    with pytest.raises(JsonRpcException) as error:
        await raw_request(client, "bad-2", "repomem/retrieve", {"query": 3})
    assert error.value.code == invalid_params
    with pytest.raises(JsonRpcException) as error:
        await raw_request(client, "bad-3", "repomem/noSuchMethod", {})
    assert error.value.code == types.ErrorCodes.MethodNotFound
    with pytest.raises(JsonRpcException) as error:  # a notification sent as a request
        await raw_request(client, "bad-5", "$/cancelRequest", {"id": "never-sent"})
    assert error.value.code == types.ErrorCodes.InvalidRequest
    uri = open_doc(client, repo / "pkg/my app.py")
    outside = {"textDocument": {"uri": uri}, "position": {"line": 99, "character": 0}}
    with pytest.raises(JsonRpcException) as error:
        await raw_request(client, "bad-4", "textDocument/completion", outside)
    assert error.value.code == invalid_params
    # params are optional in JSON-RPC: a request without them is still answered
    answered = await raw_request(client, "no-params", "repomem/status")
    assert answered.state == "ready"
    write_raw(client, b'{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": []}')
    write_raw(client, b"this is not json")
    write_raw(client, b"[1, 2, 3]")
    state = await status(client)
    assert state.state == "ready"
    insert(client, uri, 2, 1, 4, "client = make_client(")
    (item,) = (await complete(client, uri, 1, 25)).items
    assert item.text_edit.new_text.endswith(EXPECTED)


DOC_MDX = """\
import Tabs from '@theme/Tabs';

# Cache

<Tabs>
  <TabItem value="py">

Configure the cache with `CACHE_BACKEND_URL`; set `cache.flush_interval_seconds` to control
how often entries are written.

```python
settings.cache.flush_interval_seconds = 30
```

  </TabItem>
</Tabs>
"""


async def ask(client: LanguageClient, *arguments: Any) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="repomem.ask", arguments=list(arguments))
    )


@pytest.mark.asyncio
async def test_doc_memory_completes_documented_names_and_answers_questions(
    client: LanguageClient, tmp_path: Path
):
    files = {
        "docs/cache.mdx": DOC_MDX,
        "app/conf.py": "import settings\n\n\ndef configure():\n    settings.cache.\n",
    }
    files.update({f"app/m{i}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(3)})
    root = make_repo(tmp_path / "repo", files)
    # every completion shown: the copy from this small fixture is a weak one
    (root / ".repomem.toml").write_text("[completion]\nmin_confidence = 0\n")
    await start(client, root, {"repomem": {"debounceMs": 0}})  # completion.docs on by default
    docs = (await status(client)).docs
    assert (docs.state, docs.documents, docs.inCompletions) == ("ready", 1, True)

    # a name only the docs hold completes the line, and the item says where it came from
    uri = open_doc(client, root / "app/conf.py")
    (item,) = (await complete(client, uri, 4, 19)).items
    assert item.text_edit.new_text.endswith("settings.cache.flush_interval_seconds = 30")
    assert "docs/cache.mdx" in item.detail

    # repomem.ask: the answer's sources cite path:line
    answer = await ask(client, "How often are cache entries written?")
    lines = DOC_MDX.split("\n")
    line = next(i for i, text in enumerate(lines) if text.startswith("Configure the cache")) + 1
    top = answer["sources"][0]
    assert (top["path"], top["line"], top["kind"]) == ("docs/cache.mdx", line, "doc")
    assert answer["mode"] == "extractive" and answer["answer"] is None
    assert f"docs/cache.mdx:{line}" in answer["text"]
    graph = await ask(client, "How often are cache entries written?", {"strategy": "graph"})
    assert graph["strategy"] == "graph"
    for bad in ([], [42], ["q", {"strategy": "psychic"}], ["q", {"colour": "red"}]):
        with pytest.raises(JsonRpcException, match="repomem.ask"):
            await ask(client, *bad)

    # the doc changes on disk: read again, and the next answer cites the new text
    again = client.protocol.wait_for_notification("repomem/docsReady")
    (root / "docs/cache.mdx").write_text(
        DOC_MDX + "\n## Eviction\n\nEntries older than `cache.max_age_days` are evicted nightly.\n"
    )
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(
                    uri=(root / "docs/cache.mdx").as_uri(), type=types.FileChangeType.Changed
                )
            ]
        )
    )
    await asyncio.wait_for(asyncio.wrap_future(again), READY_TIMEOUT_S)
    evicted = await ask(client, "When are old cache entries evicted?")
    assert "evicted nightly" in evicted["sources"][0]["text"]

    # completion.docs off: the prompt holds code only
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"repomem": {"debounceMs": 0, "completion": {"docs": False}}}
        )
    )
    assert await poll(lambda: _docs_in_completions(client), want="off") == "off"
    items = (await complete(client, uri, 4, 19)).items
    assert all("flush_interval_seconds" not in i.text_edit.new_text for i in items)


async def _docs_in_completions(client: LanguageClient) -> str:
    return "on" if (await status(client)).docs.inCompletions else "off"


@pytest.mark.asyncio
async def test_ask_as_soon_as_started_waits_for_the_doc_memory(
    client: LanguageClient, tmp_path: Path
):
    root = make_repo(tmp_path / "repo", {"docs/cache.mdx": DOC_MDX})
    await initialize(client, root)
    # before the index is built, and so before the docs are read: answered once they are
    answer = await ask(client, "How often are cache entries written?")
    assert answer["sources"][0]["path"] == "docs/cache.mdx"
    capabilities = client_capabilities(client.preset)  # type: ignore[attr-defined]
    if capabilities.window and capabilities.window.work_done_progress:
        (waited,) = [
            reports
            for reports in client.progress_reports.values()
            if reports[0].title == "repomem: waiting for the doc memory"
        ]
        assert waited[0].message in ("indexing", "reading the docs")
        assert isinstance(waited[-1], types.WorkDoneProgressEnd)


@pytest.mark.asyncio
async def test_ask_without_docs_is_a_clear_error(client: LanguageClient, repo: Path):
    await start(client, repo)
    assert (await status(client)).docs.state == "none"
    with pytest.raises(JsonRpcException, match="has no docs"):
        await ask(client, "What does helper do?")

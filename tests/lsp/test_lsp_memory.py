"""The language server keeps nothing per message: a long editing session must not grow it.

The server is driven in-process through its protocol object (the messages are the JSON an
editor sends), so that its bookkeeping of handlers in progress can be inspected afterwards.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from typing import Any

import pytest
from pygls.io_ import StdoutWriter

from lsp_server.server import RepomemServer

URI = "file:///nowhere/app.py"
KEYSTROKES = 300


@pytest.fixture
def server() -> Iterator[RepomemServer]:
    server = RepomemServer()
    server.protocol.set_writer(StdoutWriter(io.BytesIO()))
    yield server
    asyncio.run(server.folders.first.completer.aclose())


def send(server: RepomemServer, message: dict[str, Any]) -> None:
    protocol = server.protocol
    protocol.handle_message(protocol.structure_message({"jsonrpc": "2.0", **message}))


def notify(server: RepomemServer, method: str, params: dict[str, Any]) -> None:
    send(server, {"method": method, "params": params})


def type_text(server: RepomemServer, text: str) -> None:
    """Open a document and type ``text`` into it, one ``didChange`` per character."""
    notify(
        server,
        "textDocument/didOpen",
        {"textDocument": {"uri": URI, "languageId": "python", "version": 1, "text": "\n"}},
    )
    for column, char in enumerate(text):
        at = {"line": 0, "character": column}
        notify(
            server,
            "textDocument/didChange",
            {
                "textDocument": {"uri": URI, "version": column + 2},
                "contentChanges": [{"range": {"start": at, "end": at}, "text": char}],
            },
        )


def test_typing_leaves_no_handler_bookkeeping_behind(server: RepomemServer) -> None:
    send(server, {"id": 1, "method": "initialize", "params": {"capabilities": {}}})
    text = "x" * KEYSTROKES
    type_text(server, text)
    notify(server, "textDocument/didSave", {"textDocument": {"uri": URI}})

    assert server.workspace.get_text_document(URI).source == text + "\n"
    assert server.protocol._request_futures == {}

    notify(server, "textDocument/didClose", {"textDocument": {"uri": URI}})
    assert URI not in server.workspace.text_documents
    assert server.protocol._request_futures == {}


def test_async_handlers_and_requests_leave_no_bookkeeping_behind(server: RepomemServer) -> None:
    async def session() -> None:
        send(server, {"id": 1, "method": "initialize", "params": {"capabilities": {}}})
        type_text(server, "y" * 20)
        for i in range(5):
            # an async handler behind pygls's built-in one, and a request with an async handler
            notify(
                server,
                "workspace/didChangeConfiguration",
                {"settings": {"repomem": {"debounceMs": i}}},
            )
            send(server, {"id": f"r{i}", "method": "repomem/retrieve", "params": {"query": "y"}})
        send(server, {"id": "s", "method": "repomem/status", "params": None})
        for _ in range(200):
            if not server.protocol._request_futures:
                break
            await asyncio.sleep(0.01)

    asyncio.run(session())
    assert server.folders.first.editor.debounce_ms == 4
    assert server.protocol._request_futures == {}

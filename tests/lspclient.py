"""A language client's side of ``repomem serve`` over stdio, shared by the tests that drive the
real server (pytest-lsp): start it as an editor would, open and edit documents, ask for
completions and the server's status."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

SERVER = [sys.executable, "-m", "repomem.cli", "serve"]
READY_TIMEOUT_S = 30.0


async def start(client: LanguageClient, root: Path, options: Any = None) -> Any:
    """Initialize with the preset's capabilities plus inline completion; wait for the index
    and the doc memory read after it."""
    ready = client.protocol.wait_for_notification("repomem/indexReady")
    docs = client.protocol.wait_for_notification("repomem/docsReady")
    await initialize(client, root, options)
    await asyncio.wait_for(asyncio.wrap_future(docs), READY_TIMEOUT_S)
    return ready.result()


async def initialize(client: LanguageClient, root: Path, options: Any = None) -> None:
    """Initialize with the preset's capabilities plus inline completion, and return."""
    capabilities = client_capabilities(client.preset)  # type: ignore[attr-defined]
    assert capabilities.text_document is not None
    capabilities.text_document.inline_completion = types.InlineCompletionClientCapabilities()
    client.registrations = []  # type: ignore[attr-defined]
    if "client/registerCapability" not in client.protocol.fm.features:

        @client.feature("client/registerCapability")
        def register(params: types.RegistrationParams) -> None:
            client.registrations.extend(r.method for r in params.registrations)  # type: ignore[attr-defined]

    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            initialization_options=options,
        )
    )
    assert result.capabilities.completion_provider is not None
    assert result.capabilities.inline_completion_provider is not None


def open_doc(client: LanguageClient, path: Path, text: str | None = None) -> str:
    uri = path.as_uri()
    text = path.read_text() if text is None else text
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, text))
    )
    return uri


def insert(client: LanguageClient, uri: str, version: int, line: int, col: int, text: str) -> None:
    at = types.Position(line, col)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[
                types.TextDocumentContentChangePartial(range=types.Range(at, at), text=text)
            ],
        )
    )


async def complete(client: LanguageClient, uri: str, line: int, col: int) -> types.CompletionList:
    result = await client.text_document_completion_async(
        types.CompletionParams(types.TextDocumentIdentifier(uri), types.Position(line, col))
    )
    assert isinstance(result, types.CompletionList)
    return result


async def complete_inline(
    client: LanguageClient, uri: str, line: int, col: int
) -> types.InlineCompletionList:
    result = await client.text_document_inline_completion_async(
        types.InlineCompletionParams(
            context=types.InlineCompletionContext(
                trigger_kind=types.InlineCompletionTriggerKind.Automatic
            ),
            text_document=types.TextDocumentIdentifier(uri),
            position=types.Position(line, col),
        )
    )
    assert isinstance(result, types.InlineCompletionList)
    return result


async def status(client: LanguageClient) -> Any:
    return await client.protocol.send_request_async("repomem/status", {})


def warnings_shown(client: LanguageClient) -> list[str]:
    return [m.message for m in client.messages if m.type == types.MessageType.Warning]

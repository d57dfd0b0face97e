"""Completion requests (``textDocument/completion``, ``textDocument/inlineCompletion``): the
cursor in the open document, the check that the document may reach a prompt, the completer's
suggestion, and the answer's items."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from lsp_server.completer import COMPLETION, INLINE, Cursor
from lsp_server.folders import Folder
from lsp_server.items import completion_item, inline_item, rest_of_line
from lsp_server.suggestion_cache import Suggestion
from repomem.index.files import FileSkipped, check_prompt_text, skip_explanation
from repomem.index.languages import language_for_path

logger = logging.getLogger(__name__)

_Item = TypeVar("_Item", types.CompletionItem, types.InlineCompletionItem)


@dataclass(frozen=True)
class Request:
    """A completion request in an open document of ``folder``: the cursor, and its line's
    text before it."""

    folder: Folder
    doc: TextDocument
    position: types.Position
    cursor: Cursor
    line_prefix: str


def request_at(folder: Folder, doc: TextDocument, uri: str, position: types.Position) -> Request:
    """The request at ``position`` (in the client's units) of the open ``doc``."""
    lines = doc.lines
    if position.line < 0 or position.character < 0 or position.line > len(lines):
        raise JsonRpcInvalidParams(
            f"position {position.line}:{position.character} is outside {uri} ({len(lines)} lines)"
        )
    at = doc.position_codec.position_from_client_units(
        lines, types.Position(position.line, position.character)
    )
    offset = sum(len(line) for line in lines[: at.line]) + at.character
    source = doc.source
    left, right = source[:offset], source[offset:]
    line_prefix = left[left.rfind("\n") + 1 :]
    cursor = Cursor(uri, folder.rel_path(uri), left, right, left.count("\n"))
    return Request(folder, doc, position, cursor, line_prefix)


async def completion_list(request: Request, *, markdown: bool) -> types.CompletionList:
    """The answer to ``textDocument/completion``: one item, or none (incomplete: the next
    keystroke asks again)."""
    folder, cursor, doc = request.folder, request.cursor, request.doc
    if _kept_out(request):
        return types.CompletionList(is_incomplete=False, items=[])
    suggestion = await folder.completer.complete(cursor, COMPLETION, folder.editor.debounce_ms)
    if suggestion is None or not suggestion.text:
        return types.CompletionList(is_incomplete=True, items=[])
    item = completion_item(
        cursor.uri,
        request.position,
        request.line_prefix,
        rest_of_line(cursor.right),
        suggestion,
        units=doc.position_codec.client_num_units,
        markdown=markdown,
        language=language_for_path(cursor.path or doc.path) or "",
    )
    return types.CompletionList(is_incomplete=True, items=_kept(item, suggestion))


async def inline_list(request: Request) -> types.InlineCompletionList:
    """The answer to ``textDocument/inlineCompletion``: one item, or none."""
    folder, cursor = request.folder, request.cursor
    if _kept_out(request):
        return types.InlineCompletionList(items=[])
    suggestion = await folder.completer.complete(cursor, INLINE, folder.editor.debounce_ms)
    if suggestion is None or not suggestion.text:
        return types.InlineCompletionList(items=[])
    item = inline_item(
        cursor.uri,
        request.position,
        rest_of_line(cursor.right),
        suggestion,
        units=request.doc.position_codec.client_num_units,
    )
    return types.InlineCompletionList(items=_kept(item, suggestion))


def _kept_out(request: Request) -> bool:
    """Whether the document's text must reach no prompt: the index leaves it out as secret
    or ignored, too large or binary (a file outside the workspace is judged by its name)."""
    folder, cursor = request.folder, request.cursor
    if cursor.path is not None and folder.root is not None:
        root, rel = folder.root, cursor.path
    else:
        fs_path = to_fs_path(cursor.uri)
        if fs_path is None:
            return False
        root, rel = Path(fs_path).parent, Path(fs_path).name
    config = folder.index.config
    data = request.doc.source.encode("utf-8", errors="replace")
    try:
        check_prompt_text(root, rel, config, data)
    except FileSkipped as skip:
        logger.debug("no completion: %s %s", rel, skip_explanation(skip, config))
        return True
    return False


def _kept(item: _Item | None, suggestion: Suggestion) -> list[_Item]:
    """The answer's items: none where the suggestion does not fit the line."""
    if item is None:
        logger.debug("not offered: %r would break the rest of the line", suggestion.text)
        return []
    return [item]

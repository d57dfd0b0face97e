"""Completion requests (lsp_server.completion_requests): the cursor read from a request's
position, a bad position refused, a secret document answered with nothing, and a request in
a served folder answered with the completer's suggestion."""

from __future__ import annotations

from pathlib import Path

import pytest
from folder_kit import Heard, make_folder, serving
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.workspace import TextDocument
from repos import make_repo

from lsp_server.completion_requests import completion_list, inline_list, request_at
from repomem.config import CompletionConfig
from repomem.settings import Settings

CONFIG_PY = """\
from pkg.util import helper


def connect(opts):
    client = make_client(opts.host, opts.port, timeout=opts.timeout)
    return client
"""
LEFT = "def run(opts):\n    client = make_client("
EXPECTED = "opts.host, opts.port, timeout=opts.timeout)"


def _doc(root: Path, rel: str, text: str) -> tuple[TextDocument, str]:
    uri = (root / rel).as_uri()
    return TextDocument(uri, text), uri


def test_the_request_reads_the_cursor_from_the_position(tmp_path: Path) -> None:
    folder = make_folder(tmp_path, Heard())
    doc, uri = _doc(tmp_path, "pkg/app.py", "x = 1\ny = f(é, 2)\n")
    # the client counts UTF-16 units by default: é is one of them
    request = request_at(folder, doc, uri, types.Position(1, 8))
    assert request.cursor.path == "pkg/app.py" and request.cursor.uri == uri
    assert request.cursor.left == "x = 1\ny = f(é,"
    assert request.cursor.right == " 2)\n" and request.line_prefix == "y = f(é,"
    assert request.cursor.line == 1
    other, other_uri = _doc(tmp_path.parent, "o.py", "z\n")
    outside = request_at(folder, other, other_uri, types.Position(0, 1))
    assert outside.cursor.path is None  # a document in no folder: judged by its name
    with pytest.raises(JsonRpcInvalidParams, match="outside"):
        request_at(folder, doc, uri, types.Position(9, 0))
    assert request_at(folder, doc, uri, types.Position(2, 0)).cursor.right == ""  # the end


@pytest.mark.asyncio
async def test_a_served_folder_answers_and_a_secret_gets_nothing(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"pkg/config.py": CONFIG_PY})
    settings = Settings(completion=CompletionConfig(min_confidence=0.0))
    async with serving(root, settings) as (folder, heard):
        assert not heard.failed
        doc, uri = _doc(root, "pkg/app.py", LEFT + "\n")
        request = request_at(folder, doc, uri, types.Position(1, len(LEFT.split("\n")[1])))
        answer = await completion_list(request, markdown=False)
        (item,) = answer.items
        assert answer.is_incomplete and EXPECTED in (item.insert_text or item.label)
        inline = await inline_list(request)
        (inline_item,) = inline.items
        assert EXPECTED in str(inline_item.insert_text)
        # the same text in a file the index leaves out as a secret reaches no prompt
        secret, secret_uri = _doc(root, ".env", LEFT + "\n")
        request = request_at(folder, secret, secret_uri, types.Position(1, 24))
        kept = await completion_list(request, markdown=False)
        assert kept.items == [] and not kept.is_incomplete
        assert (await inline_list(request)).items == []
        assert folder.completer.stats.completions == 1  # the secret never reached it

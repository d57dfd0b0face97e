"""Completion items: what they replace, in the client's position units, and their sources."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from lsp_server.items import ACCEPTED_COMMAND, completion_item, inline_item, replaced_prefix
from lsp_server.suggestion_cache import Suggestion

SUGGESTION = Suggestion("ost, port)", ("pkg/config.py", "pkg/util.py"), "builtin")


@pytest.mark.parametrize(
    ("prefix", "replaced"),
    [
        ("    client = make_cl", "make_cl"),
        ("    client = make_client(", "client = make_client("),
        ("    ", ""),
        ("", ""),
        ("x.y", "y"),
    ],
)
def test_an_item_replaces_the_word_or_the_lines_text(prefix: str, replaced: str) -> None:
    assert replaced_prefix(prefix) == replaced


@pytest.mark.parametrize(("encoding", "units"), [("utf-16", 8), ("utf-8", 11), ("utf-32", 7)])
def test_the_range_is_in_the_clients_position_units(encoding: str, units: int) -> None:
    codec = PositionCodec(encoding)
    prefix = "    ('é😀', "  # after punctuation the line's text (past its indent) is replaced
    assert codec.client_num_units(prefix) - 4 == units
    cursor = types.Position(3, codec.client_num_units(prefix))
    item = completion_item(
        "file:///r/a.py", cursor, prefix, SUGGESTION, units=codec.client_num_units, markdown=True
    )
    assert item.text_edit.range == types.Range(types.Position(3, 4), cursor)
    assert item.text_edit.new_text == "('é😀', ost, port)"
    # after a word only the word is replaced, one unit in every encoding
    prefix += "h"
    cursor = types.Position(3, codec.client_num_units(prefix))
    item = completion_item(
        "file:///r/a.py", cursor, prefix, SUGGESTION, units=codec.client_num_units, markdown=True
    )
    assert item.text_edit.range.start == types.Position(3, cursor.character - 1)
    assert item.text_edit.new_text == "host, port)"


def test_items_name_their_sources_in_detail_documentation_and_command() -> None:
    cursor = types.Position(0, 5)
    item = completion_item(
        "file:///r/a.py", cursor, "f(a.h", SUGGESTION, units=len, markdown=True, language="python"
    )
    assert "pkg/config.py, pkg/util.py" in item.detail and "builtin" in item.detail
    assert item.documentation.kind == types.MarkupKind.Markdown
    assert "```python\nf(a.host, port)\n```" in item.documentation.value
    assert "- `pkg/util.py`" in item.documentation.value
    assert item.command.command == ACCEPTED_COMMAND
    assert item.command.arguments == [
        {"uri": "file:///r/a.py", "sources": ["pkg/config.py", "pkg/util.py"]}
    ]
    plain = completion_item(
        "file:///r/a.py", cursor, "f(a.h", SUGGESTION, units=len, markdown=False
    )
    assert plain.documentation.kind == types.MarkupKind.PlainText
    assert "pkg/config.py" in plain.documentation.value


def test_inline_items_insert_at_the_cursor() -> None:
    cursor = types.Position(2, 7)
    item = inline_item("file:///r/a.py", cursor, SUGGESTION)
    assert item.insert_text == "ost, port)"
    assert item.range == types.Range(cursor, cursor)
    assert "pkg/config.py" in item.command.title

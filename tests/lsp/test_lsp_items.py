"""Completion items: what they replace, in the client's position units, and their sources."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from lsp_server.items import (
    ACCEPTED_COMMAND,
    Fit,
    completion_item,
    fit_to_line,
    inline_item,
    replaced_prefix,
    rest_of_line,
)
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
        "file:///r/a.py",
        cursor,
        prefix,
        "",
        SUGGESTION,
        units=codec.client_num_units,
        markdown=True,
    )
    assert item.text_edit.range == types.Range(types.Position(3, 4), cursor)
    assert item.text_edit.new_text == "('é😀', ost, port)"
    # after a word only the word is replaced, one unit in every encoding
    prefix += "h"
    cursor = types.Position(3, codec.client_num_units(prefix))
    item = completion_item(
        "file:///r/a.py",
        cursor,
        prefix,
        "",
        SUGGESTION,
        units=codec.client_num_units,
        markdown=True,
    )
    assert item.text_edit.range.start == types.Position(3, cursor.character - 1)
    assert item.text_edit.new_text == "host, port)"


def test_items_name_their_sources_in_detail_documentation_and_command() -> None:
    cursor = types.Position(0, 5)
    item = completion_item(
        "file:///r/a.py",
        cursor,
        "f(a.h",
        "",
        SUGGESTION,
        units=len,
        markdown=True,
        language="python",
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
        "file:///r/a.py", cursor, "f(a.h", "", SUGGESTION, units=len, markdown=False
    )
    assert plain.documentation.kind == types.MarkupKind.PlainText
    assert "pkg/config.py" in plain.documentation.value


def test_inline_items_insert_at_the_cursor() -> None:
    cursor = types.Position(2, 7)
    item = inline_item("file:///r/a.py", cursor, "", SUGGESTION, units=len)
    assert item.insert_text == "ost, port)"
    assert item.range == types.Range(cursor, cursor)
    assert "pkg/config.py" in item.command.title


@pytest.mark.parametrize(
    ("text", "rest", "fit"),
    [
        # (a) nothing after the cursor
        ("c_extra__ = {}", "", Fit("c_extra__ = {}")),
        ("c_extra__ = {}", "   ", Fit("c_extra__ = {}")),
        # (b) only closing brackets, quotes and punctuation after it
        ("a, b", ")", Fit("a, b")),
        ("key", '"]', Fit("key")),
        ("ready", "):", Fit("ready")),
        ("x + 1", ");", Fit("x + 1")),
        ("item", "] ,", Fit("item")),
        # (c) the suggestion re-types the rest: its end is dropped
        ("c_extra__[k] = v", "c_extra__[k] = v", None),
        ("host, port, timeout=t)", ", timeout=t)", Fit("host, port")),
        ("host, timeout=t)", ", timeout=t)  ", Fit("host")),
        # (d) it starts with the rest and goes on: it replaces the rest of the line
        ("c_extra__ is None:", "c_extra__", Fit("c_extra__ is None:", replaces_rest=True)),
        # (e) anything else would leave the line broken
        ("c_extra__ is None:", "c_extra__[k] = v", None),
        ("foo()", "  # a comment", None),
        ("a, b", ") + c", None),
    ],
)
def test_a_suggestion_fits_the_rest_of_the_line_or_is_not_offered(
    text: str, rest: str, fit: Fit | None
) -> None:
    assert fit_to_line(text, rest) == fit


def test_a_suggestion_the_engine_cut_before_the_rest_goes_in_as_it_is() -> None:
    assert fit_to_line("host, port", ", timeout=t)") is None
    assert fit_to_line("host, port", ", timeout=t)", before_rest=True) == Fit("host, port")


def test_the_rest_of_the_line_ends_before_its_line_break() -> None:
    assert rest_of_line("c_extra__[k] = v\r\n    return x\n") == "c_extra__[k] = v"
    assert rest_of_line(")") == ")"
    assert rest_of_line("\nnext line") == ""


@pytest.mark.parametrize(("encoding", "units"), [("utf-16", 4), ("utf-8", 7), ("utf-32", 3)])
def test_items_that_replace_the_rest_end_at_the_end_of_the_line(encoding: str, units: int) -> None:
    codec = PositionCodec(encoding)
    prefix, rest = "    copied.__pydanti", "c😀é"
    suggestion = Suggestion("c😀é is None:", ("pkg/model.py",))
    cursor = types.Position(5, codec.client_num_units(prefix))
    end = types.Position(5, cursor.character + units)
    item = completion_item(
        "file:///r/a.py",
        cursor,
        prefix,
        rest,
        suggestion,
        units=codec.client_num_units,
        markdown=True,
    )
    assert item.text_edit.range == types.Range(types.Position(5, 11), end)
    assert item.text_edit.new_text == "__pydantic😀é is None:"
    assert "copied.__pydantic😀é is None:\n```" in item.documentation.value
    ghost = inline_item("file:///r/a.py", cursor, rest, suggestion, units=codec.client_num_units)
    assert ghost.insert_text == "c😀é is None:"
    assert ghost.range == types.Range(cursor, end)


def test_neither_item_is_offered_where_the_suggestion_breaks_the_line() -> None:
    cursor = types.Position(5, 24)
    prefix, rest = "        copied.__pydanti", "c_extra__[k] = v"
    suggestion = Suggestion("c_extra__ = {}", ("pkg/model.py",))
    assert completion_item("u", cursor, prefix, rest, suggestion, units=len, markdown=True) is None
    assert inline_item("u", cursor, rest, suggestion, units=len) is None
    # a suggestion that re-types the rest loses that end in both items
    retyped = Suggestion("c_extra__.get(k) or c_extra__[k] = v")
    item = completion_item("u", cursor, prefix, rest, retyped, units=len, markdown=False)
    assert item.text_edit.new_text == "__pydantic_extra__.get(k) or "
    assert item.text_edit.range.end == cursor
    assert inline_item("u", cursor, rest, retyped, units=len).insert_text == (
        "c_extra__.get(k) or "
    )

"""The custom messages' params (lsp_server.custom_messages), parsed without a server: what a
malformed message is told, and what a good one yields."""

from __future__ import annotations

from collections import namedtuple
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from lsp_server.custom_messages import folder_uri, line_ranges, param, retrieve_params


def test_params_arrive_as_dicts_or_named_tuples() -> None:
    Params = namedtuple("Params", ["query", "k"])
    assert param({"query": "x"}, "query", None) == "x"
    assert param(Params("x", 3), "k", 10) == 3
    assert param({"query": "x"}, "k", 10) == 10
    assert param(["query"], "query", "default") is None  # neither: no field at all


def test_visible_ranges_include_their_end_line() -> None:
    ranges = [{"start": {"line": 3, "character": 0}, "end": {"line": 7, "character": 2}}]
    assert line_ranges(ranges) == [(3, 8)]
    assert line_ranges([{"start": {"line": 5}, "end": {"line": 4}}]) is None  # backwards
    assert line_ranges([{"start": {"line": True}, "end": {"line": 4}}]) is None
    assert line_ranges([{"start": {"line": 0}, "end": {"line": 0}}] * 101) is None  # too many


def test_retrieve_params_are_checked() -> None:
    assert retrieve_params({"query": "def f"}) == ("def f", 10, None)
    assert retrieve_params({"query": "q", "k": 2, "uri": "file:///a.py"}) == (
        "q",
        2,
        "file:///a.py",
    )
    for bad in ({"query": 3}, {"query": "q", "k": 0}, {"query": "q", "k": True}, {"uri": 1}):
        with pytest.raises(JsonRpcInvalidParams, match="repomem/retrieve expects"):
            retrieve_params(bad)


def test_a_command_names_its_folder_by_uri_or_path(tmp_path: Path) -> None:
    assert folder_uri("file:///work/repo", "repomem.ask") == "file:///work/repo"
    assert folder_uri(str(tmp_path), "repomem.ask") == tmp_path.resolve().as_uri()
    with pytest.raises(JsonRpcInvalidParams, match="repomem.reindex: a folder is a URI"):
        folder_uri("", "repomem.reindex")

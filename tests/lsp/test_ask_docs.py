"""``repomem.ask`` (lsp_server.ask_docs): its arguments checked with a clear message, a
question over a folder's docs answered with the text ``repomem ask`` prints, and a folder
without docs saying why there is no answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from folder_kit import serving
from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams
from repos import make_repo

from lsp_server.ask_docs import ASK_COMMAND, answer, ask_arguments
from lsp_server.status import Progress

README = """\
# widget

Widget serves files over HTTP for local development.

## Running

Run `widget serve --port 8080` to start the server. The `--reload` flag restarts it
whenever a file under the project changes, so edits show up without a manual restart.

## Logging

Call `setup_logging(level)` before serving to write a log of every request to
`widget.log` in the working directory; the level decides how much each line holds.
"""


def _progress() -> Progress:
    """Progress for a client that shows no bars (nothing is sent)."""
    return Progress(None, lambda capability: False, lambda message: None)  # type: ignore[arg-type]


def test_the_arguments_are_checked() -> None:
    assert ask_arguments(("How?",)) == ("How?", None, "chunk", None)
    options = {"strategy": "graph", "form": "mixed", "folder": "file:///r"}
    assert ask_arguments(("How?", options)) == ("How?", "graph", "mixed", "file:///r")
    for bad in [(), ("  ",), (3,), ("How?", {"colour": "red"}), ("How?", [], "x")]:
        with pytest.raises(JsonRpcInvalidParams, match=f"{ASK_COMMAND} expects"):
            ask_arguments(bad)
    with pytest.raises(JsonRpcInvalidParams, match="strategy must be one of"):
        ask_arguments(("How?", {"strategy": "guess"}))
    with pytest.raises(JsonRpcInvalidParams, match="form one of"):
        ask_arguments(("How?", {"form": "poem"}))


@pytest.mark.asyncio
async def test_a_question_over_the_docs_is_answered_with_its_sources(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"README.md": README})
    async with serving(root) as (folder, heard):
        assert folder.index.docs.state == "ready", heard.failed
        question = "Which flag restarts the server when files change?"
        got = await answer(folder, question, "single", "chunk", _progress())
        assert got["root"] == str(root) and got["question"] == question
        assert got["strategy"] == "single" and got["mode"] == "extractive"
        assert got["sources"] and got["sources"][0]["path"] == "README.md"
        line = README.split("\n").index(next(ln for ln in README.split("\n") if "--reload" in ln))
        assert any(s["line"] <= line + 1 for s in got["sources"] if s["path"] == "README.md")
        text = got["text"]
        assert text.startswith("No answer:") and "Sources:" in text and "README.md" in text
        assert "strategy: single, mode: extractive" in text


@pytest.mark.asyncio
async def test_a_folder_without_docs_says_why(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    async with serving(root) as (folder, _):
        assert folder.index.docs.state == "none"
        with pytest.raises(JsonRpcInternalError, match="has no docs to answer from"):
            await answer(folder, "What is it?", None, "chunk", _progress())

"""Recent edits and views over stdio: what the user just typed in one document, or has on
screen, reaches the prompt of a completion in another (the item's documentation lists the
ranges), and a malformed ``repomem/visibleRanges`` is dropped without harm."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lspclient import SERVER, complete, insert, open_doc, start, status
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from repos import make_repo

# Neither text is on disk: only the editor has it, so the index cannot find it and the prompt
# shows it only through the recent edits and views.
EDITED = (
    "def frobnicate_widget(widget, depth):\n"
    "    total = frobnicate_widget(widget.parent, depth=depth - 1)\n"
    "    return total\n"
)
VIEWED = (
    "def quantize_sample(sample, levels):\n"
    "    step = quantize_sample(sample.raw, levels=levels * 2)\n"
    "    return step\n"
)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient) -> AsyncIterator[None]:
    lsp_client.preset = "neovim"  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    files = {
        "pkg/app.py": "def run(widget):\n    \n    return widget\n",
        ".repomem.toml": "[completion]\nmin_confidence = 0\n",
    }
    return make_repo(tmp_path / "repo", files)


def documentation(item: types.CompletionItem) -> str:
    assert isinstance(item.documentation, types.MarkupContent)
    return item.documentation.value


@pytest.mark.asyncio
async def test_an_edit_in_one_file_reaches_the_prompt_in_another(client: LanguageClient, repo):
    await start(client, repo)
    fresh = open_doc(client, repo / "pkg/fresh.py", "import os\n\n\n")
    insert(client, fresh, 2, 3, 0, EDITED)  # lines 4-6
    app = open_doc(client, repo / "pkg/app.py")
    insert(client, app, 2, 1, 4, "total = frobnicate_widget(")
    (item,) = (await complete(client, app, 1, 30)).items
    assert "pkg/fresh.py:1-7 (edited)" in documentation(item)
    # with the channel off, the same cursor gets nothing from it
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"repomem": {"completion": {"recent": False}}})
    )
    await asyncio.sleep(0.2)
    insert(client, app, 3, 1, 30, " ")
    result = await complete(client, app, 1, 31)
    (item,) = result.items
    assert "fresh.py" not in documentation(item)
    # on again: the range is back, until the file is deleted on disk
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"repomem": {"completion": {"recent": True}}})
    )
    await asyncio.sleep(0.2)
    (item,) = (await complete(client, app, 1, 31)).items
    assert "pkg/fresh.py:1-7 (edited)" in documentation(item)
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=fresh, type=types.FileChangeType.Deleted)]
        )
    )
    await asyncio.sleep(0.2)
    insert(client, app, 4, 1, 31, " ")
    result = await complete(client, app, 1, 32)
    (item,) = result.items
    assert "fresh.py" not in documentation(item)


@pytest.mark.asyncio
async def test_visible_ranges_reach_the_prompt_and_bad_ones_are_dropped(
    client: LanguageClient, repo
):
    await start(client, repo)
    draft = open_doc(client, repo / "pkg/draft.py", "\n" * 30 + VIEWED + "\n" * 30)
    for bad in (
        {"uri": 3, "ranges": []},
        {"uri": draft, "ranges": "all of it"},
        {"uri": draft, "ranges": [{"start": {"line": 5}, "end": {"line": 2}}]},
        {"uri": draft},
        [1, 2],
    ):
        client.protocol.notify("repomem/visibleRanges", bad)
    assert (await status(client)).state == "ready"
    visible = {"start": {"line": 28, "character": 0}, "end": {"line": 36, "character": 0}}
    client.protocol.notify("repomem/visibleRanges", {"uri": draft, "ranges": [visible]})
    app = open_doc(client, repo / "pkg/app.py")
    insert(client, app, 2, 1, 4, "step = quantize_sample(")
    (item,) = (await complete(client, app, 1, 27)).items
    assert "pkg/draft.py:29-37 (viewed)" in documentation(item)

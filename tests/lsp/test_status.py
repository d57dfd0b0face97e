"""What the editor is told of a folder (lsp_server.status): the ``repomem/status`` answer
of a folder indexed and served, and the progress bar and notifications of its build."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from folder_kit import Heard, make_folder, serving
from repos import make_repo

from lsp_server.build_process import IndexReport
from lsp_server.folders import Folders
from lsp_server.status import DOCS_READY, INDEX_READY, Progress, folder_status, status
from lsp_server.workspace_docs import DocsReport

FILES = {"README.md": "# fixture\n\nThe helper doubles what it is given.\n"}


@pytest.mark.asyncio
async def test_a_ready_folder_reports_its_counts(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", FILES)
    async with serving(root) as (folder, heard):
        assert not heard.failed
        answer = folder_status(folder)
        (report,) = heard.ready
        assert answer["state"] == "ready" and answer["root"] == str(root)
        assert answer["folder"] == root.as_uri()
        assert answer["files"] == report.files == len(list(root.rglob("*.py"))) > 0
        assert answer["fragments"] == report.fragments > 0
        assert answer["docs"]["state"] == "ready" and answer["docs"]["documents"] == 1
        assert answer["backend"] == "builtin" and answer["completions"] == 0
        assert answer["settings"]["indexDelayMs"] == folder.editor.index_delay_ms
        folders = Folders(make_folder(None, Heard()))
        folders.add(folder)
        whole = status(folders)  # the first folder's, and every folder's
        assert whole["files"] == answer["files"]
        assert [f["folder"] for f in whole["folders"]] == [root.as_uri()]


class Bars:
    """The progress bars and notifications a client would receive."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []
        self.tokens: dict[str, object] = {}
        self.work_done_progress = self
        self.protocol = self

    def begin(self, token: str, value: Any) -> None:
        self.sent.append(("begin", token))

    def report(self, token: str, value: Any) -> None:
        self.sent.append(("report", value.message))

    def end(self, token: str, value: Any) -> None:
        self.sent.append(("end", value.message))

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.sent.append((method, params))

    async def create_async(self, token: str) -> None:
        self.tokens[token] = None


@pytest.mark.asyncio
async def test_the_indexing_bar_ends_with_the_docs_and_both_are_notified(tmp_path: Path) -> None:
    bars = Bars()
    warnings: list[str] = []
    progress = Progress(bars, lambda capability: True, warnings.append)  # type: ignore[arg-type]
    folder = make_folder(tmp_path, Heard())
    await progress.begin(folder)
    assert folder.progress_token == "repomem-index-1"
    progress.report(folder, "parse", 1, 2)
    report = IndexReport(str(tmp_path), 3, 7, 3, 0, 0, 1.25)
    progress.index_ready(folder, report)
    folder.index.docs.state = "none"
    progress.docs_ready(folder, DocsReport(0, 0, 0.1))
    assert ("report", "parse 1/2") in bars.sent
    (ended,) = [m for kind, m in bars.sent if kind == "end"]
    assert ended == "indexed 3 files (7 fragments) in 1.2 s; doc memory: no docs"
    ready = dict(bars.sent)[INDEX_READY]
    assert ready["files"] == 3 and ready["folder"] == folder.uri
    assert dict(bars.sent)[DOCS_READY]["state"] == "none"
    assert folder.progress_token is None and warnings == []
    progress.index_failed(folder, "cannot read the repository")
    assert warnings == ["repomem: cannot read the repository"]

"""A folder's doc memory (lsp_server.workspace_docs): its states as the worker opens it,
what a new configuration or a changed doc asks for, and the report the editor hears."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import pytest
from repos import make_repo

from lsp_server import workspace_docs
from lsp_server.workspace_docs import DocsReport, WorkspaceDocs
from repomem.config import DocMemoryConfig
from repomem.index.repo import RepoIndex

README = """\
# fixture

The fixture package doubles numbers. Call `helper(x)` from `pkg.util` to get twice x plus
two; `Core.go` calls it through the base class and returns the value it computed.

## Install

Install it with pip from the repository root, then import `pkg` and call `build()` to get a
`Core` ready to run. Nothing else needs configuring for the fixture to work as described.
"""


def _docs(root: Path) -> tuple[WorkspaceDocs, list[DocsReport]]:
    reports: list[DocsReport] = []
    docs = WorkspaceDocs(root, threading.Condition(), threading.Lock(), reports.append)
    return docs, reports


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> RepoIndex:
    root = make_repo(tmp_path_factory.mktemp("docs") / "r", {"README.md": README})
    return RepoIndex.build(root, save=False)[0]


def test_docs_are_read_once_the_index_is_there(index: RepoIndex) -> None:
    docs, reports = _docs(index.root)
    assert docs.state == "waiting" and docs.memory is None
    assert docs.pending(building=True) and not docs.pending(building=False)
    docs.open(index)
    assert docs.state == "ready" and docs.memory is not None and not docs.pending(True)
    (report,) = reports
    assert report.documents == docs.documents == 1 and report.segments == docs.segments > 0
    assert report.to_dict()["documents"] == 1


def test_a_repository_without_docs_is_none(tmp_path: Path) -> None:
    index = RepoIndex.build(make_repo(tmp_path / "r"), save=False)[0]
    docs, reports = _docs(index.root)
    docs.open(index)
    assert docs.state == "none" and docs.memory is None
    assert reports == [DocsReport(0, 0, reports[0].seconds)]


def test_a_new_config_or_a_changed_doc_reads_the_docs_again(index: RepoIndex) -> None:
    docs, _ = _docs(index.root)
    docs.configure(DocMemoryConfig())  # the same: nothing to do
    assert docs.config == DocMemoryConfig() and not docs.wanted
    smaller = replace(DocMemoryConfig(), max_segment_words=60)
    docs.configure(smaller)  # nothing open yet: read with it when the index is ready
    assert docs.config == smaller and not docs.wanted
    docs.open(index)
    bigger = replace(DocMemoryConfig(), max_segment_words=300)
    docs.configure(bigger)
    assert docs.wanted and docs.config == bigger
    docs.wanted = False
    docs.changed("pkg/util.py")  # code: the doc memory follows it when the index tidies
    assert not docs.wanted
    docs.changed("docs/guide.md")
    assert docs.wanted


def test_docs_that_cannot_be_opened_fail_and_are_reported(
    index: RepoIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(workspace_docs.DocMemory, "open", broken)
    docs, reports = _docs(index.root)
    docs.open(index)
    assert docs.state == "failed" and docs.memory is None
    assert [(r.documents, r.segments) for r in reports] == [(0, 0)]

"""A folder's build in a process of its own (lsp_server.build_process): a small folder's
build reports its files and fragments, a failing one ends in ``BuildFailed``, and builds of
one server take turns."""

from __future__ import annotations

import threading
from pathlib import Path

from repos import PY_FILES, make_repo

from lsp_server.build_process import BuildFailed, BuildProcess, Built, IndexReport
from repomem.config import IndexConfig
from repomem.errors import RepomemError
from repomem.index.repo import RepoIndex


def _build(root: Path, config: IndexConfig, builds: threading.Semaphore) -> tuple[Built, list]:
    """One build, waited for: its result, and the progress and turns it reported."""
    seen: list = []
    finished = threading.Event()
    result: list[Built] = []

    def done(built: Built) -> None:
        result.append(built)
        finished.set()

    process = BuildProcess(root, builds, lambda *p: seen.append(p))
    process.start(config, first=lambda c: seen.append(("first", c)), done=done, stopping=bool)
    assert finished.wait(120), "the build did not finish"
    return result[0], seen


def test_a_small_folder_builds_and_reports_its_files(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", PY_FILES)
    config = IndexConfig()
    built, seen = _build(root, config, threading.Semaphore(1))
    assert not isinstance(built, Exception), built
    index, summary, seconds = built
    assert isinstance(index, RepoIndex) and seen[0] == ("first", config)
    assert {stage for stage, *_ in seen[1:]} >= {"parse", "relations"}
    report = IndexReport.of(root, index, summary, seconds)
    assert report.files == index.file_count == len(list(root.rglob("*.py")))
    assert report.fragments == index.fragment_count > 0
    assert report.reparsed == report.files and report.reused == 0
    assert report.to_dict()["root"] == str(root)
    # built again: nothing changed, so every file's parse is reused
    again, _ = _build(root, config, threading.Semaphore(1))
    assert not isinstance(again, Exception)
    assert IndexReport.of(root, *again).reused == report.files


def test_a_failing_build_ends_in_build_failed(tmp_path: Path) -> None:
    built, seen = _build(tmp_path / "absent", IndexConfig(), threading.Semaphore(1))
    assert isinstance(built, BuildFailed) and isinstance(built, RepomemError)
    assert str(built) and "exited with" not in str(built)  # the build's own reason
    assert seen == [("first", IndexConfig())]


def test_a_build_waits_for_its_turn_and_none_starts_once_stopping(tmp_path: Path) -> None:
    builds = threading.Semaphore(1)
    root = make_repo(tmp_path / "r", PY_FILES)
    builds.acquire()  # another folder's build holds the turn
    results: list[Built] = []
    asked = threading.Event()

    def stopping() -> bool:
        asked.set()
        return True  # the server stopped while the build waited

    process = BuildProcess(root, builds, lambda *p: None)
    process.start(IndexConfig(), first=results.append, done=results.append, stopping=stopping)
    assert not asked.wait(0.3)  # waiting for the turn
    builds.release()
    assert asked.wait(10)
    with builds:  # its turn over, it built nothing
        assert results == [] and not (root / ".repomem").exists()
    process.terminate()  # no build in progress: nothing to end

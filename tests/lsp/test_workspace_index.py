"""The language server's parts in process: the workspace index (built in a subprocess, kept
current from buffers and disk, served from the saved index at start), the completer on top
of it, the build process's protocol, workspace folders, the engine's loop, the editor log and
the ``serve`` command's arguments."""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from repos import make_repo

from lsp_server import command, update_schedule, workspace_index
from lsp_server.background_loop import BackgroundLoop
from lsp_server.build_index import main as build_main
from lsp_server.completer import COMPLETION, Completer, Cursor
from lsp_server.folders import Folders, folder_root
from lsp_server.logs import EditorLogHandler
from lsp_server.workspace_index import DocsReport, IndexReport, WorkspaceIndex
from repomem.config import BackendConfig, CompletionConfig, IndexConfig
from repomem.errors import RepomemError
from repomem.settings import Settings

CONFIG_PY = """\
from pkg.util import helper


def connect(opts):
    client = make_client(opts.host, opts.port, timeout=opts.timeout)
    return client
"""
FILES = {
    "pkg/__init__.py": "",
    "pkg/util.py": "def helper(x):\n    return x\n",
    "pkg/config.py": CONFIG_PY,
}
LEFT = "def run(opts):\n    client = make_client("
EXPECTED = "opts.host, opts.port, timeout=opts.timeout)"


class Events:
    """What the index tells the server, recorded."""

    def __init__(self) -> None:
        self.ready = threading.Event()
        self.loaded: list[tuple[int, int]] = []
        self.reports: list[IndexReport] = []
        self.failed: list[str] = []
        self.docs: list[DocsReport] = []
        self.stages: set[str] = set()

    def on_progress(self, stage: str, done: int, total: int) -> None:
        self.stages.add(stage)

    def on_loaded(self, files: int, fragments: int) -> None:
        self.loaded.append((files, fragments))

    def on_ready(self, report: IndexReport) -> None:
        self.reports.append(report)
        self.ready.set()

    def on_failed(self, message: str) -> None:
        self.failed.append(message)
        self.ready.set()

    def on_docs(self, report: DocsReport) -> None:
        self.docs.append(report)


def _poll(check: Callable[[], Any], timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out")


def _found(index: WorkspaceIndex, text: str) -> list[str]:
    hits = index.retrieve(text, k=3, alpha=0.0, exclusion=None)
    return [h.locations[0].path for h in hits if text in h.text]


def _py_files(repo: Path) -> int:
    return len(list(repo.rglob("*.py")))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", FILES)


@pytest.fixture
def started(repo: Path) -> Iterator[tuple[WorkspaceIndex, Events]]:
    events = Events()
    index = WorkspaceIndex(repo, IndexConfig(), events, threading.Semaphore(1))
    index.update_delay_s = 0.0
    index.start()
    assert events.ready.wait(120), "no index"
    yield index, events
    index.stop()


def test_builds_then_follows_buffers_and_disk(started: tuple[WorkspaceIndex, Events], repo: Path):
    index, events = started
    assert not events.failed and index.state == "ready"
    (report,) = events.reports
    assert report.files == index.files == _py_files(repo)
    assert events.stages  # progress came from the build process
    assert _found(index, "make_client") == ["pkg/config.py"]
    # an open buffer wins over the file on disk
    index.set_buffer("pkg/util.py", "def helper(x):\n    return buffered_marker(x)\n")
    assert _poll(lambda: _found(index, "buffered_marker")) == ["pkg/util.py"]
    assert index.buffer("pkg/util.py") is not None
    index.close_buffer("pkg/util.py")
    _poll(lambda: not _found(index, "buffered_marker"))
    # a file written on disk is indexed once the editor says it changed
    (repo / "pkg" / "extra.py").write_text("def extra():\n    return disk_marker()\n")
    index.files_changed(["pkg/extra.py"])
    assert _poll(lambda: _found(index, "disk_marker")) == ["pkg/extra.py"]


def _restarted(repo: Path, config: IndexConfig | None = None) -> tuple[WorkspaceIndex, Events]:
    """A second start on ``repo``, once its index is ready."""
    events = Events()
    again = WorkspaceIndex(repo, config or IndexConfig(), events, threading.Semaphore(1))
    again.start()
    assert events.ready.wait(120), "no index"
    return again, events


def test_a_saved_index_serves_until_the_build_is_done(
    started: tuple[WorkspaceIndex, Events], repo: Path
):
    first, _ = started
    first.stop()  # persists the index
    (repo / "pkg" / "util.py").write_text("def helper(x):\n    return x + 1\n")
    again, events = _restarted(repo)
    try:
        assert events.loaded and events.loaded[0][0] == _py_files(
            repo
        )  # the saved one, before the build
        (report,) = events.reports
        assert events.stages and (report.reparsed, report.reused) == (1, _py_files(repo) - 1)
        assert _found(again, "make_client") == ["pkg/config.py"]
    finally:
        again.stop()


def test_a_current_saved_index_is_served_without_a_build(
    started: tuple[WorkspaceIndex, Events], repo: Path
):
    first, _ = started
    first.set_buffer("pkg/util.py", "def helper(x):\n    return buffered_marker(x)\n")
    _poll(lambda: _found(first, "buffered_marker"))
    first.close_buffer("pkg/util.py")
    _poll(lambda: not _found(first, "buffered_marker"))
    first.stop()  # persists the index, as the files are on disk
    again, events = _restarted(repo)
    try:
        (report,) = events.reports
        assert not events.stages and again.state == "ready"  # no build process ran
        assert (report.files, report.reparsed, report.reused) == (_py_files(repo), 0, report.files)
        assert _found(again, "make_client") == ["pkg/config.py"]
        # still kept current, and rebuilt when the editor asks
        again.set_buffer("pkg/util.py", "def helper(x):\n    return typed_marker(x)\n")
        assert _poll(lambda: _found(again, "typed_marker")) == ["pkg/util.py"]
        again.request_build()
        assert _poll(lambda: len(events.reports) == 2) and events.stages
    finally:
        again.stop()
    # other index settings: built again with them
    wider, events = _restarted(repo, replace(IndexConfig(), fragment_lines=30))
    wider.stop()
    assert events.stages and events.reports[0].reparsed == _py_files(repo)


def test_non_stop_typing_is_tidied_between_updates(
    started: tuple[WorkspaceIndex, Events], monkeypatch: pytest.MonkeyPatch
):
    index, _ = started
    monkeypatch.setattr(workspace_index, "MAX_UNTIDY_S", 0.6)
    index.schedule.delay_s = 0.01
    updates, tidies = index.updates, index.tidies
    ends = time.monotonic() + 2.5
    n = 0
    while time.monotonic() < ends:  # never the pause of TIDY_DELAY_S that a tidy waits for
        n += 1
        index.set_buffer("pkg/util.py", f"def helper(x):\n    return x + {n}\n")
        time.sleep(0.05)
    assert index.updates > updates + 5 and index.tidies > tidies


def test_a_tidy_during_non_stop_typing_waits_for_the_next_completion(
    started: tuple[WorkspaceIndex, Events], monkeypatch: pytest.MonkeyPatch
):
    """A tidy holds the index's lock: while the user types on, it runs right after a
    completion finished, not when the next one may be arriving."""
    index, events = started
    _poll(lambda: events.docs and index.tidies)  # the doc memory's tidy is done
    monkeypatch.setattr(workspace_index, "MAX_UNTIDY_S", 0.2)
    monkeypatch.setattr(update_schedule, "MAX_TYPING_YIELD_S", 30.0)
    index.schedule.delay_s = 0.01
    updates, tidies = index.updates, index.tidies
    index.set_buffer("pkg/util.py", "def helper(x):\n    return x + 0\n")
    _poll(lambda: index.updates > updates)  # the first update since the last tidy
    index.schedule.delay_s = 5.0  # no pause from now on: the tidy is due by MAX_UNTIDY_S
    ends = time.monotonic() + 1.0
    n = 0
    while time.monotonic() < ends:
        n += 1
        index.set_buffer("pkg/util.py", f"def helper(x):\n    return x + {n}\n")
        time.sleep(0.05)
    assert index.tidies == tidies  # no completion finished yet
    with index.schedule.priority():
        pass
    assert _poll(lambda: index.tidies > tidies, timeout=5.0)


def test_the_doc_memory_opened_is_followed_by_a_tidy(started: tuple[WorkspaceIndex, Events]):
    """Opening the doc memory reads every file's text from the index: a tidy hands those
    pages back at the next quiet moment, though no edit came."""
    index, events = started
    _poll(lambda: events.docs)
    assert _poll(lambda: index.tidies >= 1)
    assert index.updates == 0


def test_no_workspace_indexes_nothing() -> None:
    events = Events()
    index = WorkspaceIndex(None, IndexConfig(), events, threading.Semaphore(1))
    index.start()
    assert index.state == "no-workspace"
    assert index.retrieve("anything", k=3, alpha=0.0, exclusion=None) == []
    assert index.definitions("a.py", "x = helper(") == []
    assert not events.ready.is_set()
    index.stop()


@pytest.mark.asyncio
async def test_the_completer_completes_caches_and_falls_back(
    started: tuple[WorkspaceIndex, Events], repo: Path
) -> None:
    index, _ = started
    warnings: list[str] = []
    completer = Completer(index, warnings.append)
    try:
        settings = Settings(completion=CompletionConfig(min_confidence=0.0))
        await completer.configure(settings)
        uri = (repo / "pkg" / "app.py").as_uri()
        cursor = Cursor(uri, "pkg/app.py", LEFT, "\n", 1)
        suggestion = await completer.complete(cursor, COMPLETION, 0)
        assert suggestion is not None and suggestion.text == EXPECTED
        assert "pkg/config.py" in suggestion.sources and suggestion.backend == "builtin"
        again = await completer.complete(cursor, COMPLETION, 0)
        assert again is not None and again.text == EXPECTED
        assert completer.stats.cache_hits == 1 and completer.stats.completions == 1
        # a backend that cannot start is reported once, and the built-in one completes
        missing = BackendConfig(backend="transformers", model=str(repo / "no-model"))
        await completer.configure(replace(settings, backend=missing))
        assert completer.backend_name == "builtin"
        (warning,) = warnings
        assert "cannot use the transformers backend" in warning and "no model directory" in warning
    finally:
        await completer.aclose()


def test_the_build_process_reports_progress_then_a_summary(repo: Path, tmp_path: Path) -> None:
    config = IndexConfig(index_dir=str(tmp_path / "idx"))
    out = io.StringIO()
    request = json.dumps({"root": str(repo), "config": asdict(config)})
    assert build_main(io.StringIO(request), out) == 0
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert all("progress" in m for m in lines[:-1]) and lines[:-1]
    assert lines[-1]["summary"]["files_by_language"] == {"python": _py_files(repo)}
    out = io.StringIO()
    missing = json.dumps({"root": str(tmp_path / "absent"), "config": asdict(config)})
    assert build_main(io.StringIO(missing), out) == 2
    assert "error" in json.loads(out.getvalue().splitlines()[-1])


def test_folders_serve_the_deepest_root(tmp_path: Path) -> None:
    outer = make_repo(tmp_path / "outer", {"a.py": "x = 1\n"})
    inner = make_repo(outer / "inner", {"b.py": "y = 2\n"})

    class Named:
        def __init__(self, root: Path | None) -> None:
            self.root = root

    folders = Folders(Named(None))  # type: ignore[arg-type]
    folders.add(Named(folder_root(outer.as_uri())))  # type: ignore[arg-type]
    folders.add(Named(folder_root(None, str(inner))))  # type: ignore[arg-type]
    assert folders.for_uri((inner / "b.py").as_uri()).root == inner.resolve()
    assert folders.for_uri((outer / "a.py").as_uri()).root == outer.resolve()
    assert folders.for_uri((tmp_path / "c.py").as_uri()) is folders.loose
    assert folders.first.root == outer.resolve() and len(folders) == 2
    assert folders.remove(inner.resolve()) is not None
    assert folders.for_uri((inner / "b.py").as_uri()).root == outer.resolve()
    assert folders.everyone()[-1] is folders.loose
    assert folder_root((tmp_path / "absent").as_uri()) is None


@pytest.mark.asyncio
async def test_the_background_loop_runs_and_cancels() -> None:
    loop = BackgroundLoop("test-loop")
    try:
        thread_name = await loop.call(lambda: threading.current_thread().name)
        assert thread_name == "test-loop"
        started = asyncio.Event()
        here = asyncio.get_running_loop()
        cancelled = threading.Event()

        async def forever() -> None:
            here.call_soon_threadsafe(started.set)
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                cancelled.set()
                raise

        task = asyncio.ensure_future(loop.run(forever()))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await asyncio.to_thread(cancelled.wait, 5)  # cancelled there too
    finally:
        loop.stop()
    assert loop.loop.is_closed()


@pytest.mark.asyncio
async def test_repomem_logs_reach_the_editor_from_any_thread() -> None:
    sent: list[types.LogMessageParams] = []
    handler = EditorLogHandler(sent.append)
    logger = logging.getLogger("repomem.test_editor_log")
    logger.setLevel(logging.INFO)
    handler.attach(asyncio.get_running_loop())
    try:
        logger.warning("on the loop")
        thread = threading.Thread(target=logger.error, args=("from a thread",))
        thread.start()
        thread.join()
        await asyncio.sleep(0.05)  # the thread's record is sent by the loop
        logger.debug("too detailed")
    finally:
        for name in ("repomem", "lsp_server"):
            logging.getLogger(name).removeHandler(handler)
    assert [(m.type, m.message) for m in sent] == [
        (types.MessageType.Warning, "[repomem] on the loop"),
        (types.MessageType.Error, "[repomem] from a thread"),
    ]


@pytest.mark.parametrize("tcp", ["2087", "localhost:", ":2087", "host:99999", "host:port"])
def test_serve_rejects_a_bad_tcp_address(tcp: str) -> None:
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    args = parser.parse_args(["--tcp", tcp])
    with pytest.raises(RepomemError, match="HOST:PORT"):
        command.run(args)

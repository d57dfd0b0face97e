"""The workspace's index, built and kept current off the editor's event loop.

A worker thread owns every change to the index: it applies the open buffers' text
(``RepoIndex.update_file``, the live buffer wins over the file on disk) and files changed on
disk (``RepoIndex.reload_file``), coalescing bursts so that only the latest text of a file is
indexed (when, :mod:`lsp_server.update_schedule` decides), and persists the index a little
after the editor saves. Full (re)builds run in a separate process
(:mod:`lsp_server.build_process`), and the index they save is swapped in when done; until then
retrieval answers from the saved index loaded at start-up (if any), which keeps receiving the
edits. The worker also opens the doc memory (:mod:`lsp_server.workspace_docs`) next to the
index. One lock serializes retrieval with changes, since ``RepoIndex`` is not thread-safe;
retrieval itself is the context layer's (``DocAwareRetriever`` while docs are merged, else
``CodeRetriever``) over the index of the moment. While a question is answered from the memory
(:meth:`WorkspaceIndex.asking`), index changes wait.
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Protocol

from lsp_server import indexed_files
from lsp_server.build_process import BuildProcess, Built, Current, IndexReport
from lsp_server.update_schedule import UpdateSchedule
from lsp_server.workspace_docs import DocsReport, WorkspaceDocs
from repomem.config import IndexConfig
from repomem.context.definitions import DefinitionHit
from repomem.context.retriever import CodeRetriever, Retriever
from repomem.core import Exclusion, RetrievedFragment
from repomem.docmem.retriever import DocAwareRetriever
from repomem.errors import RepomemError
from repomem.index.files import scan_files
from repomem.index.occurrences import Occurrence
from repomem.index.opening import open_index, unchanged
from repomem.index.repo import RepoIndex

logger = logging.getLogger(__name__)

#: the index is persisted this long after the editor last saved a file
SAVE_DELAY_S = 2.0
#: and tidied (``RepoIndex.tidy``) once no update came for this long
TIDY_DELAY_S = 0.5
#: or, while the user types on without such a pause, between two updates this long after the
#: first update since the last tidy: what a tidy hands back (the mapped index's pages read,
#: the allocator's free memory, BM25's delta) otherwise piles up for as long as the typing goes on
MAX_UNTIDY_S = 5.0


class IndexEvents(Protocol):
    """What the server hears from the index; called from worker threads."""

    def on_progress(self, stage: str, done: int, total: int) -> None: ...

    def on_loaded(self, files: int, fragments: int) -> None: ...

    def on_ready(self, report: IndexReport) -> None: ...

    def on_failed(self, message: str) -> None: ...

    def on_docs(self, report: DocsReport) -> None: ...


class WorkspaceIndex(Retriever):
    """The index of the repository at ``root`` (None: no workspace, nothing is indexed);
    ``builds`` is shared by the indexes of one server (see :mod:`lsp_server.build_process`)."""

    def __init__(
        self,
        root: Path | None,
        config: IndexConfig,
        events: IndexEvents,
        builds: threading.Semaphore,
    ) -> None:
        self.root = root
        self._config = config
        self._events = events
        self._index: RepoIndex | None = None
        self._lock = threading.Lock()  # the index's content: retrieval versus changes
        self._cond = threading.Condition()  # the job state below
        self.schedule = UpdateSchedule(self._cond)
        self.docs = WorkspaceDocs(root, self._cond, self._lock, events.on_docs)
        self._builder = BuildProcess(root, builds, events.on_progress) if root else None
        self._buffers: dict[str, str] = {}
        self._since_build: set[str] | None = None
        self._build_wanted = False
        self._building = False
        self._built: Built | None = None
        self._save_at: float | None = None
        self._tidy_at: float | None = None
        self._tidy_by = math.inf  # MAX_UNTIDY_S after the first update since the last tidy
        self._dirty = False
        self._stopping = False
        self._changes = 0
        self._changes_of: dict[str, int] = {}
        self._candidates: set[str] | None = None
        self._asking = 0
        self._job_running = False
        self.state = "idle" if root is not None else "no-workspace"
        self.files = 0
        self.fragments = 0
        self.updates = 0
        self.tidies = 0
        self.last_update_s = 0.0
        self._thread = threading.Thread(target=self._work, name="repomem-index", daemon=True)

    # ------------------------------------------------------------------ called by the server
    def start(self) -> None:
        if self.root is None or self._thread.is_alive():
            return
        self.request_build()
        self._thread.start()

    @property
    def config(self) -> IndexConfig:
        return self._config

    def reconfigure(self, config: IndexConfig) -> None:
        """Rebuild with ``config`` if it differs from the current one."""
        with self._cond:
            if config == self._config:
                return
            self._config = config
        self.request_build()

    def docs_pending(self) -> bool:
        """Whether a doc memory is still to come: the docs are being read, or will be once
        the index about to be built, being built or just swapped in is ready."""
        with self._cond:
            return self.docs.pending(self.state in ("idle", "indexing"))

    def wait_for_docs(self, timeout: float) -> bool:
        """Block until no doc memory is pending (True) or ``timeout`` seconds pass (False);
        each job the worker ends wakes it. Call it off the event loop."""
        with self._cond:
            return self._cond.wait_for(lambda: not self.docs_pending(), timeout)

    @contextlib.contextmanager
    def asking(self) -> Iterator[None]:
        """Held while a question is answered from the doc memory, which reads the index
        without the lock across model calls: the worker finishes its job and then changes
        nothing until the answer is done. Blocks: call it off the event loop."""
        with self._cond:
            self._asking += 1
            while self._job_running:
                self._cond.wait()
        try:
            yield
        finally:
            with self._cond:
                self._asking -= 1
                self._cond.notify_all()

    def request_build(self) -> None:
        if self.root is None:
            return
        with self._cond:
            self._build_wanted = True
            self.state = "indexing"
            self._cond.notify_all()

    def set_buffer(self, path: str, text: str) -> None:
        """An open document's current text; it replaces the file on disk in the index."""
        with self._cond:
            self._buffers[path] = text
            self.schedule.typed(path)
            self._cond.notify_all()

    def buffer(self, path: str) -> str | None:
        """The open document's text as last set (None: not open)."""
        with self._cond:
            return self._buffers.get(path)

    def close_buffer(self, path: str) -> None:
        """The document was closed: the file on disk is the truth again."""
        with self._cond:
            if self._buffers.pop(path, None) is not None:
                self.schedule.now(path)
                self._cond.notify_all()

    def saved(self, path: str) -> None:
        """The editor saved ``path``: persist the index soon (not on every keystroke)."""
        with self._cond:
            if path not in self._buffers:
                self.schedule.now(path)
            self._candidates = None  # a first save can make a new file part of the repository
            self.docs.changed(path)
            self._save_at = time.monotonic() + SAVE_DELAY_S
            self._cond.notify_all()

    def files_changed(self, paths: Iterable[str]) -> None:
        """Files changed on disk; open documents are left alone (their buffer wins)."""
        with self._cond:
            for path in paths:
                if path in self._buffers or indexed_files.outside(self.root, self._config, path):
                    continue
                self.docs.changed(path)
                self.schedule.now(path)
                self._candidates = None
            self._cond.notify_all()

    def epoch(self, path: str | None) -> int:
        """How many index changes concerned files other than ``path``."""
        return self._changes - self._changes_of.get(path or "", 0)

    def _retriever(self) -> Retriever | None:
        """The context layer's retriever over the index of the moment (lock held); None
        before the first index."""
        index, memory = self._index, self.docs.memory
        if index is None:
            return None
        if self.docs.in_completions and memory is not None:
            return DocAwareRetriever(index, memory)
        return CodeRetriever(index)

    def retrieve(
        self, query: str, *, k: int, alpha: float, exclusion: Exclusion | None
    ) -> list[RetrievedFragment]:
        """Fragments for ``query`` from what is indexed now (nothing before the first index),
        merged with doc segments when ``docs.in_completions`` is set and the memory is open."""
        with self._lock:
            retriever = self._retriever()
            return (
                []
                if retriever is None
                else retriever.retrieve(query, k=k, alpha=alpha, exclusion=exclusion)
            )

    def definitions(
        self, path: str, left_context: str, *, draft: str = "", window: int = 20
    ) -> list[DefinitionHit]:
        """Cards of the definitions the cursor's code uses (none before the first index)."""
        with self._lock:
            retriever = self._retriever()
            return (
                []
                if retriever is None
                else retriever.definitions(path, left_context, draft=draft, window=window)
            )

    def occurrences(self, path: str, left_context: str) -> list[Occurrence]:
        """Where the context's end reappears in other files (none before the first index)."""
        with self._lock:
            retriever = self._retriever()
            return [] if retriever is None else retriever.occurrences(path, left_context)

    def usages(
        self,
        query: str,
        path: str,
        hits: Sequence[DefinitionHit],
        *,
        k: int,
        exclusion: Exclusion | None,
        retrieved: Sequence[RetrievedFragment] = (),
    ) -> list[RetrievedFragment]:
        """Windows calling the best of ``hits`` (none before the first index)."""
        with self._lock:
            retriever = self._retriever()
            return (
                []
                if retriever is None
                else retriever.usages(
                    query, path, hits, k=k, exclusion=exclusion, retrieved=retrieved
                )
            )

    def file_text(self, path: str) -> str | None:
        """The indexed text of ``path`` (None: not indexed)."""
        with self._lock:
            return None if self._index is None else self._index.file_text(path)

    def stop(self, timeout: float = 10.0) -> None:
        """Finish the current job, persist unsaved changes, and end the worker (a build in
        progress is abandoned; it writes its index atomically, so nothing is half-written)."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._builder is not None:
            self._builder.terminate()
        if self._thread.is_alive():
            self._thread.join(timeout)

    # ------------------------------------------------------------------ worker thread
    def _work(self) -> None:
        while True:
            with self._cond:
                job = self._next_job()
            if job == "stop":
                self._save()
                return
            try:
                if job == "docs":
                    assert self._index is not None
                    self.docs.open(self._index)
                    self._tidy_soon()
                elif job == "swap":
                    self._swap()
                elif job == "build":
                    self._start_build()
                elif job == "update":
                    self._apply_pending()
                elif job == "tidy":
                    self._tidy()
                else:
                    self._save()
            except Exception:  # the worker must outlive any one bad job
                logger.exception("index %s failed", job)
            finally:
                with self._cond:
                    self._job_running = False
                    self._cond.notify_all()

    def _next_job(self) -> str:
        job = self._wait_for_job()
        self._job_running = job != "stop"
        return job

    def _wait_for_job(self) -> str:
        while True:
            if self._stopping:
                return "stop"
            if self._asking:
                self._cond.wait()
                continue
            if self._built is not None:
                return "swap"
            if self._build_wanted and not self._building:
                return "build"
            now = time.monotonic()
            next_due = None
            if len(self.schedule) and self._index is not None:
                ready, next_due, _ = self.schedule.ready(now)
                if ready:
                    return "update"
            if self._save_at is not None and now >= self._save_at:
                return "save"
            if self.docs.wanted and self._index is not None and next_due is None:
                return "docs"
            tidy_at = None  # after a pause, or between updates once typing went on too long
            if self._tidy_at is not None:
                tidy_at = min(self._tidy_by, self._tidy_at if next_due is None else math.inf)
            if tidy_at is not None and now >= tidy_at:
                return "tidy"
            wake = [t for t in (next_due, self._save_at, tidy_at) if t is not None]
            self._cond.wait(min(wake) - now if wake else None)

    def _start_build(self) -> None:
        with self._cond:
            self._build_wanted = False
            self._building = True
            self._since_build = set()
            config = self._config
        assert self._builder is not None
        self._builder.start(
            config, first=self._load_saved, done=self._built_now, stopping=lambda: self._stopping
        )

    def _built_now(self, result: Built) -> None:
        with self._cond:
            self._built = result
            self._cond.notify_all()

    def _load_saved(self, config: IndexConfig) -> Current | None:
        """Serve the saved index as it is while the build brings it up to date (once: not
        when an index is served already). Where it is current (``config``'s settings, and
        the files on disk as it holds them), as when the editor starts again on a repository
        it was closed on, there is nothing to build: it is returned with a build's summary."""
        if self._index is not None:
            return None
        assert self.root is not None
        try:
            opened = open_index(self.root, config, build=False, say=logger.info)
        except RepomemError as exc:  # IndexNotFound, IndexUnreadable: build from scratch
            logger.info("no saved index to start from (%s)", exc)
            return None
        index = opened.index
        index.warm()
        with self._lock:
            self._index = index
            self._count(index)
        with self._cond:
            self._changes += 1
            for path in self._buffers:
                self.schedule.now(path)
            self._cond.notify_all()
        self._events.on_loaded(self.files, self.fragments)
        if opened.changed:
            return None
        scan = scan_files(self.root, config, texts=False)  # read while the index serves
        with self._lock:  # the worker may be applying an open buffer meanwhile
            if not unchanged(index, scan):
                return None
        logger.info("the saved index of %s is current: nothing to build", self.root)
        summary = {"fragments": index.fragment_count, "reparsed": 0, "reused": index.file_count}
        return index, {**summary, "skipped": scan.skipped}

    def _swap(self) -> None:
        with self._cond:
            result, self._built = self._built, None
            self._building = False
            since, self._since_build = self._since_build or set(), None
        if isinstance(result, Exception):
            with self._cond:
                if not self._build_wanted:
                    self.state = "failed" if self._index is None else "ready"
            self._events.on_failed(f"indexing {self.root} failed: {result}")
            return
        assert result is not None and self.root is not None
        index, summary, seconds = result
        with self._lock:
            self._index = index
            self._count(index)
        with self._cond:
            self._changes += 1
            for path in {*self._buffers, *since}:
                self.schedule.now(path)
            self._candidates = None
            self.docs.wanted = True  # the memory links to the new index's fragments
            if not self._build_wanted:
                self.state = "ready"
        self._events.on_ready(IndexReport.of(self.root, index, summary, seconds))

    def _apply_pending(self) -> None:
        with self._cond:
            _, _, stale = self.schedule.ready(time.monotonic())
        self.schedule.yield_to_completions(stale, lambda: self._stopping)
        with self._cond:
            batch, _, _ = self.schedule.ready(time.monotonic())
            self.schedule.take(batch)
            texts = {path: self._buffers.get(path) for path in batch}
        index = self._index
        assert index is not None and self.root is not None
        if any(path not in index for path in batch) and self._candidates is None:
            self._candidates = indexed_files.candidates(self.root, self._config)
        for path in batch:
            if path not in index and path not in (self._candidates or ()):
                continue  # ignored by git or the settings, or not on disk yet
            if not indexed_files.is_code(path):
                continue  # docs and other files the code index does not hold
            text = texts[path]
            if text is not None and text == index.file_text(path):
                continue  # e.g. a document opened unchanged
            if text is not None and indexed_files.kept_out(self.root, self._config, path, text):
                continue
            started = time.perf_counter()
            try:
                with self._lock:
                    if text is None:
                        index.reload_file(path)
                    else:
                        index.update_file(path, text)
                    self._count(index)
            except RepomemError as exc:
                logger.warning("cannot index %s: %s", path, exc)
                continue
            elapsed = time.perf_counter() - started
            with self._cond:
                self._changes += 1
                self._changes_of[path] = self._changes_of.get(path, 0) + 1
                self._dirty = True
                self._tidy_at = time.monotonic() + TIDY_DELAY_S
                self._tidy_by = min(self._tidy_by, time.monotonic() + MAX_UNTIDY_S)
                if self._since_build is not None:
                    self._since_build.add(path)
            self.updates += 1
            self.last_update_s = elapsed
            logger.debug("indexed %s in %.1f ms", path, elapsed * 1e3)

    def _tidy_soon(self) -> None:
        """Tidy at the next quiet moment, though no update came: opening the doc memory
        read every file's text from the mapped index (~100 MB of pages on the Linux
        kernel's kernel/ mm/ fs/ include/), which otherwise stayed until the first edit's
        tidy and came on top of what that edit reads."""
        with self._cond:
            self._tidy_at = time.monotonic()
            self._cond.notify_all()

    def _tidy(self) -> None:
        """While the user types, after the next completion (as a stale update): a tidy holds
        the lock for tens of milliseconds, which a completion arriving meanwhile waits out."""
        with self._cond:
            self._tidy_at, self._tidy_by = None, math.inf
            typing = self.schedule.typing(time.monotonic())
        self.schedule.yield_to_completions(typing, lambda: self._stopping)
        index = self._index
        if index is not None:
            started = time.perf_counter()
            with self._lock:
                index.tidy()
                if self.docs.memory is not None:
                    self.docs.memory.sync_code()
            self.tidies += 1
            logger.debug("tidied the index in %.1f ms", (time.perf_counter() - started) * 1e3)

    def _save(self) -> None:
        with self._cond:
            self._save_at = None
            dirty, self._dirty = self._dirty, False
        if not dirty or self._index is None:
            return
        started = time.perf_counter()
        try:
            with self._lock:
                self._index.save()
        except (RepomemError, OSError) as exc:
            logger.warning("cannot save the index of %s: %s", self.root, exc)
            return
        logger.info("saved the index of %s in %.2f s", self.root, time.perf_counter() - started)

    def _count(self, index: RepoIndex) -> None:
        self.files = index.file_count
        self.fragments = index.fragment_count

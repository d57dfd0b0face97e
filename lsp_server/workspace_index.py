"""The workspace's index, built and kept current off the editor's event loop.

A worker thread owns every change to the index: it applies the open buffers' text
(``RepoIndex.update_file``, the live buffer wins over the file on disk) and files changed on
disk (``RepoIndex.reload_file``), coalescing bursts so that only the latest text of a file is
indexed, and persists the index a little after the editor saves. Full (re)builds run in a
separate process (:mod:`lsp_server.build_index`) watched by a thread, and the index they save is
loaded and swapped in when done; until then retrieval answers from the saved index loaded at
start-up (if any), which keeps receiving the edits. One lock serializes retrieval with
changes, since ``RepoIndex`` is not thread-safe.

A completion that arrives with a keystroke should not queue behind that keystroke's index
update (the update holds the lock for as long as it takes, and it competes for the interpreter
meanwhile). So a document being typed in is re-indexed once typing pauses for ``update_delay_s``
(or, during non-stop typing, every ``MAX_STALE_S``, right after a completion finished, when the
next keystroke is furthest away), and an update waits a little for completions in progress
(see :meth:`WorkspaceIndex.priority`). Files changed on disk are re-indexed at once.

The doc memory (:class:`~repomem.docmem.memory.DocMemory`) is opened by the worker next to
the index, after each full index is swapped in and again when a doc file is saved or changes
on disk (only changed documents are segmented again). Its scoring space follows code edits when
the index tidies, not at each query (``DocMemory.follow_code``). With ``docs`` set, retrieval
merges doc segments with code fragments as ``repomem complete --docs`` does. While a question
is answered from the memory (:meth:`WorkspaceIndex.asking`), index changes wait.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from repomem.config import DocMemoryConfig, IndexConfig
from repomem.context.definitions import DefinitionHit, find_definitions
from repomem.context.usages import find_usages
from repomem.core import Exclusion, RetrievedFragment
from repomem.docmem.memory import DocMemory, NoDocs, is_doc
from repomem.docmem.model import EXTRACTIVE
from repomem.docmem.retriever import merge_ranked
from repomem.errors import RepomemError
from repomem.index.files import FileSkipped, check_prompt_text, list_candidates, skip_explanation
from repomem.index.languages import language_for_path
from repomem.index.occurrences import Occurrence, find_occurrences
from repomem.index.opening import open_index
from repomem.index.parsing import supported
from repomem.index.repo import RepoIndex

logger = logging.getLogger(__name__)

#: an update waits at least this long, so a completion sent right after a keystroke goes first
SETTLE_S = 0.01
#: how long a document must be quiet before its new text is indexed, unless configured
DEFAULT_UPDATE_DELAY_S = 0.15
#: during non-stop typing, a document is re-indexed at least this often
MAX_STALE_S = 3.0
#: and never waits longer than this for completions in progress
MAX_YIELD_S = 0.25
#: nor, for a document being typed in, longer than this for the next completion to finish
MAX_TYPING_YIELD_S = 1.0
#: the index is persisted this long after the editor last saved a file
SAVE_DELAY_S = 2.0
#: and tidied (``RepoIndex.tidy``) once no update came for this long
TIDY_DELAY_S = 0.5


@dataclass(frozen=True)
class IndexReport:
    """What a finished (re)build produced; sent to the editor as ``repomem/indexReady``."""

    root: str
    files: int
    fragments: int
    reparsed: int
    reused: int
    skipped: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class BuildFailed(RepomemError):
    """The indexing process ended without an index."""


@dataclass(frozen=True)
class DocsReport:
    """What opening the doc memory found (``documents`` 0: the repository has no docs)."""

    documents: int
    segments: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class IndexEvents(Protocol):
    """What the server hears from the index; called from worker threads."""

    def on_progress(self, stage: str, done: int, total: int) -> None: ...

    def on_loaded(self, files: int, fragments: int) -> None: ...

    def on_ready(self, report: IndexReport) -> None: ...

    def on_failed(self, message: str) -> None: ...

    def on_docs(self, report: DocsReport) -> None: ...


class WorkspaceIndex:
    """The index of the repository at ``root`` (None: no workspace, nothing is indexed).

    ``builds`` is shared by the indexes of one server: a build holds it from loading the saved
    index to loading the new one, so the folders of a workspace are indexed one at a time and
    their peak memory does not add up.
    """

    def __init__(
        self,
        root: Path | None,
        config: IndexConfig,
        events: IndexEvents,
        builds: threading.Semaphore,
    ) -> None:
        self.root = root
        self._builds = builds
        self._config = config
        self._events = events
        self._index: RepoIndex | None = None
        self._lock = threading.Lock()  # the index's content: retrieval versus changes
        self._cond = threading.Condition()  # the job state below
        self._buffers: dict[str, str] = {}
        self._pending: dict[str, tuple[float, float]] = {}  # path: (first, last) change time
        self._since_build: set[str] | None = None
        self._build_wanted = False
        self._building = False
        self._built: tuple[RepoIndex, dict[str, Any], float] | Exception | None = None
        self._builder: subprocess.Popen[str] | None = None
        self._save_at: float | None = None
        self._tidy_at: float | None = None
        self._dirty = False
        self._readers = 0
        self._finished = 0
        self._stopping = False
        self._changes = 0
        self._changes_of: dict[str, int] = {}
        self._candidates: set[str] | None = None
        self._memory: DocMemory | None = None
        self._docs_config = DocMemoryConfig()
        self._docs_wanted = False
        self._asking = 0
        self._job_running = False
        self.docs = False  # whether retrieval merges doc segments with code fragments
        self.doc_state = "waiting"  # waiting | reading | ready | none | failed
        self.doc_documents = 0
        self.doc_segments = 0
        self.update_delay_s = DEFAULT_UPDATE_DELAY_S
        self.state = "idle" if root is not None else "no-workspace"
        self.files = 0
        self.fragments = 0
        self.updates = 0
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

    def configure_docs(self, config: DocMemoryConfig) -> None:
        """Read the docs again with ``config`` if it differs from the current one."""
        with self._cond:
            if config == self._docs_config:
                return
            self._docs_config = config
            self._docs_wanted = self._docs_wanted or self._memory is not None
            self._cond.notify_all()

    @property
    def memory(self) -> DocMemory | None:
        """The doc memory (None before it is open, or when the repository has no docs)."""
        return self._memory

    def docs_pending(self) -> bool:
        """Whether a doc memory is still to come: the docs are being read, or will be once
        the index about to be built, being built or just swapped in is ready."""
        with self._cond:
            if self.doc_state == "reading":
                return True
            building = self.state in ("idle", "indexing")
            return self.doc_state == "waiting" and (building or self._docs_wanted)

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
            first = self._pending.get(path, (time.monotonic(), 0.0))[0]
            self._pending[path] = (first, time.monotonic())
            self._cond.notify_all()

    def buffer(self, path: str) -> str | None:
        """The open document's text as last set (None: not open)."""
        with self._cond:
            return self._buffers.get(path)

    def close_buffer(self, path: str) -> None:
        """The document was closed: the file on disk is the truth again."""
        with self._cond:
            if self._buffers.pop(path, None) is not None:
                self._queue_now(path)
                self._cond.notify_all()

    def saved(self, path: str) -> None:
        """The editor saved ``path``: persist the index soon (not on every keystroke)."""
        with self._cond:
            if path not in self._buffers:
                self._queue_now(path)
            self._candidates = None  # a first save can make a new file part of the repository
            self._docs_wanted = self._docs_wanted or is_doc(path)
            self._save_at = time.monotonic() + SAVE_DELAY_S
            self._cond.notify_all()

    def files_changed(self, paths: Iterable[str]) -> None:
        """Files changed on disk; open documents are left alone (their buffer wins)."""
        with self._cond:
            for path in paths:
                if path in self._buffers or self._outside_index(path):
                    continue
                self._docs_wanted = self._docs_wanted or is_doc(path)
                self._queue_now(path)
                self._candidates = None
            self._cond.notify_all()

    def _queue_now(self, path: str) -> None:
        self._pending[path] = (-math.inf, -math.inf)

    def _ready(self, now: float) -> tuple[list[str], float | None, bool]:
        """Pending paths due for indexing, when the next one is due (None: none left), and
        whether one is due only because the user has been typing in it for too long."""
        delay = max(self.update_delay_s, SETTLE_S)
        ready, next_due, stale = [], None, False
        for path, (first, last) in self._pending.items():
            due = min(first + MAX_STALE_S, last + delay)
            if due <= now:
                ready.append(path)
                stale = stale or last + delay > now
            elif next_due is None or due < next_due:
                next_due = due
        return ready, next_due, stale

    @contextlib.contextmanager
    def priority(self) -> Iterator[None]:
        """Held while a completion is being computed: index updates wait (a little) for it."""
        with self._cond:
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                self._finished += 1
                self._cond.notify_all()

    def epoch(self, path: str | None) -> int:
        """How many index changes concerned files other than ``path``."""
        return self._changes - self._changes_of.get(path or "", 0)

    @property
    def pending(self) -> int:
        return len(self._pending)

    def retrieve(
        self, query: str, *, k: int, alpha: float, exclusion: Exclusion | None
    ) -> list[RetrievedFragment]:
        """Fragments for ``query`` from what is indexed now (nothing before the first index),
        merged with doc segments when ``docs`` is set and the doc memory is open."""
        with self._lock:
            if self._index is None:
                return []
            code = self._index.retrieve(query, k=k, alpha=alpha, exclusion=exclusion)
            if not self.docs or self._memory is None:
                return code
            docs = self._memory.retrieve_for_code(query, k, alpha=alpha, exclusion=exclusion)
            return merge_ranked(code, docs, k)

    def definitions(
        self, path: str, left_context: str, *, draft: str = "", window: int = 20
    ) -> list[DefinitionHit]:
        """Cards of the definitions the cursor's code uses (none before the first index)."""
        with self._lock:
            if self._index is None:
                return []
            return find_definitions(self._index, path, left_context, draft=draft, window=window)

    def file_text(self, path: str) -> str | None:
        """The indexed text of ``path`` (None: not indexed)."""
        with self._lock:
            return None if self._index is None else self._index.file_text(path)

    def occurrences(self, path: str, left_context: str) -> list[Occurrence]:
        """Where the context's end reappears in other files (none before the first index)."""
        with self._lock:
            if self._index is None:
                return []
            return find_occurrences(self._index, path, left_context)

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
            if self._index is None:
                return []
            return find_usages(
                self._index, query, path, hits, k=k, exclusion=exclusion, retrieved=retrieved
            )

    def stop(self, timeout: float = 10.0) -> None:
        """Finish the current job, persist unsaved changes, and end the worker (a build in
        progress is abandoned; it writes its index atomically, so nothing is half-written)."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        builder = self._builder
        if builder is not None and builder.poll() is None:
            builder.terminate()
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
                    self._open_docs()
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
            if self._pending and self._index is not None:
                ready, next_due, _ = self._ready(now)
                if ready:
                    return "update"
            if self._save_at is not None and now >= self._save_at:
                return "save"
            if self._docs_wanted and self._index is not None and next_due is None:
                return "docs"
            tidy_at = self._tidy_at if next_due is None else None  # updates waiting go first
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
        threading.Thread(
            target=self._build_in_turn, args=(config,), name="repomem-build", daemon=True
        ).start()

    def _build_in_turn(self, config: IndexConfig) -> None:
        """Build once no other index of the server is building (see ``builds``)."""
        with self._builds:
            if not self._stopping:
                self._build(config)

    def _build(self, config: IndexConfig) -> None:
        assert self.root is not None
        started = time.perf_counter()
        result: tuple[RepoIndex, dict[str, Any], float] | Exception
        try:
            if self._index is None:
                self._load_saved(config)
            summary = self._build_in_subprocess(config)
            index = RepoIndex.load(self.root, config)
            index.warm()
            result = (index, summary, time.perf_counter() - started)
        except Exception as exc:  # reported to the editor; the server keeps serving
            if not isinstance(exc, RepomemError | OSError):
                logger.exception("indexing %s failed", self.root)
            result = exc
        with self._cond:
            self._built = result
            self._cond.notify_all()

    def _build_in_subprocess(self, config: IndexConfig) -> dict[str, Any]:
        """Run :mod:`lsp_server.build_index`; its summary, or ``BuildFailed``. ``-P``: the
        server's working directory is wherever the editor started it, and ``-m`` would put it
        first on ``sys.path``, where a folder named ``repomem`` hides the installed package."""
        request = json.dumps({"root": str(self.root), "config": asdict(config)})
        with subprocess.Popen(
            [sys.executable, "-P", "-m", "lsp_server.build_index"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        ) as proc:
            self._builder = proc
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(request)
            proc.stdin.close()
            outcome: dict[str, Any] = {}
            for line in proc.stdout:
                message = json.loads(line)
                if "progress" in message:
                    self._events.on_progress(*message["progress"])
                else:
                    outcome = message
        self._builder = None
        if "summary" in outcome:
            return outcome["summary"]
        reason = outcome.get("error") or f"the indexing process exited with {proc.returncode}"
        raise BuildFailed(reason)

    def _load_saved(self, config: IndexConfig) -> None:
        assert self.root is not None
        try:  # the saved index as it is, served while the build brings it up to date
            index = open_index(self.root, config, build=False, say=logger.info).index
        except RepomemError as exc:  # IndexNotFound, IndexUnreadable: build from scratch
            logger.info("no saved index to start from (%s)", exc)
            return
        index.warm()
        with self._lock:
            self._index = index
            self._count(index)
        with self._cond:
            self._changes += 1
            for path in self._buffers:
                self._queue_now(path)
            self._cond.notify_all()
        self._events.on_loaded(self.files, self.fragments)

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
                self._queue_now(path)
            self._candidates = None
            self._docs_wanted = True  # the memory links to the new index's fragments
            if not self._build_wanted:
                self.state = "ready"
        self._events.on_ready(
            IndexReport(
                root=str(self.root),
                files=index.file_count,
                fragments=summary["fragments"],
                reparsed=summary["reparsed"],
                reused=summary["reused"],
                skipped=sum(summary["skipped"].values()),
                seconds=round(seconds, 3),
            )
        )

    def _apply_pending(self) -> None:
        with self._cond:
            _, _, stale = self._ready(time.monotonic())
        self._yield_to_completions(stale)
        with self._cond:
            batch, _, _ = self._ready(time.monotonic())
            for path in batch:
                del self._pending[path]
            texts = {path: self._buffers.get(path) for path in batch}
        index = self._index
        assert index is not None and self.root is not None
        if any(path not in index for path in batch) and self._candidates is None:
            self._candidates = self._candidate_paths()
        for path in batch:
            if path not in index and path not in (self._candidates or ()):
                continue  # ignored by git or the settings, or not on disk yet
            if not _is_code(path):
                continue  # docs and other files the code index does not hold
            text = texts[path]
            if text is not None and text == index.file_text(path):
                continue  # e.g. a document opened unchanged
            if text is not None and self._kept_out(path, text):
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
                if self._since_build is not None:
                    self._since_build.add(path)
            self.updates += 1
            self.last_update_s = elapsed
            logger.debug("indexed %s in %.1f ms", path, elapsed * 1e3)

    def _kept_out(self, path: str, text: str) -> bool:
        """Whether an open document's text must stay out of the index (and so out of every
        prompt): a secret or ignored file the index left out, or a buffer too large or binary."""
        assert self.root is not None
        try:
            check_prompt_text(self.root, path, self._config, text.encode("utf-8", "replace"))
        except FileSkipped as skip:
            logger.debug(
                "not indexing the open %s: it %s", path, skip_explanation(skip, self._config)
            )
            return True
        return False

    def _yield_to_completions(self, typing: bool) -> None:
        """Wait until no completion is being computed (at most ``MAX_YIELD_S``). While the
        user is ``typing``, wait for the next completion to finish instead (at most
        ``MAX_TYPING_YIELD_S``): the next keystroke, and its completion, are then furthest away."""
        if typing:
            seen = self._finished
            deadline = time.monotonic() + MAX_TYPING_YIELD_S
            with self._cond:
                while self._finished == seen and not self._stopping:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)
        deadline = time.monotonic() + MAX_YIELD_S
        with self._cond:
            while self._readers > 0 and not self._stopping:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)

    def _candidate_paths(self) -> set[str]:
        assert self.root is not None
        try:
            return set(list_candidates(self.root, self._config))
        except (RepomemError, OSError) as exc:
            logger.warning("cannot list the files of %s: %s", self.root, exc)
            return set()

    def _outside_index(self, path: str) -> bool:
        """Paths no index may hold (git's and the index's own files), to skip cheaply."""
        parts = PurePosixPath(path).parts
        index_dir = PurePosixPath(self._config.index_dir)
        if index_dir.is_absolute() and self.root is not None:
            with contextlib.suppress(ValueError):
                index_dir = PurePosixPath(Path(index_dir).relative_to(self.root).as_posix())
        return ".git" in parts or parts[: len(index_dir.parts)] == index_dir.parts

    def _tidy(self) -> None:
        with self._cond:
            self._tidy_at = None
        self._yield_to_completions(False)
        index = self._index
        if index is not None:
            started = time.perf_counter()
            with self._lock:
                index.tidy()
                if self._memory is not None:
                    self._memory.sync_code()
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

    def _open_docs(self) -> None:
        """Open the doc memory on the current index. The worker is the index's only writer, so
        it reads the index without the lock here, and completions go on meanwhile."""
        with self._cond:
            self._docs_wanted = False
            config = self._docs_config
            self.doc_state = "reading"
        index = self._index
        assert index is not None
        started = time.perf_counter()
        try:
            memory: DocMemory | None = DocMemory.open(index, config)
        except NoDocs as exc:
            logger.info("%s", exc)
            memory = None
        except Exception as exc:  # reported; completions go on from code alone
            if not isinstance(exc, RepomemError | OSError):
                logger.exception("opening the doc memory of %s failed", self.root)
            logger.warning("cannot open the doc memory of %s: %s", self.root, exc)
            self.doc_state = "failed"
            self._events.on_docs(DocsReport(0, 0, round(time.perf_counter() - started, 3)))
            return
        if memory is not None:
            memory.follow_code = False  # synced when the index tidies (see the module doc)
            memory.space("chunk", EXTRACTIVE, code_terms=True)  # what completion queries use
        with self._lock:
            self._memory = memory
        self.doc_state = "ready" if memory is not None else "none"
        self.doc_documents = len(memory.paths) if memory is not None else 0
        self.doc_segments = len(memory.segments) if memory is not None else 0
        seconds = round(time.perf_counter() - started, 3)
        self._events.on_docs(DocsReport(self.doc_documents, self.doc_segments, seconds))

    def _count(self, index: RepoIndex) -> None:
        self.files = index.file_count
        self.fragments = index.fragment_count


def _is_code(path: str) -> bool:
    language = language_for_path(path)
    return language is not None and supported(language)

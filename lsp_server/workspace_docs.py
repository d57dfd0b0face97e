"""A folder's doc memory: when it is (re)opened, and what the editor hears of it.

The doc memory (:class:`~repomem.docmem.memory.DocMemory`) is opened by the index's worker
next to the index, after each full index is swapped in and again when a doc file is saved or
changes on disk (only changed documents are segmented again). Its scoring space follows code
edits when the index tidies, not at each query (``DocMemory.follow_code``). With
``in_completions`` set, retrieval merges doc segments with code fragments as ``repomem
complete --docs`` does.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from repomem.config import DocMemoryConfig
from repomem.docmem.memory import DocMemory, NoDocs, is_doc
from repomem.docmem.model import EXTRACTIVE
from repomem.errors import RepomemError
from repomem.index.repo import RepoIndex

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DocsReport:
    """What opening the doc memory found (``documents`` 0: the repository has no docs)."""

    documents: int
    segments: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class WorkspaceDocs:
    """The doc memory of the repository at ``root`` and its state (``waiting``, ``reading``,
    ``ready``, ``none``: no docs, ``failed``). It shares the worker's condition ``cond``
    (``wanted`` and ``configure``) and the index's ``lock`` (``memory``, which retrieval reads)."""

    def __init__(
        self,
        root: Path | None,
        cond: threading.Condition,
        lock: threading.Lock,
        on_docs: Callable[[DocsReport], None],
    ) -> None:
        self.root = root
        self._cond = cond
        self._lock = lock
        self._on_docs = on_docs
        self.memory: DocMemory | None = None  # None before it is open, or with no docs
        self.config = DocMemoryConfig()
        self.wanted = False  # the worker is to (re)open the memory
        self.in_completions = False  # retrieval merges doc segments with code fragments
        self.state = "waiting"
        self.documents = 0
        self.segments = 0

    def configure(self, config: DocMemoryConfig) -> None:
        """Read the docs again with ``config`` if it differs from the current one."""
        with self._cond:
            if config == self.config:
                return
            self.config = config
            self.wanted = self.wanted or self.memory is not None
            self._cond.notify_all()

    def changed(self, path: str) -> None:
        """``path`` changed on disk or was saved: a doc among them is read again (cond held)."""
        self.wanted = self.wanted or is_doc(path)

    def pending(self, building: bool) -> bool:
        """Whether a memory is still to come: the docs are being read, or will be once the
        index ``building`` (or just swapped in) is ready (cond held)."""
        if self.state == "reading":
            return True
        return self.state == "waiting" and (building or self.wanted)

    def open(self, index: RepoIndex) -> None:
        """Open the doc memory on ``index``. The worker is the index's only writer, so it
        reads the index without the lock here, and completions go on meanwhile."""
        with self._cond:
            self.wanted = False
            config = self.config
            self.state = "reading"
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
            self.state = "failed"
            self._on_docs(DocsReport(0, 0, round(time.perf_counter() - started, 3)))
            return
        if memory is not None:
            memory.follow_code = False  # synced when the index tidies (see the module doc)
            memory.space("chunk", EXTRACTIVE, code_terms=True)  # what completion queries use
        with self._lock:
            self.memory = memory
        self.state = "ready" if memory is not None else "none"
        self.documents = len(memory.paths) if memory is not None else 0
        self.segments = len(memory.segments) if memory is not None else 0
        seconds = round(time.perf_counter() - started, 3)
        self._on_docs(DocsReport(self.documents, self.segments, seconds))

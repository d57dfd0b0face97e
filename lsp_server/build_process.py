"""A folder's full (re)build, run in a process of its own and loaded when done.

The build runs :mod:`lsp_server.build_index` in a child process watched by a thread; its
progress goes to the server as it comes, and the index it saves is loaded and warmed here, off
the worker that keeps applying edits to the index served meanwhile. ``builds`` is shared by
the indexes of one server: a build holds it from loading the saved index to loading the new
one, so the folders of a workspace are indexed one at a time and their peak memory does not
add up.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from repomem.config import IndexConfig
from repomem.errors import RepomemError
from repomem.index.repo import RepoIndex

logger = logging.getLogger(__name__)


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

    @classmethod
    def of(
        cls, root: Path, index: RepoIndex, summary: dict[str, Any], seconds: float
    ) -> IndexReport:
        """What the editor hears of a build done."""
        return cls(
            root=str(root),
            files=index.file_count,
            fragments=summary["fragments"],
            reparsed=summary["reparsed"],
            reused=summary["reused"],
            skipped=sum(summary["skipped"].values()),
            seconds=round(seconds, 3),
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class BuildFailed(RepomemError):
    """The indexing process ended without an index."""


#: a finished build: the loaded index, the build's summary and the seconds it took, or why not
Built = tuple[RepoIndex, dict[str, Any], float] | Exception
#: a saved index that needs no build, and the summary a build would have given
Current = tuple[RepoIndex, dict[str, Any]]


class BuildProcess:
    """Builds of the repository at ``root``, one at a time among the server's folders."""

    def __init__(
        self,
        root: Path,
        builds: threading.Semaphore,
        progress: Callable[[str, int, int], None],
    ) -> None:
        self.root = root
        self._builds = builds
        self._progress = progress
        self._process: subprocess.Popen[str] | None = None

    def start(
        self,
        config: IndexConfig,
        *,
        first: Callable[[IndexConfig], Current | None],
        done: Callable[[Built], None],
        stopping: Callable[[], bool],
    ) -> None:
        """Build in a thread once no other index of the server is building: ``first`` runs
        in the turn before the build (loading the saved index; what it returns is current,
        and no build runs), ``done`` gets the result."""

        def in_turn() -> None:
            with self._builds:
                if not stopping():
                    done(self._build(config, first))

        threading.Thread(target=in_turn, name="repomem-build", daemon=True).start()

    def terminate(self) -> None:
        """Abandon a build in progress (it writes its index atomically: nothing is half-written)."""
        process = self._process
        if process is not None and process.poll() is None:
            process.terminate()

    def _build(self, config: IndexConfig, first: Callable[[IndexConfig], Current | None]) -> Built:
        started = time.perf_counter()
        try:
            current = first(config)
            if current is not None:
                return (*current, time.perf_counter() - started)
            summary = self._run(config)
            index = RepoIndex.load(self.root, config)
            index.warm()
            return index, summary, time.perf_counter() - started
        except Exception as exc:  # reported to the editor; the server keeps serving
            if not isinstance(exc, RepomemError | OSError):
                logger.exception("indexing %s failed", self.root)
            return exc

    def _run(self, config: IndexConfig) -> dict[str, Any]:
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
            self._process = proc
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(request)
            proc.stdin.close()
            outcome: dict[str, Any] = {}
            for line in proc.stdout:
                message = json.loads(line)
                if "progress" in message:
                    self._progress(*message["progress"])
                else:
                    outcome = message
        self._process = None
        if "summary" in outcome:
            return outcome["summary"]
        reason = outcome.get("error") or f"the indexing process exited with {proc.returncode}"
        raise BuildFailed(reason)

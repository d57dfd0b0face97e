"""What the editor is told of each folder's state: progress bars while it is indexed and its
docs are read, the ``repomem/indexReady`` and ``repomem/docsReady`` notifications, and the
answer to ``repomem/status``."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from lsp_server.build_process import IndexReport
from lsp_server.folders import Folder, Folders
from lsp_server.workspace_docs import DocsReport

logger = logging.getLogger(__name__)

INDEX_READY = "repomem/indexReady"
DOCS_READY = "repomem/docsReady"
#: how long to wait for the client's answer to a request made during start-up
CLIENT_TIMEOUT_S = 5.0
#: share of the progress bar each indexing stage covers
_STAGES = {"scan": (0, 5), "parse": (5, 60), "relations": (60, 100)}


class Progress:
    """The server's progress bars (where the client shows them) and index notifications; the
    index events that lead to them arrive from worker threads and run here on the loop."""

    def __init__(
        self,
        server: LanguageServer,
        supports: Callable[[str], bool],
        warn: Callable[[str], None],
    ) -> None:
        self._server = server
        self._supports = supports
        self._warn = warn
        self._count = 0

    async def create(self, name: str) -> str | None:
        """A new progress token the client accepted; None where it shows no progress."""
        if not self._supports("window.work_done_progress"):
            return None
        self._count += 1
        token = f"{name}-{self._count}"
        try:
            await asyncio.wait_for(
                self._server.work_done_progress.create_async(token), CLIENT_TIMEOUT_S
            )
        except Exception as exc:  # no progress bar, but the work goes on
            logger.info("window/workDoneProgress/create failed: %s", exc)
            return None
        return token

    async def begin(self, folder: Folder) -> None:
        """The folder's indexing bar, unless it is up already."""
        if folder.progress_token is not None:
            return
        token = await self.create("repomem-index")
        if token is None:
            return
        folder.progress_token = token
        self._server.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(
                title="repomem: indexing", message=str(folder.root), percentage=0, cancellable=False
            ),
        )

    def report(self, folder: Folder, stage: str, done: int, total: int) -> None:
        if folder.progress_token is None:
            return
        low, high = _STAGES.get(stage, (0, 100))
        percentage = low + (high - low) * done // max(total, 1)
        self._server.work_done_progress.report(
            folder.progress_token,
            types.WorkDoneProgressReport(message=f"{stage} {done}/{total}", percentage=percentage),
        )

    def end(self, folder: Folder, message: str) -> None:
        if folder.progress_token is None:
            return
        token, folder.progress_token = folder.progress_token, None
        self.close(token, message)

    def show(self, token: str, message: str, title: str | None = None) -> None:
        """Begin the bar ``token`` with ``title`` and ``message``, or (no title) report
        ``message`` on it."""
        bars = self._server.work_done_progress
        if title is not None:
            bars.begin(token, types.WorkDoneProgressBegin(title=title, message=message))
        else:
            bars.report(token, types.WorkDoneProgressReport(message=message))

    def close(self, token: str, message: str | None = None) -> None:
        bars = self._server.work_done_progress
        bars.end(token, types.WorkDoneProgressEnd(message=message))
        # pygls keeps a cancellation future per token for good; one per indexing run adds up
        bars.tokens.pop(token, None)

    def index_ready(self, folder: Folder, report: IndexReport) -> None:
        message = (
            f"indexed {report.files} files ({report.fragments} fragments) in {report.seconds:.1f} s"
        )
        if folder.index.state == "indexing" and folder.progress_token is not None:
            # the settings changed meanwhile and another build runs: the bar stays up
            self._server.work_done_progress.report(
                folder.progress_token,
                types.WorkDoneProgressReport(message="indexing again with the new settings"),
            )
        elif folder.progress_token is not None:
            folder.indexed_message = message
            self._server.work_done_progress.report(
                folder.progress_token,
                types.WorkDoneProgressReport(message="reading the docs", percentage=100),
            )
        logger.info("%s: %s", report.root, message)
        self._server.protocol.notify(INDEX_READY, {**report.to_dict(), "folder": folder.uri})

    def docs_ready(self, folder: Folder, report: DocsReport) -> None:
        state = folder.index.docs.state
        if state == "ready":
            docs = f"doc memory: {report.documents} documents ({report.segments} segments)"
        else:
            docs = "doc memory: no docs" if state == "none" else "doc memory: failed"
        logger.info("%s: %s in %.1f s", folder.root, docs, report.seconds)
        if folder.index.state != "indexing":
            self.end(folder, "; ".join(m for m in (folder.indexed_message, docs) if m))
            folder.indexed_message = ""
        self._server.protocol.notify(
            DOCS_READY,
            {"state": state, **report.to_dict(), "root": str(folder.root), "folder": folder.uri},
        )

    def index_failed(self, folder: Folder, message: str) -> None:
        if folder.index.state != "indexing":
            self.end(folder, "indexing failed")
        self._warn(f"repomem: {message}")


def status(folders: Folders) -> dict[str, Any]:
    """The first folder's status (what a single-folder client reads), and every folder's."""
    return {
        **folder_status(folders.first),
        "folders": [folder_status(folder) for folder in folders],
    }


def folder_status(folder: Folder) -> dict[str, Any]:
    index, stats = folder.index, folder.completer.stats
    return {
        "state": index.state,
        "root": str(folder.root) if folder.root else None,
        "folder": folder.uri,
        "files": index.files,
        "fragments": index.fragments,
        "pendingUpdates": len(index.schedule),
        "indexUpdates": index.updates,
        "lastUpdateMs": round(index.last_update_s * 1e3, 2),
        "indexTidies": index.tidies,
        "docs": {
            "state": index.docs.state,
            "documents": index.docs.documents,
            "segments": index.docs.segments,
            "inCompletions": index.docs.in_completions,
        },
        "backend": folder.completer.backend_name,
        "fallback": folder.completer.falling_back,
        "completions": stats.completions,
        "cacheHits": stats.cache_hits,
        "superseded": stats.superseded,
        "cancelled": stats.cancelled,
        "fallbacks": stats.fallbacks,
        "accepted": stats.accepted,
        "modelRequests": stats.model_requests,
        "reused": stats.reused,
        "debounceNowMs": folder.completer.debounce_ms(folder.editor.debounce_ms),
        "settings": folder.editor.to_dict(),
        "untrustedSettings": [
            {"key": u.key, "file": str(u.source)} for u in folder.editor.settings.untrusted
        ],
    }

"""A workspace folder as the language server makes it (its index, docs, completer), served
in process, for tests of the server's parts that take a ``Folder``."""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from lsp_server.build_process import IndexReport
from lsp_server.editor_settings import EditorSettings
from lsp_server.folders import Folder
from lsp_server.workspace_docs import DocsReport
from repomem.settings import Settings


class Heard:
    """What a folder's index tells the server, recorded."""

    def __init__(self) -> None:
        self.ready: list[IndexReport] = []
        self.failed: list[str] = []
        self.docs: list[DocsReport] = []
        self.warnings: list[str] = []

    def on_progress(self, folder: Folder, stage: str, done: int, total: int) -> None:
        pass

    def on_loaded(self, folder: Folder, files: int, fragments: int) -> None:
        pass

    def on_ready(self, folder: Folder, report: IndexReport) -> None:
        self.ready.append(report)

    def on_failed(self, folder: Folder, message: str) -> None:
        self.failed.append(message)

    def on_docs(self, folder: Folder, report: DocsReport) -> None:
        self.docs.append(report)

    def document_text(self, folder: Folder, path: str) -> str | None:
        return folder.index.file_text(path)


def make_folder(root: Path | None, heard: Heard, settings: Settings | None = None) -> Folder:
    editor = EditorSettings(settings or Settings())
    uri = root.as_uri() if root is not None else None
    return Folder(root, uri, editor, heard, threading.Semaphore(1), heard.warnings.append)


@asynccontextmanager
async def serving(
    root: Path, settings: Settings | None = None, timeout: float = 120.0
) -> AsyncIterator[tuple[Folder, Heard]]:
    """The folder of ``root``, indexed and its docs read, with its completer configured."""
    heard = Heard()
    folder = make_folder(root, heard, settings)
    await folder.completer.configure(folder.editor.settings)
    folder.index.start()
    try:
        deadline = time.monotonic() + timeout
        while not (heard.failed or (heard.ready and heard.docs)):
            assert time.monotonic() < deadline, "the folder was not indexed in time"
            time.sleep(0.05)
        yield folder, heard
    finally:
        await folder.completer.aclose()
        folder.index.stop()

"""The workspace folders a server serves, and which one serves a document.

Each folder is a repository of its own: its index and doc memory, its settings (the
repository's own, trusted or not, under the editor's), the user's recent edits and views of
its documents and its completer (whose backend those settings choose). A document belongs to
the deepest folder that contains it; one in no folder is served by the *loose* folder, which
has no index: it completes from the open file alone.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol

from pygls.uris import to_fs_path

from lsp_server.build_process import IndexReport
from lsp_server.completer import Completer
from lsp_server.editor_settings import EditorSettings
from lsp_server.workspace_docs import DocsReport
from lsp_server.workspace_index import WorkspaceIndex
from repomem.context.recent import RecentContext


class FolderEvents(Protocol):
    """What the server hears from a folder's index; called from worker threads."""

    def on_progress(self, folder: Folder, stage: str, done: int, total: int) -> None: ...

    def on_loaded(self, folder: Folder, files: int, fragments: int) -> None: ...

    def on_ready(self, folder: Folder, report: IndexReport) -> None: ...

    def on_failed(self, folder: Folder, message: str) -> None: ...

    def on_docs(self, folder: Folder, report: DocsReport) -> None: ...

    def document_text(self, folder: Folder, path: str) -> str | None: ...


class Folder:
    """One workspace folder (``root`` None: the loose folder) and what serves its documents.

    It passes its index's events on to the server, naming itself.
    """

    def __init__(
        self,
        root: Path | None,
        uri: str | None,
        editor: EditorSettings,
        events: FolderEvents,
        builds: threading.Semaphore,
        warn: Callable[[str], None],
    ) -> None:
        self.root = root
        self.uri = uri  # as the client named it
        self.editor = editor
        self.index = WorkspaceIndex(root, editor.settings.index, self, builds)
        self.index.schedule.delay_s = editor.index_delay_ms / 1000
        self.recent = RecentContext(
            self.text_of, context_lines=editor.settings.completion.recent_lines
        )
        self.completer = Completer(self.index, warn, self.recent)
        self.configured = False  # the completer has the folder's settings
        self.told_untrusted = False  # the untrusted repository settings were shown
        self.progress_token: str | None = None
        self.indexed_message = ""
        self._events = events

    def rel_path(self, uri: str) -> str | None:
        """The folder-relative path of a document (None outside the folder)."""
        return _relative_path(self.root, uri)

    def text_of(self, path: str) -> str | None:
        """The current text of the document at folder-relative ``path``: the editor's buffer
        if open, else the indexed file's."""
        return self._events.document_text(self, path)

    def on_progress(self, stage: str, done: int, total: int) -> None:
        self._events.on_progress(self, stage, done, total)

    def on_loaded(self, files: int, fragments: int) -> None:
        self._events.on_loaded(self, files, fragments)

    def on_ready(self, report: IndexReport) -> None:
        self._events.on_ready(self, report)

    def on_failed(self, message: str) -> None:
        self._events.on_failed(self, message)

    def on_docs(self, report: DocsReport) -> None:
        self._events.on_docs(self, report)


class Folders:
    """The server's folders in the order the client gave them, plus the loose folder."""

    def __init__(self, loose: Folder) -> None:
        self.loose = loose
        self._folders: list[Folder] = []

    def __iter__(self) -> Iterator[Folder]:
        return iter(list(self._folders))

    def __len__(self) -> int:
        return len(self._folders)

    def everyone(self) -> list[Folder]:
        """Every folder, the loose one last."""
        return [*self._folders, self.loose]

    @property
    def first(self) -> Folder:
        """The folder ``repomem/status`` reports at its top level: the first one given, or the
        loose folder when there is none."""
        return self._folders[0] if self._folders else self.loose

    def add(self, folder: Folder) -> None:
        self._folders.append(folder)

    def remove(self, root: Path) -> Folder | None:
        found = self.get(root)
        if found is not None:
            self._folders.remove(found)
        return found

    def get(self, root: Path) -> Folder | None:
        return next((f for f in self._folders if f.root == root), None)

    def for_uri(self, uri: str) -> Folder:
        """The deepest folder holding the document at ``uri``, else the loose folder."""
        path = _resolved(uri)
        if path is None:
            return self.loose
        holding = [f for f in self._folders if f.root is not None and path.is_relative_to(f.root)]
        return max(holding, key=lambda f: len(f.root.parts), default=self.loose)  # type: ignore[union-attr]


def folder_root(uri: str | None, path: str | None = None) -> Path | None:
    """The directory a folder's ``uri`` (or a plain ``path``) names, resolved; None when it
    is not an existing directory."""
    fs_path = to_fs_path(uri) if uri else path
    if not fs_path or not Path(fs_path).is_dir():
        return None
    return Path(fs_path).resolve()


@functools.lru_cache(maxsize=1024)
def _resolved(uri: str) -> Path | None:
    fs_path = to_fs_path(uri)
    if fs_path is None:
        return None
    try:
        return Path(fs_path).resolve()
    except OSError:
        return None


def _relative_path(root: Path | None, uri: str) -> str | None:
    path = _resolved(uri)
    if root is None or path is None or not path.is_relative_to(root):
        return None
    return path.relative_to(root).as_posix()

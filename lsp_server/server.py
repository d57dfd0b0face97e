"""``repomem serve``: the language server (pygls) that completes code from the repository.

Life of a session: ``initialize`` reads the workspace folders and the editor's settings;
``initialized`` pulls the ``repomem`` configuration section where the client offers it, starts
indexing in the background (with ``$/progress`` where the client supports server-created
progress tokens) and registers for watched-file and configuration changes. Each workspace
folder has its own index, doc memory and settings (:mod:`lsp_server.folders`), folders added
later with ``workspace/didChangeWorkspaceFolders`` too; a document is served by the folder
that holds it. Completion requests are answered meanwhile from what is indexed. When a folder's
indexing ends the server says so with a ``window/logMessage`` and the ``repomem/indexReady``
notification, reads the docs into the doc memory, and ends the progress
(``repomem/docsReady``). See
``lsp_server/README.md`` for the settings, custom messages and commands.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from lsp_server import editor_settings, logs
from lsp_server.build_process import IndexReport
from lsp_server.completer import COMPLETION, INLINE, Cursor
from lsp_server.folders import Folder, Folders, folder_root
from lsp_server.items import ACCEPTED_COMMAND, completion_item, inline_item, rest_of_line
from lsp_server.protocol import RepomemProtocol
from lsp_server.suggestion_cache import Suggestion
from lsp_server.workspace_docs import DocsReport
from repomem import __version__
from repomem.docmem.answer import render
from repomem.docmem.memory import DocMemory
from repomem.docmem.names import ALL_FORMS, STRATEGIES
from repomem.docmem.strategies import AskError
from repomem.index.files import FileSkipped, check_prompt_text, skip_explanation
from repomem.index.languages import language_for_path
from repomem.settings import Settings, SettingsError, load_settings, untrusted_notice

logger = logging.getLogger(__name__)

INDEX_READY = "repomem/indexReady"
VISIBLE_RANGES = "repomem/visibleRanges"
DOCS_READY = "repomem/docsReady"
STATUS = "repomem/status"
RETRIEVE = "repomem/retrieve"
REINDEX_COMMAND = "repomem.reindex"
ASK_COMMAND = "repomem.ask"

#: how long to wait for the client's answer to a request made during start-up
CLIENT_TIMEOUT_S = 5.0
#: how long ``repomem.ask`` waits for the doc memory (indexing, then reading the docs)
DOCS_WAIT_S = 60.0
#: share of the progress bar each indexing stage covers
_STAGES = {"scan": (0, 5), "parse": (5, 60), "relations": (60, 100)}

_Item = TypeVar("_Item", types.CompletionItem, types.InlineCompletionItem)


class RepomemServer(LanguageServer):
    """The language server; one instance per process."""

    def __init__(self) -> None:
        super().__init__("repomem", __version__, protocol_cls=RepomemProtocol, max_workers=4)
        self._builds = threading.Semaphore()  # one folder is (re)indexed at a time
        self.folders = Folders(self._new_folder(None, None, None))
        self.loop: asyncio.AbstractEventLoop | None = None
        self.log_handler = logs.EditorLogHandler(self.window_log_message)
        self._init_options: Any = None
        self._editor_data: Any = None  # the editor's settings as last received
        self._progress_count = 0
        self._stopped = False
        self._starting: asyncio.Task[Any] | None = None  # the ``initialized`` handler
        self._register()

    # ------------------------------------------------------------------ registration
    def _register(self) -> None:
        def feature(method: str, options: Any = None) -> Callable[[Callable[..., Any]], Any]:
            return lambda handler: self.feature(method, options)(_plain(handler))

        feature(types.INITIALIZE)(self._on_initialize)
        feature(types.INITIALIZED)(self._on_initialized)
        feature(types.SHUTDOWN)(self._on_shutdown)
        feature(types.TEXT_DOCUMENT_DID_OPEN)(self._on_did_open)
        feature(types.TEXT_DOCUMENT_DID_CHANGE)(self._on_did_change)
        feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))(
            self._on_did_save
        )
        feature(types.TEXT_DOCUMENT_DID_CLOSE)(self._on_did_close)
        feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)(self._on_watched_files)
        feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(self._on_configuration)
        feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)(self._on_workspace_folders)
        feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions())(self._on_completion)
        feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())(
            self._on_inline_completion
        )
        feature(VISIBLE_RANGES)(self._on_visible_ranges)
        feature(STATUS)(self._on_status)
        feature(RETRIEVE)(self._on_retrieve)
        self.command(ACCEPTED_COMMAND)(_plain(self._on_accepted))
        self.command(REINDEX_COMMAND)(_plain(self._on_reindex))
        self.command(ASK_COMMAND)(_plain(self._on_ask))

    # ------------------------------------------------------------------ messages to the editor
    def warn(self, message: str) -> None:
        """A warning the user should see (``window/showMessage``), also logged."""
        logger.warning("%s", message)
        self.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Warning, message=message)
        )

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Log errors instead of showing them: they come from malformed client messages or
        are already answered as error responses, and a popup per message helps nobody."""
        logger.error("%s: %s", getattr(source, "__name__", source), error)

    def _from_thread(self, fn: Any, *args: Any) -> None:
        loop = self.loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(fn, *args)

    # ------------------------------------------------------------------ lifecycle
    def _on_initialize(self, params: types.InitializeParams) -> None:
        self._init_options = self._editor_data = params.initialization_options
        for root, uri in _workspace_folders(params):
            self.folders.add(self._new_folder(root, uri, self._editor_data))

    def _new_folder(self, root: Path | None, uri: str | None, data: Any) -> Folder:
        """A folder indexing with its settings from the start (problems with them are
        reported once the settings are final)."""
        editor, _ = editor_settings.resolve(self._base_settings(root)[0], data)
        return Folder(root, uri, editor, self, self._builds, self.warn)

    async def _on_initialized(self, params: types.InitializedParams) -> None:
        self.loop = asyncio.get_running_loop()
        self._starting = asyncio.current_task()
        self.log_handler.attach(self.loop)
        data = self._init_options
        if self._client_supports("workspace.configuration"):
            pulled = await self._pull_configuration()
            if pulled is not None:
                data = pulled
        await self._apply_settings(data)
        self._register_watchers()
        if not self.folders:
            logger.info("no workspace folder: completing from the open file only")
        for folder in self.folders:
            await self._start_folder(folder)

    async def _start_folder(self, folder: Folder) -> None:
        await self._begin_progress(folder)
        logger.info("indexing %s in the background", folder.root)
        folder.index.start()

    async def _on_workspace_folders(self, params: types.DidChangeWorkspaceFoldersParams) -> None:
        """Folders removed stop (their index is persisted); folders added are indexed, each
        after those before it, and take over the open documents they hold."""
        for removed in params.event.removed:
            root = folder_root(removed.uri)
            folder = self.folders.remove(root) if root is not None else None
            if folder is not None:
                logger.info("no longer serving %s", folder.root)
                self._end_progress(folder, "folder removed")
                await folder.completer.aclose()
                await asyncio.to_thread(folder.index.stop)
        for added in params.event.added:
            root = folder_root(added.uri)
            if root is None or self.folders.get(root) is not None:
                continue
            folder = self._new_folder(root, added.uri, self._editor_data)
            self.folders.add(folder)
            await self._configure(folder, self._editor_data, problems := [])
            if problems:
                self.warn("repomem: " + "; ".join(problems))
            for uri in list(self.workspace.text_documents):
                if self.folders.for_uri(uri) is folder:
                    self._buffer_changed(uri)
            await self._start_folder(folder)

    async def _on_shutdown(self, params: None) -> None:
        """Stop start-up if it still runs, then what it started: the completer's loop closed
        under a start-up that goes on to use it logged errors when an editor quit at once."""
        starting = self._starting
        if starting is not None and not starting.done():
            starting.cancel()
            await asyncio.wait([starting])
        for folder in self.folders.everyone():
            await folder.completer.aclose()
        await asyncio.to_thread(self._stop_index)

    def _stop_index(self) -> None:
        if not self._stopped:
            self._stopped = True
            for folder in self.folders.everyone():
                folder.index.stop()

    def shutdown(self) -> None:
        """Also on a client that vanished without ``shutdown``: persist the index first."""
        self._stop_index()
        super().shutdown()

    # ------------------------------------------------------------------ settings
    def _base_settings(self, root: Path | None) -> tuple[Settings, list[str]]:
        """The user's settings file, the repository's own settings (pyproject.toml,
        .repomem.toml; the keys only the user may set once trusted) and the environment."""
        try:
            return load_settings(root), []
        except SettingsError as exc:
            return Settings(), [f"{exc}; using the defaults"]

    async def _pull_configuration(self) -> Any:
        request = types.ConfigurationParams(
            items=[types.ConfigurationItem(section=editor_settings.SECTION)]
        )
        try:
            answer = await asyncio.wait_for(
                self.workspace_configuration_async(request), CLIENT_TIMEOUT_S
            )
        except Exception as exc:  # a client that cannot answer leaves the settings as they are
            logger.info("workspace/configuration failed: %s", exc)
            return None
        return answer[0] if answer else None

    async def _apply_settings(self, data: Any) -> None:
        """The editor's settings over each folder's own; the loose folder only once it serves
        (or with no folder at all), so that a problem with them is not reported twice."""
        self._editor_data = data
        problems: list[str] = []
        for folder in self.folders.everyone():
            if folder.root is not None or folder.configured or not self.folders:
                await self._configure(folder, data, problems)
        if problems:
            self.warn("repomem: " + "; ".join(dict.fromkeys(problems)))

    async def _configure(self, folder: Folder, data: Any, problems: list[str]) -> None:
        base, more = self._base_settings(folder.root)
        problems += more
        notice = untrusted_notice(base, folder.root) if folder.root is not None else None
        if notice is not None and not folder.told_untrusted:
            folder.told_untrusted = True
            problems.append(notice)
        editor, more = editor_settings.resolve(base, data)
        problems += more
        folder.editor = editor
        folder.configured = True
        index = folder.index
        index.schedule.delay_s = editor.index_delay_ms / 1000
        folder.recent.context_lines = editor.settings.completion.recent_lines
        index.docs.in_completions = editor.settings.completion.docs
        index.docs.configure(editor.settings.docmem)
        await folder.completer.configure(editor.settings)
        if index.config != editor.settings.index:
            index.reconfigure(editor.settings.index)
            if index.state == "indexing":
                await self._begin_progress(folder)

    async def _on_configuration(self, params: types.DidChangeConfigurationParams) -> None:
        """Settings pushed as ``{"repomem": {...}}``; otherwise the client is asked for them
        (a client that cannot be asked and sent no object changed nothing we know of)."""
        data = params.settings
        wrapped = isinstance(data, dict) and editor_settings.SECTION in data
        if not wrapped and self._client_supports("workspace.configuration"):
            data = await self._pull_configuration()
        if data is None:
            return
        await self._apply_settings(data)

    def _register_watchers(self) -> None:
        registrations = []
        if self._client_supports("workspace.did_change_watched_files.dynamic_registration"):
            registrations.append(
                types.Registration(
                    id="repomem-watched-files",
                    method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                    register_options=types.DidChangeWatchedFilesRegistrationOptions(
                        watchers=[types.FileSystemWatcher(glob_pattern="**/*")]
                    ),
                )
            )
        if self._client_supports("workspace.did_change_configuration.dynamic_registration"):
            registrations.append(
                types.Registration(
                    id="repomem-configuration",
                    method=types.WORKSPACE_DID_CHANGE_CONFIGURATION,
                    register_options=types.DidChangeConfigurationRegistrationOptions(
                        section=editor_settings.SECTION
                    ),
                )
            )
        if registrations:
            asyncio.ensure_future(self._register_capabilities(registrations))

    async def _register_capabilities(self, registrations: list[types.Registration]) -> None:
        try:
            await self.client_register_capability_async(
                types.RegistrationParams(registrations=registrations)
            )
        except Exception as exc:  # the editor then sends what it sends; nothing breaks
            logger.info("client/registerCapability failed: %s", exc)

    def _client_supports(self, capability: str) -> bool:
        return bool(get_capability(self.client_capabilities, capability, False))

    # ------------------------------------------------------------------ index events (threads)
    def on_progress(self, folder: Folder, stage: str, done: int, total: int) -> None:
        self._from_thread(self._report_progress, folder, stage, done, total)

    def on_loaded(self, folder: Folder, files: int, fragments: int) -> None:
        logger.info(
            "%s: answering from the saved index (%d files, %d fragments) while re-indexing",
            folder.root,
            files,
            fragments,
        )

    def on_ready(self, folder: Folder, report: IndexReport) -> None:
        self._from_thread(self._index_ready, folder, report)

    def on_failed(self, folder: Folder, message: str) -> None:
        self._from_thread(self._index_failed, folder, message)

    def on_docs(self, folder: Folder, report: DocsReport) -> None:
        self._from_thread(self._docs_ready, folder, report)

    async def _create_progress(self, name: str) -> str | None:
        """A new progress token the client accepted; None where it shows no progress."""
        if not self._client_supports("window.work_done_progress"):
            return None
        self._progress_count += 1
        token = f"{name}-{self._progress_count}"
        try:
            await asyncio.wait_for(self.work_done_progress.create_async(token), CLIENT_TIMEOUT_S)
        except Exception as exc:  # no progress bar, but the work goes on
            logger.info("window/workDoneProgress/create failed: %s", exc)
            return None
        return token

    async def _begin_progress(self, folder: Folder) -> None:
        if folder.progress_token is not None:
            return
        token = await self._create_progress("repomem-index")
        if token is None:
            return
        folder.progress_token = token
        self.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(
                title="repomem: indexing", message=str(folder.root), percentage=0, cancellable=False
            ),
        )

    def _report_progress(self, folder: Folder, stage: str, done: int, total: int) -> None:
        if folder.progress_token is None:
            return
        low, high = _STAGES.get(stage, (0, 100))
        percentage = low + (high - low) * done // max(total, 1)
        self.work_done_progress.report(
            folder.progress_token,
            types.WorkDoneProgressReport(message=f"{stage} {done}/{total}", percentage=percentage),
        )

    def _end_progress(self, folder: Folder, message: str) -> None:
        if folder.progress_token is None:
            return
        token, folder.progress_token = folder.progress_token, None
        self.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
        # pygls keeps a cancellation future per token for good; one per indexing run adds up
        self.work_done_progress.tokens.pop(token, None)

    def _index_ready(self, folder: Folder, report: IndexReport) -> None:
        message = (
            f"indexed {report.files} files ({report.fragments} fragments) in {report.seconds:.1f} s"
        )
        if folder.index.state == "indexing" and folder.progress_token is not None:
            # the settings changed meanwhile and another build runs: the bar stays up
            self.work_done_progress.report(
                folder.progress_token,
                types.WorkDoneProgressReport(message="indexing again with the new settings"),
            )
        elif folder.progress_token is not None:
            folder.indexed_message = message
            self.work_done_progress.report(
                folder.progress_token,
                types.WorkDoneProgressReport(message="reading the docs", percentage=100),
            )
        logger.info("%s: %s", report.root, message)
        self.protocol.notify(INDEX_READY, {**report.to_dict(), "folder": folder.uri})

    def _docs_ready(self, folder: Folder, report: DocsReport) -> None:
        state = folder.index.docs.state
        if state == "ready":
            docs = f"doc memory: {report.documents} documents ({report.segments} segments)"
        else:
            docs = "doc memory: no docs" if state == "none" else "doc memory: failed"
        logger.info("%s: %s in %.1f s", folder.root, docs, report.seconds)
        if folder.index.state != "indexing":
            self._end_progress(folder, "; ".join(m for m in (folder.indexed_message, docs) if m))
            folder.indexed_message = ""
        self.protocol.notify(
            DOCS_READY,
            {"state": state, **report.to_dict(), "root": str(folder.root), "folder": folder.uri},
        )

    def _index_failed(self, folder: Folder, message: str) -> None:
        if folder.index.state != "indexing":
            self._end_progress(folder, "indexing failed")
        self.warn(f"repomem: {message}")

    # ------------------------------------------------------------------ documents
    def _document(self, uri: str) -> TextDocument | None:
        """An open document (None if the client did not open it)."""
        return self.workspace.text_documents.get(unquote(uri))

    def _on_did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        self._buffer_changed(params.text_document.uri)

    def _on_did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        folder = self.folders.for_uri(uri)
        path = folder.rel_path(uri)
        if path is not None:
            for change in params.content_changes:
                if isinstance(change, types.TextDocumentContentChangePartial):
                    r = change.range
                    folder.recent.edited(
                        path, r.start.line, max(r.end.line, r.start.line), change.text.count("\n")
                    )
                else:  # the whole text: what changed is what differs from the text before
                    doc = self._document(uri)
                    old = folder.index.buffer(path)
                    if doc is not None and old is not None:
                        folder.recent.replaced(path, old, doc.source)
        self._buffer_changed(uri)

    def _buffer_changed(self, uri: str) -> None:
        folder = self.folders.for_uri(uri)
        path = folder.rel_path(uri)
        doc = self._document(uri)
        if path is not None and doc is not None:
            folder.index.set_buffer(path, doc.source)

    def document_text(self, folder: Folder, path: str) -> str | None:
        """A document's text as the user has it (the open buffer, else the indexed file) for
        the recent edits and views; None where it must reach no prompt (as ``_kept_out``)."""
        if folder.root is None:
            return None
        doc = self._document((folder.root / path).as_uri())
        text = doc.source if doc is not None else folder.index.file_text(path)
        if text is None:
            return None
        try:
            check_prompt_text(
                folder.root, path, folder.index.config, text.encode("utf-8", "replace")
            )
        except FileSkipped:
            return None
        return text

    def _on_visible_ranges(self, params: Any) -> None:
        """``repomem/visibleRanges`` ``{uri, ranges: [Range]}``: the lines of a document now
        on screen (end lines included), recorded as recently viewed. A malformed one is
        logged and dropped."""
        uri = _param(params, "uri", None)
        ranges = _param(params, "ranges", None)
        lines = _line_ranges(ranges)
        if not isinstance(uri, str) or lines is None:
            logger.warning(
                "%s expects {uri: string, ranges: Range[]}, got %.200r", VISIBLE_RANGES, params
            )
            return
        folder = self.folders.for_uri(uri)
        path = folder.rel_path(uri)
        if path is not None:
            folder.recent.viewed(path, lines)

    def _on_did_save(self, params: types.DidSaveTextDocumentParams) -> None:
        folder = self.folders.for_uri(params.text_document.uri)
        path = folder.rel_path(params.text_document.uri)
        if path is not None:
            folder.index.saved(path)

    def _on_did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        folder = self.folders.for_uri(params.text_document.uri)
        folder.completer.forget(params.text_document.uri)
        path = folder.rel_path(params.text_document.uri)
        if path is not None:
            folder.index.close_buffer(path)

    def _on_watched_files(self, params: types.DidChangeWatchedFilesParams) -> None:
        changed: dict[Folder, list[str]] = {}
        for change in params.changes:
            folder = self.folders.for_uri(change.uri)
            path = folder.rel_path(change.uri)
            if path is not None:
                changed.setdefault(folder, []).append(path)
                if change.type == types.FileChangeType.Deleted:
                    folder.recent.forget(path)
        for folder, paths in changed.items():
            folder.index.files_changed(paths)

    # ------------------------------------------------------------------ completion
    async def _serving(self, uri: str) -> Folder:
        """The folder that serves the document at ``uri``; the loose folder takes the
        editor's settings when it first serves."""
        folder = self.folders.for_uri(uri)
        if not folder.configured:
            problems: list[str] = []
            await self._configure(folder, self._editor_data, problems)
            if problems:
                self.warn("repomem: " + "; ".join(dict.fromkeys(problems)))
        return folder

    def _cursor(
        self, folder: Folder, uri: str, position: types.Position
    ) -> tuple[Cursor, str, TextDocument] | None:
        """The cursor in an open document, its line's text before it, and the document;
        None if the document is not open."""
        doc = self._document(uri)
        if doc is None:
            return None
        lines = doc.lines
        if position.line < 0 or position.character < 0 or position.line > len(lines):
            raise JsonRpcInvalidParams(
                f"position {position.line}:{position.character} is outside {uri}"
                f" ({len(lines)} lines)"
            )
        at = doc.position_codec.position_from_client_units(
            lines, types.Position(position.line, position.character)
        )
        offset = sum(len(line) for line in lines[: at.line]) + at.character
        source = doc.source
        left, right = source[:offset], source[offset:]
        line_prefix = left[left.rfind("\n") + 1 :]
        cursor = Cursor(uri, folder.rel_path(uri), left, right, left.count("\n"))
        return cursor, line_prefix, doc

    async def _on_completion(self, params: types.CompletionParams) -> types.CompletionList | None:
        folder = await self._serving(params.text_document.uri)
        if not folder.editor.enable:
            return None
        found = self._cursor(folder, params.text_document.uri, params.position)
        if found is None:
            return None
        cursor, line_prefix, doc = found
        if self._kept_out(folder, cursor, doc):
            return types.CompletionList(is_incomplete=False, items=[])
        suggestion = await folder.completer.complete(cursor, COMPLETION, folder.editor.debounce_ms)
        if suggestion is None or not suggestion.text:
            return types.CompletionList(is_incomplete=True, items=[])
        formats = get_capability(
            self.client_capabilities,
            "text_document.completion.completion_item.documentation_format",
            [],
        )
        item = completion_item(
            cursor.uri,
            params.position,
            line_prefix,
            rest_of_line(cursor.right),
            suggestion,
            units=doc.position_codec.client_num_units,
            markdown=types.MarkupKind.Markdown in (formats or []),
            language=language_for_path(cursor.path or doc.path) or "",
        )
        return types.CompletionList(is_incomplete=True, items=_kept(item, suggestion))

    async def _on_inline_completion(
        self, params: types.InlineCompletionParams
    ) -> types.InlineCompletionList | None:
        folder = await self._serving(params.text_document.uri)
        if not folder.editor.enable:
            return None
        found = self._cursor(folder, params.text_document.uri, params.position)
        if found is None:
            return None
        cursor, _, doc = found
        if self._kept_out(folder, cursor, doc):
            return types.InlineCompletionList(items=[])
        suggestion = await folder.completer.complete(cursor, INLINE, folder.editor.debounce_ms)
        if suggestion is None or not suggestion.text:
            return types.InlineCompletionList(items=[])
        item = inline_item(
            cursor.uri,
            params.position,
            rest_of_line(cursor.right),
            suggestion,
            units=doc.position_codec.client_num_units,
        )
        return types.InlineCompletionList(items=_kept(item, suggestion))

    def _kept_out(self, folder: Folder, cursor: Cursor, doc: TextDocument) -> bool:
        """Whether the document's text must reach no prompt: the index leaves it out as secret
        or ignored, too large or binary (a file outside the workspace is judged by its name)."""
        if cursor.path is not None and folder.root is not None:
            root, rel = folder.root, cursor.path
        else:
            fs_path = to_fs_path(cursor.uri)
            if fs_path is None:
                return False
            root, rel = Path(fs_path).parent, Path(fs_path).name
        config = folder.index.config
        data = doc.source.encode("utf-8", errors="replace")
        try:
            check_prompt_text(root, rel, config, data)
        except FileSkipped as skip:
            logger.debug("no completion: %s %s", rel, skip_explanation(skip, config))
            return True
        return False

    # ------------------------------------------------------------------ custom requests
    def _on_status(self, params: Any) -> dict[str, Any]:
        """The first folder's status (what a single-folder client reads), and every folder's."""
        return {
            **_folder_status(self.folders.first),
            "folders": [_folder_status(folder) for folder in self.folders],
        }

    async def _on_retrieve(self, params: Any) -> dict[str, Any]:
        query = _param(params, "query", None)
        k = _param(params, "k", 10)
        uri = _param(params, "uri", None)
        if (
            not isinstance(query, str)
            or not isinstance(k, int)
            or isinstance(k, bool)
            or k < 1
            or not isinstance(uri, str | None)
        ):
            raise JsonRpcInvalidParams(
                f"{RETRIEVE} expects {{'query': string, 'k'?: positive integer, 'uri'?: string}},"
                f" got {params!r}"
            )
        folder = self.folders.first if uri is None else self.folders.for_uri(uri)
        alpha = folder.editor.settings.completion.alpha
        found = await asyncio.to_thread(
            folder.index.retrieve, query, k=k, alpha=alpha, exclusion=None
        )
        return {
            "root": str(folder.root) if folder.root else None,
            "fragments": [
                {
                    "locations": [
                        {"path": loc.path, "startLine": loc.start, "endLine": loc.end}
                        for loc in fragment.locations
                    ],
                    "score": fragment.s_rel,
                    "text": fragment.text,
                }
                for fragment in found
            ],
        }

    def _on_accepted(self, *args: Any) -> None:
        uri = _param(args[0], "uri", None) if args else None
        folder = self.folders.for_uri(uri) if isinstance(uri, str) else self.folders.first
        folder.completer.stats.accepted += 1

    async def _on_reindex(self, *args: Any) -> None:
        """``repomem.reindex`` ``[folder?]``: that folder (a URI or path) or every one."""
        folders = [self._named_folder(args[0], REINDEX_COMMAND)] if args else list(self.folders)
        for folder in folders:
            folder.index.request_build()
            await self._begin_progress(folder)

    def _named_folder(self, name: Any, command: str) -> Folder:
        """The folder a command's argument names by a URI or path inside it."""
        if not isinstance(name, str) or not name:
            raise JsonRpcInvalidParams(f"{command}: a folder is a URI or a path, got {name!r}")
        uri = name if "://" in name else Path(name).resolve().as_uri()
        folder = self.folders.for_uri(uri)
        if folder.root is None:
            raise JsonRpcInvalidParams(f"{command}: {name} is in no workspace folder")
        return folder

    async def _on_ask(self, *args: Any) -> dict[str, Any]:
        """``repomem.ask``: the answer to a question, with its ``path:line`` sources, from
        the doc memory of the folder named (the first one by default), as ``repomem ask``
        gives it."""
        question, strategy, form, name = _ask_arguments(args)
        folder = self.folders.first if name is None else self._named_folder(name, ASK_COMMAND)
        memory = folder.index.docs.memory
        if memory is None:
            memory = await self._wait_for_docs(folder)
        if memory is None:
            raise JsonRpcInternalError(f"{ASK_COMMAND}: {self._no_docs_reason(folder)}")
        hold = folder.index.asking()
        await asyncio.to_thread(hold.__enter__)
        try:
            result = await folder.completer.ask(memory, question, strategy, form)
        except AskError as exc:
            raise JsonRpcInvalidParams(f"{ASK_COMMAND}: {exc}") from None
        finally:
            hold.__exit__(None, None, None)
        return {**result.to_dict(), "text": render(result), "root": str(folder.root)}

    async def _wait_for_docs(self, folder: Folder) -> DocMemory | None:
        """The doc memory once the index and the docs are read, for a question asked before:
        the user cannot know when that is. Waits at most ``DOCS_WAIT_S``, with a progress
        bar where the client shows them."""
        if not folder.index.docs_pending():
            return folder.index.docs.memory
        token = await self._create_progress("repomem-ask")
        stage = None
        deadline = time.monotonic() + DOCS_WAIT_S
        try:
            while folder.index.docs_pending() and (left := deadline - time.monotonic()) > 0:
                now = "indexing" if folder.index.state == "indexing" else "reading the docs"
                if token is not None and now != stage:
                    if stage is None:
                        title = "repomem: waiting for the doc memory"
                        begin = types.WorkDoneProgressBegin(title=title, message=now)
                        self.work_done_progress.begin(token, begin)
                    else:
                        report = types.WorkDoneProgressReport(message=now)
                        self.work_done_progress.report(token, report)
                    stage = now
                await asyncio.to_thread(folder.index.wait_for_docs, min(left, 0.5))
        finally:
            if token is not None and stage is not None:
                self.work_done_progress.end(token, types.WorkDoneProgressEnd())
                self.work_done_progress.tokens.pop(token, None)
        return folder.index.docs.memory

    def _no_docs_reason(self, folder: Folder) -> str:
        """Why no doc memory answers a question."""
        if folder.index.docs.state == "none":
            return "the repository has no docs to answer from"
        if folder.index.docs.state == "failed":
            return "the doc memory could not be opened (see the log)"
        if folder.index.docs_pending():
            return (
                f"the doc memory is still being read after {DOCS_WAIT_S:.0f} s; ask again once"
                " its progress ends"
            )
        if folder.root is None:
            return "no workspace folder is open, so there are no docs to answer from"
        return "there is no index to read the docs from (indexing failed; see the log)"


def _folder_status(folder: Folder) -> dict[str, Any]:
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


def _ask_arguments(args: tuple[Any, ...]) -> tuple[str, str | None, str, Any]:
    """The command's arguments ``[question]`` or ``[question, {"strategy"?, "form"?,
    "folder"?}]``."""
    values = list(args)
    options = values[1] if len(values) == 2 else {}
    if (
        not values
        or len(values) > 2
        or not isinstance(values[0], str)
        or not values[0].strip()
        or not isinstance(options, dict)
        or set(options) - {"strategy", "form", "folder"}
    ):
        raise JsonRpcInvalidParams(
            f"{ASK_COMMAND} expects [question] or [question, {{strategy?, form?, folder?}}],"
            f" got {values!r}"
        )
    form = options.get("form", "chunk")
    strategy = options.get("strategy")
    if strategy not in (*STRATEGIES, None) or form not in ALL_FORMS:
        raise JsonRpcInvalidParams(
            f"{ASK_COMMAND}: strategy must be one of {', '.join(STRATEGIES)} and form one of"
            f" {', '.join(ALL_FORMS)}, got {strategy!r} and {form!r}"
        )
    return values[0], strategy, form, options.get("folder")


def _kept(item: _Item | None, suggestion: Suggestion) -> list[_Item]:
    """The answer's items: none where the suggestion does not fit the line."""
    if item is None:
        logger.debug("not offered: %r would break the rest of the line", suggestion.text)
        return []
    return [item]


def _param(params: Any, name: str, default: Any) -> Any:
    """A field of a custom message's params (pygls hands them over as named tuples)."""
    if isinstance(params, dict):
        return params.get(name, default)
    if isinstance(params, tuple) and hasattr(params, "_fields"):
        return getattr(params, name, default)
    return None


def _line_ranges(ranges: Any) -> list[tuple[int, int]] | None:
    """LSP ranges (as dicts or pygls's named tuples) as ``[start, end)`` line pairs, the end
    line included; None where any is malformed."""
    if not isinstance(ranges, list | tuple) or len(ranges) > 100:
        return None
    out = []
    for r in ranges:
        start = _param(_param(r, "start", None), "line", None)
        end = _param(_param(r, "end", None), "line", None)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
            return None
        if start < 0 or end < start:
            return None
        out.append((start, end + 1))
    return out


def _plain(method: Callable[..., Any]) -> Callable[..., Any]:
    """A function calling ``method``: pygls marks handlers with attributes, which bound
    methods cannot carry."""
    if asyncio.iscoroutinefunction(method):

        async def handler(*args: Any) -> Any:
            return await method(*args)

    else:

        def handler(*args: Any) -> Any:
            return method(*args)

    return handler


def _workspace_folders(params: types.InitializeParams) -> list[tuple[Path, str]]:
    """The existing directories of the workspace folders (else of the root), each with the
    URI the client gave, without repeats."""
    given = [(f.uri, None) for f in params.workspace_folders or []]
    if not given:
        given = [(params.root_uri, params.root_path)]
    folders: dict[Path, str] = {}
    for uri, path in given:
        root = folder_root(uri, path)
        if root is not None and root not in folders:
            folders[root] = uri or root.as_uri()
    return list(folders.items())


def serve(*, tcp: tuple[str, int] | None = None, log_level: str = "INFO") -> None:
    """Run until the client says ``exit`` (or goes away)."""
    logs.configure(log_level)
    server = RepomemServer()
    if tcp is not None:
        server.start_tcp(*tcp)
        return
    # Only protocol messages may reach the client's end of stdout: the server writes to a
    # duplicate of it, and anything else that writes to stdout ends up on stderr.
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    server.start_io(sys.stdin.buffer, protocol_out)

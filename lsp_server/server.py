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

The handlers here parse their params, make one call and build the result; the work is in the
modules of its concern: completion requests (:mod:`lsp_server.completion_requests`), the
folders' settings (:mod:`lsp_server.folder_settings`), progress and status
(:mod:`lsp_server.status`), questions to the doc memory (:mod:`lsp_server.ask_docs`) and the
custom messages' params (:mod:`lsp_server.custom_messages`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from lsp_server import ask_docs, completion_requests, editor_settings, logs, status, stdio
from lsp_server.build_process import IndexReport
from lsp_server.completion_requests import Request
from lsp_server.custom_messages import (
    RETRIEVE,
    VISIBLE_RANGES,
    folder_uri,
    line_ranges,
    param,
    retrieve_params,
    retrieved,
    workspace_folders,
)
from lsp_server.folder_settings import FolderSettings, base_settings
from lsp_server.folders import Folder, Folders, folder_root
from lsp_server.items import ACCEPTED_COMMAND
from lsp_server.protocol import RepomemProtocol
from lsp_server.workspace_docs import DocsReport
from repomem import __version__
from repomem.index.files import FileSkipped, check_prompt_text

logger = logging.getLogger(__name__)

STATUS = "repomem/status"
REINDEX_COMMAND = "repomem.reindex"


class RepomemServer(LanguageServer):
    """The language server; one instance per process."""

    def __init__(self) -> None:
        super().__init__("repomem", __version__, protocol_cls=RepomemProtocol, max_workers=4)
        self._builds = threading.Semaphore()  # one folder is (re)indexed at a time
        self.bars = status.Progress(self, self._client_supports, self.warn)
        self.folder_settings = FolderSettings(self, self.warn, self.bars.begin)
        self.folders = Folders(self._new_folder(None, None, None))
        self.loop: asyncio.AbstractEventLoop | None = None
        self.log_handler = logs.EditorLogHandler(self.window_log_message)
        self._init_options: Any = None
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
        self.command(ask_docs.ASK_COMMAND)(_plain(self._on_ask))

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
        self._init_options = self.folder_settings.editor_data = params.initialization_options
        for root, uri in workspace_folders(params):
            self.folders.add(self._new_folder(root, uri, self.folder_settings.editor_data))

    def _new_folder(self, root: Path | None, uri: str | None, data: Any) -> Folder:
        """A folder indexing with its settings from the start (problems with them are
        reported once the settings are final)."""
        editor, _ = editor_settings.resolve(base_settings(root)[0], data)
        return Folder(root, uri, editor, self, self._builds, self.warn)

    async def _on_initialized(self, params: types.InitializedParams) -> None:
        self.loop = asyncio.get_running_loop()
        self._starting = asyncio.current_task()
        self.log_handler.attach(self.loop)
        data = self._init_options
        if self._client_supports("workspace.configuration"):
            pulled = await self.folder_settings.pull()
            if pulled is not None:
                data = pulled
        await self.folder_settings.apply(self.folders, data)
        self._register_watchers()
        if not self.folders:
            logger.info("no workspace folder: completing from the open file only")
        for folder in self.folders:
            await self._start_folder(folder)

    async def _start_folder(self, folder: Folder) -> None:
        await self.bars.begin(folder)
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
                self.bars.end(folder, "folder removed")
                await folder.completer.aclose()
                await asyncio.to_thread(folder.index.stop)
        for added in params.event.added:
            root = folder_root(added.uri)
            if root is None or self.folders.get(root) is not None:
                continue
            folder = self._new_folder(root, added.uri, self.folder_settings.editor_data)
            self.folders.add(folder)
            await self.folder_settings.configure(folder)
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
    async def _on_configuration(self, params: types.DidChangeConfigurationParams) -> None:
        """Settings pushed as ``{"repomem": {...}}``; otherwise the client is asked for them
        (a client that cannot be asked and sent no object changed nothing we know of)."""
        data = params.settings
        wrapped = isinstance(data, dict) and editor_settings.SECTION in data
        if not wrapped and self._client_supports("workspace.configuration"):
            data = await self.folder_settings.pull()
        if data is None:
            return
        await self.folder_settings.apply(self.folders, data)

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
        self._from_thread(self.bars.report, folder, stage, done, total)

    def on_loaded(self, folder: Folder, files: int, fragments: int) -> None:
        logger.info(
            "%s: answering from the saved index (%d files, %d fragments) while re-indexing",
            folder.root,
            files,
            fragments,
        )

    def on_ready(self, folder: Folder, report: IndexReport) -> None:
        self._from_thread(self.bars.index_ready, folder, report)

    def on_failed(self, folder: Folder, message: str) -> None:
        self._from_thread(self.bars.index_failed, folder, message)

    def on_docs(self, folder: Folder, report: DocsReport) -> None:
        self._from_thread(self.bars.docs_ready, folder, report)

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
        the recent edits and views; None where it must reach no prompt (as for a completion)."""
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
        uri = param(params, "uri", None)
        ranges = param(params, "ranges", None)
        lines = line_ranges(ranges)
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
    async def _on_completion(self, params: types.CompletionParams) -> types.CompletionList | None:
        request = await self._request(params.text_document.uri, params.position)
        if request is None:
            return None
        formats = get_capability(
            self.client_capabilities,
            "text_document.completion.completion_item.documentation_format",
            [],
        )
        markdown = types.MarkupKind.Markdown in (formats or [])
        return await completion_requests.completion_list(request, markdown=markdown)

    async def _on_inline_completion(
        self, params: types.InlineCompletionParams
    ) -> types.InlineCompletionList | None:
        request = await self._request(params.text_document.uri, params.position)
        if request is None:
            return None
        return await completion_requests.inline_list(request)

    async def _request(self, uri: str, position: types.Position) -> Request | None:
        """The completion request at ``position``; None where its folder does not complete
        or the document is not open. The loose folder takes the editor's settings when it
        first serves."""
        folder = self.folders.for_uri(uri)
        if not folder.configured:
            await self.folder_settings.configure(folder)
        if not folder.editor.enable:
            return None
        doc = self._document(uri)
        return None if doc is None else completion_requests.request_at(folder, doc, uri, position)

    # ------------------------------------------------------------------ custom requests
    def _on_status(self, params: Any) -> dict[str, Any]:
        return status.status(self.folders)

    async def _on_retrieve(self, params: Any) -> dict[str, Any]:
        query, k, uri = retrieve_params(params)
        folder = self.folders.first if uri is None else self.folders.for_uri(uri)
        alpha = folder.editor.settings.completion.alpha
        found = await asyncio.to_thread(
            folder.index.retrieve, query, k=k, alpha=alpha, exclusion=None
        )
        return retrieved(folder, found)

    def _on_accepted(self, *args: Any) -> None:
        uri = param(args[0], "uri", None) if args else None
        folder = self.folders.for_uri(uri) if isinstance(uri, str) else self.folders.first
        folder.completer.stats.accepted += 1

    async def _on_reindex(self, *args: Any) -> None:
        """``repomem.reindex`` ``[folder?]``: that folder (a URI or path) or every one."""
        folders = [self._named_folder(args[0], REINDEX_COMMAND)] if args else list(self.folders)
        for folder in folders:
            folder.index.request_build()
            await self.bars.begin(folder)

    def _named_folder(self, name: Any, command: str) -> Folder:
        """The folder a command's argument names by a URI or path inside it."""
        folder = self.folders.for_uri(folder_uri(name, command))
        if folder.root is None:
            raise JsonRpcInvalidParams(f"{command}: {name} is in no workspace folder")
        return folder

    async def _on_ask(self, *args: Any) -> dict[str, Any]:
        """``repomem.ask``: the answer to a question, with its ``path:line`` sources, from
        the doc memory of the folder named (the first one by default), as ``repomem ask``
        gives it."""
        question, strategy, form, name = ask_docs.ask_arguments(args)
        command = ask_docs.ASK_COMMAND
        folder = self.folders.first if name is None else self._named_folder(name, command)
        return await ask_docs.answer(folder, question, strategy, form, self.bars)


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
    stdio.start_io(server, sys.stdin.buffer, protocol_out)

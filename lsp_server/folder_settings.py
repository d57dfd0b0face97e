"""Each folder's settings: its own (the user's file, the repository's files, the environment)
under the editor's, applied to its index, doc memory, recent context and completer whenever
either changes. Problems with them are gathered and shown once, not one popup per folder."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from lsp_server import editor_settings
from lsp_server.folders import Folder, Folders
from lsp_server.status import CLIENT_TIMEOUT_S
from repomem.settings import Settings, SettingsError, load_settings, untrusted_notice

logger = logging.getLogger(__name__)


def base_settings(root: Path | None) -> tuple[Settings, list[str]]:
    """The user's settings file, the repository's own settings (pyproject.toml,
    .repomem.toml; the keys only the user may set once trusted) and the environment."""
    try:
        return load_settings(root), []
    except SettingsError as exc:
        return Settings(), [f"{exc}; using the defaults"]


class FolderSettings:
    """The editor's settings as last received (``editor_data``), applied to the folders;
    ``reindexing`` is awaited for a folder whose new settings start a build."""

    def __init__(
        self,
        server: LanguageServer,
        warn: Callable[[str], None],
        reindexing: Callable[[Folder], Awaitable[None]],
    ) -> None:
        self._server = server
        self._warn = warn
        self._reindexing = reindexing
        self.editor_data: Any = None

    async def pull(self) -> Any:
        """The client's ``repomem`` section (None where it cannot answer)."""
        request = types.ConfigurationParams(
            items=[types.ConfigurationItem(section=editor_settings.SECTION)]
        )
        try:
            answer = await asyncio.wait_for(
                self._server.workspace_configuration_async(request), CLIENT_TIMEOUT_S
            )
        except Exception as exc:  # a client that cannot answer leaves the settings as they are
            logger.info("workspace/configuration failed: %s", exc)
            return None
        return answer[0] if answer else None

    async def apply(self, folders: Folders, data: Any) -> None:
        """The editor's settings over each folder's own; the loose folder only once it serves
        (or with no folder at all), so that a problem with them is not reported twice."""
        self.editor_data = data
        problems: list[str] = []
        for folder in folders.everyone():
            if folder.root is not None or folder.configured or not folders:
                await self._configure(folder, data, problems)
        self._tell(problems)

    async def configure(self, folder: Folder) -> None:
        """One folder (added, or serving for the first time) takes the editor's settings."""
        problems: list[str] = []
        await self._configure(folder, self.editor_data, problems)
        self._tell(problems)

    def _tell(self, problems: list[str]) -> None:
        if problems:
            self._warn("repomem: " + "; ".join(dict.fromkeys(problems)))

    async def _configure(self, folder: Folder, data: Any, problems: list[str]) -> None:
        base, more = base_settings(folder.root)
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
                await self._reindexing(folder)

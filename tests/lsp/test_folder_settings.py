"""Each folder's settings (lsp_server.folder_settings): a bad value is reported once, in
words, and leaves its default; a good one reaches the folder's index and completer."""

from __future__ import annotations

from pathlib import Path

import pytest
from folder_kit import Heard, make_folder
from repos import make_repo

from lsp_server.editor_settings import DEFAULT_INDEX_DELAY_MS
from lsp_server.folder_settings import FolderSettings, base_settings
from lsp_server.folders import Folder, Folders
from repomem.settings import Settings


async def _no_build(folder: Folder) -> None:
    raise AssertionError("the settings started no build")


def _settings(warnings: list[str]) -> FolderSettings:
    return FolderSettings(None, warnings.append, _no_build)  # type: ignore[arg-type]


@pytest.mark.asyncio
async def test_a_bad_value_is_told_once_and_keeps_the_default(tmp_path: Path) -> None:
    heard = Heard()
    folders = Folders(make_folder(None, heard))
    folders.add(make_folder(make_repo(tmp_path / "a"), heard))
    folders.add(make_folder(make_repo(tmp_path / "b"), heard))
    warnings: list[str] = []
    await _settings(warnings).apply(folders, {"indexDelayMs": -5, "debounceMs": 40})
    (warning,) = warnings  # one message for both folders
    assert warning.startswith("repomem: ") and "indexDelayMs must be an integer" in warning
    assert warning.count("indexDelayMs") == 1 and "-5" in warning
    for folder in folders:
        assert folder.configured
        assert folder.editor.index_delay_ms == DEFAULT_INDEX_DELAY_MS
        assert folder.index.schedule.delay_s == DEFAULT_INDEX_DELAY_MS / 1000
        assert folder.editor.debounce_ms == 40  # the good value is taken


@pytest.mark.asyncio
async def test_good_values_reach_the_index_docs_and_recent_context(tmp_path: Path) -> None:
    folder = make_folder(make_repo(tmp_path / "r"), Heard())
    warnings: list[str] = []
    settings = _settings(warnings)
    settings.editor_data = {"indexDelayMs": 50, "completion": {"docs": True, "recentLines": 3}}
    await settings.configure(folder)
    assert warnings == []
    assert folder.index.schedule.delay_s == pytest.approx(0.05)
    assert folder.index.docs.in_completions and folder.recent.context_lines == 3


def test_a_broken_settings_file_gives_the_defaults_and_says_so(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    assert base_settings(root) == (Settings(), [])
    (root / ".repomem.toml").write_text("[index\nbroken = ")
    settings, problems = base_settings(root)
    assert settings == Settings()
    (problem,) = problems
    assert ".repomem.toml" in problem and problem.endswith("; using the defaults")

"""Every test runs with its own empty user settings and trust store, so that neither the
developer's ``~/.config/repomem/config.toml`` nor repositories they trusted change what a
test sees; subprocesses (the CLI, the language server) inherit the same environment."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path_factory.mktemp("user")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(Path(home, "config")))
    monkeypatch.setenv("XDG_STATE_HOME", str(Path(home, "state")))

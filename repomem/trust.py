"""Which repositories' own settings files the user trusts (``repomem trust``).

A cloned repository is untrusted input: its ``.repomem.toml`` or ``pyproject.toml`` may say
how it is indexed, but not where the user's code, prompts and credentials go (the settings
named in ``repomem.settings.PROTECTED``). Those keys take effect from a repository's file only
once the user has trusted that file's settings as they are now, direnv's model: ``repomem
trust`` records the repository and a hash of each settings table in the user's state
directory (``$XDG_STATE_HOME/repomem/trusted.json``, default ``~/.local/state/repomem/``), and
a table that changed afterwards is untrusted again until trusted anew.

The hash covers the parsed settings table (``[tool.repomem]`` of ``pyproject.toml``, the whole
of ``.repomem.toml``), not the file's bytes: editing a project's dependencies in
``pyproject.toml`` does not revoke trust, changing any repomem setting does.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from repomem.errors import RepomemError

STATE_FILE = "trusted.json"


class TrustError(RepomemError):
    """The trust store cannot be read or written."""


def state_home() -> Path:
    """repomem's directory in the user's state directory (XDG's, else ``~/.local/state``)."""
    base = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(base) / "repomem"


def table_hash(table: Mapping[str, Any]) -> str:
    """A stable hash of a settings table (key order and formatting do not matter)."""
    text = json.dumps(table, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _key(root: Path) -> str:
    return str(root.resolve())


def load() -> dict[str, dict[str, str]]:
    """``{repository root: {settings file name: table hash}}``; empty when nothing is trusted."""
    path = state_home() / STATE_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise TrustError(f"{path}: cannot read the trusted repositories: {exc}") from None
    if not isinstance(data, dict):
        raise TrustError(f"{path}: cannot read the trusted repositories: not a JSON object")
    return {
        str(root): {str(k): str(v) for k, v in files.items()}
        for root, files in data.items()
        if isinstance(files, dict)
    }


def _save(data: Mapping[str, Mapping[str, str]]) -> None:
    home = state_home()
    try:
        home.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=home, prefix=".trusted-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, sort_keys=True)
        os.replace(tmp, home / STATE_FILE)
    except OSError as exc:
        raise TrustError(f"{home / STATE_FILE}: cannot record trust: {exc.strerror}") from None


def is_trusted(root: Path, file_name: str, table: Mapping[str, Any]) -> bool:
    """Whether the user trusted ``root``'s ``file_name`` with exactly these settings."""
    return load().get(_key(root), {}).get(file_name) == table_hash(table)


def trust(root: Path, tables: Mapping[str, Mapping[str, Any]]) -> None:
    """Trust ``root``'s settings files as they are now (``{file name: settings table}``);
    files not given are no longer trusted."""
    data = load()
    data[_key(root)] = {name: table_hash(table) for name, table in tables.items()}
    _save(data)


def revoke(root: Path) -> bool:
    """Forget ``root``; False when it was not trusted."""
    data = load()
    if data.pop(_key(root), None) is None:
        return False
    _save(data)
    return True

"""Locating the repository and the cursor from command-line arguments."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from repomem.errors import RepomemError

ROOT_MARKERS = (".repomem", ".git")
_LOCATION = re.compile(r"^(?P<file>.+?):(?P<line>-?\d+)(?::(?P<col>-?\d+))?$")


@dataclass(frozen=True)
class Position:
    """A cursor in a repository file: 0-based ``line`` and ``column``."""

    root: Path
    path: str  # repository-relative, posix
    line: int
    column: int
    name: str  # FILE as the user wrote it, for messages


def parse_location(location: str) -> tuple[str, int, int]:
    """``FILE:LINE[:COL]`` as editors and compilers print them: (file, line, column), both
    1-based; the column defaults to 1."""
    match = _LOCATION.match(location)
    if not match:
        raise RepomemError(f"expected FILE:LINE[:COL], got {location!r}")
    line = int(match["line"])
    column = int(match["col"]) if match["col"] is not None else 1
    if line < 1 or column < 1:
        raise RepomemError(f"{location}: lines and columns count from 1")
    return match["file"], line, column


def find_root(path: Path) -> Path:
    """The nearest directory holding ``.repomem`` or ``.git``: ``path`` itself if it is a
    directory, else one above it."""
    path = path.absolute()
    for directory in [path, *path.parents] if path.is_dir() else path.parents:
        if any((directory / marker).exists() for marker in ROOT_MARKERS):
            return directory
    raise RepomemError(
        f"{path} is not inside a repository: no directory above it has .git or .repomem"
        " (run `repomem index` on the repository first)"
    )


def parse_position(location: str) -> Position:
    """The cursor ``FILE:LINE[:COL]`` names, checked: the file exists inside a repository."""
    name, line, column = parse_location(location)
    path = Path(name).expanduser().absolute()
    if not path.is_file():
        raise RepomemError(f"{name}: no such file")
    root = find_root(path)
    resolved = path.resolve()
    if not resolved.is_relative_to(root.resolve()):
        raise RepomemError(f"{name} is outside the repository at {root}")
    rel = resolved.relative_to(root.resolve()).as_posix()
    return Position(root, rel, line - 1, column - 1, name)

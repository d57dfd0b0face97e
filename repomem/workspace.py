"""Locating the repository and the cursor from command-line arguments."""

from __future__ import annotations

import errno
import os
import re
import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path

from repomem.errors import RepomemError

# A directory holding one of these is a repository root; so is one whose ``pyproject.toml``
# has a ``[tool.repomem]`` table. The editor plugins find roots by the same rule
# (editors/nvim/lua/repomem/init.lua, lsp_server/README.md).
ROOT_MARKERS = (".git", ".repomem", ".repomem.toml")
PYPROJECT = "pyproject.toml"
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
    """The nearest repository root at or above ``path`` (``path`` itself if it is a directory,
    else one above it): a directory holding ``.git``, ``.repomem`` (an index),
    ``.repomem.toml``, or a ``pyproject.toml`` with a ``[tool.repomem]`` table."""
    path = path.absolute()
    for directory in [path, *path.parents] if path.is_dir() else path.parents:
        if is_root(directory):
            return directory
    raise RepomemError(
        f"{path} is not inside a repository: no directory above it has .git, .repomem,"
        " .repomem.toml or a pyproject.toml with [tool.repomem] (run `repomem index` on the"
        " project's directory first)"
    )


def is_root(directory: Path) -> bool:
    """Whether ``directory`` is a repository root (see :func:`find_root`)."""
    if any((directory / marker).exists() for marker in ROOT_MARKERS):
        return True
    pyproject = directory / PYPROJECT
    if not pyproject.is_file():
        return False
    try:
        with pyproject.open("rb") as handle:
            tool = tomllib.load(handle).get("tool")
    except (OSError, tomllib.TOMLDecodeError):
        return False  # not this file's job to report: the settings do, at a root found otherwise
    return isinstance(tool, dict) and "repomem" in tool


def parse_position(location: str) -> Position:
    """The cursor ``FILE:LINE[:COL]`` names, checked: the file exists inside a repository."""
    name, line, column = parse_location(location)
    path = Path(name).expanduser().absolute()
    _check_file(path, name)
    root = find_root(path)
    resolved = path.resolve()
    if not resolved.is_relative_to(root.resolve()):
        raise RepomemError(f"{name} is outside the repository at {root}")
    rel = resolved.relative_to(root.resolve()).as_posix()
    return Position(root, rel, line - 1, column - 1, name)


def _check_file(path: Path, name: str) -> None:
    """An error saying what ``path`` is when it is not a readable regular file: a loop of
    symbolic links or a broken link is not "no such file", and the fix differs."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RepomemError(
                f"{name}: a loop of symbolic links (following them leads back to where they"
                " started); point the link at a file"
            ) from None
        if path.is_symlink():
            raise RepomemError(
                f"{name}: a broken symbolic link (to {os.readlink(path)}, which does not exist)"
            ) from None
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            raise RepomemError(f"{name}: no such file") from None
        raise RepomemError(f"{name}: cannot read: {exc.strerror}") from None
    if stat.S_ISDIR(mode):
        raise RepomemError(f"{name}: is a directory, not a file")
    if not stat.S_ISREG(mode):
        raise RepomemError(f"{name}: not a regular file")


def check_cursor_line(text: str, line: int, name: str) -> None:
    """An error when the 1-based ``line`` lies past the end of ``text``. The file's lines are
    counted as an editor shows them (a final newline ends the last line, it does not start
    another), and the cursor may also sit on the empty line after a final newline, to write
    a new last line. Every command says it the same way."""
    last = text.count("\n") + 1  # the last line a cursor can be on
    lines = last - 1 if text.endswith("\n") or not text else last
    if line > last:
        raise RepomemError(
            f"{name}: line {line} is past the end ({name} has {lines}"
            f" line{'' if lines == 1 else 's'}; a cursor goes on line 1 to {last})"
        )

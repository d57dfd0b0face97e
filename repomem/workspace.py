"""Locating the repository and the cursor from command-line arguments."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from repomem.errors import RepomemError


@dataclass(frozen=True)
class Position:
    """A cursor in a repository file: 0-based ``line`` and ``column``."""

    root: Path
    path: str  # repository-relative, posix
    line: int
    column: int | None


def find_root(start: Path, index_dir: str = ".repomem") -> Path:
    """The nearest ancestor holding an index or a ``.git``."""
    start = start.resolve()
    for d in [start, *start.parents] if start.is_dir() else list(start.parents):
        if (d / index_dir / "CURRENT").is_file() or (d / ".git").exists():
            return d
    raise RepomemError(
        f"{start} is not inside an indexed repository or git work tree; "
        "run `repomem index PATH` on the repository first"
    )


def parse_position(spec: str, index_dir: str = ".repomem") -> Position:
    """``FILE:LINE[:COL]`` with 1-based LINE and COL, as editors and compilers print them."""
    parts = spec.rsplit(":", 2)
    nums: list[int] = []
    while len(parts) > 1 and parts[-1].isdigit() and len(nums) < 2:
        nums.insert(0, int(parts.pop()))
    if not nums:
        raise RepomemError(f"expected FILE:LINE[:COL], got {spec!r}")
    file = Path(":".join(parts))
    if not file.is_file():
        raise RepomemError(f"no such file: {file}")
    line = nums[0]
    col = nums[1] if len(nums) > 1 else None
    if line < 1 or (col is not None and col < 1):
        raise RepomemError(f"LINE and COL are 1-based, got {spec!r}")
    root = find_root(file.parent, index_dir)
    try:
        rel = file.resolve().relative_to(root).as_posix()
    except ValueError:
        raise RepomemError(f"{file} is outside the repository {root}") from None
    return Position(root, rel, line - 1, None if col is None else col - 1)

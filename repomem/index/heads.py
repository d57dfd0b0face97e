"""The rows a Python definition's card shows: its header (the ``def``/``class`` line(s) up to
the ``:`` closing its brackets) and its docstring's first paragraph, read from the file's
lines and its parse's statement rows."""

from __future__ import annotations

import re
from collections.abc import Sequence

# At most this many lines of a signature (a def with one parameter per line) and of a
# docstring paragraph.
MAX_SIGNATURE_LINES = 12
MAX_DOC_LINES = 3

_DOC_OPEN = re.compile(r"""^[rRbBuU]{0,2}("{3}|'{3}|"|')""")


def header_lines(lines: Sequence[str], start: int, end: int) -> list[str]:
    """A Python definition's header lines: up to the one that closes every bracket and ends
    with ``:``."""
    depth = 0
    last = min(end, start + MAX_SIGNATURE_LINES - 1, len(lines) - 1)
    for row in range(start, last + 1):
        code = lines[row].split("#", 1)[0]
        depth += code.count("(") + code.count("[") - code.count(")") - code.count("]")
        if depth <= 0 and code.rstrip().endswith(":"):
            return lines[start : row + 1]
    return lines[start : last + 1]


def docstring_lines(lines: Sequence[str], start: int, end: int) -> list[str]:
    """The first paragraph of the docstring opening at the first code line from ``start``."""
    row = start
    while row <= end and row < len(lines) and not lines[row].strip():
        row += 1
    if row > end or row >= len(lines):
        return []
    first = lines[row].strip()
    opened = _DOC_OPEN.match(first)
    if opened is None:
        return []
    quote = opened.group(1)
    out = [lines[row]]
    if first.count(quote) >= 2 and len(first) > len(opened.group(0)):
        return out  # a one-line docstring
    for r in range(row + 1, min(end + 1, len(lines), row + MAX_DOC_LINES)):
        line = lines[r]
        if quote in line:
            out.append(line)
            return out
        if not line.strip():
            break
        out.append(line)
    indent = lines[row][: len(lines[row]) - len(lines[row].lstrip())]
    out.append(f"{indent}...{quote}")
    return out

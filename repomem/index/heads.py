"""The rows a Python definition's card shows: its header (the ``def``/``class`` line(s) up to
the ``:`` closing its brackets) and its docstring's first paragraph. Found when the file is
parsed and kept with its node rows (``ParsedFile.node_head``, saved with them): a cursor's
first card of each definition scanned its lines for them (a third of cutting a card, and
first cards are the largest share of the definitions channel's first visit of a file); a card
now slices them (the standard library's 1,215 cards of 200 cursors cut in ~15% less time)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from repomem.index.parsed import ParsedFile

# At most this many lines of a signature (a def with one parameter per line) and of a
# docstring paragraph.
MAX_SIGNATURE_LINES = 12
MAX_DOC_LINES = 3

_DOC_OPEN = re.compile(r"""^[rRbBuU]{0,2}("{3}|'{3}|"|')""")
# ``node_head``'s fields, low bits first: the header's rows (0..MAX_SIGNATURE_LINES), the
# docstring's rows (0: none, ..MAX_DOC_LINES), whether the paragraph runs on past them (a
# ``...`` line closes it), and the blank rows between the header and the docstring
_HEAD_BITS, _DOC_BITS = 4, 2
_DOC_SHIFT = _HEAD_BITS
_MORE_BIT = 1 << (_HEAD_BITS + _DOC_BITS)
_GAP_SHIFT = _HEAD_BITS + _DOC_BITS + 1
_GAP_MAX = (1 << (31 - _GAP_SHIFT)) - 1
_HEAD_MASK, _DOC_MASK = (1 << _HEAD_BITS) - 1, (1 << _DOC_BITS) - 1


def node_heads(lines: Sequence[str], pf: ParsedFile) -> np.ndarray:
    """Per statement node of a Python parse, its definition's header and docstring rows,
    packed (``_HEAD_BITS`` …); 0 for a node no definition starts. A docstring more than
    ``_GAP_MAX`` blank rows below its header (16M) is not shown."""
    heads = np.zeros(pf.n_nodes, np.int32)
    starts, ends = pf.node_start.tolist(), pf.node_end.tolist()
    for d in pf.definitions:
        start, end = starts[d.node], ends[d.node]
        n = _header_rows(lines, start, end)
        row, count, more = _docstring_rows(lines, start + n, end)
        gap = row - start - n
        if count and gap <= _GAP_MAX:
            n |= count << _DOC_SHIFT | (_MORE_BIT if more else 0) | gap << _GAP_SHIFT
        heads[d.node] = n
    return heads


def head(
    pf: ParsedFile, lines: Sequence[str], first: int, node: int
) -> tuple[list[str], list[str]]:
    """A Python definition's header lines (up to the one that closes every bracket and ends
    with ``:``, at most ``MAX_SIGNATURE_LINES``) and the rows a card shows above its body:
    from ``first`` (its decorators' first row, or its own) through the header, then the
    first paragraph of its docstring (the first code line after the header), at most
    ``MAX_DOC_LINES`` of it, then a ``...`` line where it runs on. One slice of ``lines``
    holds them all (a card's first read of a file's lines is a slice each)."""
    start, packed = int(pf.node_start[node]), int(pf.node_head[node])
    end = start - first + (packed & _HEAD_MASK)  # the header's end in the slice
    count = packed >> _DOC_SHIFT & _DOC_MASK
    if not count:
        shown = lines[first : first + end]
        return shown[start - first :], shown
    row = end + (packed >> _GAP_SHIFT)  # the docstring's first row in the slice
    shown = lines[first : first + row + count]
    doc = shown[row:]
    if packed & _MORE_BIT:
        opening = doc[0]
        opened = _DOC_OPEN.match(opening.strip())
        assert opened is not None  # a docstring's first line opens it
        doc.append(f"{opening[: len(opening) - len(opening.lstrip())]}...{opened.group(1)}")
    return shown[start - first : end], shown[:end] + doc


def headers(
    pf: ParsedFile, lines: Sequence[str], nodes: list[int]
) -> tuple[list[int], list[list[str]]]:
    """The first rows and header lines (``head``'s) of several definitions (a class
    skeleton's methods), their rows read in one go."""
    if not nodes:
        return [], []
    starts, packed = pf.node_start[nodes].tolist(), pf.node_head[nodes].tolist()
    return starts, [lines[s : s + (p & _HEAD_MASK)] for s, p in zip(starts, packed, strict=True)]


def _header_rows(lines: Sequence[str], start: int, end: int) -> int:
    """How many rows from ``start`` ``header`` shows."""
    depth = 0
    last = min(end, start + MAX_SIGNATURE_LINES - 1, len(lines) - 1)
    for row in range(start, last + 1):
        code = lines[row].split("#", 1)[0]
        depth += code.count("(") + code.count("[") - code.count(")") - code.count("]")
        if depth <= 0 and code.rstrip().endswith(":"):
            return row + 1 - start
    return max(0, last + 1 - start)


def _docstring_rows(lines: Sequence[str], start: int, end: int) -> tuple[int, int, bool]:
    """The docstring opening at the first code line from ``start``: (its first row, how many
    rows ``docstring`` shows, whether the paragraph runs on past them); no rows: none."""
    row = start
    while row <= end and row < len(lines) and not lines[row].strip():
        row += 1
    if row > end or row >= len(lines):
        return row, 0, False
    first = lines[row].strip()
    opened = _DOC_OPEN.match(first)
    if opened is None:
        return row, 0, False
    quote = opened.group(1)
    if first.count(quote) >= 2 and len(first) > len(opened.group(0)):
        return row, 1, False  # a one-line docstring
    for r in range(row + 1, min(end + 1, len(lines), row + MAX_DOC_LINES)):
        line = lines[r]
        if quote in line:
            return row, r + 1 - row, False
        if not line.strip():
            return row, r - row, True
    return row, max(1, min(end + 1, len(lines), row + MAX_DOC_LINES) - row), True

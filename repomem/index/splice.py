"""Re-parse only the top-level statements an edit touched, keeping the old parse of the rest.

An edit of a file whose syntax tree is no longer kept (``parsing.TreeCache``) would otherwise
parse the whole file again, most of a one-file update in a long file (figures in
docs/MEASUREMENTS.md). A Python statement at the top level starts at column 0 with no
indentation open, so the statements before and after an edit parse alike whatever lies
between them. ``region`` finds the text between the last untouched statement before the edit
and the first one after it; ``parse_source`` parses that text alone and ``join`` puts the
three parts together.

The region grows over its neighbours while text at its edges could attach to them: an
indented line where it begins (a method added at the end of a class, or an indented comment,
belongs to the statement before), an indented statement just before or after it (tree-sitter
accepts one at the top level; after a block it joins the block, and it runs on over the lines
after it), a backslash ending the line before an edge, statements sharing a row across an
edge. A syntax error in the old file or in the new region, an indented top-level statement
inside the new region, a region of half the file or more, and a class name defined both
inside and outside the region (the bases of the last one win) send the file to a full parse.

C's units are the top-level declarations, definitions and preprocessor directives (an
``#if`` group with all it holds is one). tree-sitter expands no macro, so a unit parses alike
whatever surrounds it, save at the region's edges, where the region grows over a neighbour
while text could join the two: statements sharing a row, a backslash ending the line before an
edge, a block comment left open at the end of the line before, or a ``;`` or ``else`` next
after an edge (``struct s {...}`` takes the ``;`` that follows it on a later row, an ``if``
the ``else``). Most kernel files hold a syntax error somewhere (macros tree-sitter cannot
parse), so an old error does not stop a C splice: the region and the units next to it must have
been free of errors, which keeps it out of the recovery from one (a missing ``;`` is inserted
in view of the token after it, and may land rows after the unit it ends, past a comment). A
syntax error in the new region, or a parse that does not say where its errors lie (one read
back from a stored index), sends the file to a full parse, as does a ``case`` or ``default``
label starting the row of the unit before the region or among the region's units: tree-sitter
accepts one outside a ``switch`` without an error, and it takes in the statements after it.

C++ follows C (a template with its declaration is one unit; a ``catch`` after an edge grows the
region as ``else`` does, since alone it parses as a function). A namespace often holds most of
a file, so an edit between the rows of a top-level namespace's (or ``extern "C"`` block's)
braces, rows holding nothing else, takes its declarations for units: the region is parsed
inside a copy of the opening row and a closing brace, which gives it the context it has in the
file, and the copy's node stands for the namespace. Anything else (an error anywhere in the
file, a declaration on a brace's row) leaves the namespace one unit.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple, TypeVar

import numpy as np

if TYPE_CHECKING:
    from tree_sitter import Node

    from repomem.index.parsed import CallSite, Definition, ImportBinding, ParsedFile


LANGUAGES = frozenset({"python", "c", "cpp"})
NO_ERRORS = np.empty((0, 2), np.int32)


class Region(NamedTuple):
    """Rows ``[row, row + old_rows)`` of the old text became ``[row, row + new_rows)``, bytes
    ``[start, new_end)`` of the new text; old statement nodes ``[first_node, end_node)`` lie
    in it."""

    row: int
    old_rows: int
    new_rows: int
    start: int
    new_end: int
    first_node: int
    end_node: int
    parent: int = -1  # C++: the namespace holding the region, whose opening row wraps it
    opening: bytes = b""


def common_ends(old: bytes, new: bytes) -> tuple[int, int, int]:
    """The one edit turning ``old`` into ``new``: its start, and its end in each text, between
    their common prefix and their common suffix (which may not overlap the prefix)."""
    a, b = np.frombuffer(old, np.uint8), np.frombuffer(new, np.uint8)
    n = min(a.size, b.size)
    differ = np.flatnonzero(a[:n] != b[:n])
    start = int(differ[0]) if differ.size else n
    m = n - start
    differ = np.flatnonzero(a[a.size - m :][::-1] != b[b.size - m :][::-1])
    suffix = int(differ[0]) if differ.size else m
    return start, a.size - suffix, b.size - suffix


def region(old_source: bytes, old: ParsedFile, new_source: bytes, new_rows: int) -> Region | None:
    """Where ``new_source`` must be parsed again, given the old text and its parse; ``None``
    when a full parse is needed or costs about as much (the region is half the file)."""
    c = old.language != "python"  # C or C++
    errors = error_rows(old)
    if errors is None or (old.has_error and not c):
        return None
    start, old_end, new_end = common_ends(old_source, new_source)
    newlines = np.flatnonzero(np.frombuffer(old_source, np.uint8) == 10)

    def line_start(row: int) -> int:
        return int(newlines[row - 1]) + 1 if row > 0 else 0

    first_changed = int(np.searchsorted(newlines, start))
    after = int(np.searchsorted(newlines, old_end))  # the row holding old_end...
    if line_start(after) < old_end:  # ...or the next one when old_end is inside it
        after += 1

    old_total = old.line_owner.size
    parent, lo_row, hi_row, top = _units(old_source, old, errors, first_changed, after, line_start)
    top_start, top_end = old.node_start[top], old.node_end[top]
    j, end_row, old_stop, new_stop = _units_after(
        (old_source, new_source, new_end - old_end), old, top, after, hi_row, line_start
    )
    i, row, begin = _units_before(
        (old_source, new_source, c),
        (top_start, top_end),
        (first_changed, j, lo_row),
        (old_stop, new_stop),
        line_start,
    )
    if c and i:  # the unit before may be a ``case`` taking in the region's statements
        first = int(top_start[i - 1])
        if _CASE.search(old_source, line_start(first), line_start(first + 1)):
            return None
    if errors.size:  # neither the region nor the units next to it held an error
        lo = int(top_start[i - 1]) if i else 0
        hi = int(top_end[j]) if j < top.size else old_total
        if np.any((errors[:, 0] <= hi) & (errors[:, 1] >= lo)):
            return None
    first_node = int(np.searchsorted(old.node_start, row))
    end_node = int(top[j]) if j < top.size else int(np.searchsorted(old.node_start, end_row))
    part_rows = new_rows - (old_total - end_row) - row
    if 2 * part_rows > new_rows:  # an emptied file too: it counts one row, its region none
        return None
    opening = old_source[line_start(lo_row - 1) : line_start(lo_row)] if parent >= 0 else b""
    return Region(
        row, end_row - row, part_rows, begin, new_stop, first_node, end_node, parent, opening
    )


def _units(
    old_source: bytes,
    old: ParsedFile,
    errors: np.ndarray,
    first_changed: int,
    after: int,
    line_start: Callable[[int], int],
) -> tuple[int, int, int, np.ndarray]:
    """The units: the top-level nodes, or in a C++ file without an error those of the
    namespace (or ``extern "C"`` block) holding the edit, between the rows of its opening and
    closing braces. Returns (that block's node or -1, its first and end rows, the units)."""
    parent, lo_row, hi_row = -1, 0, old.line_owner.size
    top = np.flatnonzero(old.node_parent == -1)
    if old.language == "cpp" and not errors.size:
        k = int(np.searchsorted(old.node_start[top], first_changed)) - 1
        if k >= 0 and _opened(old_source, old, int(top[k]), first_changed, after, line_start):
            parent = int(top[k])
            lo_row, hi_row = int(old.node_start[parent]) + 1, int(old.node_end[parent])
            top = np.flatnonzero(old.node_parent == parent)
    return parent, lo_row, hi_row, top


def _units_after(
    texts: tuple[bytes, bytes, int],
    old: ParsedFile,
    top: np.ndarray,
    after: int,
    hi_row: int,
    line_start: Callable[[int], int],
) -> tuple[int, int, int, int]:
    """The statements after the region: from the first one starting after the edit, alone on
    its rows and not continuing the line before it (or it could join a statement the region
    ends with); in Python not indented, in C not opening with ``;``, ``else`` or ``catch``.
    ``texts``: the old and new source and how far the edit moved the text after it. Returns
    (that unit, its row, where it starts in the old and in the new source)."""
    old_source, new_source, shift = texts
    c = old.language != "python"
    top_start, top_end = old.node_start[top], old.node_end[top]
    j = int(np.searchsorted(top_start, after))
    end_row = hi_row
    old_stop = line_start(hi_row) if hi_row < old.line_owner.size else len(old_source)
    new_stop = old_stop + shift
    while j < top.size:
        stop = line_start(int(top_start[j]))
        if not (
            (j and top_start[j] <= top_end[j - 1])
            or _continued(new_source, stop + shift)
            or (_continues_unit(old_source, stop) if c else _indented(old_source, stop))
        ):
            end_row, old_stop, new_stop = int(top_start[j]), stop, stop + shift
            break
        j += 1
    return j, end_row, old_stop, new_stop


def _units_before(
    texts: tuple[bytes, bytes, bool],
    units: tuple[np.ndarray, np.ndarray],
    at: tuple[int, int, int],
    stops: tuple[int, int],
    line_start: Callable[[int], int],
) -> tuple[int, int, int]:
    """The statements before the region: those ending before the edit, less the last ones
    while the region would share a row with them or continue their last line; in Python
    while it opens with an indented line (which could belong to them, as a method added at
    the end of a class does) or the last one is indented (see ``join``); in C while their
    last line leaves a comment open or the region opens with ``;``, ``else`` or ``catch``.
    ``texts``: the old and new source, and whether it is C; ``units``: the units' start and
    end rows; ``at``: the first changed row, the first unit after and the first row of the
    block; ``stops``: where the region ends in the old and new source. Returns (the first
    unit of the region, its row, where it begins in the source)."""
    old_source, new_source, c = texts
    top_start, top_end = units
    first_changed, j, lo_row = at
    old_stop, new_stop = stops
    i = int(np.searchsorted(top_end, first_changed))
    while i:
        row = int(top_end[i - 1]) + 1
        begin = line_start(row)
        if (
            (i == j or top_start[i] >= row)
            and not _continued(old_source, begin)
            and (
                _c_opens(old_source, new_source, line_start(row - 1), begin)
                if c
                else _python_opens(old_source, new_source, begin, old_stop, new_stop)
                and not _indented(old_source, line_start(int(top_start[i - 1])))
            )
        ):
            break
        i -= 1
    else:
        row, begin = lo_row, line_start(lo_row)
    return i, row, begin


# a C ``case`` or ``default`` outside a ``switch`` parses without an error and takes in the
# statements after it, up to a directive or a declaration it cannot hold
_CASE = re.compile(rb"\b(?:case|default)\b")


def runs_on(root: Node, where: Region) -> bool:
    """The region, parsed (``root``), holds such a ``case``: it could take in the statements
    after the region too."""
    units = root.children
    if where.opening and units and (body := units[0].child_by_field_name("body")) is not None:
        units = body.children
    return any(u.type == "case_statement" for u in units)


# the only text on the rows of a namespace's (or ``extern "C"`` block's) braces
_OPENING = re.compile(
    rb'[ \t]*(?:(?:inline[ \t]+)?namespace(?:[ \t]+[\w:]+)?|extern[ \t]+"C(?:\+\+)?")'
    rb"[ \t]*\{[ \t]*(?://[^\n]*)?"
)
_CLOSING = re.compile(rb"[ \t]*\}[ \t]*(?://[^\n]*)?\r?\n?")


def _opened(
    source: bytes,
    old: ParsedFile,
    node: int,
    first: int,
    after: int,
    line_start: Callable[[int], int],
) -> bool:
    """Top-level ``node`` is a C++ namespace or ``extern "C"`` block whose braces' rows hold
    nothing else, and the edit (rows ``[first, after)``) lies between them: its declarations
    parse alike inside a copy of those two rows (``part_text``)."""
    a, b = int(old.node_start[node]), int(old.node_end[node])
    if not (a < first and after <= b):
        return False
    closing_end = line_start(b + 1) if b + 1 < old.line_owner.size else len(source)
    return bool(
        _OPENING.fullmatch(source[line_start(a) : line_start(a + 1) - 1].rstrip(b"\r"))
        and _CLOSING.fullmatch(source, line_start(b), closing_end)
    )


def part_text(where: Region, source: bytes) -> bytes:
    """The text to parse for ``where``: its rows of ``source``, inside a copy of the opening
    row and a closing brace of the namespace holding them, if any."""
    part = source[where.start : where.new_end]
    return where.opening + part + b"}" if where.opening else part


def error_rows(parsed: ParsedFile) -> np.ndarray | None:
    """The first and last rows of the top-level nodes holding a syntax error; ``None`` when
    the parse does not say."""
    return parsed.error_rows if parsed.has_error else NO_ERRORS


def _indented(text: bytes, at: int) -> bool:
    return text[at : at + 1] in (b" ", b"\t", b"\f")


def _continued(text: bytes, stop: int) -> bool:
    """The line ending just before ``stop`` ends with a backslash: it goes on past ``stop``."""
    return text[max(stop - 3, 0) : stop].rstrip(b"\r\n").endswith(b"\\")


def _python_opens(old: bytes, new: bytes, begin: int, old_stop: int, new_stop: int) -> bool:
    return _opens_at_column_0(new, begin, new_stop) and _opens_at_column_0(old, begin, old_stop)


def _opens_at_column_0(text: bytes, begin: int, stop: int) -> bool:
    """Blank lines and comments at column 0 until a line of code at column 0 (or ``stop``)."""
    while begin < stop:
        end = text.find(b"\n", begin, stop)
        end = stop if end < 0 else end
        if text[begin:end].strip():
            if _indented(text, begin):
                return False
            if text[begin : begin + 1] != b"#":
                return True
        begin = end + 1
    return True


def _c_opens(old: bytes, new: bytes, line: int, begin: int) -> bool:
    """A C region starting at ``begin`` (after the line starting at ``line``) opens apart:
    that line leaves no block comment open, and neither text goes on with ``;``, ``else`` or
    ``catch``."""
    opened = old.rfind(b"/*", line, begin)
    return (
        (opened < 0 or old.find(b"*/", opened + 2, begin) >= 0)
        and not _continues_unit(old, begin)
        and not _continues_unit(new, begin)
    )


# blanks, line splices and comments, then a token that extends a complete C or C++ statement
# (``catch`` a ``try``; alone, each parses without an error: ``else x();`` and ``catch (int) {}``
# as declarations); taken possessively, as a comment read to a later ``*/`` would try every way
# to fail in a long file
_CONTINUATION = re.compile(rb"(?:\s|\\\r?\n|//[^\n]*|/\*(?>.*?\*/))*+(?:;|else\b|catch\b)", re.S)


def _continues_unit(text: bytes, at: int) -> bool:
    return _CONTINUATION.match(text, at) is not None


class _Import(NamedTuple):
    node: int
    binding: ImportBinding


_Item = TypeVar("_Item", "Definition", "CallSite", "_Import")


def _classes_inside(
    old: ParsedFile, where: Region, part: ParsedFile, part_source: bytes
) -> set[str] | None:
    """The names of the classes the region defines, old and new; ``None`` where ``join``
    cannot splice (see there)."""
    k0, k1 = where.first_node, where.end_node
    if old.language == "python":
        newlines = np.flatnonzero(np.frombuffer(part_source, np.uint8) == 10)
        top_rows = part.node_start[part.node_parent == -1]
        line_starts = np.concatenate([[0], newlines + 1])[top_rows]
        if any(_indented(part_source, int(b)) for b in line_starts):
            return None
    # the bases of the classes in the region are the part's; a class also defined outside it
    # could take them from either (C has no bases)
    inside: set[str] = set()
    if old.language != "c":
        inside = {d.name for d in old.definitions if d.is_class and k0 <= d.node < k1}
        inside.update(d.name for d in part.definitions if d.is_class)
        if any(d.is_class and d.name in inside for d in old.definitions if not k0 <= d.node < k1):
            return None
    wrapped = where.parent >= 0
    if wrapped and (part.node_end[0] != where.new_rows + 1 or np.any(part.node_parent[1:] < 0)):
        return None  # a ``}`` too many closed the copy of the namespace early
    return inside


def _spliced(before: np.ndarray, mid: np.ndarray, after: np.ndarray) -> np.ndarray:
    return np.concatenate([before, mid, after]).astype(np.int32)


class _SplicedIds:
    """Node ids once the region's nodes ``[k0, k1)`` are replaced by the part's."""

    def __init__(self, where: Region, part_nodes: int) -> None:
        self.k0, self.k1 = where.first_node, where.end_node
        self.parent = where.parent
        self.wrapped = int(where.parent >= 0)  # part's node 0 and rows 0 and last: the wrapping
        self.moved = part_nodes - self.wrapped - (self.k1 - self.k0)

    def old_ids(self, a: np.ndarray) -> np.ndarray:
        """The nodes before the region keep theirs; those after it move."""
        return np.where(a >= self.k1, a + self.moved, a)

    def part_ids(self, a: np.ndarray) -> np.ndarray:
        """The part's nodes in the file; the wrapping stands for the namespace."""
        k0, wrapped = self.k0, self.wrapped
        return np.where(a >= wrapped, a - wrapped + k0, np.where(a >= 0, self.parent, a))

    def items(self, old_items: list[_Item], new_items: list[_Item]) -> list[_Item]:
        """The old items outside the region and the part's, at their nodes in the file."""
        k0, k1, moved = self.k0, self.k1, self.moved
        nodes = self.part_ids(np.array([x.node for x in new_items], np.int64)).tolist()
        return [
            *(x for x in old_items if x.node < k0),
            *(x._replace(node=n) for x, n in zip(new_items, nodes, strict=True)),
            *(x._replace(node=x.node + moved) if moved else x for x in old_items if x.node >= k1),
        ]


def join(
    old: ParsedFile, where: Region, part: ParsedFile, part_source: bytes, line_len: np.ndarray
) -> ParsedFile | None:
    """The old parse with ``where``'s statements replaced by ``part`` (``part_source``, the
    region, parsed alone, without a syntax error); ``None`` when, in Python or C++, a class name
    is defined both inside and outside the region; in Python, when one of the region's
    top-level statements is indented: tree-sitter accepts that without an error, but such a
    statement runs on over the lines after it (``    b,`` and ``y = 1`` on the next line parse
    as ``b, y = 1``), so where it ends depends on them; or, in C++, when the region's braces
    close the namespace around it before its end (without an error: the text after parses at
    the top level)."""
    inside = _classes_inside(old, where, part, part_source)
    if inside is None:
        return None
    shift = where.new_rows - where.old_rows
    errors = error_rows(old)
    assert errors is not None  # ``region`` found where they lie
    after = errors[errors[:, 0] >= where.row + where.old_rows] + shift
    errors = np.concatenate([errors[errors[:, 1] < where.row], after])
    ids = _SplicedIds(where, part.n_nodes)
    k0, k1, wrapped = ids.k0, ids.k1, ids.wrapped
    rows = slice(where.row, where.row + where.old_rows)
    imports = ids.items(
        [_Import(*x) for x in zip(old.import_nodes, old.imports, strict=True)],
        [_Import(*x) for x in zip(part.import_nodes, part.imports, strict=True)],
    )
    node_end = _spliced(
        old.node_end[:k0], part.node_end[wrapped:] - wrapped + where.row, old.node_end[k1:] + shift
    )
    if wrapped:
        node_end[where.parent] += shift
    return dataclasses.replace(
        old,
        digest=part.digest,
        line_len=line_len,
        node_start=_spliced(
            old.node_start[:k0],
            part.node_start[wrapped:] - wrapped + where.row,
            old.node_start[k1:] + shift,
        ),
        node_end=node_end,
        node_parent=_spliced(
            old.node_parent[:k0],
            ids.part_ids(part.node_parent[wrapped:]),
            ids.old_ids(old.node_parent[k1:]),
        ),
        line_owner=_spliced(
            old.line_owner[: rows.start],
            ids.part_ids(part.line_owner[wrapped : wrapped + where.new_rows]),
            ids.old_ids(old.line_owner[rows.stop :]),
        ),
        has_error=bool(errors.size),
        error_rows=errors,
        definitions=ids.items(old.definitions, part.definitions),
        calls=ids.items(old.calls, part.calls),
        imports=[x.binding for x in imports],
        import_nodes=[x.node for x in imports],
        bases={k: v for k, v in old.bases.items() if k not in inside} | part.bases,
    )

"""Where the end of the cursor's left context reappears in the repository: the places the
built-in backend may copy a continuation from, whether or not retrieval ranked them.

The index's BM25 postings say which fragments hold a name. The identifiers at the end of the
left context are taken from the last one backwards and the fragments holding all of them kept
(each name narrows the set), until few enough are left or a name is found nowhere: the longest
run of trailing names that co-occurs somewhere. These are candidates, not matches: the backend
finds the exact token match in their text. The postings are the index's own, so the candidates
follow every exact incremental update, and nothing is added to the index's memory (a suffix
array over the standard library's 7.1M tokens would add 57 MB of int32 ids and suffixes, and
an edit would have to re-sort it). Nor would exact matching find better places: on the dev
suite's 1,400 line tasks, the 4 to 32 places of the whole repository's token stream with the
longest exact matches, given to the backend instead of these or beside them, gave 249 to 252
right lines against these places' 255.

The cursor's own file is left out: its text before the cursor is the left context, which the
backend reads anyway, and its text near or after the cursor is what the user is writing (the
benchmark's snapshot holds the answer there).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

import numpy as np

from repomem.index.bm25 import tokenize

if TYPE_CHECKING:
    from repomem.index.repo import RepoIndex

# Trailing identifiers tried, at most, and the lines of context they are taken from.
_MAX_TERMS = 8
_TAIL_LINES = 4
# Locations read per fragment (identical windows of many files: one file says as much).
_LOCATIONS_PER_FRAGMENT = 2
# Beyond this many fragments, the trailing names are too common to be evidence worth reading.
_TOO_COMMON = 8
# Lines read after a matched window, so that a match on its last line has a continuation.
_LINES_AFTER = 16


@dataclass(frozen=True)
class Occurrence:
    """Lines of one file that may hold the context's end: ``text`` starts at 0-based line
    ``start`` of ``path``; ``near`` is 2 for the cursor's directory, 1 for its top-level
    package, 0 elsewhere."""

    path: str
    start: int
    text: str
    near: int


def trailing_terms(left_context: str) -> list[str]:
    """The identifiers at the end of the left context, last first; a name still being typed
    (the context ends inside it) is not one."""
    lines = left_context.rstrip("\n").rsplit("\n", _TAIL_LINES)[-_TAIL_LINES:]
    tail = "\n".join(lines)
    terms = tokenize(tail)
    if terms and re.search(r"\w$", left_context):
        terms = terms[:-1]
    return terms[::-1][:_MAX_TERMS]


def find_occurrences(
    index: RepoIndex, path: str, left_context: str, *, limit: int = 24
) -> list[Occurrence]:
    """Up to ``limit`` fragments' worth of lines, outside ``path``, holding the longest run of
    the context's trailing names that co-occurs anywhere (module doc); nearest files first."""
    bm25 = index.tables.bm25
    found: np.ndarray | None = None
    for term in dict.fromkeys(trailing_terms(left_context)):
        narrowed = bm25.documents_with(term, among=found)
        if narrowed.size == 0:
            break
        found = narrowed
        if found.size <= limit:
            break
    if found is None or found.size > _TOO_COMMON * limit:
        return []
    here = PurePosixPath(path)
    ranges: dict[str, list[tuple[int, int]]] = {}
    near: dict[str, int] = {}
    for fid in found.tolist():
        taken = 0
        for loc in index.tables.frag_locs[fid]:
            if loc.path == path:
                continue
            if loc.path not in near:
                near[loc.path] = _nearness(here, PurePosixPath(loc.path))
            ranges.setdefault(loc.path, []).append((loc.start, loc.end))
            taken += 1
            if taken == _LOCATIONS_PER_FRAGMENT:
                break
    # nearest first; within a tier by path, so the choice is the same in every run
    chosen = sorted(ranges, key=lambda p: (-near[p], p))
    out: list[Occurrence] = []
    budget = limit
    for p in chosen:
        lines = index.file_lines(p)
        for start, end in _merged(ranges[p]):
            if budget == 0:
                return out
            budget -= 1
            text = "\n".join(lines[start : end + _LINES_AFTER])
            out.append(Occurrence(p, start, text, near[p]))
    return out


def _nearness(here: PurePosixPath, there: PurePosixPath) -> int:
    if here.parent == there.parent:
        return 2
    return 1 if here.parts[:1] == there.parts[:1] and len(there.parts) > 1 else 0


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping or touching line ranges joined."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out

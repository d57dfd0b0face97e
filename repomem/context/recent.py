"""Recent edits and views: the code the user just changed or looked at, as prompt context.

The function added a minute ago in another file, the field just renamed, the code on screen in
the other editor: the next line often uses them, and retrieval over the whole repository does
not know they are recent. Like tabby-agent's recently changed code and Sourcegraph Cody's
recent-edits and open-tab retrievers, :class:`RecentContext` keeps, per document, the line
ranges the user changed (``context_lines`` around each change, touching ranges merged) and the
ranges recently visible, most recent first and bounded in number and length, and ranks them
against the cursor's query by the Jaccard similarity of their identifier sets (Cody's measure
for its windows). A range is never longer than ``MAX_SPAN`` lines; longer ones are scored in
windows of ``2 * context_lines + 1`` lines.

What the prompt already shows is left out (``excludes``): the cursor's own window, the code
above the cursor in its own file (the left context), and fragments retrieval found; a range
partly covered keeps its longest uncovered part.

A front end keeps one per repository and tells it what happens (the language server from
``textDocument/didChange`` and ``repomem/visibleRanges``); ranges hold line numbers only (kept
in step with later edits), and their text is read when searched from ``text_of``, so a range
shows the document as it is now. Events and searches may come from different threads (the
server's loop and the engine's).
"""

from __future__ import annotations

import functools
import itertools
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from repomem.core import Location, RetrievedFragment
from repomem.index.bm25 import tokenize

EDIT, VIEW = "edit", "view"
#: edited ranges kept, over all documents; the oldest go first
MAX_EDITS = 64
#: documents whose visible ranges are kept (each notification replaces its document's)
MAX_VIEWED = 8
#: the most lines a range keeps (those around its latest change), whatever was merged into it
MAX_SPAN = 200
#: a candidate must share at least this share of identifiers with the query (Jaccard)
MIN_SCORE = 0.05
#: a part left after taking out what the prompt shows is dropped below this many lines
MIN_LINES = 3
#: fragment ids of recent ranges: below the index's (>= 0) and the doc memory's (-1 - n)
_ID_BASE = -(2**40)


@dataclass(frozen=True)
class RecentRange:
    """Lines ``[start, end)`` (0-based) of the document at ``path``, ``kind`` ``edit`` or
    ``view``; ``stamp`` grows with each event (the most recent is the largest)."""

    path: str
    start: int
    end: int
    kind: str
    stamp: int


def identifiers(text: str) -> frozenset[str]:
    """The identifiers of ``text``, as BM25's tokenizer reads them (numbers left out)."""
    return frozenset(t for t in tokenize(text) if not t[0].isdigit())


@functools.lru_cache(maxsize=2**16)
def _line_identifiers(line: str) -> frozenset[str]:
    """A line's identifiers, remembered: most lines are the same from one search to the next."""
    return identifiers(line)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0


class RecentContext:
    """The recent edits and views of one repository's documents (see the module doc).

    ``text_of(path)`` gives a document's current text (None: gone).
    """

    def __init__(
        self,
        text_of: Callable[[str], str | None],
        *,
        context_lines: int = 10,
        max_edits: int = MAX_EDITS,
        max_viewed: int = MAX_VIEWED,
    ) -> None:
        if context_lines < 0:
            raise ValueError(f"context_lines must be at least 0, got {context_lines}")
        self.text_of = text_of
        self.context_lines = context_lines
        self.max_edits = max_edits
        self.max_viewed = max_viewed
        self._edits: list[RecentRange] = []  # most recent first
        self._views: dict[str, list[RecentRange]] = {}  # insertion order: oldest first
        self._clock = itertools.count(1)
        self._lock = threading.Lock()
        self._split: dict[str, tuple[str, list[str]]] = {}  # path: (text, its lines)

    def ranges(self) -> list[RecentRange]:
        """Every range kept, most recent first."""
        with self._lock:
            views = [r for ranges in self._views.values() for r in ranges]
            return sorted([*self._edits, *views], key=lambda r: -r.stamp)

    def replaced(self, path: str, old: str, new: str) -> None:
        """The document's text ``old`` became ``new`` (an editor that sends whole texts): the
        lines between their common start and common end were edited."""
        a, b = old.split("\n"), new.split("\n")
        same = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
        if same is None and len(a) == len(b):
            return
        start = min(len(a), len(b)) if same is None else same
        tail = 0
        while tail < min(len(a), len(b)) - start and a[-1 - tail] == b[-1 - tail]:
            tail += 1
        old_end, new_end = max(len(a) - tail - 1, start), max(len(b) - tail - 1, start)
        self.edited(path, start, old_end, new_end - start)

    def edited(self, path: str, start: int, end: int, added: int) -> None:
        """Lines ``[start, end]`` of ``path`` were replaced by ``added + 1`` lines (an LSP
        change's range and the number of newlines its text holds): ranges below move, and
        the change, with ``context_lines`` around it, joins the ranges it touches."""
        if start < 0 or end < start or added < 0:
            raise ValueError(f"bad change: lines {start}-{end} replaced by {added + 1} lines")
        with self._lock:
            self._edited(path, start, end, added)

    def _edited(self, path: str, start: int, end: int, added: int) -> None:
        shift = added - (end - start)
        n = self.context_lines
        first, last = max(0, start - n), start + added + 1 + n
        kept: list[RecentRange] = []
        for r in self._edits:
            if r.path == path:
                r = _shifted(r, end, shift)
                if r.start <= last and first <= r.end:
                    first, last = min(first, r.start), max(last, r.end)
                    continue
            kept.append(r)
        if last - first > MAX_SPAN:  # keep the lines around this change
            centre = start + (added + 1) // 2
            first = min(max(centre - MAX_SPAN // 2, first), last - MAX_SPAN)
            last = first + MAX_SPAN
        stamp = next(self._clock)
        self._edits = [RecentRange(path, first, last, EDIT, stamp), *kept][: self.max_edits]
        if path in self._views:
            self._views[path] = [_shifted(r, end, shift) for r in self._views[path]]

    def viewed(self, path: str, ranges: Iterable[tuple[int, int]]) -> None:
        """Lines ``[start, end)`` of ``path`` are on screen: they replace what was shown of it
        before, and the least recently shown document beyond ``max_viewed`` is forgotten."""
        with self._lock:
            stamp = next(self._clock)
            shown = [
                RecentRange(path, max(0, s), min(e, max(0, s) + MAX_SPAN), VIEW, stamp)
                for s, e in ranges
                if e > max(0, s)
            ]
            self._views.pop(path, None)
            if shown:
                self._views[path] = shown
            while len(self._views) > self.max_viewed:
                del self._views[next(iter(self._views))]

    def forget(self, path: str) -> None:
        """``path`` is gone (deleted or renamed): its ranges too."""
        with self._lock:
            self._edits = [r for r in self._edits if r.path != path]
            self._views.pop(path, None)

    def search(
        self, query: str, excludes: Sequence[Location], limit: int
    ) -> list[RetrievedFragment]:
        """Up to ``limit`` recent ranges most like ``query``, best first (ties: the more
        recent), none of them overlapping another or showing lines of ``excludes``. Each is
        a fragment of one location whose ``recent`` says ``edit`` or ``view`` and whose
        scores are the Jaccard similarity."""
        wanted = identifiers(query)
        if not wanted or limit <= 0:
            return []
        texts: dict[str, list[str] | None] = {}
        scored: list[tuple[float, int, Location, str]] = []
        for r in self.ranges():
            if r.path not in texts:
                texts[r.path] = self._lines(r.path)
            lines = texts[r.path]
            if lines is None:
                continue
            for start, end in self._windows(r, len(lines)):
                start, end = _uncovered(r.path, start, end, excludes)
                if end - start < MIN_LINES:
                    continue
                found = frozenset().union(*map(_line_identifiers, lines[start:end]))
                score = jaccard(wanted, found)
                if score >= MIN_SCORE:
                    scored.append((score, r.stamp, Location(r.path, start, end), r.kind))
        scored.sort(key=lambda s: (-s[0], -s[1], s[2].path, s[2].start))
        chosen: list[tuple[float, Location, str]] = []
        for score, _, loc, kind in scored:
            if len(chosen) >= limit:
                break
            if not any(_overlaps(loc, c[1]) for c in chosen):
                chosen.append((score, loc, kind))
        return [
            _fragment(i, score, loc, kind, texts[loc.path] or [])
            for i, (score, loc, kind) in enumerate(chosen)
        ]

    def _lines(self, path: str) -> list[str] | None:
        """The document's lines now, split again only when its text changed."""
        text = self.text_of(path)
        if text is None:
            self._split.pop(path, None)
            return None
        known = self._split.get(path)
        if known is not None and known[0] is text:
            return known[1]
        lines = text.split("\n")
        self._split[path] = (text, lines)
        if len(self._split) > self.max_edits + self.max_viewed:  # documents no range names
            paths = {r.path for r in self.ranges()}
            self._split = {p: v for p, v in self._split.items() if p in paths}
        return lines

    def _windows(self, r: RecentRange, size: int) -> list[tuple[int, int]]:
        """The range clipped to the document, in windows of ``2 * context_lines + 1`` lines
        (half overlapping) where it is longer than two of them."""
        start, end = min(r.start, size), min(r.end, size)
        width = 2 * self.context_lines + 1
        if end - start <= 2 * width:
            return [(start, end)]
        step = max(width // 2, 1)
        return [(s, min(s + width, end)) for s in range(start, end - width + step, step)]


def _shifted(r: RecentRange, end: int, shift: int) -> RecentRange:
    """``r`` after lines below ``end`` moved by ``shift`` (a range holding the change keeps
    its start and grows or shrinks)."""
    if shift == 0 or r.end <= end:
        return r
    if r.start > end:
        return replace(r, start=max(0, r.start + shift), end=max(0, r.end + shift))
    return replace(r, end=max(r.start, r.end + shift))


def _overlaps(a: Location, b: Location) -> bool:
    return a.path == b.path and a.start < b.end and b.start < a.end


def _uncovered(path: str, start: int, end: int, excludes: Sequence[Location]) -> tuple[int, int]:
    """The longest part of lines ``[start, end)`` of ``path`` that no exclude covers."""
    parts = [(start, end)]
    for ex in excludes:
        if ex.path != path:
            continue
        parts = [
            piece
            for s, e in parts
            for piece in ((s, min(e, ex.start)), (max(s, ex.end), e))
            if piece[1] > piece[0]
        ]
    return max(parts, key=lambda p: (p[1] - p[0], -p[0]), default=(start, start))


def _fragment(
    rank: int, score: float, loc: Location, kind: str, lines: list[str]
) -> RetrievedFragment:
    text = "\n".join(lines[loc.start : loc.end])
    return RetrievedFragment(
        fragment_id=_ID_BASE - rank,
        locations=(loc,),
        text=text,
        shown=text,
        s_ind=score,
        s_env=0.0,
        s_rel=score,
        shown_start=loc.start,
        recent=kind,
    )

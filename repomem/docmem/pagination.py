"""ReadAgent's episode pagination over a document's segments.

Reading goes from the last pause point up to ``max_words``; every boundary between segments
after at least ``min_words`` is a possible pause point, and one of them is chosen as the end
of the page. ReadAgent asks the model to choose (:func:`repomem.docmem.prompts.pagination`);
without a model the most natural boundary is taken: where the section changes at the
shallowest heading level, and among equals the latest (the fullest page).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from repomem.docmem.segments import Segment


@dataclass(frozen=True)
class PauseChoice:
    """One pagination step: the page may end before any of ``candidates`` (segment indices
    within the document); ``start``..``stop`` is the passage read."""

    start: int
    stop: int
    candidates: tuple[int, ...]


def next_choice(
    segments: Sequence[Segment], start: int, min_words: int, max_words: int
) -> PauseChoice | None:
    """The pause points for a page starting at ``start``; None when the rest fits one page
    (the caller then ends the document's last page at the end)."""
    n = len(segments)
    total = 0
    stop = start
    while stop < n and (stop == start or total + segments[stop].words <= max_words):
        total += segments[stop].words
        stop += 1
    if stop == n:
        return None
    candidates = []
    seen = 0
    for j in range(start + 1, stop + 1):
        seen += segments[j - 1].words
        if seen >= min_words:
            candidates.append(j)
    return PauseChoice(start, stop, tuple(candidates or [stop]))


def naturalness(segments: Sequence[Segment], boundary: int) -> int:
    """How natural a pause before ``segments[boundary]`` is: a change of top-level section
    scores highest, no change of section 0."""
    before, after = segments[boundary - 1].headings, segments[boundary].headings
    if before == after:
        return 0
    common = 0
    for a, b in zip(before, after, strict=False):
        if a != b:
            break
        common += 1
    return 100 - common


def structural_break(segments: Sequence[Segment], choice: PauseChoice) -> int:
    return max(choice.candidates, key=lambda j: (naturalness(segments, j), j))


def paginate(segments: Sequence[Segment], min_words: int, max_words: int) -> list[tuple[int, int]]:
    """Pages as ``[start, end)`` segment ranges, pausing at structural boundaries."""
    pages = []
    start = 0
    while start < len(segments):
        choice = next_choice(segments, start, min_words, max_words)
        end = len(segments) if choice is None else structural_break(segments, choice)
        pages.append((start, end))
        start = end
    return pages

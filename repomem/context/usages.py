"""Usages: code that calls the definitions the cursor's code uses, lifted next to BM25's.

A card shows how a function is declared; a call shows how the repository uses it (which
arguments, what is done with the result), which is what RepoCoder counts as API recall.
Similar code (BM25) calls such names often, but not always the ones the cards are for. The
index resolved every call, so each definition knows its callers (``RepoIndex.callers``):
for the best-ranked definitions, the caller in another file whose window BM25 finds most like
the cursor's is lifted, shown as the window around the call (not moved forward by the stride,
which could leave the call out). Every call of a definition is gathered in a few array
operations, whatever the number of calling files.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from repomem.context.cards import LISTING
from repomem.context.definitions import DefinitionHit
from repomem.core import Exclusion, RetrievedFragment

if TYPE_CHECKING:
    from repomem.index.repo import RepoIndex


def find_usages(
    index: RepoIndex,
    query: str,
    path: str,
    hits: Sequence[DefinitionHit],
    *,
    k: int,
    exclusion: Exclusion | None = None,
    retrieved: Sequence[RetrievedFragment] = (),
) -> list[RetrievedFragment]:
    """Up to ``k`` windows calling the definitions of ``hits`` (best first) from files
    other than ``path``, the most like ``query`` for each, none of ``retrieved``."""
    if k <= 0 or not hits:
        return []
    taken = {f.fragment_id for f in retrieved}
    return _callers(index, path, hits, query, index.visible(exclusion), limit=k, taken=taken)


def _callers(
    index: RepoIndex,
    path: str,
    hits: Sequence[DefinitionHit],
    query: str,
    visible: np.ndarray,
    *,
    limit: int,
    taken: set[int],
) -> list[RetrievedFragment]:
    """Up to ``limit`` fragments, one per definition in ``hits`` order, each the window
    around a call of it from a file other than ``path`` that scores best for ``query`` (BM25)
    among the ``visible`` fragments not ``taken`` (already shown); only those calling
    windows are scored."""
    out: list[RetrievedFragment] = []
    for hit in hits:
        if len(out) >= limit:
            break
        found = _best_caller(index, path, hit, query, visible, taken)
        if found is not None:
            taken.add(found.fragment_id)
            out.append(found)
    return out


def _definition_node(index: RepoIndex, hit: DefinitionHit) -> int | None:
    pf = index.parse(hit.card.path)
    if pf is None or hit.card.kind in ("constant", LISTING):
        return None
    found = pf.find_definition(hit.card.name)
    return found.node if found is not None else None


def _best_caller(
    index: RepoIndex,
    path: str,
    hit: DefinitionHit,
    query: str,
    visible: np.ndarray,
    taken: set[int],
) -> RetrievedFragment | None:
    node = _definition_node(index, hit)
    if node is None:
        return None
    frags = index.calling_fragments(hit.card.path, node, outside=path)
    frags = frags[frags < visible.size]
    frags = frags[visible[frags] & ~np.isin(frags, np.fromiter(taken, np.int64, len(taken)))]
    if frags.size == 0:
        return None
    s_ind = index.fragment_scores(query, frags)
    # best score, then lowest id, without sorting thousands of calling windows
    best_score = np.flatnonzero(s_ind == s_ind.max())
    at = int(best_score[np.argmin(frags[best_score])])
    best = int(frags[at])
    loc = min(
        (loc for loc in index.fragment_locations(best) if loc.path != path),
        key=lambda loc: (loc.path, loc.start),
    )
    text = "\n".join(index.file_lines(loc.path)[loc.start : loc.end])
    return RetrievedFragment(
        fragment_id=best,
        locations=(loc,),
        text=text,
        shown=text,
        s_ind=float(s_ind[at]),
        s_env=0.0,
        s_rel=float(s_ind[at]),
        usage_of=hit.card.name,
        shown_start=loc.start,
    )

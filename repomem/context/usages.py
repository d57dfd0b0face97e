"""Usages: code that calls the definitions the cursor's code uses, lifted next to BM25's.

A card shows how a function is declared; a call shows how the repository uses it (which
arguments, what is done with the result), which is what RepoCoder counts as API recall.
Similar code (BM25) calls such names often, but not always the ones the cards are for. The
index resolved every call, so each definition knows its callers (``RepoIndex.calls_into``):
for the best-ranked definitions, the caller in another file whose window BM25 finds most like
the cursor's is lifted, shown as the window around the call (not moved forward by the stride,
which could leave the call out).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from repomem.context.definitions import DefinitionHit
from repomem.context.scorer import Location, RetrievedFragment

if TYPE_CHECKING:
    from repomem.index.repo import RepoIndex


def find_usages(
    index: RepoIndex,
    path: str,
    hits: Sequence[DefinitionHit],
    s_ind: np.ndarray,
    visible: np.ndarray,
    *,
    limit: int,
    taken: set[int],
) -> list[RetrievedFragment]:
    """Up to ``limit`` fragments, one per definition in ``hits`` order, each the window
    around a call of it from a file other than ``path`` that scores best in ``s_ind`` (BM25
    of the query) among the ``visible`` fragments not ``taken`` (already shown)."""
    out: list[RetrievedFragment] = []
    for hit in hits:
        if len(out) >= limit:
            break
        found = _best_caller(index, path, hit, s_ind, visible, taken)
        if found is not None:
            taken.add(found.fragment_id)
            out.append(found)
    return out


def _definition_node(index: RepoIndex, hit: DefinitionHit) -> int | None:
    pf = index.parsed.get(hit.card.path)
    if pf is None or hit.card.kind == "constant":
        return None
    return next((d.node for d in pf.definitions if d.name == hit.card.name), None)


def _best_caller(
    index: RepoIndex,
    path: str,
    hit: DefinitionHit,
    s_ind: np.ndarray,
    visible: np.ndarray,
    taken: set[int],
) -> RetrievedFragment | None:
    node = _definition_node(index, hit)
    if node is None:
        return None
    best: tuple[float, int, str, int] | None = None  # (score, -fragment id, file, window)
    for caller, pairs in index.calls_into.get(hit.card.path, {}).items():
        if caller == path or caller not in index.files:
            continue
        sources = pairs[pairs[:, 1] == node, 0]
        if sources.size == 0:
            continue
        entry = index.files[caller]
        pf = index.parsed[caller]
        lines = pf.node_start[sources].astype(np.int64)
        # the window the call sits nearest the middle of
        centre = (entry.win_start + entry.win_end) / 2
        wins = np.unique(np.abs(centre[None, :] - lines[:, None]).argmin(axis=1))
        for w in wins.tolist():
            fid = int(entry.win_frag[w])
            if fid >= s_ind.size or not visible[fid] or fid in taken:
                continue
            key = (float(s_ind[fid]), -fid, caller, w)
            if best is None or key[:2] > best[:2]:
                best = key
    if best is None:
        return None
    score, neg_fid, caller, w = best
    entry = index.files[caller]
    start, end = int(entry.win_start[w]), int(entry.win_end[w])
    text = "\n".join(index.file_lines(caller)[start:end])
    return RetrievedFragment(
        fragment_id=-neg_fid,
        locations=(Location(caller, start, end),),
        text=text,
        shown=text,
        s_ind=score,
        s_env=0.0,
        s_rel=score,
        usage_of=hit.card.name,
    )

"""FragRel's relation-aware score (Eq. 9 and 10) over BM25 independent scores."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


@dataclass(frozen=True)
class Location:
    """Where a fragment's text stands: repository-relative posix path, 0-based lines
    ``[start, end)``."""

    path: str
    start: int
    end: int


@dataclass(frozen=True)
class RetrievedFragment:
    """One retrieval result, with the scores that explain its rank.

    ``text`` is the matched window; ``shown`` is what a prompt should show: the window moved
    forward by the stride (RepoCoder), since what follows similar code is what helps.
    """

    fragment_id: int
    locations: tuple[Location, ...]
    text: str
    shown: str
    s_ind: float
    s_env: float
    s_rel: float

    @property
    def path(self) -> str:
        return self.locations[0].path


@dataclass(frozen=True)
class Exclusion:
    """Lines retrieval must not see: a location is hidden when it is in ``path`` and overlaps
    ``[start, end)``; a fragment is excluded when *all* its locations are hidden.

    The editor hides the context around the cursor (the model sees it anyway); the RepoEval
    protocol hides everything of the task's file after ``context_start_lineno`` (``end`` left
    at its default), because the snapshot contains the answer.

    ``in_environment``: hidden fragments are still in other fragments' environment (Eq. 9).
    Where the index holds the user's buffer, they are code the model sees anyway, hidden only
    from retrieval, and leak nothing.
    """

    path: str
    start: int
    end: int = 2**62
    in_environment: bool = False

    def hides(self, loc: Location) -> bool:
        return loc.path == self.path and loc.end > self.start and loc.start < self.end

    def excludes(self, locations: tuple[Location, ...]) -> bool:
        return all(self.hides(loc) for loc in locations)


def environment_scores(
    relations: sp.csr_matrix, s_ind: np.ndarray, visible: np.ndarray
) -> np.ndarray:
    """Eq. 9: the relation-weighted mean of related fragments' independent scores.

    Only visible fragments count, in the numerator and in the normaliser; relations carry no
    self-loops, so a fragment is never its own environment.
    """
    num = relations @ np.where(visible, s_ind, 0.0)
    den = relations @ visible.astype(np.float64)
    out = np.zeros_like(num)
    np.divide(num, den, out=out, where=den > 0)
    return out


def relation_aware_scores(
    relations: sp.csr_matrix, s_ind: np.ndarray, visible: np.ndarray, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """Eq. 10: ``s_rel = s_ind + alpha * s_env``; returns ``(s_env, s_rel)``."""
    if alpha == 0.0:
        return np.zeros_like(s_ind), s_ind
    s_env = environment_scores(relations, s_ind, visible)
    return s_env, s_ind + alpha * s_env


def top_k(scores: np.ndarray, visible: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k best visible, positive scores, best first; ties by lower index."""
    cand = np.flatnonzero(visible & (scores > 0))
    if cand.size > k:
        part = np.argpartition(-scores[cand], k - 1)[:k]
        kth = scores[cand[part]].min()
        cand = cand[scores[cand] >= kth]
    order = np.lexsort((cand, -scores[cand]))
    return cand[order][:k]

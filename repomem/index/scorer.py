"""FragRel's relation-aware score (Eq. 9 and 10) over BM25 independent scores."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from repomem.index.jit import numba


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


# Candidates whose environment is computed; above this share of all fragments the bounded
# ranking computes every one (its bound has not pruned enough to be worth the bookkeeping).
_BOUNDED_SHARE = 1 / 8


@numba.njit(cache=True, nogil=True)
def _kth_positive(scores: np.ndarray, visible: np.ndarray, k: int) -> float:
    """The k-th largest visible positive score (0.0 if fewer are positive): a k-slot min-heap
    over one pass, which a score below its root leaves alone."""
    heap = np.zeros(k)
    for i in range(scores.shape[0]):
        x = scores[i]
        if x > heap[0] and visible[i]:
            heap[0] = x
            j = 0
            while True:
                c = 2 * j + 1
                if c >= k:
                    break
                if c + 1 < k and heap[c + 1] < heap[c]:
                    c += 1
                if heap[c] >= heap[j]:
                    break
                heap[c], heap[j] = heap[j], heap[c]
                j = c
    return heap[0]


@numba.njit(cache=True, nogil=True)
def _split(
    s_ind: np.ndarray,
    visible: np.ndarray,
    s_k: float,
    alpha: float,
    inv_start: np.ndarray,
    inv_end: np.ndarray,
) -> float:
    """The ``t`` (a multiple of ``s_k``) for which :func:`_candidates` takes the fewest rows:
    fragments above ``(1 - alpha * t) * s_k`` and those relating to one above ``t * s_k``,
    estimated from one pass's histogram of ``s_ind / s_k`` in 1/32 steps up to 2."""
    steps = 64
    count = np.zeros(steps + 1, np.int64)  # fragments per step of the ratio
    fan_in = np.zeros(steps + 1, np.int64)  # and the relation rows holding them
    for g in range(s_ind.shape[0]):
        if s_ind[g] > 0 and visible[g]:
            b = min(int(s_ind[g] / s_k * 32), steps)
            count[b] += 1
            fan_in[b] += inv_end[g] - inv_start[g]
    for b in range(steps - 1, -1, -1):  # from here on: at or above step b
        count[b] += count[b + 1]
        fan_in[b] += fan_in[b + 1]
    best, best_cost = 1 / (1 + alpha), np.inf
    for j in range(steps + 1):
        t = max(j / 32, 1 / (1 + alpha))
        direct = 1 - alpha * t
        cost = fan_in[min(int(t * 32), steps)]
        cost += count[max(int(direct * 32), 0)] if direct > 0 else count[0] + s_ind.shape[0]
        if cost < best_cost:
            best, best_cost = t, cost
    return best


@numba.njit(cache=True, nogil=True)
def _candidates(
    s_ind: np.ndarray,
    visible: np.ndarray,
    direct: float,
    high: float,
    inv_start: np.ndarray,
    inv_end: np.ndarray,
    inv_src: np.ndarray,
    limit: int,
) -> tuple[np.ndarray, bool]:
    """Visible fragments scoring above ``direct`` and the visible fragments relating to one
    scoring above ``high``, and whether they are at most ``limit`` (else the array is cut
    short)."""
    n = s_ind.shape[0]
    seen = np.zeros(n, np.bool_)
    out = np.empty(limit, np.int64)
    m = 0
    for g in range(n):
        if s_ind[g] > direct and visible[g]:
            if m == limit:
                return out[:m], False
            seen[g] = True
            out[m] = g
            m += 1
    for g in range(n):
        if s_ind[g] > high and visible[g]:
            for p in range(inv_start[g], inv_end[g]):
                f = inv_src[p]
                if not seen[f] and visible[f]:
                    if m == limit:
                        return out[:m], False
                    seen[f] = True
                    out[m] = f
                    m += 1
    return out[:m], True


@numba.njit(cache=True, nogil=True)
def _environment_rows(
    rows: np.ndarray,
    rel_idx: np.ndarray,
    rel_val: np.ndarray,
    s_ind: np.ndarray,
    visible: np.ndarray,
) -> np.ndarray:
    """Eq. 9 for ``rows`` alone, from the padded relation rows (-1: empty slot), summing in
    slot order with the products :func:`environment_scores` forms: the same floats."""
    out = np.zeros(rows.shape[0])
    for i in range(rows.shape[0]):
        f = rows[i]
        num = 0.0
        den = 0.0
        for j in range(rel_idx.shape[1]):
            g = rel_idx[f, j]
            if g >= 0:
                v = rel_val[f, j]
                if visible[g]:
                    num += v * s_ind[g]
                    den += v * 1.0
                else:
                    num += v * 0.0
                    den += v * 0.0
        if den > 0:
            out[i] = num / den
    return out


def bounded_top_k(
    rel_idx: np.ndarray,
    rel_val: np.ndarray,
    inverse: tuple[np.ndarray, np.ndarray, np.ndarray],
    s_ind: np.ndarray,
    visible: np.ndarray,
    alpha: float,
    k: int,
    environment: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``top_k`` of Eq. 10's scores, with Eq. 9 computed only where it can matter; returns the
    ids and their ``s_env`` and ``s_rel``, the floats full scoring gives. ``environment``:
    the fragments Eq. 9 averages over when they are not the ``visible`` ones (fragments
    hidden from the results that still count as others' environment); every fragment is
    then scored.

    With scores >= 0 and positive strengths, ``s_ind <= s_rel`` and ``s_env`` is at most the
    largest ``s_ind`` among a fragment's visible relations. Let ``s_k`` be the k-th largest
    visible ``s_ind``: a fragment scoring at most ``D`` whose visible relations all score at
    most ``H``, with ``D + alpha * H`` a hair below ``s_k``, has ``s_rel < s_k``, below the k
    fragments that score ``s_k`` or more alone, so it cannot rank (not even on a tie). The
    rest, the fragments above ``D`` and those relating to one above ``H`` (``inverse``: per
    fragment, the ``[start, end)`` of the fragments relating to it in an array of them), are
    scored exactly; ``H`` is chosen where they are fewest (with ``alpha`` 0: the fragments
    scoring ``s_k`` or more).
    Negative scores or ``alpha`` void the bound: then, as when too many fragments remain,
    every fragment is scored.
    """
    n = s_ind.shape[0]
    if alpha == 0.0:
        s_k = _kth_positive(s_ind, visible, k) if k > 0 else 0.0
        rows = np.flatnonzero((s_ind >= s_k) & visible) if s_k > 0 else np.arange(n)
        ids = rows[top_k(s_ind[rows], visible[rows], k)]
        return ids, np.zeros(ids.size), s_ind[ids]
    bounded = False
    if alpha > 0 and k > 0 and n and s_ind.min() >= 0 and environment is None:
        s_k = _kth_positive(s_ind, visible, k)
        high = _split(s_ind, visible, s_k, alpha, *inverse[:2]) if s_k > 0 else 1.0
        margin = 1 - 1e-9  # covers the rounding of Eq. 9's mean and of Eq. 10
        direct, high = (1 - alpha * high) * s_k * margin, high * s_k * margin
        limit = max(k, int(n * _BOUNDED_SHARE))
        rows, bounded = _candidates(s_ind, visible, direct, high, *inverse, limit)
    if not bounded:
        rows = np.arange(n, dtype=np.int64)
    env = visible if environment is None else environment
    s_env = _environment_rows(rows, rel_idx, rel_val, s_ind, env)
    s_rel = s_ind[rows] + alpha * s_env
    keep = (s_rel > 0) & visible[rows]
    order = np.lexsort((rows[keep], -s_rel[keep]))[:k]
    return rows[keep][order], s_env[keep][order], s_rel[keep][order]

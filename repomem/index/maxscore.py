"""Exact top-k BM25 by MaxScore: a long code query's common terms are never walked.

A query window of code holds dozens of distinct terms, several of them in most fragments
(``if``, ``return``, ``struct``); scoring all their postings is what makes BM25 slow on a large
repository, yet such a term's largest possible contribution (its weight times the largest
``tf / (tf + norm)`` among its postings) is small. So the query's terms are taken from the
largest bound down; each posting's document, seen for the first time, is scored completely from
its own row (the index keeps the rows by document id) unless the term's contribution plus the
bounds of the terms still to come falls short of the k-th score so far; and once the bounds of
the remaining terms together fall short of it, no document outside their postings' first
sightings can enter, so their postings are not walked at all. Rows added since the last
compaction (the delta) are few and scored one by one.

The scores are the floats :meth:`BM25Index.scores` gives (the same products, summed in the same
order), and the ranking is ``top_k``'s (best first, ties by lower id), so the result is the
full scoring's top k exactly. Bounds are compared with a relative slack far above the rounding
of a sum of a few hundred terms, so a bound never excludes a document that would tie.

The per-term maxima are taken at compaction (and saved with the index) for the mean length
then; with the lengths since changed by edits, ``tf / (tf + k1 * (1 - b + b * len / avgdl))``
grows at most in proportion to ``avgdl``, so the saved maximum times ``max(1, avgdl now /
avgdl then)`` still bounds every main posting. Removed documents only lower the true maximum.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from repomem.index.jit import numba

# relative slack on every bound (rounding of the sums is ~1e-14 at most)
SLACK = 1e-9

FloatArray = npt.NDArray[np.float64]
Float32Array = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]
Int32Array = npt.NDArray[np.int32]
BoolArray = npt.NDArray[np.bool_]


@numba.njit(cache=True, nogil=True)
def _maxima(
    term_ptr: IntArray,
    post_row: Int32Array,
    post_tf: Int32Array,
    row_len: IntArray,
    k1: float,
    b: float,
    avgdl: float,
) -> FloatArray:
    n_terms = term_ptr.shape[0] - 1
    out = np.zeros(n_terms)
    for t in range(n_terms):
        best = 0.0
        for p in range(term_ptr[t], term_ptr[t + 1]):
            tf = float(post_tf[p])
            x = tf / (tf + k1 * (1 - b + b * row_len[post_row[p]] / avgdl))
            if x > best:
                best = x
        out[t] = best
    return out


def term_maxima(
    term_ptr: IntArray,
    post_row: Int32Array,
    post_tf: Int32Array,
    row_len: IntArray,
    k1: float,
    b: float,
    avgdl: float,
) -> Float32Array:
    """Per term, the largest ``tf / (tf + norm)`` among its postings at mean length
    ``avgdl``, rounded up to float32 (half the size saved, still a bound)."""
    exact = _maxima(term_ptr, post_row, post_tf, row_len, k1, b, avgdl)
    out = exact.astype(np.float32)
    low = out < exact
    out[low] = np.nextafter(out[low], np.float32(np.inf))
    return out


@numba.njit(cache=True, nogil=True, inline="always")
def _worse(s1: float, d1: int, s2: float, d2: int) -> bool:
    return s1 < s2 or (s1 == s2 and d1 > d2)


@numba.njit(cache=True, nogil=True)
def _push(heap_s: FloatArray, heap_d: IntArray, count: int, s: float, d: int) -> int:
    """Offer document ``d`` scoring ``s`` to the k-slot heap whose root is the worst kept
    (lowest score, then highest id); returns the number kept."""
    if not s > 0.0:
        return count
    k = heap_s.shape[0]
    if count < k:
        i = count
        heap_s[i], heap_d[i] = s, d
        while i > 0:
            up = (i - 1) // 2
            if not _worse(heap_s[i], heap_d[i], heap_s[up], heap_d[up]):
                break
            heap_s[i], heap_s[up] = heap_s[up], heap_s[i]
            heap_d[i], heap_d[up] = heap_d[up], heap_d[i]
            i = up
        return count + 1
    if not _worse(heap_s[0], heap_d[0], s, d):
        return count
    heap_s[0], heap_d[0] = s, d
    i = 0
    while True:
        c = 2 * i + 1
        if c >= k:
            break
        if c + 1 < k and _worse(heap_s[c + 1], heap_d[c + 1], heap_s[c], heap_d[c]):
            c += 1
        if not _worse(heap_s[c], heap_d[c], heap_s[i], heap_d[i]):
            break
        heap_s[i], heap_s[c] = heap_s[c], heap_s[i]
        heap_d[i], heap_d[c] = heap_d[c], heap_d[i]
        i = c
    return count


@numba.njit(cache=True, nogil=True, inline="always")
def _slot(keys: IntArray, mask: int, t: int) -> int:
    h = (t * 2654435761) & mask
    while keys[h] != -1 and keys[h] != t:
        h = (h + 1) & mask
    return h


@numba.njit(cache=True, nogil=True)
def pruned_top_k(
    term_ptr: IntArray,
    post_row: Int32Array,
    post_tf: Int32Array,
    row_ptr: IntArray,
    row_terms: Int32Array,
    row_tf: Int32Array,
    row_doc: IntArray,
    main_rows: int,
    norm: FloatArray,
    terms: IntArray,
    weights: FloatArray,
    bounds: FloatArray,
    order: IntArray,
    visible: BoolArray,
    k: int,
) -> tuple[IntArray, FloatArray, int]:
    """The ``k`` best visible documents with a positive score (ids, scores, unordered) and
    how many were scored in full. ``terms``/``weights`` in the order :meth:`BM25Index.scores`
    sums them; ``bounds``: each term's largest contribution to a main row, >= 0 (so every
    weight is); ``order``: the terms by bound, largest first."""
    m = terms.shape[0]
    size = 16
    while size < 4 * m:
        size *= 2
    mask = size - 1
    keys = np.full(size, -1, np.int64)
    pos = np.full(size, -1, np.int64)  # query position of the term in each slot
    for j in range(m):
        h = _slot(keys, mask, terms[j])
        keys[h] = terms[j]
        pos[h] = j
    heap_s = np.zeros(k)
    heap_d = np.zeros(k, np.int64)
    count = 0
    full = 0
    n_vis = visible.shape[0]
    # the delta, row by row, summed in row order like the full scoring's delta scan
    for r in range(main_rows, row_ptr.shape[0] - 1):
        nr = norm[r]
        d = row_doc[r]
        if nr == np.inf or d >= n_vis or not visible[d]:
            continue
        total = 0.0
        for q in range(row_ptr[r], row_ptr[r + 1]):
            j = pos[_slot(keys, mask, row_terms[q])]
            if j >= 0 and weights[j] != 0.0:
                tf = float(row_tf[q])
                total += weights[j] * tf / (tf + nr)
        full += 1
        count = _push(heap_s, heap_d, count, total, d)
    rest = np.zeros(m + 1)  # rest[i]: the bounds of order[i:] together
    for i in range(m - 1, -1, -1):
        rest[i] = rest[i + 1] + bounds[order[i]]
    seen = np.zeros(main_rows, np.bool_)
    part = np.zeros(m)
    n_main_terms = term_ptr.shape[0] - 1
    for i in range(m):
        if count == k and rest[i] < heap_s[0]:
            break  # a document first met from here on scores below the k-th
        j = order[i]
        t = terms[j]
        if t >= n_main_terms:
            continue
        w = weights[j]
        after = rest[i + 1]
        for p in range(term_ptr[t], term_ptr[t + 1]):
            d = post_row[p]
            if seen[d]:
                continue
            seen[d] = True
            nd = norm[d]
            if nd == np.inf or d >= n_vis or not visible[d]:
                continue
            if count == k:
                tf = float(post_tf[p])
                if w * tf / (tf + nd) * (1 + SLACK) + after < heap_s[0]:
                    continue  # not in the terms before, at most the bounds after
            # in full, from the document's row, summed in query order like the postings walk
            for q in range(row_ptr[d], row_ptr[d + 1]):
                jj = pos[_slot(keys, mask, row_terms[q])]
                if jj >= 0:
                    tf = float(row_tf[q])
                    part[jj] = weights[jj] * tf / (tf + nd)
            s = 0.0
            for jj in range(m):
                s += part[jj]
                part[jj] = 0.0
            full += 1
            count = _push(heap_s, heap_d, count, s, d)
    return heap_d[:count], heap_s[:count], full

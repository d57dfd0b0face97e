"""Exact top-k BM25 by MaxScore: a long code query's common terms are mostly not walked.

A query window of code holds dozens of distinct terms, several of them in most fragments
(``if``, ``return``, ``struct``); scoring all their postings is what makes BM25 slow on a large
repository, yet such a term's largest possible contribution (its weight times the largest
``tf / (tf + norm)`` among its postings, its *bound*) is small. :func:`pruned_top_k` first
scores in full the documents of the query's rarest terms (a few hundred postings), which gives
a k-th score ``theta`` that is usually already the final one; then sums the other terms per
document, most bound per posting first, until the bounds of the terms left fall below
``theta`` (a document in none of the summed lists cannot rank); drops the summed documents
whose sum plus those bounds falls short, summing further lists for the rest while that is
cheaper than scoring them (leaping through a long list for a few candidates); and scores the
survivors in full, best sums first. A document is scored in full from its own row (the index
keeps rows by document id). Rows added since the last compaction (the delta) are scored one by
one. When summing would walk more than ``MOST_WALKED`` of the query's postings (bounds that
prune little), the caller scores every posting instead, as it does below ``PRUNED_FROM``
documents.

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

# Below this many documents, scoring every posting of a query (a few ns each, in one pass)
# beats the bookkeeping of pruning: the Python standard library's 29k fragments answer in
# 0.3 ms scored in full and 0.5 ms pruned.
PRUNED_FROM = 1 << 16
# relative slack on every bound (rounding of the sums is ~1e-14 at most)
SLACK = 1e-9
# postings whose documents are scored in full to find a first k-th score (~100 ns each)
FIRST_BUDGET = 256
# scoring a document in full from its row costs about this many times its length in postings
# walked (a hash probe per entry against a read and an addition per posting)
ROW_COST = 2.0
# a lookup by leaps in a posting list costs about this many postings walked per step
_LEAP_COST = 2.0
# a main row's mark while a query runs: scored in full already
_SCORED = 1
# step 2 gives up beyond this share of the query's postings: scoring them all is cheaper
MOST_WALKED = 0.1

FloatArray = npt.NDArray[np.float64]
Float32Array = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]
Int32Array = npt.NDArray[np.int32]
Int8Array = npt.NDArray[np.int8]
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


@numba.njit(cache=True, nogil=True)
def select(scores: FloatArray, visible: BoolArray, k: int) -> tuple[IntArray, FloatArray]:
    """The ``k`` best positive scores among ``visible`` (ids past its end are not), unordered:
    one pass through a k-slot heap."""
    heap_s = np.zeros(k)
    heap_d = np.zeros(k, np.int64)
    count = 0
    for d in range(min(scores.shape[0], visible.shape[0])):
        if visible[d] and (count < k or scores[d] >= heap_s[0]):
            count = _push(heap_s, heap_d, count, scores[d], d)
    return heap_d[:count], heap_s[:count]


@numba.njit(cache=True, nogil=True, inline="always")
def _slot(keys: IntArray, mask: int, t: int) -> int:
    h = (t * 2654435761) & mask
    while keys[h] != -1 and keys[h] != t:
        h = (h + 1) & mask
    return h


@numba.njit(cache=True, nogil=True)
def _positions(terms: IntArray) -> tuple[IntArray, IntArray, int]:
    """An open-addressing table from term id to query position (``_slot``; load <= 1/4)."""
    size = 16
    while size < 4 * terms.shape[0]:
        size *= 2
    keys = np.full(size, -1, np.int64)
    pos = np.full(size, -1, np.int64)
    for j in range(terms.shape[0]):
        h = _slot(keys, size - 1, terms[j])
        keys[h] = terms[j]
        pos[h] = j
    return keys, pos, size - 1


@numba.njit(cache=True, nogil=True)
def _score_delta_row(
    row_ptr: IntArray,
    row_terms: Int32Array,
    row_tf: Int32Array,
    r: int,
    nr: float,
    keys: IntArray,
    pos: IntArray,
    mask: int,
    weights: FloatArray,
) -> float:
    """Delta row ``r``'s score, summed in row order like the full scoring's delta scan."""
    total = 0.0
    for q in range(row_ptr[r], row_ptr[r + 1]):
        j = pos[_slot(keys, mask, row_terms[q])]
        if j >= 0 and weights[j] != 0.0:
            tf = float(row_tf[q])
            total += weights[j] * tf / (tf + nr)
    return total


@numba.njit(cache=True, nogil=True)
def _score_row(
    row_ptr: IntArray,
    row_terms: Int32Array,
    row_tf: Int32Array,
    d: int,
    nd: float,
    keys: IntArray,
    pos: IntArray,
    mask: int,
    weights: FloatArray,
    part: FloatArray,
) -> float:
    """Main document ``d``'s score from its row, summed in query order like the postings walk
    of :meth:`BM25Index.scores` (``part``: zeros, one per query term, left zeros)."""
    for q in range(row_ptr[d], row_ptr[d + 1]):
        j = pos[_slot(keys, mask, row_terms[q])]
        if j >= 0:
            tf = float(row_tf[q])
            part[j] = weights[j] * tf / (tf + nd)
    s = 0.0
    for j in range(part.shape[0]):
        s += part[j]
        part[j] = 0.0
    return s


@numba.njit(cache=True, nogil=True)
def score_rows(
    row_ptr: IntArray,
    row_terms: Int32Array,
    row_tf: Int32Array,
    rows: IntArray,
    main_rows: int,
    norm: FloatArray,
    terms: IntArray,
    weights: FloatArray,
) -> FloatArray:
    """The scores of the documents whose live rows are ``rows`` (-1: none, scores 0), the
    floats :meth:`BM25Index.scores` gives: main rows summed in query order, delta rows in
    row order."""
    keys, pos, mask = _positions(terms)
    part = np.zeros(terms.shape[0])
    out = np.zeros(rows.shape[0])
    for i in range(rows.shape[0]):
        r = rows[i]
        if r < 0 or norm[r] == np.inf:
            continue
        if r < main_rows:
            out[i] = _score_row(
                row_ptr, row_terms, row_tf, r, norm[r], keys, pos, mask, weights, part
            )
            continue
        out[i] = _score_delta_row(row_ptr, row_terms, row_tf, r, norm[r], keys, pos, mask, weights)
    return out


@numba.njit(cache=True, nogil=True)
def _unmark(
    term_ptr: IntArray,
    post_row: Int32Array,
    terms: IntArray,
    first: BoolArray,
    length: IntArray,
    mark: Int8Array,
) -> None:
    """Clear the marks of step 1's documents: the postings of its terms."""
    for j in range(terms.shape[0]):
        if first[j] and length[j]:
            t = terms[j]
            for p in range(term_ptr[t], term_ptr[t + 1]):
                mark[post_row[p]] = 0


@numba.njit(cache=True, nogil=True)
def _keep(
    cand: IntArray,
    n_cand: int,
    acc: FloatArray,
    mark: Int8Array,
    visible: BoolArray,
    rest: float,
    theta: float,
) -> int:
    """Keep, in order, the candidates that are visible, not scored yet, and whose sum plus
    ``rest`` reaches ``theta``; clear the others' sums. Returns how many are kept."""
    kept = 0
    for c in range(n_cand):
        d = cand[c]
        if (
            mark[d] == 0
            and d < visible.shape[0]
            and visible[d]
            and (acc[d] + rest) * (1 + SLACK) >= theta
        ):
            cand[kept] = d
            kept += 1
        else:
            acc[d] = 0.0
    return kept


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
    visible: BoolArray,
    k: int,
    acc: FloatArray,
    mark: Int8Array,
    first_budget: int,
    row_cost: float,
    most: float,
) -> tuple[IntArray, FloatArray, int]:
    """The ``k`` best visible documents with a positive score (ids, scores, unordered) and
    how many were scored in full. ``terms``/``weights`` in the order :meth:`BM25Index.scores`
    sums them; ``bounds``: each term's largest contribution to a main row, >= 0 (so every
    weight is). ``acc`` and ``mark`` (one per main row): zeros, left zeros. ``first_budget``:
    how many postings step 1 walks once it has k documents (``FIRST_BUDGET``); ``row_cost``:
    what scoring a document in full costs, in postings walked; ``most``: the share of the
    query's postings step 2 may walk (``MOST_WALKED``), beyond which it gives up and returns
    ``full`` -1 (scoring every posting is then cheaper).

    1. The delta's rows, and the postings of the query's rarest terms (shortest lists, up to
       ``first_budget`` or a quarter of the cost of summing all the query's postings, and
       until k documents are found), are scored in full: the k-th best
       so far, ``theta``, is a lower bound of the k-th score.
    2. The other terms, largest bound first, are summed per document (one addition per
       posting, documents of step 1 skipped) until the bounds of the terms left, ``rest``,
       fall below ``theta``: a document met in none of the summed lists cannot rank.
    3. A document whose sum plus ``rest`` falls short of ``theta`` cannot rank either; while
       the candidates left would cost more to score in full than the next list's postings,
       that list is summed for them too (``rest`` shrinks, and candidates drop out).
    4. The candidates are scored in full, best sums first, until the sum plus ``rest`` falls
       below the k-th score so far."""
    m = terms.shape[0]
    keys, pos, mask = _positions(terms)
    part = np.zeros(m)
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
        total = _score_delta_row(row_ptr, row_terms, row_tf, r, nr, keys, pos, mask, weights)
        full += 1
        count = _push(heap_s, heap_d, count, total, d)
    n_main_terms = term_ptr.shape[0] - 1
    length = np.zeros(m, np.int64)
    for j in range(m):
        if terms[j] < n_main_terms:
            length[j] = term_ptr[terms[j] + 1] - term_ptr[terms[j]]
    # 1. the rarest terms in full, at a quarter of what summing every posting would cost
    budget = min(first_budget, length.sum() / (4 * row_cost))
    walked = np.zeros(m, np.bool_)
    n_seen = 0
    for j in np.argsort(length):
        if count == k and n_seen + length[j] > budget:
            break
        walked[j] = True
        if length[j] == 0:
            continue
        t = terms[j]
        for p in range(term_ptr[t], term_ptr[t + 1]):
            d = post_row[p]
            if mark[d]:
                continue
            mark[d] = _SCORED
            n_seen += 1
            nd = norm[d]
            if nd == np.inf or d >= n_vis or not visible[d]:
                continue
            s = _score_row(row_ptr, row_terms, row_tf, d, nd, keys, pos, mask, weights, part)
            full += 1
            count = _push(heap_s, heap_d, count, s, d)
    first = walked.copy()
    # 2. the other terms, most bound per posting first, summed while the bounds of the terms
    # left could rank a document alone (a term of weight 0 adds nothing anywhere)
    theta = heap_s[0] if count == k else 0.0
    rest = 0.0
    density = np.empty(m)
    for j in range(m):
        if weights[j] == 0.0:
            walked[j] = True
        if not walked[j]:
            rest += bounds[j]
        density[j] = bounds[j] / max(length[j], 1)
    order = np.argsort(-density)
    capacity = 0
    left = rest
    for j in order:
        if not walked[j]:
            if left < theta:
                break
            capacity += length[j]
            left -= bounds[j]
    if capacity > most * length.sum():
        _unmark(term_ptr, post_row, terms, first, length, mark)
        return heap_d[:0], heap_s[:0], -1
    cand = np.empty(min(capacity, main_rows), np.int64)
    n_cand = 0
    for j in order:
        if rest < theta:
            break
        if walked[j]:
            continue
        walked[j] = True
        rest -= bounds[j]
        t = terms[j]
        w = weights[j]
        for p in range(term_ptr[t], term_ptr[t + 1]):
            d = post_row[p]
            nd = norm[d]
            if nd == np.inf:
                continue
            if acc[d] == 0.0:  # hidden and step 1's documents are dropped below
                cand[n_cand] = d
                n_cand += 1
            tf = float(post_tf[p])
            acc[d] += w * tf / (tf + nd)
    # the best sums so far scored in full: a k-th score nearer the final one prunes more
    best_s = np.zeros(k)
    best_d = np.zeros(k, np.int64)
    n_best = 0
    for c in range(n_cand):
        d = cand[c]
        if mark[d] == 0 and d < n_vis and visible[d]:
            n_best = _push(best_s, best_d, n_best, acc[d], d)
    for c in range(n_best):
        d = best_d[c]
        s = _score_row(row_ptr, row_terms, row_tf, d, norm[d], keys, pos, mask, weights, part)
        full += 1
        count = _push(heap_s, heap_d, count, s, d)
        mark[d] = _SCORED
    # 3. drop the candidates that cannot rank; while that is cheaper than scoring them in
    # full, add the next largest bound's term to their sums, walking its postings or, for few
    # candidates (by id), leaping through them
    in_order = False
    for j in np.argsort(-bounds):
        if walked[j] or length[j] == 0:
            continue
        n_cand = _keep(cand, n_cand, acc, mark, visible, rest, heap_s[0] if count == k else 0.0)
        leap = n_cand * (np.log2(length[j] / max(n_cand, 1) + 1) + 1) * _LEAP_COST
        if n_cand * row_cost <= min(length[j], leap):
            break
        walked[j] = True
        rest -= bounds[j]
        t = terms[j]
        w = weights[j]
        hi = term_ptr[t + 1]
        if leap < length[j]:
            if not in_order:
                cand[:n_cand].sort()
                in_order = True
            p = term_ptr[t]
            for c in range(n_cand):
                d = cand[c]
                if p < hi and post_row[p] < d:  # the first posting >= d, by leaps then halves
                    lo, step = p, 1
                    while lo + step < hi and post_row[lo + step] < d:
                        lo += step
                        step *= 2
                    p, top = lo + 1, min(lo + step, hi)
                    while p < top:
                        mid = (p + top) // 2
                        if post_row[mid] < d:
                            p = mid + 1
                        else:
                            top = mid
                if p < hi and post_row[p] == d:
                    tf = float(post_tf[p])
                    acc[d] += w * tf / (tf + norm[d])
        else:
            for p in range(term_ptr[t], hi):
                d = post_row[p]
                if acc[d] != 0.0:  # a candidate: the others' sums are cleared
                    tf = float(post_tf[p])
                    acc[d] += w * tf / (tf + norm[d])
    n_cand = _keep(cand, n_cand, acc, mark, visible, rest, heap_s[0] if count == k else 0.0)
    # 4. the candidates in full, best sums first
    sums = np.empty(n_cand)
    for c in range(n_cand):
        sums[c] = acc[cand[c]]
        acc[cand[c]] = 0.0
    for c in np.argsort(-sums):
        if count == k and (sums[c] + rest) * (1 + SLACK) < heap_s[0]:
            break  # the rest sum less still
        d = cand[c]
        s = _score_row(row_ptr, row_terms, row_tf, d, norm[d], keys, pos, mask, weights, part)
        full += 1
        count = _push(heap_s, heap_d, count, s, d)
    for c in range(n_best):
        mark[best_d[c]] = 0
    _unmark(term_ptr, post_row, terms, first, length, mark)
    return heap_d[:count], heap_s[:count], full

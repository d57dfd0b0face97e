"""Exact top-k BM25 with block-max bounds: a long code query's common terms are mostly not walked.

A query window of code holds dozens of distinct terms, several of them in most fragments
(``if``, ``return``, ``struct``); scoring all their postings is what makes BM25 slow on a large
repository. A term's contribution varies along the ids, though: consecutive ids are neighbouring
fragments of one file, and in most runs of ``BLOCK`` ids no term of the query can score high.
So the index keeps, per common term (in more than half of the blocks), a row of one byte per
block: the largest ``tf / (tf + norm)`` of its postings there, rounded up, and a row of one byte
per sub-block of ``SUB`` ids, the same there; per rarer term of ``MID_FROM`` postings or more,
the sub-blocks it reaches and the same byte in each (:func:`block_maxima`).
:func:`pruned_top_k`

1. scores the delta's rows and, in full, the documents of the query's rarest terms (a few
   hundred postings): the k-th best so far, ``theta``, is a lower bound of the k-th score; a
   document not scored yet holds none of those terms;
2. bounds each block's documents not scored yet: the sum over the other terms of their weight
   times their block maximum (a term without a row: its sparse sub-block maxima's largest in
   the block, or, for one of fewer postings than ``MID_FROM``, its largest product there,
   from its postings);
3. scores in full the documents of the blocks with the best bounds, best first, until a bound
   falls below the k-th score so far (which rises to near the final one);
4. bounds the sub-blocks of the blocks whose bound still reaches ``theta`` the same way (a
   sum of many terms' maxima over 32 documents is far above any one document's score; over 8
   it is much closer), scores the documents of the best of them in full as step 3 does, and
   in the sub-blocks whose bound still reaches the k-th score so far (the *units*), leaves
   out the least-weight terms whose bounds there sum below ``LEFT_OUT`` of it (a document
   holding none of the others cannot rank), and sums the others, term by term in the query's
   order, over their postings there as :meth:`BM25Index.scores` does (the same products
   added in the same order: the same floats); a unit with no term left out gives the scores
   directly, another's documents whose sums plus what was left out can still rank are
   scored in full.

A document is scored in full from its own row (the index keeps rows by document id). Rows
added since the last compaction (the delta) are scored one by one. The ranking is ``top_k``'s
(best first, ties by lower id), so the result is the full scoring's top k exactly. Bounds are
compared with a relative slack far above the rounding of a sum of a few hundred terms, so a
bound never excludes a document that would tie.

The block maxima are taken at compaction (and saved with the index) for the mean length then;
with the lengths since changed by edits, ``tf / (tf + k1 * (1 - b + b * len / avgdl))`` grows
at most in proportion to ``avgdl``, so a saved maximum times ``max(1, avgdl now / avgdl then)``
still bounds every main posting of its block. Removed documents only lower the true maximum.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from repomem.index.jit import numba

# Below this many documents, scoring every posting of a query (a few ns each, in one pass)
# beats the bookkeeping of pruning at the tail: the Python standard library's 84k fragments
# answer at p95 in 1.6 ms scored in full and 2.5 ms pruned; the kernel subset's 323k at
# p50 / p95 7.7 / 23.8 ms in full and 1.9 / 21.0 ms pruned (eval/bench_topk.py).
PRUNED_FROM = 1 << 17
# relative slack on every bound (rounding of the sums is ~1e-14 at most)
SLACK = 1e-9
# ids per block: 32 neighbouring fragments bound a common term far below its largest
# contribution anywhere (blocks of 64 let through twice the postings on the Linux kernel's
# kernel/ mm/ fs/ include/), and a common term's maxima cost a byte and an offset per block
BLOCK_SHIFT = 5
BLOCK = 1 << BLOCK_SHIFT
# the blocks whose bound reaches the k-th score are bounded again by sub-blocks of 8 ids: on
# the slowest query windows over the kernel subset, a bound per 8 ids lets through ~10 times
# fewer documents than one per 32 (a common term's maxima then cost a byte per 8 ids more)
SUB_SHIFT = 3
SUB = 1 << SUB_SHIFT
SUBS = BLOCK // SUB
# a term in at most half of the blocks with this many postings or more keeps its sub-block
# maxima sparse (a sub-block and a byte each, ~2.3 per 5 postings on the Linux kernel's
# kernel/ mm/ fs/ include/): step 2 reads those instead of walking the postings
MID_FROM = 256
# a block maximum is stored as ceil(x * LEVELS), x = tf / (tf + norm) in (0, 1]
LEVELS = 255
# postings whose documents are scored in full to find a first k-th score (~100 ns each)
FIRST_BUDGET = 256
# scoring a document in full from its row costs about this many times its length in postings
# walked (a hash probe per entry against a read and an addition per posting)
ROW_COST = 2.0
# blocks whose documents step 3 scores in full at most, best bounds first, and then step 4's
# sub-blocks: a k-th score raised by the best 32 sub-blocks' 256 documents leaves fewer
# sub-blocks to sum (whole Linux kernel, 200 windows, CPU mean 3.72 -> 3.44 ms; half as many
# blocks as before cost no more)
SEED_BLOCKS = 16
SEED_UNITS = 32
# finding a term's postings in a block by leaps costs about this many postings walked
SEEK_COST = 8
# step 4 leaves a block's least terms out while their bounds sum below this share of the
# k-th score: a document is then scored in full only if its other terms sum to the rest
LEFT_OUT = 0.3
# a main row's mark while a query runs: scored in full already
_SCORED = 1

FloatArray = npt.NDArray[np.float64]
Float32Array = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]
Int32Array = npt.NDArray[np.int32]
Int8Array = npt.NDArray[np.int8]
UInt8Array = npt.NDArray[np.uint8]
BoolArray = npt.NDArray[np.bool_]


@numba.njit(cache=True, nogil=True, inline="always")
def _level(x: float) -> int:
    """The byte bounding ``x`` in (0, 1]: ``level / 255 >= x`` (the product's rounding is
    far below the step)."""
    return min(LEVELS, int(np.ceil(x * LEVELS * (1 + 1e-12))))


@numba.njit(cache=True, nogil=True)
def block_maxima(
    term_ptr: IntArray,
    post_row: Int32Array,
    post_tf: Int32Array,
    row_len: IntArray,
    n_rows: int,
    k1: float,
    b: float,
    avgdl: float,
    mid_from: int,
) -> tuple[IntArray, UInt8Array, UInt8Array, IntArray, IntArray, Int32Array, UInt8Array]:
    """The block maxima of the terms in more than half of the blocks of ``n_rows`` rows, at
    mean length ``avgdl``: those terms ascending, per term a row of ``n_blocks`` bytes,
    ``ceil(max tf / (tf + norm) * 255)`` over its postings in each block (0: none there), and
    per term a row of ``n_blocks * SUBS`` bytes, the same over each sub-block. A rarer term's
    postings are about as few as its row would be long; one of ``mid_from`` postings or more
    keeps its sub-block maxima sparse (:func:`_mid_maxima`)."""
    n_blocks = (n_rows + BLOCK - 1) >> BLOCK_SHIFT
    n_subs = n_blocks * SUBS
    n_terms = term_ptr.shape[0] - 1
    n_sel = 0
    for t in range(n_terms):
        n_sel += 2 * (term_ptr[t + 1] - term_ptr[t]) > n_blocks
    terms = np.empty(n_sel, np.int64)
    top = np.zeros(n_sel * n_blocks, np.uint8)
    sub_top = np.zeros(n_sel * n_subs, np.uint8)
    i = 0
    for t in range(n_terms):
        lo, hi = term_ptr[t], term_ptr[t + 1]
        if 2 * (hi - lo) <= n_blocks:
            continue
        terms[i] = t
        row = top[i * n_blocks : (i + 1) * n_blocks]
        sub_row = sub_top[i * n_subs : (i + 1) * n_subs]
        for p in range(lo, hi):
            r = post_row[p]
            tf = float(post_tf[p])
            level = _level(tf / (tf + k1 * (1 - b + b * row_len[r] / avgdl)))
            sub_row[r >> SUB_SHIFT] = max(sub_row[r >> SUB_SHIFT], level)
            row[r >> BLOCK_SHIFT] = max(row[r >> BLOCK_SHIFT], level)
        i += 1
    return (terms, top, sub_top) + _mid_maxima(
        term_ptr, post_row, post_tf, row_len, n_blocks, k1, b, avgdl, mid_from
    )


@numba.njit(cache=True, nogil=True)
def _mid_maxima(
    term_ptr: IntArray,
    post_row: Int32Array,
    post_tf: Int32Array,
    row_len: IntArray,
    n_blocks: int,
    k1: float,
    b: float,
    avgdl: float,
    mid_from: int,
) -> tuple[IntArray, IntArray, Int32Array, UInt8Array]:
    """The sub-block maxima of the terms of ``mid_from`` postings or more in at most half of
    the blocks, sparse: those terms ascending, and per term (entries ``ptr[i]:ptr[i + 1]``)
    the sub-blocks its postings reach, ascending, and its level in each. A long query holds
    dozens of such names (``dev``, ``mutex_lock``): reading a few bytes per sub-block they
    reach costs several times less than walking their postings for it."""
    n_terms = term_ptr.shape[0] - 1
    n_sel = 0
    room = 0
    for t in range(n_terms):
        lo, hi = term_ptr[t], term_ptr[t + 1]
        if hi - lo >= mid_from and 2 * (hi - lo) <= n_blocks:
            n_sel += 1
            for p in range(lo, hi):
                room += p == lo or post_row[p] >> SUB_SHIFT != post_row[p - 1] >> SUB_SHIFT
    terms = np.empty(n_sel, np.int64)
    ptr = np.zeros(n_sel + 1, np.int64)
    subs = np.empty(room, np.int32)
    levels = np.zeros(room, np.uint8)
    i = 0
    e = -1
    for t in range(n_terms):
        lo, hi = term_ptr[t], term_ptr[t + 1]
        if not (hi - lo >= mid_from and 2 * (hi - lo) <= n_blocks):
            continue
        terms[i] = t
        for p in range(lo, hi):
            r = post_row[p]
            if p == lo or r >> SUB_SHIFT != subs[e]:
                e += 1
                subs[e] = r >> SUB_SHIFT
            tf = float(post_tf[p])
            level = _level(tf / (tf + k1 * (1 - b + b * row_len[r] / avgdl)))
            levels[e] = max(levels[e], level)
        i += 1
        ptr[i] = e + 1
    return terms, ptr, subs, levels


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
def _first_scored(
    term_ptr: IntArray,
    post_row: Int32Array,
    row_ptr: IntArray,
    row_terms: Int32Array,
    row_tf: Int32Array,
    norm: FloatArray,
    terms: IntArray,
    weights: FloatArray,
    length: IntArray,
    visible: BoolArray,
    budget: float,
    mark: Int8Array,
    heap_s: FloatArray,
    heap_d: IntArray,
    count: int,
) -> tuple[BoolArray, int]:
    """Step 1: the documents of the rarest terms in full (marked), while their postings stay
    within ``budget``. Returns which terms were walked and the count kept."""
    m = terms.shape[0]
    keys, pos, mask = _positions(terms)
    part = np.zeros(m)
    n_vis = visible.shape[0]
    walked = np.zeros(m, np.bool_)
    n_seen = 0
    for j in np.argsort(length):
        if n_seen + length[j] > budget:
            break
        walked[j] = True
        t = terms[j]
        for p in range(term_ptr[t], term_ptr[t] + length[j]):
            d = post_row[p]
            if mark[d]:
                continue
            mark[d] = _SCORED
            n_seen += 1
            nd = norm[d]
            if nd == np.inf or d >= n_vis or not visible[d]:
                continue
            s = _score_row(row_ptr, row_terms, row_tf, d, nd, keys, pos, mask, weights, part)
            count = _push(heap_s, heap_d, count, s, d)
    return walked, count


@numba.njit(cache=True, nogil=True)
def _sparse_best(
    post_row: Int32Array,
    post_tf: Int32Array,
    norm: FloatArray,
    order: IntArray,
    lo: IntArray,
    hi: IntArray,
    weights: FloatArray,
    dense: IntArray,
    mid: IntArray,
    mid_ptr: IntArray,
    mid_sub: Int32Array,
    mid_level: UInt8Array,
    level_weights: FloatArray,
) -> tuple[IntArray, IntArray, IntArray, FloatArray]:
    """The ``order``-ed terms without block maxima: the sub-blocks each reaches (ascending)
    and its largest product ``w * tf / (tf + norm)`` in each, as entries ``start[i]:end[i]``
    for the term at ``order[i]``: read from its saved sparse maxima (``mid``: its place among
    them, -1 if none) times what a level bounds, else its postings walked once (a dead row's
    product is 0)."""
    n = order.shape[0]
    start = np.zeros(n, np.int64)
    end = np.zeros(n, np.int64)
    room = 0
    for i in range(n):
        j = order[i]
        start[i] = end[i] = room
        if mid[j] >= 0:
            room += mid_ptr[mid[j] + 1] - mid_ptr[mid[j]]
        elif dense[j] < 0:
            room += hi[j] - lo[j]
    subs = np.empty(room, np.int64)
    best = np.zeros(room)
    for i in range(n):
        j = order[i]
        if mid[j] >= 0:
            lw = level_weights[j]
            e = start[i]
            for x in range(mid_ptr[mid[j]], mid_ptr[mid[j] + 1]):
                subs[e] = mid_sub[x]
                best[e] = lw * mid_level[x]
                e += 1
            end[i] = e
            continue
        if dense[j] >= 0:
            continue
        e = start[i] - 1
        w = weights[j]
        for p in range(lo[j], hi[j]):
            d = post_row[p]
            if e < start[i] or d >> SUB_SHIFT != subs[e]:
                e += 1
                subs[e] = d >> SUB_SHIFT
            tf = float(post_tf[p])
            best[e] = max(best[e], w * tf / (tf + norm[d]))
        end[i] = e + 1
    return start, end, subs, best


@numba.njit(cache=True, nogil=True)
def _bounds(
    order: IntArray,
    level_weights: FloatArray,
    dense: IntArray,
    top: UInt8Array,
    n_blocks: int,
    start: IntArray,
    end: IntArray,
    subs: IntArray,
    best: FloatArray,
) -> FloatArray:
    """Step 2: per block, the bound of a document not scored yet, the sum over the
    ``order``-ed terms of their largest contribution there: a term's weight times its block
    maximum (``level_weights``: per level; ``dense``: its row in ``top``, -1 if none), else
    the largest of its sub-blocks' products there (:func:`_sparse_best`'s entries)."""
    bound = np.zeros(n_blocks)
    for i in range(order.shape[0]):
        j = order[i]
        if dense[j] >= 0:
            row = top[dense[j] * n_blocks : (dense[j] + 1) * n_blocks]
            lw = level_weights[j]
            for b in range(n_blocks):
                bound[b] += lw * row[b]
            continue
        last = -1
        most = 0.0
        for e in range(start[i], end[i]):
            b = subs[e] >> (BLOCK_SHIFT - SUB_SHIFT)
            if b != last:
                if last >= 0:
                    bound[last] += most
                last = b
                most = 0.0
            most = max(most, best[e])
        if last >= 0:
            bound[last] += most
    return bound


@numba.njit(cache=True, nogil=True)
def _sub_bounds(
    order: IntArray,
    level_weights: FloatArray,
    dense: IntArray,
    sub_top: UInt8Array,
    n_blocks: int,
    live: IntArray,
    slot: IntArray,
    start: IntArray,
    end: IntArray,
    subs: IntArray,
    best: FloatArray,
) -> FloatArray:
    """Step 2 again for the sub-blocks of the ``live`` blocks (``slot``: a block's place
    among them, -1 if not live), the sub-block of a live block at ``SUBS * place + its place
    in the block``."""
    n_subs = n_blocks * SUBS
    bound = np.zeros(live.shape[0] * SUBS)
    for i in range(order.shape[0]):
        j = order[i]
        if dense[j] >= 0:
            base = dense[j] * n_subs
            lw = level_weights[j]
            for u in range(live.shape[0]):
                at = base + live[u] * SUBS
                for s in range(SUBS):
                    bound[u * SUBS + s] += lw * sub_top[at + s]
            continue
        for e in range(start[i], end[i]):
            u = slot[subs[e] >> (BLOCK_SHIFT - SUB_SHIFT)]
            if u >= 0:
                bound[u * SUBS + (subs[e] & (SUBS - 1))] += best[e]
    return bound


@numba.njit(cache=True, nogil=True, inline="always")
def _unit(slot: IntArray, unit_at: IntArray, sub: int) -> int:
    """The place of sub-block ``sub`` among the units (-1: not one)."""
    u = slot[sub >> (BLOCK_SHIFT - SUB_SHIFT)]
    return -1 if u < 0 else unit_at[u * SUBS + (sub & (SUBS - 1))]


@numba.njit(cache=True, nogil=True)
def _splits(
    order: IntArray,
    level_weights: FloatArray,
    dense: IntArray,
    sub_top: UInt8Array,
    n_blocks: int,
    units: IntArray,
    slot: IntArray,
    unit_at: IntArray,
    start: IntArray,
    end: IntArray,
    subs: IntArray,
    best: FloatArray,
    left_out: float,
) -> tuple[FloatArray, IntArray]:
    """For the ``units`` (sub-blocks, ascending; ``slot`` and ``unit_at`` find a sub-block's
    place among them), how far into ``order`` a unit's terms, summed by their bounds, stay
    below ``left_out`` (the split: a document holding none of the terms from it on cannot
    rank, they are the unit's *essential* ones), and what the terms before it add at most
    there (``before``)."""
    n = order.shape[0]
    n_units = units.shape[0]
    n_subs = n_blocks * SUBS
    pre = np.zeros(n_units)
    before = np.zeros(n_units)
    split = np.full(n_units, n, np.int64)
    for i in range(n):
        j = order[i]
        if dense[j] >= 0:
            base = dense[j] * n_subs
            lw = level_weights[j]
            for u in range(n_units):
                if split[u] == n:
                    pre[u] += lw * sub_top[base + units[u]]
                    if pre[u] * (1 + SLACK) < left_out:
                        before[u] = pre[u]
                    else:
                        split[u] = i
            continue
        for e in range(start[i], end[i]):
            u = _unit(slot, unit_at, subs[e])
            if u >= 0 and split[u] == n:
                pre[u] += best[e]
                if pre[u] * (1 + SLACK) < left_out:
                    before[u] = pre[u]
                else:
                    split[u] = i
    return before, split


@numba.njit(cache=True, nogil=True, inline="always")
def _seek(post_row: Int32Array, p: int, hi: int, target: int) -> int:
    """The first position from ``p`` on (ascending rows) whose row is >= ``target``, by
    leaps then halves."""
    if p >= hi or post_row[p] >= target:
        return p
    step = 1
    while p + step < hi and post_row[p + step] < target:
        p += step
        step *= 2
    first, last = p + 1, min(p + step, hi)
    while first < last:
        mid = (first + last) // 2
        if post_row[mid] < target:
            first = mid + 1
        else:
            last = mid
    return first


@numba.njit(cache=True, nogil=True)
def _best_first(bound: FloatArray, n_seed: int) -> IntArray:
    """The indices of the ``n_seed`` best positive bounds, best first (ties by index)."""
    n = bound.shape[0]
    cut = np.partition(bound, n - n_seed)[n - n_seed] if n_seed < n else 0.0
    best = np.flatnonzero((bound >= cut) & (bound > 0.0))
    return best[np.argsort(-bound[best], kind="mergesort")][:n_seed]


@numba.njit(cache=True, nogil=True)
def _score_rows(
    row_ptr: IntArray,
    row_terms: Int32Array,
    row_tf: Int32Array,
    first: int,
    stop: int,
    norm: FloatArray,
    visible: BoolArray,
    mark: Int8Array,
    keys: IntArray,
    pos: IntArray,
    mask: int,
    weights: FloatArray,
    part: FloatArray,
    heap_s: FloatArray,
    heap_d: IntArray,
    count: int,
) -> int:
    """The visible documents ``first`` to ``stop`` not marked, each scored in full and kept
    among the best so far. Returns the count kept."""
    n_vis = visible.shape[0]
    for d in range(first, stop):
        nd = norm[d]
        if mark[d] or nd == np.inf or d >= n_vis or not visible[d]:
            continue
        s = _score_row(row_ptr, row_terms, row_tf, d, nd, keys, pos, mask, weights, part)
        count = _push(heap_s, heap_d, count, s, d)
    return count


@numba.njit(cache=True, nogil=True)
def _seed_blocks(
    row_ptr: IntArray,
    row_terms: Int32Array,
    row_tf: Int32Array,
    main_rows: int,
    norm: FloatArray,
    terms: IntArray,
    weights: FloatArray,
    visible: BoolArray,
    mark: Int8Array,
    bound: FloatArray,
    n_seed: int,
    heap_s: FloatArray,
    heap_d: IntArray,
    count: int,
) -> int:
    """Step 3: the documents not marked of the ``n_seed`` blocks of best bounds in full, best
    first, while a bound reaches the k-th score so far; a block done gets bound -1. Returns
    the count kept."""
    if n_seed <= 0:
        return count
    keys, pos, mask = _positions(terms)
    part = np.zeros(terms.shape[0])
    for blk in _best_first(bound, n_seed):
        if count == heap_s.shape[0] and bound[blk] * (1 + SLACK) < heap_s[0]:
            break
        bound[blk] = -1.0
        count = _score_rows(
            row_ptr, row_terms, row_tf, blk << BLOCK_SHIFT,
            min((blk + 1) << BLOCK_SHIFT, main_rows), norm, visible, mark, keys, pos, mask,
            weights, part, heap_s, heap_d, count,
        )  # fmt: skip
    return count


@numba.njit(cache=True, nogil=True)
def _seed_units(
    row_ptr: IntArray,
    row_terms: Int32Array,
    row_tf: Int32Array,
    main_rows: int,
    norm: FloatArray,
    terms: IntArray,
    weights: FloatArray,
    visible: BoolArray,
    mark: Int8Array,
    live: IntArray,
    sub_bound: FloatArray,
    n_seed: int,
    heap_s: FloatArray,
    heap_d: IntArray,
    count: int,
) -> int:
    """Step 3 again over the sub-blocks of the ``live`` blocks: the documents not marked of
    the ``n_seed`` sub-blocks of best bounds in full, best first, while a bound reaches the
    k-th score so far; a sub-block done gets bound -1. Returns the count kept."""
    if n_seed <= 0 or sub_bound.shape[0] == 0:
        return count
    keys, pos, mask = _positions(terms)
    part = np.zeros(terms.shape[0])
    for x in _best_first(sub_bound, n_seed):
        if count == heap_s.shape[0] and sub_bound[x] * (1 + SLACK) < heap_s[0]:
            break
        sub_bound[x] = -1.0
        sub = live[x // SUBS] * SUBS + x % SUBS
        count = _score_rows(
            row_ptr, row_terms, row_tf, sub << SUB_SHIFT, min((sub + 1) << SUB_SHIFT, main_rows),
            norm, visible, mark, keys, pos, mask, weights, part, heap_s, heap_d, count,
        )  # fmt: skip
    return count


@numba.njit(cache=True, nogil=True)
def _sum_essential(
    post_row: Int32Array,
    post_tf: Int32Array,
    norm: FloatArray,
    order: IntArray,
    lo: IntArray,
    hi: IntArray,
    weights: FloatArray,
    units: IntArray,
    split: IntArray,
    slot: IntArray,
    unit_at: IntArray,
    acc: FloatArray,
) -> None:
    """Step 4's sums: the ``order``-ed terms in query order, each summed into ``acc`` as the
    full scoring sums it, over the documents of the ``units`` (ascending) where it is
    essential: its postings there found by leaps, or, where that would leap more often than
    ``1 / SEEK_COST`` of its postings, all walked and those kept."""
    n = order.shape[0]
    rank = np.full(weights.shape[0], -1, np.int64)
    for i in range(n):
        rank[order[i]] = i
    essential = np.zeros(n + 1, np.int64)  # units where the term at each rank is
    for u in range(units.shape[0]):
        essential[split[u]] += 1
    essential = np.cumsum(essential)
    for j in range(weights.shape[0]):
        i = rank[j]
        if i < 0:
            continue
        w = weights[j]
        stop = hi[j]
        if essential[i] * SEEK_COST >= stop - lo[j]:
            for p in range(lo[j], stop):
                d = post_row[p]
                u = _unit(slot, unit_at, d >> SUB_SHIFT)
                if u >= 0 and split[u] <= i:
                    tf = float(post_tf[p])
                    acc[d] += w * tf / (tf + norm[d])  # a dead row's product is 0
            continue
        p = lo[j]
        for u in range(units.shape[0]):
            if split[u] > i:
                continue
            p = _seek(post_row, p, stop, units[u] << SUB_SHIFT)
            past = (units[u] + 1) << SUB_SHIFT
            while p < stop and post_row[p] < past:
                d = post_row[p]
                tf = float(post_tf[p])
                acc[d] += w * tf / (tf + norm[d])
                p += 1


@numba.njit(cache=True, nogil=True)
def _score_candidates(
    row_ptr: IntArray,
    row_terms: Int32Array,
    row_tf: Int32Array,
    main_rows: int,
    norm: FloatArray,
    terms: IntArray,
    weights: FloatArray,
    units: IntArray,
    before: FloatArray,
    visible: BoolArray,
    acc: FloatArray,
    mark: Int8Array,
    heap_s: FloatArray,
    heap_d: IntArray,
    count: int,
) -> int:
    """Step 4's end, over the documents of the ``units`` (ascending): one of a unit where no
    term left out adds anything (``before`` 0) is kept by its sum, its score; another's sum
    plus ``before`` bounds its score, and those are scored in full, best bounds first, while
    that reaches the k-th score so far. Only visible documents not marked count. Returns the
    count kept; ``acc`` left zeros."""
    k = heap_s.shape[0]
    n_vis = visible.shape[0]
    cand = np.empty(0, np.int64)
    ub = np.empty(0)
    n_cand = 0
    for u in range(units.shape[0]):
        for d in range(units[u] << SUB_SHIFT, min((units[u] + 1) << SUB_SHIFT, main_rows)):
            s = acc[d]
            if s == 0.0:
                continue
            acc[d] = 0.0
            if mark[d] or d >= n_vis or not visible[d]:
                continue
            if before[u] == 0.0:  # no term left out adds to a document of this unit
                count = _push(heap_s, heap_d, count, s, d)
            elif count < k or (s + before[u]) * (1 + SLACK) >= heap_s[0]:
                if n_cand == cand.shape[0]:
                    cand = np.concatenate((cand, np.empty(n_cand + 64, np.int64)))
                    ub = np.concatenate((ub, np.empty(n_cand + 64)))
                cand[n_cand] = d
                ub[n_cand] = s + before[u]
                n_cand += 1
    keys, pos, mask = _positions(terms)
    part = np.zeros(terms.shape[0])
    for c in np.argsort(-ub[:n_cand]):
        if count == k and ub[c] * (1 + SLACK) < heap_s[0]:
            break  # the rest bound less still
        d = cand[c]
        s = _score_row(row_ptr, row_terms, row_tf, d, norm[d], keys, pos, mask, weights, part)
        count = _push(heap_s, heap_d, count, s, d)
    return count


@numba.njit(cache=True, nogil=True)
def _unmark(
    post_row: Int32Array, lo: IntArray, hi: IntArray, first: BoolArray, mark: Int8Array
) -> None:
    """Clear step 1's marks: the postings of its terms."""
    for j in range(first.shape[0]):
        if first[j]:
            for p in range(lo[j], hi[j]):
                mark[post_row[p]] = 0


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
    level_weights: FloatArray,
    block_terms: IntArray,
    block_max: UInt8Array,
    block_sub_max: UInt8Array,
    mid_terms: IntArray,
    mid_ptr: IntArray,
    mid_sub: Int32Array,
    mid_level: UInt8Array,
    visible: BoolArray,
    hidden: IntArray,
    k: int,
    acc: FloatArray,
    mark: Int8Array,
    first_budget: int,
    row_cost: float,
    n_seed: int,
    n_seed_units: int,
) -> tuple[IntArray, FloatArray]:
    """The ``k`` best visible documents not ``hidden`` (ascending ids) with a positive score
    (ids, scores, unordered), in the steps of the module's docstring. ``terms``/``weights``
    in the order :meth:`BM25Index.scores` sums them, every weight >= 0; ``level_weights``:
    per term, what one level of its block maxima bounds (its weight over 255, scaled up for
    the mean length's rise and the slack); the block arrays: :func:`block_maxima`'s. ``acc``
    and ``mark`` (one per main row): zeros, left zeros. ``first_budget``: how many postings
    step 1 walks at most (``FIRST_BUDGET``); ``row_cost``: what scoring a document in full
    costs, in postings walked; ``n_seed``: step 3's blocks at most (``SEED_BLOCKS``);
    ``n_seed_units``: step 4's sub-blocks scored first at most (``SEED_UNITS``)."""
    m = terms.shape[0]
    keys, pos, mask = _positions(terms)
    heap_s = np.zeros(k)
    heap_d = np.zeros(k, np.int64)
    count = 0
    n_vis = visible.shape[0]
    # a hidden main document is passed over as one scored already is
    for d in hidden:
        if d < main_rows:
            mark[d] = _SCORED
    # the delta, row by row, summed in row order like the full scoring's delta scan
    for r in range(main_rows, row_ptr.shape[0] - 1):
        nr = norm[r]
        d = row_doc[r]
        at = np.searchsorted(hidden, d)
        if at < hidden.shape[0] and hidden[at] == d:
            continue
        if nr == np.inf or d >= n_vis or not visible[d]:
            continue
        total = _score_delta_row(row_ptr, row_terms, row_tf, r, nr, keys, pos, mask, weights)
        count = _push(heap_s, heap_d, count, total, d)
    n_main_terms = term_ptr.shape[0] - 1
    lo = np.zeros(m, np.int64)
    hi = np.zeros(m, np.int64)
    dense = np.full(m, -1, np.int64)
    mid = np.full(m, -1, np.int64)
    for j in range(m):
        if terms[j] < n_main_terms:
            lo[j], hi[j] = term_ptr[terms[j]], term_ptr[terms[j] + 1]
            i = np.searchsorted(block_terms, terms[j])
            if i < block_terms.shape[0] and block_terms[i] == terms[j]:
                dense[j] = i
            i = np.searchsorted(mid_terms, terms[j])
            if i < mid_terms.shape[0] and mid_terms[i] == terms[j]:
                mid[j] = i
    length = hi - lo
    # 1. the rarest terms in full, at a quarter of what summing every posting would cost
    budget = min(first_budget, length.sum() / (4 * row_cost))
    first, count = _first_scored(
        term_ptr, post_row, row_ptr, row_terms, row_tf, norm, terms, weights, length,
        visible, budget, mark, heap_s, heap_d, count,
    )  # fmt: skip
    # the other terms, least weight first: the common ones, whose postings are the most,
    # are the first a block can leave out
    rest = np.flatnonzero(~first & (weights > 0.0) & (length > 0))
    order = rest[np.argsort(weights[rest], kind="mergesort")]
    # 2. a bound per block of the documents not scored yet (they hold no term of step 1)
    n_blocks = (main_rows + BLOCK - 1) >> BLOCK_SHIFT
    start, end, subs, best = _sparse_best(
        post_row, post_tf, norm, order, lo, hi, weights, dense, mid, mid_ptr, mid_sub,
        mid_level, level_weights,
    )  # fmt: skip
    bound = _bounds(order, level_weights, dense, block_max, n_blocks, start, end, subs, best)
    # 3. the best blocks in full: a k-th score near the final one prunes more
    count = _seed_blocks(
        row_ptr, row_terms, row_tf, main_rows, norm, terms, weights, visible, mark, bound,
        n_seed, heap_s, heap_d, count,
    )  # fmt: skip
    # 4. the sub-blocks of the blocks that can still hold a document that ranks whose own
    # bound still reaches the k-th score, each walked for its essential terms only; the
    # documents met scored in full where their bound still ranks
    theta = heap_s[0] if count == k else 0.0
    live = np.flatnonzero((bound > 0.0) & (bound * (1 + SLACK) >= theta))
    if live.size:
        slot = np.full(n_blocks, -1, np.int64)
        slot[live] = np.arange(live.size)
        sub_bound = _sub_bounds(
            order, level_weights, dense, block_sub_max, n_blocks, live, slot, start, end, subs,
            best,
        )  # fmt: skip
        count = _seed_units(
            row_ptr, row_terms, row_tf, main_rows, norm, terms, weights, visible, mark, live,
            sub_bound, n_seed_units, heap_s, heap_d, count,
        )  # fmt: skip
        theta = heap_s[0] if count == k else 0.0
        kept = np.flatnonzero((sub_bound > 0.0) & (sub_bound * (1 + SLACK) >= theta))
        units = live[kept // SUBS] * SUBS + kept % SUBS
        unit_at = np.full(live.size * SUBS, -1, np.int64)
        unit_at[kept] = np.arange(kept.size)
        before, split = _splits(
            order, level_weights, dense, block_sub_max, n_blocks, units, slot, unit_at, start,
            end, subs, best, theta * LEFT_OUT,
        )  # fmt: skip
        _sum_essential(
            post_row, post_tf, norm, order, lo, hi, weights, units, split, slot, unit_at, acc
        )
        count = _score_candidates(
            row_ptr, row_terms, row_tf, main_rows, norm, terms, weights, units, before, visible,
            acc, mark, heap_s, heap_d, count,
        )  # fmt: skip
    _unmark(post_row, lo, hi, first, mark)
    for d in hidden:
        if d < main_rows:
            mark[d] = 0
    return heap_d[:count], heap_s[:count]

"""Fragment-to-fragment code-structure relations (FragRel Eq. 8), computed sparsely.

``F(c_i, c_j) = sum_k sum_l a_ik * Dis(g_k, g_l) * a_jl`` where ``a_ik`` is node k's share
of fragment i's code text. The literal all-pairs computation does not scale (call edges make
hubs), so documented truncations keep it sparse and fast:

* strengths below ``epsilon`` count as 0 (a bounded Dijkstra on ``-log w`` stops there);
* a path may end at a hub (a node with more than ``hub`` neighbours: a much-called function,
  a large directory) but not pass through it: the thousand callers of ``assertEqual`` are
  not related to each other by that call, and which of them a capped search would keep is
  decided by tie-breaks, not by the code;
* each source node settles at most ``node_cap`` nodes, strongest first (equal strengths in
  node-key order, see ``repomem.index.graph``);
* each fragment keeps its ``frag_cap`` strongest relations.

Without truncation (no hub, no source hitting its cap, no fragment its limit) the result
equals the brute-force Eq. 8 with ``Dis`` zeroed below ``epsilon``, and that differs from the
exact Eq. 8 by less than ``epsilon`` per fragment pair, because the ``a_ik * a_jl`` sum to 1.
With hubs it equals the same brute force on paths that do not pass through a hub. A node cap
that bites drops only strengths at or below the last one kept. A fragment that occurs at
several places relates through all of them: its node weights are the sum over its locations.
"""

from __future__ import annotations

import heapq
import math
import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from repomem.index.graph import CodeGraph
from repomem.index.jit import numba
from repomem.index.rowpool import RowPool
from repomem.index.trim import fresh_zeros, mappings_of, release_mapped, release_zeros

# a node's state in a search's scratch (zero: not reached, its distance unset)
_SEEN = 1  # given a distance
_SETTLED = 2  # popped with its final distance


@numba.njit(cache=True)
def _append(arr, n, value):  # noqa: ANN001, ANN202
    """``arr`` holding ``value`` at ``n``: the same array, or one twice as large when full."""
    if n >= arr.size:
        grown = np.empty(arr.size * 2, arr.dtype)
        grown[:n] = arr[:n]
        arr = grown
    arr[n] = value
    return arr


@numba.njit(cache=True)
def _push(hk, hv, size, key, val, tie):  # noqa: ANN001, ANN202
    if size >= hk.size:
        nk = np.empty(hk.size * 2, hk.dtype)
        nv = np.empty(hv.size * 2, hv.dtype)
        nk[: hk.size] = hk
        nv[: hv.size] = hv
        hk, hv = nk, nv
    i = size
    hk[i] = key
    hv[i] = val
    while i > 0:
        p = (i - 1) >> 1
        if hk[p] < hk[i] or (hk[p] == hk[i] and tie[hv[p]] <= tie[hv[i]]):
            break
        hk[p], hk[i] = hk[i], hk[p]
        hv[p], hv[i] = hv[i], hv[p]
        i = p
    return hk, hv, size + 1


@numba.njit(cache=True)
def _pop(hk, hv, size, tie):  # noqa: ANN001, ANN202
    key, val = hk[0], hv[0]
    size -= 1
    hk[0], hv[0] = hk[size], hv[size]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= size:
            break
        c = left
        r = left + 1
        if r < size and (hk[r] < hk[left] or (hk[r] == hk[left] and tie[hv[r]] < tie[hv[left]])):
            c = r
        if hk[i] < hk[c] or (hk[i] == hk[c] and tie[hv[i]] <= tie[hv[c]]):
            break
        hk[c], hk[i] = hk[i], hk[c]
        hv[c], hv[i] = hv[i], hv[c]
        i = c
    return key, val, size


@numba.njit(cache=True)
def _table(size):  # noqa: ANN001, ANN202
    """A search's table of the nodes it reached, for up to ``size`` of them: open-addressed
    (``_search``) in a power of two slots, at most half full; per slot the node (-1: empty),
    its distance and its state."""
    slots = 1
    while slots < 2 * size:
        slots *= 2
    return np.full(slots, -1, np.int64), np.empty(slots, np.float64), np.zeros(slots, np.int8)


# the multiplier that spreads node ids over a search's table (Knuth's 2^32 / golden ratio)
_SPREAD = 2654435761


@numba.njit(cache=True)
def _search(g, src, limit, node_cap, hub, table, touched, hk, hv, ht, out_ids, out_d):  # noqa: ANN001, ANN202
    """Bounded Dijkstra from ``src``: settles at most ``node_cap`` nodes within ``limit``,
    strongest first, equal costs by node key; a hub (more than ``hub`` neighbours) other
    than ``src`` is settled but not passed through. Writes the nodes and their costs (a
    strength is ``exp(-cost)``: a query wants those of a few targets among the nodes).
    Returns (count, settled ``node_cap`` nodes, radius): the radius is the cost up to which
    the result is complete (``limit`` unless capped), so no change of the graph farther than
    that from ``src`` can alter the result, the cap flag included.

    The heap ``hk``/``hv``/``ht`` (cost, table slot, node key) must hold
    ``min(node_cap * node_cap, edges) + 1`` entries (the pushes the pruning below allows;
    each edge is followed once): it never grows, and its operations are written out here,
    because ``_push``/``_pop`` calls update the arrays' reference counts (atomic operations)
    on every push and pop, which took more than half of a search's time. An entry holds its
    node's slot and key, so that a pop finds the node without probing the table and a
    comparison of equal costs reads no key of the graph's.

    The nodes reached, with their distances and states, are in ``table`` (``_table``, for
    as many nodes as ``touched`` holds), not in arrays over every node of the graph: a
    search reaches a few thousand nodes, and arrays per node made every page of theirs
    resident in a build (the whole kernel's 16M nodes: ~0.15 GB per thread). The table is
    left empty, as it was found; ``touched`` gets the slots used."""
    start, end, nbr, cost, tie = g
    keys, dist, done = table
    mask = keys.size - 1
    at = (src * _SPREAD) & mask  # the table is empty: the slot is free
    keys[at] = src
    dist[at] = 0.0
    done[at] = _SEEN
    touched[0] = at
    nt = 1
    hk[0] = 0.0
    hv[0] = at
    ht[0] = tie[src]
    size = 1
    settled = 0
    capped = False
    d = 0.0
    while size > 0:
        # pop the top: the last entry sifts down from the root, (cost, key) as in ``_pop``
        d, at = hk[0], hv[0]
        size -= 1
        key, val, kt = hk[size], hv[size], ht[size]
        i = 0
        while True:
            c = 2 * i + 1
            if c >= size:
                break
            r = c + 1
            if r < size and (hk[r] < hk[c] or (hk[r] == hk[c] and ht[r] < ht[c])):
                c = r
            if key < hk[c] or (key == hk[c] and kt <= ht[c]):
                break
            hk[i] = hk[c]
            hv[i] = hv[c]
            ht[i] = ht[c]
            i = c
        hk[i] = key
        hv[i] = val
        ht[i] = kt
        u = keys[at]
        if done[at] == _SETTLED:
            continue
        done[at] = _SETTLED
        out_ids[settled] = u
        out_d[settled] = d
        settled += 1
        if settled >= node_cap:
            capped = True
            break
        if u != src and end[u] - start[u] > hub:
            continue
        # adjacency is sorted by (cost, key): once as many nodes as can still be settled
        # are queued from here, later neighbours can never make it (and the cap will be hit)
        room = node_cap - settled
        queued = 0
        for e in range(start[u], end[u]):
            v = nbr[e]
            nd = d + cost[e]
            if nd > limit or queued >= room:
                break
            at = (v * _SPREAD) & mask
            while keys[at] != v and keys[at] != -1:
                at = (at + 1) & mask
            if keys[at] == -1 or nd < dist[at]:
                queued += 1
                if keys[at] == -1:
                    keys[at] = v
                    done[at] = _SEEN
                    touched[nt] = at
                    nt += 1
                dist[at] = nd
                # push: sift up from the end, (cost, key) as in ``_push``
                tv = tie[v]
                i = size
                size += 1
                while i > 0:
                    p = (i - 1) >> 1
                    if hk[p] < nd or (hk[p] == nd and ht[p] <= tv):
                        break
                    hk[i] = hk[p]
                    hv[i] = hv[p]
                    ht[i] = ht[p]
                    i = p
                hk[i] = nd
                hv[i] = at
                ht[i] = tv
    for q in range(nt):
        keys[touched[q]] = -1
        done[touched[q]] = 0
    return settled, capped, d if capped else limit


@numba.njit(cache=True, nogil=True)
def _relations_kernel(  # noqa: ANN001, ANN202, PLR0913
    g,  # graph: (start, end, neighbour, cost, node key)
    f_ptr,
    f_node,
    f_w,  # rows to compute: their nodes and weights
    row_ids,  # fragment id of each row (its own id is not its environment)
    nf_start,
    nf_end,
    n_frag,
    n_w,  # node -> fragments containing it, with weights
    frag_key,  # per fragment id: breaks ties between equal strengths, stable across rebuilds
    limit,
    node_cap,
    frag_cap,
    hub,
    acc,
    seen,
    # the fragments a row reached, in first-reached order, one longer than the fragments
    # (it is written one past its end): grown as a row needed it, its reassignment in the
    # loop over a search's nodes cost an atomic reference count increment and decrement per
    # node (~15 % of the relations' time); a scratch array's untouched pages cost nothing
    reached,  # scratch: zeros on entry (``_Scratch``), restored on return
    out_idx,
    out_val,
    out_cnt,
    capped,  # outputs, one row per computed fragment
    out_radius,  # output, one per (row, source node) entry of f_node
):
    """Fills the outputs for rows ``[0, row_ids.size)``; releases the GIL, so callers run
    several on disjoint row ranges in threads."""
    n_rows = row_ids.size
    bound = node_cap * node_cap + 1  # pushes per search are bounded by the pruning above
    # nodes a search reaches: bounded by its pushes and by the graph
    touched_n = np.empty(min(bound, g[0].size + 1), np.int64)
    table = _table(touched_n.size)
    hk = np.empty(bound, np.float64)
    hv = np.empty(bound, np.int64)
    ht = np.empty(bound, np.int64)
    # a row's strongest relations so far: strengths, keys, fragments
    top_v = np.empty(frag_cap, np.float64)
    top_k = np.empty(frag_cap, np.int64)
    top_j = np.empty(frag_cap, np.int64)
    # the previous fragment's searches: consecutive windows overlap, so about half of a
    # fragment's nodes were just searched from
    prev_node = np.empty(0, np.int64)
    prev_ptr = np.zeros(1, np.int64)
    prev_ids = np.empty(0, np.int64)
    prev_s = np.empty(0, np.float64)
    prev_cap = np.empty(0, np.bool_)
    prev_rad = np.empty(0, np.float64)
    for r in range(n_rows):
        nf = 0
        n_src = f_ptr[r + 1] - f_ptr[r]
        cur_node = np.empty(n_src, np.int64)
        cur_ptr = np.zeros(n_src + 1, np.int64)
        cur_ids = np.empty(n_src * node_cap, np.int64)
        cur_s = np.empty(n_src * node_cap, np.float64)
        cur_cap = np.zeros(n_src, np.bool_)
        cur_rad = np.empty(n_src, np.float64)
        for c in range(n_src):
            src = f_node[f_ptr[r] + c]
            a = f_w[f_ptr[r] + c]
            cur_node[c] = src
            base = cur_ptr[c]
            hit = -1
            for q in range(prev_node.size):
                if prev_node[q] == src:
                    hit = q
                    break
            if hit >= 0:
                cnt = prev_ptr[hit + 1] - prev_ptr[hit]
                cur_ids[base : base + cnt] = prev_ids[prev_ptr[hit] : prev_ptr[hit + 1]]
                cur_s[base : base + cnt] = prev_s[prev_ptr[hit] : prev_ptr[hit + 1]]
                cur_cap[c] = prev_cap[hit]
                cur_rad[c] = prev_rad[hit]
            else:
                cnt, was_capped, radius = _search(
                    g,
                    src,
                    limit,
                    node_cap,
                    hub,
                    table,
                    touched_n,
                    hk,
                    hv,
                    ht,
                    cur_ids[base:],
                    cur_s[base:],
                )
                for q in range(base, base + cnt):
                    cur_s[q] = math.exp(-cur_s[q])
                cur_cap[c] = was_capped
                cur_rad[c] = radius
            out_radius[f_ptr[r] + c] = cur_rad[c]
            if cur_cap[c]:
                capped[r] = True
            cur_ptr[c + 1] = base + cnt
            for q in range(base, base + cnt):
                u = cur_ids[q]
                sa = a * cur_s[q]
                for e in range(nf_start[u], nf_end[u]):
                    # a fragment is listed where first reached, without a branch on whether
                    # it was (mispredicted at each first: a quarter of the relations' time)
                    j = n_frag[e]
                    reached[nf] = j
                    nf += 1 - seen[j]
                    seen[j] = True
                    acc[j] += sa * n_w[e]
        prev_node, prev_ptr, prev_ids, prev_s, prev_cap, prev_rad = (
            cur_node,
            cur_ptr,
            cur_ids,
            cur_s,
            cur_cap,
            cur_rad,
        )
        # keep the strongest relations, never the fragment itself: the ``frag_cap`` first
        # by (strength descending, key, first reached), in one pass (sorting every
        # fragment reached, or those at or above the cap's strength, made arrays a row)
        me = row_ids[r]
        m = 0
        k = 0
        for q in range(nf):
            j = reached[q]
            reached[q] = 0
            v = acc[j]
            acc[j] = 0.0
            seen[j] = False
            if j == me or v <= 0.0:
                continue
            m += 1
            key = frag_key[j]
            # a later one of equal strength and key ranks after: it goes below them
            if k == frag_cap and (v < top_v[k - 1] or (v == top_v[k - 1] and key >= top_k[k - 1])):
                continue
            i = k if k < frag_cap else k - 1
            while i > 0 and (v > top_v[i - 1] or (v == top_v[i - 1] and key < top_k[i - 1])):
                top_v[i] = top_v[i - 1]
                top_k[i] = top_k[i - 1]
                top_j[i] = top_j[i - 1]
                i -= 1
            top_v[i] = v
            top_k[i] = key
            top_j[i] = j
            k = min(k + 1, frag_cap)
        reached[nf] = 0
        if m > frag_cap:
            capped[r] = True
        for q in range(k):
            out_idx[r, q] = top_j[q]
            out_val[r, q] = top_v[q]
        out_cnt[r] = k


@numba.njit(cache=True)
def _ball_kernel(g, seeds, offsets, limit, hub, dist, done):  # noqa: ANN001, ANN202
    """Costs from the nearest seed, plus its offset, along paths a search could take: seeds
    are left in any case (they stand for a search's last node), other hubs are reached but
    not passed."""
    start, end, nbr, cost, tie = g
    hk = np.empty(1024, np.float64)
    hv = np.empty(1024, np.int64)
    reached = np.empty(1024, np.int64)
    n_reached = 0
    size = 0
    for q in range(seeds.size):
        s = seeds[q]
        if offsets[q] <= limit and (done[s] == 0 or offsets[q] < dist[s]):
            dist[s] = offsets[q]
            done[s] = _SEEN
            hk, hv, size = _push(hk, hv, size, offsets[q], s, tie)
    is_seed = np.sort(seeds)
    while size > 0:
        d, u, size = _pop(hk, hv, size, tie)
        if done[u] == _SETTLED:
            continue
        done[u] = _SETTLED
        reached = _append(reached, n_reached, u)
        n_reached += 1
        if end[u] - start[u] > hub:
            k = np.searchsorted(is_seed, u)
            if k == is_seed.size or is_seed[k] != u:
                continue
        for e in range(start[u], end[u]):
            v = nbr[e]
            nd = d + cost[e]
            if nd > limit:
                break
            if done[v] == 0 or nd < dist[v]:
                dist[v] = nd
                if done[v] == 0:
                    done[v] = _SEEN
                hk, hv, size = _push(hk, hv, size, nd, v, tie)
    out = reached[:n_reached].copy()
    costs = np.empty(n_reached, np.float64)
    for q in range(n_reached):
        costs[q] = dist[out[q]]
    # restore the scratch: every node given a distance was pushed, hence reached
    for q in range(n_reached):
        done[out[q]] = 0
    return out, costs


@numba.njit(cache=True)
def _strengths_kernel(g, srcs, weights, targets, limit, hub, node_cap, scratch):  # noqa: ANN001, ANN202
    """Eq. 8 from one weighted node set to each of ``targets`` (sorted; the first of equal
    ones gathers their strength): one ``_search`` per source, its settled nodes looked up
    among the targets. ``scratch``: the searches' arrays (``_QueryScratch``), their table
    empty on entry and left so."""
    table, touched, hk, hv, ht, out_ids, out_d = scratch
    out = np.zeros(targets.size, np.float64)
    for q in range(srcs.size):
        n, _, _ = _search(
            g, srcs[q], limit, node_cap, hub, table, touched, hk, hv, ht, out_ids, out_d
        )
        for i in range(n):
            k = np.searchsorted(targets, out_ids[i])
            if k < targets.size and targets[k] == out_ids[i]:
                out[k] += weights[q] * math.exp(-out_d[i])
    return out


def node_strengths(
    graph: CodeGraph,
    sources: np.ndarray,
    weights: np.ndarray,
    targets: np.ndarray,
    *,
    epsilon: float,
    hub: int,
    node_cap: int,
) -> np.ndarray:
    """Eq. 8 between a weighted set of nodes (a fragment's, or the cursor's window) and each
    single node of ``targets``: ``sum_k w_k * Dis(g_k, target)``, strengths below
    ``epsilon`` counting as 0 and each source settling at most ``node_cap`` nodes (the
    searches of ``compute_relations``, from one node set and with its own bounds)."""
    # sorted for the kernel's look-ups, duplicates kept: each target reads the first of its
    # equals, which alone gathers its strength (``np.unique``'s inverse took 4x as long)
    wanted = np.asarray(targets, np.int64)
    ordered = np.sort(wanted)
    if sources.size == 0 or ordered.size == 0:
        return np.zeros(ordered.size, np.float64)
    g = _graph_arrays(graph)
    # nodes a search touches and its pushes: bounded by its pruning and by the graph
    bound = node_cap * node_cap + 1
    sizes = min(bound, g[0].size + 1), min(bound, g[2].size + 1), node_cap
    with _query_scratch.take(*sizes) as scratch:
        found = _strengths_kernel(
            g,
            np.asarray(sources, np.int64),
            np.asarray(weights, np.float64),
            ordered,
            strength_limit(epsilon),
            hub,
            node_cap,
            scratch,
        )
    return found[ordered.searchsorted(wanted)]


class _Pool:
    """Work arrays reused across calls, a set per thread using them at once (up to one per
    core kept): making them costs more than a small call's work. ``_fits`` says whether a
    kept set is large enough for the sizes asked, ``_made`` makes a new one."""

    def __init__(self) -> None:
        self._free: list[tuple] = []
        self._lock = threading.Lock()
        self._keep = os.cpu_count() or 1  # read once: each call asks the system

    @contextmanager
    def take(self, *sizes: int) -> Iterator[tuple]:
        with self._lock:
            arrays = self._free.pop() if self._free else None
        if arrays is None or not self._fits(arrays, *sizes):
            arrays = self._made(*sizes)
        yield arrays  # a kernel that raised may leave it dirty: then it is not reused
        with self._lock:
            self._free.append(arrays)
            del self._free[: -self._keep]

    @staticmethod
    def _fits(arrays: tuple, *sizes: int) -> bool:
        raise NotImplementedError

    @staticmethod
    def _made(*sizes: int) -> tuple:
        raise NotImplementedError


class _QueryScratch(_Pool):
    """The work arrays of a query's searches (``node_strengths``) for ``(nodes touched,
    pushes, nodes settled)``: a search's table (``_table``), its touched slots, its heap's
    costs, slots and node keys, and the nodes it settled with their costs. Made afresh, their
    table (megabytes at the standard library's size, filled to mark its slots empty) took
    ~0.35 ms of each definitions lookup; a search leaves its table empty, so the arrays
    are reused as they are."""

    @staticmethod
    def _fits(arrays: tuple, *sizes: int) -> bool:
        n_touched, n_heap, node_cap = sizes
        return (
            arrays[1].size >= n_touched and arrays[2].size >= n_heap and arrays[5].size >= node_cap
        )

    @staticmethod
    def _made(*sizes: int) -> tuple:
        n_touched, n_heap, node_cap = sizes
        return (
            _table(n_touched),
            np.empty(n_touched, np.int64),
            np.empty(n_heap, np.float64),
            np.empty(n_heap, np.int64),
            np.empty(n_heap, np.int64),
            np.empty(node_cap, np.int64),
            np.empty(node_cap, np.float64),
        )


_query_scratch = _QueryScratch()


@numba.njit(cache=True, nogil=True)
def _sources_between(rel_idx, first_row, lo, hi, fill, out):  # noqa: ANN001, ANN202
    """The rows of ``rel_idx`` (numbered from ``first_row``) holding targets in
    ``[lo, hi)``, each put at ``fill[target - lo]`` of ``out``, which then moves on; with
    ``out`` empty, ``fill`` only counts them (one kernel for both passes: one to load)."""
    write = out.size > 0
    for f in range(rel_idx.shape[0]):
        for j in range(rel_idx.shape[1]):
            g = rel_idx[f, j]
            if lo <= g < hi:
                if write:
                    out[fill[g - lo]] = first_row + f
                fill[g - lo] += 1


def relations_by_target(
    rel_idx: np.ndarray, n: int, entries: int | None = 1 << 23
) -> tuple[np.ndarray, Iterator[np.ndarray]]:
    """Per fragment, the fragments whose relation rows hold it (CSR: pointers, then the
    sources, each row's ascending), the sources made about ``entries`` at a time (``None``:
    all in one part), a range of targets per pass over ``rel_idx``. A save writes them
    as they come: all at once, with the relation rows they were read from, took the whole
    kernel's save ~0.7 GB more than it held. The pages of a mapped ``rel_idx`` are handed
    back as each block of its rows is read (``release_mapped``)."""
    counts = np.zeros(n, np.int64)
    for first, block in _row_blocks(rel_idx):
        _sources_between(block, first, 0, n, counts, np.empty(0, np.int32))
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(counts, out=ptr[1:])
    del counts
    part = int(ptr[n]) if entries is None else entries

    def sources() -> Iterator[np.ndarray]:
        lo = 0
        while lo < n:
            hi = min(n, max(lo + 1, int(np.searchsorted(ptr, ptr[lo] + part, "right")) - 1))
            out = np.empty(int(ptr[hi] - ptr[lo]), np.int32)
            fill = ptr[lo:hi] - ptr[lo]
            for first, block in _row_blocks(rel_idx):
                _sources_between(block, first, lo, hi, fill, out)
            yield out
            lo = hi

    return ptr, sources()


def _row_blocks(rel_idx: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """``rel_idx`` a block of rows at a time (with the first row's number), the pages of a
    mapped one handed back after each."""
    read = mappings_of([rel_idx])
    for lo in range(0, rel_idx.shape[0], _BLOCK_ROWS):
        yield lo, rel_idx[lo : lo + _BLOCK_ROWS]
        release_mapped(read)


# relation rows read at a time where all are scanned
_BLOCK_ROWS = 1 << 16


def strength_limit(epsilon: float) -> float:
    """The Dijkstra cost bound: strengths ``>= epsilon`` are costs ``<= -log(epsilon)``."""
    return -math.log(epsilon) * (1 + 1e-12)


class _Scratch(_Pool):
    """Work arrays for ``(nodes, fragments)``: sized to the graph (a ball's, ``node_ball``)
    and to the fragments (the relations' sums). A relation search keeps the nodes it
    reaches in a table of its own (``_table``)."""

    def forget(self) -> None:
        """Forget the arrays kept: a build's relations leave their sums resident (every page:
        the whole kernel's 2.7M fragments, ~25 MB per thread), and a build makes no relation
        after them."""
        with self._lock:
            self._free = []

    def reserve(self, n_nodes: int, n_frags: int) -> None:
        """Make now the arrays the searches of an index this large will take, for the one or
        two threads an edit's relations take: a long-lived process does it before serving,
        so that its first edit does not (~0.1 s on the Linux kernel's kernel/ mm/ fs/
        include/)."""
        with self._lock:
            self._free = [a for a in self._free if self._fits(a, n_nodes, n_frags)]
            while len(self._free) < min(self._keep, 2):
                self._free.append(self._made(n_nodes, n_frags))

    def release(self) -> int:
        """Hand back the pages of the arrays not in use (``trim.release_zeros``: each search
        leaves them zero): the searches of an editing session reach new parts of the graph
        at every edit, and the pages they had written stayed resident, ~8 MB per 100 edits
        on the Linux kernel's kernel/ mm/ fs/ include/. Returns the bytes handed back."""
        with self._lock:
            return release_zeros(a for arrays in self._free for a in arrays)

    @staticmethod
    def _fits(arrays: tuple, *sizes: int) -> bool:
        n_nodes, n_frags = sizes
        return arrays[0].size >= n_nodes and arrays[2].size >= n_frags

    @staticmethod
    def _made(*sizes: int) -> tuple:
        """Per node a distance and its state (``_SEEN``: the distance holds, ``_SETTLED``),
        per fragment a sum and whether it holds one, and a list of the fragments a row
        reached (one longer, ``_relations_kernel``): all zeros in untouched pages, so that
        only the pages the searches reach become resident (distances filled with infinity
        made the whole kernel's ~0.3 GB resident at ``warm``)."""
        n_nodes, n_frags = sizes
        return (
            fresh_zeros(n_nodes, np.float64),
            fresh_zeros(n_nodes, np.int8),
            fresh_zeros(n_frags, np.float64),
            fresh_zeros(n_frags, np.bool_),
            fresh_zeros(n_frags + 1, np.int64),
        )


_scratch = _Scratch()


def forget_scratch() -> None:
    """``_Scratch.forget``: once a build's relations are computed."""
    _scratch.forget()


def reserve_scratch(graph: CodeGraph, n_frags: int) -> None:
    """``_Scratch.reserve`` for ``graph`` and ``n_frags`` fragment ids (with room for both
    to grow by an eighth, as an editing session makes them)."""
    _scratch.reserve(graph.n_nodes + graph.n_nodes // 8, n_frags + n_frags // 8)


def release_scratch() -> int:
    """``_Scratch.release`` of the searches' work arrays (at a pause: ``RepoIndex.tidy``)."""
    return _scratch.release()


def _graph_arrays(graph: CodeGraph) -> tuple[np.ndarray, ...]:
    adj = graph.adj
    return adj.start, adj.end, adj.cols, adj.vals, graph.key


def compute_relations(
    graph: CodeGraph,
    frag_nodes: RowPool,
    node_frags: RowPool,
    frag_key: np.ndarray,
    rows: np.ndarray,
    *,
    epsilon: float,
    node_cap: int,
    frag_cap: int,
    hub: int,
    n_threads: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Relations of the fragments ``rows`` to all fragments.

    ``frag_nodes`` holds per fragment its graph nodes with the Eq. 8 weights (each row in
    node-key order, so that sums run in the same order however ids were allocated),
    ``node_frags`` per node the fragments holding it, ``frag_key`` an int64 per fragment
    that orders equal strengths (derived from content, so that a rebuild keeps the same
    ones at the cap). Returns, per row, up to ``frag_cap`` related fragment ids (strongest
    first, -1 pads), their strengths, and whether a cap truncated the row; then the
    searched nodes and each one's radius (see ``_search``), which tell an incremental
    update what a change can reach.
    """
    rows = np.asarray(rows, np.int64)
    sub_ptr, sub_node, sub_w = frag_nodes.gather(rows)
    # a thread pays off with 64 rows or more (an edit near the top of a large file relates
    # hundreds)
    threads = max(1, min(n_threads or os.cpu_count() or 1, rows.size // 64))
    out_idx = np.full((rows.size, frag_cap), -1, np.int64)
    out_val = np.zeros((rows.size, frag_cap), np.float64)
    cnt = np.zeros(rows.size, np.int64)
    capped = np.zeros(rows.size, np.bool_)
    radius = np.empty(sub_node.size, np.float64)
    g = _graph_arrays(graph)
    limit = strength_limit(epsilon)
    n_frags = frag_key.size

    def run(lo: int, hi: int) -> None:
        with _scratch.take(0, n_frags) as (_, _, acc, seen, reached):
            _relations_kernel(
                g,
                sub_ptr[lo : hi + 1] - sub_ptr[lo],
                sub_node[sub_ptr[lo] : sub_ptr[hi]],
                sub_w[sub_ptr[lo] : sub_ptr[hi]],
                rows[lo:hi],
                node_frags.start,
                node_frags.end,
                node_frags.cols,
                node_frags.vals,
                frag_key,
                limit,
                node_cap,
                frag_cap,
                hub,
                acc,
                seen,
                reached,
                out_idx[lo:hi],
                out_val[lo:hi],
                cnt[lo:hi],
                capped[lo:hi],
                radius[sub_ptr[lo] : sub_ptr[hi]],
            )

    bounds = np.linspace(0, rows.size, threads + 1).astype(int)
    if threads == 1:
        run(0, rows.size)
    else:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(run, bounds[:-1], bounds[1:]))
    return out_idx, out_val, capped, sub_node, radius


def node_ball(
    graph: CodeGraph,
    seeds: np.ndarray,
    epsilon: float,
    hub: int,
    offsets: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Every node a search bounded at strength ``epsilon`` can settle on its way to (or at)
    one of the seeds, with its cost (``-log`` strength) from the nearest seed plus that
    seed's offset: a seed whose change lies one edge on is felt that far on."""
    seeds = np.asarray(seeds, np.int64)
    if seeds.size == 0:
        return seeds, np.empty(0, np.float64)
    if seeds.min() < 0 or seeds.max() >= graph.n_nodes:  # the kernel does not bound-check
        raise IndexError(f"seed node out of range 0..{graph.n_nodes - 1}")
    offsets = np.asarray(offsets, np.float64)
    limit = strength_limit(epsilon)
    with _scratch.take(graph.n_nodes, 0) as (dist, done, _, _, _):
        return _ball_kernel(_graph_arrays(graph), seeds, offsets, limit, hub, dist, done)


@dataclass(frozen=True)
class SearchTree:
    """What one source node's bounded search settles, with each node's predecessor on its
    strongest path (-1 for the source): ``path_to`` spells a path out."""

    nodes: np.ndarray
    strengths: np.ndarray
    pred: dict[int, int]
    capped: bool

    def path_to(self, node: int) -> list[int]:
        out = [node]
        while self.pred[out[-1]] >= 0:
            out.append(self.pred[out[-1]])
        return out[::-1]


def search_tree(
    graph: CodeGraph, src: int, *, epsilon: float, node_cap: int, hub: int
) -> SearchTree:
    """The search ``_search`` makes from ``src`` (same bounds, same tie-breaks), in Python and
    with predecessors: for reports on where relations go, never on the index's own path."""
    limit = strength_limit(epsilon)
    key = graph.key
    dist = {src: 0.0}
    pred = {src: -1}
    heap = [(0.0, int(key[src]), src)]
    done: list[int] = []
    strengths: list[float] = []
    settled: set[int] = set()
    capped = False
    while heap:
        d, _, u = heapq.heappop(heap)
        if u in settled:
            continue
        settled.add(u)
        done.append(u)
        strengths.append(math.exp(-d))
        if len(done) >= node_cap:
            capped = True
            break
        nbr, cost = graph.neighbours(u)
        if u != src and nbr.size > hub:
            continue
        for v, c in zip(nbr.tolist(), cost.tolist(), strict=True):
            nd = d + c
            if nd > limit:
                break
            if nd < dist.get(v, math.inf):
                dist[v] = nd
                pred[v] = u
                heapq.heappush(heap, (nd, int(key[v]), v))
    return SearchTree(np.array(done, np.int64), np.array(strengths), pred, capped)

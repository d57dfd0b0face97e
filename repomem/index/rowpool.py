"""Sparse rows that can be replaced one at a time.

A CSR matrix must be rebuilt whole when one row changes, which at repository scale costs
more than an editor can wait for. Here each row is a ``[start, end)`` slice of two shared
arrays; replacing rows appends them at the end and leaves the old slices as garbage, which
is reclaimed by compacting when the arrays are full.
"""

from __future__ import annotations

import mmap
from collections.abc import Callable
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from repomem.index.jit import numba
from repomem.index.spool import ArrayWriter, mapped, write_array
from repomem.index.trim import fresh_zeros, map_under, mappings_of, release_mapped


def ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The positions of the slices ``[start, start + length)``, laid end to end."""
    lengths = np.asarray(lengths, np.int64)
    ends = np.cumsum(lengths)
    total = int(ends[-1]) if ends.size else 0
    return np.repeat(np.asarray(starts, np.int64) - ends + lengths, lengths) + np.arange(total)


def distinct_sorted(values: np.ndarray) -> np.ndarray:
    """The distinct numbers of ``values``, sorted already, in order: ``np.unique`` without
    its sort (numpy 2's hashes first, many times slower on ids)."""
    first = np.ones(values.size, bool)
    np.not_equal(values[1:], values[:-1], out=first[1:])
    return values[first]


@numba.njit(cache=True, nogil=True)
def grouped_sums(
    keys: np.ndarray, weights: np.ndarray, lo: np.ndarray, hi: np.ndarray, n_keys: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each group ``g``, the positions ``lo[g]:hi[g]`` (groups may overlap): its distinct
    ``keys`` in ascending order and the sum of the (positive) ``weights`` of each, a key below
    0 in none; ``ptr[g]:ptr[g + 1]`` are group ``g``'s. Summed per group in a table of the
    keys rather than by sorting every (group, key) pair at once (``np.unique`` took a third of
    a file's BM25 term counting)."""
    total = 0
    for g in range(lo.size):
        total += hi[g] - lo[g]
    ptr = np.zeros(lo.size + 1, np.int64)
    ids = np.empty(total, keys.dtype)
    sums = np.empty(total, weights.dtype)
    table = np.zeros(max(n_keys, 1), weights.dtype)
    n = 0
    for g in range(lo.size):
        first = n
        for t in range(lo[g], hi[g]):
            k = keys[t]
            if k < 0:
                continue
            if table[k] == 0:
                ids[n] = k
                n += 1
            table[k] += weights[t]
        ids[first:n].sort()
        for j in range(first, n):
            sums[j] = table[ids[j]]
            table[ids[j]] = 0
        ptr[g + 1] = n
    return ptr, ids[:n].copy(), sums[:n].copy()


def with_room(entries: int) -> int:
    """The capacity a pool lays ``entries`` out in: an eighth more room (1024 at least), so
    that the first edits after a build or a load append instead of paying for a compaction
    of the whole pool."""
    return max(entries + entries // 8, 1024)


# a pool's arrays, as ``replace_arrays`` names them
_POOL_ARRAYS = ("start", "end", "room_end", "cols", "vals")

# entries a spooled transposition (``RowPool.transposed``) makes per pass over the rows
_TRANSPOSED_AT_ONCE = 1 << 22


class RowPool:
    """Rows of ``(column, value)`` pairs: ``cols[start[r]:end[r]]``, ``vals[...]``."""

    def __init__(self, n_rows: int = 0) -> None:
        self.start = np.zeros(n_rows, np.int64)
        self.end = np.zeros(n_rows, np.int64)
        self.room_end = np.zeros(n_rows, np.int64)  # how far a row may grow in place (``edit``)
        # what ``grow`` made ``start``, ``end``, ``room_end`` views of, with room for more rows
        self._rows: np.ndarray | None = None
        self.cols = np.empty(0, np.int64)
        self.vals = np.empty(0, np.float64)
        self.used = 0
        self.live = 0  # entries in rows; the rest of ``used`` is garbage

    @classmethod
    def from_sorted(
        cls, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, n_rows: int
    ) -> RowPool:
        """Entries already grouped by row (``rows`` non-decreasing), order kept within a row."""
        counts = np.bincount(rows, minlength=n_rows) if rows.size else np.zeros(n_rows, np.int64)
        return cls.from_indptr(np.r_[0, np.cumsum(counts)], cols, vals)

    @classmethod
    def from_indptr(cls, indptr: np.ndarray, cols: np.ndarray, vals: np.ndarray) -> RowPool:
        """Rows laid out as in a CSR matrix, with room (``with_room``)."""
        pool = cls()
        pool._lay_out(np.asarray(indptr, np.int64), cols, vals, with_room(cols.size))
        return pool

    @classmethod
    def adopt(cls, indptr: np.ndarray, cols: np.ndarray, vals: np.ndarray | None = None) -> RowPool:
        """Rows laid out as in a CSR matrix at the start of ``cols`` and ``vals`` themselves
        (mapped arrays, say), whose rest is room for edits; no ``vals``: zeros, made when
        first read."""
        pool = cls()
        # the row arrays with an eighth more room in untouched pages, as ``grow`` leaves
        # them: growing them at an editing session's first new row copied all three (~90 ms
        # of a first edit on the Linux kernel's subset, whose graph has 1.8M nodes).
        # ``room_end`` stays zero, read as the row's end (``_hold_room``): written, it made
        # ~0.3 GB resident at once for the whole kernel's graph and node rows.
        n = indptr.size - 1
        pool._rows = fresh_zeros((3, n + n // 8), np.int64)
        pool._rows[0, :n] = indptr[:-1]
        pool._rows[1, :n] = indptr[1:]
        pool.start, pool.end, pool.room_end = pool._rows[:, :n]
        pool.cols, pool.vals = cols, np.zeros(cols.size) if vals is None else vals
        pool.used = pool.live = int(indptr[-1])
        return pool

    def _lay_out(
        self, indptr: np.ndarray, cols: np.ndarray, vals: np.ndarray, capacity: int
    ) -> None:
        self.cols = np.empty(capacity, np.int64)
        self.vals = np.empty(capacity, np.float64)
        self.cols[: cols.size] = cols
        self.vals[: vals.size] = vals
        self.start, self.end = indptr[:-1].copy(), indptr[1:].copy()
        self.room_end = self.end.copy()
        self.used = self.live = int(cols.size)

    def replace_arrays(self, copy: Callable[[str, np.ndarray], np.ndarray]) -> None:
        """Each array (``start``, ``end``, ``room_end``, ``cols``, ``vals``) replaced by
        ``copy(name, array)``, a copy of it (mapped from a file, say); the room for more
        rows that ``grow`` made goes with the old arrays."""
        self._rows = None
        for name in _POOL_ARRAYS:
            setattr(self, name, copy(name, getattr(self, name)))

    def file_maps(self) -> list[mmap.mmap]:
        """The file maps under the pool's arrays (``np.load``'s, a spool's), whose pages read
        go back with ``release_mapped``."""
        return mappings_of([getattr(self, name) for name in _POOL_ARRAYS])

    def row_map(self) -> mmap.mmap | None:
        """The map under the row arrays ``adopt`` and ``grow`` lay out (``fresh_zeros``),
        whose pages are written as rows change."""
        return None if self._rows is None else map_under(self._rows)

    @classmethod
    def from_csr(cls, m: sp.csr_matrix) -> RowPool:
        return cls.from_indptr(m.indptr, m.indices, m.data)

    @property
    def n_rows(self) -> int:
        return int(self.start.size)

    def lengths(self, rows: np.ndarray | None = None) -> np.ndarray:
        if rows is None:
            return self.end - self.start
        return self.end[rows] - self.start[rows]

    def grow(self, n_rows: int) -> None:
        """At least ``n_rows`` rows; new ones are empty. The row arrays become views of ones
        with an eighth more room: an editing session adds fragments and nodes a few at a
        time, and copying the three arrays at each (2.5 MB apiece for the Linux kernel
        subset's fragments) cost a first edit ~35 ms and later edits as much again."""
        n = self.n_rows
        if n_rows <= n:
            return
        if self._rows is None or self._rows.shape[1] < n_rows:
            rows = fresh_zeros((3, n_rows + n_rows // 8), np.int64)
            rows[:, :n] = self.start, self.end, self.room_end
            self._rows = rows
        self.start, self.end, self.room_end = self._rows[:, :n_rows]

    def gather(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """CSR-style ``(indptr, cols, vals)`` of the given rows, in that order."""
        indptr, pos = self._positions(rows)
        return indptr, self.cols[pos], self.vals[pos]

    def columns(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``gather``'s ``(indptr, cols)`` alone: the values' pages are not read (a mapped
        pool's; the calls into a definition the whole Linux kernel uses reached 180 MB of
        the fragments' weights per node for nothing)."""
        indptr, pos = self._positions(rows)
        return indptr, self.cols[pos]

    def _positions(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rows = np.asarray(rows, np.int64)
        counts = self.end[rows] - self.start[rows]
        indptr = np.zeros(rows.size + 1, np.int64)
        np.cumsum(counts, out=indptr[1:])
        return indptr, ranges(self.start[rows], counts)

    def set_rows(
        self, rows: np.ndarray, owner: np.ndarray, cols: np.ndarray, vals: np.ndarray
    ) -> None:
        """Replace ``rows`` (distinct) with the entries whose ``owner`` is that row; entries
        must be grouped by owner and keep their order. A row without entries becomes empty.
        A row is written where it stood when it fits there (its slot stays its own when it
        shrinks or empties); one that outgrows its slot moves to the end with an eighth more
        room. Appending every replaced row instead grew the pool by the rows of the edited
        file at each edit, until a compaction copied the whole pool (a mapped one into
        memory): an editing session's memory grew with every edit."""
        rows = np.asarray(rows, np.int64)
        self.grow(int(rows.max()) + 1 if rows.size else 0)
        self._hold_room(rows)
        self.live -= int(self.lengths(rows).sum())
        self.end[rows] = self.start[rows]
        if owner.size == 0:
            return
        first = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
        count = np.diff(np.r_[first, owner.size])
        target = np.asarray(owner[first], np.int64)
        moving = self.start[target] + count > self.room_end[target]
        size = count + count // 8
        if self.used + int(size[moving].sum()) > self.cols.size:
            self.compact(room=int(size.sum()))
            moving = self.start[target] + count > self.room_end[target]
        at = self.start[target]
        at[moving] = self.used + np.cumsum(size[moving]) - size[moving]
        pos = ranges(at, count)
        self.cols[pos] = cols
        self.vals[pos] = vals
        self.start[target] = at
        self.end[target] = at + count
        self.room_end[target[moving]] = at[moving] + size[moving]
        self.used += int(size[moving].sum())
        self.live += int(owner.size)

    def _hold_room(self, rows: np.ndarray) -> None:
        """Make ``room_end`` of ``rows`` at least their end before their ends change: a row
        ``adopt`` laid out has a zero there, which stands for its end (its slot is exactly
        its entries), and everywhere else ``room_end >= end`` already."""
        self.room_end[rows] = np.maximum(self.room_end[rows], self.end[rows])

    def compact(self, room: int = 0, *, values: bool = True) -> None:
        """Drop the garbage left by replaced rows, leaving space for ``room`` more entries.
        The rows slide down where they lie, in the pool's own arrays (a loaded index's
        mapped ones: only the pages from the first hole on are written, and no array is
        made), when that leaves ``room`` and a thirty-second of the arrays free; otherwise
        the arrays grow to twice what is live and ``room``, which bounds them to that at the
        copying cost of growth. ``values``: whether the values move with the columns (a pool
        of sets, whose values are all zero, leaves them as they are). Copying a loaded
        index's relations by target into new arrays instead made ~160 MB resident at once
        in an editing session on the Linux kernel's subset. One pass copies the rows
        (gathering them instead is slow on a large repository: docs/MEASUREMENTS.md,
        "Editing a file")."""
        capacity = self.cols.size
        if self.live + room <= capacity - capacity // 32:
            empty = self.end == self.start
            rows = np.flatnonzero(~empty)
            order = rows[np.argsort(self.start[rows], kind="stable")]
            self.start[empty] = self.end[empty] = 0
            self.used = self.live = _slide(
                order, self.start, self.end, self.cols, self.vals, values
            )
        else:
            capacity = max(2 * (self.live + room), 1024)
            cols = np.empty(capacity, np.int64)
            vals = np.empty(capacity, np.float64) if values else np.zeros(capacity)
            self.used = self.live = _pack(
                self.start, self.end, self.cols, self.vals, cols, vals, values
            )
            self.cols, self.vals = cols, vals
        self.room_end[:] = self.end

    def edit(
        self,
        gone: tuple[np.ndarray, np.ndarray],
        added: tuple[np.ndarray, np.ndarray],
    ) -> None:
        """For a pool whose rows are sets (order and values meaningless: the relations by
        target), remove the entries ``gone`` (rows, cols; each present) and add ``added``
        (rows, cols; each absent); values are left as they are (a pool made with zeros
        reads 0: writing them made the pages of a mapped index's zeros resident, row by row
        over a session). A row shrinks in place and grows in place
        into what it held before; a row that outgrows that moves to the end with an eighth
        more room. Rewriting whole rows instead filled the pool with copies of the rows of
        popular targets (thousands of entries, one changed) and forced a compaction of all
        of it every few edits."""
        rows, cols = (np.asarray(a, np.int64) for a in added)
        self.grow(int(max(rows.max(initial=-1), np.max(gone[0], initial=-1))) + 1)
        self._hold_room(np.r_[np.asarray(gone[0], np.int64), rows])
        _remove(self.start, self.end, self.cols, *(np.asarray(a, np.int64) for a in gone))
        self.live -= int(np.asarray(gone[0]).size)
        if not rows.size:
            return
        order = np.argsort(rows, kind="stable")
        rows, cols = rows[order], cols[order]
        target, first, count = np.unique(rows, return_index=True, return_counts=True)
        size = self.end[target] - self.start[target] + count
        moving = self.end[target] + count > self.room_end[target]
        need = int((size[moving] + size[moving] // 8).sum())
        if self.used + need > self.cols.size:
            self.compact(room=int((size + size // 8).sum()), values=False)
            moving[:] = True  # every row is now exactly as long as it is
        self.used = _add(
            self.start,
            self.end,
            self.room_end,
            self.cols,
            self.used,
            target,
            first,
            count,
            moving,
            cols,
        )
        self.live += int(rows.size)

    def transposed(
        self, n_cols: int, spool: Path | None = None, block: int = _TRANSPOSED_AT_ONCE
    ) -> RowPool:
        """Per column, the rows holding it (ascending) with their values, laid out as
        ``from_indptr`` lays rows out: ``from_csr(to_csr(n_cols).T.tocsr())`` without the
        copies those make (four of the pool at once: the kernel subset's build +0.2 GB).
        ``spool``: a folder the arrays are written to, ``block`` entries at a time (a range
        of columns per pass over the rows, whose mapped pages are handed back after each),
        and mapped back copy-on-write, their files removed (the maps keep them): made in
        memory, the whole Linux kernel's node rows by node took ~1 GB at the start of its
        build's relations."""
        indptr = np.zeros(n_cols + 1, np.int64)
        _count_columns(self.start, self.end, self.cols, indptr[1:])
        np.cumsum(indptr, out=indptr)
        total = int(indptr[-1])
        capacity = with_room(total)
        pool = RowPool()
        pool.used = pool.live = total
        if spool is None:
            pool.cols = np.empty(capacity, np.int64)
            pool.vals = np.empty(capacity, np.float64)
            fill = indptr[:-1].copy()
            out = pool.cols, pool.vals
            _transpose(self.start, self.end, self.cols, self.vals, 0, n_cols, fill, *out)
            pool.start, pool.end = indptr[:-1].copy(), indptr[1:].copy()
            pool.room_end = pool.end.copy()
            return pool
        paths = {name: spool / f"transposed_{name}.npy" for name in _POOL_ARRAYS}
        for name, values in (("start", indptr[:-1]), ("end", indptr[1:]), ("room_end", indptr[1:])):
            write_array(paths[name], values)
        read = self.file_maps()
        writers = ArrayWriter(paths["cols"], np.int64), ArrayWriter(paths["vals"], np.float64)
        with writers[0] as cols, writers[1] as vals:
            lo = 0
            while lo < n_cols:
                hi = max(lo + 1, int(np.searchsorted(indptr, indptr[lo] + block, "right")) - 1)
                hi = min(hi, n_cols)
                size = int(indptr[hi] - indptr[lo])
                out = np.empty(size, np.int64), np.empty(size, np.float64)
                fill = indptr[lo:hi] - indptr[lo]
                _transpose(self.start, self.end, self.cols, self.vals, lo, hi, fill, *out)
                cols.write(out[0])
                vals.write(out[1])
                del out, fill
                release_mapped(read)
                lo = hi
            for at in range(total, capacity, block):  # the room, as ``with_room`` leaves it
                size = min(block, capacity - at)
                cols.write(np.full(size, -1, np.int64))
                vals.write(np.zeros(size))
        del indptr
        for name, path in paths.items():
            setattr(pool, name, mapped(path))
            path.unlink()
        return pool

    def to_csr(self, n_cols: int) -> sp.csr_matrix:
        indptr, cols, vals = self.gather(np.arange(self.n_rows))
        return sp.csr_matrix((vals, cols, indptr), shape=(self.n_rows, n_cols))


@numba.njit(cache=True, nogil=True)
def _count_columns(start, end, cols, counts):  # noqa: ANN001, ANN202
    """Per column, how many of the rows' entries hold it (added to ``counts``)."""
    for r in range(start.size):
        for k in range(start[r], end[r]):
            counts[cols[k]] += 1


@numba.njit(cache=True, nogil=True)
def _transpose(start, end, cols, vals, lo, hi, fill, out_cols, out_vals):  # noqa: ANN001, ANN202, PLR0913
    """``RowPool.transposed``'s columns ``[lo, hi)`` by counting sort: each entry of such a
    column is put at ``fill[column - lo]`` of ``out_cols`` (its row) and ``out_vals``,
    which then moves on."""
    for r in range(start.size):
        for k in range(start[r], end[r]):
            c = cols[k]
            if lo <= c < hi:
                p = fill[c - lo]
                out_cols[p] = r
                out_vals[p] = vals[k]
                fill[c - lo] = p + 1


@numba.njit(cache=True, nogil=True)
def _pack(start, end, cols, vals, out_cols, out_vals, values):  # noqa: ANN001, ANN202
    """Rows copied end to end into ``out_*`` (the values only where ``values``),
    ``start``/``end`` moved with them; returns the entries copied."""
    pos = 0
    for r in range(start.size):
        s, e = start[r], end[r]
        start[r] = pos
        for k in range(s, e):
            out_cols[pos] = cols[k]
            if values:
                out_vals[pos] = vals[k]
            pos += 1
        end[r] = pos
    return pos


@numba.njit(cache=True, nogil=True)
def _slide(order, start, end, cols, vals, values):  # noqa: ANN001, ANN202
    """Rows ``order`` (every non-empty one, by where it starts) slid down end to end in
    their own arrays, ``start``/``end`` moved with them (a row never moves up, so nothing
    is overwritten before it is read; a row already in place is not written); returns the
    entries kept."""
    pos = 0
    for i in range(order.size):
        r = order[i]
        s, n = start[r], end[r] - start[r]
        if s != pos:
            for k in range(n):
                cols[pos + k] = cols[s + k]
            if values:
                for k in range(n):
                    vals[pos + k] = vals[s + k]
        start[r] = pos
        end[r] = pos + n
        pos += n
    return pos


@numba.njit(cache=True, nogil=True)
def _remove(start, end, cols, rows, gone):  # noqa: ANN001, ANN202
    """Each ``(rows[i], gone[i])`` entry overwritten by its row's last one, the row shortened."""
    for i in range(rows.size):
        r = rows[i]
        last = end[r] - 1
        for k in range(start[r], end[r]):
            if cols[k] == gone[i]:
                cols[k] = cols[last]
                end[r] = last
                break


@numba.njit(cache=True, nogil=True)
def _add(start, end, room_end, cols, used, target, first, count, moving, added):  # noqa: ANN001, ANN202, PLR0913
    """Append ``added[first[i]:first[i] + count[i]]`` to row ``target[i]``, in place or, where
    ``moving[i]``, after the row's entries moved to ``used`` with an eighth more room; returns
    the new ``used``."""
    for i in range(target.size):
        r = target[i]
        if moving[i]:
            n = end[r] - start[r]
            for k in range(n):
                cols[used + k] = cols[start[r] + k]
            start[r] = used
            end[r] = used + n
            size = n + count[i]
            room_end[r] = used + size + size // 8
            used = room_end[r]
        for k in range(count[i]):
            cols[end[r]] = added[first[i] + k]
            end[r] += 1
    return used

"""Row pool: replacing rows one at a time equals a dict-of-rows model, compaction included."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from pages import resident_pages

from repomem.index.rowpool import RowPool


def _counted_compactions(monkeypatch) -> list[int]:  # noqa: ANN001
    """The ``room`` of every compaction the pools make from now on."""
    compactions: list[int] = []
    compact = RowPool.compact
    monkeypatch.setattr(
        RowPool,
        "compact",
        lambda pool, room=0, **kw: (compactions.append(room), compact(pool, room, **kw)),
    )
    return compactions


def test_replacing_rows_matches_a_model_through_compactions(monkeypatch) -> None:  # noqa: ANN001
    compactions = _counted_compactions(monkeypatch)
    rng = np.random.default_rng(0)
    m = sp.random(50, 40, density=0.2, format="csr", random_state=1)
    pool = RowPool.from_csr(m)
    model = {
        r: list(zip(m[r].indices.tolist(), m[r].data.tolist(), strict=True)) for r in range(50)
    }
    for i in range(1500):
        rows = np.unique(rng.integers(0, 60, size=rng.integers(1, 5)))
        owner, cols, vals = [], [], []
        for r in rows.tolist():
            n = int(rng.integers(0, 6 + i // 50))  # rows grow: some outgrow their slots
            entries = [
                (int(c), float(v))
                for c, v in zip(rng.integers(0, 40, n), rng.random(n), strict=True)
            ]
            model[r] = entries
            owner += [r] * n
            cols += [c for c, _ in entries]
            vals += [v for _, v in entries]
        pool.set_rows(rows, np.array(owner, np.int64), np.array(cols, np.int64), np.array(vals))
    assert compactions  # rows that outgrew their slots left garbage, reclaimed on the way
    assert pool.live == sum(len(e) for e in model.values())
    assert pool.cols.size <= 2 * max(pool.live + max(compactions), 1024)
    indptr, cols, vals = pool.gather(np.arange(pool.n_rows))
    for r in range(pool.n_rows):
        got = list(
            zip(
                cols[indptr[r] : indptr[r + 1]].tolist(),
                vals[indptr[r] : indptr[r + 1]].tolist(),
                strict=True,
            )
        )
        assert got == model.get(r, [])


def test_rows_replaced_again_and_again_stay_in_their_slots() -> None:
    """An editing session rewrites the same rows (the edited file's) at every edit: rows that
    fit where they stood are written there, so the pool does not grow with the edits."""
    rng = np.random.default_rng(4)
    m = sp.random(200, 100, density=0.1, format="csr", random_state=5)
    pool = RowPool.from_csr(m)
    used = pool.used
    model = {r: m[r].indices.tolist() for r in range(200)}
    for _ in range(300):
        rows = np.unique(rng.integers(0, 20, size=5))
        owner: list[int] = []
        cols: list[int] = []
        for r in rows.tolist():
            model[r] = sorted(rng.choice(100, int(rng.integers(0, len(model[r]) + 1)), False))
            owner += [r] * len(model[r])
            cols += model[r]
        pool.set_rows(rows, np.array(owner, np.int64), np.array(cols, np.int64), np.ones(len(cols)))
    assert pool.used == used  # no row outgrew its slot: nothing was appended
    indptr, got, _ = pool.gather(np.arange(200))
    assert [got[indptr[r] : indptr[r + 1]].tolist() for r in range(200)] == [
        list(model[r]) for r in range(200)
    ]


def test_editing_set_rows_matches_a_model_through_compactions(monkeypatch) -> None:  # noqa: ANN001
    compactions = _counted_compactions(monkeypatch)
    rng = np.random.default_rng(2)
    m = sp.random(50, 40, density=0.3, format="csr", random_state=3)
    pool = RowPool.from_csr(m)
    model = {r: set(m[r].indices.tolist()) for r in range(50)}
    for _ in range(800):
        gone: list[tuple[int, int]] = []
        added: list[tuple[int, int]] = []
        for r in np.unique(rng.integers(0, 60, size=rng.integers(1, 5))).tolist():
            have = model.setdefault(r, set())
            out = {c for c in have if rng.random() < 0.3}
            new = {int(c) for c in rng.integers(0, 40, 4)} - have
            gone += [(r, c) for c in sorted(out)]
            added += [(r, c) for c in sorted(new)]
            model[r] = (have - out) | new
        pool.edit(*(tuple(np.array(side, np.int64).reshape(-1, 2).T) for side in (gone, added)))
    assert compactions  # rows outgrowing their room moved until the pool was full
    assert pool.live == sum(len(c) for c in model.values())
    for r in range(pool.n_rows):
        assert sorted(pool.cols[pool.start[r] : pool.end[r]].tolist()) == sorted(model.get(r, ()))


def test_a_long_row_losing_and_regaining_an_entry_stays_in_place() -> None:
    """The relations by target of a popular fragment: one source changing must not copy the
    thousands of others (that filled the pool and forced a compaction every few edits)."""
    pool = RowPool.from_indptr(np.array([0, 5000, 5001]), np.arange(5001), np.zeros(5001))
    used, start = pool.used, pool.start[0]
    for _ in range(3):
        pool.edit((np.array([0]), np.array([17])), (np.empty(0, np.int64),) * 2)
        pool.edit((np.empty(0, np.int64),) * 2, (np.array([0]), np.array([9999])))
        pool.edit((np.array([0]), np.array([9999])), (np.array([0]), np.array([17])))
    assert (pool.used, pool.start[0]) == (used, start)
    assert sorted(pool.cols[pool.start[0] : pool.end[0]].tolist()) == list(range(5000))


def test_transposed_is_the_transposed_matrix_laid_out_as_a_pool() -> None:
    """Rows by column, each in ascending row order, edited rows and garbage passed over."""
    m = sp.random(50, 40, density=0.2, format="csr", random_state=5)
    pool = RowPool.from_csr(m)
    pool.set_rows(np.array([3, 7]), np.array([3, 7, 7]), np.array([1, 2, 39]), np.ones(3))
    want = RowPool.from_csr(pool.to_csr(45).T.tocsr())
    got = pool.transposed(45)
    assert got.n_rows == 45 and got.live == want.live == pool.live
    for a, b in zip(got.gather(np.arange(45)), want.gather(np.arange(45)), strict=True):
        np.testing.assert_array_equal(a, b)
    assert got.cols.size == want.cols.size


def test_transposed_through_a_spool_a_few_columns_at_a_time_is_the_same(tmp_path) -> None:  # noqa: ANN001
    """A build's node rows by node, written a block of columns per pass (blocks smaller than
    a column's entries too) and mapped back, are the rows made in memory, and no file of
    them is left in the spool."""
    m = sp.random(60, 40, density=0.3, format="csr", random_state=8)
    pool = RowPool.from_csr(m)
    pool.set_rows(np.array([3, 7]), np.array([3, 7, 7]), np.array([1, 2, 39]), np.ones(3))
    want = pool.transposed(45)
    for block in (1, 7, 10_000):
        got = pool.transposed(45, tmp_path, block=block)
        assert isinstance(got.cols.base, np.memmap) and not list(tmp_path.iterdir())
        assert (got.n_rows, got.live, got.used, got.cols.size) == (
            want.n_rows, want.live, want.used, want.cols.size
        )  # fmt: skip
        for a, b in zip(got.gather(np.arange(45)), want.gather(np.arange(45)), strict=True):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(got.room_end, want.room_end)


def test_a_mapped_pool_of_sets_compacts_where_it_lies(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """A loaded index's relations by target, full of rows moved by edits, slide down in
    their own mapped array: the rows are the same sets, and no array is made for them
    (copying them out made an editing session's memory jump by the pool's size twice)."""
    compactions = _counted_compactions(monkeypatch)
    rng = np.random.default_rng(6)
    m = sp.random(300, 200, density=0.1, format="csr", random_state=7)
    room = m.indptr[-1] // 8
    np.save(tmp_path / "cols.npy", np.r_[m.indices.astype(np.int64), np.full(room, -1)])
    mapped = np.load(tmp_path / "cols.npy", mmap_mode="c")
    pool = RowPool.adopt(m.indptr, mapped)
    vals = pool.vals
    model = {r: set(m[r].indices.tolist()) for r in range(300)}
    for _ in range(400):
        gone: list[tuple[int, int]] = []
        added: list[tuple[int, int]] = []
        for r in np.unique(rng.integers(0, 300, size=8)).tolist():
            have = model[r]
            out = {c for c in have if rng.random() < 0.2}
            new = {int(c) for c in rng.integers(0, 200, 3)} - have
            gone += [(r, c) for c in sorted(out)]
            added += [(r, c) for c in sorted(new)]
            model[r] = (have - out) | new
        pool.edit(*(tuple(np.array(side, np.int64).reshape(-1, 2).T) for side in (gone, added)))
    assert len(compactions) >= 3
    assert pool.cols is mapped and pool.vals is vals  # compacted in place, values untouched
    assert not vals.any()
    assert pool.live == sum(len(c) for c in model.values()) <= pool.used <= mapped.size
    for r in range(300):
        assert sorted(pool.cols[pool.start[r] : pool.end[r]].tolist()) == sorted(model[r])


def test_a_pool_compacting_in_place_keeps_rows_and_values() -> None:
    """Rows with values slide down with them; a pool whose live entries no longer fit its
    arrays grows instead."""
    m = sp.random(60, 50, density=0.2, format="csr", random_state=8)
    pool = RowPool.from_csr(m)
    cols = pool.cols
    for r in range(0, 60, 3):  # every third row grows out of its slot: garbage behind
        pool.set_rows(np.array([r]), np.full(12, r), np.arange(12), np.full(12, float(r)))
    pool.compact()
    assert pool.cols is cols and pool.used == pool.live
    want = {r: (m[r].indices.tolist(), m[r].data.tolist()) for r in range(60)}
    want.update({r: (list(range(12)), [float(r)] * 12) for r in range(0, 60, 3)})
    indptr, got_cols, got_vals = pool.gather(np.arange(60))
    for r in range(60):
        rows = slice(indptr[r], indptr[r + 1])
        assert (got_cols[rows].tolist(), got_vals[rows].tolist()) == want[r]
    pool.compact(room=cols.size)
    assert pool.cols is not cols and pool.cols.size >= pool.live + cols.size
    assert pool.gather(np.arange(60))[1].tolist() == got_cols.tolist()


def test_rows_added_a_few_at_a_time_are_not_copied_at_each() -> None:
    """An editing session adds fragment ids one edit at a time: the row arrays grow with
    room to spare, not by a copy of all of them per new row."""
    m = sp.random(800, 30, density=0.2, format="csr", random_state=9)
    pool = RowPool.from_csr(m)
    copies = 0
    for n in range(801, 900):
        before = pool.start
        pool.grow(n)
        pool.set_rows(np.array([n - 1]), np.full(2, n - 1), np.array([1, 2]), np.ones(2))
        copies += not np.shares_memory(before, pool.start)
    assert copies <= 2 and pool.n_rows == 899
    want = {r: m[r].indices.tolist() for r in range(800)} | {r: [1, 2] for r in range(800, 899)}
    indptr, cols, _ = pool.gather(np.arange(899))
    assert [cols[indptr[r] : indptr[r + 1]].tolist() for r in range(899)] == [
        want[r] for r in range(899)
    ]


def test_an_adopted_pool_grows_into_its_room_without_copying() -> None:
    """A loaded index's pools (``adopt``) come with an eighth more row ids in untouched
    pages: an editing session's first new fragments and nodes neither copy the row arrays
    nor change what the rows hold."""
    m = sp.random(400, 30, density=0.2, format="csr", random_state=4)
    pool = RowPool.adopt(m.indptr.astype(np.int64), m.indices.astype(np.int64), m.data)
    before = pool.start
    pool.grow(450)
    assert np.shares_memory(before, pool.start)
    pool.set_rows(np.array([440]), np.full(2, 440), np.array([3, 4]), np.ones(2))
    indptr, cols, vals = pool.gather(np.arange(450))
    got = sp.csr_matrix((vals, cols, indptr), shape=(450, 30))
    want = sp.vstack([m, sp.csr_matrix((50, 30))]).tolil()
    want[440, 3] = want[440, 4] = 1.0
    assert (got != want.tocsr()).nnz == 0


def test_an_adopted_pool_keeps_rows_in_their_slots_without_writing_their_room() -> None:
    """``adopt`` leaves the room of its rows unwritten (a whole-kernel graph's rows made
    ~0.3 GB resident at load), yet a row replaced by no more entries than it held stays
    where it lies and one edited as a set grows back in place into what it held: placed
    as a pool laid out in memory places them."""
    m = sp.random(200, 40, density=0.2, format="csr", random_state=11)
    indptr, cols = m.indptr.astype(np.int64), m.indices.astype(np.int64)
    room = np.zeros(cols.size, np.int64)
    pool = RowPool.adopt(indptr, np.r_[cols, room], np.r_[m.data, room])
    assert not pool.room_end.any()  # no page of it written
    # rows as they are in memory: start, end and room at the next row's start
    same = RowPool.adopt(indptr, np.r_[cols, room], np.r_[m.data, room])
    same.room_end[:] = same.end
    rng = np.random.default_rng(12)
    for _ in range(60):
        r = int(rng.integers(0, 200))
        n = int(rng.integers(0, pool.lengths(np.array([r]))[0] + 2))
        for p in (pool, same):
            p.set_rows(np.array([r]), np.full(n, r), np.arange(n), np.ones(n))
        r = int(rng.integers(0, 200))
        gone = (np.full(1, r), pool.cols[pool.start[r] : pool.start[r] + 1].copy())
        if not gone[1].size:
            continue
        for p in (pool, same):
            p.edit(gone, (np.empty(0, np.int64), np.empty(0, np.int64)))
            p.edit((np.empty(0, np.int64), np.empty(0, np.int64)), (gone[0], gone[1]))
    assert pool.start.tolist() == same.start.tolist() and pool.end.tolist() == same.end.tolist()
    room = np.maximum(pool.room_end, pool.end)  # a zero: the row's end
    assert room.tolist() == same.room_end.tolist()
    assert pool.used == same.used
    assert pool.gather(np.arange(200))[1].tolist() == same.gather(np.arange(200))[1].tolist()


@pytest.mark.skipif(not Path("/proc/self/pagemap").exists(), reason="Linux's pagemap")
def test_columns_are_the_gathered_columns_without_reading_the_values(tmp_path: Path) -> None:
    """``columns`` gives what ``gather`` gives but the values, and leaves the pages of a
    mapped pool's values unread (what the calls into a much-used definition gather)."""
    m = sp.random(3000, 500, density=0.05, format="csr", random_state=5)
    np.save(tmp_path / "cols.npy", m.indices.astype(np.int64))
    np.save(tmp_path / "vals.npy", m.data)
    cols, vals = (np.load(tmp_path / f"{n}.npy", mmap_mode="c") for n in ("cols", "vals"))
    pool = RowPool.adopt(m.indptr.astype(np.int64), cols, vals)
    rows = np.random.default_rng(6).permutation(3000)[:2000]
    indptr, got = pool.columns(rows)
    assert resident_pages([vals]) == 0 and resident_pages([cols]) > 0
    want_ptr, want_cols, _ = pool.gather(rows)
    assert indptr.tolist() == want_ptr.tolist() and got.tolist() == want_cols.tolist()
    assert resident_pages([vals]) > 0

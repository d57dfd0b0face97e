"""Row pool: replacing rows one at a time equals a dict-of-rows model, compaction included."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from repomem.index.rowpool import RowPool


def test_replacing_rows_matches_a_model_through_compactions(monkeypatch) -> None:  # noqa: ANN001
    compactions = []
    compact = RowPool.compact
    monkeypatch.setattr(
        RowPool, "compact", lambda pool, room=0: (compactions.append(room), compact(pool, room))
    )
    rng = np.random.default_rng(0)
    m = sp.random(50, 40, density=0.2, format="csr", random_state=1)
    pool = RowPool.from_csr(m)
    model = {
        r: list(zip(m[r].indices.tolist(), m[r].data.tolist(), strict=True)) for r in range(50)
    }
    for _ in range(1500):
        rows = np.unique(rng.integers(0, 60, size=rng.integers(1, 5)))
        owner, cols, vals = [], [], []
        for r in rows.tolist():
            n = int(rng.integers(0, 6))
            entries = [
                (int(c), float(v))
                for c, v in zip(rng.integers(0, 40, n), rng.random(n), strict=True)
            ]
            model[r] = entries
            owner += [r] * n
            cols += [c for c, _ in entries]
            vals += [v for _, v in entries]
        pool.set_rows(rows, np.array(owner, np.int64), np.array(cols, np.int64), np.array(vals))
    assert len(compactions) >= 3  # garbage was reclaimed along the way
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

"""The mapped tables' helpers."""

from __future__ import annotations

import numpy as np

from repomem.index import mapped
from repomem.index.mapped import hash_order


def test_hash_order_is_the_stable_argsort_with_ties_in_runs_or_many() -> None:
    """Tied keys (a hash that two texts share) come in index order, as the stable sort puts
    them, whether a few runs are mended or many ties fall back to the stable sort."""
    rng = np.random.default_rng(7)
    keys = rng.integers(-(2**62), 2**62, 5000)
    keys[[10, 4000, 77, 2500, 3]] = keys[1234]  # one run of six
    keys[[5, 6]] = keys[4999]  # and one of three, two of them neighbours
    for values in (keys, keys[:0], keys[:1], rng.integers(0, 40, 3000)):
        assert np.array_equal(hash_order(values), np.argsort(values, kind="stable"))
    few = rng.integers(0, 2000, 600)  # ties below the mending bound
    assert np.count_nonzero(np.diff(np.sort(few)) == 0) <= mapped._TIES_MENDED
    assert np.array_equal(hash_order(few), np.argsort(few, kind="stable"))

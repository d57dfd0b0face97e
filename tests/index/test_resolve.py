"""Resolution's rows of what each file depended on."""

from __future__ import annotations

import numpy as np

from repomem.index.resolve import DependencyRows


def test_the_tried_rows_are_sorted_by_name_then_file_as_lexsort_sorts_them() -> None:
    """The tried keys' rows (name, file) come out as ``np.lexsort`` sorts them: by name,
    then file, a name tried by several files and a file trying several names alike; the
    packed sort that makes them must not mix the columns' bits."""
    paths = [f"f{i}.c" for i in range(300)]
    rows = DependencyRows(paths)
    rng = np.random.default_rng(3)
    words = [f"k{i}" for i in range(500)]
    for p in paths:
        tried = {words[j] for j in rng.integers(0, 500, 40)}
        rows.add(p, {}, tried)
    rows.add(paths[7], {}, {"k1"})  # a file's second batch: a repeated row
    t = np.concatenate(rows._tries)
    saved = rows.arrays()
    assert np.array_equal(saved["dep_tries"], t[np.lexsort((t[:, 1], t[:, 0]))])
    assert saved["dep_tries"].dtype == np.int32
    assert np.array_equal(saved["dep_tries_key"], saved["dep_tries"][:, 0])

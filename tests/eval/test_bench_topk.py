"""The plain BM25 top-k benchmark (``eval/bench_topk.py``) and its BM25-only index
(``eval/bm25_only.py``): the BM25-only fragments are the full build's, ids and scores, and
the benchmark's pruned top k equals full scoring on it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from repos import make_repo

from repomem.config import IndexConfig
from repomem.core import Exclusion
from repomem.index.bm25 import tokenize
from repomem.index.repo import RepoIndex

EVAL = Path(__file__).resolve().parents[2] / "eval"
sys.path.insert(0, str(EVAL))
from bm25_only import Bm25Only, build  # noqa: E402

# a window repeated in two files: one fragment with two locations
SHARED = "".join(f"def twin_{i}(x):\n    return x * {i}\n" for i in range(15))


def test_bm25_only_is_the_builds_bm25_part(tmp_path: Path) -> None:
    """Same fragment ids and scores as the full index's BM25, and the same fragments visible
    around a cursor (a fragment whose other location is elsewhere stays visible)."""
    root = make_repo(tmp_path / "repo", {"pkg/a.py": SHARED, "pkg/b.py": SHARED})
    config = IndexConfig(index_dir=str(tmp_path / "index"))
    RepoIndex.build(root, config)
    full = RepoIndex.load(root, config)
    assert build(root, config, tmp_path / "bm25") == full.fragment_count
    only = Bm25Only.load(root, config, tmp_path / "bm25")
    query = "def twin_3(x): return x * value long helper"
    np.testing.assert_array_equal(
        only.bm25.scores(tokenize(query)), full.tables.bm25.scores(tokenize(query))
    )
    for path in ("pkg/a.py", "pkg/long.py"):
        ex = Exclusion.around(path, 12, 10)
        np.testing.assert_array_equal(only.visible(ex), full.visible(ex))
    assert only.file_lines("pkg/a.py") == list(full.file_lines("pkg/a.py"))


def test_bench_topk_bm25_only_reports_identical_top_k(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"pkg/a.py": SHARED, "pkg/b.py": SHARED})
    out = tmp_path / "out.json"
    cmd = [sys.executable, str(EVAL / "bench_topk.py"), str(root), "--work", str(tmp_path)]
    cmd += ["--bm25-only", "--queries", "12", "--pruned-from", "0", "--json", str(out)]
    subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=600)
    got = json.loads(out.read_text())
    assert got["identical_top_k_share"] == 1.0
    assert got["fragments"] > 0 and (tmp_path / "bm25").is_dir()
    assert len(got["per_query"]["pruned_cpu_ms"]) == 12

"""Plain BM25 retrieval: pruned top k (``BM25Index.top_k``) against scoring every fragment.

Loads an index (building it first if the work folder holds none), takes ``--queries`` query
windows as a completion makes them (the lines before a random cursor, the cursor's lines
excluded) and ranks each both ways, alternating which goes first: the full way scores every
fragment and ranks the visible ones (``bounded_top_k`` at alpha 0, what plain retrieval did
before), the pruned way asks the index for its top k. Reports p50 / p95 of each, the share of
queries whose top k is identical (ids, order and floats) and p50 / p95 of ``retrieve`` itself::

    python eval/bench_topk.py ROOT --work DIR [--queries 300] [--k 10] [--pruned-from N]
        [--bm25-only] [--json OUT]

``--bm25-only``: the index is only the fragments' BM25 part (``bm25_only``, in WORK/bm25), built
without parsing, for a repository as large as the whole Linux kernel; the full way is then the
full scoring ranked by ``maxscore.select``, and ``retrieve`` is not measured.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

import numpy as np
from bm25_only import Bm25Only, build

from repomem.config import IndexConfig
from repomem.core import Exclusion
from repomem.index import maxscore
from repomem.index.bm25 import tokenize
from repomem.index.repo import RepoIndex
from repomem.index.scorer import bounded_top_k


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def full_top_k(idx: RepoIndex, query: str, k: int, ex: Exclusion) -> tuple[np.ndarray, ...]:
    t = idx.tables  # the benchmark measures the BM25 table itself
    n = len(t.frag_text)
    scores = t.bm25.scores(tokenize(query))
    s_ind = np.zeros(n)
    s_ind[: min(n, scores.size)] = scores[:n]
    inverse = t.inverse_relations
    ids, _, s_rel = bounded_top_k(
        t.rel_idx,
        t.rel_val,
        (inverse.start, inverse.end, inverse.cols),
        s_ind,
        idx.visible(ex),
        0.0,
        k,
    )
    return ids, s_rel


def pruned_top_k(idx: RepoIndex, query: str, k: int, ex: Exclusion) -> tuple[np.ndarray, ...]:
    return idx.tables.bm25.top_k(tokenize(query), k, idx.visible(ex))


def full_bm25_only(idx: Bm25Only, query: str, k: int, ex: Exclusion) -> tuple[np.ndarray, ...]:
    visible = idx.visible(ex)
    ids, scores = maxscore.select(idx.bm25.scores(tokenize(query))[: visible.size], visible, k)
    best = np.lexsort((ids, -scores))
    return ids[best], scores[best]


def pruned_bm25_only(idx: Bm25Only, query: str, k: int, ex: Exclusion) -> tuple[np.ndarray, ...]:
    return idx.bm25.top_k(tokenize(query), k, hidden=idx.hidden(ex))


def load_bm25_only(root: Path, config: IndexConfig, work: Path, out: dict) -> Bm25Only:
    if not (work / "bm25").exists():
        t = time.perf_counter()
        build(root, config, work / "bm25")
        out["index_s"] = time.perf_counter() - t
        print(f"built in {out['index_s']:.0f} s", file=sys.stderr)
    return Bm25Only.load(root, config, work / "bm25")


def load_index(root: Path, config: IndexConfig, work: Path, out: dict) -> RepoIndex:
    if not (work / "index").exists():
        t = time.perf_counter()
        RepoIndex.build(root, config)
        out["index_s"] = time.perf_counter() - t
        print(f"built in {out['index_s']:.0f} s", file=sys.stderr)
    return RepoIndex.load(root, config)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("root", type=Path)
    ap.add_argument("--work", type=Path, required=True, help="the index lives in WORK/index")
    ap.add_argument("--ignore", action="append", default=["site-packages/", "__pycache__/"])
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path)
    ap.add_argument(
        "--pruned-from",
        type=int,
        default=maxscore.PRUNED_FROM,
        help="prune from this many fragments (0: at any size, to see how pruning scales)",
    )
    ap.add_argument("--bm25-only", action="store_true", help="only the BM25 part (bm25_only)")
    args = ap.parse_args()
    maxscore.PRUNED_FROM = args.pruned_from
    config = IndexConfig(index_dir=str(args.work / "index"), ignore_patterns=tuple(args.ignore))
    out: dict = {"root": str(args.root)}
    idx: RepoIndex | Bm25Only
    if args.bm25_only:
        idx = load_bm25_only(args.root, config, args.work, out)
        paths = sorted(idx.paths)
        ways = {"full": full_bm25_only, "pruned": pruned_bm25_only}
    else:
        idx = load_index(args.root, config, args.work, out)
        paths = sorted(p for p, _, _ in idx.indexed_files())
        ways = {"full": full_top_k, "pruned": pruned_top_k}
    out["fragments"] = idx.fragment_count
    rng = random.Random(args.seed)
    window = idx.config.fragment_lines
    at: list[tuple[str, int]] = []
    while len(at) < args.queries:
        path = rng.choice(paths)
        n = len(idx.file_lines(path))
        if n > window + 5:
            at.append((path, rng.randrange(window, n)))
    ms: dict[str, list[float]] = {"full": [], "pruned": []}
    cpu_ms: dict[str, list[float]] = {"full": [], "pruned": []}  # this thread's, on a busy machine
    if not args.bm25_only:
        ms["retrieve"] = []
    first = "\n".join(idx.file_lines(at[0][0])[at[0][1] - window : at[0][1]])
    ways["pruned"](idx, first, args.k, Exclusion.around(*at[0], window))  # maxima taken
    same = 0
    terms = []
    for i, (path, line) in enumerate(at):
        query = "\n".join(idx.file_lines(path)[line - window : line])
        ex = Exclusion.around(path, line, window)
        terms.append(len(set(tokenize(query))))
        got = {}
        for name in sorted(ways, reverse=bool(i % 2)):
            t, cpu = time.perf_counter(), time.thread_time()
            got[name] = ways[name](idx, query, args.k, ex)
            ms[name].append((time.perf_counter() - t) * 1000)
            cpu_ms[name].append((time.thread_time() - cpu) * 1000)
        if isinstance(idx, RepoIndex):
            t = time.perf_counter()
            idx.retrieve(query, k=args.k, alpha=0.0, exclusion=ex)
            ms["retrieve"].append((time.perf_counter() - t) * 1000)
        a, b = got["full"], got["pruned"]
        same += a[0].tolist() == b[0].tolist() and a[1].tolist() == b[1].tolist()
    out["distinct_query_terms_p50"] = pct(terms, 50)
    for name, vals in ms.items():
        out[f"{name}_ms"] = {"p50": pct(vals, 50), "p95": pct(vals, 95)}
    for name, vals in cpu_ms.items():
        out[f"{name}_cpu_ms"] = {"p50": pct(vals, 50), "p95": pct(vals, 95)}
    out["pruned_within_15ms_share"] = float(np.mean(np.asarray(ms["pruned"]) <= 15.0))
    out["pruned_cpu_within_15ms_share"] = float(np.mean(np.asarray(cpu_ms["pruned"]) <= 15.0))
    out["load_average"] = os.getloadavg()
    out["identical_top_k_share"] = same / len(at)
    out["per_query"] = {
        "terms": terms,
        **{f"{n}_ms": v for n, v in ms.items()},
        **{f"{n}_cpu_ms": v for n, v in cpu_ms.items()},
    }
    print(json.dumps({k: v for k, v in out.items() if k != "per_query"}, indent=2))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0 if same == len(at) else 1


if __name__ == "__main__":
    raise SystemExit(main())

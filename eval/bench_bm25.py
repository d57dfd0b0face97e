"""Benchmark repomem's BM25Index on 20-line windows of real Python source.

The completion path scores every fragment of a repository per request and re-indexes a file on
each edit, so what matters is full-score-vector query latency and single-document update
latency at repository scale. bm25s (static, if installed) and rank-bm25 (the exact reference,
slow, so only a few queries) are measured in the same run for comparison, and rank-bm25's
scores double as a correctness check.
"""

from __future__ import annotations

import argparse
import json
import sysconfig
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from repomem.index.bm25 import BM25Index, tokenize

WINDOW = 20
STRIDE = 10


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--root",
        type=Path,
        action="append",
        help="directory of *.py files to index (repeatable; default: the Python "
        "standard library without site-packages)",
    )
    parser.add_argument(
        "--docs",
        type=int,
        default=100_000,
        help="maximum number of 20-line windows (stride 10) to index",
    )
    parser.add_argument(
        "--queries", type=int, default=200, help="number of random 20-line query windows"
    )
    parser.add_argument(
        "--rank-bm25-queries",
        type=int,
        default=10,
        help="queries also run through rank-bm25 (slow); 0 skips rank-bm25",
    )
    parser.add_argument(
        "--edits", type=int, default=300, help="single-document remove+add operations to time"
    )
    parser.add_argument("--no-bm25s", action="store_true", help="skip bm25s even if installed")
    parser.add_argument("--seed", type=int, default=0, help="seed for query and edit sampling")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    for name in ("docs", "queries"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    for name in ("rank_bm25_queries", "edits"):
        if getattr(args, name) < 0:
            parser.error(f"--{name.replace('_', '-')} must not be negative")
    return args


def source_files(roots: Sequence[Path]) -> list[Path]:
    files: list[Path] = []
    for root in roots:
        if not root.is_dir():
            raise SystemExit(f"error: --root {root} is not a directory")
        files.extend(
            p
            for p in sorted(root.rglob("*.py"))
            if "site-packages" not in p.relative_to(root).parts and p.is_file()
        )
    return files


def read_lines(files: Sequence[Path], max_docs: int) -> list[list[str]]:
    """Lines of the files, in order, until they hold ``max_docs`` windows."""
    texts: list[list[str]] = []
    windows = 0
    for path in files:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        if not lines:
            continue
        texts.append(lines)
        windows += len(range(0, max(len(lines) - WINDOW + STRIDE, 1), STRIDE))
        if windows >= max_docs:
            break
    return texts


def corpus_windows(texts: Sequence[list[str]], max_docs: int) -> list[list[str]]:
    docs: list[list[str]] = []
    for lines in texts:
        for start in range(0, max(len(lines) - WINDOW + STRIDE, 1), STRIDE):
            docs.append(tokenize("\n".join(lines[start : start + WINDOW])))
            if len(docs) == max_docs:
                return docs
    return docs


def query_windows(
    texts: Sequence[list[str]], count: int, rng: np.random.Generator
) -> list[list[str]]:
    """Windows at uniformly random line positions (not aligned to the corpus stride)."""
    starts_per_file = np.array([max(len(lines) - WINDOW + 1, 0) for lines in texts])
    if starts_per_file.sum() == 0:
        raise SystemExit(f"error: no source file has {WINDOW} lines to take queries from")
    bounds = np.cumsum(starts_per_file)
    queries: list[list[str]] = []
    while len(queries) < count:
        pick = int(rng.integers(bounds[-1]))
        file_no = int(np.searchsorted(bounds, pick, side="right"))
        start = pick - (int(bounds[file_no - 1]) if file_no else 0)
        tokens = tokenize("\n".join(texts[file_no][start : start + WINDOW]))
        if tokens:
            queries.append(tokens)
    return queries


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


class Latencies:
    """Wall-clock and this thread's CPU time per call: on a shared machine the wall-clock tail
    is mostly waiting for a core, the CPU time is what the code itself costs."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def time(self, fn: Callable[[], Any]) -> Any:
        cpu_start, start = time.thread_time(), time.perf_counter()
        result = fn()
        self.wall.append(time.perf_counter() - start)
        self.cpu.append(time.thread_time() - cpu_start)
        return result

    def summary(self) -> dict[str, float]:
        wall, cpu = np.asarray(self.wall) * 1e3, np.asarray(self.cpu) * 1e3
        return {
            "p50_ms": float(np.percentile(wall, 50)),
            "p95_ms": float(np.percentile(wall, 95)),
            "max_ms": float(wall.max()),
            "cpu_p50_ms": float(np.percentile(cpu, 50)),
            "cpu_p95_ms": float(np.percentile(cpu, 95)),
            "n": len(wall),
        }


def bench_index(
    docs: list[list[str]], queries: list[list[str]], edits: int, rng: np.random.Generator
) -> tuple[dict[str, Any], BM25Index]:
    def build() -> BM25Index:
        index = BM25Index()
        for doc_id, tokens in enumerate(docs):
            index.add(doc_id, tokens)
        index.compact()
        return index

    def edit(doc_id: int) -> None:
        index.remove(doc_id)
        index.add(doc_id, docs[doc_id])

    build_s, index = timed(build)
    # The first calls load the compiled kernels; timed apart so the percentiles show steady state.
    first_query_s, _ = timed(lambda: index.scores(queries[0]))
    query_times = Latencies()
    for q in queries:
        query_times.time(lambda q=q: index.scores(q))
    first_edit_s, _ = timed(lambda: (edit(0), index.scores(queries[0])))
    edit_times, after_edit_times = Latencies(), Latencies()
    for _ in range(edits):
        doc_id = int(rng.integers(len(docs)))
        edit_times.time(lambda doc_id=doc_id: edit(doc_id))
        query = queries[int(rng.integers(len(queries)))]
        after_edit_times.time(lambda q=query: index.scores(q))
    compact_s, _ = timed(index.compact)
    state_bytes = sum(a.nbytes for a in index.state().values())
    result = {
        "build_s": build_s,
        "first_query_ms": first_query_s * 1e3,
        "first_edit_and_query_ms": first_edit_s * 1e3,
        "query": query_times.summary(),
        "compact_s": compact_s,
        "state_mib": state_bytes / 2**20,
    }
    if edits:
        result["edit"] = edit_times.summary()
        result["query_after_edit"] = after_edit_times.summary()
    return result, index


def bench_bm25s(docs: list[list[str]], queries: list[list[str]]) -> dict[str, Any] | None:
    try:
        import bm25s
    except ImportError:
        return None

    def build() -> Any:
        retriever = bm25s.BM25(k1=1.5, b=0.75, method="robertson")
        retriever.index(docs, show_progress=False)
        return retriever

    build_s, retriever = timed(build)
    query_times = Latencies()
    for q in queries:
        query_times.time(lambda q=q: retriever.get_scores(q))
    return {"build_s": build_s, "query": query_times.summary()}


def bench_rank_bm25(
    docs: list[list[str]], queries: list[list[str]], index: BM25Index
) -> dict[str, Any] | None:
    try:
        from rank_bm25 import BM25Okapi
    except ImportError:
        return None
    build_s, reference = timed(lambda: BM25Okapi(docs))
    query_times, max_rel_diff = Latencies(), 0.0
    for q in queries:
        expected = query_times.time(lambda q=q: reference.get_scores(q))
        got = index.scores(q)
        max_rel_diff = max(
            max_rel_diff,
            float(np.max(np.abs(got - expected) / np.maximum(np.abs(expected), 1e-300))),
        )
    return {
        "build_s": build_s,
        "query": query_times.summary(),
        "max_rel_diff_vs_index": max_rel_diff,
    }


def print_table(report: dict[str, Any]) -> None:
    print(
        f"corpus: {report['docs']} windows from {report['files']} files, "
        f"{report['queries']} queries"
    )
    print(
        f"{'engine':<22}{'build s':>9}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}"
        f"{'cpu p50':>9}{'cpu p95':>9}{'n':>5}"
    )
    rows = [("BM25Index", report["bm25index"]["build_s"], report["bm25index"]["query"])]
    if "edit" in report["bm25index"]:
        rows.append(("  remove+add 1 doc", None, report["bm25index"]["edit"]))
        rows.append(("  query after edit", None, report["bm25index"]["query_after_edit"]))
    for name in ("bm25s", "rank_bm25"):
        if report.get(name):
            rows.append((name, report[name]["build_s"], report[name]["query"]))
    for name, build_s, lat in rows:
        build = f"{build_s:>9.2f}" if build_s is not None else f"{'':>9}"
        print(
            f"{name:<22}{build}{lat['p50_ms']:>9.2f}{lat['p95_ms']:>9.2f}{lat['max_ms']:>9.2f}"
            f"{lat['cpu_p50_ms']:>9.2f}{lat['cpu_p95_ms']:>9.2f}{lat['n']:>5}"
        )
    idx = report["bm25index"]
    print(
        f"BM25Index: first query {idx['first_query_ms']:.1f} ms and first edit+query "
        f"{idx['first_edit_and_query_ms']:.1f} ms (kernel loading), compact "
        f"{idx['compact_s'] * 1e3:.0f} ms, state {idx['state_mib']:.1f} MiB"
    )
    if report.get("rank_bm25"):
        print(
            f"max relative difference to rank-bm25: "
            f"{report['rank_bm25']['max_rel_diff_vs_index']:.2e}"
        )


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    roots = args.root or [Path(sysconfig.get_paths()["stdlib"])]
    rng = np.random.default_rng(args.seed)
    texts = read_lines(source_files(roots), args.docs)
    docs = corpus_windows(texts, args.docs)
    if not docs:
        raise SystemExit("error: no Python source found under " + ", ".join(map(str, roots)))
    queries = query_windows(texts, args.queries, rng)
    index_result, index = bench_index(docs, queries, args.edits, rng)
    report: dict[str, Any] = {
        "roots": [str(r) for r in roots],
        "docs": len(docs),
        "files": len(texts),
        "queries": len(queries),
        "bm25index": index_result,
        "bm25s": None if args.no_bm25s else bench_bm25s(docs, queries),
        "rank_bm25": (
            bench_rank_bm25(docs, queries[: args.rank_bm25_queries], index)
            if args.rank_bm25_queries
            else None
        ),
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_table(report)


if __name__ == "__main__":
    main()

"""Index benchmark: full index, one-file updates and retrieval latency on a real code base.

Default corpus: the Python standard library's source (``sysconfig``'s stdlib directory,
site-packages excluded). Everything is measured in one run, baselines included: the bare
tree-sitter parse of the same files, and rank-bm25 over the same fragments.

    python eval/bench_index.py [--root DIR] [--queries 200] [--updates 100] [--json OUT]

``--replay DIR`` times the definitions channel alone on a saved index (built into ``DIR`` by
the first run, loaded by the next): the same cursors in the same order, after the same
retrievals, in wall-clock and thread CPU time (what a loaded machine leaves comparable), one
pass or more (``--passes``: the second finds every file read); ``--dump OUT`` writes each
cursor's cards, reasons, strengths, distances and counts as JSON, to compare two versions of
the code.

    python eval/bench_index.py --replay DIR [--passes 2] [--dump OUT]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import sys
import sysconfig
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from repomem.config import IndexConfig
from repomem.context.definitions import find_definitions
from repomem.context.usages import find_usages
from repomem.core import Exclusion
from repomem.index.bm25 import tokenize
from repomem.index.files import scan_files
from repomem.index.languages import parser
from repomem.index.parsing import split_lines
from repomem.index.repo import RepoIndex

#: the standard library's installed packages and caches are not indexed
IGNORED = ("site-packages/", "__pycache__/")


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def bare_parse_seconds(root: Path, config: IndexConfig) -> tuple[float, int, int]:
    files = [f for f in scan_files(root, config).files if f.language == "python"]
    sources = [f.text.encode("utf-8") for f in files]
    p = parser("python")
    t = time.perf_counter()
    for src in sources:
        p.parse(src)
    lines = sum(f.text.count("\n") for f in files)
    return time.perf_counter() - t, len(files), lines


def warm_up(config: IndexConfig) -> None:
    """Compile the relation kernels once (cached on disk afterwards) outside the timings."""
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "a.py").write_text("def f(x):\n    return g(x)\n\n\ndef g(y):\n    return y\n")
        idx, _ = RepoIndex.build(Path(d), replace(config, index_dir=str(Path(d) / "idx")))
        idx.update_file("a.py", "def f(x):\n    return x\n")


def cursors(idx: RepoIndex, paths: list[str], n: int, rng: random.Random) -> list[tuple[str, int]]:
    """``n`` cursors (path, 0-based line) in files of more than 25 lines, from line 20 on."""
    positions: list[tuple[str, int]] = []
    while len(positions) < n:
        path = rng.choice(paths)
        lines = len(split_lines(idx.file_text(path) or ""))
        if lines > 25:
            positions.append((path, rng.randrange(20, lines)))
    return positions


def window_before(idx: RepoIndex, path: str, line: int) -> tuple[str, Exclusion]:
    """The retrieval query of a cursor: the window of lines above it, and its exclusion."""
    lines = split_lines(idx.file_text(path) or "")
    window = idx.config.fragment_lines
    return "\n".join(lines[line - window : line]), Exclusion.around(path, line, window)


def retrievals(idx: RepoIndex, positions: list[tuple[str, int]]) -> dict[str, list[float]]:
    """BM25 and BM25+FragRel retrieval at each cursor: their latencies (ms)."""
    latencies: dict[str, list[float]] = {"bm25": [], "bm25+fragrel": []}
    for path, line in positions:
        q, ex = window_before(idx, path, line)
        for name, alpha in (("bm25", 0.0), ("bm25+fragrel", 0.5)):
            t = time.perf_counter()
            idx.retrieve(q, k=10, alpha=alpha, exclusion=ex)
            latencies[name].append((time.perf_counter() - t) * 1000)
    return latencies


def replay(args: argparse.Namespace, config: IndexConfig) -> int:
    """``--replay``: the definitions channel at the bench's cursors on a saved index, in wall
    and thread CPU time, pass by pass (see the module doc)."""
    if not (Path(config.index_dir) / "CURRENT").exists():
        RepoIndex.build(args.root, config)
    idx = RepoIndex.load(args.root, config)
    paths = sorted(path for path, _, _ in idx.indexed_files())
    positions = cursors(idx, paths, args.queries, random.Random(args.seed))
    retrievals(idx, positions)  # as the bench does first: the same files' lines kept
    results: dict[str, object] = {"cursors": len(positions)}
    dump = []
    for n in range(args.passes):
        wall, cpu = [], []
        for path, line in positions:
            left = "\n".join(split_lines(idx.file_text(path) or "")[:line]) + "\n"
            t, c = time.perf_counter(), time.thread_time()
            hits = find_definitions(idx, path, left, window=idx.config.fragment_lines)
            cpu.append((time.thread_time() - c) * 1000)
            wall.append((time.perf_counter() - t) * 1000)
            if n == 0 and args.dump:
                cards = [
                    [h.card.path, h.card.line, h.card.text, h.card.brief, h.name, h.how]
                    + [repr(h.strength), h.distance, h.count]
                    for h in hits
                ]
                dump.append([path, line, cards])
            q, ex = window_before(idx, path, line)
            find_usages(idx, q, path, hits, k=2, exclusion=ex)
        results[f"pass{n + 1}"] = {
            "wall_ms": {"p50": pct(wall, 50), "p95": pct(wall, 95)},
            "cpu_ms": {"p50": pct(cpu, 50), "p95": pct(cpu, 95), "sum": sum(cpu)},
        }
    if args.dump:
        args.dump.write_text(json.dumps(dump))
    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--root", type=Path, default=Path(sysconfig.get_paths()["stdlib"]))
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--updates", type=int, default=100)  # a p95 of 30 is the 2nd worst one
    ap.add_argument("--rank-bm25-queries", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--replay", type=Path, help="the definitions channel alone, on this index")
    ap.add_argument("--passes", type=int, default=1, help="--replay: passes over the cursors")
    ap.add_argument("--dump", type=Path, help="--replay: each cursor's cards, as JSON")
    args = ap.parse_args()
    if args.replay is not None:
        return replay(args, IndexConfig(index_dir=str(args.replay), ignore_patterns=IGNORED))

    workdir = Path(tempfile.mkdtemp(prefix="repomem-bench-"))
    config = IndexConfig(index_dir=str(workdir / "index"), ignore_patterns=IGNORED)
    rng = random.Random(args.seed)
    results: dict[str, object] = {"root": str(args.root)}
    try:
        warm_up(config)
        bare, n_files, n_lines = bare_parse_seconds(args.root, config)
        results.update(files=n_files, lines=n_lines, bare_parse_s=bare)
        print(f"corpus: {args.root} ({n_files} files, {n_lines:,} lines)", file=sys.stderr)

        t = time.perf_counter()
        idx, summary = RepoIndex.build(args.root, config)
        full = time.perf_counter() - t
        results.update(
            index_s=full,
            index_over_bare_parse=full / bare,
            index_stages_s=summary.seconds,
            fragments=summary.fragments,
            graph_nodes=sum(summary.nodes.values()),
            graph_edges=summary.edges,
            relations=summary.relations,
            truncated_fragments=summary.truncated_fragments,
            index_mb=summary.index_bytes / 1e6,
        )
        print(
            f"index: {full:.1f} s = {full / bare:.2f}x bare parse ({bare:.1f} s)", file=sys.stderr
        )

        del idx  # measure one index in memory, not the built one and the loaded one at once
        t = time.perf_counter()
        idx = RepoIndex.load(args.root, config)
        results["load_s"] = time.perf_counter() - t

        paths = sorted(path for path, _, _ in idx.indexed_files())
        positions = cursors(idx, paths, args.queries, rng)
        latencies = retrievals(idx, positions)
        # the definitions channel: the cards of the names the cursor's code uses
        # and the usages: windows calling the best of them
        latencies["definitions"], latencies["usages"] = [], []
        found = []
        for path, line in positions:
            left = "\n".join(split_lines(idx.file_text(path) or "")[:line]) + "\n"
            t = time.perf_counter()
            hits = find_definitions(idx, path, left, window=idx.config.fragment_lines)
            latencies["definitions"].append((time.perf_counter() - t) * 1000)
            found.append(len(hits))
            q, ex = window_before(idx, path, line)
            t = time.perf_counter()
            find_usages(idx, q, path, hits, k=2, exclusion=ex)
            latencies["usages"].append((time.perf_counter() - t) * 1000)
        results["definitions_per_query"] = {"p50": pct(found, 50), "max": max(found)}
        for name, vals in latencies.items():
            results[f"retrieve_{name}_ms"] = {"p50": pct(vals, 50), "p95": pct(vals, 95)}

        update_ms = []
        for path in rng.sample(paths, min(args.updates, len(paths))):
            text = idx.file_text(path) or ""
            edited = text + "\n\ndef _bench_added(value):\n    return value\n"
            t = time.perf_counter()
            idx.update_file(path, edited)
            update_ms.append((time.perf_counter() - t) * 1000)
            idx.update_file(path, text)
        results["update_ms"] = {"p50": pct(update_ms, 50), "p95": pct(update_ms, 95)}
        # repomem's own peak, before the baseline below adds rank-bm25's structures (the
        # build resets the high-water mark between its stages: its own peak is theirs)
        results["peak_rss_mb"] = max(
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, *summary.peak_mb.values()
        )

        from rank_bm25 import BM25Okapi

        live = np.flatnonzero(idx.visible(None))
        t = time.perf_counter()
        ref = BM25Okapi([tokenize(idx.fragment_text(i)) for i in live])
        ref_build = time.perf_counter() - t
        ref_ms = []
        for path, line in positions[: args.rank_bm25_queries]:
            q, _ = window_before(idx, path, line)
            t = time.perf_counter()
            ref.get_scores(tokenize(q))
            ref_ms.append((time.perf_counter() - t) * 1000)
        results["rank_bm25"] = {"build_s": ref_build, "query_ms_p50": pct(ref_ms, 50)}

        results["peak_rss_with_baseline_mb"] = (
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    print(
        "\n".join(
            [
                "",
                "| measure | value |",
                "|---|---|",
                f"| files / lines | {results['files']} / {results['lines']:,} |",
                f"| bare parse | {bare:.2f} s |",
                f"| full index | {results['index_s']:.2f} s "
                f"({results['index_over_bare_parse']:.2f}x bare parse) |",
                f"| index size | {results['index_mb']:.1f} MB |",
                f"| peak RSS (index, retrieval, updates) | {results['peak_rss_mb']:.0f} MB |",
                f"| peak RSS with the rank-bm25 baseline | "
                f"{results['peak_rss_with_baseline_mb']:.0f} MB |",
                "| retrieve BM25 p50 / p95 | {p50:.2f} / {p95:.2f} ms |".format(
                    **results["retrieve_bm25_ms"]
                ),
                "| retrieve BM25+FragRel p50 / p95 | {p50:.2f} / {p95:.2f} ms |".format(
                    **results["retrieve_bm25+fragrel_ms"]
                ),
                "| definitions channel p50 / p95 | {p50:.2f} / {p95:.2f} ms |".format(
                    **results["retrieve_definitions_ms"]
                ),
                "| usages (2 windows) p50 / p95 | {p50:.2f} / {p95:.2f} ms |".format(
                    **results["retrieve_usages_ms"]
                ),
                f"| rank-bm25 query p50 | {results['rank_bm25']['query_ms_p50']:.0f} ms |",
                "| one-file update p50 / p95 | {p50:.1f} / {p95:.1f} ms |".format(
                    **results["update_ms"]
                ),
            ]
        ),
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

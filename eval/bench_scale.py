"""Scale benchmark: how indexing, loading, retrieval and updates grow with the repository.

Indexes a tree the user names at two or more sizes, each a set of its top-level folders
(``.`` is the whole tree), and reports per size: index time and peak RSS, load time, RSS
after the load and after the first ``--queries`` retrievals, retrieval p50 / p95 (BM25, the
default, for those first queries after the load and for as many later ones; FragRel at the
paper's alpha 0.5 for the later ones) and one-file update p50 / p95. Every size
is indexed, and then loaded and queried, in a fresh process of its own, so that each peak is
that step's alone. The documented example is the Linux kernel source from Debian's
``linux-source-6.1`` package (``tar xf /usr/src/linux-source-6.1.tar.xz``)::

    python eval/bench_scale.py linux-source-6.1 --size kernel,mm --size kernel,mm,fs,include \\
        --size . [--queries 100] [--updates 30] [--json OUT] [--plot OUT.png]

A size is indexed from a copy made of hard links (a plain copy where links cannot be made),
because the index never follows a directory symlink.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from repomem.config import IndexConfig
from repomem.core import Exclusion
from repomem.index.repo import RepoIndex

# a one-line function appended to a file, in the file's language
ADDED = {
    "c": "static int bench_added(int value) { return value; }",
    "cpp": "static int bench_added(int value) { return value; }",
    "python": "def bench_added(value):\n    return value",
    "javascript": "function benchAdded(value) { return value; }",
    "typescript": "function benchAdded(value: number) { return value; }",
    "java": "class BenchAdded { int f(int value) { return value; } }",
    "go": "func benchAdded(value int) int { return value }",
    "rust": "fn bench_added(value: i32) -> i32 { value }",
}


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


def rss_mb() -> float:
    """Resident set now (anonymous and file-backed pages, as ``ps`` shows it)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def peak_mb(who: int = resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


def config_for(work: Path, ignore: list[str]) -> IndexConfig:
    return IndexConfig(index_dir=str(work / "index"), ignore_patterns=tuple(ignore))


def link_tree(tree: Path, parts: list[str], dest: Path) -> None:
    """``dest`` holding ``parts`` of ``tree`` (hard links where possible)."""
    for part in parts:
        src = tree / part
        if not src.is_dir():
            raise SystemExit(f"bench_scale: {src} is not a folder of {tree}")
        target = dest if part == "." else dest / part
        shutil.copytree(src, target, symlinks=True, copy_function=_link_or_copy, dirs_exist_ok=True)


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def child_build(root: Path, work: Path, ignore: list[str]) -> dict:
    t = time.perf_counter()
    idx, summary = RepoIndex.build(root, config_for(work, ignore))
    return {
        "index_s": time.perf_counter() - t,
        "index_peak_rss_mb": peak_mb(),
        "index_workers_peak_rss_mb": peak_mb(resource.RUSAGE_CHILDREN),
        "files": len(idx.files),
        "lines": sum(idx.files[p].text.count("\n") for p in idx.files),
        "fragments": summary.fragments,
        "index_mb": summary.index_bytes / 1e6,
    }


def child_query(
    root: Path, work: Path, ignore: list[str], queries: int, updates: int, seed: int
) -> dict:
    rng = random.Random(seed)
    out_base = rss_mb()
    t = time.perf_counter()
    idx = RepoIndex.load(root, config_for(work, ignore))
    out: dict = {
        "rss_before_load_mb": out_base,
        "load_s": time.perf_counter() - t,
        "rss_after_load_mb": rss_mb(),
    }
    paths = sorted(idx.files)
    window = idx.config.window
    positions: list[tuple[str, int]] = []
    while len(positions) < 2 * queries:
        path = rng.choice(paths)
        n = len(idx.file_lines(path))
        if n > window + 5:
            positions.append((path, rng.randrange(window, n)))

    def retrieval_ms(at: list[tuple[str, int]], alpha: float) -> list[float]:
        latencies = []
        for path, line in at:
            lines = idx.file_lines(path)
            query = "\n".join(lines[line - window : line])
            ex = Exclusion.around(path, line, window)
            t = time.perf_counter()
            idx.retrieve(query, k=10, alpha=alpha, exclusion=ex)
            latencies.append((time.perf_counter() - t) * 1000)
        return latencies

    # BM25 alone (completion.alpha's default): the first queries after the load read the
    # mapped postings from disk or the page cache, later ones find most of them resident;
    # then FragRel at the paper's alpha over the later positions
    for key, at, alpha in (
        ("retrieve_first_ms", positions[:queries], 0.0),
        ("retrieve_ms", positions[queries:], 0.0),
        ("retrieve_fragrel_ms", positions[queries:], 0.5),
    ):
        latencies = retrieval_ms(at, alpha)
        out[key] = {"p50": pct(latencies, 50), "p95": pct(latencies, 95)}
        out.setdefault("rss_after_retrievals_mb", rss_mb())  # after the first ones
    editable = [p for p in paths if idx.files[p].language in ADDED]
    update_ms = []
    for path in rng.sample(editable, min(updates, len(editable))):
        entry = idx.files[path]
        text = entry.text
        t = time.perf_counter()
        idx.update_file(path, text + "\n" + ADDED[entry.language] + "\n")
        update_ms.append((time.perf_counter() - t) * 1000)
        idx.update_file(path, text)
    # the first update also builds the graph and the call tables a load leaves for later
    out["first_update_ms"] = update_ms[0] if update_ms else float("nan")
    out["update_ms"] = {"p50": pct(update_ms[1:], 50), "p95": pct(update_ms[1:], 95)}
    out["peak_rss_mb"] = peak_mb()
    return out


def run_child(step: str, root: Path, work: Path, args: argparse.Namespace) -> dict:
    cmd = [sys.executable, __file__, "--child", step, str(root), "--work", str(work)]
    cmd += ["--queries", str(args.queries), "--updates", str(args.updates)]
    cmd += ["--seed", str(args.seed)] + [f"--ignore={p}" for p in args.ignore]
    done = subprocess.run(cmd, stdout=subprocess.PIPE, check=True, text=True)
    return json.loads(done.stdout.splitlines()[-1])


def warm_up() -> None:
    """Compile the numba kernels once (cached on disk) outside every timing."""
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "a.c").write_text("int g(int y) { return y; }\nint f(int x) { return g(x); }\n")
        idx, _ = RepoIndex.build(Path(d), IndexConfig(index_dir=str(Path(d) / "idx")))
        idx.update_file("a.c", "int f(int x) { return x; }\n")
        RepoIndex.load(Path(d), IndexConfig(index_dir=str(Path(d) / "idx"))).retrieve("f x")


def table(rows: list[dict]) -> str:
    out = [
        "| size | files / lines | index s | index peak RSS | load s | RSS after load "
        "/ +retrievals | retrieve p50 / p95: first, later, FragRel | update p50 / p95 (first) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['size']} | {r['files']:,} / {r['lines']:,} | {r['index_s']:.1f} "
            f"| {r['index_peak_rss_mb']:,.0f} MB | {r['load_s']:.2f} "
            f"| {r['rss_after_load_mb']:,.0f} / {r['rss_after_retrievals_mb']:,.0f} MB "
            f"| {_ms(r['retrieve_first_ms'])}, {_ms(r['retrieve_ms'])}, "
            f"{_ms(r['retrieve_fragrel_ms'])} ms "
            f"| {r['update_ms']['p50']:.0f} / {r['update_ms']['p95']:.0f} ms "
            f"({r['first_update_ms']:,.0f}) |"
        )
    return "\n".join(out)


def _ms(p: dict) -> str:
    return f"{p['p50']:.1f} / {p['p95']:.1f}"


def plot(rows: list[dict], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lines = [r["lines"] / 1e6 for r in rows]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for ax, keys, unit in (
        (axes[0], ("index_s", "load_s"), "seconds"),
        (axes[1], ("index_peak_rss_mb", "rss_after_retrievals_mb"), "MB"),
        (axes[2], ("retrieve_ms", "update_ms"), "ms (p95)"),
    ):
        for key in keys:
            ys = [r[key]["p95"] if isinstance(r[key], dict) else r[key] for r in rows]
            ax.plot(lines, ys, marker="o", label=key)
        ax.set_xlabel("million lines")
        ax.set_ylabel(unit)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("tree", type=Path, help="the tree to index (e.g. linux-source-6.1)")
    ap.add_argument(
        "--size",
        action="append",
        default=[],
        help="comma-separated top-level folders of the tree, '.' for all of it; repeat it",
    )
    ap.add_argument(
        "--ignore",
        action="append",
        default=[],
        help="an ignore pattern (gitignore syntax), e.g. site-packages/ for a Python stdlib",
    )
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--updates", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--plot", type=Path, help="draw the growth into this PNG (matplotlib)")
    ap.add_argument("--child", choices=("build", "query"), help=argparse.SUPPRESS)
    ap.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.child == "build":
        print(json.dumps(child_build(args.tree, args.work, args.ignore)))
        return 0
    if args.child == "query":
        result = child_query(
            args.tree, args.work, args.ignore, args.queries, args.updates, args.seed
        )
        print(json.dumps(result))
        return 0
    if not args.tree.is_dir():
        ap.error(f"{args.tree} is not a folder")
    sizes = args.size or ["."]
    warm_up()
    rows = []
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="repomem-scale-") as d:
            root, work = Path(d) / "tree", Path(d) / "work"
            root.mkdir()
            link_tree(args.tree, size.split(","), root)
            row: dict = {"size": size}
            row.update(run_child("build", root, work, args))
            row.update(run_child("query", root, work, args))
            print(json.dumps(row), file=sys.stderr)
            rows.append(row)
    print(json.dumps(rows, indent=2))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    if args.plot:
        plot(rows, args.plot)
    print("\n" + table(rows), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Scale benchmark: how indexing, loading, retrieval and updates grow with the repository.

Indexes a tree the user names at two or more sizes, each a set of its top-level folders
(``.`` is the whole tree), and reports per size: index time and peak RSS, load time, RSS
after the load and after the first ``--queries`` retrievals, retrieval p50 / p95 (BM25, the
default, for those first queries after the load and for as many later ones; FragRel at the
paper's alpha 0.5 for the later ones) and one-file update p50 / p95, and each build stage's
time and peak RSS (``--steps build``: the builds alone). Every size
is indexed, and then loaded and queried, in a fresh process of its own, so that each peak is
that step's alone. The documented example is the Linux kernel source from Debian's
``linux-source-6.1`` package (``tar xf /usr/src/linux-source-6.1.tar.xz``)::

    python eval/bench_scale.py linux-source-6.1 --size kernel,mm --size kernel,mm,fs,include \\
        --size . [--queries 100] [--updates 30] [--json OUT] [--plot OUT.png]

A size is indexed from a copy made of hard links (a plain copy where links cannot be made),
because the index never follows a directory symlink.

The ``session`` step (with ``--edits`` > 0) then runs an editor session in one process (load,
warm, ``--retrievals`` retrievals, ``--edits`` edits with a retrieval and a tidy after every
tenth) and the language server over stdio on the saved index (``repomem serve``, which finds it
current and serves it without a build): RSS and its anonymous part when ready and every 100
``didChange`` edits (``--edits`` of them, in ``--edits // 100`` C files, a completion between
each two), the slope per 100 edits after the first 100, the peak (``VmHWM``), completion
latency and the server's own time per index update.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
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


def status_mb(field: str, pid: int | str = "self") -> float:
    """A field of a process's ``/proc/PID/status`` in MB: ``VmRSS``, the resident set
    (anonymous and file-backed pages, as ``ps`` shows it); ``RssAnon``, its anonymous part
    (what the process allocated, not the mapped index's pages, which the kernel drops under
    pressure and reads again from the file); ``VmHWM``, its peak."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/{pid}/status")


def rss_mb() -> float:
    return status_mb("VmRSS")


def anon_mb() -> float:
    return status_mb("RssAnon")


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
        # the build resets the high-water mark between stages (Linux): the peak is the
        # greatest stage's
        "index_peak_rss_mb": max(peak_mb(), *summary.peak_mb.values()),
        "index_workers_peak_rss_mb": peak_mb(resource.RUSAGE_CHILDREN),
        # per stage (scan, parse, bm25, resolve, graph, relations, save): seconds, peak MB,
        # CPU seconds (the workers' and resolution's processes included)
        "index_stages": {
            stage: [seconds, summary.peak_mb.get(stage, float("nan")), summary.cpu_s[stage]]
            for stage, seconds in summary.seconds.items()
            if stage != "total"
        },
        "files": idx.file_count,
        "lines": sum((idx.file_text(p) or "").count("\n") for p, _, _ in idx.indexed_files()),
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
    paths = sorted(p for p, _, _ in idx.indexed_files())
    window = idx.config.fragment_lines
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
    language = {p: lang for p, lang, _ in idx.indexed_files()}
    editable = [p for p in paths if language[p] in ADDED]
    update_ms = []
    for path in rng.sample(editable, min(updates, len(editable))):
        text = idx.file_text(path) or ""
        t = time.perf_counter()
        idx.update_file(path, text + "\n" + ADDED[language[path]] + "\n")
        update_ms.append((time.perf_counter() - t) * 1000)
        idx.update_file(path, text)
    # the first update also builds the graph and the call tables a load leaves for later
    out["first_update_ms"] = update_ms[0] if update_ms else float("nan")
    out["update_ms"] = {"p50": pct(update_ms[1:], 50), "p95": pct(update_ms[1:], 95)}
    out["peak_rss_mb"] = peak_mb()
    return out


def edit_plan(idx: RepoIndex, rng: random.Random, files: int) -> list[tuple[str, int, list[str]]]:
    """``files`` C files (spread over the tree's folders), each with a line before one of its
    top-level definitions where functions are typed in, and names the file defines (what the
    typed code calls)."""
    paths = sorted(p for p, language, _ in idx.indexed_files() if language == "c")
    chosen: list[tuple[str, int, list[str]]] = []
    for path in rng.sample(paths, len(paths)):
        lines = idx.file_lines(path)
        tops = [i for i in range(1, len(lines)) if lines[i][:1].isalpha() and not lines[i - 1]]
        names = sorted({d.name for d in idx.parses()[path].definitions if d.name.isidentifier()})
        if tops and names:
            chosen.append((path, rng.choice(tops), names))
        if len(chosen) == files:
            break
    return chosen


def child_session(
    root: Path, work: Path, ignore: list[str], retrievals: int, edits: int, seed: int
) -> dict:
    """An editor session: load and warm (as the language server does before it serves),
    retrievals as a completion makes them (fragments, definition cards, usages), each
    followed by a pause (the index tidied), then edits typed into a few files, a retrieval
    and a pause after every tenth; RSS after each phase and every 100 edits."""
    from repomem.config import CompletionConfig
    from repomem.context.definitions import find_definitions
    from repomem.context.usages import find_usages
    from repomem.index.trim import limit_arenas

    limit_arenas()  # as the language server does
    rng = random.Random(seed)
    completion = CompletionConfig()
    out: dict = {"rss_before_load_mb": rss_mb()}
    t = time.perf_counter()
    idx = RepoIndex.load(root, config_for(work, ignore))
    out["load_s"] = time.perf_counter() - t
    out["rss_after_load_mb"] = rss_mb()
    t = time.perf_counter()
    idx.warm()  # as the language server does before it serves
    out["warm_s"] = time.perf_counter() - t
    out["rss_after_warm_mb"] = rss_mb()
    paths = sorted(p for p, _, _ in idx.indexed_files())
    window = completion.query_lines
    tidy_ms: list[float] = []

    def tidy() -> None:
        t = time.perf_counter()
        idx.tidy()
        tidy_ms.append((time.perf_counter() - t) * 1000)

    def retrieval(path: str, line: int) -> float:
        lines = idx.file_lines(path)
        line = max(1, min(line, len(lines)))
        query = "\n".join(lines[max(0, line - window) : line])
        ex = Exclusion.around(path, line, window)
        t = time.perf_counter()
        idx.retrieve(query, k=completion.k, alpha=completion.alpha, exclusion=ex)
        left = "\n".join(lines[:line]) + "\n"
        hits = find_definitions(idx, path, left, window=window)
        find_usages(idx, query, path, hits, k=completion.max_usages, exclusion=ex)
        return (time.perf_counter() - t) * 1000

    at = []
    while len(at) < retrievals:
        path = rng.choice(paths)
        n = len(idx.file_lines(path))
        if n > window + 5:
            at.append((path, rng.randrange(window, n)))
    latencies = []
    for p, line in at:  # each completion shown, a pause: the index tidied
        latencies.append(retrieval(p, line))
        tidy()
    out["retrieve_ms"] = {"p50": pct(latencies, 50), "p95": pct(latencies, 95)}
    out["rss_after_retrievals_mb"] = rss_mb()
    out["anon_after_retrievals_mb"] = anon_mb()
    plan = edit_plan(idx, rng, max(1, edits // 50))
    typed: dict[str, int] = {}  # per file, the lines typed in so far
    update_ms: list[float] = []
    rss_by_edits: list[tuple[int, float]] = [(0, rss_mb())]
    anon_by_edits: list[tuple[int, float]] = [(0, anon_mb())]
    for i in range(edits):
        path, line, names = plan[(i // 50) % len(plan)]
        lines = list(idx.file_lines(path))
        k = typed.get(path, 0)
        new = f"static int bench_typed_{k}(int v) {{ return {rng.choice(names)}(v); }}"
        lines[line + k : line + k] = [new]
        typed[path] = k + 1
        t = time.perf_counter()
        idx.update_file(path, "\n".join(lines))
        update_ms.append((time.perf_counter() - t) * 1000)
        if i % 10 == 9:  # a pause: the completion shown, the index tidied as an editor's is
            retrieval(path, line + k + 1)
            tidy()
        if (i + 1) % 100 == 0:
            rss_by_edits.append((i + 1, rss_mb()))
            anon_by_edits.append((i + 1, anon_mb()))
    out["first_edit_ms"] = update_ms[0] if update_ms else float("nan")
    out["edit_ms"] = {"p50": pct(update_ms[1:], 50), "p95": pct(update_ms[1:], 95)}
    out["tidy_ms"] = {"p50": pct(tidy_ms, 50), "p95": pct(tidy_ms, 95)}
    out["rss_by_edits_mb"] = rss_by_edits
    out["slope_mb_per_100_edits"] = slope(rss_by_edits[1:])
    out["anon_by_edits_mb"] = anon_by_edits
    out["anon_slope_mb_per_100_edits"] = slope(anon_by_edits[1:])
    out["peak_rss_mb"] = peak_mb()
    return out


def typing_plan(root: Path, rng: random.Random, files: int) -> list[tuple[str, int, list[str]]]:
    """``edit_plan`` for a process without the index: C files of ``root`` and, from their
    text, a line before a top-level definition and the functions they define."""
    paths = sorted(str(p.relative_to(root)) for p in root.rglob("*.c"))
    chosen: list[tuple[str, int, list[str]]] = []
    for path in rng.sample(paths, len(paths)):
        lines = (root / path).read_text(encoding="utf-8", errors="replace").split("\n")
        tops = [i for i in range(1, len(lines)) if lines[i][:1].isalpha() and not lines[i - 1]]
        names = sorted(
            {m.group(1) for line in lines if (m := _DEFINED.match(line)) and m.group(1) != "if"}
        )
        if tops and names:
            chosen.append((path, rng.choice(tops), names))
        if len(chosen) == files:
            break
    return chosen


_DEFINED = re.compile(r"^[a-z][\w \*]*?\b([a-z_]\w*)\(")


def child_lsp(root: Path, work: Path, ignore: list[str], edits: int, seed: int) -> dict:
    """The language server over stdio on ``root``, starting from the index saved in ``work``
    (current: the server serves it without a build, as on an editor's second start): RSS
    (and its anonymous part) once it is ready, then every 100 ``didChange`` edits typed into
    ``edits // 100`` C files with a completion request between each two; the completions'
    latency and the server's own time per index update (``lastUpdateMs``)."""
    os.environ["REPOMEM_INDEX_INDEX_DIR"] = config_for(work, ignore).index_dir
    return asyncio.run(_lsp_session(root, edits, seed))


async def _lsp_session(root: Path, edits: int, seed: int) -> dict:
    from bench_lsp import completion_params, editor_settings, insert, start_server
    from bench_lsp import status as server_status
    from lsprotocol import types

    rng = random.Random(seed)
    t = time.perf_counter()
    session = await start_server(root, editor_settings(0, 0, True))
    client, pid = session.client, session.pid
    out: dict = {}
    try:
        await asyncio.wait_for(session.ready, 3600)
        await asyncio.wait_for(session.docs, 3600)
        out["ready_s"] = time.perf_counter() - t
        out["rss_ready_mb"] = status_mb("VmRSS", pid)
        out["anon_ready_mb"] = status_mb("RssAnon", pid)
        print(json.dumps(out), file=sys.stderr, flush=True)  # progress: a long run may be cut
        plan = typing_plan(root, rng, max(1, edits // 100))
        versions: dict[str, int] = {}
        rss_by_edits = [(0, out["rss_ready_mb"])]
        anon_by_edits = [(0, out["anon_ready_mb"])]
        completion_ms: list[float] = []
        update_ms: list[float] = []
        updates = (await server_status(client)).indexUpdates
        for i in range(edits // 2):
            path, line, names = plan[(i // 50) % len(plan)]
            uri = (root / path).as_uri()
            if path not in versions:
                text = (root / path).read_text(encoding="utf-8", errors="replace")
                client.text_document_did_open(
                    types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "c", 1, text))
                )
                versions[path] = 1
            row = line + (i // 50 // len(plan)) * 50 + i % 50
            new = f"static int bench_typed_{i}(int v) {{ return {rng.choice(names)}(v); }}"
            cut = new.index("return")
            for piece, col in ((new[:cut], 0), (new[cut:] + "\n", cut)):
                versions[path] += 1
                insert(client, uri, versions[path], row, col, piece)
                if col == 0:
                    t = time.perf_counter()
                    await client.text_document_completion_async(completion_params(uri, row, cut))
                    completion_ms.append((time.perf_counter() - t) * 1000)
            state = await server_status(client)
            if state.indexUpdates > updates:  # the latest of the updates made since
                updates = state.indexUpdates
                update_ms.append(state.lastUpdateMs)
            if (2 * i + 2) % 100 == 0:
                rss_by_edits.append((2 * i + 2, status_mb("VmRSS", pid)))
                anon_by_edits.append((2 * i + 2, status_mb("RssAnon", pid)))
                print(json.dumps({"rss_by_edits_mb": rss_by_edits}), file=sys.stderr, flush=True)
        while (await server_status(client)).pendingUpdates:
            await asyncio.sleep(0.2)
        await asyncio.sleep(2.0)  # the user pauses: the server tidies its index
        rss_by_edits.append((edits, status_mb("VmRSS", pid)))
        anon_by_edits.append((edits, status_mb("RssAnon", pid)))
        out["rss_by_edits_mb"] = rss_by_edits
        out["anon_by_edits_mb"] = anon_by_edits
        out["rss_after_edits_mb"] = rss_by_edits[-1][1]
        out["peak_rss_mb"] = status_mb("VmHWM", pid)
        out["slope_mb_per_100_edits"] = slope([p for p in rss_by_edits if p[0] >= 100])
        out["completion_ms"] = {"p50": pct(completion_ms, 50), "p95": pct(completion_ms, 95)}
        out["update_ms"] = {"p50": pct(update_ms, 50), "p95": pct(update_ms, 95)}
        state = await server_status(client)
        out["updates"], out["tidies"] = state.indexUpdates, state.indexTidies
        await asyncio.wait_for(client.shutdown_async(None), 60)
        client.exit(None)
    finally:
        if client._server is not None and client._server.returncode is None:
            client._server.kill()
    return out


def slope(points: list[tuple[int, float]]) -> float:
    """Least-squares RSS growth per 100 edits (nan with fewer than two points)."""
    if len(points) < 2:
        return float("nan")
    x, y = np.array(points, float).T
    return float(np.polyfit(x, y, 1)[0] * 100)


def run_child(step: str, root: Path, work: Path, args: argparse.Namespace) -> dict:
    cmd = [sys.executable, __file__, "--child", step, str(root), "--work", str(work)]
    cmd += ["--queries", str(args.queries), "--updates", str(args.updates)]
    cmd += ["--retrievals", str(args.retrievals), "--edits", str(args.edits)]
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


def stages_line(r: dict) -> str:
    """Where the build's time and memory went, stage by stage."""
    stages = ", ".join(
        f"{k} {s:.1f} s / {cpu:.1f} CPU s / {mb:,.0f} MB"
        for k, (s, mb, cpu) in r["index_stages"].items()
    )
    return (
        f"{r['size']}: index {r['index_s']:.1f} s, peak {r['index_peak_rss_mb']:,.0f} MB "
        f"(workers {r['index_workers_peak_rss_mb']:,.0f} MB); by stage (time / CPU / peak): "
        f"{stages}"
    )


def session_line(size: str, s: dict, lsp: dict) -> str:
    by_edits = ", ".join(f"{n}: {mb:,.0f}" for n, mb in s["rss_by_edits_mb"])
    return (
        f"{size}: session RSS after load {s['rss_after_load_mb']:,.0f} MB, after retrievals "
        f"{s['rss_after_retrievals_mb']:,.0f} MB, by edits {by_edits} MB, slope "
        f"{s['slope_mb_per_100_edits']:.1f} MB / 100 edits, max {s['peak_rss_mb']:,.0f} MB; "
        f"warm {s['warm_s']:.2f} s, first edit {s['first_edit_ms']:,.0f} ms, then p50 / p95 "
        f"{_ms(s['edit_ms'])} ms, tidy p95 {s['tidy_ms']['p95']:.0f} ms; "
        f"language server RSS ready {lsp['rss_ready_mb']:,.0f} MB, after edits "
        f"{lsp['rss_after_edits_mb']:,.0f} MB (slope {lsp['slope_mb_per_100_edits']:.1f}, "
        f"max {lsp['peak_rss_mb']:,.0f} MB)"
    )


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
    ap.add_argument(
        "--edits", type=int, default=1000, help="edits in the editor session (0: no session)"
    )
    ap.add_argument("--retrievals", type=int, default=40, help="retrievals before the edits")
    ap.add_argument(
        "--steps",
        default="build,query,session",
        help="which steps to run after each build: query (load, retrievals, updates), session "
        "(the editor session and the language server's); 'build' alone: just the index",
    )
    ap.add_argument("--child", choices=("build", "query", "session", "lsp"), help=argparse.SUPPRESS)
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
    if args.child == "session":
        result = child_session(
            args.tree, args.work, args.ignore, args.retrievals, args.edits, args.seed
        )
        print(json.dumps(result))
        return 0
    if args.child == "lsp":
        print(json.dumps(child_lsp(args.tree, args.work, args.ignore, args.edits, args.seed)))
        return 0
    if not args.tree.is_dir():
        ap.error(f"{args.tree} is not a folder")
    sizes = args.size or ["."]
    steps = set(args.steps.split(","))
    if not steps <= {"build", "query", "session"}:
        ap.error(f"--steps: {args.steps!r} names a step other than build, query, session")
    warm_up()
    rows = []
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="repomem-scale-") as d:
            root, work = Path(d) / "tree", Path(d) / "work"
            root.mkdir()
            link_tree(args.tree, size.split(","), root)
            row: dict = {"size": size}
            row.update(run_child("build", root, work, args))
            if "query" in steps:
                row.update(run_child("query", root, work, args))
            if args.edits and "session" in steps:
                row["session"] = run_child("session", root, work, args)
                row["lsp"] = run_child("lsp", root, work, args)
            print(json.dumps(row), file=sys.stderr)
            rows.append(row)
    print(json.dumps(rows, indent=2))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    if args.plot:
        plot(rows, args.plot)
    if "query" in steps:
        print("\n" + table(rows), file=sys.stderr)
    for r in rows:
        print(stages_line(r), file=sys.stderr)
    for r in rows:
        if "session" in r:
            print(session_line(r["size"], r["session"], r["lsp"]), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A full build: the same index with any number of parsing processes, each stage measured."""

from __future__ import annotations

import json
import os
import pickle
import threading
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from pages import resident_pages
from repos import OTHER_LANG_FILES, long_module, make_repo, run_repomem

from repomem.config import IndexConfig
from repomem.index import build, saved_parse, store
from repomem.index import files as files_module
from repomem.index.bm25 import TermCounts
from repomem.index.files import SourceFile
from repomem.index.fragments import windows
from repomem.index.graph import node_layout
from repomem.index.mapped import TextIds, Texts, bytes_key
from repomem.index.meter import StageMeter
from repomem.index.parsing import ParsedFile, parse_source, split_lines
from repomem.index.repo import RepoIndex
from repomem.index.resolve import Resolver
from repomem.index.saved_parse import (
    NODE_ROWS,
    EncodedParse,
    SpooledParses,
    callsites_of,
    definitions_of,
    symbols_of,
)
from repomem.index.saved_parse import saved_parse as read_back
from repomem.index.spool import is_file, maps_file, spooled_parts
from repomem.index.tables import WINDOW_ROWS, IndexTables, SpooledCalls


def _generation(root: Path, index_dir: Path) -> tuple[dict[str, bytes], dict]:
    """Every saved array's bytes, and the manifest less the build's own figures."""
    config = IndexConfig(index_dir=str(index_dir))
    gen = store.live_generation(root, config)
    arrays = {p.name: p.read_bytes() for p in sorted((gen / "arrays").iterdir())}
    manifest = json.loads((gen / "manifest.json").read_text())
    summary = manifest.pop("summary")
    manifest.pop("config")  # names its own index folder
    for key in ("seconds", "cpu_s", "peak_mb", "index_bytes"):
        summary.pop(key, None)  # (an index saved after its build has no summary)
    return arrays, {**manifest, "summary": summary}


def test_two_workers_save_the_index_one_saves_byte_for_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files are parsed, cut and counted in worker processes and merged in path order:
    every table of the saved index is the one a single process writes."""
    files = {f"pkg/gen_{i}.py": long_module(8 + i % 5) for i in range(70)}
    files.update(
        {f"lib/part_{i}.c": f"int part_{i}(int x) {{ return x + {i}; }}\n" for i in range(30)}
    )
    files["lib/dup.c"] = files["lib/part_3.c"]  # a fragment at two places
    # its windows' text sent apart from its content
    files["lib/crlf.c"] = "".join(f"int c{i}(void) {{ return {i}; }}\r\n" for i in range(30))
    root = make_repo(tmp_path / "r", {**OTHER_LANG_FILES, **files}, use_git=False)
    (root / "lib/blob.c").write_bytes(b"\x00\x01" * 100)  # skipped, and counted as such
    readers = tmp_path / "readers"

    def load_file(*args: object) -> SourceFile:
        with open(readers, "a") as fh:
            fh.write(f"{os.getpid()}\n")
        return files_module.load_file(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(build, "load_file", load_file)
    for step in ("fresh", "rebuilt"):  # then again, most parses reused from the saved index
        saved = {}
        for workers in (1, 2):
            readers.write_text("")
            config = replace(IndexConfig(), index_dir=str(tmp_path / f"idx-{workers}"))
            _, summary = RepoIndex.build(root, config, workers=workers)
            pids = set(readers.read_text().split())
            assert len(pids) == workers and (str(os.getpid()) in pids) == (workers == 1)
            assert summary.skipped.get("binary") == 1
            assert summary.reparsed == (1 if step == "rebuilt" else summary.reparsed)
            saved[workers] = _generation(root, tmp_path / f"idx-{workers}")
        arrays_1, manifest_1 = saved[1]
        arrays_2, manifest_2 = saved[2]
        assert arrays_1.keys() == arrays_2.keys()
        assert [n for n in arrays_1 if arrays_1[n] != arrays_2[n]] == []
        assert manifest_1 == manifest_2
        (root / "pkg/gen_5.py").write_text(long_module(3))


def test_what_a_build_spools_is_what_a_save_from_memory_writes(tmp_path: Path) -> None:
    """A build saves its spooled parses, calls, relation rows, graph and node rows where it
    wrote them; a build kept in memory and saved afterwards writes every table itself (from
    the parses and rows made as read): the same bytes."""
    files = {f"pkg/gen_{i}.py": long_module(8 + i % 5) for i in range(70)}
    root = make_repo(tmp_path / "r", {**OTHER_LANG_FILES, **files}, use_git=False)
    spooled_dir, memory_dir = tmp_path / "idx-spooled", tmp_path / "idx-memory"
    RepoIndex.build(root, replace(IndexConfig(), index_dir=str(spooled_dir)))
    built, _ = RepoIndex.build(root, replace(IndexConfig(), index_dir=str(memory_dir)), save=False)
    built.save()
    (arrays_1, manifest_1), (arrays_2, manifest_2) = (
        _generation(root, d) for d in (spooled_dir, memory_dir)
    )
    assert arrays_1.keys() == arrays_2.keys()
    assert [n for n in arrays_1 if arrays_1[n] != arrays_2[n]] == []
    manifest_1.pop("summary"), manifest_2.pop("summary")
    assert manifest_1 == manifest_2


def test_a_build_reports_each_stage_time_and_peak(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", use_git=False)
    _, summary = RepoIndex.build(root)
    stages = ["scan", "parse", "bm25", "resolve", "graph", "relations", "save"]
    assert list(summary.seconds) == [*stages, "total"]
    assert summary.seconds["total"] >= sum(summary.seconds[s] for s in stages)
    assert list(summary.peak_mb) == stages  # Linux: each stage's own high-water mark
    assert list(summary.cpu_s) == stages and all(s >= 0 for s in summary.cpu_s.values())
    assert all(mb > 10 for mb in summary.peak_mb.values())


def test_a_stage_peak_is_its_own(tmp_path: Path) -> None:
    """A stage that held much memory does not raise the next one's peak."""
    meter = StageMeter()
    big = bytearray(300 << 20)
    big[::4096] = b"\x01" * len(big[::4096])  # touched: resident
    del big
    meter.end("big")
    meter.end("small")
    assert meter.peak_mb["big"] > meter.peak_mb["small"] + 250


def test_a_stage_cpu_counts_the_processes_it_waited_for() -> None:
    """A stage's CPU holds its workers' (a build's parse and resolution run in children)."""
    meter = StageMeter()
    pid = os.fork()
    if pid == 0:  # the child: burn CPU, then leave at once
        end = time.process_time() + 0.3
        while time.process_time() < end:
            pass
        os._exit(0)
    os.waitpid(pid, 0)
    meter.end("work")
    assert meter.cpu_s["work"] >= 0.25


def test_relation_ids_are_int32_built_and_loaded(tmp_path: Path) -> None:
    """Half the memory of int64 ids (the kernel's relation rows: 0.7 GB of ids)."""
    root = make_repo(tmp_path / "r", use_git=False)
    built, _ = RepoIndex.build(root)
    loaded = RepoIndex.load(root)
    for idx in (built, loaded):
        assert idx.tables.rel_idx.dtype == np.int32
        assert (idx.tables.rel_idx >= 0).any()


def test_a_build_keeps_no_resolver_but_saves_what_it_resolved(tmp_path: Path) -> None:
    """The resolver's tables go once the calls are resolved: what the resolution depended
    on is spooled into the generation (written once), and a resolver made from it when
    first used resolves as the build's did."""
    root = make_repo(tmp_path / "r", OTHER_LANG_FILES, use_git=False)
    built, _ = RepoIndex.build(root)
    assert built.tables._resolver is None
    arrays = store.live_generation(root, built.config) / "arrays"
    spooled = built.tables.spooled_resolution
    assert spooled is not None and "dep_reads" in spooled and "rn_file" in spooled
    for name, values in spooled.items():
        assert is_file(values, arrays / f"{name}.npy"), name
    fresh, _ = RepoIndex.build(root, save=False)
    for path in sorted(built.tables.files):
        assert built.resolver.calls_of(path) == fresh.tables.calls[path], path


def _resolver_pids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A file each ``Resolver`` made appends its process's id to."""
    log = tmp_path / "resolver-pids"
    made = Resolver.__init__

    def init(self: Resolver, *args: object, **kwargs: object) -> None:
        with open(log, "a") as fh:
            fh.write(f"{os.getpid()}\n")
        made(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Resolver, "__init__", init)
    return log


def _calls_of_pids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A file each ``Resolver.calls_of`` call appends its process's id to: which processes
    resolved files."""
    log = tmp_path / "resolving"
    calls_of = Resolver.calls_of

    def logged(self: Resolver, path: str, rows: object = None) -> list:
        with open(log, "a") as fh:
            fh.write(f"{os.getpid()}\n")
        return calls_of(self, path, rows)  # type: ignore[arg-type]

    monkeypatch.setattr(Resolver, "calls_of", logged)
    return log


def test_a_build_resolves_in_a_child_and_saves_what_resolving_in_process_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Resolution runs in a forked child, whose memory all goes back when it exits (in
    process, the whole kernel's kept ~1.3 GB through the later stages); with threads
    running, no child is forked and the build resolves in process: the same index."""
    root = make_repo(tmp_path / "r", OTHER_LANG_FILES, use_git=False)
    log = _resolver_pids(tmp_path, monkeypatch)
    built, _ = RepoIndex.build(root, IndexConfig(index_dir=str(tmp_path / "apart")))
    children = log.read_text().split()
    assert len(children) == 1 and children[0] != str(os.getpid())
    assert built.tables.calls  # mapped back from what the child wrote
    log.unlink()
    release = threading.Event()
    waiting = threading.Thread(target=release.wait)
    waiting.start()
    try:
        RepoIndex.build(root, IndexConfig(index_dir=str(tmp_path / "in")))
    finally:
        release.set()
        waiting.join()
    assert log.read_text().split() == [str(os.getpid())]
    assert _generation(root, tmp_path / "apart") == _generation(root, tmp_path / "in")


def test_a_build_resolves_its_files_in_runs_at_once_and_saves_what_one_run_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With two or three workers, the files are resolved in as many runs at once (forked
    from the process that made the resolver's tables), their calls and dependencies
    appended in path order, the names each run met renumbered as one run meets them: every
    array of the saved index is the one a single run writes."""
    texts = {
        "inc/a.h": "int f(int x);\nstruct s { int v; };\n#define TWICE(x) f(f(x))\n",
        "inc/b.h": '#include "a.h"\nint h(struct s *p);\n',
        "src/a.c": '#include "../inc/a.h"\nint f(int x) { return x + 1; }\n',
    }
    for i in range(24):
        head = "../inc/b.h" if i % 3 else "../inc/a.h"
        texts[f"src/m{i:02}.c"] = (
            f'#include "{head}"\nint g{i}(int y) {{ return TWICE(y) + h{i % 4}(0); }}\n'
            f"int k{i}(void) {{ return g{i}(1) + missing_{i % 5}(); }}\n"
        )
    root = make_repo(tmp_path / "r", {**texts, **OTHER_LANG_FILES}, use_git=False)
    pids = _calls_of_pids(tmp_path, monkeypatch)
    saved = {}
    for workers in (1, 2, 3):
        pids.write_text("")
        RepoIndex.build(root, IndexConfig(index_dir=str(tmp_path / f"w{workers}")), workers=workers)
        assert len(set(pids.read_text().split())) == workers
        saved[workers] = _generation(root, tmp_path / f"w{workers}")
    arrays, manifest = saved[1]
    assert any(name.startswith("dep_names") for name in arrays)
    for workers in (2, 3):
        assert [n for n in arrays if arrays[n] != saved[workers][0][n]] == []
        assert saved[workers][1] == manifest


def test_the_runs_of_resolution_take_every_chunk_once_the_first_from_the_front() -> None:
    """The first run takes chunks from the front in order (it writes their calls as it
    goes), each other run from the back; each is given one at once, so that a run forked
    first cannot take them all: wherever they meet, each chunk is resolved by one run."""
    paths = [f"f{i:03}.c" for i in range(100)]
    chunks = build._Chunks(paths, 3)
    assert chunks.size == 8  # 100 files in 13 chunks: 4 a run at least
    others = [chunks.claimed(1), chunks.claimed(2)]
    taken = [[c for c in others[0]], [next(others[1])]]  # the second other run is slow
    first = list(chunks.claimed(0))
    assert taken == [[12, *range(10, 0, -1)], [11]]
    assert first == [0] and list(others[1]) == []
    assert [p for c in range(13) for p in chunks.files(c)] == paths
    one = build._Chunks(paths[:1], 3)  # a file: one run resolves it
    assert [list(one.claimed(run)) for run in range(3)] == [[], [0], []]


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one run on one core")
def test_a_build_resolves_in_two_runs_by_default_only_up_to_a_number_of_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each run's process holds its own tables: at the whole kernel's 55k files two took
    the process tree over its memory bound, so a larger repository resolves in one."""
    texts = {f"src/m{i:02}.c": f"int g{i}(int y) {{ return y + {i}; }}\n" for i in range(70)}
    root = make_repo(tmp_path / "r", texts, use_git=False)
    pids = _calls_of_pids(tmp_path, monkeypatch)
    for most, runs in ((100, 2), (69, 1)):
        monkeypatch.setattr(build, "_RUNS_UP_TO", most)
        pids.write_text("")
        RepoIndex.build(root, IndexConfig(index_dir=str(tmp_path / f"i{most}")))
        assert len(set(pids.read_text().split())) == runs


def test_a_build_drops_the_parses_it_no_longer_reads_as_it_resolves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every ``_PARSES_AT_ONCE`` files resolved, the parses not read since the last drop go
    (another file's is read to make its tables, which are kept): a build holds a few of
    them between two drops of every resolver table, and saves the same index."""
    texts = {"inc/a.h": "int f(int x);\nstruct s { int v; };\n"}
    for i in range(12):
        texts[f"src/m{i}.c"] = f'#include "../inc/a.h"\nint g{i}(int y) {{ return f(y); }}\n'
    root = make_repo(tmp_path / "r", texts, use_git=False)
    RepoIndex.build(root, IndexConfig(index_dir=str(tmp_path / "once")))
    held: list[int] = []
    drop = SpooledParses.drop_unread

    def counted(self: SpooledParses) -> None:
        held.append(len(self._made))
        drop(self)

    monkeypatch.setattr(SpooledParses, "drop_unread", counted)
    monkeypatch.setattr(build, "_PARSES_AT_ONCE", 2)
    monkeypatch.setattr(build, "_RESOLVED_AT_ONCE", 1000)
    monkeypatch.setattr(build.threading, "active_count", lambda: 2)  # resolved in process
    RepoIndex.build(root, IndexConfig(index_dir=str(tmp_path / "dropped")))
    assert len(held) >= 5 and max(held) <= 5  # two windows and the header; kept: all 13
    assert _generation(root, tmp_path / "once") == _generation(root, tmp_path / "dropped")


def test_a_failure_in_the_resolving_child_fails_the_build_with_its_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(tmp_path / "r", use_git=False)

    def fail(self: Resolver, path: str, rows: object = None) -> list:
        raise ValueError(f"cannot resolve {path}")

    monkeypatch.setattr(Resolver, "calls_of", fail)
    with pytest.raises(RuntimeError, match="ValueError: cannot resolve"):
        RepoIndex.build(root)
    with pytest.raises(store.IndexNotFound):
        store.live_generation(root, IndexConfig())


def test_dependencies_gathered_while_resolving_are_what_a_resolver_records(
    tmp_path: Path,
) -> None:
    """A build hands each file's dependencies to array rows as it resolves it, rather than
    keeping them in the resolver: the arrays saved are those of a resolver that recorded
    every file's resolution itself, as an update's does."""
    root = make_repo(tmp_path / "r", OTHER_LANG_FILES, use_git=False)
    built, _ = RepoIndex.build(root, save=False)
    t = built.tables
    paths = sorted(t.files)
    resolver = Resolver(t.parsed, imports=t.config.import_weight > 0, settings=t.settings)
    for path in paths:
        assert resolver.calls_of(path) == t.calls[path], path
    recorded = resolver.dependency_arrays(paths)
    assert recorded["dep_reads"].shape[0] > 0 and recorded["dep_tries"].shape[0] > 10
    spooled = t.spooled_resolution
    assert spooled is not None
    for name, values in recorded.items():
        assert values.dtype == spooled[name].dtype and np.array_equal(values, spooled[name]), name


def test_a_build_spools_the_window_rows_where_it_saves_them(tmp_path: Path) -> None:
    """The files' window rows go to the spool as they come and are read back from there
    (the whole kernel's ~0.7 GB are not held); a build saved where it spools finds them
    written, and an index updated since saves what its files hold now."""
    root = make_repo(tmp_path / "r", OTHER_LANG_FILES, use_git=False)
    built, _ = RepoIndex.build(root)
    arrays = store.live_generation(root, built.config) / "arrays"
    entries = [built.tables.files[p] for p in sorted(built.tables.files)]
    for name, _ in WINDOW_ROWS:
        parts = [getattr(e, name) for e in entries]
        assert sum(p.size for p in parts) > 0 and not parts[0].flags.writeable, name
        assert spooled_parts(parts, arrays / f"{name}.npy"), name
    assert not spooled_parts([entries[1].win_start, entries[0].win_start], arrays / "win_start.npy")
    assert not spooled_parts([e.win_start for e in entries[1:]], arrays / "win_start.npy")
    assert not spooled_parts([e.win_start for e in entries], arrays / "win_end.npy")
    built.update_file("pkg/long.py", long_module(3))
    built.save()
    loaded = RepoIndex.load(root)
    for path in sorted(built.tables.files):
        for name, _ in WINDOW_ROWS:
            want = getattr(built.tables.files[path], name)
            assert np.array_equal(getattr(loaded.tables.files[path], name), want), (path, name)


def test_a_build_hands_back_the_pages_its_graph_and_relations_read(tmp_path: Path) -> None:
    """The window rows the graph's node rows were grouped from, the node rows by node (made
    through the spool, not in memory) and the relation rows their count read are mapped
    pages the save does not need resident: none is left (kept, the whole kernel's entered
    its save several hundred MB higher)."""
    files = {f"pkg/gen_{i}.py": long_module(8 + i % 5) for i in range(40)}
    root = make_repo(tmp_path / "r", {**OTHER_LANG_FILES, **files}, use_git=False)
    built, _ = RepoIndex.build(root, save=False)
    t = built.tables
    windows = [getattr(e, name) for e in t.files.values() for name, _ in WINDOW_ROWS]
    assert resident_pages(windows) == 0
    assert resident_pages([t.relation_idx, t.relation_val]) == 0
    assert isinstance(t.relation_idx.base, np.memmap)


def test_builds_in_processes_hashing_strings_differently_save_the_same_index(
    tmp_path: Path,
) -> None:
    """What the resolution depended on is numbered in an order of its own, not a set's
    (which Python's string hashing, seeded per process, changes)."""
    root = make_repo(tmp_path / "r", OTHER_LANG_FILES, use_git=False)
    saved = []
    for seed in ("1", "2"):
        index_dir = tmp_path / f"idx-{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = run_repomem("index", root, "--index-dir", index_dir, "--no-progress", env=env)
        assert done.returncode == 0, done.stderr
        saved.append(_generation(root, index_dir))
    (arrays_1, manifest_1), (arrays_2, manifest_2) = saved
    assert "dep_reads.npy" in arrays_1
    assert [n for n in arrays_1 if arrays_1[n] != arrays_2.get(n)] == []
    assert manifest_1 == manifest_2


def test_a_build_holds_no_parse_but_spools_them_where_they_are_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each file's parse goes to the generation's files as it comes (held, the whole
    kernel's took gigabytes through the build) and is made again from there when read: the
    built index holds none, reads back what parsing the file gives, and its save finds them
    written (mapped from the very files it saves); so too the resolved calls and the
    relation rows."""
    above = "".join(f"int v{k};\n" for k in range(300))
    files = {
        f"c/f{i}.c": f'#include "util.h"\n{above}int f{i}(int x) {{ return shared_helper(x); }}\n'
        for i in range(70)
    }
    root = make_repo(tmp_path / "r", {**files, "c/util.h": "int shared_helper(int);\n"})
    built, _ = RepoIndex.build(root, workers=2)
    made: list[str] = []

    def counted(file: list[str], *args: object) -> ParsedFile:
        made.append(file[0])
        return read_back(file, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(saved_parse, "saved_parse", counted)
    parsed = built.tables.parsed
    assert isinstance(parsed, SpooledParses)
    for path in ("c/f3.c", "c/f3.c", "c/util.h"):
        assert parsed[path].path == path
    assert made == ["c/f3.c", "c/util.h"]  # none held from the build; made once read, kept
    arrays = store.live_generation(root, IndexConfig()) / "arrays"
    assert all(is_file(a, arrays / f"{name}.npy") for name, a in parsed.arrays.items())
    # the resolved calls and the relation rows too, as they were computed
    calls = built.tables.calls
    assert isinstance(calls, SpooledCalls) and is_file(calls.rows, arrays / "calls.npy")
    assert calls["c/f3.c"] == [(302, "c/util.h", 0)]
    for name in ("rel_idx", "rel_val"):
        assert maps_file(
            getattr(built.tables, name.replace("rel_", "relation_")), arrays / f"{name}.npy"
        )
    for path in ("c/f3.c", "c/util.h"):
        text = (root / path).read_text()
        fresh = parse_source(path, "c", text, parsed[path].digest)
        got = parsed[path]
        for name in ("definitions", "calls", "imports", "import_nodes", "has_error"):
            assert getattr(got, name) == getattr(fresh, name)
        for name in (*NODE_ROWS, "error_rows"):
            assert np.array_equal(getattr(got, name), getattr(fresh, name))


def test_a_parsing_worker_sends_its_parse_encoded_as_the_spool_writes_it(tmp_path: Path) -> None:
    """What a worker hands back holds the parse as the spool writes it (node rows and JSON
    parts), not the ``ParsedFile``: pickling its definitions and calls cost the worker and
    the main process each ~1 us a line of the Linux kernel, and the main process encoded
    them again; the spool writes exactly what the parse encodes to."""
    text = "import os\n\nclass A(Base):\n    def m(self):\n        return os.path.join(self.k())\n"
    root = make_repo(tmp_path / "r", {"a.py": text})
    build._JOB = (root, IndexConfig(), {}, None)
    try:
        got = build._load_and_prepare("a.py")
    finally:
        build._JOB = None
    assert isinstance(got, build.LoadedFile) and got.prep is not None
    assert got.prep.parsed is None and isinstance(got.parse, EncodedParse)
    sent = pickle.dumps(got)
    assert b"CallSite" not in sent and b"Definition" not in sent and b"ParsedFile" not in sent
    fresh = parse_source("a.py", "python", text, got.source.digest)
    assert fresh.calls and fresh.definitions and fresh.imports and fresh.bases
    assert got.parse.file == ["a.py", "python", got.source.digest]
    assert got.parse.texts == [symbols_of(fresh), definitions_of(fresh), callsites_of(fresh)]
    for name, values in zip(NODE_ROWS, got.parse.rows, strict=True):
        assert np.array_equal(values, getattr(fresh, name))


def test_a_parsing_worker_leaves_out_the_windows_text_where_the_content_holds_it(
    tmp_path: Path,
) -> None:
    """A file's windows are slices of its lines joined by newlines, which its content holds
    but where lines end in a carriage return: a worker sends that text only then (it was a
    third of what workers sent), and both files' windows are the texts ``windows`` cuts."""
    body = "".join(f"int f{i}(int x) {{ return x + {i}; }} /* \u00e9 */\n" for i in range(45))
    root = make_repo(tmp_path / "r", {"lf.c": body, "crlf.c": body.replace("\n", "\r\n")})
    config = IndexConfig()
    build._JOB = (root, config, {}, None)
    try:
        lf, crlf = build._load_and_prepare("lf.c"), build._load_and_prepare("crlf.c")
    finally:
        build._JOB = None
    assert isinstance(lf, build.LoadedFile) and lf.prep is not None
    assert isinstance(crlf, build.LoadedFile) and crlf.prep is not None
    assert lf.prep.win_text is None and lf.content is not None
    assert crlf.prep.win_text is not None
    lf.prep.win_text = lf.content  # as the build's main process does
    for got in (lf, crlf):
        assert got.content is not None and got.prep is not None
        lines = split_lines(got.content.decode())
        cut = windows(lines, config.fragment_lines, config.stride)
        assert len(cut) > 2
        assert got.prep.encoded() == [w.text.encode() for w in cut]


@pytest.mark.parametrize("end", ["\n", "", "\r\n", "\n\n"])
def test_a_files_windows_are_cut_from_the_utf8_its_parse_read(end: str) -> None:
    """``prepare_file`` encodes a file and finds its newlines once, for its parse and its
    windows: the windows' texts, keys and terms are those of its lines joined again, whether
    it parses the file or is handed the parse, whatever ends its last line."""
    body = "".join(f"int f{i}(int x) {{ return x + {i}; }} /* \u00e9 */\n" for i in range(45))
    text = body.replace("\n", "\r\n" if end == "\r\n" else "\n")[: -len("\n")] + end
    f = SourceFile("a.c", "c", text, "d", len(text))
    config = IndexConfig()
    parsed = build.prepare_file(f, config)
    handed = build.prepare_file(f, config, parse_source("a.c", "c", text, "d"), terms=False)
    assert parsed.parsed is not None and parsed.terms is not None
    assert np.array_equal(parsed.parsed.line_len, handed.parsed.line_len)  # type: ignore[union-attr]
    lines = split_lines(text)
    cut = windows(lines, config.fragment_lines, config.stride)
    assert len(cut) > 2
    spans = [(w.start, w.end) for w in cut]
    for prep in (parsed, handed):
        assert prep.encoded() == [w.text.encode() for w in cut]
        assert prep.win_key.tolist() == [bytes_key(w.text.encode()) for w in cut]

    def by_window(counts: TermCounts) -> list[dict[str, int]]:
        ptr, terms, tfs = counts.ptr.tolist(), counts.terms.tolist(), counts.tfs.tolist()
        return [
            {counts.words[terms[k]]: tfs[k] for k in range(lo, hi)}
            for lo, hi in zip(ptr, ptr[1:], strict=False)
        ]

    assert by_window(parsed.terms) == by_window(build.count_terms(lines, spans))


def test_a_saved_generations_files_are_synced_before_it_goes_live_and_scratch_never(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every array of a saved generation reaches the disk before ``CURRENT`` names it (a
    crash leaves the old generation live, never a new one with unsynced arrays); a build
    that is not saved syncs nothing (each sync of its scratch cost a test build ~0.3 s)."""
    root = make_repo(tmp_path / "r", OTHER_LANG_FILES, use_git=False)
    synced: list[str] = []
    sync = os.fsync

    def record(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        sync(fd)

    monkeypatch.setattr(os, "fsync", record)
    RepoIndex.build(root, IndexConfig(index_dir=str(tmp_path / "scratch")), save=False)
    assert synced == []
    RepoIndex.build(root, IndexConfig(index_dir=str(tmp_path / "idx")))
    live = store.live_generation(root, IndexConfig(index_dir=str(tmp_path / "idx")))
    arrays = sorted((live / "arrays").iterdir())
    assert len(arrays) > 20
    current = next(i for i, p in enumerate(synced) if p.endswith("CURRENT.tmp"))
    before = {Path(p).name for p in synced[:current]}
    assert {p.name for p in arrays} <= before


def test_fragment_node_rows_grouped_a_range_at_a_time_are_those_grouped_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fragments' node rows are grouped a range of fragment ids at a time, each range
    from the files holding some of its fragments (a fragment repeated in another file
    among them): the same rows, summed in the same order, as all entries grouped at once;
    and so from the graph's ``node_layout`` alone, as a build makes them before its calls
    are resolved."""
    files = {f"pkg/gen_{i}.py": long_module(4 + i % 5) for i in range(30)}
    files["pkg/copy.py"] = files["pkg/gen_2.py"]  # its fragments have the ids of the first's
    root = make_repo(tmp_path / "r", {**OTHER_LANG_FILES, **files}, use_git=False)
    t = RepoIndex.build(root, save=False)[0].tables
    shared = t.files["pkg/copy.py"].wn_frag
    assert shared.size and np.array_equal(shared, t.files["pkg/gen_2.py"].wn_frag)
    frags, nodes, weights = t.frag_entries(list(t.files))
    rows, cols, vals = t.grouped(frags, nodes, weights, by_key=True)
    n = len(t.frag_text)
    want = np.r_[0, np.cumsum(np.bincount(rows, minlength=n))], cols, vals
    for parts in (1, 7):
        monkeypatch.setattr("repomem.index.tables._GROUPED_PARTS", parts)
        got = t.assemble_frag_nodes().gather(np.arange(n))
        assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True)), parts
        laid = t.assemble_frag_nodes(node_layout(t.parsed)).gather(np.arange(n))
        assert all(np.array_equal(a, b) for a, b in zip(laid, want, strict=True)), parts


def test_relation_rows_written_as_they_were_are_left_untouched(tmp_path: Path) -> None:
    """``write_relations`` writes only the rows that change: a loaded index's rows are
    mapped copy-on-write, and a row written as it was became the process's own copy.
    Those that change are written, and the relations by target follow them."""
    idx, _ = RepoIndex.build(make_repo(tmp_path / "r", OTHER_LANG_FILES, use_git=False))
    t = idx.tables
    _ = t.inverse_relations
    rows = np.flatnonzero((t.rel_idx >= 0).any(axis=1))[:3]
    same_idx, same_val = t.rel_idx[rows].copy(), t.rel_val[rows].copy()
    t.relation_idx.flags.writeable = t.relation_val.flags.writeable = False
    build.write_relations(t, rows, same_idx, same_val)  # nothing to write
    t.relation_idx.flags.writeable = t.relation_val.flags.writeable = True
    gone = int(same_idx[0][same_idx[0] >= 0][0])
    changed = same_idx.copy()
    changed[0][changed[0] == gone] = -1
    build.write_relations(t, rows, changed, same_val)
    assert (t.rel_idx[rows] == changed).all()
    assert rows[0] not in t.inverse_relations.gather(np.array([gone]))[1]


@pytest.mark.parametrize("spooled", [True, False])
def test_a_files_windows_take_one_fragment_a_text_even_where_keys_clash(
    tmp_path: Path, spooled: bool
) -> None:
    """A file's new fragments are made in one call: windows repeating a text, in the file or
    from an earlier one, take its fragment, and two texts whose keys clash take two, as one
    window at a time made them (ids in the order the texts first come)."""
    block = "".join(f"x{i} = {i}\n" for i in range(10))
    a = block * 6 + "".join(f"y{i} = {i}\n" for i in range(25))
    b = block * 3 + "".join(f"z{i} = {i}\n" for i in range(15))
    t = IndexTables(IndexConfig())
    if spooled:  # as a build keeps them
        t.frag_text = Texts.spooled(tmp_path, "frag_text")
        t.by_text = TextIds(t.frag_text)
    config, seen, wanted = IndexConfig(), {}, []
    for n, text in enumerate((a, b)):
        f = SourceFile(f"{n}.py", "python", text, "d", len(text))
        prep = build.prepare_file(f, config)
        if n == 1:  # two new texts under one key
            prep.win_key[2] = prep.win_key[3]
        build.add_file_fragments(t, f, prep, locate=not spooled)
        texts = prep.encoded()
        wanted.append([seen.setdefault(w, len(seen)) for w in texts])
        assert t.files[f.path].win_frag.tolist() == wanted[-1]
    assert wanted == [[0, 0, 0, 0, 0, 1, 2, 3], [0, 0, 4, 5]]
    assert [t.frag_text.encoded_at(i) for i in range(len(t.frag_text))] == list(seen)
    assert np.all(t.live[:6]) and not np.any(t.live[6:])
    key = int(prep.win_key[3])
    assert [t.by_text.find(key, texts[i]) for i in (2, 3)] == [4, 5]
    assert [t.by_text.get(w.decode()) for w in list(seen)[:4]] == [0, 1, 2, 3]
    if not spooled:
        assert [loc.path for loc in t.frag_locs[5]] == ["1.py"]
        assert len(t.frag_locs[0]) == 5 + 2

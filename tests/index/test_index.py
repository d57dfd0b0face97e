"""The index as a whole: incremental updates equal rebuilds, persistence, crash safety."""

from __future__ import annotations

import json
import math
import mmap
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from repos import OTHER_LANG_FILES, long_module, make_repo, parsed_fields, write_files

from repomem.config import IndexConfig
from repomem.errors import RepomemError
from repomem.index import saved_parse, store
from repomem.index.bm25 import tokenize
from repomem.index.build import recompute_relations
from repomem.index.parsing import Lines, newline_positions, split_lines
from repomem.index.repo import RepoIndex
from repomem.index.resolve import Resolver
from repomem.index.spool import is_file

EXACT = replace(IndexConfig(), node_neighbours=1000, fragment_neighbours=1000)
IMPORTS = replace(IndexConfig(), import_weight=0.6)  # and the graph's import edges
CONFIGS = [EXACT, IndexConfig(), replace(EXACT, import_weight=0.6), IMPORTS]
CONFIG_IDS = ["uncapped", "default-caps", "uncapped-imports", "default-caps-imports"]


def snapshot(idx: RepoIndex) -> tuple[dict, dict, dict]:
    live = idx.tables.live_ids().tolist()
    frags = {
        idx.tables.frag_text[i]: frozenset(
            (loc.path, loc.start, loc.end) for loc in idx.tables.frag_locs[i]
        )
        for i in live
    }
    rel = idx.tables.relations.tocoo()
    rels = {
        (idx.tables.frag_text[i], idx.tables.frag_text[j]): v
        for i, j, v in zip(rel.row, rel.col, rel.data, strict=True)
    }
    calls = {p: sorted(c) for p, c in idx.tables.calls.items() if c}
    return frags, rels, calls


def assert_same(a: RepoIndex, b: RepoIndex, queries: list[str]) -> None:
    fa, ra, ca = snapshot(a)
    fb, rb, cb = snapshot(b)
    assert fa == fb
    assert ca == cb
    # what a loaded parse saves of its calls (their first parts) is what they say
    assert _call_heads(a) == _call_heads(b)
    assert ra.keys() == rb.keys()
    for key in ra:
        assert ra[key] == pytest.approx(rb[key], rel=1e-9)
    for q in queries:
        sa, sb = a.tables.bm25.scores(tokenize(q)), b.tables.bm25.scores(tokenize(q))
        by_text_a = {a.tables.frag_text[i]: sa[i] for i in a.tables.live_ids()}
        by_text_b = {b.tables.frag_text[i]: sb[i] for i in b.tables.live_ids()}
        assert by_text_a == pytest.approx(by_text_b, rel=1e-9)
        ha = [(h.locations, round(h.s_rel, 9)) for h in a.retrieve(q, k=10)]
        hb = [(h.locations, round(h.s_rel, 9)) for h in b.retrieve(q, k=10)]
        assert ha == hb


def _call_heads(idx: RepoIndex) -> dict[str, set[str]]:
    return {p: pf.call_heads() for p, pf in idx.tables.parsed.items()}


QUERIES = ["value = helper(1)", "def compute(items):\n    out = []", "return result"]

EDITS: dict[str, str | None] = {
    # helper gains a caller-visible twin and loses a line; Base.run calls something new
    "pkg/util.py": "import os\n\n\ndef helper(x):\n    return x * 2\n\n\ndef twin(y):\n"
    "    return helper(y) + 1\n\n\nclass Base:\n    def run(self):\n        return twin(3)\n",
    "pkg/sub/mod.py": None,  # deleted
    "pkg/extra.py": "from pkg.util import twin\n\n\ndef use():\n    return twin(5)\n",  # new
    "pkg/long.py": long_module(14),  # grows: windows shift, fragments merge and split
}


def apply_on_disk(root: Path, edits: dict[str, str | None]) -> None:
    for rel, text in edits.items():
        p = root / rel
        if text is None:
            p.unlink()
        else:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)


@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_incremental_updates_equal_a_rebuild(tmp_path: Path, config: IndexConfig) -> None:
    root = make_repo(tmp_path / "r", OTHER_LANG_FILES, use_git=False)
    idx, _ = RepoIndex.build(root, config, save=False)
    apply_on_disk(root, EDITS)
    for rel, text in EDITS.items():
        idx.update_file(rel, text)
    fresh, _ = RepoIndex.build(root, config, save=False)
    # rows cut at a cap keep the same relations too: equal strengths are ordered by content
    assert_same(idx, fresh, QUERIES)


def test_update_then_undo_restores_the_index(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", use_git=False)
    idx, _ = RepoIndex.build(root, EXACT, save=False)
    before = snapshot(idx)
    original = (root / "pkg/core.py").read_text()
    idx.update_file("pkg/core.py", original.replace("helper(1)", "helper(1) + helper(9)"))
    assert snapshot(idx) != before
    idx.update_file("pkg/core.py", original)
    after = snapshot(idx)
    assert after[0] == before[0] and after[2] == before[2]
    assert after[1].keys() == before[1].keys()
    for key, value in before[1].items():
        assert after[1][key] == pytest.approx(value, rel=1e-9)


def test_new_code_becomes_retrievable(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", use_git=False)
    idx, _ = RepoIndex.build(root, save=False)
    assert not idx.retrieve("frobnicate_widget(spline)", k=3)
    idx.update_file("pkg/new.py", "def frobnicate_widget(spline):\n    return spline\n")
    hits = idx.retrieve("frobnicate_widget(spline)", k=3)
    assert hits and hits[0].path == "pkg/new.py"
    idx.update_file("pkg/new.py", None)
    assert not idx.retrieve("frobnicate_widget(spline)", k=3)


def test_save_load_round_trip(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {**OTHER_LANG_FILES, "broken.py": "def broken(:\n    f()\n"})
    idx, summary = RepoIndex.build(root)
    assert summary.index_bytes > 0
    loaded = RepoIndex.load(root)
    assert_same(idx, loaded, QUERIES)
    assert loaded.tables.parsed["broken.py"].has_error  # an edit of it must parse it whole
    assert {p: parsed_fields(pf) for p, pf in loaded.tables.parsed.items()} == {
        p: parsed_fields(pf) for p, pf in idx.tables.parsed.items()
    }
    # the loaded index keeps updating exactly
    apply_on_disk(root, EDITS)
    for rel, text in EDITS.items():
        loaded.update_file(rel, text)
    fresh, _ = RepoIndex.build(root, save=False)
    got, want = snapshot(loaded), snapshot(fresh)
    assert got[0] == want[0]  # fragments
    assert got[2] == want[2]  # resolved calls: the saved resolution dependencies were right
    # an updated index saves and loads as it is (its relation rows, not their spare room)
    assert loaded.tables.rel_idx.shape[0] == len(loaded.tables.frag_text)
    loaded.save()
    assert_same(loaded, RepoIndex.load(root), QUERIES)


def test_a_load_maps_what_resolution_depended_on(tmp_path: Path) -> None:
    """A loaded index decodes no file's resolution dependencies: which files a change
    affects is read from the saved arrays, and only files resolved again hold theirs. Saved
    again after updates (the others' rows copied from the arrays) and loaded, it still
    updates exactly."""
    root = make_repo(tmp_path / "r", OTHER_LANG_FILES)
    RepoIndex.build(root)
    loaded = RepoIndex.load(root)
    resolver = loaded.resolver
    assert not resolver.consulted and not resolver.callers
    first, second = list(EDITS.items())[:2], list(EDITS.items())[2:]
    apply_on_disk(root, dict(first))
    for rel, text in first:
        loaded.update_file(rel, text)
    assert 0 < len(resolver.consulted) < len(loaded.tables.parsed)
    loaded.save()
    again = RepoIndex.load(root)
    apply_on_disk(root, dict(second))
    for rel, text in second:
        again.update_file(rel, text)
    fresh, _ = RepoIndex.build(root, save=False)
    got, want = snapshot(again), snapshot(fresh)
    assert got[0] == want[0]
    assert got[2] == want[2]


# C files whose definitions share names across files: ``by_name`` keeps them in path order
NAMED_C = {
    "c/a.h": "int shared(void);\n",
    "c/a.c": '#include "a.h"\n\nint shared(void) { return 1; }\n',
    "c/b.c": "static int shared(void) { return 2; }\n\nint b(void) { return shared(); }\n",
    "c/use.c": '#include "a.h"\n\nint use(void) { return shared(); }\n',
}
NAMED_C_EDITS: dict[str, str | None] = {
    "c/b.c": "static int shared(void) { return 3; }\n\nint b2(void) { return shared(); }\n",
    "c/aa.c": "int shared(void) { return 4; }\n",  # new, before b.c in path order
    "c/a.c": None,
}


def _resolver_tables(idx: RepoIndex, keys: set[tuple[str, str]]) -> tuple:
    r = idx.resolver
    own = {
        p: (r.defs[p], r.classes[p], r.qualnames[p], r.bindings[p], list(r.stars.get(p, ())))
        for p in idx.tables.parsed
    }
    return {k: list(r.by_name.get(k, ())) for k in keys}, own, dict(r.modules)


def _name_keys(*indexes: RepoIndex) -> set[tuple[str, str]]:
    return {
        (
            "python"
            if pf.language == "python"
            else "js"
            if pf.language in ("javascript", "typescript")
            else "c"
            if pf.language in ("c", "cpp")
            else pf.language,
            d.name.rsplit(".", 1)[-1],
        )
        for idx in indexes
        for pf in idx.tables.parsed.values()
        for d in pf.definitions
    }


def test_a_loaded_index_reads_its_files_newlines_as_saved(tmp_path: Path) -> None:
    """A saved index keeps where each file's text has its newlines: a loaded file's lines
    are found from them without scanning its text. Updated and saved, they are those of
    the new texts, as a rebuild saves them."""
    root = make_repo(tmp_path / "r", {**OTHER_LANG_FILES, "crlf.py": "a = 1\r\nb = 2\r\n"})
    RepoIndex.build(root)
    loaded = RepoIndex.load(root)
    for path, entry in loaded.tables.files.items():
        assert entry.newlines is not None and _is_mapped(entry.newlines)
        assert entry.newlines.tolist() == newline_positions(entry.encoded).tolist()
        assert list(loaded.file_lines(path)) == split_lines(entry.text)
    apply_on_disk(root, EDITS)
    for rel, text in EDITS.items():
        loaded.update_file(rel, text)
    for path in EDITS:
        if path in loaded.tables.files:
            assert list(loaded.file_lines(path)) == split_lines(loaded.file_text(path) or "")
    loaded.save()
    again = replace(IndexConfig(), index_dir=str(tmp_path / "again"))
    RepoIndex.build(root, again)
    saved, rebuilt = (store.live_generation(root, c) / "arrays" for c in (loaded.config, again))
    for name in ("text_newlines.npy", "text_newlines_off.npy"):
        assert np.array_equal(np.load(saved / name), np.load(rebuilt / name))


def test_a_load_maps_the_resolvers_name_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loaded index's resolver reads the definitions by name from the saved arrays and
    enters its Python and C files by path: it decodes no parse of theirs until resolution
    reads it. Updated, saved and loaded again, its tables equal a fresh build's, the order
    of a name's definitions (their files' paths) included."""
    root = make_repo(tmp_path / "r", {**OTHER_LANG_FILES, **NAMED_C})
    built, _ = RepoIndex.build(root)
    keys = _name_keys(built)  # before counting: the build's parses are made when read too
    decoded: list[str] = []

    class Counted(saved_parse.SavedParse):
        def __init__(self, path: str, *args: object, **kwargs: object) -> None:
            decoded.append(path)
            super().__init__(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(saved_parse, "SavedParse", Counted)
    loaded = RepoIndex.load(root)
    assert loaded.resolver.saved is not None  # made, reading nothing of every file
    by_family = {
        p for p, e in loaded.tables.files.items() if e.language not in ("python", "c", "cpp")
    }
    assert set(decoded) == by_family
    assert _resolver_tables(loaded, keys) == _resolver_tables(built, keys)
    edits = {**EDITS, **NAMED_C_EDITS}
    apply_on_disk(root, edits)
    for rel, text in edits.items():
        loaded.update_file(rel, text)
    fresh, _ = RepoIndex.build(root, save=False)
    keys = _name_keys(built, fresh)
    assert _resolver_tables(loaded, keys) == _resolver_tables(fresh, keys)
    assert snapshot(loaded)[2] == snapshot(fresh)[2]
    loaded.save()
    again = RepoIndex.load(root)
    assert _resolver_tables(again, keys) == _resolver_tables(fresh, keys)
    shared = "int shared(void) { return 5; }\n"
    apply_on_disk(root, {"c/a.c": shared})
    again.update_file("c/a.c", shared)
    assert_same(again, RepoIndex.build(root, save=False)[0], QUERIES)


def _is_mapped(a: np.ndarray) -> bool:
    while a is not None and not isinstance(a, mmap.mmap):
        a = getattr(a, "base", None)
    return a is not None


def test_a_build_reads_its_bm25_and_locations_from_what_it_saved(tmp_path: Path) -> None:
    """A build holds no BM25 index in memory: it is written into the generation once it is
    compacted, read from there, and not written again by the save (the rows' terms get room
    for an update's after them); the fragments' locations are arrays, not a list per
    fragment."""
    root = make_repo(tmp_path / "r", OTHER_LANG_FILES)
    idx, _ = RepoIndex.build(root)
    arrays = store.live_generation(root, idx.config) / "arrays"
    state = idx.tables.bm25.state()
    for key in ("post_row", "vocab_bytes", "row_len"):
        assert is_file(state[key], arrays / f"bm25__{key}.npy"), key
    # the room is appended to the spooled file itself, whose pages were not copied
    for key in ("row_terms", "row_tf"):
        assert is_file(state[key], arrays / f"bm25__{key}.npy"), key
    room = np.load(arrays / "bm25__row_terms.npy", mmap_mode="r")
    assert np.array_equal(room[: state["row_terms"].size], state["row_terms"])
    assert not room[state["row_terms"].size :].any()
    assert not is_file(np.array(state["post_row"]), arrays / "bm25__post_row.npy")
    assert not idx.tables.frag_locs._added
    assert_same(idx, RepoIndex.load(root), QUERIES)


def test_a_loaded_index_adds_bm25_rows_into_the_saved_room(tmp_path: Path) -> None:
    """The BM25 rows (their terms, bounds and lengths) and the fragments' keys and liveness
    are saved with room after them: an update after a load that adds fragments writes them
    there (copy-on-write) instead of copying the saved arrays into memory first."""
    root = make_repo(tmp_path / "r", OTHER_LANG_FILES)
    RepoIndex.build(root)
    loaded = RepoIndex.load(root)
    t, bm25 = loaded.tables, loaded.tables.bm25
    before, fragments = bm25._row_terms.size, len(t.frag_text)
    assert not t.free_ids and t.live.size > fragments  # the room is no free fragment ids
    loaded.update_file("pkg/extra.py", EDITS["pkg/extra.py"])
    assert bm25._row_terms.size > before and len(t.frag_text) > fragments
    grown = (bm25._row_terms, bm25._row_tf, bm25._row_ptr, bm25._row_len)
    assert all(_is_mapped(g._data) for g in grown)
    assert _is_mapped(t.frag_key) and _is_mapped(t.live)
    apply_on_disk(root, {"pkg/extra.py": EDITS["pkg/extra.py"]})
    built, _ = RepoIndex.build(root, save=False)
    assert_same(loaded, built, QUERIES)


def test_a_mapped_index_equals_one_read_into_memory(tmp_path: Path) -> None:
    """Opening maps the saved arrays; what it answers, before and after updates, and what it
    saves are those of the same index read into memory."""
    root = make_repo(tmp_path / "r", OTHER_LANG_FILES)
    RepoIndex.build(root)
    mapped, copied = RepoIndex.load(root), RepoIndex.load(root, mapped=False)
    assert _is_mapped(mapped.tables.rel_idx) and _is_mapped(mapped.tables.bm25._post_row)
    assert _is_mapped(mapped.tables.inverse_relations.cols)  # retrieval reads the saved rows
    assert not _is_mapped(copied.tables.rel_idx)
    assert_same(mapped, copied, QUERIES)
    assert mapped.file_text("pkg/core.py") == (root / "pkg/core.py").read_text()
    apply_on_disk(root, EDITS)
    for idx in (mapped, copied):
        for rel, text in EDITS.items():
            idx.update_file(rel, text)
        idx.tables.bm25.compact()  # the saved vocabulary's words, less those no longer used
    assert_same(mapped, copied, QUERIES + ["def twin(y)", "twin(5)"])
    mapped.save()
    assert_same(RepoIndex.load(root), copied, QUERIES)
    fresh, _ = RepoIndex.build(root, save=False)
    assert snapshot(RepoIndex.load(root))[0] == snapshot(fresh)[0]


def _graph_by_key(idx: RepoIndex) -> tuple[dict, dict]:
    """The graph's edges and the fragments' node weights in node keys and fragment texts,
    which do not depend on how ids were allocated."""
    graph = idx.tables.graph
    indptr, nbr, cost = graph.adj.gather(np.arange(graph.n_nodes))
    owner = np.repeat(np.arange(graph.n_nodes), np.diff(indptr))
    key = graph.key
    edges = {
        int(key[u]): list(
            zip(key[nbr[owner == u]].tolist(), cost[owner == u].tolist(), strict=True)
        )
        for u in np.unique(owner).tolist()
    }
    weights = {}
    for fid in idx.tables.live_ids().tolist():
        _, nodes, w = idx.tables.frag_nodes.gather(np.array([fid]))
        weights[idx.tables.frag_text[fid]] = sorted(
            zip(key[nodes].tolist(), np.round(w, 12).tolist(), strict=True)
        )
    return edges, weights


def _by_target(calls_into: dict[str, dict[str, np.ndarray]]) -> dict:
    return {
        (t, p): sorted(map(tuple, pairs.tolist()))
        for t, by_path in calls_into.items()
        for p, pairs in by_path.items()
        if pairs.size
    }


@pytest.mark.parametrize("config", [EXACT, IMPORTS], ids=["uncapped", "default-caps-imports"])
def test_a_loaded_index_updates_from_its_saved_graph(
    tmp_path: Path, config: IndexConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The graph and node rows are saved as arrays, numbered as a build numbers them however
    updates moved files, and the calls by target are grouped from the saved calls: an update
    after a load builds neither from every file's parse and calls."""
    root = make_repo(tmp_path / "r", OTHER_LANG_FILES, use_git=False)
    idx, _ = RepoIndex.build(root, config)
    grown = long_module(40)  # past the file's room: it moves to new ids
    apply_on_disk(root, {"pkg/long.py": grown})
    idx.update_file("pkg/long.py", grown)
    idx.save()
    loaded = RepoIndex.load(root, config)
    fresh, _ = RepoIndex.build(root, config, save=False)
    assert _graph_by_key(loaded) == _graph_by_key(fresh)
    assert np.array_equal(loaded.tables.graph.key, fresh.tables.graph.key)  # the same ids, too
    assert np.array_equal(loaded.tables.radius, idx.tables.canonical_radius())
    assert _by_target(loaded.tables.calls_into) == _by_target(fresh.tables.calls_into)

    loaded = RepoIndex.load(root, config)
    monkeypatch.setattr("repomem.index.tables.build_graph", lambda *a: pytest.fail("built"))
    apply_on_disk(root, EDITS)
    for rel, text in EDITS.items():
        loaded.update_file(rel, text)
    monkeypatch.undo()
    fresh, _ = RepoIndex.build(root, config, save=False)
    assert_same(loaded, fresh, QUERIES)
    assert _graph_by_key(loaded) == _graph_by_key(fresh)


def test_rerun_reparses_only_changed_files(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    _, first = RepoIndex.build(root)
    _, again = RepoIndex.build(root)
    assert (again.reparsed, again.reused) == (0, first.reparsed)
    (root / "pkg/core.py").write_text((root / "pkg/core.py").read_text() + "\nX = 1\n")
    _, third = RepoIndex.build(root)
    assert (third.reparsed, third.reused) == (1, first.reparsed - 1)


def test_failed_save_leaves_previous_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_repo(tmp_path / "r")
    RepoIndex.build(root)
    before = [h.locations for h in RepoIndex.load(root).retrieve("helper(1)", k=5)]

    def boom(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(np, "save", boom)
    (root / "pkg/core.py").write_text("def changed():\n    return helper(1)\n")
    with pytest.raises(OSError):
        RepoIndex.build(root)
    monkeypatch.undo()
    after = [h.locations for h in RepoIndex.load(root).retrieve("helper(1)", k=5)]
    assert after == before
    assert not list((root / ".repomem").glob("tmp-*"))


def test_a_build_holds_its_texts_in_the_generation_it_saves(tmp_path: Path) -> None:
    """The files' and fragments' texts are spooled to the new generation while the build
    reads them and mapped back from there: the build does not hold them, the save does not
    write them again, and they read as the files do."""
    root = make_repo(tmp_path / "r", OTHER_LANG_FILES)
    idx, _ = RepoIndex.build(root)
    arrays = store.live_generation(root, IndexConfig()) / "arrays"

    def file_id(name: str) -> tuple[int, int]:
        st = (arrays / name).stat()
        return st.st_dev, st.st_ino

    assert idx.tables.frag_text.file_id == file_id("frag_text.npy")
    for path, entry in idx.tables.files.items():
        assert isinstance(entry.content, tuple)
        assert entry.content[0].file_id == file_id("texts.npy")
        assert entry.text == (root / path).read_text()
    assert_same(idx, RepoIndex.load(root), QUERIES)
    built, _ = RepoIndex.build(root, save=False)  # spooled to a folder gone since
    assert_same(built, idx, QUERIES)


def test_a_generation_being_written_survives_a_save_beside_it(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    idx, _ = RepoIndex.build(root)
    with store.writing(root, IndexConfig()) as out:
        idx.save()  # removes the generations it replaces, not this one
        assert out.is_dir()
        store.write_generation(idx.tables, out, None)
    assert store.live_generation(root, IndexConfig()).name != out.name
    assert_same(RepoIndex.load(root), idx, QUERIES)
    assert len(list((root / ".repomem").glob("gen-*"))) == 1


def test_fragments_are_found_by_text_when_their_hashes_clash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Texts are looked up by content hash and confirmed on the text: with every hash equal,
    building and updating give the index they give otherwise."""
    root = make_repo(tmp_path / "r", OTHER_LANG_FILES, use_git=False)
    want, _ = RepoIndex.build(root, save=False)
    from repomem.index import build, mapped

    monkeypatch.setattr(mapped, "bytes_key", lambda encoded: 7)
    for module in (mapped, build):
        monkeypatch.setattr(
            module, "bytes_keys", lambda text, spans: np.full(len(spans), 7, np.int64)
        )
    idx, _ = RepoIndex.build(root, save=False)
    assert snapshot(idx)[0] == snapshot(want)[0]
    apply_on_disk(root, EDITS)
    for rel, text in EDITS.items():
        idx.update_file(rel, text)
    monkeypatch.undo()
    fresh, _ = RepoIndex.build(root, save=False)
    assert snapshot(idx)[0] == snapshot(fresh)[0]


def test_killed_index_run_leaves_a_valid_index(tmp_path: Path) -> None:
    files = {f"pkg/gen_{i}.py": long_module(30) + f"\n\nMARK_{i} = {i}\n" for i in range(40)}
    root = make_repo(tmp_path / "r", files, use_git=False)
    subprocess.run(
        [sys.executable, "-m", "repomem.cli", "index", str(root), "--no-progress"],
        check=True,
        capture_output=True,
    )
    (root / "pkg/gen_0.py").write_text("def replaced():\n    return 1\n")
    seen_new = False
    for delay in (0.3, 0.8, 1.5, 2.5, 4.0):
        proc = subprocess.Popen(
            [sys.executable, "-m", "repomem.cli", "index", str(root), "--no-progress"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(delay)
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        idx = RepoIndex.load(root)  # never half-written: the old or the new index
        texts = idx.file_text("pkg/gen_0.py")
        seen_new = seen_new or texts == "def replaced():\n    return 1\n"
        assert idx.retrieve("MARK_3 = 3", k=1)[0].path == "pkg/gen_3.py"
    # a complete run afterwards cleans up whatever a killed one left behind
    subprocess.run(
        [sys.executable, "-m", "repomem.cli", "index", str(root), "--no-progress"],
        check=True,
        capture_output=True,
    )
    assert RepoIndex.load(root).file_text("pkg/gen_0.py") == "def replaced():\n    return 1\n"
    assert not list((root / ".repomem").glob("tmp-*"))
    assert len(list((root / ".repomem").glob("gen-*"))) == 1


def test_damaged_and_incompatible_indexes_are_reported(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    with pytest.raises(RepomemError, match="no index"):
        RepoIndex.load(root)
    RepoIndex.build(root)
    gen = store.live_generation(root, IndexConfig())
    manifest = gen / "manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "format": 999}))
    with pytest.raises(RepomemError, match="format 999"):
        RepoIndex.load(root)
    manifest.write_text("{not json")
    with pytest.raises(RepomemError, match="unreadable"):
        RepoIndex.load(root)
    # a rebuild replaces the damaged index
    RepoIndex.build(root)
    assert RepoIndex.load(root).retrieve("helper(1)", k=1)


def assert_relations_as_recomputed(idx: RepoIndex, rel: str) -> None:
    """The relations an update left (rows, values, truncated fragments) equal those
    recomputed for every live fragment of the same index (same ids, so ties at a cap break
    the same way)."""
    incremental = (
        idx.tables.rel_idx.copy(),
        idx.tables.rel_val.copy(),
        np.flatnonzero(idx.tables.truncated).tolist(),
    )
    recompute_relations(idx.tables, idx.tables.live_ids())
    assert np.array_equal(incremental[0], idx.tables.rel_idx), rel
    assert np.allclose(incremental[1], idx.tables.rel_val, rtol=1e-12)
    assert incremental[2] == np.flatnonzero(idx.tables.truncated).tolist()


def test_hostile_files_are_skipped_or_parsed(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", use_git=False)
    (root / "blob.py").write_bytes(b"\x00\x01\x02binary\x00" * 100)
    (root / "latin.py").write_bytes(b"name = '\xe9t\xe9'\nvalue = 1\n")
    (root / "huge.py").write_text("x = '" + "a" * 5_000_000 + "'\n")
    (root / "broken.py").write_text("def broken(:\n    return [\n")
    os.symlink("loop_b.py", root / "loop_a.py")
    os.symlink("loop_a.py", root / "loop_b.py")
    idx, summary = RepoIndex.build(root, save=False)
    assert summary.skipped.get("binary") == 1
    assert summary.skipped.get("too_large") == 1
    assert summary.skipped.get("unreadable") == 2
    assert "latin.py" in idx.tables.files and "\ufffd" in idx.file_text("latin.py")
    assert "broken.py" in idx.tables.files


def test_incremental_relations_equal_recomputing_every_row(tmp_path: Path) -> None:
    """With caps biting, compare against recomputing all rows of the same index (same
    fragment ids, so ties at a cap break the same way): no affected row may be missed."""
    config = replace(IndexConfig(), node_neighbours=8, fragment_neighbours=4)
    root = make_repo(tmp_path / "r", OTHER_LANG_FILES, use_git=False)
    idx, summary = RepoIndex.build(root, config, save=False)
    assert summary.truncated_fragments > 0
    for rel, text in EDITS.items():
        idx.update_file(rel, text)
        assert_relations_as_recomputed(idx, rel)


def test_a_file_shrinking_and_growing_back_under_its_callers(tmp_path: Path) -> None:
    """Callers elsewhere gain and lose edges into a file whose node numbering changes."""
    many = long_module(30)
    user = (
        "from zz.many import func_29, func_3\n\n\ndef use(v):\n    return func_29(v) + func_3(v)\n"
    )
    root = make_repo(tmp_path / "r", {"zz/many.py": many, "pkg/user.py": user}, use_git=False)
    idx, _ = RepoIndex.build(root, EXACT, save=False)
    short = "\n".join(many.split("\n")[:20]) + "\n"
    idx.update_file("zz/many.py", short)
    idx.update_file("zz/many.py", many)
    fresh, _ = RepoIndex.build(root, EXACT, save=False)
    assert_same(idx, fresh, ["return func_29(v) + func_3(v)", "result -= 29"])


def test_build_in_a_threaded_process_parses_without_forking(tmp_path: Path) -> None:
    """A language server builds indexes from worker threads: forking then could hang."""
    files = {f"pkg/gen_{i}.py": f"def f_{i}(x):\n    return x + {i}\n" for i in range(80)}
    root = make_repo(tmp_path / "r", files, use_git=False)
    script = (
        "import sys, threading, time\n"
        "from pathlib import Path\n"
        "from repomem.index.repo import RepoIndex\n"
        "threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
        "idx, summary = RepoIndex.build(Path(sys.argv[1]), save=False)\n"
        "print(summary.reparsed)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(root)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) == len(list(root.rglob("*.py")))


RELINK_FILES = {
    "lib/first.py": "def helper(x):\n    y = x + 1\n    return y\n",
    "lib/second.py": "def helper(x):\n    z = x * 2\n    return z\n",
    "lib/reexport.py": "from lib.first import helper\n",
    "app/use.py": "from lib.reexport import helper\n\n\ndef use(v):\n    return helper(v)\n",
    "web/shared.js": "function shared(x) {\n  const y = x + 1;\n  return y;\n}\n",
    "web/main.js": "function main() {\n  const v = 2;\n  return shared(v);\n}\n",
}
# Each step re-links or drops a call between two files it leaves untouched: nodes whose own
# fragments stay the same, so only the changed edge between them says which relations change.
RELINK_EDITS: list[tuple[str, str | None]] = [
    ("lib/reexport.py", "from lib.second import helper\n"),  # app/use.py: first -> second
    ("web/other.js", "function shared(y) {\n  return y;\n}\n"),  # shared() is now ambiguous
    ("web/other.js", None),  # and unique again
    ("lib/reexport.py", "HELPER = None\n"),  # the call resolves to nothing
]


@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_calls_relinked_between_untouched_files_equal_a_rebuild(
    tmp_path: Path, config: IndexConfig
) -> None:
    root = make_repo(tmp_path / "r", RELINK_FILES, use_git=False)
    idx, _ = RepoIndex.build(root, config, save=False)
    for rel, text in RELINK_EDITS:
        before = {
            p: sorted(c) for p, c in idx.tables.calls.items() if p in ("app/use.py", "web/main.js")
        }
        apply_on_disk(root, {rel: text})
        idx.update_file(rel, text)
        after = {
            p: sorted(c) for p, c in idx.tables.calls.items() if p in ("app/use.py", "web/main.js")
        }
        assert before != after, rel  # the step did re-link a call of an untouched file
        fresh, _ = RepoIndex.build(root, config, save=False)
        assert_same(idx, fresh, ["return helper(v)", "return shared(v)"])


def hub_repo_files() -> dict[str, str]:
    """A much-called function (a hub), its callers, and a module grown around it."""
    files = {"core/check.py": long_module(6) + "\n\ndef check(value):\n    return bool(value)\n"}
    for i in range(12):
        files[f"users/u{i:02d}.py"] = (
            "from core.check import check, func_1\n\n\n"
            f"def user_{i}(v):\n    w = func_1(v) + {i}\n    return check(w)\n"
        )
    return files


HUB_EDITS: list[tuple[str, str | None]] = [
    # the hub's body changes, its nodes do not: the file keeps its ids, the callers their edges
    ("core/check.py", hub_repo_files()["core/check.py"].replace("bool(value)", "not not value")),
    # appended after the hub's definition: its node keeps its key
    ("core/check.py", hub_repo_files()["core/check.py"] + "\n\ndef later(x):\n    return x\n"),
    # inserted above it: windows and node positions after the edit all shift
    ("core/check.py", "import sys\n\n" + hub_repo_files()["core/check.py"]),
    # appended again: within the room the file was given, so its ids stay
    ("core/check.py", "import sys\n\n" + hub_repo_files()["core/check.py"] + "\nLATE = 1\n"),
    # grown past that room: the file moves, and its untouched callers' edges move with it
    (
        "core/check.py",
        "import sys\n\n"
        + hub_repo_files()["core/check.py"]
        + "".join(f"\n\ndef extra_{i}(x):\n    return x + {i}\n" for i in range(60)),
    ),
    ("users/u03.py", None),
    ("users/u99.py", "from core.check import check\n\n\ndef user_99(v):\n    return check(v)\n"),
    ("users/u04.py", "def user_4(v):\n    return v\n"),  # stops calling the hub
]


@pytest.mark.parametrize("import_weight", [0.0, 0.6])
@pytest.mark.parametrize("hub", [64, 4])
def test_updates_around_a_hub_equal_recomputing_and_rebuilding(
    tmp_path: Path, hub: int, import_weight: float
) -> None:
    config = replace(
        IndexConfig(),
        node_neighbours=8,
        fragment_neighbours=4,
        hub_degree=hub,
        import_weight=import_weight,
    )
    root = make_repo(tmp_path / "r", hub_repo_files(), use_git=False)
    idx, _ = RepoIndex.build(root, config, save=False)
    for rel, text in HUB_EDITS:
        apply_on_disk(root, {rel: text})
        idx.update_file(rel, text)
        assert_relations_as_recomputed(idx, rel)
        fresh, _ = RepoIndex.build(root, config, save=False)
        assert_same(idx, fresh, ["return check(w)", "def later(x)"])


# An untouched importer gains and loses its import edges as the modules it names come and go.
IMPORT_FILES = {
    "app/main.py": "from lib import later\nfrom lib.extra import extra\n\n\ndef run():\n"
    "    return 1\n",
    "lib/__init__.py": "",
    "lib/base.py": "def run():\n    return 2\n",
}
IMPORT_EDITS: list[tuple[str, str | None]] = [
    ("lib/later.py", "def later():\n    return 3\n"),  # from lib import later: the submodule
    ("lib/extra.py", "def extra():\n    return 4\n"),  # the second import resolves
    ("lib/later.py", None),  # gone again: the package
    ("lib/__init__.py", None),  # the package loses its root module
]


@pytest.mark.parametrize("config", [replace(EXACT, import_weight=0.6), IMPORTS])
def test_import_edges_follow_modules_appearing_and_going(
    tmp_path: Path, config: IndexConfig
) -> None:
    root = make_repo(tmp_path / "r", IMPORT_FILES, use_git=False)
    idx, _ = RepoIndex.build(root, config, save=False)
    for rel, text in IMPORT_EDITS:
        before = sorted(idx.tables.calls["app/main.py"])
        apply_on_disk(root, {rel: text})
        idx.update_file(rel, text)
        assert sorted(idx.tables.calls["app/main.py"]) != before, rel
        fresh, _ = RepoIndex.build(root, config, save=False)
        assert_same(idx, fresh, ["from lib import later\nfrom lib.extra import extra"])
        assert idx.tables.graph.edge_counts == fresh.tables.graph.edge_counts


def test_import_edges_join_a_file_to_the_modules_it_imports(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", use_git=False)
    plain, _ = RepoIndex.build(root, save=False)
    idx, _ = RepoIndex.build(root, IMPORTS, save=False)
    graph = idx.tables.graph
    assert "import" not in plain.tables.graph.edge_counts
    # pkg/core.py: ``import pkg.util as u`` and ``from pkg.util import ...``: one edge
    core_root, util_root = (
        graph.stmt_offset["pkg/core.py"] - 1,
        graph.stmt_offset["pkg/util.py"] - 1,
    )
    nbr, cost = graph.neighbours(core_root)
    assert cost[nbr == util_root] == pytest.approx([-math.log(0.6)])
    assert graph.edge_counts["import"] == sum(
        1 for calls in idx.tables.calls.values() for src, _, _ in calls if src == -1
    )
    # os is not in the repository: no edge, no entry
    assert all(t in idx.tables.parsed for calls in idx.tables.calls.values() for _, t, _ in calls)


C_LIB = "int helper_a(int x) {\n  return x + 1;\n}\n\nint helper_b(int y) {\n  return y * 2;\n}\n"
C_FILES = {
    "lib/lib.c": C_LIB,
    **{
        f"app/use{i}.c": f"int use{i}(int v) {{\n  int w = helper_a(v);\n"
        "  return helper_b(w);\n}\n"
        for i in range(4)
    },
}
# each step changes what some definitions of lib/lib.c are, or none of them
C_EDITS: list[tuple[str, str | None, set[str]]] = [
    # appended: the others keep their nodes, their callers resolve as they did
    ("lib/lib.c", C_LIB + "\nint added(int z) {\n  return z;\n}\n", {"lib/lib.c"}),
    # inserted above them: every definition moves to another node, every caller follows
    # it without being resolved again
    ("lib/lib.c", "int first(int z) {\n  return z;\n}\n\n" + C_LIB, {"lib/lib.c"}),
    ("lib/lib.c", C_LIB.replace("helper_b", "helper_c"), {"lib/lib.c"} | set(C_FILES)),
    # a second helper_a elsewhere: the name is ambiguous and its calls resolve to nothing
    (
        "lib/more.c",
        "int helper_a(int q) {\n  return q;\n}\n",
        set(C_FILES) - {"lib/lib.c"} | {"lib/more.c"},
    ),
]


def recorded_resolutions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files whose calls are resolved again from now on, in order."""
    resolved: list[str] = []
    calls_of = Resolver.calls_of
    monkeypatch.setattr(
        Resolver, "calls_of", lambda r, p, *rows: (resolved.append(p), calls_of(r, p, *rows))[1]
    )
    return resolved


def test_c_callers_are_resolved_again_only_for_definitions_that_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file resolved by name (C here): only the callers of a definition that appeared,
    went or moved to another node resolve their calls again; appending a function to a
    file whose functions thousands of files call re-resolved all of them."""
    root = make_repo(tmp_path / "r", C_FILES, use_git=False)
    idx, _ = RepoIndex.build(root, EXACT, save=False)
    resolved = recorded_resolutions(monkeypatch)
    for rel, text, again in C_EDITS:
        resolved.clear()
        apply_on_disk(root, {rel: text})
        idx.update_file(rel, text)
        assert set(resolved) == again, rel
        fresh, _ = RepoIndex.build(root, EXACT, save=False)
        assert_same(idx, fresh, ["return helper_b(w);", "int helper_a(int x)"])


HEADER = (
    "#ifndef EXPORT_H\n#define EXPORT_H\n\n#define EXPORT(sym) extern int sym##_k\n\n"
    "int put(int v);\n\nstatic inline int get(int v) {\n  return v;\n}\n\n"
    "#ifdef FAST\n#define pick(v) (v)\n#else\n"
    "static inline int pick(int v) {\n  return -v;\n}\n#endif\n\n"
    "struct box {\n  int v;\n};\n\n#endif\n"
)
HEADER_FILES = {
    "include/export.h": HEADER,
    "lib/put.c": "#include <export.h>\n\nint put(int v) {\n  return get(v);\n}\n",
    **{
        f"app/use{i}.c": "#include <export.h>\n\nint use{i}(int v) {{\n"
        "  EXPORT(v);\n  return put(get(pick(v)));\n}}\n".replace("{i}", str(i))
        for i in range(4)
    },
}
USERS = {"lib/put.c", *(f"app/use{i}.c" for i in range(4))}
# edits of the header: what only moves its definitions resolves nothing but the header again
HEADER_EDITS: list[tuple[str, set[str]]] = [
    # a function typed in above the others: every definition after it moves
    (HEADER.replace("int put(", "static int typed(int v) { return get(v); }\nint put("), set()),
    # and a comment above all of them
    ("/* export */\n" + HEADER, set()),
    # two definitions of different names change places: each still means what it meant
    (
        HEADER.replace("int put(int v);\n\n", "").replace(
            "#ifdef FAST", "int put(int v);\n\n#ifdef FAST"
        ),
        set(),
    ),
    # the #if alternatives change places: the macro is at another node, not as a move
    (
        HEADER.replace("#ifdef FAST\n#define pick(v) (v)\n#else\n", "#ifndef FAST\n").replace(
            "return -v;\n}\n#endif", "return -v;\n}\n#else\n#define pick(v) (v)\n#endif"
        ),
        set(USERS) - {"lib/put.c"},
    ),
    # the prototype turned into a macro, above the others
    (HEADER.replace("int put(int v);", "#define put(v) (v)"), set(USERS) - {"lib/put.c"}),
]


@pytest.mark.parametrize("loaded", [False, True], ids=["built", "loaded"])
def test_c_definitions_that_only_move_keep_their_callers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loaded: bool
) -> None:
    """A line typed into a header that hundreds of files include moves the nodes of the
    definitions below it: their callers' calls follow them, as a rebuild resolves them,
    without those files being resolved again (the Linux kernel's ``export.h``: ~440
    files, 14-35 s an edit); a change of which definition a name means resolves them."""
    root = make_repo(tmp_path / "r", HEADER_FILES, use_git=False)
    config = replace(EXACT, index_dir=str(tmp_path / "index"))
    idx, _ = RepoIndex.build(root, config, save=loaded)
    if loaded:
        idx = RepoIndex.load(root, config)
    resolved = recorded_resolutions(monkeypatch)
    for text, again in HEADER_EDITS:
        before = {p: idx.tables.calls[p] for p in USERS}
        resolved.clear()
        apply_on_disk(root, {"include/export.h": text})
        idx.update_file("include/export.h", text)
        assert set(resolved) == {"include/export.h"} | again
        if loaded:  # the callers that followed were set packed, not held to the next pause
            followed = [p for p in USERS if p not in resolved]
            assert followed and not idx.tables.calls._set & set(followed)
        fresh, _ = RepoIndex.build(root, EXACT, save=False)
        assert_same(idx, fresh, ["return put(get(pick(v)));", "static inline int get(int v)"])
        assert idx.tables.graph.edge_counts == fresh.tables.graph.edge_counts
        assert any(idx.tables.calls[p] != before[p] for p in USERS)  # the calls moved


CPP_HEADER = (
    "#pragma once\n\nnamespace geo {\n\nint scale(int v);\n\nclass Box {\n public:\n"
    "  int area() const { return 1; }\n};\n\n}  // namespace geo\n"
)
CPP_FILES = {
    "geo/box.hpp": CPP_HEADER,
    **{
        f"app/use{i}.cpp": '#include "../geo/box.hpp"\n\nint use(geo::Box b) {\n'
        "  return geo::scale(b.area());\n}\n"
        for i in range(3)
    },
}


def test_cpp_methods_that_only_move_keep_their_callers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """C++ shares C's resolution: a function typed in above a namespace's declarations and
    a class's methods moves them, and their callers follow without being resolved again."""
    root = make_repo(tmp_path / "r", CPP_FILES, use_git=False)
    idx, _ = RepoIndex.build(root, EXACT, save=False)
    resolved = recorded_resolutions(monkeypatch)
    before = dict(idx.tables.calls)
    text = CPP_HEADER.replace("int scale(", "inline int typed(int v) { return v; }\nint scale(")
    apply_on_disk(root, {"geo/box.hpp": text})
    idx.update_file("geo/box.hpp", text)
    assert resolved == ["geo/box.hpp"]
    fresh, _ = RepoIndex.build(root, EXACT, save=False)
    assert_same(idx, fresh, ["return geo::scale(b.area());"])
    assert all(idx.tables.calls[p] != before[p] for p in CPP_FILES if p != "geo/box.hpp")


def test_a_statement_calling_a_function_twice_has_one_edge(tmp_path: Path) -> None:
    files = {
        "a.py": "def f(x):\n    return x\n",
        "b.py": "from a import f\n\n\ndef g():\n    return f(1) + f(2)\n",
    }
    root = write_files(tmp_path / "r", files)
    idx, _ = RepoIndex.build(root, EXACT, save=False)
    assert idx.tables.calls["b.py"] == [(2, "a.py", 0)]
    apply_on_disk(root, {"b.py": files["b.py"] + "\n"})
    idx.update_file("b.py", files["b.py"] + "\n")
    fresh, _ = RepoIndex.build(root, EXACT, save=False)
    assert_same(idx, fresh, ["return f(1) + f(2)"])


def test_a_nested_class_changing_its_bases_re_resolves_calls_through_it(tmp_path: Path) -> None:
    files = {
        "base.py": "class X:\n    def m(self):\n        return 1\n\n\n"
        "class Y:\n    def m(self):\n        return 2\n",
        "a.py": "from base import X, Y\n\n\nclass A:\n    class B(X):\n        pass\n",
        "use.py": "from a import A\n\n\ndef u():\n    return A.B.m(None)\n",
    }
    root = write_files(tmp_path / "r", files)
    idx, _ = RepoIndex.build(root, EXACT, save=False)

    def targets() -> list[str]:
        return [idx.resolver.qualnames[t][n] for _, t, n in idx.tables.calls["use.py"]]

    assert targets() == ["X.m"]
    text = files["a.py"].replace("class B(X)", "class B(Y)")
    apply_on_disk(root, {"a.py": text})
    idx.update_file("a.py", text)
    assert targets() == ["Y.m"]
    assert_same(idx, RepoIndex.build(root, EXACT, save=False)[0], ["return A.B.m(None)"])


STAR_FILES = {
    "pkg/__init__.py": "from pkg.core import *\nfrom pkg.extra import *\n",
    "pkg/core.py": "class Graph:\n    def add(self, x):\n        return x\n\n\n"
    "def _hidden():\n    return 0\n",
    "pkg/extra.py": "def grow(g):\n    return g\n",
    "use.py": "import pkg\n\n\ndef u():\n    g = pkg.Graph()\n    pkg._hidden()\n"
    "    return pkg.grow(g), pkg.later(g)\n",
}


def test_names_resolve_through_star_imports_and_follow_their_modules(tmp_path: Path) -> None:
    root = write_files(tmp_path / "r", STAR_FILES)
    idx, _ = RepoIndex.build(root, EXACT, save=False)

    def targets() -> set[str]:
        return {idx.resolver.qualnames[t][n] for _, t, n in idx.tables.calls["use.py"]}

    # ``from pkg.core import *`` brings Graph, not the private _hidden
    assert targets() == {"Graph", "grow"}
    steps = [
        # a star module gains the name a caller looked up
        ("pkg/extra.py", STAR_FILES["pkg/extra.py"] + "\n\ndef later(g):\n    return g\n"),
        # a star import goes: what it brought goes with it
        ("pkg/__init__.py", "from pkg.core import *\n"),
        # and comes back with a module that does not exist yet, then does
        ("pkg/__init__.py", "from pkg.core import *\nfrom pkg.more import *\n"),
        ("pkg/more.py", "def grow(g):\n    return [g]\n"),
    ]
    expected = [
        {"pkg/core.py:Graph", "pkg/extra.py:grow", "pkg/extra.py:later"},
        {"pkg/core.py:Graph"},
        {"pkg/core.py:Graph"},
        {"pkg/core.py:Graph", "pkg/more.py:grow"},
    ]
    for (rel, text), want in zip(steps, expected, strict=True):
        apply_on_disk(root, {rel: text})
        idx.update_file(rel, text)
        assert {
            f"{t}:{idx.resolver.qualnames[t][n]}" for _, t, n in idx.tables.calls["use.py"]
        } == want
        assert_same(idx, RepoIndex.build(root, EXACT, save=False)[0], ["return pkg.grow(g)"])


SHADOWED = {
    "src/lib/__init__.py": "class App:\n    def run(self):\n        return 1\n",
    "tests/apps/__init__.py": "",
    "tests/apps/inner/__init__.py": "",
    "tests/apps/inner/lib.py": "class App:\n    def run(self):\n        return 2\n",
    "tests/test_app.py": "import lib\n\n\ndef test_run():\n    return lib.App().run()\n",
}


def test_an_absolute_import_takes_the_module_nearest_the_top(tmp_path: Path) -> None:
    root = write_files(tmp_path / "r", SHADOWED)
    idx, _ = RepoIndex.build(root, EXACT, save=False)

    def target() -> set[str]:
        return {t for _, t, _ in idx.tables.calls["tests/test_app.py"]}

    # ``lib`` is src/lib, a root's package, not the test app's tests/apps/inner/lib.py
    assert target() == {"src/lib/__init__.py"}
    steps: list[tuple[str, str | None, set[str]]] = [
        ("lib/__init__.py", SHADOWED["src/lib/__init__.py"], {"lib/__init__.py"}),
        ("lib/__init__.py", None, {"src/lib/__init__.py"}),
        ("tests/lib.py", SHADOWED["src/lib/__init__.py"], set()),  # as near as src/lib: none
    ]
    for rel, text, want in steps:
        apply_on_disk(root, {rel: text})
        idx.update_file(rel, text)
        assert target() == want
        assert_same(idx, RepoIndex.build(root, EXACT, save=False)[0], ["return lib.App().run()"])


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("a\nb\n", ["a", "b"]),
        ("a\nb", ["a", "b"]),
        ("a\r\nb\r\n\nc", ["a", "b", "", "c"]),
        ("a\nb\r\n", ["a", "b"]),  # mixed line ends: a CRLF line loses its ``\r``
        ("a\rb\n", ["a\rb"]),  # a lone ``\r`` inside a line is no line end
        ("\n", [""]),
        ("", [""]),
    ],
)
def test_lines_are_split_as_tree_sitter_counts_rows(text: str, lines: list[str]) -> None:
    assert split_lines(text) == lines


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n",
        "a",
        "a\n",
        "a\n\n",
        "\n\nb",
        "a\r\nb\r\n\nc",
        "a\rb\r\r\n",
        "é\nü\n𝄞",
        "\ud800\nx\n",
        "ab\n" * 300 + "\n\nlong\r\n" * 7 + "last",
    ],
)
def test_lines_decoded_as_read_are_the_split_lines(text: str) -> None:
    """A file's lines read one at a time or by slices from its UTF-8 (``Lines``) are the
    lines ``split_lines`` gives, whatever the line ends, a final newline or the encoding,
    and whether the UTF-8 is bytes or a view (of a saved index's map)."""
    expected = split_lines(text)
    encoded = text.encode("utf-8", "surrogatepass")
    # the UTF-8 or a view of it, its newlines found by a scan or as a saved index keeps them
    saved = newline_positions(encoded)
    # (a mapped index's text is a view of a uint8 array)
    for data in (encoded, memoryview(encoded), memoryview(np.frombuffer(encoded, np.uint8))):
        for newlines in (None, saved):
            lines = Lines(data, newlines)
            assert len(lines) == len(expected)
            assert list(lines) == [lines[i] for i in range(len(lines))] == expected
            assert lines[-1] == expected[-1]
            for first in range(-1, len(expected) + 2):
                for last in range(-1, len(expected) + 2):
                    assert lines[first:last] == expected[first:last]
            assert lines[::2] == expected[::2]
            with pytest.raises(IndexError):
                lines[len(expected)]
            # the row of each byte: as many as the newlines before it
            rows = [encoded[:at].count(b"\n") for at in range(len(encoded) + 1)]
            assert [lines.row_at(at) for at in range(len(encoded) + 1)] == rows


def test_a_loaded_resolver_keeps_one_compact_record_per_file_resolved_again(
    tmp_path: Path,
) -> None:
    """What a file's resolution read and tried is kept once per file resolved again, its
    keys shared between files, and forgetting it (the file resolved anew, or gone) leaves
    no empty entries behind: a header edit resolving hundreds of files again would
    otherwise keep their fresh strings, and every key any of them ever tried, for good. The
    names looked up in the saved table are forgotten at a tidy."""
    root = make_repo(tmp_path / "r", {**OTHER_LANG_FILES, **NAMED_C})
    RepoIndex.build(root)
    loaded = RepoIndex.load(root)
    resolver = loaded.resolver
    for text in NAMED_C_EDITS["c/b.c"], NAMED_C["c/b.c"], NAMED_C_EDITS["c/b.c"]:
        loaded.update_file("c/b.c", text)
    loaded.update_file("c/use.c", NAMED_C["c/use.c"] + "\nint more(void) { return b2(); }\n")
    assert set(resolver._tried_by) >= {"c/b.c", "c/use.c"}
    assert all(isinstance(keys, tuple) for keys in resolver._tried_by.values())
    shared = set(resolver._tried_by["c/b.c"]) & set(resolver._tried_by["c/use.c"])
    assert shared
    for key in shared:
        at_b = resolver._tried_by["c/b.c"][resolver._tried_by["c/b.c"].index(key)]
        at_use = resolver._tried_by["c/use.c"][resolver._tried_by["c/use.c"].index(key)]
        assert at_b is at_use  # one string
    loaded.update_file("c/b.c", None)
    assert "c/b.c" not in resolver._tried_by
    assert all(resolver.callers.values()) and all(resolver.readers.values())
    assert all("c/b.c" not in files for files in resolver.callers.values())
    assert resolver.by_name._found
    loaded.tidy()
    assert not resolver.by_name._found

"""One file's change applied to an index's tables (repomem.index.update): the result equals
a rebuild over the changed files, and a change that changes nothing is reported as such."""

from __future__ import annotations

from pathlib import Path

import pytest
from repos import PY_FILES, make_repo, write_files

from repomem.index.langs import for_language
from repomem.index.parsing import TreeCache
from repomem.index.repo import RepoIndex
from repomem.index.rowpool import RowPool
from repomem.index.tables import IndexTables
from repomem.index.trim import map_under
from repomem.index.update import update_file

CORE = PY_FILES["pkg/core.py"]
CHANGED = CORE.replace("value = helper(1)", "value = helper(1) + Base().name()")
QUERIES = ["value = helper(1)", "Base().name()", "def compute(items):"]


def _state(t: IndexTables) -> tuple[dict, dict, dict, list]:
    """What the tables hold, keyed by text and path (ids may differ between builds)."""
    frags = {
        t.frag_text[i]: sorted((loc.path, loc.start, loc.end) for loc in t.frag_locs[i])
        for i in t.live_ids().tolist()
    }
    rel = t.relations.tocoo()
    rels = {
        (t.frag_text[i], t.frag_text[j]): round(float(v), 9)
        for i, j, v in zip(rel.row, rel.col, rel.data, strict=True)
    }
    calls = {p: sorted(c) for p, c in t.calls.items() if c}
    return frags, rels, calls, sorted(t.files)


def _rebuilt(tmp_path: Path, files: dict[str, str], name: str) -> RepoIndex:
    root = make_repo(tmp_path / name, files, use_git=False)
    return RepoIndex.build(root, save=False)[0]


def _hits(index: RepoIndex) -> list[list[tuple]]:
    return [[(f.locations, round(f.s_rel, 9)) for f in index.retrieve(q, k=5)] for q in QUERIES]


def test_a_changed_file_equals_a_rebuild(tmp_path: Path) -> None:
    index = _rebuilt(tmp_path, PY_FILES, "edited")
    before = _state(index.tables)
    assert update_file(index.tables, TreeCache(), "pkg/core.py", CHANGED)
    rebuilt = _rebuilt(tmp_path, {**PY_FILES, "pkg/core.py": CHANGED}, "rebuilt")
    assert _state(index.tables) == _state(rebuilt.tables) != before
    index.revision += 1  # what RepoIndex.update_file does: the kept scores are stale
    assert _hits(index) == _hits(rebuilt)


def test_a_long_session_keeps_the_c_tables_of_the_files_it_reads_lately(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Typing into one C file after another, a pause after each: the resolver's tables of
    the files left behind go once unread for ``_IDLE`` pauses (within 512 files they stayed
    however long unread, and a session filled towards the bound), and what the index holds
    equals a rebuild's."""
    monkeypatch.setattr("repomem.index.names._IDLE", 2)
    n = 8
    files = {f"inc/h{i}.h": f"int f{i}(int v);\n" for i in range(n)}
    files |= {
        f"src/m{i}.c": f'#include "../inc/h{i}.h"\nint g{i}(int v) {{ return f{i}(v); }}\n'
        for i in range(n)
    }
    root = make_repo(tmp_path / "edited", files, use_git=False)
    RepoIndex.build(root)
    index = RepoIndex.load(root)
    tables = for_language("c").tables(index.resolver).files  # type: ignore[attr-defined]
    texts = dict(files)
    kept = []
    for i in range(n):
        path = f"src/m{i}.c"
        texts[path] += f"int t{i}(int v) {{ return f{i}(v) + g{i}(v); }}\n"
        index.update_file(path, texts[path])
        index.tidy()
        kept.append(len(tables._made))
    assert max(kept) <= 4  # the last two edited files' and their headers'
    assert _state(index.tables) == _state(_rebuilt(tmp_path, texts, "rebuilt").tables)


def test_a_removed_and_an_added_file_equal_a_rebuild(tmp_path: Path) -> None:
    index = _rebuilt(tmp_path, PY_FILES, "edited")
    trees = TreeCache()
    assert update_file(index.tables, trees, "pkg/sub/mod.py", None)
    extra = "from pkg.util import helper\n\n\ndef use():\n    return helper(5)\n"
    assert update_file(index.tables, trees, "pkg/extra.py", extra)
    files = {k: v for k, v in PY_FILES.items() if k != "pkg/sub/mod.py"}
    root = make_repo(tmp_path / "rebuilt", files, use_git=False)
    (root / "pkg/sub/mod.py").unlink()
    write_files(root, {"pkg/extra.py": extra})
    rebuilt = RepoIndex.build(root, save=False)[0]
    assert _state(index.tables) == _state(rebuilt.tables)
    assert "pkg/sub/mod.py" not in index.tables.files


def test_the_same_text_or_a_file_never_indexed_changes_nothing(tmp_path: Path) -> None:
    index = _rebuilt(tmp_path, PY_FILES, "r")
    before = _state(index.tables)
    trees = TreeCache()
    assert not update_file(index.tables, trees, "pkg/core.py", CORE)
    assert not update_file(index.tables, trees, "notes.txt", "plain text\n")  # not code
    assert not update_file(index.tables, trees, "pkg/absent.py", None)  # never there
    assert _state(index.tables) == before


def test_a_file_typed_past_its_node_ids_moves_without_copying_every_node_array(
    tmp_path: Path,
) -> None:
    """A file that outgrows its node ids moves to new ones at the end of the graph; the
    per-node arrays grow with room to spare, not at each move (on the Linux kernel's subset
    each move copied eight 15 MB arrays), and the index still equals a rebuild."""
    filler = {
        f"pkg/filler_{k}.py": "".join(f"def f{j}(x):\n    return x + {j}\n\n\n" for j in range(12))
        for k in range(80)
    }
    index = _rebuilt(tmp_path, {**PY_FILES, **filler}, "typed")
    graph = index.tables.graph
    text, moves, copies = CORE, 0, 0
    for i in range(40):
        text += f"\n\ndef typed_{i}(v):\n    return helper(v) + {i}\n"
        offset, key = graph.stmt_offset["pkg/core.py"], graph.key
        index.update_file("pkg/core.py", text)
        moves += graph.stmt_offset["pkg/core.py"] != offset
        copies += graph.key is not key
    assert moves >= 4
    assert copies <= 1  # the first move makes room for the later ones
    # grown into pages of their own, which a pause moves to a file and hands back
    maps = {id(m) for m in index.tables.row_maps()}
    assert all(id(map_under(a)) in maps for a in (graph.key, index.tables.radius))
    rebuilt = _rebuilt(tmp_path, {**PY_FILES, **filler, "pkg/core.py": text}, "rebuilt")
    assert _state(index.tables) == _state(rebuilt.tables)
    assert _hits(index) == _hits(rebuilt)


def test_a_loaded_index_compacts_its_relations_by_target_where_they_lie(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Typing into a loaded index moves the relations by target of the fragments the new
    code relates to until their pool is full; it is compacted in its mapped array (no copy
    of it is made) while the live relations fit there, and the index equals a rebuild."""
    files = {
        **PY_FILES,
        **{
            f"pkg/chain_{k}.py": "".join(
                f"def f{j}_{k}(x):\n    return f{max(j - 1, 0)}_{k}(x) + {j * k}\n\n\n"
                for j in range(12)
            )
            for k in range(60)
        },
    }
    root = make_repo(tmp_path / "typed", files, use_git=False)
    RepoIndex.build(root)
    index = RepoIndex.load(root)
    index.warm()
    mapped = index.tables.inverse_relations.cols
    in_place: list[bool] = []
    compact = RowPool.compact

    def compact_and_see(pool: RowPool, room: int = 0, **kw: bool) -> None:
        compact(pool, room, **kw)
        in_place.append(pool.cols is mapped)

    monkeypatch.setattr(RowPool, "compact", compact_and_see)
    text = files["pkg/chain_5.py"]
    for i in range(40):
        text += f"\n\ndef typed_{i}(v):\n    return f3_5(v) + {i}\n"
        index.update_file("pkg/chain_5.py", text)
    assert in_place[0]  # the first compaction found room where the pool lies
    rebuilt = _rebuilt(tmp_path, {**files, "pkg/chain_5.py": text}, "rebuilt")
    assert _state(index.tables) == _state(rebuilt.tables)
    assert _hits(index) == _hits(rebuilt)

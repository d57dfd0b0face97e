"""The index as a handle over its tables: the store writes and reads exactly the tables, the
handle's typed API answers from them, and nothing outside the index reads them."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import numpy as np
import pytest
from repos import PY_FILES, make_repo

from repomem.core import Exclusion
from repomem.index import store
from repomem.index.files import RepositoryRootError
from repomem.index.repo import RepoIndex
from repomem.index.tables import IndexTables

ROOT = Path(__file__).resolve().parents[2]  # the repository: tests/index/ is two below


def test_the_store_reads_back_the_tables_it_wrote(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", PY_FILES, use_git=False)
    built, _ = RepoIndex.build(root)
    tables = store.load(root)
    assert isinstance(tables, IndexTables) and tables.config == built.config
    assert sorted(tables.files) == sorted(built.tables.files)
    assert [tables.frag_text[i] for i in tables.live_ids()] == [
        built.tables.frag_text[i] for i in built.tables.live_ids()
    ]
    assert {p: sorted(c) for p, c in tables.calls.items()} == {
        p: sorted(c) for p, c in built.tables.calls.items()
    }
    assert np.array_equal(tables.rel_idx, built.tables.rel_idx)
    # a saved file's calls are read from the saved rows in place, none of them made
    fresh = store.load(root)
    saved = RepoIndex(root, fresh).resolved_calls("pkg/core.py")
    assert "pkg/core.py" not in fresh.calls._made  # type: ignore[attr-defined]
    assert _call_list(saved) == _call_list(built.resolved_calls("pkg/core.py"))
    assert sorted(_call_list(saved)) == sorted(built.tables.calls["pkg/core.py"])
    # every part of a saved parse reads back as built, each decoded when first read: the
    # resolver's tables of a file read its definitions' columns, making no Definition
    columns = fresh.resolver.qualnames["pkg/util.py"]
    assert fresh.parsed["pkg/util.py"]._columns is not None  # type: ignore[attr-defined]
    assert columns == {d.node: d.name for d in built.tables.parsed["pkg/util.py"].definitions}
    fields = ("definitions", "imports", "import_nodes", "bases", "package", "has_error")
    for path, pf in built.tables.parsed.items():
        loaded_pf = fresh.parsed[path]
        assert loaded_pf.definition_columns() == pf.definition_columns()
        assert [getattr(loaded_pf, f) for f in fields] == [getattr(pf, f) for f in fields]
        assert loaded_pf.call_heads() == pf.call_heads() and loaded_pf.calls == pf.calls
        # a copy with a field replaced (the splicer's) keeps every other field
        copy = dataclasses.replace(store.load(root).parsed[path], package="p")
        assert [getattr(copy, f) for f in fields[:-2]] == [getattr(pf, f) for f in fields[:-2]]
        assert copy.package == "p" and copy.definition_columns() == pf.definition_columns()
    # the resolver reads the tables' saved parse, not a second one decoded for it
    assert fresh.resolver.defs["pkg/util.py"] == built.tables.resolver.defs["pkg/util.py"]
    assert fresh.resolver.files["pkg/util.py"] is fresh.parsed["pkg/util.py"]
    query = "value = helper(1)"
    loaded = RepoIndex(root, tables)
    assert [f.fragment_id for f in loaded.retrieve(query)] == [
        f.fragment_id for f in built.retrieve(query)
    ]


def test_a_saved_parse_finds_definitions_in_its_columns_as_a_built_one_does(
    tmp_path: Path,
) -> None:
    """A card or a cursor's class reads a few of a file's definitions: a saved parse finds
    them in its saved columns, making no ``Definition`` for the others, and answers as the
    built parse does (overloads of one name, nested classes, methods), before and after its
    definitions are decoded whole."""
    overloads = (
        "from typing import overload\n\n\n@overload\ndef f(x: int) -> int: ...\n\n\n"
        "@overload\ndef f(x: str) -> str: ...\n\n\ndef f(x):\n    return x\n\n\n"
        "class A:\n    class Inner:\n        def deep(self):\n            pass\n\n"
        "    def m(self):\n        pass\n\n    def _hidden(self):\n        pass\n\n\n"
        "class AB:\n    def m(self):\n        pass\n"
    )
    root = make_repo(tmp_path / "r", {"pkg/over.py": overloads}, use_git=False)
    built, _ = RepoIndex.build(root)
    fresh = store.load(root)
    for path, pf in built.tables.parsed.items():
        saved = fresh.parsed[path]
        for decoded in (False, True):
            if decoded:
                assert saved.definitions == pf.definitions  # decoded whole
            for d in pf.definitions:
                assert saved.find_definition(d.name) == pf.find_definition(d.name)
                assert saved.find_definition(d.name, d.node) == d
                assert saved.find_definition(d.name, -1) is None
                assert saved.members(d.name) == pf.members(d.name)
            assert saved.find_definition("missing") is None
            assert saved.class_definitions() == pf.class_definitions()
            assert (saved._columns is None) == decoded  # type: ignore[attr-defined]
    over = built.tables.parsed["pkg/over.py"]
    nodes = [d.node for d in over.definitions if d.name == "f"]
    assert len(nodes) == 3 and fresh.parsed["pkg/over.py"].find_definition("f", nodes[2]) == (
        "f",
        nodes[2],
        False,
    )
    assert [d.name for d in over.members("A")] == ["A.Inner", "A.Inner.deep", "A.m", "A._hidden"]
    assert [d.name for d in over.class_definitions()] == ["A", "A.Inner", "AB"]


def _call_list(found: tuple[list[str], np.ndarray]) -> list[tuple[int, str, int]]:
    targets, rows = found
    return [(s, targets[f], n) for s, f, n in rows.tolist()]


def test_the_handle_answers_from_its_tables(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", PY_FILES, use_git=False)
    index, summary = RepoIndex.build(root, save=False)
    t = index.tables
    assert "pkg/util.py" in index and "missing.py" not in index
    assert index.file_count == len(t.files) and set(PY_FILES) <= set(t.files)
    assert index.fragment_count == summary.fragments
    assert index.fragment_slots == len(index.visible(None)) == index.query_scores("x").size
    assert [(p, lang) for p, lang, _ in index.indexed_files()] == [(p, "python") for p in t.files]
    assert index.parse("pkg/util.py") is t.parsed["pkg/util.py"] and index.parse("no.py") is None
    assert dict(index.parses()) == dict(t.parsed)
    assert _call_list(index.resolved_calls("pkg/core.py")) == list(t.calls["pkg/core.py"])
    helper = next(d.node for d in t.parsed["pkg/util.py"].definitions if d.name == "helper")
    callers = index.callers("pkg/util.py")
    assert "pkg/core.py" in callers and helper in callers["pkg/core.py"][:, 1]
    # the fragments calling helper() from core.py, and none from util.py itself (Base.run)
    calling = index.calling_fragments("pkg/util.py", helper, outside="pkg/util.py")
    assert calling.size and all(
        any(loc.path != "pkg/util.py" for loc in index.fragment_locations(f)) for f in calling
    )
    line = 7  # ``value = helper(1)`` in core.py
    assert "helper(1)" in index.file_lines("pkg/core.py")[line]
    at_line = index.fragments_at_line("pkg/core.py", line)
    assert at_line.size and all("helper(1)" in index.fragment_text(f) for f in at_line)
    assert set(calling) & set(at_line)
    assert index.fragments_at_line("missing.py", 0).size == 0
    # a changed file: the handle answers from the tables as they are now
    index.update_file("pkg/core.py", PY_FILES["pkg/core.py"].replace("helper(1)", "helper(7)"))
    assert index.revision == 1
    assert "helper(7)" in index.file_text("pkg/core.py")
    now = index.fragments_at_line("pkg/core.py", line)
    assert not set(now) & set(at_line) and all("helper(7)" in index.fragment_text(f) for f in now)
    assert index.visible(None)[now].all() and not index.visible(None)[at_line].any()
    assert not index.visible(Exclusion("pkg/core.py", 0, 30))[now].any()


TABLE_READERS = {"eval/repomem_eval/fragrel_report.py", "eval/bench_topk.py"}


def test_nothing_outside_the_index_reads_its_tables() -> None:
    """The context engine, completion, front ends and eval read the index through the
    handle's API; only the FragRel report reads the relation tables it reports on, and the
    top-k benchmark the BM25 table it measures."""
    readers = []
    for folder in ("repomem", "lsp_server", "eval"):
        for path in (ROOT / folder).rglob("*.py"):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith("repomem/index/") or rel in TABLE_READERS:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            if any(isinstance(n, ast.Attribute) and n.attr == "tables" for n in ast.walk(tree)):
                readers.append(rel)
    assert readers == []


@pytest.mark.parametrize("save", [True, False])
def test_a_missing_root_is_an_error_and_stays_missing(tmp_path: Path, save: bool) -> None:
    """The index folder inside the root is made only once the root is known to exist: a
    build of a folder since removed must neither recreate it nor index it as empty."""
    root = tmp_path / "removed"
    with pytest.raises(RepositoryRootError, match="does not exist"):
        RepoIndex.build(root, save=save)
    assert not root.exists()


_FIRST_EDIT = """
import sys, time
from pathlib import Path
from repomem.index import relations, rowpool
from repomem.index.repo import RepoIndex

idx = RepoIndex.load(Path(sys.argv[1]))
idx.warm()
kernels = (relations._relations_kernel, relations._ball_kernel, rowpool._add, rowpool._remove)
loaded = [bool(k.signatures) for k in kernels]
made = []
take = relations._Scratch._made
relations._Scratch._made = staticmethod(lambda n, f: made.append(n) or take(n, f))
idx.update_file("pkg/util.py", Path(sys.argv[1], "pkg/util.py").read_text() + "\\nX = 1\\n")
print(loaded, made)
"""


def test_warming_loads_the_kernels_and_scratch_a_first_edit_runs(tmp_path: Path) -> None:
    """A warmed index's first edit loads no compiled kernel and makes no search arrays (on
    the kernel subset ~0.35 s and ~0.1 s of it), in a fresh process: the tests' own have
    loaded them already."""
    import subprocess
    import sys

    root = make_repo(tmp_path / "r", PY_FILES, use_git=False)
    RepoIndex.build(root)
    done = subprocess.run(
        [sys.executable, "-c", _FIRST_EDIT, str(root)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert done.stdout.split() == ["[True,", "True,", "True,", "True]", "[]"]


def test_warming_again_does_not_load_the_kernels_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kernels are loaded once per process: a process that warms after each update (the
    evaluation's buffer swaps) spent ~0.3-0.8 s a swap indexing the warm-up files again."""
    root = make_repo(tmp_path / "r", PY_FILES, use_git=False)
    idx, _ = RepoIndex.build(root, save=False)
    idx.warm()
    builds: list[Path] = []
    build = RepoIndex.build
    monkeypatch.setattr(
        RepoIndex, "build", lambda root, *a, **k: builds.append(root) or build(root, *a, **k)
    )
    idx.update_file("pkg/util.py", (root / "pkg/util.py").read_text() + "\nX = 1\n")
    idx.warm()
    assert builds == []

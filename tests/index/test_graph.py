"""The code graph: FragRel A.1 edge kinds and weights, import-aware call resolution."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from repos import OTHER_LANG_FILES, make_repo, parsed_fields

from repomem.index.fragments import (
    Window,
    one_window_nodes,
    window_bounds,
    window_nodes,
    windows,
)
from repomem.index.parsing import (
    TreeCache,
    _edit,
    line_lengths,
    newline_positions,
    parse_source,
    split_lines,
    text_line_lengths,
)
from repomem.index.repo import RepoIndex
from repomem.index.resolve import Resolver, moved_definitions


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> RepoIndex:
    root = make_repo(tmp_path_factory.mktemp("graph") / "repo", OTHER_LANG_FILES)
    idx, _ = RepoIndex.build(root, save=False)
    return idx


def bounds(wins: list[Window]) -> tuple[np.ndarray, np.ndarray]:
    return np.array([w.start for w in wins], np.int32), np.array([w.end for w in wins], np.int32)


def node_at(idx: RepoIndex, path: str, line: int) -> int:
    """Global id of the statement owning a 1-based line."""
    local = int(idx.tables.parsed[path].line_owner[line - 1])
    assert local >= 0, f"{path}:{line} has no statement"
    return idx.tables.graph.stmt_offset[path] + local


def weight(idx: RepoIndex, u: int, v: int) -> float | None:
    g = idx.tables.graph
    nbr, cost = g.neighbours(u)
    hits = np.flatnonzero(nbr == v)
    return float(math.exp(-cost[hits[0]])) if hits.size else None


def test_syntax_file_and_directory_edges(index: RepoIndex) -> None:
    g = index.tables.graph
    helper_def = node_at(index, "pkg/util.py", 4)
    body = node_at(index, "pkg/util.py", 5)
    assert weight(index, body, helper_def) == pytest.approx(0.5)
    root = g.stmt_offset["pkg/util.py"] - 1
    file_node = root - 1
    assert weight(index, helper_def, root) == pytest.approx(0.5)  # top level -> module root
    assert weight(index, root, file_node) == pytest.approx(1.0)
    # file -> its directory -> the parent directory, 0.3 each
    dir_neighbours = [
        int(v)
        for v in g.neighbours(file_node)[0]
        if weight(index, file_node, int(v)) == pytest.approx(0.3)
    ]
    assert len(dir_neighbours) == 1
    pkg_dir = dir_neighbours[0]
    sub_file = g.stmt_offset["pkg/sub/mod.py"] - 2
    sub_dirs = [
        int(v)
        for v in g.neighbours(sub_file)[0]
        if weight(index, sub_file, int(v)) == pytest.approx(0.3)
    ]
    assert weight(index, sub_dirs[0], pkg_dir) == pytest.approx(0.3)
    assert g.edge_counts["file_root"] == len(index.tables.parsed)
    assert g.node_counts["file"] == len(index.tables.parsed)


@pytest.mark.parametrize(
    ("caller", "callee", "why"),
    [
        (("pkg/core.py", 8), ("pkg/util.py", 4), "from pkg.util import helper"),
        (("pkg/core.py", 9), ("pkg/util.py", 4), "import pkg.util as u; u.helper()"),
        (("pkg/core.py", 7), ("pkg/util.py", 10), "self.run() through the base class"),
        (("pkg/core.py", 10), ("pkg/util.py", 9), "class constructor Base()"),
        (("pkg/core.py", 16), ("pkg/core.py", 5), "same-file constructor Core()"),
        (("pkg/sub/mod.py", 8), ("pkg/util.py", 4), "relative import ..util"),
        (("web/app.js", 3), ("web/app.js", "callee"), "javascript"),
        (("web/types.ts", 3), ("web/types.ts", "tsCallee"), "typescript"),
        (("go/main.go", 6), ("go/main.go", "goCallee"), "go"),
        (("rs/lib.rs", 4), ("rs/lib.rs", "rs_callee"), "rust"),
        (("java/App.java", 4), ("java/App.java", "App.javaCallee"), "java"),
        (("c/lib.c", 4), ("c/lib.c", "c_callee"), "c"),
        (("cpp/lib.cpp", 4), ("cpp/lib.cpp", "cpp_callee"), "c++"),
    ],
)
def test_call_edges(
    index: RepoIndex, caller: tuple[str, int], callee: tuple[str, int | str], why: str
) -> None:
    u = node_at(index, *caller)
    path, where = callee
    if isinstance(where, str):  # one-line definitions: find the definition node by name
        local = next(d.node for d in index.tables.parsed[path].definitions if d.name == where)
        v = index.tables.graph.stmt_offset[path] + local
    else:
        v = node_at(index, path, where)
    assert weight(index, u, v) == pytest.approx(0.8), why


def test_unresolved_calls_are_dropped(index: RepoIndex) -> None:
    # print(...) and os.path.basename(...) resolve to nothing in the repository
    print_stmt = node_at(index, "pkg/core.py", 11)
    g = index.tables.graph
    kinds = [weight(index, print_stmt, int(v)) for v in g.neighbours(print_stmt)[0]]
    assert 0.8 not in [pytest.approx(k) for k in kinds]
    assert index.tables.graph.edge_counts["call"] == sum(
        len(c) for c in index.tables.calls.values()
    )


def test_statement_nodes_cover_lines_without_overlap() -> None:
    text = "def f(x):\n    if x:\n        return 1\n    # note\n\n    return 2\n"
    pf = parse_source("m.py", "python", text, "d")
    owners = pf.line_owner.tolist()
    assert owners[3] == owners[1] or owners[3] == owners[0]  # comment line: inside f's body
    assert owners[4] in (owners[0], owners[1])  # blank line, zero length: no weight anyway
    assert len({owners[0], owners[1], owners[2], owners[5]}) == 4
    wins = windows(split_lines(text), 20, 10)
    win, nodes, weights = window_nodes(pf, *bounds(wins))
    assert set(win.tolist()) == {0}
    assert weights.sum() == pytest.approx(1.0)
    lens = pf.line_len
    # each node's weight is the share of characters on the lines it owns
    for node, w in zip(nodes, weights, strict=True):
        own = sum(int(lens[i]) for i in range(6) if owners[i] == node)
        assert w == pytest.approx(own / lens.sum())


def test_window_weights_per_window() -> None:
    text = "\n".join(f"value_{i} = {'x' * (i + 1)}" for i in range(35)) + "\n"
    pf = parse_source("m.py", "python", text, "d")
    wins = windows(split_lines(text), 20, 10)
    win, nodes, weights = window_nodes(pf, *bounds(wins))
    for w_idx, w in enumerate(wins):
        sel = win == w_idx
        assert weights[sel].sum() == pytest.approx(1.0)
        lens = pf.line_len[w.start : w.end].astype(float)
        assert sorted(weights[sel]) == pytest.approx(sorted(lens / lens.sum()))


def test_one_window_nodes_are_window_nodes_bit_for_bit() -> None:
    """A query's one window weighs its nodes exactly as the windows of a build do (the
    definitions channel's strengths are compared as floats)."""
    text = "\n".join(
        f"def f{i}(a):\n    # note\n\n    return a + {'y' * (i % 7)}\n" for i in range(30)
    )
    pf = parse_source("m.py", "python", text, "d")
    n = pf.line_owner.size
    for start, end in [(0, 20), (13, 33), (n - 7, n), (5, 5), (40, 41)]:
        _, nodes, weights = window_nodes(pf, np.array([start]), np.array([end]))
        got = one_window_nodes(pf, start, end)
        assert list(got) == nodes.tolist()
        assert list(got.values()) == weights.tolist()  # equal floats, not approximately


@pytest.mark.parametrize("seed", range(4))
def test_window_bounds_are_every_stride_until_the_end_without_blank_windows(seed: int) -> None:
    """A file's windows from its lines' lengths: one every ``stride`` lines until one reaches
    the last line, those whose lines are all blank left out, as cutting them one by one."""
    rng = np.random.default_rng(seed)
    for _ in range(200):
        n = int(rng.integers(0, 70))
        line_len = (rng.random(n) < rng.random()).astype(np.int32) * 3
        size, stride = int(rng.integers(1, 25)), int(rng.integers(1, 12))
        expected = []
        for start in range(0, n, stride):
            end = min(start + size, n)
            if line_len[start:end].any():
                expected.append((start, end))
            if end == n:
                break
        starts, ends = window_bounds(line_len, size, stride)
        assert starts.dtype == ends.dtype == np.int32
        assert list(zip(starts.tolist(), ends.tolist(), strict=True)) == expected


def test_windows_twenty_lines_stride_ten() -> None:
    lines = [f"x{i} = {i}" for i in range(45)]
    wins = windows(lines, 20, 10)
    assert [(w.start, w.end) for w in wins] == [(0, 20), (10, 30), (20, 40), (30, 45)]
    assert wins[1].text == "\n".join(lines[10:30])
    assert windows(["", "   "], 20, 10) == []
    assert [(w.start, w.end) for w in windows(lines[:7], 20, 10)] == [(0, 7)]


def test_identical_windows_are_merged(tmp_path: Path) -> None:
    block = "\n".join(f"value_{i} = compute({i})" for i in range(20)) + "\n"
    root = make_repo(tmp_path / "r", {"a/one.py": block, "b/two.py": block}, use_git=False)
    idx, _ = RepoIndex.build(root, save=False)
    fid = idx.tables.by_text[block.rstrip("\n")]
    assert sorted(loc.path for loc in idx.tables.frag_locs[fid]) == ["a/one.py", "b/two.py"]


def test_syntax_errors_still_parse() -> None:
    text = "def broken(:\n    return 1\nx = [\n"
    pf = parse_source("bad.py", "python", text, "d")
    assert pf.n_nodes > 0
    assert len(split_lines(text)) == pf.line_owner.size


def test_edit_spans_the_change_between_common_prefix_and_suffix() -> None:
    old = b"a = 1\nb = 2\nc = 3\n"
    new = b"a = 1\nb = 22\nc = 3\n"
    start, old_end, new_end, p0, p1, p2 = _edit(old, new)
    assert (start, old_end, new_end) == (11, 11, 12)
    assert (tuple(p0), tuple(p1), tuple(p2)) == ((1, 5), (1, 5), (1, 6))
    # a repeated run: the suffix stops where the prefix ends; multi-byte text counts bytes
    start, old_end, new_end, *_ = _edit("xé\nxx".encode(), "xé\nxxxx".encode())
    assert (start, old_end, new_end) == (6, 6, 8)
    assert _edit(b"same", b"same")[:3] == (4, 4, 4)
    assert _edit(b"", b"new")[:3] == (0, 0, 3)


def test_incremental_parses_equal_parses_from_scratch() -> None:
    """An editor's stream of edits, syntax errors on the way included: each parse that reuses
    the last tree gives what a parse from scratch gives."""
    text = "\n".join(f"def f{i}(x):\n    y = g{i}(x)\n    return y\n" for i in range(30))
    cache = TreeCache(size=2)
    parse_source("m.py", "python", text, "d", trees=cache)
    lines = text.split("\n")
    typed = "    z = helper(y, key=[1, 2])"
    for cut in [*range(1, len(typed), 3), len(typed)]:  # piece by piece, brackets open a while
        lines[41] = typed[:cut]
        edited = "\n".join(lines)
        got = parse_source("m.py", "python", edited, "d", trees=cache)
        assert parsed_fields(got) == parsed_fields(parse_source("m.py", "python", edited, "d"))
    del lines[8:24]  # four functions
    lines[4:4] = ["class A:", "    k = 1"]
    edited = "\n".join(lines)
    got = parse_source("m.py", "python", edited, "d", trees=cache)
    assert parsed_fields(got) == parsed_fields(parse_source("m.py", "python", edited, "d"))
    assert any(call.parts == ("helper",) for call in got.calls)
    for other in ("a.py", "b.py", "c.py"):  # the least recently parsed tree is dropped
        parse_source(other, "python", "x = 1\n", "d", trees=cache)
    assert len(cache._trees) == 2 and "m.py" not in cache._trees


def test_a_tree_with_a_syntax_error_is_not_kept() -> None:
    """A parse with a syntax error keeps no tree: the next edit's parse from it would come
    out with the error and be thrown away for one from scratch (each edit of such a file
    parsed twice). Once the error is fixed the file keeps its tree again, and every parse
    gives what a parse from scratch gives."""
    cache = TreeCache()
    good = "int f(int x) { return x; }\n\nint g(int x) { return f(x) + 1; }\n"
    broken = good.replace("+ 1", "+")
    for text, kept in ((good, True), (broken, False), (broken + "int h;\n", False), (good, True)):
        got = parse_source("a.c", "c", text, "d", trees=cache)
        assert ("a.c" in cache._trees) == kept
        assert got.has_error == (not kept)
        assert parsed_fields(got) == parsed_fields(parse_source("a.c", "c", text, "d"))


def test_trees_not_parsed_since_the_last_pause_are_dropped() -> None:
    """At a pause, the trees of files not edited since the last one go; the file being
    typed in keeps its tree (``RepoIndex.tidy``)."""
    cache = TreeCache(size=4)
    for path in ("a.c", "b.c", "c.c"):
        cache.parse(path, "c", b"int f(int x) { return x; }\n")
    cache.drop_unused()  # each parsed since: kept
    assert set(cache._trees) == {"a.c", "b.c", "c.c"}
    cache.parse("b.c", "c", b"int f(int x) { return x + 1; }\n")
    cache.drop_unused()
    assert set(cache._trees) == {"b.c"}
    cache.drop_unused()
    assert not cache._trees


def test_tidying_drops_the_trees_of_files_no_longer_edited(tmp_path: Path) -> None:
    """A tidy keeps the tree of the file edited since the last one and drops the others'."""
    idx, _ = RepoIndex.build(make_repo(tmp_path / "r", OTHER_LANG_FILES, use_git=False))
    added = {"go/main.go": "\nfunc added() int { return 1 }\n", "rs/lib.rs": "\nfn added() {}\n"}
    for path, text in added.items():  # languages an edit parses with the last tree
        idx.update_file(path, idx.file_text(path) + text)
    idx.tidy()
    assert set(idx._trees._trees) == set(added)
    idx.update_file("go/main.go", idx.file_text("go/main.go") + "\nfunc more() int { return 2 }\n")
    idx.tidy()
    assert set(idx._trees._trees) == {"go/main.go"}


def test_a_definition_that_only_moves_keeps_its_callers_without_resolving_them_again() -> None:
    lib = "def helper(x):\n    return x\n\n\nclass Box:\n    def get(self):\n        return 1\n"
    user = (
        "from lib import helper, Box\n\n\ndef use(v):\n    return helper(v) + Box.get(v) + Box()\n"
    )
    old = parse_source("lib.py", "python", lib, "a")
    resolver = Resolver({"lib.py": old, "user.py": parse_source("user.py", "python", user, "b")})
    calls = {p: resolver.calls_of(p) for p in ("lib.py", "user.py")}
    targets = {node for _, path, node in calls["user.py"] if path == "lib.py"}
    assert len(targets) == 3  # helper, Box, Box.get

    shifted = parse_source("lib.py", "python", "import os\n\n\n" + lib, "c")
    assert resolver.dependents("lib.py", (old, shifted)) == set()
    moved = moved_definitions(old, shifted)
    node_of = {d.name: d.node for d in shifted.definitions}
    assert {moved[t] for t in targets} == {node_of["helper"], node_of["Box"], node_of["Box.get"]}
    resolver.update("lib.py", shifted)
    again = {node for _, path, node in resolver.calls_of("user.py") if path == "lib.py"}
    assert again == {moved[t] for t in targets}  # what resolving anew would have given

    for changed in (lib.replace("def helper", "def helper2"), lib.replace("class Box", "def Box")):
        new = parse_source("lib.py", "python", changed, "d")
        assert resolver.dependents("lib.py", (old, new)) == {"user.py"}


@pytest.mark.parametrize("seed", range(4))
def test_line_lengths_of_a_text_are_its_split_lines(seed: int) -> None:
    """``text_line_lengths`` (read from an ASCII text's bytes) gives each line's length
    without its trailing whitespace as ``line_lengths(split_lines(text))`` does: carriage
    returns, vertical tabs, form feeds and the information separators (which ``str.rstrip``
    strips too), blank and final lines, and text past ASCII."""
    rng = np.random.default_rng(seed)
    alphabet = ["a", "b", " ", "\t", "\n", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "é"]
    for _ in range(300):
        text = "".join(rng.choice(alphabet, int(rng.integers(0, 40))))
        encoded = text.encode("utf-8")
        got = text_line_lengths(text, encoded, newline_positions(encoded))
        assert got.dtype == np.int32
        assert got.tolist() == line_lengths(split_lines(text)).tolist(), repr(text)

"""The code graph built from parsed files (``build_graph``): its nodes per kind, the edge
weights of FragRel A.1, call and import edges, and the statement queries it is built from."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest
from tree_sitter import QueryCursor

from repomem.index.graph import (
    ROOT,
    W_CALL,
    W_DIRECTORY,
    W_FILE_ROOT,
    W_SYNTAX,
    CallRows,
    build_graph,
    node_layout,
)
from repomem.index.languages import parser
from repomem.index.parsed import Definition
from repomem.index.parsing import parse_source
from repomem.index.queries import comment_kinds, file_query
from repomem.index.saved_parse import NodeRows

UTIL = "def helper(x):\n    return x + 1\n"
CORE = "from pkg.util import helper\n\n\ndef run():\n    value = helper(2)\n    return value\n"


def _parsed() -> dict:
    return {
        "pkg/util.py": parse_source("pkg/util.py", "python", UTIL, "a"),
        "pkg/core.py": parse_source("pkg/core.py", "python", CORE, "b"),
    }


def _node(files: dict, path: str, line: int) -> int:
    """The deepest statement node of ``path`` starting at ``line``."""
    return int(np.flatnonzero(files[path].node_start == line)[-1])


def _cost(weight: float) -> float:
    return float(-np.log(weight))


def test_parse_gives_definitions_and_call_sites_by_statement() -> None:
    files = _parsed()
    core = files["pkg/core.py"]
    assert core.definitions == [Definition("run", _node(files, "pkg/core.py", 3), False)]
    (call,) = core.calls
    assert call.parts == ("helper",)
    assert call.node == _node(files, "pkg/core.py", 4)  # the assignment calling it
    assert core.imports[0].symbol == "helper"


def test_nodes_and_edges_by_kind() -> None:
    files = _parsed()
    caller = _node(files, "pkg/core.py", 4)
    callee = files["pkg/util.py"].definitions[0].node
    graph = build_graph(files, {"pkg/core.py": [(caller, "pkg/util.py", callee)]})
    assert graph.node_counts == {
        "directory": 2,  # the root and pkg/
        "file": 2,
        "root": 2,
        "statement": files["pkg/util.py"].n_nodes + files["pkg/core.py"].n_nodes,
    }
    edges = graph.edge_counts
    assert edges["call"] == 1
    assert edges["file_root"] == 2
    assert edges["directory"] == 3  # root-pkg, pkg-util.py, pkg-core.py
    assert not graph.imports and "import" not in edges
    # the call edge joins the two statements, with the call weight
    u = graph.stmt_offset["pkg/core.py"] + caller
    v = graph.stmt_offset["pkg/util.py"] + callee
    neighbours, costs = graph.neighbours(u)
    assert math.isclose(costs[list(neighbours).index(v)], _cost(W_CALL))
    assert list(costs) == sorted(costs)  # cheapest first
    nx_graph = graph.to_networkx()
    assert nx_graph.number_of_edges() == sum(edges.values())
    weights = {round(w, 6) for _, _, w in nx_graph.edges(data="weight")}
    assert weights == {W_CALL, W_DIRECTORY, W_FILE_ROOT, W_SYNTAX}


def test_imports_are_edges_only_when_weighted() -> None:
    files = _parsed()
    imports = {"pkg/core.py": [(ROOT, "pkg/util.py", ROOT)]}
    assert build_graph(files, imports).edge_counts["call"] == 0
    graph = build_graph(files, imports, import_weight=0.6)
    assert graph.imports and graph.edge_counts["import"] == 1
    assert math.isclose(graph.import_cost, _cost(0.6))


def test_a_file_s_nodes_are_its_own_and_unknown_files_have_none() -> None:
    files = _parsed()
    graph = build_graph(files, {})
    nodes = graph.file_nodes("pkg/util.py")
    assert nodes.size == 2 + files["pkg/util.py"].n_nodes  # file, root, statements
    assert not set(nodes) & set(graph.file_nodes("pkg/core.py"))
    assert graph.file_nodes("pkg/absent.py").size == 0


def test_the_file_query_matches_statements_definitions_calls_and_imports() -> None:
    query = file_query("python")
    assert {query.capture_name(i) for i in range(query.capture_count)} >= {
        "s",
        "def",
        "name",
        "call",
        "imp",
    }
    go = file_query("go")
    assert "imp" not in {go.capture_name(i) for i in range(go.capture_count)}


def test_a_block_is_one_match_and_its_named_children_its_statements() -> None:
    """A container is matched once and its named children read as its statements (a match
    per statement cost the parse a third of its C matches); an ERROR among them is none: the
    statements inside it are matched apart."""
    source = "int f(void)\n{\n\tint a = 1;\n\ta++;\n\treturn a;\n}\n"
    root = parser("c").parse(source.encode()).root_node
    matches = QueryCursor(file_query("c")).matches(root)
    assert sum("in" in caps for _, caps in matches) == 2  # the file, the function's body
    assert not any("s" in caps for _, caps in matches)
    assert parse_source("a.c", "c", source, "d").node_start.tolist() == [0, 2, 3, 4]
    broken = parse_source("b.c", "c", "int f(void)\n{\n\t@@@ x = ;\n\treturn 1;\n}\n", "d")
    assert broken.has_error and broken.node_start.tolist() == [0, 3]


def test_comments_are_never_statements() -> None:
    text = "def f():\n    # a note\n    return 1\n"
    pf = parse_source("m.py", "python", text, "c")
    assert 1 not in pf.node_start.tolist()  # the comment's line starts no statement
    assert comment_kinds("python").size >= 1
    assert comment_kinds("c").size > comment_kinds("python").size  # ``#if`` conditions too


def _random_tree(rng: np.random.Generator, n_files: int) -> tuple[dict, dict]:
    """Files of random statement trees, and calls among them as ``build_graph`` takes them:
    repeated ones, self-loops, calls along syntax edges, imports and calls into files the
    graph does not hold among them."""
    files = {}
    for i in range(n_files):
        n = int(rng.integers(0, 40))
        parent = np.array([int(rng.integers(-1, j)) if j else -1 for j in range(n)], np.int64)
        files[f"d{i % 3}/s{i % 2}/f{i}.c"] = NodeRows(parent)
    paths = sorted(files)
    calls: dict = {}
    for path in paths:
        out = calls.setdefault(path, [])
        for _ in range(int(rng.integers(0, 30))):
            target = paths[int(rng.integers(0, len(paths)))]
            n_src, n_dst = files[path].n_nodes, files[target].n_nodes
            if rng.random() < 0.1:
                out.append((ROOT, target, ROOT))  # an import
            elif n_src and n_dst:
                out.append((int(rng.integers(0, n_src)), target, int(rng.integers(0, n_dst))))
        if files[path].n_nodes > 1:  # along a syntax edge: it replaces the edge
            child = files[path].n_nodes - 1
            out.append((child, path, int(files[path].node_parent[child])))
        out.append((ROOT, "elsewhere/absent.c", ROOT))
    return files, calls


def _expected_rows(graph, files: dict, calls: dict, import_weight: float) -> list[list]:
    """Each node's (cost, neighbour) entries by definition: one edge per pair and kind (the
    strongest kind where a call runs along a syntax edge), cheapest kind first (kinds of
    equal cost in the order file-root, call, syntax, directory, import), then by id."""
    off = graph.stmt_offset
    edges: dict[str, set] = {k: set() for k in ("file_root", "call", "syntax", "directory")}
    edges["import"] = set()

    def add(kind: str, u: int, v: int) -> None:
        if u != v:
            edges[kind].add((min(u, v), max(u, v)))

    for path, pf in files.items():
        add("file_root", off[path] - 2, off[path] - 1)
        for local, parent in enumerate(pf.node_parent.tolist()):
            add("syntax", off[path] + local, off[path] + parent if parent >= 0 else off[path] - 1)
    for d, node in graph.dirs.items():
        if d:
            add("directory", node, graph.dirs[d.rpartition("/")[0]])
    for path in files:
        add("directory", off[path] - 2, graph.dirs[path.rpartition("/")[0]])
    for path, entries in calls.items():
        for src, target, dst in entries:
            if target in off:
                add("import" if src == ROOT else "call", off[path] + src, off[target] + dst)
    edges["syntax"] -= edges["call"]
    cost = {"file_root": 0.0, "call": _cost(W_CALL), "syntax": _cost(W_SYNTAX)}
    cost["directory"] = _cost(W_DIRECTORY)
    if import_weight > 0:
        cost["import"] = _cost(import_weight)
    rows: list[list] = [[] for _ in range(graph.n_nodes)]
    for rank, kind in enumerate(sorted(cost, key=cost.__getitem__)):
        for u, v in edges[kind]:
            rows[u].append((rank, v, cost[kind]))
            rows[v].append((rank, u, cost[kind]))
    return [[(c, v) for _, v, c in sorted(row)] for row in rows]


@pytest.mark.parametrize("import_weight", [0.0, W_SYNTAX, 0.9])
def test_every_row_lists_its_edges_once_by_cost_then_neighbour(import_weight: float) -> None:
    files, calls = _random_tree(np.random.default_rng(7), 40)
    graph = build_graph(files, calls, import_weight)
    expected = _expected_rows(graph, files, calls, import_weight)
    for u in range(graph.n_nodes):
        nbr, cost = graph.neighbours(u)
        assert list(zip(cost.tolist(), nbr.tolist(), strict=True)) == expected[u]
    # the same calls as a build spools them make the same graph
    paths = sorted(files)
    spooled = build_graph(files, CallRows.of(calls, paths), import_weight)
    used = graph.adj.used
    assert spooled.adj.used == used
    assert np.array_equal(spooled.adj.cols[:used], graph.adj.cols[:used])
    assert np.array_equal(spooled.adj.vals[:used], graph.adj.vals[:used])
    # and so from the files' node layout made beforehand, as a build makes it
    laid = build_graph(node_layout(files), CallRows.of(calls, paths), import_weight)
    assert laid.adj.used == used and np.array_equal(laid.key, graph.key)
    assert np.array_equal(laid.adj.cols[:used], graph.adj.cols[:used])
    assert np.array_equal(laid.adj.vals[:used], graph.adj.vals[:used])


def test_the_graph_is_built_without_copies_of_its_edges(monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``build_graph`` allocates at its peak is little more than the graph it returns,
    its temporaries a block of entries at a time: the whole kernel's took 2.5 GB more as one
    sparse matrix per kind of edge and the calls as Python lists (4.5 times the graph
    here)."""
    files, calls = _random_tree(np.random.default_rng(3), 3000)
    rows = CallRows.of(calls, sorted(files))
    monkeypatch.setattr("repomem.index.graph._BLOCK", 4096)
    tracemalloc.start()
    try:
        graph = build_graph(files, rows, import_weight=0.5)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    held = graph.key.nbytes + graph.adj.cols.nbytes + graph.adj.vals.nbytes
    assert peak < 2 * held, (peak, held)

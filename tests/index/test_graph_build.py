"""The code graph built from parsed files (``build_graph``): its nodes per kind, the edge
weights of FragRel A.1, call and import edges, and the statement queries it is built from."""

from __future__ import annotations

import math

import numpy as np

from repomem.index.graph import ROOT, W_CALL, W_DIRECTORY, W_FILE_ROOT, W_SYNTAX, build_graph
from repomem.index.parsed import Definition
from repomem.index.parsing import parse_source
from repomem.index.queries import comment_kinds, file_query

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


def test_comments_are_never_statements() -> None:
    text = "def f():\n    # a note\n    return 1\n"
    pf = parse_source("m.py", "python", text, "c")
    assert 1 not in pf.node_start.tolist()  # the comment's line starts no statement
    assert comment_kinds("python").size >= 1
    assert comment_kinds("c").size > comment_kinds("python").size  # ``#if`` conditions too

"""Eq. 8 fragment relations: the sparse computation against a brute-force networkx one."""

from __future__ import annotations

import heapq
import math
from dataclasses import replace
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from repos import OTHER_LANG_FILES, PY_FILES, make_repo

from repomem.config import IndexConfig
from repomem.index import relations, store
from repomem.index.build import recompute_relations
from repomem.index.relations import (
    _Scratch,
    _scratch,
    node_ball,
    node_strengths,
    relations_by_target,
    search_tree,
)
from repomem.index.repo import RepoIndex


def hub_free_lengths(g: nx.Graph, source: int, hub: int) -> dict[int, float]:
    """Shortest ``cost`` paths from ``source`` whose inner nodes have at most ``hub``
    neighbours (a hub ends a path, it does not carry it on)."""
    dist = {source: 0.0}
    heap = [(0.0, source)]
    done = set()
    while heap:
        d, u = heapq.heappop(heap)
        if u in done:
            continue
        done.add(u)
        if u != source and g.degree(u) > hub:
            continue
        for v, data in g[u].items():
            if d + data["cost"] < dist.get(v, math.inf):
                dist[v] = d + data["cost"]
                heapq.heappush(heap, (dist[v], v))
    return dist


def brute_force(idx: RepoIndex, epsilon: float) -> dict[tuple[int, int], float]:
    """Literal Eq. 8: all node pairs, Dis = max-product path, zeroed below epsilon; with a
    hub degree set, over paths that do not pass through a hub.

    A strength of exactly epsilon (0.8 * 0.5**4 == 0.05) is kept; the float tolerance makes
    that hold whichever way the product of the path's weights rounds.
    """
    g = idx.tables.graph.to_networkx()
    for _, _, d in g.edges(data=True):
        d["cost"] = -math.log(d["weight"])
    a = idx.tables.frag_nodes.to_csr(idx.tables.graph.n_nodes)
    live = idx.tables.live_ids().tolist()
    nodes = {int(k) for i in live for k in a[i].indices}
    dis = {}
    hub = idx.config.hub_degree
    for k in nodes:
        if hub >= idx.tables.graph.n_nodes:
            lengths = nx.single_source_dijkstra_path_length(g, k, weight="cost")
        else:
            lengths = hub_free_lengths(g, k, hub)
        dis[k] = {
            node: math.exp(-c)
            for node, c in lengths.items()
            if math.exp(-c) >= epsilon * (1 - 1e-9)
        }
    out = {}
    for i in live:
        for j in live:
            if i == j:
                continue
            total = sum(
                wk * wl * dis[int(k)].get(int(m), 0.0)
                for k, wk in zip(a[i].indices, a[i].data, strict=True)
                for m, wl in zip(a[j].indices, a[j].data, strict=True)
            )
            if total > 0:
                out[(i, j)] = total
    return out


def computed(idx: RepoIndex) -> dict[tuple[int, int], float]:
    rel = idx.tables.relations.tocoo()
    return {(int(i), int(j)): float(v) for i, j, v in zip(rel.row, rel.col, rel.data, strict=True)}


# no cap or bound cuts a relation: every row holds all it reaches
UNTRUNCATED = replace(
    IndexConfig(),
    relation_epsilon=1e-12,
    node_neighbours=1000,
    fragment_neighbours=1000,
    hub_degree=10**9,
)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("rel") / "repo", OTHER_LANG_FILES)


def test_equals_brute_force_without_truncation(root: Path) -> None:
    idx, summary = RepoIndex.build(root, UNTRUNCATED, save=False)
    assert summary.truncated_fragments == 0
    got, want = computed(idx), brute_force(idx, 1e-12)
    assert got.keys() == want.keys()
    for key, value in want.items():
        assert got[key] == pytest.approx(value, rel=1e-9)


def test_a_row_reaching_every_fragment_stays_within_its_list(root: Path) -> None:
    """The compiled kernel does not check bounds: its Python source does. Every row here
    reaches every fragment, some many times over, with the scratch exactly as long as the
    fragments (the list of those reached one longer), so that list is written to its last
    slot."""
    idx, _ = RepoIndex.build(root, UNTRUNCATED, save=False)
    t = idx.tables
    n, rows = len(t.frag_text), t.live_ids()
    ptr, nodes, weights = t.frag_nodes.gather(rows)
    nf = t.node_frags
    assert (nf.end - nf.start).max() > 1  # nodes shared by fragments: reached again

    def run(kernel: object) -> list[np.ndarray]:
        scratch = np.zeros(n), np.zeros(n, np.bool_), np.zeros(n + 1, np.int64)
        out = [
            np.full((rows.size, n), -1, np.int64),
            np.zeros((rows.size, n)),
            np.zeros(rows.size, np.int64),
            np.zeros(rows.size, np.bool_),
            np.empty(nodes.size),
        ]
        kernel(  # type: ignore[operator]
            relations._graph_arrays(t.graph), ptr, nodes, weights, rows,
            nf.start, nf.end, nf.cols, nf.vals, t.frag_key[:n],
            relations.strength_limit(UNTRUNCATED.relation_epsilon), 1000, n, 10**9,
            *scratch, *out,
        )  # fmt: skip
        assert not any(a.any() for a in scratch)  # left as found
        return out

    compiled, source = run(relations._relations_kernel), run(relations._relations_kernel.py_func)
    assert (compiled[2] == n - 1).all()  # every other fragment related
    for a, b in zip(compiled, source, strict=True):
        np.testing.assert_array_equal(a, b)


def test_cutoff_equals_thresholded_brute_force_and_error_is_bounded(root: Path) -> None:
    eps = 0.05
    config = replace(
        IndexConfig(),
        relation_epsilon=eps,
        node_neighbours=1000,
        fragment_neighbours=1000,
        hub_degree=10**9,
    )
    idx, summary = RepoIndex.build(root, config, save=False)
    assert summary.truncated_fragments == 0
    got, want = computed(idx), brute_force(idx, eps)
    assert got.keys() == want.keys()
    for key, value in want.items():
        assert got[key] == pytest.approx(value, rel=1e-9)
    exact = brute_force(idx, 1e-12)
    worst = max(abs(exact[k] - got.get(k, 0.0)) for k in exact)
    assert 0 < worst < eps  # documented bound: the dropped strengths are each below epsilon


def test_fragment_cap_keeps_the_strongest(root: Path) -> None:
    config = replace(IndexConfig(), node_neighbours=1000, fragment_neighbours=2)
    idx, summary = RepoIndex.build(root, config, save=False)
    full = brute_force(idx, config.relation_epsilon)
    assert summary.truncated_fragments > 0
    for i in np.flatnonzero(idx.tables.truncated).tolist():
        row = sorted((v for (a, _), v in full.items() if a == i), reverse=True)
        kept = sorted(idx.tables.rel_val[i][idx.tables.rel_idx[i] >= 0].tolist(), reverse=True)
        assert kept == pytest.approx(row[:2])


def test_a_capped_row_is_the_head_of_the_row_uncapped(tmp_path: Path) -> None:
    """Rows list their relations by strength, then fragment key (ties of both in the order
    reached), and a cap keeps the first of that order: the strongest, ties at the cap
    broken by key as in a rebuild. (Files alike that call one function relate to each
    other through it with equal strengths.)"""
    alike = {
        f"same/m{k}.py": f"from same.lib import helper\n\nVALUE_{k} = helper()\n" for k in range(12)
    }
    alike["same/lib.py"] = "def helper():\n    return 1\n"
    root = make_repo(tmp_path / "repo", alike)
    wide = replace(IndexConfig(), fragment_neighbours=1000)
    full, _ = RepoIndex.build(root, wide, save=False)
    capped, summary = RepoIndex.build(root, replace(wide, fragment_neighbours=3), save=False)
    assert summary.truncated_fragments > 0
    t, c = full.tables, capped.tables
    key = t.frag_key
    tied = 0
    for i in t.live_ids().tolist():
        ids = t.rel_idx[i][t.rel_idx[i] >= 0]
        vals = t.rel_val[i][: ids.size]
        order = sorted(range(ids.size), key=lambda q: (-vals[q], key[ids[q]]))
        assert order == list(range(ids.size))
        tied += int(np.count_nonzero(vals[1:] == vals[:-1]))
        assert c.rel_idx[i][:3].tolist() == (ids[:3].tolist() + [-1, -1, -1])[:3]
        assert c.rel_val[i][: min(3, ids.size)].tolist() == vals[:3].tolist()
        assert bool(c.truncated[i]) == (ids.size > 3)
    assert tied > 0  # equal strengths are ordered by key


def test_truncated_rows_are_one_flag_per_fragment_built_saved_and_loaded(tmp_path: Path) -> None:
    """Which rows a cap truncated is a flag per fragment id, built and loaded (as a set of
    ids, the whole kernel's 2.5M took ~0.2 GB), saved as the ascending ids it always was."""
    root = make_repo(tmp_path / "r", use_git=False)
    config = replace(IndexConfig(), fragment_neighbours=2)
    built, summary = RepoIndex.build(root, config)
    saved = np.load(store.live_generation(root, config) / "arrays" / "truncated.npy")
    assert summary.truncated_fragments == saved.size > 0
    assert saved.dtype == np.int64 and np.array_equal(saved, np.unique(saved))
    for idx in (built, RepoIndex.load(root, config)):
        flags = idx.tables.truncated
        assert flags.dtype == bool and flags.size >= len(idx.tables.frag_text)
        assert np.array_equal(np.flatnonzero(flags), saved)


def test_node_cap_truncates_and_is_reported(root: Path) -> None:
    config = replace(IndexConfig(), node_neighbours=2, fragment_neighbours=1000)
    idx, summary = RepoIndex.build(root, config, save=False)
    assert summary.truncated_fragments > 0
    got = computed(idx)
    full = brute_force(idx, config.relation_epsilon)
    # truncation only ever drops strength: each kept relation is at most the full one
    for key, value in got.items():
        assert value <= full[key] + 1e-12
    untouched = [i for i in idx.tables.live_ids().tolist() if not idx.tables.truncated[i]]
    for i in untouched:
        assert {k: v for k, v in got.items() if k[0] == i} == pytest.approx(
            {k: v for k, v in full.items() if k[0] == i}
        )


def test_no_self_relations(root: Path) -> None:
    idx, _ = RepoIndex.build(root, save=False)
    rel = idx.tables.relations
    assert np.all(rel.diagonal() == 0)


def test_hubs_end_paths_and_equal_the_hub_free_brute_force(root: Path) -> None:
    config = replace(IndexConfig(), node_neighbours=1000, fragment_neighbours=1000, hub_degree=3)
    idx, summary = RepoIndex.build(root, config, save=False)
    assert summary.truncated_fragments == 0
    got, want = computed(idx), brute_force(idx, config.relation_epsilon)
    assert got.keys() == want.keys()
    for key, value in want.items():
        assert got[key] == pytest.approx(value, rel=1e-9)
    through_hubs = brute_force(
        RepoIndex.build(root, replace(config, hub_degree=10**9), save=False)[0],
        config.relation_epsilon,
    )
    assert len(through_hubs) > len(want)  # the rule does drop relations on this repository


def test_callers_of_a_much_called_function_relate_to_it_not_to_each_other(
    tmp_path: Path,
) -> None:
    files = {"lib/check.py": "def check(value):\n    return bool(value)\n"}
    for i in range(80):
        body = "\n".join(f"    x{k} = {i} * {k}" for k in range(25))
        files[f"callers/c{i:02d}.py"] = (
            f"from lib.check import check\n\n\ndef caller_{i}():\n{body}\n    return check(x0)\n"
        )
    root = make_repo(tmp_path / "r", files, use_git=False)
    idx, _ = RepoIndex.build(root, save=False)

    def fragment_of(path: str, needle: str) -> int:
        entry = idx.tables.files[path]
        for fid in np.unique(entry.win_frag).tolist():
            if needle in idx.tables.frag_text[fid]:
                return fid
        raise AssertionError(needle)

    definition = fragment_of("lib/check.py", "def check")
    tails = {fragment_of(f"callers/c{i:02d}.py", "return check(x0)") for i in range(80)}
    for fid in tails:
        related = set(idx.tables.rel_idx[fid][idx.tables.rel_idx[fid] >= 0].tolist())
        assert definition in related
        assert not related & (tails - {fid})


@pytest.mark.parametrize("node_cap", [4, 64])
def test_search_tree_settles_what_the_index_search_settles(tmp_path: Path, node_cap: int) -> None:
    root = make_repo(tmp_path / "r", use_git=False)
    idx, _ = RepoIndex.build(root, save=False)
    graph = idx.tables.graph
    for src in range(graph.n_nodes):
        if graph.adj.end[src] == graph.adj.start[src]:
            continue  # an id reserved for growth
        tree = search_tree(graph, src, epsilon=0.05, node_cap=node_cap, hub=3)
        found = node_strengths(
            graph,
            np.array([src]),
            np.array([1.0]),
            tree.nodes,
            epsilon=0.05,
            hub=3,
            node_cap=node_cap,
        )
        assert found == pytest.approx(tree.strengths, rel=1e-12)
        assert tree.capped == (tree.nodes.size == node_cap)
        for node, strength in zip(tree.nodes.tolist(), tree.strengths.tolist(), strict=True):
            path = tree.path_to(node)
            weight = 1.0
            for u, v in zip(path, path[1:], strict=False):
                nbr, cost = graph.neighbours(u)
                weight *= math.exp(-cost[np.flatnonzero(nbr == v)[0]])
            assert path[0] == src and weight == pytest.approx(strength, rel=1e-12)


@pytest.mark.parametrize("node_cap", [100, 10**6])
def test_a_search_queueing_thousands_of_nodes_settles_what_search_tree_settles(
    tmp_path: Path, node_cap: int
) -> None:
    # a function of 3,000 statements: searched from its ``def``, thousands of nodes are queued
    # at once (the search's heap never grows: it is sized from the pushes its bounds allow)
    body = "".join(f"    x{i} = {i}\n" for i in range(3000))
    (tmp_path / "big.py").write_text(f"def f():\n{body}")
    idx, _ = RepoIndex.build(tmp_path, save=False)
    graph = idx.tables.graph
    src = graph.stmt_offset["big.py"] + idx.tables.parsed["big.py"].definitions[0].node
    tree = search_tree(graph, src, epsilon=1e-6, node_cap=node_cap, hub=10**6)
    assert tree.nodes.size == min(node_cap, 3004)  # with the def, module, file, directory
    found = node_strengths(
        graph,
        np.array([src]),
        np.array([1.0]),
        tree.nodes,
        epsilon=1e-6,
        hub=10**6,
        node_cap=node_cap,
    )
    assert found == pytest.approx(tree.strengths, rel=1e-12)


def _anon_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no RssAnon")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_reserved_scratch_is_not_resident_until_searched() -> None:
    """A long-lived process reserves the searches' scratch before serving: sized to the
    whole kernel's 16M nodes, distances filled with infinity made ~0.3 GB resident at once
    for searches that reach a few thousand nodes."""
    before = _anon_mb()
    scratch = _Scratch()
    scratch.reserve(16_000_000, 3_000_000)
    assert _anon_mb() - before < 16
    with scratch.take(16_000_000, 3_000_000) as arrays:
        assert arrays[0].size >= 16_000_000


def test_searches_leave_the_scratch_as_they_found_it(root: Path) -> None:
    """Relations, balls and strengths read a node's distance only where its state says it
    holds one, and hand back every state and fragment sum zero: the next search starts
    clean, whatever distances are left."""
    idx, _ = RepoIndex.build(root, save=False)
    t = idx.tables
    graph = t.graph
    nodes = np.flatnonzero(graph.adj.end > graph.adj.start)[:20]
    node_ball(graph, nodes, 0.05, 3, np.zeros(nodes.size))
    node_strengths(graph, nodes, np.ones(nodes.size), nodes, epsilon=0.05, hub=3, node_cap=64)
    assert t.rel_idx.size and (t.rel_idx >= 0).any()  # built: compute_relations ran
    assert _scratch._free
    for arrays in _scratch._free:
        assert not any(a.any() for a in arrays[1:])


def test_strength_queries_reuse_their_arrays_and_leave_their_table_empty(root: Path) -> None:
    """A definitions lookup's searches (``node_strengths``) take their table from the last
    query's instead of filling megabytes afresh: the table must come back empty, the same
    strengths must come out, and a larger cap must get larger arrays."""
    idx, _ = RepoIndex.build(root, save=False)
    graph = idx.tables.graph
    nodes = np.flatnonzero(graph.adj.end > graph.adj.start)[:20]
    weights = np.linspace(0.5, 1.0, nodes.size)

    def strengths(node_cap: int) -> np.ndarray:
        return node_strengths(graph, nodes, weights, nodes, epsilon=0.05, hub=3, node_cap=node_cap)

    relations._query_scratch._free.clear()  # what earlier searches left
    first = strengths(8)
    (arrays,) = relations._query_scratch._free
    (keys, _, states), *_ = arrays
    assert (keys == -1).all() and not states.any()
    assert strengths(8).tolist() == first.tolist()
    assert [a is arrays for a in relations._query_scratch._free] == [True]  # not new ones
    wide = strengths(64)
    assert relations._query_scratch._free[0][1].size > arrays[1].size
    relations._query_scratch._free.clear()
    assert strengths(64).tolist() == wide.tolist()  # as with arrays made afresh


def test_strength_queries_give_equal_targets_one_strength_in_any_order(root: Path) -> None:
    """A definitions lookup may ask for a node twice (two names of one definition) and in
    any order: each copy gets the strength the node gets asked once, in order."""
    idx, _ = RepoIndex.build(root, save=False)
    graph = idx.tables.graph
    nodes = np.flatnonzero(graph.adj.end > graph.adj.start)[:20]
    weights = np.linspace(0.5, 1.0, 5)

    def strengths(targets: np.ndarray) -> list[float]:
        found = node_strengths(graph, nodes[:5], weights, targets, epsilon=0.05, hub=3, node_cap=64)
        return found.tolist()

    alone = strengths(np.sort(nodes))
    assert any(alone) and not all(alone)  # some reached, some not
    by_node = dict(zip(np.sort(nodes).tolist(), alone, strict=True))
    asked = np.concatenate([nodes[::-1], nodes[::3], nodes[:2]])
    assert strengths(asked) == [by_node[n] for n in asked.tolist()]


def test_a_build_keeps_no_search_scratch(root: Path) -> None:
    """A build's relations make every page of their scratch resident (the fragments'
    sums); the build hands it back once they are computed, before the save and whatever
    the process does next."""
    _scratch.forget()
    idx, _ = RepoIndex.build(root, save=False)
    assert (idx.tables.rel_idx >= 0).any()  # compute_relations ran, through the scratch
    assert not _scratch._free


def _inverse_by_hand(rel_idx: np.ndarray) -> dict[int, set[int]]:
    """Per target, the rows of ``rel_idx`` that hold it."""
    out: dict[int, set[int]] = {}
    for f, row in enumerate(rel_idx.tolist()):
        for g in row:
            if g >= 0:
                out.setdefault(g, set()).add(f)
    return out


def _assert_by_target(rel_idx: np.ndarray, n: int) -> dict[int, set[int]]:
    """``relations_by_target`` in one part and a few targets at a time against the inverse
    made by hand: each target's sources, ascending, no target missing or extra."""
    want = _inverse_by_hand(rel_idx)
    for entries in (None, 3):
        ptr, parts = relations_by_target(rel_idx, n, entries=entries)
        got = list(parts)
        assert len(got) == 1 if entries is None else len(got) > 1
        sources = np.concatenate(got)
        rows = {g: sources[ptr[g] : ptr[g + 1]].tolist() for g in range(n) if ptr[g + 1] > ptr[g]}
        assert rows == {g: sorted(fs) for g, fs in want.items()}
    return want


def test_relations_by_target_are_the_inverse_of_an_index_before_and_after_updates(
    tmp_path: Path,
) -> None:
    """The relations by target, derived in one part (an opened index's, a query's) or a
    range of targets at a time (a build's save), are the inverse of the relation rows, as
    are those an update keeps in step and those a load adopts from the save."""
    root = make_repo(tmp_path / "r", OTHER_LANG_FILES, use_git=False)
    idx, _ = RepoIndex.build(root)
    t = idx.tables
    n = len(t.frag_text)
    want = _assert_by_target(t.rel_idx, n)
    assert len(want) > 5
    loaded = RepoIndex.load(root)
    pool = loaded.tables.inverse_relations  # adopted: what the build's save wrote
    assert {g: set(pool.cols[pool.start[g] : pool.end[g]].tolist()) for g in want} == want
    core = PY_FILES["pkg/core.py"]
    edits = [
        ("pkg/core.py", core.replace("value = helper(1)", "value = helper(1) + Base().name()")),
        ("pkg/extra.py", "from pkg.util import helper\n\n\ndef use():\n    return helper(5)\n"),
        ("pkg/sub/mod.py", None),
        ("pkg/core.py", core),
    ]
    for index in (idx, loaded):
        for path, text in edits:
            index.update_file(path, text)
            t = index.tables
            n = len(t.frag_text)
            want = _assert_by_target(t.rel_idx, n)
            pool = t.inverse_relations
            kept = {g: set(pool.cols[pool.start[g] : pool.end[g]].tolist()) for g in range(n)}
            assert {g: fs for g, fs in kept.items() if fs} == want


def test_relations_by_target_a_range_at_a_time_count_a_duplicate_target_twice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Made a range of targets per pass over the rows, a block of rows at a time, the
    sources are those made in one part: the same pointers, the same sources in the same
    order (each target's ascending), a duplicate target within a row counted twice."""
    rng = np.random.default_rng(7)
    n, cap = 600, 8
    rel = rng.integers(-1, n, size=(n, cap)).astype(np.int32)
    rel[::5] = -1  # rows relating to nothing
    monkeypatch.setattr(relations, "_BLOCK_ROWS", 37)
    ptr, parts = relations_by_target(rel, n, entries=50)
    got = list(parts)
    assert len(got) > 20 and all(p.dtype == np.int32 for p in got)
    want_ptr, whole = relations_by_target(rel, n, entries=None)
    sources = np.concatenate(got)
    assert np.array_equal(ptr, want_ptr)
    assert np.array_equal(sources, next(whole))
    assert np.array_equal(np.diff(ptr), np.bincount(rel[rel >= 0], minlength=n))
    for g, fs in _inverse_by_hand(rel).items():
        row = sources[ptr[g] : ptr[g + 1]]
        assert set(row.tolist()) == fs and (np.diff(row) >= 0).all()


def test_relation_searches_take_no_array_over_every_node(root: Path) -> None:
    """A relation search keeps the nodes it reaches in a table for as many as it can reach:
    arrays of a distance and a state per graph node made every page resident in a build
    (the whole kernel's 16M nodes: ~0.15 GB per thread). What relations take of the shared
    scratch is the fragments' sums alone; a ball still takes its arrays per node."""
    idx, _ = RepoIndex.build(root, save=False)
    t = idx.tables
    recompute_relations(t, t.live_ids())
    assert (t.rel_idx >= 0).any()
    assert _scratch._free and all(a[0].size == 0 and a[1].size == 0 for a in _scratch._free)
    assert all(a[2].size >= len(t.frag_text) for a in _scratch._free)
    node_ball(t.graph, np.array([0]), 0.05, 3, np.zeros(1))
    assert any(a[0].size >= t.graph.n_nodes for a in _scratch._free)

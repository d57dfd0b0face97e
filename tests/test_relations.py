"""Eq. 8 fragment relations: the sparse computation against a brute-force networkx one."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from repos import OTHER_LANG_FILES, make_repo

from repomem.config import IndexConfig
from repomem.index import RepoIndex


def brute_force(idx: RepoIndex, epsilon: float) -> dict[tuple[int, int], float]:
    """Literal Eq. 8: all node pairs, Dis = max-product path, zeroed below epsilon.

    A strength of exactly epsilon (0.8 * 0.5**4 == 0.05) is kept; the float tolerance makes
    that hold whichever way the product of the path's weights rounds.
    """
    g = idx.graph.to_networkx()
    for _, _, d in g.edges(data=True):
        d["cost"] = -math.log(d["weight"])
    a = idx.frag_nodes
    live = idx.live_ids().tolist()
    nodes = {int(k) for i in live for k in a[i].indices}
    dis = {}
    for k in nodes:
        lengths = nx.single_source_dijkstra_path_length(g, k, weight="cost")
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
    rel = idx.relations.tocoo()
    return {(int(i), int(j)): float(v) for i, j, v in zip(rel.row, rel.col, rel.data, strict=True)}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("rel") / "repo", OTHER_LANG_FILES)


def test_equals_brute_force_without_truncation(root: Path) -> None:
    config = replace(
        IndexConfig(), relation_epsilon=1e-12, node_neighbours=1000, fragment_neighbours=1000
    )
    idx, summary = RepoIndex.build(root, config, save=False)
    assert summary.truncated_fragments == 0
    got, want = computed(idx), brute_force(idx, 1e-12)
    assert got.keys() == want.keys()
    for key, value in want.items():
        assert got[key] == pytest.approx(value, rel=1e-9)


def test_cutoff_equals_thresholded_brute_force_and_error_is_bounded(root: Path) -> None:
    eps = 0.05
    config = replace(
        IndexConfig(), relation_epsilon=eps, node_neighbours=1000, fragment_neighbours=1000
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
    for i in idx.truncated:
        row = sorted((v for (a, _), v in full.items() if a == i), reverse=True)
        kept = sorted(idx.rel_val[i][idx.rel_idx[i] >= 0].tolist(), reverse=True)
        assert kept == pytest.approx(row[:2])


def test_node_cap_truncates_and_is_reported(root: Path) -> None:
    config = replace(IndexConfig(), node_neighbours=2, fragment_neighbours=1000)
    idx, summary = RepoIndex.build(root, config, save=False)
    assert summary.truncated_fragments > 0
    got = computed(idx)
    full = brute_force(idx, config.relation_epsilon)
    # truncation only ever drops strength: each kept relation is at most the full one
    for key, value in got.items():
        assert value <= full[key] + 1e-12
    untouched = [i for i in idx.live_ids().tolist() if i not in idx.truncated]
    for i in untouched:
        assert {k: v for k, v in got.items() if k[0] == i} == pytest.approx(
            {k: v for k, v in full.items() if k[0] == i}
        )


def test_no_self_relations(root: Path) -> None:
    idx, _ = RepoIndex.build(root, save=False)
    rel = idx.relations
    assert np.all(rel.diagonal() == 0)

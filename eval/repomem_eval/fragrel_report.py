"""Where FragRel's relations go, and how often the truncations bite, on real indexes.

For each repository: the share of relation pairs and of relation mass (the stored strengths,
Eq. 8 after the index's truncations) between fragments of the same file, of the same directory
and of other directories; on a sample of fragments, the edge kinds on the path that carries
most of each relation (the node pair with the largest ``a_ik * Dis(g_k, g_l) * a_jl``;
"shared node" when both fragments hold the node, as overlapping windows do), and the share of
fragments reaching each cap: a node search settling ``node_neighbours`` nodes, more related
fragments than ``fragment_neighbours`` (with the mass the fragment cap drops), a hub node.

    python eval/fragrel_report.py REPO [REPO ...] [--sample 1000] [--index-cache DIR]
        [--json OUT]

The index configuration comes from the usual settings (``REPOMEM_INDEX_*`` variables); an
index is reused from ``--index-cache`` when it matches the repository and the configuration.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from repomem.config import IndexConfig
from repomem.index.graph import COST, CodeGraph
from repomem.index.relations import SearchTree, search_tree
from repomem.index.repo import RepoIndex
from repomem.settings import load_settings
from repomem_eval.runner import open_index

PLACES = ("same file", "same directory", "other directories")


def place(a: str, b: str) -> str:
    if a == b:
        return PLACES[0]
    return PLACES[1] if PurePosixPath(a).parent == PurePosixPath(b).parent else PLACES[2]


def node_roles(graph: CodeGraph) -> dict[int, str]:
    """Directory, file and root nodes by id; every other node is a statement."""
    roles = {node: "dir" for node in graph.dirs.values()}
    for off in graph.stmt_offset.values():
        roles[off - 2], roles[off - 1] = "file", "root"
    return roles


def edge_kind(graph: CodeGraph, roles: dict[int, str], u: int, v: int) -> str:
    ru, rv = roles.get(u, "stmt"), roles.get(v, "stmt")
    if "dir" in (ru, rv):
        return "directory"
    if "file" in (ru, rv):
        return "file_root"
    if ru == rv == "root":
        return "import"
    nbr, cost = graph.neighbours(u)
    return "call" if cost[np.flatnonzero(nbr == v)[0]] == COST["call"] else "syntax"


def path_label(graph: CodeGraph, roles: dict[int, str], path: list[int]) -> str:
    if len(path) == 1:
        return "shared node"
    kinds = {edge_kind(graph, roles, u, v) for u, v in zip(path, path[1:], strict=False)}
    return "+".join(sorted(kinds))


def report(index: RepoIndex, sample: int, seed: int = 0) -> dict[str, Any]:
    # a report on the relation tables themselves: it reads them, as only the index does else
    config = index.config
    graph = index.tables.graph
    live = index.tables.live_ids()
    truncated = int(np.count_nonzero(index.tables.truncated[live]))
    first_path = {int(f): index.tables.frag_locs[f][0].path for f in live.tolist()}

    # every stored relation, by where its two fragments lie
    pairs: Counter[str] = Counter()
    mass: defaultdict[str, float] = defaultdict(float)
    rel_idx, rel_val = index.tables.rel_idx, index.tables.rel_val
    for i in live.tolist():
        for j, v in zip(rel_idx[i].tolist(), rel_val[i].tolist(), strict=True):
            if j >= 0:
                where = place(first_path[i], first_path[j])
                pairs[where] += 1
                mass[where] += v
    n_pairs, total = sum(pairs.values()), sum(mass.values())

    # a sample of fragments: their searches again, with paths
    rng = np.random.default_rng(seed)
    chosen = np.sort(rng.choice(live, size=min(sample, live.size), replace=False))
    roles = node_roles(graph)
    trees: dict[int, SearchTree] = {}
    node_frags = index.tables.node_frags
    degree = graph.adj.end - graph.adj.start
    node_capped = frag_capped = with_hub = 0
    dropped = kept = 0.0
    kind_pairs: Counter[str] = Counter()
    kind_mass: defaultdict[str, float] = defaultdict(float)
    for i in chosen.tolist():
        _, nodes, weights = index.tables.frag_nodes.gather(np.array([i]))
        acc: defaultdict[int, float] = defaultdict(float)
        best: dict[int, tuple[float, int, int]] = {}
        capped = False
        for k, a in zip(nodes.tolist(), weights.tolist(), strict=True):
            if k not in trees:
                trees[k] = search_tree(
                    graph,
                    k,
                    epsilon=config.relation_epsilon,
                    node_cap=config.node_neighbours,
                    hub=config.hub_degree,
                )
            tree = trees[k]
            capped |= tree.capped
            for u, s in zip(tree.nodes.tolist(), tree.strengths.tolist(), strict=True):
                lo, hi = node_frags.start[u], node_frags.end[u]
                for j, w in zip(
                    node_frags.cols[lo:hi].tolist(), node_frags.vals[lo:hi].tolist(), strict=True
                ):
                    if j == i:
                        continue
                    c = a * s * w
                    acc[j] += c
                    if c > best.get(j, (-1.0, 0, 0))[0]:
                        best[j] = (c, k, u)
        node_capped += capped
        with_hub += bool((degree[nodes] > config.hub_degree).any())
        row = sorted(acc.values(), reverse=True)
        frag_capped += len(row) > config.fragment_neighbours
        kept += sum(row[: config.fragment_neighbours])
        dropped += sum(row[config.fragment_neighbours :])
        for j, v in zip(rel_idx[i].tolist(), rel_val[i].tolist(), strict=True):
            if j < 0 or j not in best:
                continue
            _, k, u = best[j]
            label = path_label(graph, roles, trees[k].path_to(u))
            kind_pairs[label] += 1
            kind_mass[label] += v
    n = max(chosen.size, 1)
    sampled_pairs, sampled_mass = sum(kind_pairs.values()), sum(kind_mass.values())
    return {
        "config": {
            "relation_epsilon": config.relation_epsilon,
            "node_neighbours": config.node_neighbours,
            "fragment_neighbours": config.fragment_neighbours,
            "hub_degree": config.hub_degree,
        },
        "fragments": int(live.size),
        "relations_per_fragment": n_pairs / max(live.size, 1),
        "truncated": truncated / max(live.size, 1),
        "place_pairs": {p: pairs[p] / max(n_pairs, 1) for p in PLACES},
        "place_mass": {p: mass[p] / total if total else 0.0 for p in PLACES},
        "sampled": int(chosen.size),
        "node_cap": node_capped / n,
        "fragment_cap": frag_capped / n,
        "fragment_cap_mass_dropped": dropped / (kept + dropped) if kept + dropped else 0.0,
        "hub": with_hub / n,
        "path_pairs": {k: c / sampled_pairs for k, c in kind_pairs.most_common()},
        "path_mass": {k: kind_mass[k] / sampled_mass for k, _ in kind_pairs.most_common()},
    }


def pct(x: float) -> str:
    return f"{100 * x:.1f}"


def markdown(results: dict[str, dict[str, Any]]) -> str:
    names = list(results)
    lines = ["| | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]

    def row(label: str, values: list[str]) -> None:
        lines.append(f"| {label} | " + " | ".join(values) + " |")

    row("fragments", [str(r["fragments"]) for r in results.values()])
    row("relations per fragment", [f"{r['relations_per_fragment']:.1f}" for r in results.values()])
    for p in PLACES:
        row(
            f"{p}: % pairs / % mass",
            [f"{pct(r['place_pairs'][p])} / {pct(r['place_mass'][p])}" for r in results.values()],
        )
    labels = Counter()
    for r in results.values():
        labels.update(r["path_mass"])
    for label, _ in labels.most_common():
        row(
            f"path {label}: % pairs / % mass",
            [
                f"{pct(r['path_pairs'].get(label, 0))} / {pct(r['path_mass'].get(label, 0))}"
                for r in results.values()
            ],
        )
    row("% fragments truncated (index)", [pct(r["truncated"]) for r in results.values()])
    row("% reaching the node cap", [pct(r["node_cap"]) for r in results.values()])
    row("% reaching the fragment cap", [pct(r["fragment_cap"]) for r in results.values()])
    row(
        "% mass the fragment cap drops",
        [pct(r["fragment_cap_mass_dropped"]) for r in results.values()],
    )
    row("% holding a hub node", [pct(r["hub"]) for r in results.values()])
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("repos", nargs="+", type=Path, metavar="REPO")
    ap.add_argument("--sample", type=int, default=1000, help="fragments whose paths are traced")
    ap.add_argument("--index-cache", type=Path, default=None, metavar="DIR")
    ap.add_argument("--json", type=Path, default=None, metavar="OUT")
    args = ap.parse_args(argv)
    if args.sample < 1:
        ap.error(f"--sample must be at least 1, got {args.sample}")
    config: IndexConfig = load_settings(None).index
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        cache = args.index_cache or Path(scratch)
        for root in args.repos:
            if not root.is_dir():
                ap.error(f"{root} is not a directory")
            name = root.resolve().name
            repo_config = replace(config, index_dir=str((cache / name).absolute()))
            index, _, _ = open_index(root, repo_config, lambda m: print(m, file=sys.stderr))
            results[name] = report(index, args.sample)
    print(markdown(results))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

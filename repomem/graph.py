"""The weighted code graph G of FragRel appendix A.1, assembled from parsed files.

Nodes: directories, files, each file's syntax-tree root, and statement-level syntax nodes.
Edges (undirected, weights in [0, 1]): syntax parent-child 0.5, directory tree 0.3,
file-root 1.0, call site-definition 0.8. Relation strength between two nodes is the
maximum-product path weight, found as a shortest path on ``-log(w)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import PurePosixPath

import numpy as np
import scipy.sparse as sp

from repomem.parsing import ParsedFile

W_SYNTAX = 0.5
W_DIRECTORY = 0.3
W_FILE_ROOT = 1.0
W_CALL = 0.8

_WEIGHT = {"syntax": W_SYNTAX, "directory": W_DIRECTORY, "file_root": W_FILE_ROOT, "call": W_CALL}


@dataclass
class CodeGraph:
    """CSR adjacency over ``-log(weight)`` costs, each row sorted by (cost, neighbour), plus
    where each file's nodes start.

    Node ids: per file (sorted by path) ``[file, root, statements...]``, then directories.
    A statement's global id is ``stmt_offset[path] + local id``.
    """

    indptr: np.ndarray
    indices: np.ndarray
    cost: np.ndarray
    n_nodes: int
    stmt_offset: dict[str, int]
    edge_counts: dict[str, int]
    node_counts: dict[str, int]

    def to_networkx(self):  # noqa: ANN201 - networkx is only needed by tests and checks
        """The same graph with weights ``w`` (not costs), for reference computations."""
        import networkx as nx

        g = nx.Graph()
        g.add_nodes_from(range(self.n_nodes))
        for u in range(self.n_nodes):
            for p in range(self.indptr[u], self.indptr[u + 1]):
                v = int(self.indices[p])
                if u < v:
                    g.add_edge(u, v, weight=float(np.exp(-self.cost[p])))
        return g


@cache
def _parent(path: str) -> str:
    p = str(PurePosixPath(path).parent)
    return "" if p == "." else p


@cache
def _ancestors(path: str) -> tuple[str, ...]:
    """Every directory above ``path``, the repository root ("") included."""
    out = []
    while path:
        path = _parent(path)
        out.append(path)
    return tuple(out)


def build_graph(
    files: Mapping[str, ParsedFile], calls: Mapping[str, list[tuple[int, str, int]]]
) -> CodeGraph:
    """``calls[path]`` holds the file's resolved call edges (see ``Resolver.calls_of``)."""
    paths = sorted(files)
    offsets: dict[str, int] = {}
    file_node: dict[str, int] = {}
    nid = 0
    for path in paths:
        file_node[path] = nid
        offsets[path] = nid + 2
        nid += 2 + files[path].n_nodes
    dir_names = {""}
    for path in paths:
        dir_names.update(_ancestors(path))
    dirs: dict[str, int] = {}
    for d in sorted(dir_names):
        dirs[d] = nid
        nid += 1

    # syntax: each statement to its nearest statement ancestor, or to its file's root
    parent_of = np.full(nid, -1, np.int64)
    for path in paths:
        pf, off = files[path], offsets[path]
        parent_of[off : off + pf.n_nodes] = np.where(
            pf.node_parent >= 0, pf.node_parent + off, off - 1
        )
    children = np.flatnonzero(parent_of >= 0)

    # calls: unique pairs without self-loops
    cu, cv = [], []
    for path in paths:
        off = offsets[path]
        for src, tpath, tnode in calls.get(path, ()):
            if tpath in offsets:
                cu.append(off + src)
                cv.append(offsets[tpath] + tnode)
    cu_a, cv_a = np.array(cu, np.int64), np.array(cv, np.int64)
    lo, hi = np.minimum(cu_a, cv_a), np.maximum(cu_a, cv_a)
    key = np.unique(lo[lo != hi] * nid + hi[lo != hi])
    c_lo, c_hi = key // nid, key % nid
    # a call along a syntax edge replaces it: one edge per pair, the strongest kind
    shadowed = np.concatenate([c_lo[parent_of[c_lo] == c_hi], c_hi[parent_of[c_hi] == c_lo]])
    children = np.setdiff1d(children, shadowed, assume_unique=True)

    du = [dirs[_parent(d)] for d in dirs if d] + [dirs[_parent(p)] for p in paths]
    dv = [n for d, n in dirs.items() if d] + [file_node[p] for p in paths]
    fr = np.array([file_node[p] for p in paths], np.int64)
    pairs = {  # cheapest kind first: rows list neighbours by (cost, node)
        "file_root": (fr, fr + 1),
        "call": (c_lo, c_hi),
        "syntax": (children, parent_of[children]),
        "directory": (np.array(du, np.int64), np.array(dv, np.int64)),
    }
    blocks = []
    for kind, (a, b) in pairs.items():
        m = sp.csr_matrix(
            (np.ones(2 * a.size), (np.concatenate([a, b]), np.concatenate([b, a]))),
            shape=(nid, nid),
        )
        m.sort_indices()
        blocks.append((-np.log(_WEIGHT[kind]), m))
    counts = np.stack([np.diff(m.indptr) for _, m in blocks])
    indptr = np.zeros(nid + 1, np.int64)
    np.cumsum(counts.sum(axis=0), out=indptr[1:])
    indices = np.empty(indptr[-1], np.int64)
    cost = np.empty(indptr[-1], np.float64)
    before = indptr[:-1].copy()
    for (c, m), cnt in zip(blocks, counts, strict=True):
        row = np.repeat(np.arange(nid), cnt)
        dest = before[row] + (np.arange(m.nnz) - m.indptr[row])
        indices[dest] = m.indices
        cost[dest] = c
        before += cnt
    return CodeGraph(
        indptr=indptr,
        indices=indices,
        cost=cost,
        n_nodes=nid,
        stmt_offset=offsets,
        edge_counts={kind: int(a.size) for kind, (a, _) in pairs.items()},
        node_counts={
            "directory": len(dirs),
            "file": len(paths),
            "root": len(paths),
            "statement": int(sum(files[p].n_nodes for p in paths)),
        },
    )

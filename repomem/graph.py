"""The weighted code graph G of FragRel appendix A.1, assembled from parsed files.

Nodes: directories, files, each file's syntax-tree root, and statement-level syntax nodes.
Edges (undirected, weights in [0, 1]): syntax parent-child 0.5, directory tree 0.3,
file-root 1.0, call site-definition 0.8. Relation strength between two nodes is the
maximum-product path weight, found as a shortest path on ``-log(w)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

import numpy as np
import scipy.sparse as sp

from repomem.parsing import ParsedFile

W_SYNTAX = 0.5
W_DIRECTORY = 0.3
W_FILE_ROOT = 1.0
W_CALL = 0.8

EDGE_KINDS = ("syntax", "directory", "file_root", "call")
_KIND_WEIGHT = (W_SYNTAX, W_DIRECTORY, W_FILE_ROOT, W_CALL)


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


def _parent(path: str) -> str:
    p = str(PurePosixPath(path).parent)
    return "" if p == "." else p


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

    # every ancestor directory of every file; "" is the repository root
    dir_names = {""}
    for path in paths:
        dir_names.update("" if str(a) == "." else str(a) for a in PurePosixPath(path).parents)
    dirs: dict[str, int] = {}
    for d in sorted(dir_names):
        dirs[d] = nid
        nid += 1

    us: list[np.ndarray] = []
    vs: list[np.ndarray] = []
    kinds: list[np.ndarray] = []

    def add(u: np.ndarray, v: np.ndarray, kind: int) -> None:
        us.append(np.asarray(u, np.int64))
        vs.append(np.asarray(v, np.int64))
        kinds.append(np.full(len(us[-1]), kind, np.int8))

    # directory tree
    du = [dirs[_parent(d)] for d in dirs if d] + [dirs[_parent(p)] for p in paths]
    dv = [n for d, n in dirs.items() if d] + [file_node[p] for p in paths]
    add(np.array(du), np.array(dv), 1)

    # file-root and syntax edges
    fr = np.array([file_node[p] for p in paths], np.int64)
    add(fr, fr + 1, 2)
    for path in paths:
        pf = files[path]
        if pf.n_nodes == 0:
            continue
        off = offsets[path]
        local = np.arange(pf.n_nodes, dtype=np.int64)
        parent = np.where(pf.node_parent >= 0, pf.node_parent.astype(np.int64) + off, off - 1)
        add(local + off, parent, 0)

    # call edges
    cu, cv = [], []
    for path in paths:
        off = offsets[path]
        for src, tpath, tnode in calls.get(path, ()):
            if tpath in offsets:
                cu.append(off + src)
                cv.append(offsets[tpath] + tnode)
    add(np.array(cu, np.int64), np.array(cv, np.int64), 3)

    u = np.concatenate(us)
    v = np.concatenate(vs)
    k = np.concatenate(kinds)
    keep = u != v
    u, v, k = u[keep], v[keep], k[keep]
    lo, hi = np.minimum(u, v), np.maximum(u, v)
    w = np.asarray(_KIND_WEIGHT)[k]
    # one edge per node pair, the strongest kind
    order = np.lexsort((-w, hi, lo))
    lo, hi, w, k = lo[order], hi[order], w[order], k[order]
    first = np.ones(lo.size, bool)
    first[1:] = (lo[1:] != lo[:-1]) | (hi[1:] != hi[:-1])
    lo, hi, w, k = lo[first], hi[first], w[first], k[first]

    cost = -np.log(w)
    rows = np.concatenate([lo, hi])
    cols = np.concatenate([hi, lo])
    data = np.concatenate([cost, cost])
    # costs of 0 (weight 1.0) must survive: store cost + 1 and subtract after the CSR build
    m = sp.csr_matrix((data + 1.0, (rows, cols)), shape=(nid, nid))
    # each node's neighbours cheapest first (ties by id): bounded searches stop scanning early
    row_of = np.repeat(np.arange(nid), np.diff(m.indptr))
    order = np.lexsort((m.indices, m.data, row_of))
    m.indices, m.data = m.indices[order], m.data[order]
    edge_counts = {name: int((k == i).sum()) for i, name in enumerate(EDGE_KINDS)}
    node_counts = {
        "directory": len(dirs),
        "file": len(paths),
        "root": len(paths),
        "statement": int(sum(files[p].n_nodes for p in paths)),
    }
    return CodeGraph(
        indptr=m.indptr.astype(np.int64),
        indices=m.indices.astype(np.int64),
        cost=m.data - 1.0,
        n_nodes=nid,
        stmt_offset=offsets,
        edge_counts=edge_counts,
        node_counts=node_counts,
    )

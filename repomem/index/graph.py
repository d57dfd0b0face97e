"""The weighted code graph G of FragRel appendix A.1, assembled from parsed files.

Nodes: directories, files, each file's syntax-tree root, and statement-level syntax nodes.
Edges (undirected, weights in [0, 1]): syntax parent-child 0.5, directory tree 0.3,
file-root 1.0, call site-definition 0.8, and, beyond the paper and only when given a weight
(``IndexConfig.import_weight``), import: a file's root to the root of each repository module
it imports. Relation strength between two nodes is the maximum-product path weight, found as
a shortest path on ``-log(w)``.

One file's change rewrites only the adjacency rows it touches (``CodeGraph.replace_file``),
so node ids are allocated, not derived from the sorted file list: a file keeps its id range
while it fits, and takes a new one at the end when it grows past it. Every tie between equal
costs is broken by a node *key* derived from (path, position) instead of the id, so that
results do not depend on the allocation: an updated graph and a rebuilt one give the same
relations.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from typing import Protocol

import numpy as np

from repomem.index.mapped import LazyDict
from repomem.index.parsed import ParsedFile
from repomem.index.rowpool import RowPool, distinct_sorted, ranges, with_room
from repomem.index.trim import fresh_grown

W_SYNTAX = 0.5
W_DIRECTORY = 0.3
W_FILE_ROOT = 1.0
W_CALL = 0.8

_WEIGHT = {"syntax": W_SYNTAX, "directory": W_DIRECTORY, "file_root": W_FILE_ROOT, "call": W_CALL}
COST = {kind: float(-np.log(w)) for kind, w in _WEIGHT.items()}

Call = tuple[int, str, int]  # (local caller node, callee path, local callee node)
# The local node of a file's root: an import is the "call" (ROOT, module path, ROOT).
ROOT = -1

_LOCAL_BITS = 20  # positions per file in a key: a 1 MB file has fewer statements


@cache
def _parent(path: str) -> str:
    """The directory holding ``path`` ("" at the top): a string split, as a load lays out
    every file's (``pathlib`` took 0.5 s of a first edit on 8.5k files)."""
    return path.rpartition("/")[0]


@cache
def _ancestors(path: str) -> tuple[str, ...]:
    """Every directory above ``path``, the repository root ("") included."""
    out = []
    while path:
        path = _parent(path)
        out.append(path)
    return tuple(out)


def _base_key(kind: str, name: str) -> int:
    """A file's or directory's key prefix; positions inside a file fill the low bits."""
    h = hashlib.blake2b(f"{kind}:{name}".encode(), digest_size=8).digest()
    return (int.from_bytes(h, "little") >> (64 - 43)) << _LOCAL_BITS


@dataclass
class CodeGraph:
    """Adjacency over ``-log(weight)`` costs, each row sorted by (cost, neighbour key).

    Per file, nodes ``[file, root, statements...]`` are consecutive: a statement's id is
    ``stmt_offset[path] + local id``. ``key`` orders nodes wherever costs tie.
    """

    adj: RowPool
    key: np.ndarray
    stmt_offset: dict[str, int]
    capacity: dict[str, int]  # ids reserved per file, from its file node on
    size: dict[str, int]  # ids in use per file: 2 + statements
    dirs: dict[str, int]
    dir_children: Counter[str] = field(default_factory=Counter)
    n_nodes: int = 0
    import_cost: float = np.inf  # -log of the import edges' weight; inf: there are none

    def neighbours(self, u: int) -> tuple[np.ndarray, np.ndarray]:
        """Node ``u``'s neighbours and edge costs, cheapest first."""
        s, e = self.adj.start[u], self.adj.end[u]
        return self.adj.cols[s:e], self.adj.vals[s:e]

    def canonical_ids(self) -> tuple[np.ndarray, int]:
        """Per node id, its id as ``build_graph`` numbers the same files (-1: an id no node
        holds), and how many ids that numbering has: updates move files to new id ranges,
        a saved graph does not depend on them."""
        first, dirs, n = layout({p: s - 2 for p, s in self.size.items()})
        out = np.full(self.n_nodes, -1, np.int64)
        for path, node in first.items():
            cur = self.stmt_offset[path] - 2
            out[cur : cur + self.size[path]] = np.arange(node, node + self.size[path])
        for d, node in dirs.items():
            out[self.dirs[d]] = node
        return out, n

    def file_nodes(self, path: str) -> np.ndarray:
        if path not in self.stmt_offset:
            return np.empty(0, np.int64)
        first = self.stmt_offset[path] - 2
        return np.arange(first, first + self.size[path], dtype=np.int64)

    @property
    def node_counts(self) -> dict[str, int]:
        return {
            "directory": len(self.dirs),
            "file": len(self.stmt_offset),
            "root": len(self.stmt_offset),
            "statement": sum(self.size.values()) - 2 * len(self.size),
        }

    @property
    def edge_counts(self) -> dict[str, int]:
        kinds = dict(COST, **({"import": self.import_cost} if self.imports else {}))
        counts = dict.fromkeys(kinds, 0)
        n = self.adj.n_rows
        for lo in range(0, n, 1 << 16):  # a few rows at a time: no copy of the whole graph
            _, _, cost = self.adj.gather(np.arange(lo, min(lo + (1 << 16), n)))
            for kind, c in kinds.items():
                counts[kind] += int(np.count_nonzero(cost == c))
        return {kind: count // 2 for kind, count in counts.items()}

    @property
    def imports(self) -> bool:
        return bool(np.isfinite(self.import_cost))

    def _edge(self, u: int, v: int, kind: str) -> tuple[np.ndarray, np.ndarray, float]:
        """One edge ``u``-``v`` of ``kind`` as a block of the edges an update adds."""
        cost = self.import_cost if kind == "import" else COST[kind]
        return np.array([u], np.int64), np.array([v], np.int64), cost

    def to_networkx(self):  # noqa: ANN201 - networkx is only needed by tests and checks
        """The same graph with weights ``w`` (not costs), for reference computations."""
        import networkx as nx

        g = nx.Graph()
        g.add_nodes_from(range(self.n_nodes))
        for u in range(self.n_nodes):
            nbr, cost = self.neighbours(u)
            for v, c in zip(nbr.tolist(), cost.tolist(), strict=True):
                if u < v:
                    g.add_edge(u, v, weight=float(np.exp(-c)))
        return g

    # ------------------------------------------------------------------ one file's change
    def replace_file(
        self,
        path: str,
        new: ParsedFile | None,
        calls_before: Mapping[str, set[Call]],
        calls_after: Mapping[str, set[Call]],
        calls: Mapping[str, list[Call]],
        files: Mapping[str, ParsedFile],
        incoming: Mapping[str, np.ndarray],
        moved: Mapping[int, int],
    ) -> RowChange:
        """Plan ``path``'s new parse (``None``: gone) and the call changes it caused.

        ``calls_before``/``calls_after`` hold the calls of every file whose resolution was
        redone (``path`` included), ``calls`` every other file's, ``files`` the parses after
        the change, ``incoming`` per file the calls it made into ``path`` before the change
        (rows of source node, target node): those of files not resolved again still hold, at
        the target's new node when it is in ``moved`` (old local node -> new). Ids are
        allocated at once; the adjacency keeps its old rows until ``apply``, so the old graph
        can still be searched in between.
        """
        removed_u: list[np.ndarray] = []
        removed_v: list[np.ndarray] = []
        added: list[tuple[np.ndarray, np.ndarray, float]] = []

        old_nodes = self.file_nodes(path)
        indptr, old_nbr, old_cost = self.adj.gather(old_nodes)
        old_u = np.repeat(old_nodes, np.diff(indptr))
        old_keys = self.key[old_nodes]
        old_first = int(old_nodes[0]) if old_nodes.size else -1
        old_capacity = self.capacity.pop(path, 0)
        self.size.pop(path, None)
        self.stmt_offset.pop(path, None)

        new_nodes = np.empty(0, np.int64)
        if new is None:
            self._drop_from_directory(path, removed_u, removed_v)
        else:
            first, new_nodes = self._place_file(path, new, old_first, old_capacity, added)
            old_u, old_nbr, old_cost = self._link_file_calls(
                path,
                first == old_first,
                calls_after,
                incoming,
                moved,
                (old_u, old_nbr, old_cost),
                added,
            )

        self._call_changes(
            path, calls_before, calls_after, calls, files, removed_u, removed_v, added
        )
        return self._new_rows(
            old_nodes, old_keys, new_nodes, (old_u, old_nbr, old_cost), removed_u, removed_v, added
        )

    def _place_file(
        self,
        path: str,
        new: ParsedFile,
        old_first: int,
        old_capacity: int,
        added: list[tuple[np.ndarray, np.ndarray, float]],
    ) -> tuple[int, np.ndarray]:
        """Ids for the file's new nodes (where its old ones were, if they fit), their keys, and
        its directory, root and syntax edges; returns its first id and its nodes."""
        need = 2 + new.n_nodes
        if old_first >= 0 and need <= old_capacity:
            first, capacity = old_first, old_capacity
        else:
            first, capacity = self.n_nodes, room_for(need)
            self._grow(first + capacity)
        self.capacity[path], self.size[path] = capacity, need
        self.stmt_offset[path] = off = first + 2
        self.key[first : first + need] = _base_key("file", path) + np.arange(need)
        new_nodes = np.arange(first, first + need, dtype=np.int64)
        if old_first < 0:
            self._add_to_directory(path, first, added)
        else:
            added.append(self._edge(first, self.dirs[_parent(path)], "directory"))
        parent = np.where(new.node_parent >= 0, new.node_parent + off, off - 1)
        added.append(self._edge(first, first + 1, "file_root"))
        added.append((np.arange(off, off + new.n_nodes), parent.astype(np.int64), COST["syntax"]))
        return first, new_nodes

    def _link_file_calls(
        self,
        path: str,
        same_place: bool,
        calls_after: Mapping[str, set[Call]],
        incoming: Mapping[str, np.ndarray],
        moved: Mapping[int, int],
        old_rows: tuple[np.ndarray, np.ndarray, np.ndarray],
        added: list[tuple[np.ndarray, np.ndarray, float]],
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The call edges from and into the placed file (``same_place``: at its old ids);
        returns the file's old rows (node, neighbour, cost) less the call edges that stay."""
        old_u, old_nbr, old_cost = old_rows
        off = self.stmt_offset[path]
        cu, cv, imported = [], [], []
        for p, entries in calls_after.items():
            for src, tpath, tnode in entries:
                if (p == path or tpath == path) and tpath in self.stmt_offset:
                    cu.append(self.stmt_offset[p] + src)
                    cv.append(self.stmt_offset[tpath] + tnode)
                    imported.append(src == ROOT)
        # calls into the file that hold: caller node, target local node
        held_calls = [
            (pairs[:, 0] + self.stmt_offset[p], pairs[:, 1])
            for p, pairs in incoming.items()
            if p not in calls_after and p in self.stmt_offset
        ]
        callers = np.concatenate([np.empty(0, np.int64), *(c for c, _ in held_calls)])
        old_t = np.concatenate([np.empty(0, np.int64), *(t for _, t in held_calls)])
        new_t = _remapped(old_t, moved)
        stays = (new_t == old_t) & same_place
        # Same ids: those edges stay untouched, and so do their callers' rows (a module
        # called from thousands of places would otherwise rewrite them all).
        held = callers[stays] * self.n_nodes + off + old_t[stays]
        still = np.isin(old_nbr * self.n_nodes + old_u, held)
        cu.extend(callers[~stays].tolist())
        cv.extend((off + new_t[~stays]).tolist())
        imported.extend((new_t[~stays] == ROOT).tolist())
        cu_a, cv_a, is_import = (
            np.array(cu, np.int64),
            np.array(cv, np.int64),
            np.array(imported, bool),
        )
        added.append((cu_a[~is_import], cv_a[~is_import], COST["call"]))
        added.append((cu_a[is_import], cv_a[is_import], self.import_cost))
        return old_u[~still], old_nbr[~still], old_cost[~still]

    def apply(self, change: RowChange) -> None:
        """Write the rows that differ (a row rewritten as it was would only leave garbage)."""
        write = change.differs[np.searchsorted(change.rows, change.owner)]
        self.adj.set_rows(
            change.rows[change.differs], change.owner[write], change.nbr[write], change.cost[write]
        )

    @property
    def id_room(self) -> int:
        """Node ids the per-node arrays hold (``n_nodes`` and room after them): arrays kept
        beside the graph per node (``update``) are grown to it."""
        return int(self.key.size)

    def _grow(self, n: int) -> None:
        """``n`` node ids in use. The per-node arrays grow an eighth more than asked: a file
        that outgrows its ids moves to new ones at the end, and growing every per-node array
        to just fit at each move (eight arrays of 15 MB on the Linux kernel's kernel/ mm/
        fs/ include/) copied them all and left the allocator's heap to grow with the edits).
        The keys grow into pages of their own (``fresh_grown``), which a pause can move to a
        file and hand back (``IndexTables.row_maps``), as the saved ones they copy were."""
        if n > self.n_nodes:
            if n > self.id_room:
                room = n + n // 8
                self.adj.grow(room)
                self.key = fresh_grown(self.key, room)
            self.n_nodes = n

    def _add_to_directory(
        self, path: str, first: int, added: list[tuple[np.ndarray, np.ndarray, float]]
    ) -> None:
        child_node = first
        for d in _ancestors(path):
            self.dir_children[d] += 1
            known = d in self.dirs
            if not known:
                self.dirs[d] = self.n_nodes
                self._grow(self.n_nodes + 1)
                self.key[self.dirs[d]] = _base_key("dir", d)
            added.append(self._edge(child_node, self.dirs[d], "directory"))
            if known:
                return
            child_node = self.dirs[d]

    def _drop_from_directory(
        self, path: str, removed_u: list[np.ndarray], removed_v: list[np.ndarray]
    ) -> None:
        """Directories left empty disappear, as they would from a rebuild (the root stays)."""
        for d in _ancestors(path):
            self.dir_children[d] -= 1
            if self.dir_children[d] > 0 or d == "":
                return
            del self.dir_children[d]
            node = self.dirs.pop(d)
            nbr, _ = self.neighbours(node)
            removed_u.append(np.full(nbr.size, node, np.int64))
            removed_v.append(nbr)

    def _call_changes(
        self,
        path: str,
        before: Mapping[str, set[Call]],
        after: Mapping[str, set[Call]],
        calls: Mapping[str, list[Call]],
        files: Mapping[str, ParsedFile],
        removed_u: list[np.ndarray],
        removed_v: list[np.ndarray],
        added: list[tuple[np.ndarray, np.ndarray, float]],
    ) -> None:
        """Call edges between other files that appeared, vanished or changed kind. An edge
        exists while either end's file lists the call; a call along a syntax edge replaces
        it, and removing the call brings the syntax edge back."""
        untouched: dict[str, set[Call]] = {}

        def listed(p: str, state: Mapping[str, set[Call]]) -> set[Call]:
            if p in state:
                return state[p]
            if p not in untouched:
                untouched[p] = set(calls.get(p, ()))
            return untouched[p]

        def kind(p: str, s: int, q: str, t: int, state: Mapping[str, set[Call]]) -> str | None:
            if (s, q, t) in listed(p, state) or (t, p, s) in listed(q, state):
                return "import" if s == ROOT else "call"
            parent = files[p].node_parent if p == q and ROOT not in (s, t) else None
            if parent is not None and (parent[s] == t or parent[t] == s):
                return "syntax"
            return None

        changed: set[tuple[str, int, str, int]] = set()
        for p in set(before) | set(after):
            for s, q, t in before.get(p, set()) ^ after.get(p, set()):
                if path not in (p, q) and (p, s) != (q, t):
                    changed.add((p, s, q, t) if (p, s) < (q, t) else (q, t, p, s))
        for p, s, q, t in sorted(changed):
            if p not in self.stmt_offset or q not in self.stmt_offset:
                continue
            was, now = kind(p, s, q, t, before), kind(p, s, q, t, after)
            if was == now:
                continue
            u, v = self.stmt_offset[p] + s, self.stmt_offset[q] + t
            if was is not None:
                removed_u.append(np.array([u, v], np.int64))
                removed_v.append(np.array([v, u], np.int64))
            if now is not None:
                added.append(self._edge(u, v, now))

    def _new_rows(
        self,
        old_nodes: np.ndarray,
        old_keys: np.ndarray,
        new_nodes: np.ndarray,
        dropped: tuple[np.ndarray, np.ndarray, np.ndarray],
        removed_u: list[np.ndarray],
        removed_v: list[np.ndarray],
        added: list[tuple[np.ndarray, np.ndarray, float]],
    ) -> RowChange:
        """``dropped``: the file's old edges that do not hold (node, neighbour, cost);
        ``removed_*``: other edges that vanish."""
        empty = np.empty(0, np.int64)
        du, dv, dc = dropped
        others = np.concatenate([empty, *removed_u, *removed_v])
        ru = np.concatenate([empty, *removed_u, du])
        rv = np.concatenate([empty, *removed_v, dv])
        au = np.concatenate([empty, *(a for a, _, _ in added)])
        av = np.concatenate([empty, *(b for _, b, _ in added)])
        ac = np.concatenate([np.empty(0), *(np.full(a.size, c) for a, _, c in added)])
        keep = au != av
        au, av, ac = au[keep], av[keep], ac[keep]
        au, av, ac = _cheapest(np.r_[au, av], np.r_[av, au], np.r_[ac, ac])  # undirected
        # A row outside the file whose edges into it are dropped and added back as they were
        # (the file kept its ids) stays as it is: a file calling a hub thousands of times
        # would otherwise rewrite the hub's row on every change.
        file_rows = np.union1d(old_nodes, new_nodes)
        out_a, out_d = ~np.isin(au, file_rows), ~np.isin(dv, file_rows)
        same = _matched(
            np.r_[au[out_a], dv[out_d]],
            np.r_[av[out_a], du[out_d]],
            np.r_[ac[out_a], dc[out_d]],
            np.r_[
                np.zeros(np.count_nonzero(out_a), np.int8),
                np.ones(np.count_nonzero(out_d), np.int8),
            ],
        )
        outside = np.r_[au[out_a], dv[out_d]]
        kept = np.setdiff1d(outside, np.r_[outside[~same], others])
        rows = np.setdiff1d(np.concatenate([file_rows, others, au, dv]), kept)
        written = ~np.isin(au, kept)
        au, av, ac = au[written], av[written], ac[written]
        n = np.int64(self.n_nodes)
        indptr, cur_v, cur_c = self.adj.gather(rows)
        cur_u = np.repeat(rows, np.diff(indptr))
        gone = np.isin(cur_u * n + cur_v, np.r_[ru * n + rv, rv * n + ru])
        u, v, c = _cheapest(
            np.r_[cur_u[~gone], au], np.r_[cur_v[~gone], av], np.r_[cur_c[~gone], ac]
        )
        # rows by (cost, key)
        order = np.lexsort((self.key[v], c, u))
        u, v, c = u[order], v[order], c[order]

        def key_before(ids: np.ndarray) -> np.ndarray:
            """Keys as they were: the file's old range may have been renumbered in place."""
            out = self.key[ids]
            if old_nodes.size:
                mine = (ids >= old_nodes[0]) & (ids <= old_nodes[-1])
                out[mine] = old_keys[ids[mine] - old_nodes[0]]
            return out

        at = np.searchsorted(rows, u)  # each new entry's row index
        degree_after = np.bincount(at, minlength=rows.size)
        return RowChange(
            rows,
            u,
            v,
            c,
            differs=_rows_differ(indptr, cur_v, cur_c, at, degree_after, v, c),
            key_before=key_before(rows),
            key_after=self.key[rows],
            degree_before=np.diff(indptr),
            degree_after=degree_after,
            changed=_changed_entries(
                (key_before(cur_u), key_before(cur_v), cur_c), (self.key[u], self.key[v], c)
            ),
        )


@dataclass
class RowChange:
    """Adjacency rows to replace: every node whose neighbours or their costs change (in
    ids; ``changed`` tells which rows changed in keys, what searches depend on)."""

    rows: np.ndarray
    owner: np.ndarray
    nbr: np.ndarray
    cost: np.ndarray
    differs: np.ndarray  # per row: whether its entries (ids, costs, order) change
    key_before: np.ndarray  # per row: the node's key before the change, and after
    key_after: np.ndarray
    degree_before: np.ndarray  # per row: its number of neighbours before, and after
    degree_after: np.ndarray
    # node keys whose entries (neighbour key, cost) differ, sorted, and the cheapest such
    # entry's cost: a search passing through the node feels the change only that far on
    changed: tuple[np.ndarray, np.ndarray]


def _remapped(nodes: np.ndarray, moved: Mapping[int, int]) -> np.ndarray:
    """``nodes`` with those in ``moved`` replaced by their new number."""
    if not moved:
        return nodes
    old = np.fromiter(moved, np.int64, len(moved))
    new = np.fromiter(moved.values(), np.int64, len(moved))
    order = np.argsort(old)
    old, new = old[order], new[order]
    pos = np.minimum(np.searchsorted(old, nodes), old.size - 1)
    return np.where(old[pos] == nodes, new[pos], nodes)


def _rows_differ(
    indptr: np.ndarray,
    nbr: np.ndarray,
    cost: np.ndarray,
    at: np.ndarray,
    degree_after: np.ndarray,
    v: np.ndarray,
    c: np.ndarray,
) -> np.ndarray:
    """Per row: whether the entries now (``v``, ``c``, grouped by row index ``at``,
    ``degree_after`` per row) differ from those before (CSR ``indptr``, ``nbr``, ``cost``)."""
    degree = np.diff(indptr)
    differs = degree != degree_after
    same = np.flatnonzero(~differs & (degree > 0))
    if same.size:
        counts = degree[same]
        first = np.r_[0, np.cumsum(counts)[:-1]]
        before = ranges(indptr[same], counts)
        now = ranges(np.searchsorted(at, same), counts)
        mismatch = (nbr[before] != v[now]) | (cost[before] != c[now])
        differs[same] = np.add.reduceat(mismatch, first) > 0
    return differs


def _cheapest(
    u: np.ndarray, v: np.ndarray, c: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One edge per (u, v), the cheapest (strongest) kind; ordered by (u, v)."""
    order = np.lexsort((c, v, u))
    u, v, c = u[order], v[order], c[order]
    first = np.ones(u.size, bool)
    first[1:] = (u[1:] != u[:-1]) | (v[1:] != v[:-1])
    return u[first], v[first], c[first]


def _matched(u: np.ndarray, v: np.ndarray, c: np.ndarray, side: np.ndarray) -> np.ndarray:
    """Per entry: whether the other side holds the same (u, v, c); each side holds a pair once."""
    order = np.lexsort((side, c, v, u))
    us, vs, cs, ss = u[order], v[order], c[order], side[order]
    pair = (us[1:] == us[:-1]) & (vs[1:] == vs[:-1]) & (cs[1:] == cs[:-1]) & (ss[1:] != ss[:-1])
    hit = np.zeros(u.size, bool)
    hit[order[1:][pair]] = True
    hit[order[:-1][pair]] = True
    return hit


def _changed_entries(
    before: tuple[np.ndarray, np.ndarray, np.ndarray],
    after: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """(owner, neighbour, cost) entries on one side only: their owners and cheapest costs."""
    side = np.r_[np.zeros(before[0].size, np.int8), np.ones(after[0].size, np.int8)]
    owner, nbr, cost = (np.r_[b, a] for b, a in zip(before, after, strict=True))
    differs = ~_matched(owner, nbr, cost, side)
    owner, cost = owner[differs], cost[differs]
    order = np.lexsort((cost, owner))
    owner, cost = owner[order], cost[order]
    first = np.ones(owner.size, bool)
    first[1:] = owner[1:] != owner[:-1]
    return owner[first], cost[first]


def mix(x: np.ndarray) -> np.ndarray:
    """splitmix64: spreads bits so that sums of mixed values identify multisets."""
    x = np.asarray(x).astype(np.uint64)
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def multiset_hash(indptr: np.ndarray, ids: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per CSR-style row: an order-free hash of its (id, value) entries, values compared to
    twelve significant digits."""
    out = np.zeros(indptr.size - 1, np.uint64)
    if ids.size:
        h = mix(ids.astype(np.uint64) ^ mix(np.round(values * 1e12).astype(np.int64)))
        nonempty = np.flatnonzero(np.diff(indptr) > 0)
        with np.errstate(over="ignore"):
            out[nonempty] = np.add.reduceat(h, indptr[nonempty])
    return out


def layout(sizes: Mapping[str, int]) -> tuple[dict[str, int], dict[str, int], int]:
    """Canonical ids for files of ``sizes`` statements each: files and directories ordered
    by key, so ids and keys agree."""
    dir_names = {""}
    for path in sizes:
        dir_names.update(_ancestors(path))
    items = sorted(
        [(_base_key("file", p), 0, p) for p in sizes]
        + [(_base_key("dir", d), 1, d) for d in dir_names]
    )
    first: dict[str, int] = {}
    dirs: dict[str, int] = {}
    nid = 0
    for _, is_dir, name in items:
        if is_dir:
            dirs[name] = nid
            nid += 1
        else:
            first[name] = nid
            nid += room_for(2 + sizes[name])
    return first, dirs, nid


def import_cost(weight: float) -> float:
    """The cost of an import edge of ``weight`` (inf: none, at weight 0)."""
    return float(-np.log(weight)) if weight > 0 else np.inf


def room_for(size: int) -> int:
    """The ids a file of ``size`` nodes is given: a quarter more and 8, so that it can grow
    while being typed in without moving (a move rewrites every row that points into it)."""
    return size + size // 4 + 8


class NodeParents(Protocol):
    """What the graph reads of a file's parse (a ``ParsedFile``, or a build's rows of it
    read without the rest: ``saved_parse.NodeRows``)."""

    @property
    def n_nodes(self) -> int: ...

    @property
    def node_parent(self) -> np.ndarray: ...


@dataclass(frozen=True)
class CallRows:
    """Resolved calls as one array: rows of (file, source node, target file, target node),
    files numbered in ``paths``' order, as a build spools them (``tables.SpooledCalls``)
    and an index saves them."""

    paths: Sequence[str]
    rows: np.ndarray

    @classmethod
    def of(cls, calls: Mapping[str, list[Call]], paths: list[str]) -> CallRows:
        """``calls[path]`` (``Resolver.calls_of``) of ``paths`` as rows; calls into other
        files are left out."""
        number = {p: i for i, p in enumerate(paths)}
        blocks = [np.empty((0, 4), np.int64)]
        for i, path in enumerate(paths):
            # a mapping of saved calls makes each file's list for this read alone
            entries = (calls.peek(path) if isinstance(calls, LazyDict) else None) or calls.get(
                path, ()
            )
            rows = [(i, s, number[t], n) for s, t, n in entries if t in number]
            blocks.append(np.array(rows, np.int64).reshape(-1, 4))
        return cls(paths, np.concatenate(blocks))


# Pairs of nodes (u, v), a block at a time: one kind of edge's.
PairBlocks = Iterable[tuple[np.ndarray, np.ndarray]]

# entries a build reads or writes at a time, so that temporaries stay a few MB
_BLOCK = 1 << 20


@dataclass
class NodeLayout:
    """The graph's nodes as ``build_graph`` numbers them, which the calls do not change:
    a build makes them, and the fragments' node rows from them, while its calls resolve."""

    sizes: dict[str, int]  # statements per file
    first: dict[str, int]  # each file's first id (its file node), and each directory's
    dirs: dict[str, int]
    n_nodes: int
    key: np.ndarray
    # syntax: each statement's nearest statement ancestor, or its file's root
    parent_of: np.ndarray
    stmt_offset: dict[str, int] = field(init=False)  # as ``CodeGraph``'s

    def __post_init__(self) -> None:
        self.stmt_offset = {p: first + 2 for p, first in self.first.items()}


def node_layout(files: Mapping[str, NodeParents]) -> NodeLayout:
    """The nodes of ``files``' graph, their keys and syntax parents."""
    paths = sorted(files)
    sizes = {p: files[p].n_nodes for p in paths}
    file_first, dirs, nid = layout(sizes)
    key = np.zeros(nid, np.int64)
    parent_of = np.full(nid, -1, np.int64)
    for p in paths:
        first, parent = file_first[p], files[p].node_parent
        off = first + 2
        key[first : off + parent.size] = _base_key("file", p) + np.arange(2 + parent.size)
        parent_of[off : off + parent.size] = np.where(parent >= 0, parent + off, off - 1)
    for d, node in dirs.items():
        key[node] = _base_key("dir", d)
    return NodeLayout(sizes, file_first, dirs, nid, key, parent_of)


def build_graph(
    files: Mapping[str, NodeParents] | NodeLayout,
    calls: Mapping[str, list[Call]] | CallRows,
    import_weight: float = 0.0,
) -> CodeGraph:
    """``calls[path]`` holds the file's resolved call edges (see ``Resolver.calls_of``), its
    imports among them when ``import_weight`` is above 0; a build passes the rows it spooled,
    and the files' ``node_layout`` made beforehand (its syntax parents are used up here).

    Held besides the graph: one id per node and the edges as pairs; a build of the whole
    Linux kernel (12M nodes) took 2.5 GB more as one sparse matrix per kind of edge,
    merged, and the calls as Python lists."""
    nodes = files if isinstance(files, NodeLayout) else node_layout(files)
    sizes, file_first, dirs, nid = nodes.sizes, nodes.first, nodes.dirs, nodes.n_nodes
    key, parent_of = nodes.key, nodes.parent_of
    paths = list(sizes)
    offsets = nodes.stmt_offset

    call_rows = calls if isinstance(calls, CallRows) else CallRows.of(calls, paths)
    call_pairs, import_pairs = _call_pairs(call_rows, offsets, nid)
    del call_rows
    # a call along a syntax edge replaces it: one edge per pair, the strongest kind
    lo, hi = call_pairs // nid, call_pairs % nid
    shadowed = np.concatenate([lo[parent_of[lo] == hi], hi[parent_of[hi] == lo]])
    parent_of[shadowed] = -1
    del lo, hi, shadowed

    fr = np.array([file_first[p] for p in paths], np.int64)
    du = [dirs[_parent(d)] for d in dirs if d] + [dirs[_parent(p)] for p in paths]
    dv = [n for d, n in dirs.items() if d] + [file_first[p] for p in paths]
    kinds: dict[str, tuple[int, PairBlocks]] = {
        "file_root": (fr.size, [(fr, fr + 1)]),
        "call": (call_pairs.size, _split_pairs(call_pairs, nid)),
        "syntax": (int(np.count_nonzero(parent_of >= 0)), _syntax_pairs(parent_of)),
        "directory": (len(du), [(np.array(du, np.int64), np.array(dv, np.int64))]),
    }
    del parent_of, call_pairs  # the blocks hold them until read
    nodes.parent_of = np.empty(0, np.int64)
    cost_of = dict(COST)
    cost_of_import = import_cost(import_weight)
    if np.isfinite(cost_of_import):
        kinds["import"] = (import_pairs.size, _split_pairs(import_pairs, nid))
        cost_of["import"] = cost_of_import
    del import_pairs
    by_cost = sorted(kinds, key=cost_of.__getitem__)
    adj = _adjacency([(cost_of[k], *kinds.pop(k)) for k in by_cost], nid)
    return laid_out(sizes, adj, key, cost_of_import, (file_first, dirs, nid))


def _call_pairs(
    calls: CallRows, offsets: dict[str, int], nid: int
) -> tuple[np.ndarray, np.ndarray]:
    """The resolved calls between the graph's files, and its imports, each as the sorted,
    unique numbers ``low * nid + high`` of their ends (global node ids), self-loops left out.
    Each kind's numbers are written as they come, those whose low end is in the first half
    of the nodes from the front of an array and the others from its back (its untouched
    middle costs nothing), and each half is sorted and made unique in a thread of its own:
    one sort of each number, not one per block and another of the blocks' results."""
    start = np.array([offsets.get(p, -1) for p in calls.paths], np.int64)
    size, mid = len(calls.rows), nid // 2
    found = [np.empty(size, np.int64), np.empty(size, np.int64)]
    ends = [[0, size], [0, size]]  # per kind: how far its front and its back are written
    for at in range(0, size, _BLOCK):
        f, s, t, n = np.asarray(calls.rows[at : at + _BLOCK], np.int64).T
        known = (start[f] >= 0) & (start[t] >= 0)
        u, v = start[f] + s, start[t] + n
        lo, hi = np.minimum(u, v), np.maximum(u, v)
        pair = lo * nid + hi
        for out, end, imported in zip(found, ends, (False, True), strict=True):
            mine = known & (lo != hi) & ((s == ROOT) == imported)
            ahead, behind = pair[mine & (lo < mid)], pair[mine & (lo >= mid)]
            out[end[0] : end[0] + ahead.size] = ahead
            out[end[1] - behind.size : end[1]] = behind
            end[0] += ahead.size
            end[1] -= behind.size
    with ThreadPoolExecutor(2) as pool:
        parts = [
            pool.submit(_unique_in_place, out[a:b])
            for out, (front, back) in zip(found, ends, strict=True)
            for a, b in ((0, front), (back, size))
        ]
        calls_, imports = (
            np.concatenate([parts[k].result(), parts[k + 1].result()]) for k in (0, 2)
        )
    return calls_, imports


def _unique_in_place(values: np.ndarray) -> np.ndarray:
    """``values``' distinct numbers in order: ``values`` is sorted in place."""
    values.sort()
    return distinct_sorted(values)


def _split_pairs(pairs: np.ndarray, nid: int) -> PairBlocks:
    """``low * nid + high`` numbers as (low, high), a block at a time."""
    for at in range(0, pairs.size, _BLOCK):
        part = pairs[at : at + _BLOCK]
        yield part // nid, part % nid


def _syntax_pairs(parent_of: np.ndarray) -> PairBlocks:
    """(child, parent) for each node with a parent (``parent_of`` >= 0), a block at a time."""
    for at in range(0, parent_of.size, _BLOCK):
        part = parent_of[at : at + _BLOCK]
        child = np.flatnonzero(part >= 0)
        yield child + at, part[child]


def _adjacency(kinds: list[tuple[float, int, PairBlocks]], nid: int) -> RowPool:
    """The edges of ``kinds`` (cost, number of pairs, pairs; cheapest first) as rows, both
    ways: cheapest kind first, and ids follow keys, so rows list neighbours by (cost, key).

    Each entry is written once, as the number (row, kind, neighbour) that sorts it where
    it goes, into the array of neighbours itself, sorted there and then turned into the
    neighbour; the rows' room for edits follows (``with_room``). The entries of the first
    half of the rows are written from the front, the others from the back, and each part
    is sorted and turned into rows in a thread of its own (numpy lets go of the lock while
    it sorts and computes): one core's work, the whole Linux kernel's graph stage was."""
    n = 2 * sum(count for _, count, _ in kinds)
    per_row = len(kinds) * nid  # < 2**63 up to a billion nodes
    mid = nid // 2
    nbr = np.empty(with_room(n), np.int64)
    front, back = 0, n
    for rank, (_, _, blocks) in enumerate(kinds):
        for u, v in blocks:
            for a, b in ((u, v), (v, u)):
                entry = a * per_row + (rank * nid + b)
                low = a < mid
                ahead = entry[low]
                nbr[front : front + ahead.size] = ahead
                front += ahead.size
                behind = entry[~low]
                nbr[back - behind.size : back] = behind
                back -= behind.size
    assert front == back, (front, back)
    indptr = np.empty(nid + 1, np.int64)
    cost = np.empty(nbr.size, np.float64)
    cost_of_rank = np.array([c for c, _, _ in kinds], np.float64)

    def rows(start: int, stop: int, first: int, last: int) -> None:
        """Entries ``start:stop``, those of rows ``first:last`` (their bounds included)."""
        entries = nbr[start:stop]
        entries.sort()
        for row in range(first, last + 1, _BLOCK):
            bounds = np.arange(row, min(row + _BLOCK, last + 1), dtype=np.int64) * per_row
            indptr[row : row + bounds.size] = start + np.searchsorted(entries, bounds)
        for lo in range(0, entries.size, _BLOCK):
            part = entries[lo : lo + _BLOCK]
            cost[start + lo : start + lo + part.size] = cost_of_rank[part // nid % len(kinds)]
            part %= nid

    with ThreadPoolExecutor(2) as pool:
        done = [pool.submit(rows, 0, front, 0, mid - 1), pool.submit(rows, front, n, mid, nid)]
        for part in done:
            part.result()
    return RowPool.adopt(indptr, nbr, cost)


def laid_out(
    sizes: Mapping[str, int],
    adj: RowPool,
    key: np.ndarray,
    cost_of_import: float,
    placed: tuple[dict[str, int], dict[str, int], int] | None = None,
) -> CodeGraph:
    """The graph of files of ``sizes`` statements each whose ids are ``layout``'s: what
    ``build_graph`` makes, and a saved index holds as arrays (``canonical_ids``);
    ``placed``: ``layout``'s files and directories where they are made already."""
    paths = sorted(sizes)
    first, dirs, nid = placed or layout(sizes)
    children_of: Counter[str] = Counter(_parent(p) for p in paths)
    children_of.update(_parent(d) for d in dirs if d)
    return CodeGraph(
        adj=adj,
        key=key,
        stmt_offset={p: first[p] + 2 for p in paths},
        capacity={p: room_for(2 + sizes[p]) for p in paths},
        size={p: 2 + sizes[p] for p in paths},
        dirs=dirs,
        dir_children=children_of,
        n_nodes=nid,
        import_cost=cost_of_import,
    )

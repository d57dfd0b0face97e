"""One file's change applied to the tables of an index, exactly as a rebuild over the new
set of files would index it, recomputing only the relations the change can reach."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from repomem.index.build import (
    add_file_fragments,
    grow_relations,
    prepare_file,
    recompute_relations,
    write_relations,
)
from repomem.index.files import SourceFile
from repomem.index.graph import RowChange, multiset_hash
from repomem.index.languages import code_language
from repomem.index.parsing import ParsedFile, TreeCache, parse_source, supported
from repomem.index.relations import node_ball
from repomem.index.resolve import Resolver, moved_definitions
from repomem.index.tables import IndexTables
from repomem.index.trim import fresh_grown


def update_file(
    t: IndexTables,
    trees: TreeCache,
    path: str,
    text: str | None,
    searched: Callable[[], None] | None = None,
) -> bool:
    """Apply one file's new content (``None``: the file is gone), exactly as a full
    rebuild over the new set of files would; False if it changes nothing. ``trees``: the
    files updated last, for incremental parsing. ``searched`` is called once the searches
    for what the change reaches are done and before the relations are recomputed, with
    nothing writing the tables: the mapped pages those searches read may go back there
    (``RepoIndex.update_file``), before the recomputation reads its own.

    Only relations that can change are recomputed: a fragment's when one of its nodes'
    searches reached, before or after the change, a changed node or call edge (a node
    ``u`` can be affected only if the change lies within the radius its capped search
    settled, ``relations._search``).
    """
    changed, new_pf = _parse_change(t, trees, path, text)
    if not changed:
        return False
    graph, resolver = t.graph, t.resolver
    node_frags = t.node_frags
    calls = _resolve_again(t, resolver, path, new_pf)
    old_nodes = graph.file_nodes(path)
    held_before = node_frags.gather(old_nodes)
    old_frag_sig = multiset_hash(*held_before)
    change = graph.replace_file(
        path,
        new_pf,
        calls.old,
        calls.new,
        t.calls,
        t.parsed,
        incoming=calls.incoming,
        moved=calls.moved,
    )
    _grow_node_arrays(t)

    old_frags = _file_frags(t, path)
    freed = _replace_file_fragments(t, path, new_pf, text)
    new_nodes = graph.file_nodes(path)
    _update_fragment_nodes(
        t, np.union1d(old_frags, _file_frags(t, path)), np.union1d(old_nodes, new_nodes)
    )
    plan = _UpdatePlan(change, old_nodes, old_frag_sig, new_nodes, t, t.config.hub_degree)
    # what the old graph reached; the file's old nodes held the fragments they held then
    affected0 = _fragments_near(t, plan.seeds_before, (old_nodes, *held_before[:2]))
    graph.apply(change)
    _set_new_calls(t, path, calls)
    t.radius[new_nodes] = plan.carried_radius(t.radius)
    affected1 = _fragments_near(t, plan.seeds_after)
    rows = np.union1d(np.union1d(affected0, affected1), node_frags.columns(plan.hubs)[1])
    if searched is not None:
        searched()
    _recompute_relations_near(t, path, rows, old_frags, freed)
    return True


def _parse_change(
    t: IndexTables, trees: TreeCache, path: str, text: str | None
) -> tuple[bool, ParsedFile | None]:
    """Whether ``text`` changes what the index holds of ``path``, and the file's new parse
    (None: the file is gone, or no longer code the index reads)."""
    language = code_language(path, text) if text is not None else None
    if text is not None and language is not None and supported(language):
        digest = _digest(text)
        old = t.parsed.get(path)
        if old is not None and old.digest == digest:
            return False, None
        previous = (t.files[path].text, old) if old is not None else None
        return True, parse_source(path, language, text, digest, trees=trees, previous=previous)
    trees.forget(path)
    return path in t.parsed, None


@dataclass
class _CallChange:
    """What one file's change does to the resolved calls."""

    touched: set[str]  # the files resolved again: the file, and those whose calls it can change
    moved: dict[int, int]  # the file's definitions whose node moved: old node -> new
    incoming: dict[str, np.ndarray]  # the calls into the file, by calling file (``calls_into``)
    old: dict[str, set[tuple[int, str, int]]]  # the touched files' calls before
    new: dict[str, set[tuple[int, str, int]]]  # and after (none for a file that is gone)


def _resolve_again(
    t: IndexTables, resolver: Resolver, path: str, new_pf: ParsedFile | None
) -> _CallChange:
    """Put the new parse in, and resolve again the calls of the files it can change."""
    old_pf = t.parsed.get(path)
    touched = {path} | resolver.dependents(path, (old_pf, new_pf))
    moved = moved_definitions(old_pf, new_pf)
    incoming = t.calls_into.get(path, {})
    old_calls = {p: set(t.calls.get(p, ())) for p in touched}
    if new_pf is None:
        t.parsed.pop(path, None)
    else:
        t.parsed[path] = new_pf
    resolver.update(path, new_pf)
    new_calls = {p: set(resolver.calls_of(p)) for p in touched if p in t.parsed}
    return _CallChange(touched, moved, incoming, old_calls, new_calls)


def _set_new_calls(t: IndexTables, path: str, calls: _CallChange) -> None:
    """Record the touched files' new calls; the calls of files not resolved again follow
    the definitions that moved."""
    for p in calls.touched:
        t.set_calls(p, sorted(calls.new[p]) if p in t.parsed else None)
    moved = calls.moved
    moved_nodes = np.fromiter(moved, np.int64, len(moved))
    follow = [
        p
        for p, pairs in calls.incoming.items()
        if moved and p not in calls.touched and np.isin(pairs[:, 1], moved_nodes).any()
    ]
    for p in follow:
        t.follow_moved(p, path, moved)


def _recompute_relations_near(
    t: IndexTables, path: str, rows: np.ndarray, old_frags: np.ndarray, freed: list[int]
) -> None:
    """Clear the relations of the fragments that are gone, and recompute those of ``rows``
    (the fragments the change can reach) still live and of the file's new fragments."""
    grow_relations(t)
    if freed:
        gone = np.array(freed, np.int64)
        write_relations(t, gone, np.full(t.rel_idx[gone].shape, -1), 0.0)
        t.truncated[gone] = False
    new_frags = np.setdiff1d(_file_frags(t, path), old_frags)
    rows = np.union1d(rows[t.live[rows]], new_frags)
    recompute_relations(t, rows)


def _replace_file_fragments(
    t: IndexTables, path: str, pf: ParsedFile | None, text: str | None
) -> list[int]:
    """Moves the file to its new windows; a window whose text is unchanged keeps its
    fragment (and so its relations). Returns the fragments that no longer exist."""
    old = t.files.pop(path, None)
    old_frags = np.unique(old.win_frag).tolist() if old is not None else []
    for fid in old_frags:
        t.frag_locs[fid] = [loc for loc in t.frag_locs[fid] if loc.path != path]
    if pf is not None and text is not None:
        source = SourceFile(path, pf.language, text, pf.digest, len(text))
        prep = prepare_file(source, t.config, pf, terms=False)
        add_file_fragments(t, source, prep)
    freed = []
    for fid in old_frags:
        if not t.frag_locs[fid]:
            del t.by_text[t.frag_text[fid]]
            t.frag_text[fid] = ""
            t.bm25.remove(fid)
            t.free_ids.append(fid)
            t.live[fid] = False
            freed.append(fid)
    return freed


def _file_frags(t: IndexTables, path: str) -> np.ndarray:
    entry = t.files.get(path)
    return np.unique(entry.win_frag) if entry is not None else np.empty(0, np.int64)


def _grow_node_arrays(t: IndexTables) -> None:
    """The per-node arrays kept beside the graph grown to its ids; the radii into pages of
    their own (``fresh_grown``), which a pause moves to a file and hands back
    (``IndexTables.row_maps``): a copy of the saved ones on the heap stayed resident (on the
    Linux kernel's kernel/ mm/ fs/ include/, 16.5 MB, with the graph's keys 33 MB, at the
    first file an editing session typed past its node ids)."""
    n = t.graph.id_room
    t.node_frags.grow(n)
    if t.radius.size < n:
        t.radius = fresh_grown(t.radius, n, np.inf)


def _update_fragment_nodes(t: IndexTables, frags: np.ndarray, nodes: np.ndarray) -> None:
    """Refresh the rows one file's change touched: of its fragments, old and new (some
    shared with other files, whose nodes stay in them), and of its nodes, old and new."""
    frag_nodes, node_frags = t.frag_nodes, t.node_frags
    frag_nodes.grow(len(t.frag_text))
    live = frags[t.live[frags]]
    paths = sorted({loc.path for fid in live.tolist() for loc in t.frag_locs[fid]})
    f, n, w = t.frag_entries(paths)
    keep = np.isin(f, live)
    frag_nodes.set_rows(frags, *t.grouped(f[keep], n[keep], w[keep], by_key=True))
    mine = np.isin(n, nodes)
    node_frags.set_rows(nodes, *t.grouped(n[mine], f[mine], w[mine], by_key=False))


def _fragments_near(
    t: IndexTables,
    seeds: tuple[np.ndarray, np.ndarray],
    held: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """Fragments holding a node whose search radius reaches one of the seeds (nodes, and
    how far beyond each the change lies); ``held``: (nodes, indptr, fragments) of nodes
    whose fragments were different then."""
    seed_nodes, offsets = seeds
    ball, cost = node_ball(
        t.graph, seed_nodes, t.config.relation_epsilon, t.config.hub_degree, offsets
    )
    near = ball[cost <= t.radius[ball] * (1 + 1e-9) + 1e-12]
    _, frags = t.node_frags.columns(near)
    if held is not None:
        nodes, indptr, held_frags = held
        hit = np.searchsorted(nodes, near[np.isin(near, nodes)])
        frags = np.concatenate(
            [frags, *(held_frags[indptr[i] : indptr[i + 1]] for i in hit.tolist())]
        )
    return np.unique(frags)


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


class _UpdatePlan:
    """Which nodes a file's change can matter to, compared in node keys (ids may move).

    A node whose fragments or key changed matters to every search that settles it; one whose
    neighbours changed, to every search that passes through it, which for a hub (before and
    after) is only its own.
    """

    def __init__(
        self,
        change: RowChange,
        old_nodes: np.ndarray,
        old_frag_sig: np.ndarray,
        new_nodes: np.ndarray,
        index: IndexTables,
        hub: int,
    ) -> None:
        rows = change.rows
        frag_before = np.zeros(rows.size, np.uint64)
        frag_before[np.searchsorted(rows, old_nodes)] = old_frag_sig
        frag_after = np.zeros(rows.size, np.uint64)
        frag_after[np.searchsorted(rows, new_nodes)] = multiset_hash(
            *index.node_frags.gather(new_nodes)
        )
        alive_before = change.degree_before > 0
        alive_after = change.degree_after > 0
        kb, ka = change.key_before, change.key_after
        # per key: the row before and after (-1: no such node then)
        keys = np.union1d(kb[alive_before], ka[alive_after])
        at_before = np.full(keys.size, -1)
        at_before[np.searchsorted(keys, kb[alive_before])] = np.flatnonzero(alive_before)
        at_after = np.full(keys.size, -1)
        at_after[np.searchsorted(keys, ka[alive_after])] = np.flatnonzero(alive_after)
        both = (at_before >= 0) & (at_after >= 0)
        b, a = at_before[both], at_after[both]
        settle = np.ones(keys.size, bool)
        settle[both] = frag_before[b] != frag_after[a]
        degree_before, degree_after = change.degree_before[b], change.degree_after[a]
        # per key: the cheapest entry (neighbour key, cost) on one side only; inf: none
        changed_keys, changed_cost = change.changed
        cheapest = np.full(keys.size, np.inf)
        if changed_keys.size:
            pos = np.minimum(np.searchsorted(changed_keys, keys), changed_keys.size - 1)
            hit = changed_keys[pos] == keys
            cheapest[hit] = changed_cost[pos[hit]]
        passing = np.ones(keys.size, bool)
        passing[both] = np.isfinite(cheapest[both])
        stays_hub = np.zeros(keys.size, bool)
        stays_hub[both] = (degree_before > hub) & (degree_after > hub)
        seed = settle | (passing & ~stays_hub)
        # A node whose fragments and key stay and which is no hub, before or after, matters
        # only to the searches that go on from it along an entry that changed: a search
        # feels the change no nearer than that entry's cost beyond the node.
        calm = np.zeros(keys.size, bool)
        calm[both] = ~settle[both] & (degree_before <= hub) & (degree_after <= hub)
        offset = np.where(calm & passing, cheapest, 0.0)
        then, now = seed & (at_before >= 0), seed & (at_after >= 0)
        self.seeds_before = (rows[at_before[then]], offset[then])
        self.seeds_after = (rows[at_after[now]], offset[now])
        self.hubs = rows[at_after[passing & stays_hub & ~settle]]
        # the file's nodes: where each one's radius was, by key
        self._from = np.full(new_nodes.size, -1)
        old_key = dict(
            zip(kb[np.searchsorted(rows, old_nodes)].tolist(), old_nodes.tolist(), strict=True)
        )
        for i, k in enumerate(change.key_after[np.searchsorted(rows, new_nodes)].tolist()):
            self._from[i] = old_key.get(k, -1)

    def carried_radius(self, radius: np.ndarray) -> np.ndarray:
        """The file's new nodes' radii: an unchanged node keeps its own, others are unknown."""
        return np.where(self._from >= 0, radius[np.maximum(self._from, 0)], np.inf)

"""The public methods a Python class's card lists (its skeleton's candidates), found when the
file is parsed and kept with its node rows (``ParsedFile.class_methods``, saved with them): a
cursor's first card of a class gathered them by a scan of every definition name of the file
(~20% of cutting a first card; a test module has hundreds of definitions), a card now reads
them. In source order, so that however a skeleton ranks them (``cards.skeleton_methods``) it
ranks the same list."""

from __future__ import annotations

import numpy as np

from repomem.index.parsed import Definition, ParsedFile


def class_methods(pf: ParsedFile) -> np.ndarray:
    """A Python parse's classes with public methods, packed in one int32 array: their count
    ``n``, their statement nodes (ascending), ``n + 1`` bounds into the rest, then each one's
    public methods as indices into ``pf.definitions``, in source order. A class's methods are
    the definitions named ``Class.m`` (one part more than its name, ``m`` public, its
    constructor and ``__call__`` included) of every class of the file so named."""
    names, nodes, classes = pf.definition_columns()
    by_owner: dict[str, list[int]] = {}
    for k, name in enumerate(names):
        owner, dot, bare = name.rpartition(".")
        if dot and public(bare):
            by_owner.setdefault(owner, []).append(k)
    listed = sorted(
        (nodes[k], by_owner[name])
        for k, name in enumerate(names)
        if classes[k] and name in by_owner
    )
    bounds = np.cumsum([0, *(len(methods) for _, methods in listed)])
    return np.concatenate(
        [
            [len(listed)],
            [node for node, _ in listed],
            bounds,
            [k for _, methods in listed for k in methods],
        ]
    ).astype(np.int32)


def public_methods(pf: ParsedFile, node: int) -> list[Definition]:
    """The public methods of the class at statement ``node`` (``class_methods``)."""
    packed = pf.class_methods
    n = int(packed[0]) if packed.size else 0
    # (the array's methods: numpy's functions dispatch first, ~1 µs a call of a first card)
    at = int(packed[1 : n + 1].searchsorted(node))
    if at == n or int(packed[1 + at]) != node:
        return []
    lo, hi = packed[1 + n + at : 3 + n + at].tolist()
    return pf.definitions_at(packed[2 + 2 * n + lo : 2 + 2 * n + hi].tolist())


def public(name: str) -> bool:
    """Whether a method a class's skeleton may list: its constructor, ``__call__`` or a name
    without a leading ``_``."""
    return name == "__init__" or name == "__call__" or not name.startswith("_")

"""The call resolver's tables over every file, as a saved index maps them.

``Names`` is ``Resolver.by_name``: which definitions bear a name. A loaded index reads its
saved part in place, so that the first edit after a load enters nothing from every file's
parse (on the Linux kernel's kernel/ mm/ fs/ include/ that took ~3 s and held 78 MB);
``PerFile`` makes a file's own tables (its definitions by name, its imports) from its parse
when resolution first reads them.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping
from operator import itemgetter
from typing import Generic, TypeVar

import numpy as np

from repomem.index.mapped import Vocabulary, fnv1a, hash_order
from repomem.index.parsed import ParsedFile

# (namespace, name): ``by_name``'s key
Key = tuple[str, str]
# (file path, local node)
Target = tuple[str, int]
V = TypeVar("V")

_PATH = itemgetter(0)
# looked-up keys remembered; past this, the memory is cleared
_REMEMBERED = 1 << 16
# files whose values a ``_Kept`` keeps when read within the last ``_IDLE`` drops: with 2,048,
# an editing session on the Linux kernel's subset kept the tables of every header its edited
# files include (~4.5 MB more from its 100th to its 1,000th edit, the bound still far off)
_KEPT = 512
# drops a value may stay unread within ``_KEPT`` before it goes: kept however long unread, the
# tables an editing session on the Linux kernel's subset made filled towards the bound as it
# moved on to other files (C files' tables 237 at its 100th edit, 503 at its 600th: ~5.5 MB)
_IDLE = 8
# the arrays of ``Names.arrays``
_NAME_ARRAYS = (
    "rn_keys",
    "rn_keys_off",
    "rn_keys_hash",
    "rn_keys_ids",
    "rn_indptr",
    "rn_file",
    "rn_node",
)


def vocabulary_arrays(
    name: str, words: Iterable[str], base: Vocabulary | None = None
) -> dict[str, np.ndarray]:
    """``words`` (in id order, after ``base``'s saved words) as the arrays a ``Vocabulary``
    reads, named ``name``, ``name_off``, ``name_hash``, ``name_ids``."""
    encoded = [w.encode("utf-8", "surrogatepass") for w in words]
    data0, off0 = (
        base.arrays()[:2] if base is not None else (np.empty(0, np.uint8), np.zeros(1, np.int64))
    )
    offsets = np.empty(off0.size + len(encoded), np.int64)
    offsets[: off0.size] = off0
    np.cumsum([len(e) for e in encoded], out=offsets[off0.size :])
    offsets[off0.size :] += off0[-1]
    data = np.concatenate([np.asarray(data0), np.frombuffer(b"".join(encoded), np.uint8)])
    return encoded_vocabulary(name, data, offsets)


def encoded_vocabulary(name: str, data: np.ndarray, offsets: np.ndarray) -> dict[str, np.ndarray]:
    """The words encoded in ``data`` (the i-th at ``offsets[i]:offsets[i + 1]``) as the
    arrays of ``vocabulary_arrays``."""
    hashes = fnv1a(data, offsets)
    order = hash_order(hashes)
    return {
        name: data,
        f"{name}_off": offsets,
        f"{name}_hash": hashes[order],
        f"{name}_ids": order.astype(np.int64),
    }


def saved_vocabulary(name: str, a: Mapping[str, np.ndarray]) -> Vocabulary:
    return Vocabulary(a[name], a[f"{name}_off"], a[f"{name}_hash"], a[f"{name}_ids"])


class SavedNames:
    """``Names`` as a saved index holds it (``rn_*``): the keys ``namespace:name`` (a
    ``Vocabulary``) and, per key id, the rows (file number, node) of its definitions, in
    file order and, within a file, in the order of its definitions."""

    def __init__(self, a: Mapping[str, np.ndarray]) -> None:
        self.keys = saved_vocabulary("rn_keys", a)
        self.indptr, self.file, self.node = a["rn_indptr"], a["rn_file"], a["rn_node"]
        self.arrays = {name: a[name] for name in _NAME_ARRAYS}

    def rows(self, key: Key) -> tuple[list[int], list[int]]:
        kid = self.keys.get(f"{key[0]}:{key[1]}")
        if kid is None:
            return [], []
        lo, hi = int(self.indptr[kid]), int(self.indptr[kid + 1])
        return self.file[lo:hi].tolist(), self.node[lo:hi].tolist()


class Names:
    """(namespace, name) -> the definitions so named, as (file, node), in the order of
    their files' paths (a build's order, whichever files were updated since) and of the
    definitions within a file. The saved part (``SavedNames``, numbered by ``paths``) is read
    in place; the files entered since hold their entries in memory, and the saved rows of a
    file entered again or removed are passed over."""

    def __init__(self, paths: list[str] | None = None, saved: SavedNames | None = None) -> None:
        self._paths = paths or []
        self._number = {p: i for i, p in enumerate(self._paths)} if saved is not None else {}
        self._saved = saved
        self._new: dict[Key, list[Target]] = {}
        self._left: set[int] = set()  # saved files whose rows are passed over
        self._found: dict[Key, tuple[Target, ...]] = {}

    def get(self, key: Key, default: V = None) -> tuple[Target, ...] | V:  # type: ignore[assignment]
        """The definitions named ``key`` (``default`` when there are none)."""
        found = self._found.get(key)
        if found is None:
            found = self._gather(key)
            if len(self._found) > _REMEMBERED:
                self._found.clear()
            self._found[key] = found
        return found if found else default

    def prefetch(self, namespace: str, names: Iterable[str]) -> None:
        """Find the saved ids of the keys ``namespace:name`` of ``names`` in one compiled
        pass (``Vocabulary.ids``), which ``get`` then reads: a build's resolution asks for
        the names each file calls, and one at a time, each found by hash in Python, they
        took ~10 % of the kernel subset's resolution."""
        if self._saved is None:
            return
        # (ASCII words only: a name holding a lone surrogate is left to ``get`` to fail on)
        words = [f"{namespace}:{name}" for name in names]
        self._saved.keys.ids([w for w in words if w.isascii()])

    def only(self, key: Key) -> Target | None:
        """The one definition named ``key``; None for none or several, counted without
        gathering them (a guess by a method's name asks it of names like ``setUp``, which
        thousands of test classes define)."""
        found = self._found.get(key)
        if found is not None:
            return found[0] if len(found) == 1 else None
        new = self._new.get(key, [])
        files, nodes = self._saved.rows(key) if self._saved is not None else ([], [])
        kept = [i for i, f in enumerate(files) if f not in self._left] if self._left else files
        if len(kept) + len(new) != 1:
            return None
        if new:
            return new[0]
        i = kept[0] if self._left else 0
        return self._paths[files[i]], nodes[i]

    def forget_found(self) -> None:
        """Forget the definitions looked up so far (gathered again when next asked): an
        editing session looks up the names of every file it resolves again, and keeping
        them all (up to ``_REMEMBERED``) grew it by ~8 MB at one edit of a widely included
        Linux header."""
        self._found = {}
        if self._saved is not None:
            self._saved.keys.forget_seen()

    def _gather(self, key: Key) -> tuple[Target, ...]:
        new = self._new.get(key, [])
        if self._saved is None:
            return tuple(new)
        files, nodes = self._saved.rows(key)
        paths, left = self._paths, self._left
        out = [(paths[f], n) for f, n in zip(files, nodes, strict=True) if f not in left]
        return tuple(sorted(out + new, key=_PATH) if out and new else out or new)

    def add(self, path: str, key: Key, node: int) -> None:
        """Enter one definition of ``path`` (after the file's earlier ones)."""
        entries = self._new.setdefault(key, [])
        if entries and entries[-1][0] > path:
            bisect.insort(entries, (path, node), key=_PATH)
        else:
            entries.append((path, node))
        self._found.pop(key, None)

    def remove(self, path: str, keys: Iterable[Key]) -> None:
        """Take out ``path``'s definitions; ``keys``: the names of those it was entered with."""
        for key in keys:
            self._found.pop(key, None)
            entries = self._new.get(key)
            if entries:
                kept = [t for t in entries if t[0] != path]
                if kept:
                    self._new[key] = kept
                else:
                    del self._new[key]
        number = self._number.get(path)
        if number is not None:
            self._left.add(number)

    def arrays(self, paths: list[str]) -> dict[str, np.ndarray]:
        """The table over ``paths`` (sorted) as the arrays of ``SavedNames``: the rows of
        saved files not entered again are copied, renumbered, and the saved keys keep their
        ids, so that nothing saved is decoded."""
        saved = self._saved
        if saved is not None and not self._new and not self._left and paths == self._paths:
            return dict(saved.arrays)  # what the rows below would make of them again
        number = {p: i for i, p in enumerate(paths)}
        ids: dict[str, int] = {}
        base = len(saved.keys) if saved is not None else 0
        keys, files, nodes = [], [], []
        for (ns, name), entries in self._new.items():
            word = f"{ns}:{name}"
            kid = saved.keys.get(word) if saved is not None else None
            if kid is None:
                kid = ids.setdefault(word, base + len(ids))
            for p, node in entries:
                keys.append(kid)
                files.append(number[p])
                nodes.append(node)
        k = np.array(keys, np.int64)
        f = np.array(files, np.int32)
        n = np.array(nodes, np.int32)
        if saved is not None:
            renumber = np.full(len(self._paths), -1, np.int32)
            for p, i in self._number.items():
                if p in number and i not in self._left:
                    renumber[i] = number[p]
            row_key = np.repeat(np.arange(base, dtype=np.int64), np.diff(saved.indptr))
            kept = renumber[saved.file] >= 0
            k = np.r_[row_key[kept], k]
            f = np.r_[renumber[saved.file[kept]], f].astype(np.int32)
            n = np.r_[saved.node[kept], n].astype(np.int32)
        keys = vocabulary_arrays("rn_keys", ids, saved.keys if saved is not None else None)
        return _name_rows(keys, k, f, n)


def _name_rows(
    keys: dict[str, np.ndarray], k: np.ndarray, f: np.ndarray, n: np.ndarray
) -> dict[str, np.ndarray]:
    """``Names.arrays``: the keys' vocabulary ``keys`` and the rows (key id, file number,
    node), ordered by key, then file, a file's rows staying in their order."""
    order = np.lexsort((np.arange(k.size), f, k))
    k, f, n = k[order], f[order], n[order]
    return {
        **keys,
        "rn_indptr": np.searchsorted(k, np.arange(keys["rn_keys_off"].size)).astype(np.int64),
        "rn_file": f,
        "rn_node": n,
    }


class NameRows:
    """Every file's definitions entered as ``Names`` rows of ids, a file at a time (a
    build's), and made into the table a saved index maps (``names``), over ``paths``:
    as a dict of tuples, ~200 bytes a definition were held through the whole resolution (the
    kernel subset's 0.4M definitions ~80 MB), growing with the repository; as rows, 16."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = paths
        self._ids: dict[str, int] = {}
        self._data = bytearray()
        self._ends = array("q", [0])
        self._keys, self._files, self._nodes = array("q"), array("i"), array("i")

    def add_file(self, file: int, namespace: str, names: list[str], nodes: list[int]) -> None:
        """The definitions of ``paths[file]`` (after the earlier files'), each keyed by the
        last part of its name (``Names``' key ``(namespace, last part)``): numbered a file
        at a time, not a call and a key tuple per definition (the kernel subset's 0.4M
        definitions, a serial step before resolution's runs fork)."""
        ids, before = self._ids, len(self._ids)
        words = [f"{namespace}:{name.rpartition('.')[2]}" for name in names]
        kids = [ids.setdefault(word, len(ids)) for word in words]
        if len(ids) > before:  # the words new here, in the order they were numbered
            new = dict.fromkeys(w for w, k in zip(words, kids, strict=True) if k >= before)
            for word in new:
                self._data += word.encode("utf-8", "surrogatepass")
                self._ends.append(len(self._data))
        self._keys.extend(kids)
        self._files.extend(array("i", [file]) * len(kids))
        self._nodes.extend(nodes)

    def names(self) -> Names:
        """The table, read in place as a loaded index's (its ``arrays`` as they are)."""
        keys = encoded_vocabulary(
            "rn_keys", np.frombuffer(self._data, np.uint8).copy(), np.array(self._ends, np.int64)
        )
        self._ids, self._data = {}, bytearray()
        rows = [np.array(a, t) for a, t in ((self._keys, np.int64), (self._files, np.int32))]
        rows.append(np.array(self._nodes, np.int32))
        self._keys, self._files, self._nodes = array("q"), array("i"), array("i")
        return Names(self.paths, SavedNames(_name_rows(keys, *rows)))


class _Kept(Generic[V]):
    """Values by file, of which ``drop_unread`` keeps a bounded number."""

    def __init__(self) -> None:
        self._made: dict[str, V] = {}
        self._read: set[str] = set()
        self._drops = 0  # calls of ``drop_unread``
        self._last: dict[str, int] = {}  # per value kept, the last call it was read before

    def forget(self, path: str) -> None:
        self._made.pop(path, None)

    def drop_unread(self) -> None:
        """Drop the values not read within the last ``_IDLE`` calls, and past ``_KEPT``
        files' values those not read since the last call (made again when next read): a
        session reaching new files keeps those of the files it works on lately, not of
        every file it reached. The values are small beside the parses they come from (which
        a loaded index drops at every call), and a first edit that finds them made resolves
        its includes without decoding every header's parse."""
        self._drops += 1
        for p in self._read:
            self._last[p] = self._drops
        since = self._drops - (1 if len(self._made) > _KEPT else _IDLE)
        self._made = {p: v for p, v in self._made.items() if self._last.get(p, 0) > since}
        self._last = {p: self._last[p] for p in self._made}
        self._read = set()


class Recent(_Kept[V]):
    """Values by file that resolution makes and may read again (a C file's includes seen
    through, ``CFamily._visible``), a bounded number kept (``drop_unread``): a build reads
    each file's once, and kept, every file's took a third of a resolution's memory (the
    kernel subset's ~0.1 GB of ~0.3 GB)."""

    def get(self, path: str) -> V | None:
        made = self._made.get(path)
        if made is not None:
            self._read.add(path)
        return made

    def __setitem__(self, path: str, value: V) -> None:
        self._made[path] = value
        self._read.add(path)

    def clear(self) -> None:
        self._made.clear()


class PerFile(_Kept[V], Mapping[str, V]):
    """A table of each file's own entries (``Resolver.defs``: its definitions by name),
    made from the file's parse when first read: a loaded index makes them for the files
    resolution reads, not for every file. ``forget`` drops a file's, made again from its
    next parse."""

    def __init__(self, files: Mapping[str, ParsedFile], make: Callable[[ParsedFile], V]) -> None:
        super().__init__()
        self._files = files
        self._make = make

    def __getitem__(self, path: str) -> V:
        made = self._made.get(path)
        if made is None:
            made = self._made[path] = self._make(self._files[path])
        self._read.add(path)
        return made

    def get(self, path: str, default: V | None = None) -> V | None:  # type: ignore[override]
        """As ``Mapping.get``, without its ``KeyError`` for a file not indexed (a query
        asks the tables of every file its names reach, many times over)."""
        made = self._made.get(path)
        if made is None:
            return self[path] if path in self._files else default
        self._read.add(path)
        return made

    def __contains__(self, path: object) -> bool:
        return path in self._files

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)

"""Index tables that read a saved index in place and keep only their changes in memory.

A saved index is opened by mapping its arrays (``repomem.index.store``): nothing is decoded or
copied when it is opened, and a repository of millions of lines answers at once. Each table
here is a *base* (arrays of the saved generation, possibly mapped) plus an in-memory *delta*
of what updates changed since; saving folds both into the next generation. A table built in
memory (``RepoIndex.build``) has an empty base and behaves like the plain container it stands
for.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, MutableMapping
from pathlib import Path
from typing import Generic, TypeVar

import numpy as np

from repomem.core import Location
from repomem.index.jit import numba
from repomem.index.spool import TextWriter, file_id, mapped

K = TypeVar("K")
V = TypeVar("V")


def bytes_key(encoded: bytes) -> int:
    """A fragment text's content hash, of its UTF-8: stable tie-breaks, and the key
    ``TextIds`` finds it by."""
    return int.from_bytes(hashlib.blake2b(encoded, digest_size=8).digest(), "little", signed=True)


def bytes_keys(text: bytes, spans: np.ndarray) -> np.ndarray:
    """``bytes_key`` of each slice ``text[lo:hi]`` of ``spans`` (rows of bounds), as int64: the
    digests joined and read as one array (a file's windows' keys one by one, each made a
    Python int, took ~2% of a build's parsing workers on the Linux kernel)."""
    blake2b = hashlib.blake2b
    digests = b"".join([blake2b(text[lo:hi], digest_size=8).digest() for lo, hi in spans.tolist()])
    return np.frombuffer(digests, "<i8").astype(np.int64)


def _decode(data: np.ndarray, offsets: np.ndarray, i: int) -> str:
    return data[offsets[i] : offsets[i + 1]].tobytes().decode("utf-8", "surrogatepass")


class Texts:
    """A list of strings whose saved part stays encoded (UTF-8 blob + offsets) until read.

    A spooled one (``spooled``) writes what is appended to a file at once, and ``finish``
    maps that file back as its saved part: a build then holds no text of the repository."""

    def __init__(self, data: np.ndarray | None = None, offsets: np.ndarray | None = None) -> None:
        self._data = data if data is not None else np.empty(0, np.uint8)
        self._offsets = offsets if offsets is not None else np.zeros(1, np.int64)
        self._base = int(self._offsets.size) - 1
        self._changed: dict[int, str] = {}
        self._added: list[str] = []
        self._spool: TextWriter | None = None
        # (device, inode) of the file the saved part was spooled to: it stays that file
        # when its folder is renamed (a generation going live)
        self.file_id: tuple[int, int] | None = None

    @classmethod
    def spooled(cls, directory: Path, name: str) -> Texts:
        texts = cls()
        texts._spool = TextWriter(directory, name)
        return texts

    def finish(self) -> None:
        """Map what was spooled back as the saved part."""
        assert self._spool is not None
        data, offsets = self._spool.close()
        self._spool = None
        self._data, self._offsets = mapped(data), mapped(offsets)
        self._base = int(self._offsets.size) - 1
        self.file_id = file_id(data)

    @property
    def pristine(self) -> bool:
        """Nothing changed or added since the saved part was written."""
        return self._spool is None and not self._changed and not self._added

    def __len__(self) -> int:
        return self._base + len(self._added) + (len(self._spool) if self._spool else 0)

    def __getitem__(self, i: int) -> str:
        text = self._changed.get(i)
        if text is not None:
            return text
        if i >= self._base:
            if self._spool is not None:
                return self._spool.read(i - self._base).decode("utf-8", "surrogatepass")
            return self._added[i - self._base]
        if i < 0:
            raise IndexError(i)
        return _decode(self._data, self._offsets, i)

    def __setitem__(self, i: int, text: str) -> None:
        if i >= self._base and self._spool is None:
            self._added[i - self._base] = text
        else:
            self._changed[i] = text

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(len(self)))

    def encoded_at(self, i: int) -> bytes:
        """Text ``i`` in UTF-8; a saved or spooled one as it is stored, without decoding it."""
        if i in self._changed:
            return self._changed[i].encode("utf-8", "surrogatepass")
        if 0 <= i < self._base:
            return self._data[self._offsets[i] : self._offsets[i + 1]].tobytes()
        if self._spool is not None:
            return self._spool.read(i - self._base)
        return self[i].encode("utf-8", "surrogatepass")

    def view_at(self, i: int) -> bytes | memoryview:
        """Text ``i`` in UTF-8 as ``encoded_at`` gives it, a saved one a view of its map."""
        if i in self._changed or not 0 <= i < self._base:
            return self.encoded_at(i)
        return memoryview(self._data)[self._offsets[i] : self._offsets[i + 1]]

    def encoded(self) -> Iterator[bytes]:
        return (self.encoded_at(i) for i in range(len(self)))

    def append(self, text: str) -> None:
        if self._spool is not None:
            self._spool.append(text.encode("utf-8", "surrogatepass"))
        else:
            self._added.append(text)

    def append_encoded(self, encoded: bytes) -> None:
        """``append`` of a text given in UTF-8 (a spooled one is written as it is)."""
        if self._spool is not None:
            self._spool.append(encoded)
        else:
            self._added.append(encoded.decode("utf-8", "surrogatepass"))

    def extend_encoded(self, encoded: list[bytes]) -> None:
        """``append_encoded`` of each, a spooled one's written in one call."""
        if self._spool is not None:
            self._spool.extend(encoded)
        else:
            self._added += [text.decode("utf-8", "surrogatepass") for text in encoded]


class TextIds:
    """Text -> id of the live fragment with that text (``by_text``). Texts are found by
    content hash (``frag_key``) and confirmed on the text itself, so that the table holds no
    text: the saved part as sorted arrays, what was added since in a dict."""

    def __init__(
        self,
        texts: Texts,
        keys: np.ndarray | None = None,
        ids: np.ndarray | None = None,
    ) -> None:
        self._texts = texts
        self._keys = keys if keys is not None else np.empty(0, np.int64)  # sorted
        self._ids = ids if ids is not None else np.empty(0, np.int64)
        self._new: dict[int, int] = {}  # key -> id
        self._clash: dict[bytes, int] = {}  # new texts whose key a different new text holds
        self._gone: set[int] = set()  # saved ids whose text has left since

    def get(self, text: str) -> int | None:
        encoded = text.encode("utf-8", "surrogatepass")
        return self.find(bytes_key(encoded), encoded)

    def find(self, key: int, encoded: bytes) -> int | None:
        """``get`` of a text given in UTF-8 with its ``bytes_key``."""
        fid = self._new.get(key)
        if fid is not None and self._texts.encoded_at(fid) == encoded:
            return fid
        fid = self._clash.get(encoded)
        if fid is not None or not self._keys.size:
            return fid
        return self._saved(encoded, key)

    def find_all(self, keys: list[int], encoded: list[bytes]) -> list[int | None]:
        """``find`` of each text, as the table stands (a build's: only the added texts'
        keys to look up, without hashing each text for ``_clash``)."""
        if self._clash or self._keys.size:
            return [self.find(key, text) for key, text in zip(keys, encoded, strict=True)]
        found = list(map(self._new.get, keys))
        for i, fid in enumerate(found):
            if fid is not None and self._texts.encoded_at(fid) != encoded[i]:
                found[i] = None
        return found

    def _saved(self, encoded: bytes, key: int) -> int | None:
        lo = int(np.searchsorted(self._keys, key))
        hi = int(np.searchsorted(self._keys, key, side="right"))
        for fid in self._ids[lo:hi].tolist():
            if fid not in self._gone and self._texts.encoded_at(fid) == encoded:
                return fid
        return None

    def __getitem__(self, text: str) -> int:
        fid = self.get(text)
        if fid is None:
            raise KeyError(text)
        return fid

    def __setitem__(self, text: str, fid: int) -> None:
        """``text`` must be ``texts[fid]`` already."""
        encoded = text.encode("utf-8", "surrogatepass")
        self.put(bytes_key(encoded), encoded, fid)

    def put(self, key: int, encoded: bytes, fid: int) -> None:
        """``self[text] = fid`` of a text given in UTF-8 with its ``bytes_key``."""
        held = self._new.get(key)
        if held is None or held == fid or self._texts.encoded_at(held) == encoded:
            self._new[key] = fid
        else:
            self._clash[encoded] = fid

    def put_all(self, keys: list[int], encoded: list[bytes], fids: list[int]) -> None:
        """``put`` of each, in order."""
        added = dict(zip(keys, fids, strict=True))
        if len(added) == len(keys) and self._new.keys().isdisjoint(added):
            self._new.update(added)
        else:
            for key, text, fid in zip(keys, encoded, fids, strict=True):
                self.put(key, text, fid)

    def __delitem__(self, text: str) -> None:
        encoded = text.encode("utf-8", "surrogatepass")
        if self._clash.pop(encoded, None) is not None:
            return
        key = bytes_key(encoded)
        held = self._new.get(key)
        if held is not None and self._texts.encoded_at(held) == encoded:
            del self._new[key]
            return
        fid = self._saved(encoded, key)
        if fid is None:
            raise KeyError(text)
        self._gone.add(fid)


class Locations:
    """Per fragment id, the places its text stands. The saved part is CSR rows of (file
    number, start, end); a row that changes moves to memory whole."""

    def __init__(
        self,
        paths: list[str] | None = None,
        indptr: np.ndarray | None = None,
        rows: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    ) -> None:
        self._paths = paths or []
        self._indptr = indptr if indptr is not None else np.zeros(1, np.int64)
        self._file, self._start, self._end = rows or (np.empty(0, np.int32),) * 3
        self._base = int(self._indptr.size) - 1
        self._changed: dict[int, list[Location]] = {}
        self._added: list[list[Location]] = []

    def __len__(self) -> int:
        return self._base + len(self._added)

    def __getitem__(self, fid: int) -> list[Location]:
        """The fragment's locations (a list of the table's own: do not modify it)."""
        if fid >= self._base:
            return self._added[fid - self._base]
        row = self._changed.get(fid)
        if row is not None:
            return row
        lo, hi = int(self._indptr[fid]), int(self._indptr[fid + 1])
        return [
            Location(self._paths[f], s, e)
            for f, s, e in zip(
                self._file[lo:hi].tolist(),
                self._start[lo:hi].tolist(),
                self._end[lo:hi].tolist(),
                strict=True,
            )
        ]

    def __setitem__(self, fid: int, locations: list[Location]) -> None:
        if fid >= self._base:
            self._added[fid - self._base] = locations
        else:
            self._changed[fid] = locations

    def add(self, fid: int, location: Location) -> None:
        if fid < self._base and fid not in self._changed:
            self._changed[fid] = self[fid]
        self[fid].append(location)

    def append(self, locations: list[Location]) -> None:
        self._added.append(locations)


def window_locations(
    win_file: np.ndarray, win_start: np.ndarray, win_end: np.ndarray, win_frag: np.ndarray, n: int
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Every window's place (file number, start, end) grouped by its fragment, in file and
    line order within one, as ``Locations`` holds them: (indptr over ``n`` fragments, rows)."""
    by_frag = np.argsort(win_frag, kind="stable")
    indptr = np.searchsorted(win_frag[by_frag], np.arange(n + 1)).astype(np.int64)
    return indptr, (win_file[by_frag], win_start[by_frag], win_end[by_frag])


class LazyDict(MutableMapping[K, V], Generic[K, V]):
    """A dict whose saved values are made on first use (``make(position)``), in the order of
    the saved keys; what is set or deleted afterwards behaves as in a dict.

    A value made from its saved position and not read since the last ``drop_unread`` is
    dropped there, to be made again when next read: an editing session reaches new files
    (each edit's includes, each completion's definitions), and keeping every value it ever
    made grew a loaded kernel subset's session by ~8 MB per 100 edits. With ``pack``, a value
    set and not read since is kept packed there (``pack(value)``: what makes it again), and
    made again when next read, as a saved one: the files an edit resolves again (hundreds at
    an edit of a widely included Linux header) would otherwise keep their calls and parses
    as Python objects for the rest of the session."""

    def __init__(
        self,
        keys: list[K] | None = None,
        make: Callable[[int], V] | None = None,
        pack: Callable[[V], Callable[[], V]] | None = None,
    ):
        self._values: dict[K, V | None] = dict.fromkeys(keys or ())
        # the keys whose value is still the saved one, by position
        self._saved: dict[K, int] = {k: i for i, k in enumerate(keys or ())}
        self._make = make
        self._pack = pack
        self._packed: dict[K, Callable[[], V]] = {}  # set values kept packed
        self._set: set[K] = set()  # set values held as they were set
        self._made: set[K] = set()  # saved or packed values made now
        self._read: set[K] = set()  # keys read since the last ``drop_unread``

    def __getitem__(self, key: K) -> V:
        value = self._values[key]
        if value is None:
            value = self._remake(key)
            if value is not None:
                self._values[key] = value
                self._made.add(key)
        self._read.add(key)
        return value  # type: ignore[return-value]

    def _remake(self, key: K) -> V | None:
        """A saved or packed value made again (None: the value is a plain None)."""
        if key in self._saved:
            assert self._make is not None
            return self._make(self._saved[key])
        packed = self._packed.get(key)
        return packed() if packed is not None else None

    def get(self, key: K, default: V | None = None) -> V | None:  # type: ignore[override]
        return self[key] if key in self._values else default

    def saved_position(self, key: K) -> int | None:
        """The saved position ``key``'s value is made from, while it is still the saved one
        (a reader of the saved arrays can then skip making it); None otherwise."""
        return self._saved.get(key)

    def peek(self, key: K) -> V | None:
        """The value of ``key`` (None if absent), a saved or packed one made but not kept."""
        if key not in self._values:
            return None
        value = self._values[key]
        return self._remake(key) if value is None else value

    def __setitem__(self, key: K, value: V) -> None:
        self._saved.pop(key, None)
        self._packed.pop(key, None)
        self._made.discard(key)
        self._set.add(key)
        self._read.add(key)
        self._values[key] = value

    def set_packed(self, key: K, value: V) -> None:
        """Set ``value`` as the next ``drop_unread`` keeps one set and not read since: with
        ``pack``, packed at once. A caller setting many values it does not read again holds
        one at a time: an edit of ``include/linux/export.h`` re-links the calls of the 325
        Linux files that call into it, whose lists were all held until the next pause."""
        self[key] = value
        if self._pack is not None:
            self._packed[key] = self._pack(value)
            self._values[key] = None
            self._set.discard(key)
            self._read.discard(key)

    def __delitem__(self, key: K) -> None:
        del self._values[key]
        self._saved.pop(key, None)
        self._packed.pop(key, None)
        self._made.discard(key)
        self._set.discard(key)

    def __iter__(self) -> Iterator[K]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def drop_unread(self) -> None:
        """Drop the saved and packed values made and not read since the last call (made
        again when next read); with ``pack``, pack the values set and not read since."""
        for key in self._made - self._read:
            self._values[key] = None
        self._made &= self._read
        if self._pack is not None:
            for key in self._set - self._read:
                self._packed[key] = self._pack(self._values[key])  # type: ignore[arg-type]
                self._values[key] = None
            self._set &= self._read
        self._read = set()

    def drop_made(self) -> None:
        """Drop every saved and packed value made (made again when next read)."""
        for key in self._made:
            self._values[key] = None
        self._made, self._read = set(), set()

    @property
    def unchanged(self) -> bool:
        """Every value is still the saved one: none was set or deleted."""
        return len(self._saved) == len(self._values)


def hash_order(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` of hash keys, which seldom tie: numpy's
    vectorised unstable sort (the kernel subset's 655k word hashes 0.060 -> 0.021 s), then
    each run of tied keys put back in index order (many ties: the stable sort itself)."""
    order = np.argsort(keys)
    ranked = keys[order]
    tied = np.flatnonzero(ranked[1:] == ranked[:-1])
    if tied.size > _TIES_MENDED:
        return np.argsort(keys, kind="stable")
    starts = tied[np.r_[True, np.diff(tied) > 1]] if tied.size else tied
    for lo in starts.tolist():
        hi = lo + 1
        while hi + 1 < ranked.size and ranked[hi + 1] == ranked[lo]:
            hi += 1
        order[lo : hi + 1] = np.sort(order[lo : hi + 1])
    return order


# the most tied neighbours ``hash_order`` puts back in order one run at a time
_TIES_MENDED = 256


@numba.njit(cache=True, nogil=True)
def fnv1a(data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """64-bit FNV-1a of each ``data[offsets[i]:offsets[i + 1]]``: a stable hash (Python's
    ``hash`` of a string changes from process to process)."""
    out = np.empty(offsets.shape[0] - 1, np.uint64)
    for i in range(out.shape[0]):
        h = np.uint64(0xCBF29CE484222325)
        for k in range(offsets[i], offsets[i + 1]):
            h = (h ^ np.uint64(data[k])) * np.uint64(0x100000001B3)
        out[i] = h
    return out


def word_hash(word: str) -> int:
    """:func:`fnv1a` of one word, in Python: a kernel call costs ~40 us of overhead, which a
    query's or an updated file's few hundred look-ups would each pay."""
    h = 0xCBF29CE484222325
    for byte in word.encode("utf-8"):
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


@numba.njit(cache=True, nogil=True)
def _find_words(
    data: np.ndarray,
    offsets: np.ndarray,
    hashes: np.ndarray,
    ids: np.ndarray,
    words: np.ndarray,
    bounds: np.ndarray,
) -> np.ndarray:
    """The id among the saved words (``data``/``offsets``, found by ``hashes`` sorted and
    ``ids`` in their order) of each word ``words[bounds[i]:bounds[i + 1]]``, -1 if none."""
    keys = fnv1a(words, bounds)
    out = np.full(keys.shape[0], -1, np.int64)
    for i in range(keys.shape[0]):
        lo, n = bounds[i], bounds[i + 1] - bounds[i]
        at = np.searchsorted(hashes, keys[i])
        while out[i] < 0 and at < hashes.shape[0] and hashes[at] == keys[i]:
            t = ids[at]
            if offsets[t + 1] - offsets[t] == n:
                same = True
                for c in range(n):
                    same = same and data[offsets[t] + c] == words[lo + c]
                if same:
                    out[i] = t
            at += 1
    return out


class Vocabulary:
    """Word -> term id, as a dict offers it to BM25; the saved words stay encoded and are
    found by hash (``hashes`` sorted, ``ids`` in the same order), words added since live in
    a dict. Iteration yields the words in id order."""

    def __init__(
        self, data: np.ndarray, offsets: np.ndarray, hashes: np.ndarray, ids: np.ndarray
    ) -> None:
        self._data, self._offsets, self._hashes, self._ids = data, offsets, hashes, ids
        self._base = int(offsets.size) - 1
        self._new: dict[str, int] = {}
        self._seen: dict[str, int] = {}  # saved words looked up already (-1: not saved)

    def __len__(self) -> int:
        return self._base + len(self._new)

    def _saved(self, word: str) -> int:
        tid = self._seen.get(word)
        if tid is None:
            tid = -1
            key = np.uint64(word_hash(word))
            # the words of one hash follow the first (one search, not two: ~2 us a word)
            hashes = self._hashes
            lo = hi = int(hashes.searchsorted(key))
            while hi < hashes.size and hashes[hi] == key:
                hi += 1
            for i in self._ids[lo:hi].tolist():
                if _decode(self._data, self._offsets, i) == word:
                    tid = i
            if len(self._seen) > 1 << 16:
                self._seen.clear()
            self._seen[word] = tid
        return tid

    def forget_seen(self) -> None:
        """Forget the saved words looked up so far (found by hash again when next asked)."""
        self._seen = {}

    def get(self, word: str, default: int | None = None) -> int | None:
        tid = self._new.get(word)
        if tid is None:
            tid = self._saved(word)
        return default if tid < 0 else tid

    def ids(self, words: list[str]) -> list[int]:
        """``get`` of each word, -1 for none: the saved words not looked up yet are found in
        one compiled pass (one by one, a query window's few dozen cost ~13 us each)."""
        if len(self._seen) > 1 << 16:
            self._seen.clear()
        unseen = [w for w in words if w not in self._new and w not in self._seen]
        if unseen:
            encoded = [w.encode("utf-8") for w in unseen]
            bounds = np.zeros(len(encoded) + 1, np.int64)
            np.cumsum([len(e) for e in encoded], out=bounds[1:])
            joined = np.frombuffer(b"".join(encoded), np.uint8)
            found = _find_words(self._data, self._offsets, self._hashes, self._ids, joined, bounds)
            self._seen.update(zip(unseen, found.tolist(), strict=True))
        return [self._new[w] if w in self._new else self._seen[w] for w in words]

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and self.get(word) is not None

    def __getitem__(self, word: str) -> int:
        tid = self.get(word)
        if tid is None:
            raise KeyError(word)
        return tid

    def setdefault(self, word: str, tid: int) -> int:
        known = self.get(word)
        if known is not None:
            return known
        self._new[word] = tid
        return tid

    def word(self, tid: int) -> str:
        """The word of a saved id."""
        return _decode(self._data, self._offsets, tid)

    def kept(self, keep: np.ndarray) -> Vocabulary:
        """The words whose ``keep`` (per id) is set, numbered anew in the same order: a
        BM25 compaction dropping its unused terms, without decoding the saved words into a
        dict (650k of them on the Linux kernel's subset, ~80 MB)."""
        saved = np.asarray(keep[: self._base], bool)
        sizes = np.diff(self._offsets)
        added = [w.encode("utf-8") for w, i in self._new.items() if keep[i]]
        lengths = np.array([len(a) for a in added], np.int64)
        offsets = np.zeros(int(saved.sum()) + len(added) + 1, np.int64)
        np.cumsum(np.concatenate([sizes[saved], lengths]), out=offsets[1:])
        data = np.concatenate(
            [self._data[np.repeat(saved, sizes)], np.frombuffer(b"".join(added), np.uint8)]
        )
        hashes = fnv1a(data, offsets)
        order = hash_order(hashes)
        return Vocabulary(data, offsets, hashes[order], order.astype(np.int64))

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """(data, offsets, hashes, ids) as given, while no word has been added since."""
        if self._new:
            return None
        return self._data, self._offsets, self._hashes, self._ids

    def __iter__(self) -> Iterator[str]:
        for i in range(self._base):
            yield _decode(self._data, self._offsets, i)
        yield from self._new

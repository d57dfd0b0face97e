"""Incremental Okapi BM25 that returns the full score vector, equal to rank-bm25's BM25Okapi.

Relation-aware scoring mixes the BM25 score of every related fragment, so a query needs the
score of *all* fragments, not a top-k; and the index follows the user's edits, so documents are
removed and re-added one file at a time. rank-bm25 is exact but rescans every document per
query token, bm25s is static and tantivy only answers top-k. This module keeps rank-bm25's
formula (the tests compare against it) with a layout that makes both operations cheap:

* every added document is a *row*: its distinct term ids and raw term frequencies are appended
  to one growable doc-major (CSR) store; rows are never edited, removal only clears a live flag,
  so re-adding a removed id simply appends a new row;
* compaction lays the live documents out again with row number == document id (ids that are
  not live get empty rows) and builds the term-major (CSC) *main segment* over them, so a query
  walks each of its terms' postings and adds straight into the output at the row number;
* rows appended since (the *delta*) are few, so a query scans them directly, looking each
  term's weight up in a dense per-term array;
* a removed row gets an infinite length normaliser, which makes its term scores exactly 0
  without touching the postings;
* global statistics (live count, document frequency over live rows and its histogram, total
  length) are updated exactly on add/remove, so the scores always equal a from-scratch
  BM25Okapi over the live documents; a term whose document frequency fell to 0 is ignored,
  in the average idf too, exactly as if it had never been seen;
* the loops over postings and rows are compiled with numba (no per-document Python);
* compaction, which also drops unused terms, is worth it once the delta plus the dead rows
  exceed a fraction of the main segment: :meth:`tidy` runs it then, for an owner that has a
  quiet moment (an editor between keystrokes); it runs automatically at four times that;
  after a bulk load, call :meth:`compact` (or :meth:`state`) to pay for it before the first
  query.

A caller that needs only the best k documents (plain BM25 retrieval) asks :meth:`top_k`, which
gives exactly the ids and floats a full scoring would rank first, without walking every posting
of a long code query (``repomem.index.maxscore``).
"""

from __future__ import annotations

import mmap
import operator
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Self

import numpy as np
import numpy.typing as npt

from repomem.errors import RepomemError
from repomem.index import maxscore
from repomem.index.jit import numba
from repomem.index.mapped import Vocabulary, fnv1a, hash_order
from repomem.index.maxscore import SLACK, block_maxima
from repomem.index.rowpool import grouped_sums, ranges
from repomem.index.spool import ArrayWriter, ScratchWriter, mapped
from repomem.index.trim import (
    fresh_zeros,
    mappings_of,
    release_mapped,
    release_read_only,
    release_zeros,
)

TOKEN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")

# postings a bulk load writes out at a time (``SpooledRows``): 128 MB of them
_POSTINGS_CHUNK = 1 << 24
# what a compaction into a spool folder holds in memory at once: rows gathered, postings
# transposed (32 MB of them; each part reads every row once)
_SPOOL_ROWS = 1 << 16
_SPOOL_POSTINGS = 1 << 22

# Compaction is worth it once delta rows plus dead main rows exceed this share of the main
# segment (but never below the floor): every query scans the whole delta and the dead rows'
# postings, while a compaction costs time linear in the whole index (10 ms at 10k fragments).
# Left to itself, the index compacts at _FORCED times that: in add/remove when queries are
# being made (keeping the cost off the query path), else at the next query, so a bulk load
# that nobody queries meanwhile is not compacted repeatedly. A delta that large costs a query
# about a millisecond.
_COMPACT_FRACTION = 1 / 16
_COMPACT_MIN_ROWS = 1024
_FORCED = 4

_STATE_FORMAT = 1

# documents_with(among=...) looks ``among`` up in a term's postings by binary search while it is
# shorter than 1/_SEARCHED_SHARE of them (a search costs ~log2 probes); beyond, it marks them.
_SEARCHED_SHARE = 8
_STATE_KEYS = (
    "format",
    "params",
    "vocab_bytes",
    "vocab_offsets",
    "row_ptr",
    "row_terms",
    "row_tf",
    "doc_ids",
)
# what ``state`` also saves so that a trusted state opens without deriving it; ``rows``:
# how many rows ``row_ptr`` and ``row_len`` bound and measure (a trusted state may hold
# room after them for the rows updates add)
_DERIVED_KEYS = (
    "rows",
    "df",
    "row_len",
    "term_ptr",
    "post_row",
    "post_tf",
    "vocab_hash",
    "vocab_hash_ids",
)
# the block maxima ``top_k`` prunes by (``maxscore.block_maxima``) and the mean length they
# were taken at: an index saved without them takes them at its first pruned query
_BLOCK_KEYS = (
    "block_terms",
    "block_max",
    "block_sub_max",
    "block_mid_terms",
    "block_mid_ptr",
    "block_mid_sub",
    "block_mid_level",
    "block_avgdl",
)
_BLOCK_TYPES = (np.int64, np.uint8, np.uint8, np.int64, np.int64, np.int32, np.uint8, np.float64)
# which of them a compaction into a spool folder writes there: block_max, block_sub_max,
# block_mid_sub, block_mid_level
_SPOOLED_BLOCKS = (1, 2, 5, 6)

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
Int32Array = npt.NDArray[np.int32]
BoolArray = npt.NDArray[np.bool_]


class BM25StateError(RepomemError):
    """A saved BM25 index is incomplete or inconsistent (e.g. a damaged index file)."""


def tokenize(text: str) -> list[str]:
    """Identifiers and digit runs, case kept: code search matches on names, not on punctuation."""
    return TOKEN_RE.findall(text)


@numba.njit(cache=True, nogil=True)
def _transpose(
    row_ptr: IntArray, row_terms: Int32Array, row_tf: Int32Array, n_terms: int
) -> tuple[IntArray, Int32Array, Int32Array]:
    """Doc-major rows to per-term postings by counting sort: linear time, rows ascending."""
    n_rows = row_ptr.shape[0] - 1
    term_ptr = np.zeros(n_terms + 1, np.int64)
    for k in range(row_ptr[n_rows]):
        term_ptr[row_terms[k] + 1] += 1
    for t in range(n_terms):
        term_ptr[t + 1] += term_ptr[t]
    fill = term_ptr[:-1].copy()
    post_row = np.empty(term_ptr[n_terms], np.int32)
    post_tf = np.empty(term_ptr[n_terms], np.int32)
    for r in range(n_rows):
        for k in range(row_ptr[r], row_ptr[r + 1]):
            t = row_terms[k]
            p = fill[t]
            post_row[p] = r
            post_tf[p] = row_tf[k]
            fill[t] = p + 1
    return term_ptr, post_row, post_tf


@numba.njit(cache=True, nogil=True)
def _term_bounds(row_terms: Int32Array, n_terms: int) -> IntArray:
    """``_transpose``'s ``term_ptr``: where each term's postings start and end."""
    term_ptr = np.zeros(n_terms + 1, np.int64)
    for k in range(row_terms.shape[0]):
        term_ptr[row_terms[k] + 1] += 1
    for t in range(n_terms):
        term_ptr[t + 1] += term_ptr[t]
    return term_ptr


@numba.njit(cache=True, nogil=True)
def _transpose_terms(
    row_ptr: IntArray,
    row_terms: Int32Array,
    row_tf: Int32Array,
    term_ptr: IntArray,
    lo: int,
    hi: int,
) -> tuple[Int32Array, Int32Array]:
    """``_transpose``'s postings of the terms ``lo`` to ``hi - 1`` alone (``term_ptr``: all
    terms' bounds), read from every row."""
    base = term_ptr[lo]
    fill = term_ptr[lo:hi] - base
    post_row = np.empty(term_ptr[hi] - base, np.int32)
    post_tf = np.empty(term_ptr[hi] - base, np.int32)
    for r in range(row_ptr.shape[0] - 1):
        for k in range(row_ptr[r], row_ptr[r + 1]):
            t = row_terms[k]
            if lo <= t < hi:
                p = fill[t - lo]
                post_row[p] = r
                post_tf[p] = row_tf[k]
                fill[t - lo] = p + 1
    return post_row, post_tf


@numba.njit(cache=True, nogil=True)
def _gather_rows(
    row_ptr: IntArray, rows: IntArray, row_terms: Int32Array, row_tf: Int32Array, total: int
) -> tuple[Int32Array, Int32Array]:
    """The entries of ``rows``, laid end to end (no index array: the Linux kernel's would
    take 1 GB, and the arrays making it twice that)."""
    terms = np.empty(total, np.int32)
    tfs = np.empty(total, np.int32)
    k = 0
    for r in rows:
        for p in range(row_ptr[r], row_ptr[r + 1]):
            terms[k] = row_terms[p]
            tfs[k] = row_tf[p]
            k += 1
    return terms, tfs


@numba.njit(cache=True, nogil=True)
def _count_rows(
    row_ptr: IntArray, row_terms: Int32Array, row_tf: Int32Array, df: IntArray, row_len: IntArray
) -> None:
    """Add the rows' entries to the document frequency per term (``df``) and the length per
    row (``row_len``, one per row of ``row_ptr``), without temporaries the size of the
    entries: a part of the rows at a time, as a compaction gathers them."""
    for r in range(row_len.shape[0]):
        for p in range(row_ptr[r], row_ptr[r + 1]):
            df[row_terms[p]] += 1
            row_len[r] += row_tf[p]


def _row_stats(
    row_ptr: IntArray, row_terms: Int32Array, row_tf: Int32Array, n_terms: int
) -> tuple[IntArray, IntArray]:
    """Document frequency per term and length per row (``_count_rows`` of all the rows)."""
    df = np.zeros(n_terms, np.int64)
    row_len = np.zeros(row_ptr.shape[0] - 1, np.int64)
    _count_rows(row_ptr, row_terms, row_tf, df, row_len)
    return df, row_len


@numba.njit(cache=True, nogil=True)
def _score_main(
    term_ptr: IntArray,
    post_row: Int32Array,
    post_tf: Int32Array,
    terms: IntArray,
    weights: FloatArray,
    norm: FloatArray,
    out: FloatArray,
) -> None:
    """Walk the postings of the query terms; main rows are document ids, dead ones score 0."""
    n_terms = term_ptr.shape[0] - 1
    for j in range(terms.shape[0]):
        t = terms[j]
        if t >= n_terms:
            continue
        w = weights[j]
        for p in range(term_ptr[t], term_ptr[t + 1]):
            r = post_row[p]
            tf = float(post_tf[p])
            out[r] += w * tf / (tf + norm[r])


@numba.njit(cache=True, nogil=True)
def _score_delta(
    row_ptr: IntArray,
    row_terms: Int32Array,
    row_tf: Int32Array,
    first_row: int,
    term_weight: FloatArray,
    norm: FloatArray,
    row_doc: IntArray,
    out: FloatArray,
) -> None:
    """Scan the rows added since compaction, looking each term's query weight up densely."""
    for r in range(first_row, row_ptr.shape[0] - 1):
        total = 0.0
        for k in range(row_ptr[r], row_ptr[r + 1]):
            w = term_weight[row_terms[k]]
            if w != 0.0:
                tf = float(row_tf[k])
                total += w * tf / (tf + norm[r])
        out[row_doc[r]] += total


@numba.njit(cache=True, nogil=True)
def _count_terms(df: IntArray, df_hist: IntArray, terms: Int32Array, step: int) -> None:
    """Move a document's distinct terms by ``step`` in the document frequencies and in their
    histogram (terms per frequency), from which the average idf is computed."""
    for j in range(terms.shape[0]):
        t = terms[j]
        df_hist[df[t]] -= 1
        df[t] += step
        df_hist[df[t]] += 1


@numba.njit(cache=True, nogil=True)
def _mean_idf(df_hist: IntArray, n_docs: int) -> float:
    """Mean raw idf over the terms of the live documents (frequency >= 1)."""
    total = 0.0
    count = 0
    for d in range(1, min(n_docs + 1, df_hist.shape[0])):
        h = df_hist[d]
        if h:
            total += h * (np.log(n_docs - d + 0.5) - np.log(d + 0.5))
            count += h
    return total / count


@numba.njit(cache=True, nogil=True)
def _fill_norm(
    row_len: IntArray, row_live: BoolArray, k1: float, b: float, avgdl: float, norm: FloatArray
) -> None:
    """rank-bm25's k1 * (1 - b + b * len / avgdl) per live row; infinity zeroes dead rows."""
    for r in range(row_len.shape[0]):
        norm[r] = k1 * (1 - b + b * row_len[r] / avgdl) if row_live[r] else np.inf


@dataclass(frozen=True)
class TermCounts:
    """Term frequencies of a batch of documents over a vocabulary of their own: counted where
    the text is (a parsing worker), cheap to send to another process, added in bulk."""

    # the words in UTF-8, each followed by a blank (a word holds none): as a parsing worker
    # finds them and a build's vocabulary numbers them, not decoded and split into strings
    # to be pickled, unpickled, joined and encoded again (~2 % of a worker's time and of the
    # main process's parse stage on the Linux kernel)
    spaced: bytes
    ptr: IntArray  # document i's entries are [ptr[i], ptr[i + 1])
    terms: Int32Array  # indices into ``words``, distinct within a document
    tfs: Int32Array

    @classmethod
    def of(cls, words: list[str], ptr: IntArray, terms: Int32Array, tfs: Int32Array) -> TermCounts:
        return cls(
            "".join([w + " " for w in words]).encode("utf-8", "surrogatepass"), ptr, terms, tfs
        )

    @cached_property
    def words(self) -> list[str]:
        return self.spaced.decode("utf-8", "surrogatepass").split(" ")[:-1]


def count_terms(lines: Sequence[str], spans: Sequence[tuple[int, int]]) -> TermCounts:
    """Term counts of the documents ``lines[start:end]`` joined by newlines, per span."""
    return count_encoded_terms("\n".join(lines).encode("utf-8", "surrogatepass"), spans)


def count_encoded_terms(
    text: bytes, spans: Sequence[tuple[int, int]] | npt.NDArray[np.int32]
) -> TermCounts:
    """``count_terms`` of lines already joined by newlines and encoded (a parsing worker has
    them so for its windows' bounds). Tokens never cross a line, so each line is tokenized
    once however many windows hold it: the lines are tokenized as one UTF-8 text by
    ``_word_ids`` (compiled: matching in ``re``, then numbering the words through a dict took
    ~2 us a line of the Linux kernel, a sixth of its parsing workers' time); only each
    distinct word is decoded."""
    flat, line_of, first, end = _word_ids(np.frombuffer(text, np.uint8))
    bounds = np.array(spans, np.int64).reshape(-1, 2)
    spaced = _spaced(np.frombuffer(text, np.uint8), first, end).tobytes()
    # the tokens are in line order: a span's are those from its first line to its end
    lo, hi = np.searchsorted(line_of, bounds[:, 0]), np.searchsorted(line_of, bounds[:, 1])
    ptr, terms, tfs = grouped_sums(flat, np.ones(flat.size, np.int32), lo, hi, first.size)
    return TermCounts(spaced, ptr, terms.astype(np.int32), tfs)


@numba.njit(cache=True, nogil=True)
def _spaced(text: npt.NDArray[np.uint8], first: IntArray, end: IntArray) -> npt.NDArray[np.uint8]:
    """The words ``text[first[i]:end[i]]`` (ASCII, without blanks) one after another, each
    followed by a space: decoded and split at once rather than sliced and decoded one by one
    (a tenth of the term counting)."""
    size = 0
    for i in range(first.size):
        size += end[i] - first[i] + 1
    out = np.empty(size, np.uint8)
    n = 0
    for i in range(first.size):
        for k in range(first[i], end[i]):
            out[n] = text[k]
            n += 1
        out[n] = 32
        n += 1
    return out


@numba.njit(cache=True, nogil=True)
def _word_ids(text: npt.NDArray[np.uint8]) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """``TOKEN_RE``'s tokens of a UTF-8 text (its classes are ASCII, so a byte past 127 is
    never in a token): each one's word id (the distinct words numbered in the order they first
    appear), each one's line, and where each word first appears (start, end)."""
    n = text.size
    start = np.empty(n, np.int64)  # every token's bounds, then its line
    stop = np.empty(n, np.int64)
    line = np.empty(n, np.int64)
    count, row, i = 0, 0, 0
    while i < n:
        c = text[i]
        if c == 10:
            row += 1
            i += 1
            continue
        word = c == 95 or 65 <= c <= 90 or 97 <= c <= 122
        if not word and not 48 <= c <= 57:
            i += 1
            continue
        j = i + 1
        while j < n:
            d = text[j]
            if not (48 <= d <= 57 or (word and (d == 95 or 65 <= d <= 90 or 97 <= d <= 122))):
                break
            j += 1
        start[count], stop[count], line[count] = i, j, row
        count += 1
        i = j
    # the distinct words through an open-addressed table of FNV-1a hashes, compared by bytes
    size = 16
    while size < 2 * count:
        size *= 2
    table = np.full(size, -1, np.int64)  # slot -> word id
    ids = np.empty(count, np.int64)
    first = np.empty(count, np.int64)  # word id -> its first token
    words = 0
    for t in range(count):
        h = np.uint64(14695981039346656037)
        for k in range(start[t], stop[t]):
            h = (h ^ np.uint64(text[k])) * np.uint64(1099511628211)
        slot = np.int64(h & np.uint64(size - 1))
        while True:
            w = table[slot]
            if w < 0:
                table[slot] = words
                first[words] = t
                ids[t] = words
                words += 1
                break
            f = first[w]
            length = stop[t] - start[t]
            if stop[f] - start[f] == length:
                same = True
                for k in range(length):
                    if text[start[f] + k] != text[start[t] + k]:
                        same = False
                        break
                if same:
                    ids[t] = w
                    break
            slot = (slot + 1) & (size - 1)
    firsts = first[:words]
    return ids, line[:count], start[firsts], stop[firsts]


def _rows_of(
    vocab: dict[str, int] | Vocabulary, counts: TermCounts, docs: npt.ArrayLike
) -> tuple[Int32Array, Int32Array, IntArray]:
    """Documents ``docs`` of ``counts`` as index rows: their entries' term ids (words new to
    ``vocab`` are added to it, in their order) and frequencies end to end, and each one's
    number of entries."""
    # looked up in one mapped pass, then the words new to it added (a build's main process
    # spent a fifth of its parse stage in a generator setting each word's default)
    words = counts.words
    ids = list(map(vocab.get, words))
    for i in [i for i, tid in enumerate(ids) if tid is None]:
        ids[i] = vocab.setdefault(words[i], len(vocab))
    return _taken_rows(np.array(ids, np.int32), counts, docs)


def _taken_rows(
    word_ids: Int32Array, counts: TermCounts, docs: npt.ArrayLike
) -> tuple[Int32Array, Int32Array, IntArray]:
    """``_rows_of`` with the term id of each of ``counts.words`` given."""
    docs = np.asarray(docs, np.int64)
    starts = counts.ptr[docs]
    lengths = counts.ptr[docs + 1] - starts
    take = ranges(starts, lengths)
    return word_ids[counts.terms[take]], counts.tfs[take], lengths


class _BuildVocabulary:
    """A bulk load's words numbered in the order they first come, held as a saved
    vocabulary's arrays (the words' UTF-8 end to end and where each ends) and found through
    an open-addressed table of their FNV-1a hashes, in a compiled pass per batch: a dict
    looked up word by word took a fifth of a build's main process in its parse stage, was
    encoded again word by word to be saved, and its words as objects stayed in the
    allocator's pages through every later stage (the Linux kernel subset's ~650k words:
    ~50 MB). Words are tokens: no blank in them."""

    def __init__(self) -> None:
        self._data = np.empty(1 << 16, np.uint8)
        self._used = 0
        self._offsets = np.zeros(1 << 12, np.int64)
        self._n = 0
        self._table = np.full(1 << 13, -1, np.int64)

    def __len__(self) -> int:
        return self._n

    def ids(self, counts: TermCounts) -> Int32Array:
        """The id of each of ``counts``' words, those new numbered next in their order."""
        spaced = np.frombuffer(counts.spaced, np.uint8)
        count = counts.spaced.count(b" ")
        if self._used + spaced.size > self._data.size:
            self._data = _grown(self._data, self._used, self._used + spaced.size)
        if self._n + count + 1 > self._offsets.size:
            self._offsets = _grown(self._offsets, self._n + 1, self._n + count + 1)
        if 2 * (self._n + count) > self._table.size:
            size = self._table.size
            while size < 4 * (self._n + count):
                size *= 2
            self._table = _word_table(self._data, self._offsets[: self._n + 1], size)
        ids, self._used, self._n = _number_words(
            spaced, count, self._data, self._used, self._offsets, self._n, self._table
        )
        return ids

    def vocabulary(self) -> Vocabulary:
        """The words as a saved index's ``Vocabulary``: the arrays a save writes."""
        data = self._data[: self._used].copy()
        offsets = self._offsets[: self._n + 1].copy()
        self._data, self._offsets, self._table = self._data[:0], self._offsets[:1], self._table[:0]
        hashes = fnv1a(data, offsets)
        order = hash_order(hashes)
        return Vocabulary(data, offsets, hashes[order], order.astype(np.int64))


def _grown(values: np.ndarray, used: int, needed: int) -> np.ndarray:
    """``values[:used]`` in an array of at least ``needed`` (twice the size, or more)."""
    out = np.empty(max(needed, 2 * values.size), values.dtype)
    out[:used] = values[:used]
    return out


@numba.njit(cache=True, nogil=True)
def _word_table(data, offsets, size):  # noqa: ANN001, ANN202
    """``_BuildVocabulary``'s table of ``size`` slots (a power of two) for its words."""
    table = np.full(size, -1, np.int64)
    hashes = fnv1a(data, offsets)
    for w in range(hashes.size):
        slot = np.int64(hashes[w] & np.uint64(size - 1))
        while table[slot] >= 0:
            slot = (slot + 1) & (size - 1)
        table[slot] = w
    return table


@numba.njit(cache=True, nogil=True)
def _number_words(spaced, count, data, used, offsets, n, table):  # noqa: ANN001, ANN202, PLR0913
    """The ids of the ``count`` words of ``spaced`` (each followed by a blank), a word not in
    ``table`` appended to ``data``/``offsets`` as word ``n`` and on (the arrays have room);
    returns the ids, the bytes and words held then."""
    mask = table.size - 1
    ids = np.empty(count, np.int32)
    start = 0
    w = 0
    for k in range(spaced.size):
        if spaced[k] != 32:
            continue
        length = k - start
        h = np.uint64(0xCBF29CE484222325)
        for q in range(start, k):
            h = (h ^ np.uint64(spaced[q])) * np.uint64(0x100000001B3)
        slot = np.int64(h & np.uint64(mask))
        while True:
            t = table[slot]
            if t < 0:
                data[used : used + length] = spaced[start:k]
                used += length
                n += 1
                offsets[n] = used
                table[slot] = n - 1
                ids[w] = n - 1
                break
            lo = offsets[t]
            if offsets[t + 1] - lo == length:
                same = True
                for q in range(length):
                    if data[lo + q] != spaced[start + q]:
                        same = False
                        break
                if same:
                    ids[w] = t
                    break
            slot = (slot + 1) & mask
        w += 1
        start = k + 1
    return ids, used, n


class SpooledRows:
    """The rows of a bulk load (a build: every document once, by id from 0) written to
    ``<name>row_terms.npy`` and ``<name>row_tf.npy`` as they come, so that they are not
    held: the whole Linux kernel's are ~110M entries. ``index`` makes the BM25 index of them,
    reading them from their files."""

    def __init__(self, directory: Path, name: str) -> None:
        self.directory = directory
        self._terms = ArrayWriter(directory / f"{name}row_terms.npy", np.int32)
        self._tfs = ArrayWriter(directory / f"{name}row_tf.npy", np.int32)
        self._ptr = _Growable(np.int64, [0])
        self._vocab = _BuildVocabulary()

    def __len__(self) -> int:
        return self._ptr.size - 1

    def add(self, counts: TermCounts, docs: npt.ArrayLike) -> None:
        """Documents ``docs`` of ``counts``, as the next ids."""
        terms, tfs, lengths = _taken_rows(self._vocab.ids(counts), counts, docs)
        self._terms.write(terms)
        self._tfs.write(tfs)
        self._ptr.extend(self._terms.rows - tfs.size + np.cumsum(lengths))

    def index(self, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25) -> BM25Index:
        """The index of every row added, its rows mapped read-only from their files."""
        self._terms.close()
        self._tfs.close()
        index = BM25Index(k1, b, epsilon)
        terms, tfs = (
            mapped(self._terms.path, writeable=False),
            mapped(self._tfs.path, writeable=False),
        )
        live = np.ones(len(self), np.bool_)
        postings = self._postings(terms, tfs)
        vocab = self._vocab.vocabulary()
        index._load(vocab, self._ptr.view, terms, tfs, live, adopt=True, postings=postings)
        # read through once each: what they hold is in their files
        release_read_only(mappings_of([terms, tfs, *postings[1:]]))
        return index

    def _postings(self, terms: Int32Array, tfs: Int32Array) -> tuple[IntArray, ...]:
        """The rows' postings (``_transpose``'s), written out a range of terms at a time
        beside the rows and mapped back: made whole in memory, the whole kernel's took 0.9 GB
        while its rows were read."""
        name = self._terms.path.name.removesuffix("row_terms.npy")
        rows = ArrayWriter(self.directory / f"{name}post_row.npy", np.int32)
        tf = ArrayWriter(self.directory / f"{name}post_tf.npy", np.int32)
        with rows, tf:
            term_ptr = _write_postings(
                self._ptr.view, terms, tfs, len(self._vocab), (rows, tf), _POSTINGS_CHUNK
            )
        return term_ptr, mapped(rows.path, writeable=False), mapped(tf.path, writeable=False)


def _term_ids(vocab: dict[str, int] | Vocabulary, words: list[str]) -> list[int]:
    """Each word's term id, -1 if none: a saved vocabulary finds those it has not looked up
    yet in one pass."""
    if isinstance(vocab, Vocabulary):
        return vocab.ids(words)
    return [vocab.get(w, -1) for w in words]


def _write_postings(
    ptr: IntArray,
    terms: Int32Array,
    tfs: Int32Array,
    n_terms: int,
    out: tuple[ArrayWriter | ScratchWriter, ArrayWriter | ScratchWriter],
    chunk: int,
) -> IntArray:
    """``_transpose``'s postings of the rows, written to ``out`` (rows, frequencies) a range
    of terms at a time (about ``chunk`` entries: only those are in memory at once); returns
    where each term's postings start and end."""
    term_ptr = _term_bounds(terms, n_terms)
    cuts = np.searchsorted(term_ptr, np.arange(0, term_ptr[-1], chunk), "right")
    bounds = np.unique(np.r_[0, np.maximum(cuts - 1, 0), term_ptr.size - 1]).tolist()
    for lo, hi in zip(bounds, bounds[1:], strict=False):
        part_rows, part_tf = _transpose_terms(ptr, terms, tfs, term_ptr, lo, hi)
        out[0].write(part_rows)
        out[1].write(part_tf)
    return term_ptr


def _spool_room(n: int) -> int:
    """The room a compaction into a spool leaves after an array of ``n`` values, for what
    later edits append: an eighth more, 64k at least."""
    return max(1 << 16, n // 8)


def _spooled(directory: Path, values: np.ndarray, room: int = 0) -> np.ndarray:
    """``values`` written to a file of ``directory`` with no name and mapped back: read-only,
    or copy-on-write with ``room`` zeros after them (``ScratchWriter.mapped``)."""
    out = ScratchWriter(directory, values.dtype)
    out.write(values)
    return out.mapped(room)


class _Growable:
    """A numpy array with amortised O(1) appends, so adding a document never copies the index."""

    __slots__ = ("_data", "size")

    def __init__(self, dtype: Any, initial: npt.ArrayLike = ()) -> None:
        values = np.asarray(initial, dtype=dtype)
        self._data = np.empty(values.size + values.size // 8 + 16, dtype=dtype)
        self._data[: values.size] = values
        self.size = int(values.size)

    @classmethod
    def adopt(cls, values: np.ndarray, size: int | None = None) -> _Growable:
        """``values`` itself (a mapped array, say), holding ``size`` values (all of them by
        default) and room after them: appends write into the room (a copy-on-write map
        takes them in memory, page by page) until it is full, and then copy it; nothing is
        written into a full one (it may be read-only)."""
        grown = cls.__new__(cls)
        grown._data, grown.size = values, int(values.size if size is None else size)
        return grown

    @classmethod
    def kept(cls, dtype: Any, values: np.ndarray, size: int, adopt: bool) -> _Growable:
        """The first ``size`` of ``values``: ``adopt``-ed (the room after them kept), or copied."""
        return cls.adopt(values, size) if adopt else cls(dtype, values[:size])

    @property
    def view(self) -> np.ndarray:
        return self._data[: self.size]

    def append(self, value: Any) -> None:
        if self.size == self._data.size:
            self._grow(self.size + 1)
        self._data[self.size] = value
        self.size += 1

    def extend(self, values: npt.ArrayLike) -> None:
        values = np.asarray(values)
        if not values.size:
            return  # nothing written: an adopted array may be read-only
        end = self.size + values.size
        if end > self._data.size:
            self._grow(end)
        self._data[self.size : end] = values
        self.size = end

    def _grow(self, needed: int) -> None:
        # an eighth more, as ``__init__`` leaves: doubling an adopted array (a loaded
        # index's 13M row terms on the Linux kernel's kernel/ mm/ fs/ include/) took 200 MB
        # more of a first edit's memory than the few terms an edit adds need
        data = np.empty(needed + needed // 8 + 16, dtype=self._data.dtype)
        data[: self.size] = self._data[: self.size]
        self._data = data


class _SavedState:
    """What a BM25 index saves and how it opens again (:class:`BM25Index`'s arrays as plain
    numpy arrays, checked on the way back in), apart from the scoring and updating."""

    def state(self) -> dict[str, np.ndarray]:
        """Plain numpy arrays (no objects, loadable without pickle); compacts the index first.
        Besides the rows, it holds what :meth:`from_state` would otherwise derive from them
        (postings, frequencies, lengths, the vocabulary's hash table), so that a saved index
        opens without reading its rows. The arrays are the index's own, not copies (a save of
        the Linux kernel would hold a second BM25 index): write them out before the index
        changes again, and do not modify them."""
        self.compact()
        saved = self._vocab.arrays() if isinstance(self._vocab, Vocabulary) else None
        if saved is None:
            encoded = [w.encode("utf-8") for w in self._vocab]
            offsets = np.zeros(len(encoded) + 1, np.int64)
            np.cumsum([len(e) for e in encoded], out=offsets[1:])
            vocab_bytes = np.frombuffer(b"".join(encoded), np.uint8).copy()
            del encoded
            hashes = fnv1a(vocab_bytes, offsets)
            order = hash_order(hashes)
            saved = (vocab_bytes, offsets, hashes[order], order.astype(np.int64))
        vocab_bytes, offsets, vocab_hash, vocab_hash_ids = saved
        return {
            "format": np.array(_STATE_FORMAT, np.int64),
            "params": np.array([self.k1, self.b, self.epsilon], np.float64),
            "vocab_bytes": vocab_bytes,
            "vocab_offsets": offsets,
            "row_ptr": self._row_ptr.view,
            "row_terms": self._row_terms.view,
            "row_tf": self._row_tf.view,
            "doc_ids": np.flatnonzero(self._row_live.view).astype(np.int64),
            "df": self._df.view,
            **dict(zip(_BLOCK_KEYS, self._saved_blocks(), strict=True)),
            "row_len": self._row_len.view,
            "rows": np.array(self._row_len.size, np.int64),
            "term_ptr": self._term_ptr,
            "post_row": self._post_row,
            "post_tf": self._post_tf,
            "vocab_hash": vocab_hash,
            "vocab_hash_ids": vocab_hash_ids,
        }

    @classmethod
    def from_state(cls, state: Mapping[str, np.ndarray], *, trusted: bool = False) -> Self:
        """Rebuild an index saved by :meth:`state`, checking it so a damaged file cannot crash.

        ``trusted``: a state written whole by ``repomem.index.store`` (a generation goes live
        only once complete); its arrays are used as they are, mapped arrays included, and only
        their sizes and offsets are checked, so that opening reads none of the postings.
        """
        missing = [k for k in _STATE_KEYS + (_DERIVED_KEYS if trusted else ()) if k not in state]
        if missing:
            raise BM25StateError(f"BM25 index state lacks {', '.join(missing)}")
        arrays = {k: state[k] for k in _STATE_KEYS}
        for key, arr in arrays.items():
            if arr.dtype.kind not in ("iuf" if key == "params" else "iu"):
                raise BM25StateError(f"BM25 index state '{key}' has the wrong type ({arr.dtype})")
            if arr.ndim != (0 if key == "format" else 1):
                raise BM25StateError(f"BM25 index state '{key}' has the wrong shape {arr.shape}")
        if int(arrays["format"]) != _STATE_FORMAT:
            raise BM25StateError(
                f"BM25 index state has format {int(arrays['format'])}, expected {_STATE_FORMAT}"
            )
        params = np.asarray(arrays["params"], np.float64)
        if params.shape != (3,):
            raise BM25StateError("BM25 index state 'params' must hold k1, b and epsilon")
        try:
            index = cls(*params.tolist())
        except ValueError as exc:
            raise BM25StateError(f"BM25 index state 'params': {exc}") from exc
        if trusted:
            index._open(state)
            return index
        words = _decode_vocab(arrays["vocab_bytes"], arrays["vocab_offsets"])
        row_ptr, row_terms, row_tf, doc_ids = (
            np.asarray(arrays[k], np.int64) for k in ("row_ptr", "row_terms", "row_tf", "doc_ids")
        )
        live = _check_rows(row_ptr, row_terms, row_tf, doc_ids, len(words))
        index._load(
            {w: i for i, w in enumerate(words)},
            row_ptr,
            row_terms.astype(np.int32),
            row_tf.astype(np.int32),
            live,
        )
        return index

    def _open(self, state: Mapping[str, np.ndarray]) -> None:
        """Adopt a trusted saved state's arrays as the main segment, copying none of them."""
        want = {
            "vocab_bytes": np.uint8,
            "vocab_offsets": np.int64,
            "row_ptr": np.int64,
            "row_terms": np.int32,
            "row_tf": np.int32,
            "doc_ids": np.int64,
            "df": np.int64,
            "row_len": np.int64,
            "term_ptr": np.int64,
            "post_row": np.int32,
            "post_tf": np.int32,
            "vocab_hash": np.uint64,
            "vocab_hash_ids": np.int64,
        }
        a = {}
        for key, dtype in want.items():
            if state[key].dtype != dtype or state[key].ndim != 1:
                raise BM25StateError(f"BM25 index state '{key}' has the wrong type or shape")
            a[key] = state[key]
        rows = state["rows"]
        if rows.dtype != np.int64 or rows.ndim != 0:
            raise BM25StateError("BM25 index state 'rows' has the wrong type or shape")
        n_words, n_rows = a["vocab_offsets"].size - 1, int(rows)
        row_ptr = a["row_ptr"][: n_rows + 1]
        sizes_agree = (
            n_words >= 0
            and 0 <= n_rows < a["row_ptr"].size
            and a["vocab_offsets"][-1] == a["vocab_bytes"].size
            and row_ptr[0] == 0
            and row_ptr[-1] <= a["row_terms"].size == a["row_tf"].size
            and a["term_ptr"].size == n_words + 1
            and a["term_ptr"][0] == 0
            and a["term_ptr"][-1] == a["post_row"].size == a["post_tf"].size
            and a["df"].size == a["vocab_hash"].size == a["vocab_hash_ids"].size == n_words
            and a["row_len"].size >= n_rows
            and not np.any(np.diff(row_ptr) < 0)
            and not np.any(np.diff(a["term_ptr"]) < 0)
            and (a["doc_ids"].size == 0 or 0 <= a["doc_ids"].min() <= a["doc_ids"].max() < n_rows)
        )
        if not sizes_agree:
            raise BM25StateError("BM25 index state arrays do not agree in size")
        live = np.zeros(n_rows, np.bool_)
        live[a["doc_ids"]] = True
        doc_ids = a["doc_ids"]
        self._vocab = Vocabulary(
            a["vocab_bytes"], a["vocab_offsets"], a["vocab_hash"], a["vocab_hash_ids"]
        )
        # copied: the frequencies change in place, and a state may be shared (``state``)
        self._df = _Growable(np.int64, a["df"])
        self._df_hist = _Growable(np.int64, np.bincount(a["df"], minlength=doc_ids.size + 2))
        # saved with room for the rows updates add (``repomem.index.store``): the first one
        # copied the terms, 100 MB and a second of a first edit on the Linux kernel's
        # subset, and the rows' bounds and lengths, 87 MB of one on the whole kernel
        self._row_ptr = _Growable.adopt(a["row_ptr"], n_rows + 1)
        self._row_terms = _Growable.adopt(a["row_terms"], int(row_ptr[-1]))
        self._row_tf = _Growable.adopt(a["row_tf"], int(row_ptr[-1]))
        self._row_doc = _Growable(np.int64, np.arange(n_rows))
        self._row_len = _Growable.adopt(a["row_len"], n_rows)
        self._row_live = _Growable(np.bool_, live)
        self._row_of = _Growable(np.int64, np.where(live, np.arange(n_rows), -1))
        self._capacity = n_rows
        self._n_live = int(doc_ids.size)
        self._total_len = int(self._row_len.view.sum())
        self._term_ptr, self._post_row, self._post_tf = a["term_ptr"], a["post_row"], a["post_tf"]
        self._blocks = _saved_blocks(state, n_words, n_rows)
        if self._blocks is not None:
            self._block_avgdl = float(state["block_avgdl"][0])
        self._main_rows = n_rows
        self._main_dead = 0
        self._queried = False
        self._version += 1


class _Compaction:
    """How a BM25 index lays its live documents out again (``compact``): in memory, or
    written to its ``spool`` folder and mapped back."""

    def compact(self) -> None:
        """Lay the live documents out by id in a new main segment, dropping unused terms.
        With a ``spool`` folder, the rows and postings are written there a part at a time
        (files of their own, gone with their maps) and mapped back: made in memory, the
        Linux kernel subset's took ~230 MB more at once, near an editing session's 750th
        edit, and kept them as long as the process lived."""
        if self._row_doc.size == self._main_rows and not self._main_dead and self._df.view.all():
            return  # laid out so already: saving a built index does not copy it again
        rows = np.flatnonzero(self._row_live.view)
        docs = self._row_doc.view[rows]
        order = np.argsort(docs)
        rows, docs = rows[order], docs[order]
        ptr = self._row_ptr.view
        starts = ptr[rows]
        lengths = ptr[rows + 1] - starts
        row_ptr = np.zeros(self._capacity + 1, np.int64)
        row_ptr[docs + 1] = lengths
        np.cumsum(row_ptr, out=row_ptr)
        used = self._df.view > 0
        vocab, renumber = self._vocab, None
        if not used.all():
            renumber = (np.cumsum(used) - 1).astype(np.int32)
            if isinstance(vocab, Vocabulary):  # kept as arrays, not decoded word by word
                vocab = vocab.kept(used)
            else:
                words = [w for w, u in zip(vocab, used.tolist(), strict=True) if u]
                vocab = {w: i for i, w in enumerate(words)}
        live = np.zeros(self._capacity, np.bool_)
        live[docs] = True
        if self.spool is not None:
            self._lay_out_spooled(vocab, row_ptr, rows, renumber, live)
            return
        # postings copied row after row, in id order
        row_terms, row_tf = _gather_rows(
            ptr, rows, self._row_terms.view, self._row_tf.view, int(lengths.sum())
        )
        # the old rows go before the new ones are laid out, which a build's compaction of
        # every row of the repository would otherwise hold at once with them
        self._row_terms = self._row_tf = _Growable(np.int32)
        if renumber is not None:
            row_terms = renumber[row_terms]
        self._load(vocab, row_ptr, row_terms, row_tf, live)

    def _lay_out_spooled(
        self,
        vocab: dict[str, int] | Vocabulary,
        row_ptr: IntArray,
        rows: IntArray,
        renumber: Int32Array | None,
        live: BoolArray,
    ) -> None:
        """``compact``'s new main segment written to ``spool`` (rows ``_SPOOL_ROWS`` at a
        time, postings ``_SPOOL_POSTINGS`` at a time) and mapped back; the rows with room
        for the terms later edits add, as a saved index has them. Each mapped array read
        whole (the old rows, then the new rows, then the postings) is handed back once the
        next step no longer reads it (``release_mapped``): held until the tidy's end, the
        three made the Linux kernel subset's language server ~0.3 GB larger at once. The
        rows' statistics are counted as the old rows are gathered, so that the new rows are
        not read again while the postings are (~90 MB more at once there)."""
        assert self.spool is not None
        ptr, old_terms, old_tf = self._row_ptr.view, self._row_terms.view, self._row_tf.view
        terms_out = ScratchWriter(self.spool, np.int32)
        tf_out = ScratchWriter(self.spool, np.int32)
        docs = np.flatnonzero(live)  # the new row of each of ``rows``, in their order
        df, row_len = np.zeros(len(vocab), np.int64), np.zeros(live.size, np.int64)
        for lo in range(0, rows.size, _SPOOL_ROWS):
            part = rows[lo : lo + _SPOOL_ROWS]
            lengths = ptr[part + 1] - ptr[part]
            terms, tfs = _gather_rows(ptr, part, old_terms, old_tf, int(lengths.sum()))
            if renumber is not None:
                terms = renumber[terms]
            part_len = np.zeros(part.size, np.int64)
            _count_rows(np.r_[0, np.cumsum(lengths)], terms, tfs, df, part_len)
            row_len[docs[lo : lo + _SPOOL_ROWS]] = part_len
            terms_out.write(terms)
            tf_out.write(tfs)
        release_mapped(mappings_of([old_terms, old_tf]))
        total = int(row_ptr[-1])
        room = _spool_room(total)
        row_terms, row_tf = terms_out.mapped(room), tf_out.mapped(room)
        self._row_terms = self._row_tf = _Growable(np.int32)
        post_rows = ScratchWriter(self.spool, np.int32)
        post_tf = ScratchWriter(self.spool, np.int32)
        term_ptr = _write_postings(
            row_ptr,
            row_terms[:total],
            row_tf[:total],
            len(vocab),
            (post_rows, post_tf),
            _SPOOL_POSTINGS,
        )
        release_mapped(mappings_of([row_terms, row_tf]))
        # the terms' and rows' bounds and the rows' lengths to files too, with room for the
        # rows later edits add: made on the heap, the Linux kernel subset's first compaction
        # in an editing session (its ~850th edit) kept 11 MB of them resident for good
        term_ptr = _spooled(self.spool, term_ptr)
        rows_room = _spool_room(live.size)
        row_ptr = _spooled(self.spool, row_ptr, rows_room)
        row_len = _spooled(self.spool, row_len, rows_room)
        postings = (term_ptr, post_rows.mapped(), post_tf.mapped())
        self._load(
            vocab,
            row_ptr,
            row_terms,
            row_tf,
            live,
            adopt=True,
            postings=postings,
            stats=(df, row_len),
        )
        # the maxima per block and sub-block, dense and sparse, to files too (the terms' lists
        # and bounds are a row per term)
        blocks = list(self._block_maxima())
        for i in _SPOOLED_BLOCKS:
            blocks[i] = _spooled(self.spool, blocks[i])
        self._blocks = tuple(blocks)
        spooled = [blocks[i] for i in _SPOOLED_BLOCKS]
        counts = self._spool_counts(self.spool)
        self.spooled_maps = mappings_of(
            [row_terms, row_tf, row_ptr, row_len, *postings, *spooled, *counts]
        )
        release_mapped(self.spooled_maps)

    def _spool_counts(self, spool: Path) -> list[np.ndarray]:
        """The counts per term and per row, the rows' documents, liveness and places moved
        to files of ``spool``, with room as the rows' bounds have it; returns their maps'
        arrays. Made on the heap, they stayed resident whole after the Linux kernel subset's
        compaction in an editing session (~15 MB), which reads few of their pages."""
        counts = []
        for name in ("_df", "_df_hist", "_row_doc", "_row_live", "_row_of"):
            grown: _Growable = getattr(self, name)
            counts.append(_spooled(spool, grown.view, _spool_room(grown.size)))
            setattr(self, name, _Growable.adopt(counts[-1], grown.size))
        return counts


@dataclass(frozen=True)
class Background:
    """What another collection adds to an index's term statistics (``BM25Index.statistics``):
    an index scoring its documents against a background scores them as if the two
    collections were one (a doc memory's entries against the code index's fragments) without
    holding the other's postings. ``df``: of the query's terms only; ``mean_idf``: the other
    collection's, which stands for the joint one in the negative-idf floor."""

    docs: int
    total_len: int
    df: Mapping[str, int]
    mean_idf: float


class BM25Index(_SavedState, _Compaction):
    """Okapi BM25 with rank-bm25's exact BM25Okapi formula (k1=1.5, b=0.75, epsilon=0.25,
    negative idf floored at epsilon * average idf, query tokens counted with repetition).

    Document ids are caller-assigned ints >= 0 and may have holes. ``capacity`` is one more than
    the largest id ever added; it does not shrink on removal, so arrays the caller indexes by id
    keep their meaning. Not thread-safe: serialise calls that add, remove or score.
    """

    def __init__(self, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25) -> None:
        if not k1 >= 0:
            raise ValueError(f"BM25 k1 must be >= 0, got {k1}")
        if not 0 <= b <= 1:
            raise ValueError(f"BM25 b must be between 0 and 1, got {b}")
        self.k1 = float(k1)
        self.b = float(b)
        self.epsilon = float(epsilon)
        self._version = 0
        self._queried = False
        self._stats_version = -1
        self._eps_idf = 0.0
        self._norm: FloatArray = np.zeros(0)
        self._sums: FloatArray = np.zeros(0)
        self._marks: npt.NDArray[np.int8] = np.zeros(0, np.int8)
        self._all: BoolArray = np.zeros(0, np.bool_)
        # per term, the query's weight while the delta is scanned (``scores``), else zero
        self._term_weight: FloatArray = np.zeros(0)
        # where a compaction writes the main segment it lays out (``compact``); None: memory
        self.spool: Path | None = None
        # the maps of what the last compaction into ``spool`` wrote (``trim.release_mapped``)
        self.spooled_maps: list[mmap.mmap] = []
        self._load(
            {},
            np.zeros(1, np.int64),
            np.zeros(0, np.int32),
            np.zeros(0, np.int32),
            np.zeros(0, np.bool_),
        )

    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def live_count(self) -> int:
        return self._n_live

    def add(self, doc_id: int, tokens: Sequence[str]) -> None:
        """Index a document; its id must not be live (remove the old version first)."""
        counts = Counter(tokens)
        self.add_counted(
            [doc_id],
            TermCounts.of(
                list(counts),
                np.array([0, len(counts)], np.int64),
                np.arange(len(counts), dtype=np.int32),
                np.fromiter(counts.values(), np.int32, len(counts)),
            ),
            np.zeros(1, np.int64),
        )

    def add_counted(self, doc_ids: Sequence[int], counts: TermCounts, docs: np.ndarray) -> None:
        """Index documents ``docs`` of ``counts`` under ``doc_ids``; no id may be live."""
        ids = [operator.index(d) for d in doc_ids]
        if len(ids) != len(docs):
            raise ValueError(f"{len(ids)} document ids for {len(docs)} documents")
        seen: set[int] = set()
        for d in ids:
            if d < 0:
                raise ValueError(f"document id must be >= 0, got {d}")
            if self._row(d) >= 0 or d in seen:
                raise ValueError(f"document {d} is already indexed; remove it before re-adding")
            seen.add(d)
        if not ids:
            return
        n_known = len(self._vocab)
        terms, tfs, lengths = _rows_of(self._vocab, counts, docs)
        if len(self._vocab) > n_known:
            self._df.extend(np.zeros(len(self._vocab) - n_known, np.int64))
            self._df_hist.view[0] += len(self._vocab) - n_known
        needed = self._n_live + len(ids) + 2
        if self._df_hist.size < needed:
            self._df_hist.extend(np.zeros(needed - self._df_hist.size, np.int64))
        _count_terms(self._df.view, self._df_hist.view, terms, 1)
        doc_len = np.bincount(
            np.repeat(np.arange(len(ids)), lengths), weights=tfs, minlength=len(ids)
        ).astype(np.int64)
        first_row = self._row_doc.size
        top = max(ids) + 1
        if self._row_of.size < top:
            self._row_of.extend(np.full(top - self._row_of.size, -1, np.int64))
        self._row_of.view[ids] = np.arange(first_row, first_row + len(ids))
        self._row_ptr.extend(self._row_terms.size + np.cumsum(lengths))
        self._row_terms.extend(terms)
        self._row_tf.extend(tfs)
        self._row_doc.extend(np.array(ids, np.int64))
        self._row_len.extend(doc_len)
        self._row_live.extend(np.ones(len(ids), np.bool_))
        self._capacity = max(self._capacity, max(ids) + 1)
        self._n_live += len(ids)
        self._total_len += int(doc_len.sum())
        self._changed()

    def remove(self, doc_id: int) -> None:
        """Forget a live document; its id may be added again afterwards."""
        row = self._row(doc_id)
        if row < 0:
            raise KeyError(f"document {doc_id} is not in the index")
        self._row_of.view[doc_id] = -1
        self._row_live.view[row] = False
        ptr = self._row_ptr.view
        terms = self._row_terms.view[ptr[row] : ptr[row + 1]]
        _count_terms(self._df.view, self._df_hist.view, terms, -1)
        self._n_live -= 1
        self._total_len -= int(self._row_len.view[row])
        if row < self._main_rows:
            self._main_dead += 1
        self._changed()

    def _row(self, doc_id: int) -> int:
        """The live row of a document, -1 if it has none."""
        return int(self._row_of.view[doc_id]) if 0 <= doc_id < self._row_of.size else -1

    def _query(
        self, query_tokens: Sequence[str], background: Background | None = None
    ) -> tuple[IntArray, FloatArray] | None:
        """The query's term ids that live documents use and their weights (idf times repeats
        times ``k1 + 1``, over this index and ``background``), in the order the scores sum
        them; None when no document can score."""
        if self._compaction_due():
            self.compact()
        self._queried = True
        counted = Counter(query_tokens)
        words = list(counted)
        ids = _term_ids(self._vocab, words)
        known = [(tid, counted[t], t) for t, tid in zip(words, ids, strict=True) if tid >= 0]
        if not known or self._total_len == 0:
            return None
        terms = np.array([t for t, _, _ in known], np.int64)
        df = self._df.view[terms]
        present = df > 0
        if not present.any():
            return None
        self._refresh_stats()
        n, eps_idf = self._n_live, self._eps_idf
        if background is not None:
            df = df + np.array([background.df.get(w, 0) for _, _, w in known], np.int64)
            n += background.docs
            eps_idf = self.epsilon * background.mean_idf
        terms = terms[present]
        df = df[present]
        idf = np.log(n - df + 0.5) - np.log(df + 0.5)
        idf[idf < 0] = eps_idf
        repeats = np.array([c for _, c, _ in known], np.float64)[present]
        return terms, repeats * idf * (self.k1 + 1)

    def statistics(self, query_tokens: Sequence[str]) -> Background:
        """This index as the background of another (see :class:`Background`)."""
        df = {
            t: int(self._df.view[tid])
            for t in set(query_tokens)
            if (tid := self._vocab.get(t)) is not None
        }
        mean_idf = _mean_idf(self._df_hist.view, self._n_live) if self._n_live else 0.0
        return Background(self._n_live, self._total_len, df, mean_idf)

    def scores(
        self, query_tokens: Sequence[str], background: Background | None = None
    ) -> FloatArray:
        """BM25 score of every id in ``range(capacity)``; dead and unused ids score 0. With a
        ``background``, as if its collection's documents were indexed here too."""
        query = self._query(query_tokens, background)
        out = np.zeros(self._capacity)
        if query is None:
            return out
        terms, weights = query
        vocab = self._vocab
        norm = self._norm
        if background is not None:
            norm = np.empty(self._row_len.size)
            avgdl = (self._total_len + background.total_len) / (self._n_live + background.docs)
            _fill_norm(self._row_len.view, self._row_live.view, self.k1, self.b, avgdl, norm)
        _score_main(self._term_ptr, self._post_row, self._post_tf, terms, weights, norm, out)
        if self._row_doc.size > self._main_rows:
            if self._term_weight.size < len(vocab):
                # zeros the system gives untouched: a scan reads the pages of the delta's
                # terms alone, where filling the whole array (5 MB on the Linux kernel's
                # subset) made it resident at the first query after an edit
                self._term_weight = fresh_zeros(len(vocab) + len(vocab) // 8)
            term_weight = self._term_weight
            term_weight[terms] = weights
            _score_delta(
                self._row_ptr.view,
                self._row_terms.view,
                self._row_tf.view,
                self._main_rows,
                term_weight,
                norm,
                self._row_doc.view,
                out,
            )
            term_weight[terms] = 0.0
        return out

    def top_k(
        self,
        query_tokens: Sequence[str],
        k: int,
        visible: BoolArray | None = None,
        hidden: npt.ArrayLike = (),
    ) -> tuple[IntArray, FloatArray]:
        """The ``k`` documents with the best positive scores among ``visible`` (a mask over ids;
        ids past its end are not visible; None: every id) but ``hidden`` (ids: a cursor's own
        fragments), best first, ties by lower id, and their scores: exactly what ranking
        :meth:`scores` gives, the same floats. On an index of ``maxscore.PRUNED_FROM``
        documents or more, without walking the postings of the query's common terms
        (``repomem.index.maxscore``), and reading ``visible`` only for the documents it
        scores (a mask of millions is passed, not copied per query); below, scoring all is
        cheaper."""
        if k < 0:
            raise ValueError(f"k must be >= 0, got {k}")
        if visible is None:  # a mask of ones, made once per capacity
            if self._all.size != self._capacity:
                self._all = np.ones(self._capacity, np.bool_)
            visible = self._all
        hidden = np.unique(np.asarray(hidden, np.int64))
        if hidden.size and hidden[0] < 0:
            raise ValueError(f"hidden ids must be >= 0, got {hidden[0]}")
        query = self._query(query_tokens)
        if query is None or k == 0:
            return np.zeros(0, np.int64), np.zeros(0)
        terms, weights = query
        # with a negative idf floor (a tiny corpus) no bound holds
        if self._main_rows < maxscore.PRUNED_FROM or weights.min() < 0:
            shown = visible.copy()
            shown[hidden[hidden < shown.size]] = False
            ids, scores = maxscore.select(self.scores(query_tokens)[: shown.size], shown, k)
        else:
            ids, scores = self._pruned(terms, weights, visible, hidden, k)
        best = np.lexsort((ids, -scores))
        return ids[best], scores[best]

    def _pruned(
        self, terms: IntArray, weights: FloatArray, visible: BoolArray, hidden: IntArray, k: int
    ) -> tuple[IntArray, FloatArray]:
        """``maxscore.pruned_top_k`` over this index: one level of a term's block maxima is
        its weight over 255, scaled up as far as the mean length rose since they were taken."""
        blocks = self._block_maxima()
        ratio = max(1.0, self._total_len / self._n_live / self._block_avgdl)
        mean_row = self._row_ptr.view[self._main_rows] / max(1, self._main_rows)
        return maxscore.pruned_top_k(
            self._term_ptr,
            self._post_row,
            self._post_tf,
            self._row_ptr.view,
            self._row_terms.view,
            self._row_tf.view,
            self._row_doc.view,
            self._main_rows,
            self._norm,
            terms,
            weights,
            weights * (ratio * (1 + SLACK) / maxscore.LEVELS),
            *blocks,
            visible,
            hidden,
            k,
            *self._scratch(),
            maxscore.FIRST_BUDGET,
            maxscore.ROW_COST * max(1.0, mean_row),
            maxscore.SEED_BLOCKS,
            maxscore.SEED_UNITS,
        )

    def _saved_blocks(self) -> tuple[np.ndarray, ...]:
        """The block maxima as ``state`` saves them (``_BLOCK_KEYS``)."""
        return (*self._block_maxima(), np.array([self._block_avgdl]))

    def _block_maxima(self) -> tuple[np.ndarray, ...]:
        """The main segment's block maxima, taken now at the mean length now if the index was
        saved without them."""
        if self._blocks is None:
            rows = self._main_rows
            self._block_avgdl = self._total_len / self._n_live if self._total_len else 1.0
            self._blocks = block_maxima(
                self._term_ptr,
                self._post_row,
                self._post_tf,
                self._row_len.view[:rows],
                rows,
                self.k1,
                self.b,
                self._block_avgdl,
                maxscore.MID_FROM,
            )
        return self._blocks

    def scores_of(self, query_tokens: Sequence[str], doc_ids: IntArray) -> FloatArray:
        """The scores of ``doc_ids`` alone (ids not live score 0): ``scores()[doc_ids]``, the
        same floats, at the cost of those documents' rows."""
        ids = np.asarray(doc_ids, np.int64)
        query = self._query(query_tokens)
        if query is None:
            return np.zeros(ids.size)
        rows = np.full(ids.size, -1, np.int64)
        known = (ids >= 0) & (ids < self._row_of.size)
        rows[known] = self._row_of.view[ids[known]]
        return maxscore.score_rows(
            self._row_ptr.view,
            self._row_terms.view,
            self._row_tf.view,
            rows,
            self._main_rows,
            self._norm,
            *query,
        )

    def _scratch(self) -> tuple[FloatArray, npt.NDArray[np.int8]]:
        """Per main row, a sum and a mark that :meth:`top_k` leaves zero: allocated once, so a
        query touches only the pages of the documents it meets."""
        if self._sums.size != self._main_rows:  # pages of their own, handed back at a tidy
            self._sums = fresh_zeros(self._main_rows)
            self._marks = fresh_zeros(self._main_rows, np.int8)
        return self._sums, self._marks

    def documents_with(self, term: str, among: IntArray | None = None) -> IntArray:
        """The live documents holding ``term``, ascending: its postings in the main segment
        and the delta rows holding it, read where they lie (nothing is compacted or copied
        beyond the answer). With ``among`` (live documents, ascending), only those of them:
        a short ``among`` is looked up in the postings by binary search, so narrowing a few
        candidates by a name as common as ``self`` costs what the candidates do."""
        t = self._vocab.get(term)
        if t is None or self._df.view[t] == 0:
            return np.zeros(0, np.int64)
        live = self._row_live.view
        main = (
            self._post_row[self._term_ptr[t] : self._term_ptr[t + 1]]
            if t < self._term_ptr.size - 1
            else np.zeros(0, np.int32)
        )
        if among is None:
            docs = main[live[main]].astype(np.int64)
        elif among.size * _SEARCHED_SHARE < main.size:
            at = np.searchsorted(main, among.astype(main.dtype))
            np.minimum(at, main.size - 1, out=at)
            docs = among[main[at] == among]
        else:  # main row number == document id: mark the postings, read the marks
            marked = np.zeros(self._main_rows, np.bool_)
            marked[main] = True
            docs = among[among < self._main_rows]
            docs = docs[marked[docs]]
        if among is not None:
            docs = docs[live[docs]]
        ptr = self._row_ptr.view
        first = ptr[self._main_rows]
        at = np.flatnonzero(self._row_terms.view[first:] == t) + first
        if at.size:
            rows = np.searchsorted(ptr, at, side="right") - 1
            delta = self._row_doc.view[rows[live[rows]]]
            if among is not None:
                delta = delta[np.isin(delta, among, assume_unique=True)]
            # a live document has one live row: main and delta documents are disjoint
            docs = np.sort(np.concatenate([docs, delta]))
        return docs

    def _load(
        self,
        vocab: dict[str, int] | Vocabulary,
        row_ptr: IntArray,
        row_terms: Int32Array,
        row_tf: Int32Array,
        live: BoolArray,
        *,
        adopt: bool = False,
        postings: tuple[IntArray, ...] | None = None,
        stats: tuple[IntArray, IntArray] | None = None,
    ) -> None:
        """Make the given rows (row number == document id, only live rows hold terms) the whole
        index, all in the main segment, and derive the statistics from them. ``adopt``: keep
        the row arrays themselves (mapped, say), the rows' bounds and lengths too, with room
        after them or none (an append past it copies them); ``postings``: the rows'
        ``_transpose``, made already; ``stats``: their ``_row_stats``, counted already."""
        n_rows = live.size
        df, row_len = stats or _row_stats(row_ptr, row_terms, row_tf, len(vocab))
        doc_ids = np.flatnonzero(live)
        self._vocab: dict[str, int] | Vocabulary = vocab
        self._df = _Growable(np.int64, df)
        self._df_hist = _Growable(np.int64, np.bincount(df, minlength=doc_ids.size + 2))
        used = int(row_ptr[n_rows])  # an adopted array may hold room after its rows
        self._row_ptr = _Growable.kept(np.int64, row_ptr, n_rows + 1, adopt)
        self._row_terms = _Growable.kept(np.int32, row_terms, used, adopt)
        self._row_tf = _Growable.kept(np.int32, row_tf, used, adopt)
        self._row_doc = _Growable(np.int64, np.arange(n_rows))
        self._row_len = _Growable.kept(np.int64, row_len, n_rows, adopt)
        self._row_live = _Growable(np.bool_, live)
        # per document id, its live row (-1: none); a dict of them took ~30 MB of the Linux
        # kernel subset's 323k fragments, made again at every compaction
        self._row_of = _Growable(np.int64, np.where(live, np.arange(n_rows), -1))
        self._capacity = n_rows
        self._n_live = int(doc_ids.size)
        self._total_len = int(row_len[:n_rows].sum())
        self._term_ptr, self._post_row, self._post_tf = postings or _transpose(
            row_ptr, row_terms, row_tf, len(vocab)
        )
        self._main_rows = n_rows
        self._blocks = None
        self._block_maxima()
        self._main_dead = 0
        self._queried = False
        self._version += 1

    def _changed(self) -> None:
        self._version += 1
        if self._queried and self._compaction_due():
            self.compact()

    def tidy(self) -> None:
        """Compact if it is worth it: for a moment when nothing waits for this index. The
        saved words looked up so far are forgotten (``Vocabulary.forget_seen``), and the
        pages the delta's term weights were written in are handed back (each query leaves
        them zero; kept, they grew with the terms queried: 0.4 MB of 5.9 by the 300th edit
        of a session on the Linux kernel's subset), and so are the pruned search's sums and
        marks, which each query leaves zero too."""
        if self._compaction_due(1):
            self.compact()
        if isinstance(self._vocab, Vocabulary):
            self._vocab.forget_seen()
        release_zeros([self._term_weight, self._sums, self._marks])

    def _compaction_due(self, factor: int = _FORCED) -> bool:
        pending = self._row_doc.size - self._main_rows + self._main_dead
        return pending > factor * max(_COMPACT_MIN_ROWS, self._main_rows * _COMPACT_FRACTION)

    def _refresh_stats(self) -> None:
        """The idf floor and the per-row length normalisers, after the live set changed."""
        if self._stats_version == self._version:
            return
        self._eps_idf = self.epsilon * _mean_idf(self._df_hist.view, self._n_live)
        if self._norm.size < self._row_len.size:  # room: edits add rows before most queries
            self._norm = np.empty(self._row_len.size * 9 // 8)
        _fill_norm(
            self._row_len.view,
            self._row_live.view,
            self.k1,
            self.b,
            self._total_len / self._n_live,
            self._norm,
        )
        self._stats_version = self._version


def _decode_vocab(data: np.ndarray, offsets: np.ndarray) -> list[str]:
    offsets = offsets.astype(np.int64)
    if (
        offsets.size == 0
        or offsets[0] != 0
        or offsets[-1] != data.size
        or np.any(np.diff(offsets) < 0)
    ):
        raise BM25StateError("BM25 index state 'vocab_offsets' does not match 'vocab_bytes'")
    raw = data.astype(np.uint8).tobytes()
    bounds = offsets.tolist()
    try:
        words = [raw[s:e].decode("utf-8") for s, e in zip(bounds, bounds[1:], strict=False)]
    except UnicodeDecodeError as exc:
        raise BM25StateError(f"BM25 index state vocabulary is not UTF-8: {exc}") from exc
    if len(set(words)) != len(words):
        raise BM25StateError("BM25 index state vocabulary has duplicate terms")
    return words


def _saved_blocks(
    state: Mapping[str, np.ndarray], n_words: int, n_rows: int
) -> tuple[np.ndarray, ...] | None:
    """A trusted state's block maxima, checked like its other arrays (types, sizes and
    offsets); None when it was saved without them."""
    if not all(key in state for key in _BLOCK_KEYS):
        return None
    for key, dtype in zip(_BLOCK_KEYS, _BLOCK_TYPES, strict=True):
        if state[key].dtype != dtype or state[key].ndim != 1:
            raise BM25StateError(f"BM25 index state '{key}' has the wrong type or shape")
    terms, top, sub_top, mid_terms, mid_ptr, mid_sub, mid_level, avgdl = (
        state[key] for key in _BLOCK_KEYS
    )
    n_blocks = (n_rows + maxscore.BLOCK - 1) >> maxscore.BLOCK_SHIFT
    if not (
        top.size == terms.size * n_blocks
        and sub_top.size == top.size * maxscore.SUBS
        and all(t.size == 0 or 0 <= t.min() <= t.max() < n_words for t in (terms, mid_terms))
        and mid_ptr.size == mid_terms.size + 1
        and mid_ptr[0] == 0
        and mid_ptr[-1] == mid_sub.size == mid_level.size
        and not np.any(np.diff(mid_ptr) < 0)
        and avgdl.size == 1
        and avgdl[0] > 0
    ):
        raise BM25StateError("BM25 index state block maxima do not agree in size")
    return terms, top, sub_top, mid_terms, mid_ptr, mid_sub, mid_level


def _check_rows(
    row_ptr: IntArray, row_terms: IntArray, row_tf: IntArray, doc_ids: IntArray, n_terms: int
) -> BoolArray:
    """Check the bounds the compiled loops rely on (a violation would read outside the arrays)
    and return the live-row mask."""
    if (
        row_ptr.size == 0
        or row_ptr[0] != 0
        or np.any(np.diff(row_ptr) < 0)
        or (row_ptr[-1] != row_terms.size)
    ):
        raise BM25StateError("BM25 index state 'row_ptr' is not a valid row offset array")
    if row_tf.shape != row_terms.shape:
        raise BM25StateError("BM25 index state 'row_tf' and 'row_terms' differ in length")
    if row_terms.size and (row_terms.min() < 0 or row_terms.max() >= min(n_terms, 2**31)):
        raise BM25StateError("BM25 index state 'row_terms' refers to unknown terms")
    if row_tf.size and (row_tf.min() < 1 or row_tf.max() >= 2**31):
        raise BM25StateError("BM25 index state 'row_tf' has frequencies out of range")
    n_rows = row_ptr.size - 1
    if doc_ids.size and (doc_ids.min() < 0 or doc_ids.max() >= n_rows):
        raise BM25StateError("BM25 index state 'doc_ids' has ids outside the rows")
    live = np.zeros(n_rows, np.bool_)
    live[doc_ids] = True
    if np.count_nonzero(live) != doc_ids.size:
        raise BM25StateError("BM25 index state 'doc_ids' repeats a document id")
    if np.any(np.diff(row_ptr)[~live]):
        raise BM25StateError("BM25 index state has terms in rows missing from 'doc_ids'")
    return live

"""BM25Index must score exactly like rank-bm25's BM25Okapi built from scratch over the live docs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, invariant, rule
from pages import resident_pages
from rank_bm25 import BM25Okapi

from repomem.errors import RepomemError
from repomem.index import bm25, maxscore, trim
from repomem.index.bm25 import (
    TOKEN_RE,
    BM25Index,
    BM25StateError,
    SpooledRows,
    count_terms,
    tokenize,
)
from repomem.index.mapped import Vocabulary
from repomem.index.spool import ArrayWriter, TextWriter, is_file, spooled

VOCAB = [f"w{i}" for i in range(12)]
# Zipf-like: the first terms land in most documents, so their raw idf is negative.
PROBS = 1.0 / np.arange(1, len(VOCAB) + 1) ** 1.2
PROBS /= PROBS.sum()


def random_doc(rng: np.random.Generator, max_len: int = 25) -> list[str]:
    return [str(t) for t in rng.choice(VOCAB, size=int(rng.integers(0, max_len)), p=PROBS)]


def random_query(rng: np.random.Generator) -> list[str]:
    """Repeated tokens, an unknown term now and then."""
    query = [str(t) for t in rng.choice(VOCAB, size=int(rng.integers(1, 8)))]
    if rng.random() < 0.3:
        query.append("not_in_any_doc")
    return query


def expected_scores(docs: dict[int, list[str]], query: list[str], capacity: int) -> np.ndarray:
    """rank-bm25 over the live docs in id order, scattered back to their ids."""
    expected = np.zeros(capacity)
    ids = sorted(docs)
    if any(docs[i] for i in ids):  # rank-bm25 cannot build a model with an empty vocabulary
        expected[ids] = BM25Okapi([docs[i] for i in ids]).get_scores(query)
    return expected


def assert_matches(index: BM25Index, docs: dict[int, list[str]], query: list[str]) -> None:
    got = index.scores(query)
    assert got.dtype == np.float64
    assert got.shape == (index.capacity,)
    np.testing.assert_allclose(
        got, expected_scores(docs, query, index.capacity), rtol=1e-9, atol=1e-12
    )


def has_negative_idf(docs: dict[int, list[str]]) -> bool:
    n = len(docs)
    return any(sum(t in d for d in docs.values()) > n / 2 for t in VOCAB)


def test_tokenize_keeps_identifiers_and_digit_runs() -> None:
    assert tokenize("foo_bar1 = Baz(42) + 3.14  # über 1abc") == [
        "foo_bar1",
        "Baz",
        "42",
        "3",
        "14",
        "ber",
        "1",
        "abc",
    ]
    assert tokenize("") == []


@pytest.mark.parametrize("seed", range(6))
def test_static_corpus_matches_rank_bm25(seed: int) -> None:
    rng = np.random.default_rng(seed)
    docs = {i: random_doc(rng) for i in range(int(rng.integers(5, 40)))}
    docs[len(docs)] = []  # an empty document still counts in N and avgdl
    assert has_negative_idf(docs)
    index = BM25Index()
    for doc_id, tokens in docs.items():
        index.add(doc_id, tokens)
    for _ in range(5):
        assert_matches(index, docs, random_query(rng))
    index.compact()
    assert_matches(index, docs, random_query(rng))


def test_custom_parameters_match_rank_bm25() -> None:
    rng = np.random.default_rng(7)
    docs = {i: random_doc(rng) for i in range(30)}
    index = BM25Index(k1=0.9, b=0.4, epsilon=0.5)
    for doc_id, tokens in docs.items():
        index.add(doc_id, tokens)
    query = random_query(rng)
    expected = BM25Okapi([docs[i] for i in range(30)], k1=0.9, b=0.4, epsilon=0.5)
    np.testing.assert_allclose(index.scores(query), expected.get_scores(query), rtol=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_random_adds_removes_and_compactions_match_from_scratch(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    index = BM25Index()
    docs: dict[int, list[str]] = {}
    for step in range(300):
        action = rng.random()
        if action < 0.55 or not docs:
            doc_id = int(rng.integers(0, 80))  # ids with holes; removed ids come back
            if doc_id in docs:
                continue
            docs[doc_id] = random_doc(rng)
            index.add(doc_id, docs[doc_id])
        elif action < 0.95:
            doc_id = int(rng.choice(sorted(docs)))
            del docs[doc_id]
            index.remove(doc_id)
        else:
            index.compact()
        assert index.live_count == len(docs)
        if step % 10 == 0:
            assert_matches(index, docs, random_query(rng))
    assert_matches(index, docs, random_query(rng))


def counting_compactions(index: BM25Index, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    compact = index.compact
    monkeypatch.setattr(index, "compact", lambda: (calls.append(1), compact())[1])
    return calls


def bulk_loaded(rng: np.random.Generator) -> tuple[BM25Index, dict[int, list[str]]]:
    index, docs = BM25Index(), {}
    for doc_id in range(2500):
        docs[doc_id] = random_doc(rng, max_len=6)
        index.add(doc_id, docs[doc_id])
    return index, docs


def churn(
    index: BM25Index, docs: dict[int, list[str]], rng: np.random.Generator, edits: int
) -> None:
    """Edits between queries, as an editor's updates come: a document replaced or removed."""
    for step, doc_id in enumerate(rng.choice(3000, size=edits).tolist()):
        if doc_id in docs:
            index.remove(doc_id)
            del docs[doc_id]
        if step % 2:
            docs[doc_id] = random_doc(rng, max_len=6)
            index.add(doc_id, docs[doc_id])
        if step % 500 == 0:
            assert_matches(index, docs, random_query(rng))


def test_auto_compaction_keeps_scores(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bulk load, then thousands of edits between queries, cross the automatic compaction
    threshold (four times the rows that make one worth it) several times."""
    rng = np.random.default_rng(3)
    index, docs = bulk_loaded(rng)
    assert_matches(index, docs, random_query(rng))
    compactions = counting_compactions(index, monkeypatch)
    churn(index, docs, rng, 12_000)
    assert len(compactions) >= 2
    assert_matches(index, docs, random_query(rng))


def test_tidy_compacts_once_it_is_worth_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """``tidy`` (a quiet moment) compacts past 1,024 changed rows; updates and queries alone
    let the delta grow four times as large first."""
    rng = np.random.default_rng(5)
    index, docs = bulk_loaded(rng)
    index.compact()
    compactions = counting_compactions(index, monkeypatch)
    index.tidy()
    assert not compactions  # nothing changed since
    churn(index, docs, rng, 1000)  # ~1,250 rows removed or added
    assert not compactions
    index.tidy()
    assert len(compactions) == 1
    index.tidy()
    assert len(compactions) == 1
    assert_matches(index, docs, random_query(rng))


def test_tidy_hands_back_the_pages_of_the_delta_term_weights() -> None:
    """A query scoring the rows added since the last compaction writes its terms' weights
    into an array as long as the vocabulary and leaves them zero; a tidy hands the pages it
    wrote back (they stayed resident, growing with the terms queried), and the scores stay
    as they were."""
    words = [f"t{i}" for i in range(20_000)]  # weights over ~40 pages
    index = BM25Index()
    for doc_id in range(2000):
        index.add(doc_id, words[doc_id * 10 : doc_id * 10 + 10])
    index.compact()
    index.add(2000, ["t0", "t19999"])  # a row of the delta
    query = words[::500]
    before = index.scores(query)
    assert resident_pages([index._term_weight]) > 1
    index.tidy()
    assert resident_pages([index._term_weight]) == 0
    assert np.array_equal(index.scores(query), before)


def test_tidy_hands_back_the_pages_of_the_pruned_search_scratch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The pruned search's sums and marks (one per main row) are left zero by every query:
    a tidy hands back the pages the queries wrote (made again on the heap at a compaction,
    they stayed resident whole), and the next query finds the same documents."""
    monkeypatch.setattr(maxscore, "PRUNED_FROM", 0)
    rng = np.random.default_rng(3)
    index = BM25Index()
    for doc_id in range(60_000):  # sums over ~120 pages
        index.add(doc_id, random_doc(rng, 4))
    index.compact()
    query = ["w1", "w2", "w3"]
    before = index.top_k(query, 10)
    assert resident_pages([index._sums]) > 1
    index.tidy()
    assert resident_pages([index._sums, index._marks]) == 0
    after = index.top_k(query, 10)
    for a, b in zip(before, after, strict=True):
        np.testing.assert_array_equal(a, b)


def test_rows_added_between_queries_reuse_the_row_norms() -> None:
    """An editing session adds rows before nearly every query: the per-row normalisers are
    filled again in the array they had, not in one made to the new row count each time
    (2.5 MB on the Linux kernel's subset, freed and made a little larger at every edit)."""
    index = BM25Index()
    for doc_id in range(100):
        index.add(doc_id, [f"t{doc_id % 7}", "shared"])
    index.scores(["shared"])
    norm = index._norm
    for doc_id in range(100, 105):
        index.add(doc_id, ["t1", "shared"])
        scores = index.scores(["t1", "shared"])
        assert index._norm is norm
    fresh = BM25Index()
    for doc_id in range(105):
        fresh.add(doc_id, [f"t{doc_id % 7}", "shared"] if doc_id < 100 else ["t1", "shared"])
    assert np.allclose(scores, fresh.scores(["t1", "shared"]), rtol=0, atol=1e-12)


def test_vocabulary_of_removed_documents_is_forgotten() -> None:
    """A term whose last document is gone must not count in the average idf (which sets the
    floor of the negative idf values), as a from-scratch model would never have seen it."""
    docs = {0: ["a", "b"], 1: ["a", "c"], 2: ["a"], 3: ["rare1", "rare2", "rare3", "a"]}
    index = BM25Index()
    for doc_id, tokens in docs.items():
        index.add(doc_id, tokens)
    index.remove(3)
    del docs[3]
    before = index.scores(["a", "rare1"])
    assert_matches(index, docs, ["a", "rare1"])
    # "a" is in every live doc, so its idf is the floor epsilon * average idf. Over the live
    # vocabulary {a, b, c} that average is negative; counting the forgotten rare terms would
    # make it positive.
    assert before[0] < 0
    index.compact()
    np.testing.assert_allclose(index.scores(["a", "rare1"]), before, rtol=1e-12)


def test_compaction_drops_terms_no_live_document_uses() -> None:
    index = BM25Index()
    index.add(0, ["kept", "gone"])
    index.add(1, ["kept"])
    index.remove(0)
    index.add(0, ["kept", "new"])
    state = index.state()
    vocab = bytes(state["vocab_bytes"]).decode()
    assert len(state["vocab_offsets"]) == 3
    assert "gone" not in vocab
    assert "kept" in vocab and "new" in vocab


def test_empty_query_unknown_terms_and_empty_index() -> None:
    index = BM25Index()
    assert index.scores(["x"]).shape == (0,)
    index.add(3, [])
    index.add(5, [])
    assert np.array_equal(index.scores(["x"]), np.zeros(6))  # only empty documents
    index.add(1, ["x", "y"])
    assert np.array_equal(index.scores([]), np.zeros(6))
    assert np.array_equal(index.scores(["unknown", "terms"]), np.zeros(6))
    scores = index.scores(["y"])
    assert scores[1] > 0
    assert np.count_nonzero(scores) == 1


def test_capacity_counts_every_id_ever_added() -> None:
    index = BM25Index()
    index.add(9, ["a"])
    index.add(2, ["a", "b"])
    index.remove(9)
    assert index.capacity == 10
    assert index.live_count == 1
    scores = index.scores(["a"])
    assert scores.shape == (10,)
    assert scores[9] == 0.0
    assert scores[2] != 0.0


def test_duplicate_add_and_unknown_remove_are_errors() -> None:
    index = BM25Index()
    index.add(0, ["a"])
    with pytest.raises(ValueError, match="already indexed"):
        index.add(0, ["b"])
    with pytest.raises(KeyError):
        index.remove(1)
    index.remove(0)
    with pytest.raises(KeyError):
        index.remove(0)
    with pytest.raises(ValueError, match=">= 0"):
        index.add(-1, ["a"])
    with pytest.raises(ValueError, match="b must be"):
        BM25Index(b=1.5)


def test_counted_words_come_in_first_seen_order_and_lines_stay_apart() -> None:
    """The words' order decides the ids a build gives them (the saved vocabulary); a token
    never joins the end of one line to the start of the next, and token-less lines count."""
    lines = ["b a", "", "a1\r", "c  9", "b"]
    counts = count_terms(lines, [(0, 2), (1, 3), (2, 4), (4, 5), (3, 3)])
    assert counts.words == ["b", "a", "a1", "c", "9"]
    per_doc = [
        {counts.words[t]: int(tf) for t, tf in zip(counts.terms[a:b], counts.tfs[a:b], strict=True)}
        for a, b in zip(counts.ptr[:-1], counts.ptr[1:], strict=True)
    ]
    assert per_doc == [{"b": 1, "a": 1}, {"a1": 1}, {"a1": 1, "c": 1, "9": 1}, {"b": 1}, {}]
    empty = count_terms([], [])
    assert empty.words == [] and empty.ptr.tolist() == [0]


@pytest.mark.parametrize("seed", range(3))
def test_compiled_word_ids_are_the_token_pattern_s_words(seed: int) -> None:
    """``count_terms``' compiled tokenizer reads UTF-8 bytes: it finds ``TOKEN_RE``'s tokens
    of the decoded text (non-ASCII letters are no word characters, a digit run ends where a
    letter starts), numbers the words as they first appear, and keeps thousands of distinct
    words apart in its hash table."""
    rng = np.random.default_rng(seed)
    alphabet = list("ab_Z09 \n\t.(é中\r") + ["\udcff"]
    text = "".join(rng.choice(alphabet, 3000)) + " " + " ".join(f"w{i}" for i in range(5000))
    encoded = text.encode("utf-8", "surrogatepass")
    ids, lines, first, end = bm25._word_ids(np.frombuffer(encoded, np.uint8))
    tokens = list(TOKEN_RE.finditer(text))
    words = list(dict.fromkeys(m.group() for m in tokens))
    assert [encoded[s:e].decode() for s, e in zip(first, end, strict=True)] == words
    assert [words[i] for i in ids] == [m.group() for m in tokens]
    assert lines.tolist() == [text.count("\n", 0, m.start()) for m in tokens]


def test_an_array_writer_takes_rows_as_their_bytes(tmp_path: Path) -> None:
    """Rows written as their bytes (a text writer's texts) count and read back as rows
    written as arrays do."""
    rows = np.array([[1, -2], [3, 4]], np.int32)
    writer = ArrayWriter(tmp_path / "a.npy", np.int32, (2,))
    writer.write(rows[:1])
    writer.write_bytes(rows.tobytes())
    assert writer.rows == 3
    writer.close()
    assert np.load(tmp_path / "a.npy").tolist() == [[1, -2], [1, -2], [3, 4]]
    texts = TextWriter(tmp_path, "t")
    for text in ["ab", "", "é中\n"]:
        texts.append(text.encode())
    texts.extend([b"cd", b"", b"e"])  # a file's new fragments, in one write
    texts.extend([])
    assert [texts.read(i) for i in range(len(texts))] == [
        b"ab",
        b"",
        "é中\n".encode(),
        b"cd",
        b"",
        b"e",
    ]
    texts.append(b"f")
    data, offsets = (np.load(path) for path in texts.close())
    assert data.tobytes() == "abé中\ncdef".encode()
    assert offsets.tolist() == [0, 2, 2, 8, 10, 10, 11, 12]


@pytest.mark.parametrize("seed", range(4))
def test_counted_windows_equal_tokenizing_each_window(seed: int) -> None:
    """Overlapping windows counted line by line, added in bulk, score like one add per window."""
    rng = np.random.default_rng(seed)
    lines = [
        " ".join(random_doc(rng, 6)) + " x1 (y_2)" * int(rng.integers(0, 2)) for _ in range(40)
    ]
    spans = [(s, min(s + 20, len(lines))) for s in range(0, len(lines), 10)] + [(5, 5), (0, 40)]
    counts = count_terms(lines, spans)
    for i, (start, end) in enumerate(spans):
        tokens = tokenize("\n".join(lines[start:end]))
        a, b = counts.ptr[i], counts.ptr[i + 1]
        got = {
            counts.words[t]: int(tf)
            for t, tf in zip(counts.terms[a:b], counts.tfs[a:b], strict=True)
        }
        assert got == {t: tokens.count(t) for t in tokens}
    bulk, one_by_one = BM25Index(), BM25Index()
    bulk.add(100, ["w1", "zzz"])  # a vocabulary and rows that are already there
    one_by_one.add(100, ["w1", "zzz"])
    picked = [3, 0, 5, 1]
    bulk.add_counted([7, 2, 9, 4], counts, np.array(picked))
    for doc_id, i in zip([7, 2, 9, 4], picked, strict=True):
        one_by_one.add(doc_id, tokenize("\n".join(lines[slice(*spans[i])])))
    docs = {
        d: tokenize("\n".join(lines[slice(*spans[i])]))
        for d, i in zip([7, 2, 9, 4], picked, strict=True)
    }
    docs[100] = ["w1", "zzz"]
    for _ in range(5):
        query = random_query(rng)
        np.testing.assert_allclose(bulk.scores(query), one_by_one.scores(query), rtol=1e-12)
        assert_matches(bulk, docs, query)
    with pytest.raises(ValueError, match="already indexed"):
        bulk.add_counted([11, 11], counts, np.array([0, 1]))
    with pytest.raises(ValueError, match="already indexed"):
        bulk.add_counted([7], counts, np.array([0]))
    assert bulk.live_count == 5  # a refused batch adds nothing


def test_state_round_trip_through_npz(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    index = BM25Index(k1=1.2, b=0.7, epsilon=0.3)
    docs = {i: random_doc(rng) for i in range(0, 60, 3)}
    docs[100] = ["ünïcode", "名前", "w0"]
    for doc_id, tokens in docs.items():
        index.add(doc_id, tokens)
    for doc_id in (0, 9, 100):
        index.remove(doc_id)
    index.add(0, ["名前", "w1", "w1"])  # stays in the delta until state() compacts
    query = ["名前", "w1", "w0", "w0", "w5"]
    before = index.scores(query)

    path = tmp_path / "bm25.npz"
    state = index.state()
    assert all(a.dtype != object for a in state.values())
    np.savez(path, **state)
    with np.load(path, allow_pickle=False) as saved:
        restored = BM25Index.from_state(saved)
    assert (restored.k1, restored.b, restored.epsilon) == (1.2, 0.7, 0.3)
    assert restored.capacity == index.capacity == 101
    assert restored.live_count == index.live_count
    np.testing.assert_allclose(restored.scores(query), before, rtol=1e-12)
    # The restored index keeps working incrementally.
    restored.remove(0)
    restored.add(9, ["名前"])
    index.remove(0)
    index.add(9, ["名前"])
    np.testing.assert_allclose(restored.scores(query), index.scores(query), rtol=1e-12)


def test_trusted_state_opens_in_place_and_keeps_working() -> None:
    """A trusted state (the store's own) is used as it is: its arrays are not copied, its
    vocabulary is found by hash, and it goes on adding, removing and compacting exactly."""
    rng = np.random.default_rng(5)
    index = BM25Index()
    for doc_id in range(0, 80, 2):
        index.add(doc_id, random_doc(rng))
    index.add(81, ["ünïcode", "名前", "w3"])
    state = index.state()
    opened = BM25Index.from_state(state, trusted=True)
    assert opened._post_row is state["post_row"]
    queries = [["w1", "w2", "w2"], ["名前", "ünïcode"], ["absent", "w3"]]
    for q in queries:
        np.testing.assert_allclose(opened.scores(q), index.scores(q), rtol=1e-12)
    for target in (opened, index):
        target.remove(0)
        target.remove(81)
        target.add(0, ["brand_new", "w1", "名前"])
        target.add(200, ["brand_new", "w7"])
    for q in [*queries, ["brand_new"]]:
        np.testing.assert_allclose(opened.scores(q), index.scores(q), rtol=1e-12)
    opened.compact()
    index.compact()
    for q in [*queries, ["brand_new"]]:
        np.testing.assert_allclose(opened.scores(q), index.scores(q), rtol=1e-12)
    with pytest.raises(BM25StateError, match="size"):
        BM25Index.from_state(dict(state, post_tf=state["post_tf"][:-1]), trusted=True)
    with pytest.raises(BM25StateError, match="size"):  # the bounds pruning relies on
        BM25Index.from_state(dict(state, block_max=state["block_max"][:-1]), trusted=True)
    with pytest.raises(BM25StateError, match="size"):
        BM25Index.from_state(dict(state, block_terms=state["block_terms"] + 10**6), trusted=True)
    with pytest.raises(BM25StateError, match="type"):
        BM25Index.from_state(
            dict(state, block_max=state["block_max"].astype(np.float64)), trusted=True
        )


def test_state_is_the_index_own_arrays_and_an_opened_state_changes_apart() -> None:
    """``state`` copies nothing (a save of a large repository would hold a second index);
    an index opened from it shares its postings but not its frequencies, which both change
    in place."""
    rng = np.random.default_rng(7)
    index = BM25Index()
    for doc_id in range(40):
        index.add(doc_id, random_doc(rng))
    state = index.state()
    assert np.shares_memory(state["row_terms"], index._row_terms.view)
    assert np.shares_memory(state["df"], index._df.view)
    opened = BM25Index.from_state(state, trusted=True)
    query = ["w1", "w2", "w3"]
    before = index.scores(query)
    opened.remove(3)
    opened.remove(5)
    np.testing.assert_array_equal(index.scores(query), before)
    index.remove(3)
    index.remove(5)
    np.testing.assert_allclose(opened.scores(query), index.scores(query), rtol=1e-12)


@pytest.mark.parametrize("chunk", [1 << 24, 7, 1])
def test_spooled_rows_make_the_index_adding_them_makes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """A build writes its rows to files as they come (the whole Linux kernel's are ~110M
    entries) and makes the index from there: the same state as adding them, its rows read
    from those files, its postings written beside them a range of terms at a time (``chunk``
    postings); it keeps taking documents."""
    monkeypatch.setattr(bm25, "_POSTINGS_CHUNK", chunk)
    rng = np.random.default_rng(11)
    docs = [random_doc(rng) for _ in range(60)]
    lines = [" ".join(d) for d in docs]
    spans = [(i, i + 1) for i in range(len(docs))]
    added, rows = BM25Index(), SpooledRows(tmp_path, "x_")
    for lo in range(0, len(docs), 7):  # a file's windows at a time, some left out
        counts = count_terms(lines[lo : lo + 7], [(s - lo, e - lo) for s, e in spans[lo : lo + 7]])
        for doc in range(len(counts.ptr) - 1):
            added.add(lo + doc, tokenize(lines[lo + doc]))
        rows.add(counts, np.arange(len(counts.ptr) - 1))
    spooled_index = rows.index()
    a, b = spooled_index.state(), added.state()
    for key in ("row_ptr", "doc_ids", "row_len", "df", "term_ptr", "post_row", "post_tf"):
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    for key in ("row_terms", "row_tf", "post_row", "post_tf"):
        assert is_file(a[key], tmp_path / f"x_{key}.npy"), key
    spooled_index.add(60, ["w1", "w2"])
    expected = dict(enumerate(docs)) | {60: ["w1", "w2"]}
    query = ["w1", "w2", "w5"]
    np.testing.assert_allclose(spooled_index.scores(query), expected_scores(expected, query, 61))


def test_spooled_rows_number_words_as_a_dict_would_and_keep_them_as_arrays(
    tmp_path: Path,
) -> None:
    """A build numbers its words in a compiled table, not a dict (the whole Linux kernel's
    ~3M words as objects, held to the end of the build), growing it batch by batch (its
    bytes, ends and table here too): the same term ids and saved vocabulary as numbering
    them one by one, and the vocabulary comes out as a saved index's arrays."""
    rng = np.random.default_rng(5)
    pool = [f"w{i}" + "_" * (i % 40) for i in range(5000)] + ["ñame", "x" * 300]
    added, rows = BM25Index(), SpooledRows(tmp_path, "v_")
    doc = 0
    for _ in range(40):  # files of a few windows, words new and seen before
        size = int(rng.integers(1, 400))
        picked = rng.choice(len(pool), size=size, replace=False)
        words = [pool[i] for i in picked]
        windows = int(rng.integers(1, 4))
        ptr = np.sort(rng.integers(0, size + 1, windows - 1))
        ptr = np.r_[0, ptr, size].astype(np.int64)
        counts = bm25.TermCounts.of(
            words, ptr, np.arange(size, dtype=np.int32), np.ones(size, np.int32)
        )
        kept = np.arange(windows)[:: int(rng.integers(1, 3))]  # some windows left out
        added.add_counted(range(doc, doc + kept.size), counts, kept)
        rows.add(counts, kept)
        doc += kept.size
    spooled_index = rows.index()
    assert isinstance(spooled_index._vocab, Vocabulary)
    a, b = spooled_index.state(), added.state()
    for key in ("vocab_bytes", "vocab_offsets", "vocab_hash", "vocab_hash_ids", "row_terms"):
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)


@pytest.mark.parametrize(("rows", "postings"), [(1 << 16, 1 << 22), (3, 5), (1, 1)])
def test_a_compaction_into_a_spool_folder_equals_one_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: int, postings: int
) -> None:
    """An opened index's compaction written to its spool folder a part at a time (``rows``
    rows, ``postings`` postings) lays out what one in memory lays out, the vocabulary kept
    as arrays less the terms no live document uses (a word added since included), counting
    the rows' statistics as it gathers them (it does not read the new rows again for them,
    while it reads the postings); its main segment is then files with no name there, mapped,
    and it goes on taking documents."""
    monkeypatch.setattr(bm25, "_SPOOL_ROWS", rows)
    monkeypatch.setattr(bm25, "_SPOOL_POSTINGS", postings)
    rng = np.random.default_rng(12)
    built = BM25Index()
    for doc_id in range(50):
        built.add(doc_id, random_doc(rng))
    built.add(50, ["only_here", "w1"])
    state = built.state()
    memory = BM25Index.from_state(state, trusted=True)
    spool_dir = tmp_path / "spool"
    spool_dir.mkdir()
    spooled_index = BM25Index.from_state(state, trusted=True)
    spooled_index.spool = spool_dir
    counted: list[int] = []  # the compactions that read every row for their statistics
    row_stats = bm25._row_stats
    monkeypatch.setattr(bm25, "_row_stats", lambda *a: counted.append(1) or row_stats(*a))
    for target in (memory, spooled_index):
        target.remove(50)  # "only_here" is no live document's now
        target.remove(7)
        target.add(7, ["added_since", "w2", "w2"])
        target.add(60, ["w3"])
        target.compact()
    assert counted == [1]  # the compaction in memory's alone
    a, b = spooled_index.state(), memory.state()
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    assert spooled_index._vocab.get("only_here") is None
    assert spooled_index._vocab.get("added_since") is not None
    assert not spooled_index._post_row.flags.writeable
    # rows, their bounds and lengths, postings and their bounds, block maxima, the counts per
    # term and row, the rows' documents, liveness and places: none on the heap
    assert len(spooled_index.spooled_maps) == 14
    bounds = (
        spooled_index._term_ptr,
        spooled_index._row_ptr.view,
        spooled_index._row_len.view,
        spooled_index._df.view,
        spooled_index._df_hist.view,
        spooled_index._row_doc.view,
        spooled_index._row_live.view,
        spooled_index._row_of.view,
    )
    assert {id(trim.map_under(x)) for x in bounds} <= {id(m) for m in spooled_index.spooled_maps}
    assert not list(spool_dir.iterdir())  # the files have no names
    trim.release_mapped(spooled_index.spooled_maps)  # as a tidy hands their pages back
    for target in (memory, spooled_index):
        target.remove(3)
        target.add(3, ["w1", "later"])
    for query in (["w1", "w2", "later"], ["added_since", "w3"]):
        np.testing.assert_array_equal(spooled_index.scores(query), memory.scores(query))


@pytest.mark.skipif(not Path("/proc/self/pagemap").exists(), reason="Linux's pagemap")
def test_a_compaction_into_a_spool_folder_hands_back_what_it_read(tmp_path: Path) -> None:
    """A compaction into the spool folder reads the old rows, then the new rows, then the
    postings, each whole: none of them stays resident once laid out (a language server's
    tidy held all three at once), and the index scores as one compacted in memory."""
    rng = np.random.default_rng(5)
    built = BM25Index()
    for doc_id in range(4000):
        built.add(doc_id, random_doc(rng, 60))
    (tmp_path / "saved").mkdir()
    (tmp_path / "spool").mkdir()
    opened = BM25Index.from_state(spooled(tmp_path / "saved", built.state()), trusted=True)
    opened.spool = tmp_path / "spool"
    old_rows = trim.mappings_of([opened._row_terms.view, opened._row_tf.view])
    for target in (built, opened):
        target.remove(3)
        target.add(3, ["w1", "later"])
    trim.release_mapped(old_rows)  # as a tidy hands them back
    for target in (built, opened):
        target.compact()
    assert len(old_rows) == 2 and len(opened.spooled_maps) == 14
    assert resident_pages([*old_rows, *opened.spooled_maps]) == 0
    for query in (["w1", "w2", "later"], ["w3", "w4"]):
        np.testing.assert_array_equal(opened.scores(query), built.scores(query))


def test_a_state_mapped_read_only_keeps_working(tmp_path: Path) -> None:
    """A build reads its BM25 from the files it saved, mapped read-only: adding documents,
    empty ones too, and removing them writes into none of those arrays."""
    rng = np.random.default_rng(8)
    index = BM25Index()
    for doc_id in range(30):
        index.add(doc_id, random_doc(rng))
    opened = BM25Index.from_state(spooled(tmp_path, index.state()), trusted=True)
    assert not opened._row_terms.view.flags.writeable
    for target in (opened, index):
        target.add(30, [])
        target.remove(4)
        target.add(4, ["w1", "new"])
        target.add(31, ["w2"])
    query = ["w1", "w2", "new"]
    np.testing.assert_allclose(opened.scores(query), index.scores(query), rtol=1e-12)


def ranked(index: BM25Index, query: list[str], k: int, visible: np.ndarray) -> tuple:
    """The full scoring's top k: every score, the best positive visible ones, ties by id."""
    scores = index.scores(query)[: visible.size]
    ids = np.flatnonzero(visible[: scores.size] & (scores > 0))
    ids = ids[np.lexsort((ids, -scores[ids]))[:k]]
    return ids, scores[ids]


def assert_top_k_exact(
    index: BM25Index, query: list[str], k: int, visible: np.ndarray, hidden: list[int] = ()
) -> None:
    got_ids, got_scores = index.top_k(query, k, visible, hidden)
    shown = visible.copy()
    shown[[h for h in hidden if h < shown.size]] = False
    want_ids, want_scores = ranked(index, query, k, shown)
    np.testing.assert_array_equal(got_ids, want_ids)
    np.testing.assert_array_equal(got_scores, want_scores)  # the same floats, not close ones


def _padded(scores: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros(n)
    out[: scores.size] = scores
    return out


def long_doc(rng: np.random.Generator) -> list[str]:
    """Up to a few hundred tokens over a wide vocabulary: many distinct scores, long rows."""
    words = [f"v{i}" for i in range(300)]
    probs = 1.0 / np.arange(1, 301) ** 0.9
    return [str(t) for t in rng.choice(words, int(rng.integers(1, 300)), p=probs / probs.sum())]


@pytest.mark.parametrize(
    ("seek", "left_out", "mid_from"),
    [(maxscore.SEEK_COST, maxscore.LEFT_OUT, maxscore.MID_FROM), (0, 0.9, 4), (10**9, 0.0, 16)],
)
@pytest.mark.parametrize("seeds", [0, 1, maxscore.SEED_BLOCKS])
@pytest.mark.parametrize("budget", [0, 40, maxscore.FIRST_BUDGET])
@pytest.mark.parametrize("seed", range(8))
def test_top_k_is_the_full_scorings_top_k_through_edits(
    seed: int,
    budget: int,
    seeds: int,
    seek: int,
    left_out: float,
    mid_from: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Pruned top k equals ranking every score (ids, order, floats), with ties (few terms),
    hidden ids, a delta, removals and a mean length that moves far from the one the block
    maxima were taken at (documents many times longer or shorter added and removed); with
    first k-th scores found from few postings or from many, from no best blocks and
    sub-blocks or many;
    postings found by leaps or walked; no term left out of a block, or most of them (and
    many documents scored in full); the rarer terms' sub-block maxima saved sparse (from a few
    postings on) or walked."""
    monkeypatch.setattr(maxscore, "FIRST_BUDGET", budget)
    monkeypatch.setattr(maxscore, "SEED_BLOCKS", seeds)
    monkeypatch.setattr(maxscore, "SEED_UNITS", seeds)
    monkeypatch.setattr(maxscore, "SEEK_COST", seek)
    monkeypatch.setattr(maxscore, "LEFT_OUT", left_out)
    monkeypatch.setattr(maxscore, "MID_FROM", mid_from)
    monkeypatch.setattr(maxscore, "PRUNED_FROM", 0)
    rng = np.random.default_rng(seed)
    make = random_doc if seed % 2 else long_doc
    index, docs = BM25Index(), {}
    for doc_id in range(400):
        docs[doc_id] = make(rng)
        index.add(doc_id, docs[doc_id])
    index.compact()
    for step in range(12):
        capacity = index.capacity + 5
        visible = rng.random(capacity) < rng.uniform(0.3, 1.0)
        # hidden besides: main and delta ids, and ids past the mask and the capacity
        hidden = rng.integers(0, capacity + 3, 8).tolist()
        for _ in range(6):
            query = make(rng)[: int(rng.integers(1, 80))] or ["v0"]
            for k in (1, 3, 10, 50):
                assert_top_k_exact(index, query, k, visible, hidden)
        if step == 6:
            index.compact()
        for doc_id in rng.choice(sorted(docs), 40, replace=False).tolist():
            index.remove(doc_id)
            del docs[doc_id]
        some = rng.integers(0, capacity + 3, 30)  # dead and never-added ids among them
        np.testing.assert_array_equal(
            index.scores_of(query, some), _padded(index.scores(query), capacity + 3)[some]
        )
        grow = step < 4 or step > 8  # then the mean length falls, then rises again
        for _ in range(40):
            doc_id = int(rng.integers(0, 600))
            if doc_id not in docs:
                docs[doc_id] = make(rng) * (int(rng.integers(2, 6)) if grow else 1)
                if not grow:
                    docs[doc_id] = docs[doc_id][:2]
                index.add(doc_id, docs[doc_id])
    assert_top_k_exact(index, ["v1", "v2", "v3"], 10, np.ones(index.capacity, bool))


def file_like_corpus(rng: np.random.Generator, n_files: int) -> list[list[str]]:
    """Documents as a repository lays them out: runs of neighbouring windows of one file that
    share its own names, over words common everywhere; many blocks, few of them close to a
    query from one file, so that blocks and sub-blocks are cut."""
    docs = []
    for f in range(n_files):
        own = [f"f{f}_{i}" for i in range(int(rng.integers(3, 30)))]
        for _ in range(int(rng.integers(1, 40))):
            doc = long_doc(rng)[: int(rng.integers(5, 120))]
            doc += [str(w) for w in rng.choice(own, int(rng.integers(0, 25)))]
            docs.append(doc)
    return docs


@pytest.mark.parametrize(
    ("mid_from", "seed_units"), [(maxscore.MID_FROM, maxscore.SEED_UNITS), (8, 0), (8, 1)]
)
@pytest.mark.parametrize("left_out", [maxscore.LEFT_OUT, 0.0, 0.9])
@pytest.mark.parametrize("seed", range(4))
def test_top_k_is_exact_where_blocks_and_sub_blocks_are_cut(
    seed: int, left_out: float, mid_from: int, seed_units: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over thousands of file-like documents (hundreds of blocks), queries taken from one
    document's neighbourhood: the pruned top k equals ranking every score, with hidden ids,
    after edits moved the mean length, with no term left out of a unit or most of them, with
    the rarer terms' sub-block maxima walked or saved sparse, with the best sub-blocks
    scored in full first or not."""
    monkeypatch.setattr(maxscore, "PRUNED_FROM", 0)
    monkeypatch.setattr(maxscore, "LEFT_OUT", left_out)
    monkeypatch.setattr(maxscore, "MID_FROM", mid_from)
    monkeypatch.setattr(maxscore, "SEED_UNITS", seed_units)
    rng = np.random.default_rng(100 + seed)
    docs = file_like_corpus(rng, 250)
    index = BM25Index()
    for doc_id, doc in enumerate(docs):
        index.add(doc_id, doc)
    index.compact()
    for step in range(3):
        visible = rng.random(index.capacity) < 0.95
        for _ in range(15):
            at = int(rng.integers(0, len(docs) - 3))
            query = [w for d in docs[at : at + 2] for w in d][: int(rng.integers(5, 150))]
            for k in (1, 10, 40):
                assert_top_k_exact(index, query, k, visible)
                # the query's own documents hidden, as a cursor's are: those would rank first
                assert_top_k_exact(index, query, k, visible, [at, at + 1])
        for doc_id in rng.choice(len(docs), 30, replace=False).tolist():
            if step == 0:  # longer documents: the mean length rises past the maxima's
                index.remove(doc_id)
                index.add(doc_id, docs[doc_id] * 3)
        if step == 1:
            index.compact()


def places(among: np.ndarray, terms: np.ndarray) -> np.ndarray:
    """Each of ``terms``' place in the sorted ``among`` (-1: not there)."""
    if not among.size:
        return np.full(terms.size, -1, np.int64)
    at = np.minimum(np.searchsorted(among, terms), among.size - 1)
    return np.where(among[at] == terms, at, -1).astype(np.int64)


def assert_bounds_reach_scores(
    index: BM25Index, queries: list[list[str]]
) -> tuple[bool, bool, bool]:
    """Per query, the bounds ``maxscore.pruned_top_k`` prunes by, per block and per sub-block
    of the main rows, each reach every score there (times the slack); returns whether terms
    with block maxima, terms with sparse sub-block maxima and terms with neither (their
    postings walked) were among the queries'."""
    block_terms, top, sub_top, mid_terms, *mid_arrays = index._block_maxima()
    ratio = max(1.0, index._total_len / index._n_live / index._block_avgdl)
    main = index._main_rows
    n_blocks = (main + maxscore.BLOCK - 1) >> maxscore.BLOCK_SHIFT
    seen_dense = seen_sparse = seen_mid = False
    for query in queries:
        terms, weights = index._query(query)
        lo, hi = index._term_ptr[terms], index._term_ptr[terms + 1]
        dense, mid = places(block_terms, terms), places(mid_terms, terms)
        seen_dense |= bool((dense >= 0).any())
        seen_mid |= bool((mid >= 0).any())
        seen_sparse |= bool(((dense < 0) & (mid < 0)).any())
        order = np.arange(terms.size)
        level_weights = weights * (ratio * (1 + maxscore.SLACK) / maxscore.LEVELS)
        sparse = maxscore._sparse_best(
            index._post_row, index._post_tf, index._norm, order, lo, hi, weights, dense,
            mid, *mid_arrays, level_weights,
        )  # fmt: skip
        bound = maxscore._bounds(order, level_weights, dense, top, n_blocks, *sparse)
        live = np.arange(n_blocks)
        sub_bound = maxscore._sub_bounds(
            order, level_weights, dense, sub_top, n_blocks, live, live, *sparse
        )
        scores = index.scores(query)[:main]
        ids = np.arange(main)
        assert np.all(scores <= bound[ids >> maxscore.BLOCK_SHIFT] * (1 + maxscore.SLACK))
        assert np.all(scores <= sub_bound[ids >> maxscore.SUB_SHIFT] * (1 + maxscore.SLACK))
        assert np.all(sub_bound.reshape(-1, maxscore.SUBS).max(1) <= bound * (1 + 1e-12))
    return seen_dense, seen_mid, seen_sparse


@pytest.mark.parametrize(("mid_from", "mid_seen"), [(maxscore.MID_FROM, False), (12, True)])
def test_block_and_sub_block_bounds_reach_every_score(
    mid_from: int, mid_seen: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bounds a query prunes by reach the score of every document they bound, at the
    mean length the maxima were taken at and after it rose (no compaction since): a bound
    made tighter than the scores (a maximum rounded down, a term left out of a sum, the mean
    length's rise ignored) fails here; with sparse sub-block maxima saved for the rarer terms
    of a dozen postings or more, and for none (this corpus has no term of 256)."""
    monkeypatch.setattr(maxscore, "PRUNED_FROM", 0)
    monkeypatch.setattr(maxscore, "MID_FROM", mid_from)
    rng = np.random.default_rng(7)
    docs = file_like_corpus(rng, 150)
    index = BM25Index()
    for doc_id, doc in enumerate(docs):
        index.add(doc_id, doc)
    index.compact()

    def queries() -> list[list[str]]:
        """Long ones, and single terms and pairs: a bound of one term is as tight as its
        rounded maximum, and a sum of a few as tight as their maxima allow."""
        starts = rng.integers(0, len(docs) - 3, 12).tolist()
        long = [[w for d in docs[at : at + 2] for w in d][:100] for at in starts]
        words = sorted({w for q in long for w in q})
        return long + [[str(w) for w in rng.choice(words, n)] for n in (1, 1, 1, 2, 2) * 8]

    seen = assert_bounds_reach_scores(index, queries())
    assert seen == (True, mid_seen, True)
    for doc_id in range(0, len(docs), 3):  # much longer documents, in the delta
        index.remove(doc_id)
        index.add(doc_id + len(docs), docs[doc_id] * 4)
    assert index._row_doc.size > index._main_rows
    assert index._total_len / index._n_live > 1.2 * index._block_avgdl
    assert assert_bounds_reach_scores(index, queries()) == seen


def test_a_state_saved_without_block_maxima_takes_them_when_first_pruned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An index saved before block maxima existed opens, and its first pruned query takes
    them at the mean length then (after edits that moved it): the top k stays exact, and a
    save afterwards holds them."""
    monkeypatch.setattr(maxscore, "PRUNED_FROM", 0)
    rng = np.random.default_rng(3)
    index = BM25Index()
    for doc_id in range(300):
        index.add(doc_id, long_doc(rng))
    state = {k: v for k, v in index.state().items() if not k.startswith("block_")}
    opened = BM25Index.from_state(state, trusted=True)
    for doc_id in range(300, 340):  # much longer documents: the mean length rises
        opened.add(doc_id, long_doc(rng) * 4)
    visible = np.ones(opened.capacity, bool)
    for _ in range(10):
        assert_top_k_exact(opened, long_doc(rng)[:60], 10, visible)
    for doc_id in range(340, 400):  # and rises again after the maxima were taken
        opened.add(doc_id, long_doc(rng) * 8)
    for _ in range(10):
        assert_top_k_exact(opened, long_doc(rng)[:60], 10, np.ones(opened.capacity, bool))
    assert {"block_terms", "block_max", "block_avgdl"} <= set(opened.state())


def test_sparse_sub_block_maxima_are_saved_and_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rarer terms' sparse sub-block maxima go into the state and come back as saved (a
    trusted state opens without taking them again, and prunes exactly by them); offsets that
    do not match their entries are a clear error, not a read outside the arrays."""
    monkeypatch.setattr(maxscore, "PRUNED_FROM", 0)
    monkeypatch.setattr(maxscore, "MID_FROM", 8)
    rng = np.random.default_rng(11)
    index = BM25Index()
    for doc_id, doc in enumerate(file_like_corpus(rng, 60)):
        index.add(doc_id, doc)
    state = index.state()
    mid_terms, mid_ptr = state["block_mid_terms"], state["block_mid_ptr"]
    assert mid_terms.size and mid_ptr[-1] == state["block_mid_sub"].size
    # each entry a sub-block the term's postings reach, ascending per term
    for i, t in enumerate(mid_terms.tolist()):
        subs = state["block_mid_sub"][mid_ptr[i] : mid_ptr[i + 1]]
        rows = index._post_row[index._term_ptr[t] : index._term_ptr[t + 1]]
        np.testing.assert_array_equal(subs, np.unique(rows >> maxscore.SUB_SHIFT))
    taken, take = [], bm25.block_maxima
    monkeypatch.setattr(bm25, "block_maxima", lambda *a: taken.append(a[4]) or take(*a))
    opened = BM25Index.from_state(state, trusted=True)
    assert taken == [0]  # those of the empty index it starts as, none of the rows
    for saved, got in zip(index._block_maxima(), opened._block_maxima(), strict=True):
        np.testing.assert_array_equal(saved, got)
    words = [w for w in opened._vocab if w.startswith("f")][:40]
    assert_top_k_exact(opened, words, 10, np.ones(opened.capacity, bool))
    shifted = dict(state, block_mid_ptr=mid_ptr + 1)
    with pytest.raises(BM25StateError, match="block maxima"):
        BM25Index.from_state(shifted, trusted=True)
    cut = dict(state, block_mid_level=state["block_mid_level"][:-1])
    with pytest.raises(BM25StateError, match="block maxima"):
        BM25Index.from_state(cut, trusted=True)


@pytest.mark.parametrize("pruned_from", [0, maxscore.PRUNED_FROM])
def test_top_k_of_nothing_and_of_a_tiny_corpus(
    pruned_from: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(maxscore, "PRUNED_FROM", pruned_from)
    index = BM25Index()
    assert [a.size for a in index.top_k(["a"], 5)] == [0, 0]
    index.add(0, ["a", "b"])
    index.add(1, ["a"])
    index.add(2, ["a", "c"])
    # "a" is in every document: its idf is floored at a negative average, scores go negative
    for query in (["a"], ["b", "a"], ["c", "b"], ["zzz"]):
        for k in (0, 1, 2, 5):
            assert_top_k_exact(index, query, k, np.ones(3, bool))
    assert_top_k_exact(index, ["b", "c"], 5, np.array([True, False]))  # id 2 past the mask
    assert_top_k_exact(index, ["b", "c"], 5, np.ones(3, bool), [2, 7])
    with pytest.raises(ValueError, match="k must be"):
        index.top_k(["a"], -1)
    with pytest.raises(ValueError, match="hidden ids"):
        index.top_k(["a"], 1, hidden=[-1])


def test_damaged_state_is_a_clear_error() -> None:
    index = BM25Index()
    index.add(0, ["a", "b"])
    index.add(1, ["b"])
    state = index.state()
    missing = {k: v for k, v in state.items() if k != "row_tf"}
    with pytest.raises(BM25StateError, match="row_tf"):
        BM25Index.from_state(missing)
    bad_terms = dict(state, row_terms=state["row_terms"] + 5)
    with pytest.raises(BM25StateError, match="row_terms"):
        BM25Index.from_state(bad_terms)
    with pytest.raises(BM25StateError, match="doc_ids"):
        BM25Index.from_state(dict(state, doc_ids=np.array([0, 7])))
    with pytest.raises(BM25StateError, match="doc_ids"):
        BM25Index.from_state(dict(state, doc_ids=np.array([1])))  # row 0 holds terms
    wrapped = dict(state, row_tf=state["row_tf"].astype(np.int64) + 2**32)
    with pytest.raises(BM25StateError, match="row_tf"):
        BM25Index.from_state(wrapped)
    assert issubclass(BM25StateError, RepomemError)


TERMS = st.sampled_from(["a", "b", "c", "d", "e"])


class IndexVersusRankBm25(RuleBasedStateMachine):
    """Any interleaving of adds, removes and compactions leaves from-scratch scores."""

    live = Bundle("live")

    def __init__(self) -> None:
        super().__init__()
        self.index = BM25Index()
        self.docs: dict[int, list[str]] = {}

    @rule(target=live, doc_id=st.integers(0, 30), tokens=st.lists(TERMS, max_size=8))
    def add(self, doc_id: int, tokens: list[str]) -> int:
        if doc_id in self.docs:
            with pytest.raises(ValueError):
                self.index.add(doc_id, tokens)
            return doc_id
        self.index.add(doc_id, tokens)
        self.docs[doc_id] = tokens
        return doc_id

    @rule(doc_id=consumes(live))
    def remove(self, doc_id: int) -> None:
        if doc_id in self.docs:
            self.index.remove(doc_id)
            del self.docs[doc_id]
        else:
            with pytest.raises(KeyError):
                self.index.remove(doc_id)

    @rule()
    def compact(self) -> None:
        self.index.compact()

    @invariant()
    def scores_match(self) -> None:
        assert self.index.live_count == len(self.docs)
        assert_matches(self.index, self.docs, ["a", "a", "c", "e", "zzz"])


TestIndexVersusRankBm25 = IndexVersusRankBm25.TestCase
TestIndexVersusRankBm25.settings = settings(max_examples=40, stateful_step_count=25, deadline=None)

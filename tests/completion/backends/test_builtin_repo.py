"""The built-in backend's default strategy: candidates from the whole repository (found through
the BM25 postings, current after every incremental update), a confidence on every completion,
and abstention below ``completion.min_confidence`` in ``repomem complete``."""

from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np
from repos import make_repo, run_repomem

from repomem.completion.backends.base import GenerationRequest
from repomem.completion.backends.builtin import CALIBRATION, BuiltinBackend, calibrate
from repomem.config import IndexConfig
from repomem.index.bm25 import BM25Index
from repomem.index.occurrences import Occurrence, find_occurrences, trailing_terms
from repomem.index.parsing import split_lines
from repomem.index.repo import RepoIndex

HANDLER = """\
def handle(request):
    record = fetch_ledger_entry(request)
    return settle_ledger_entry(record, request.user)
"""
CURSOR = "def other(request):\n    record = fetch_ledger_entry(request)\n"


def test_documents_with_matches_the_documents_after_adds_removes_and_compaction() -> None:
    rng = random.Random(7)
    words = [f"w{i}" for i in range(12)]
    bm25, docs = BM25Index(), {}
    for step in range(300):
        doc = rng.randrange(60)
        if doc in docs:
            bm25.remove(doc)
            del docs[doc]
        else:
            docs[doc] = rng.sample(words, 4)
            bm25.add(doc, docs[doc])
        if step % 97 == 0:
            bm25.compact()
        for word in words[:3]:
            want = sorted(d for d, terms in docs.items() if word in terms)
            assert bm25.documents_with(word).tolist() == want
            # narrowing a few candidates (binary search) or many (marks) by the same term
            for among in (sorted(rng.sample(sorted(docs), min(2, len(docs)))), sorted(docs)):
                narrowed = bm25.documents_with(word, among=np.array(among, np.int64))
                assert narrowed.tolist() == [d for d in among if d in want]
    assert bm25.documents_with("never_seen").size == 0


def test_occurrences_read_a_files_lines_as_the_index_splits_them(tmp_path: Path) -> None:
    """An occurrence deep in a file with CRLF line ends shows the lines ``split_lines``
    gives, from its fragment's first line on."""
    text = "".join(f"v{i} = {i}\r\n" for i in range(45)) + HANDLER.replace("\n", "\r\n")
    root = make_repo(tmp_path / "r", {"app/views.py": CURSOR, "lib/ledger.py": "x = 1\n"})
    index, _ = RepoIndex.build(root, IndexConfig(), save=False)
    index.update_file("lib/ledger.py", text)
    found = find_occurrences(index, "app/views.py", CURSOR)
    assert found and all(o.path == "lib/ledger.py" and o.start > 0 for o in found)
    lines = split_lines(text)
    for o in found:
        assert o.text == "\n".join(lines[o.start : o.start + o.text.count("\n") + 1])
    assert any("settle_ledger_entry(record, request.user)" in o.text for o in found)


def test_trailing_terms_skip_a_name_being_typed() -> None:
    assert trailing_terms("x = load(path)\nvalue = cache.ge") == [
        "cache",
        "value",
        "path",
        "load",
        "x",
    ]
    assert trailing_terms("x = load(path)\n")[:2] == ["path", "load"]


def test_occurrences_follow_incremental_edits_and_leave_out_the_cursors_file(
    tmp_path: Path,
) -> None:
    root = make_repo(tmp_path / "r", {"app/views.py": CURSOR, "lib/ledger.py": "x = 1\n"})
    index, _ = RepoIndex.build(root, IndexConfig(), save=False)
    assert find_occurrences(index, "app/views.py", CURSOR) == []

    index.update_file("lib/ledger.py", HANDLER)
    (found,) = find_occurrences(index, "app/views.py", CURSOR)
    assert (found.path, found.start, found.near) == ("lib/ledger.py", 0, 0)
    assert "settle_ledger_entry(record, request.user)" in found.text
    index.update_file("app/other.py", HANDLER)  # a new file in the cursor's directory
    assert [(o.path, o.near) for o in find_occurrences(index, "app/views.py", CURSOR)] == [
        ("app/other.py", 2),
        ("lib/ledger.py", 0),
    ]
    # the cursor's own file is the left context, not an occurrence
    assert [o.path for o in find_occurrences(index, "app/other.py", CURSOR)] == [
        "app/views.py",
        "lib/ledger.py",
    ]

    index.update_file("lib/ledger.py", "x = 2\n")
    index.update_file("app/other.py", None)
    assert find_occurrences(index, "app/views.py", CURSOR) == []


def test_the_repo_strategy_copies_from_occurrences_that_retrieval_did_not_rank() -> None:
    request = GenerationRequest(
        prompt="",
        left_context=CURSOR + "    ",
        stop=("\n",),
        occurrences=(Occurrence("lib/ledger.py", 0, HANDLER, 0),),
    )
    repo = BuiltinBackend().continuation(request)
    assert repo.text == "return settle_ledger_entry(record, request.user)"
    assert repo.confidence is not None and repo.confidence > 0.0
    assert BuiltinBackend("match").continuation(request).text == ""


def test_a_split_vote_is_less_confident_than_a_unanimous_one() -> None:
    other = HANDLER.replace("settle_ledger_entry(record, request.user)", "record.close()")
    one = (Occurrence("lib/a.py", 0, HANDLER, 0),)
    both = (*one, Occurrence("lib/b.py", 0, other, 0))
    backend = BuiltinBackend()
    sure = backend.continuation(GenerationRequest("", left_context=CURSOR, occurrences=one))
    split = backend.continuation(GenerationRequest("", left_context=CURSOR, occurrences=both))
    assert sure.confidence is not None and split.confidence is not None
    assert split.confidence < sure.confidence


def _raw(handler: str, *, before: str = "", places: int = 1) -> float:
    """The raw confidence of copying ``handler``'s last line after ``CURSOR`` in a Python
    file that starts with ``before``, from ``places`` files that all show ``handler``."""
    occurrences = tuple(Occurrence(f"lib/m{i}.py", 0, handler, 0) for i in range(places))
    request = GenerationRequest(
        "", left_context=before + CURSOR, occurrences=occurrences, language="python"
    )
    text, evidence = BuiltinBackend().choice(request)
    assert text.strip() == handler.splitlines()[-1].strip() and evidence is not None
    return evidence.raw("line")


# the names the copied lines below use, written earlier in the file
KNOWN = "from lib.ledger import settle_ledger_entry\n\n\ndef first(user):\n    return user\n\n\n"


def test_a_line_several_places_propose_is_more_confident_than_a_one_off() -> None:
    assert _raw(HANDLER, places=3) > _raw(HANDLER, places=2) > _raw(HANDLER)


def test_a_line_naming_what_the_file_never_wrote_is_less_confident() -> None:
    assert _raw(HANDLER) < _raw(HANDLER, before=KNOWN)


def test_a_line_with_a_literal_or_a_comment_is_less_confident() -> None:
    """Near-duplicate code's variants differ in their literals; a comment after code is no
    code to show."""
    plain = _raw(HANDLER, before=KNOWN)
    literal = HANDLER.replace("request.user", '"user"')
    assert _raw(literal, before=KNOWN) < plain
    assert _raw(HANDLER.replace("request.user", "request.user, 42"), before=KNOWN) < plain
    assert _raw(HANDLER.replace("request.user", "request.user, 1"), before=KNOWN) == plain
    comment = HANDLER.replace("return settle_ledger_entry(record, request.user)", "# user")
    assert _raw(comment, before=KNOWN) < _raw(HANDLER.replace("request.", ""), before=KNOWN)


def test_the_confidence_is_calibrated_per_language_and_mode() -> None:
    one = (Occurrence("lib/a.py", 0, HANDLER, 0),)
    backend = BuiltinBackend()

    def confidence(language: str | None, multiline: bool = False) -> float:
        request = GenerationRequest(
            "", left_context=CURSOR, occurrences=one, language=language, multiline=multiline
        )
        found = backend.continuation(request).confidence
        assert found is not None
        return found

    raw = confidence(None)  # a language without a table keeps the raw value
    assert raw == confidence("markdown")
    assert confidence("python") == calibrate(raw, CALIBRATION[("python", "line")])
    assert (
        confidence("tsx") == confidence("typescript") == calibrate(raw, CALIBRATION[("js", "line")])
    )
    # a statement's evidence is weighed by the statements' weights, then Java's statement table
    statement = confidence(None, multiline=True)
    assert statement != raw
    assert confidence("java", multiline=True) == calibrate(statement, CALIBRATION[("java", "api")])
    assert (
        BuiltinBackend("match")
        .continuation(GenerationRequest("", left_context=CURSOR, fragments=(), language="java"))
        .confidence
        == 0.0
    )


def test_calibration_steps_are_read_from_the_highest_reached() -> None:
    steps = ((0.0, 0.05), (0.3, 0.2), (0.9, 0.6))
    assert [calibrate(raw, steps) for raw in (0.0, 0.29, 0.3, 0.89, 0.9, 1.0)] == [
        0.05, 0.05, 0.2, 0.2, 0.6, 0.6,
    ]  # fmt: skip
    for family_mode, table in CALIBRATION.items():
        lows = [low for low, _ in table]
        estimates = [estimate for _, estimate in table]
        assert lows == sorted(lows) and estimates == sorted(estimates), family_mode
        assert all(0.0 <= e <= 1.0 for e in estimates)


def test_complete_abstains_below_the_confidence_threshold(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"app/views.py": CURSOR + "\n", "lib/ledger.py": HANDLER})
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOMEM_")}
    # one place to copy from, and a line naming what the file never wrote: in Python such a
    # line is right about one time in ten (a cautious estimate)
    shown = env | {"REPOMEM_COMPLETION_MIN_CONFIDENCE": "0.05"}
    sure = run_repomem("complete", "app/views.py:3", cwd=root, env=shown)
    assert sure.returncode == 0, sure.stderr
    assert sure.stdout.strip() == "return settle_ledger_entry(record, request.user)"

    strict = env | {"REPOMEM_COMPLETION_MIN_CONFIDENCE": "1"}
    proc = run_repomem("complete", "app/views.py:3", cwd=root, env=strict)
    assert proc.returncode == 1 and proc.stdout == ""
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("repomem: nothing confident to complete at app/views.py:3")
    assert "below completion.min_confidence 1.0" in line

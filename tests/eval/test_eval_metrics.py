"""RepoEval's EM, ES and hit@k on cases worked out by hand."""

from __future__ import annotations

import pytest

from repomem_eval.metrics import (
    CONTEXT_KEYS,
    TaskScore,
    aggregate,
    edit_similarity,
    exact_match,
    hit_at_k,
    precision_coverage,
    score_task,
)


def test_exact_match_ignores_indentation_and_trailing_text() -> None:
    assert exact_match("    x = foo(a)\n", "x = foo(a)   \ny = 2\nz = 3")
    assert not exact_match("    x = foo(a)\n", "x = foo(b)")
    assert not exact_match("x = foo(a)", "x=foo(a)")  # inner whitespace counts


def test_exact_match_multiline_truncates_to_target_lines_and_skips_blank_lines() -> None:
    target = "a = f(\n    1,\n)\n"
    assert exact_match(target, "a = f(\n\n   1,\n)\nextra()")
    assert not exact_match(target, "a = f(\n    1,")  # too few lines
    assert not exact_match(target, "a = f(\n    2,\n)")


def test_edit_similarity_is_one_minus_normalised_levenshtein() -> None:
    assert edit_similarity("abcd", "abce") == pytest.approx(0.75)
    assert edit_similarity("kitten", "sitting") == pytest.approx(1 - 3 / 7)
    assert edit_similarity("abc", "xyz") == pytest.approx(0.0)


def test_edit_similarity_on_stripped_joined_lines() -> None:
    # "ab\ncd" vs "ab\ncx": one substitution over five characters
    assert edit_similarity("  ab\n    cd\n", "ab\n\ncx") == pytest.approx(0.8)
    # the prediction is cut to the target's single line before comparing
    assert edit_similarity("abc", "abc\nzzz") == pytest.approx(1.0)


def test_empty_texts() -> None:
    assert edit_similarity("", "") == 1.0
    assert edit_similarity("  \n", "anything") == 1.0  # cut to zero lines: both empty
    assert exact_match("\n", "anything")
    assert edit_similarity("x", "") == 0.0
    assert not exact_match("x", "  \n")


def test_hit_at_k_looks_for_the_first_ground_truth_line() -> None:
    gt = "\n    y = g(x)\n    z = 1\n"
    assert hit_at_k(gt, ["a = 0", "b\n        y = g(x)   \nc"])
    assert not hit_at_k(gt, ["y = g(x) + 1", "z = 1"])
    assert not hit_at_k(gt, [])
    assert not hit_at_k("  \n", ["", "x"])


def test_score_task_and_aggregate() -> None:
    scores = [
        score_task("alpha/0", "x = 1", "x = 1", shown_texts=["x = 1"], seconds=1.0),
        score_task("alpha/1", "abcd", "abce", shown_texts=["nothing"], seconds=3.0),
        score_task("beta/0", "abc", "xyz", seconds=2.0),
    ]
    assert scores[0] == TaskScore("alpha/0", True, 1.0, True, 1.0)
    assert scores[2].hit is None and scores[2].repo == "beta"
    summary = aggregate(scores, 0.0)
    overall = summary["overall"]
    assert overall["n"] == 3
    assert overall["em"] == pytest.approx(100 / 3)
    assert overall["es"] == pytest.approx(100 * (1.0 + 0.75 + 0.0) / 3)
    assert overall["hit_at_k"] == pytest.approx(50.0)  # only tasks that retrieved
    assert overall["seconds_per_task"] == pytest.approx(2.0)
    per_repo = summary["per_repo"]
    assert list(per_repo) == ["alpha", "beta"]
    assert per_repo["alpha"]["em"] == pytest.approx(50.0)
    assert per_repo["alpha"]["es"] == pytest.approx(87.5)
    assert per_repo["beta"]["hit_at_k"] is None
    assert per_repo["beta"]["n"] == 1


def test_aggregate_of_nothing() -> None:
    assert aggregate([], 0.0) == {
        "overall": {
            "em": None,
            "es": None,
            "hit_at_k": None,
            "n": 0,
            "seconds_per_task": None,
            **dict.fromkeys(CONTEXT_KEYS),
            "context_n": 0,
            "coverage": None,
            "precision": None,
            "cards_shown": None,
            "cards_wrong": None,
            "cards_decided": None,
            "wrong_cards": None,
        },
        "per_repo": {},
        "curve": [],
    }


def test_the_wrong_card_rate_counts_only_decided_cards() -> None:
    scores = [
        score_task("a/0", "x", "x", cards={"shown": 4, "right": 2, "wrong": 1}),
        score_task("a/1", "x", "x", cards={"shown": 3, "right": 1, "wrong": 0}),
        score_task("a/2", "x", "x"),  # a method without cards
    ]
    overall = aggregate(scores, 0.0)["overall"]
    assert (overall["cards_shown"], overall["cards_decided"], overall["cards_wrong"]) == (7, 4, 1)
    assert overall["wrong_cards"] == pytest.approx(25.0)
    undecided = [score_task("a/0", "x", "x", cards={"shown": 2, "right": 0, "wrong": 0})]
    assert aggregate(undecided, 0.0)["overall"]["wrong_cards"] is None


def test_context_measures_average_over_the_tasks_that_have_them() -> None:
    shown = dict.fromkeys(CONTEXT_KEYS, True)
    missed = {**dict.fromkeys(CONTEXT_KEYS, False), "use_prompt": True}
    scores = [
        score_task("alpha/0", "x", "x", shown_texts=[], context=shown),
        score_task("alpha/1", "x", "x", shown_texts=[], context=missed),
        score_task("alpha/2", "x", "x", shown_texts=[]),  # calls no repository definition
    ]
    overall = aggregate(scores, 0.0)["overall"]
    assert overall["n"] == 3 and overall["context_n"] == 2
    assert overall["def_prompt"] == pytest.approx(50.0)
    assert overall["use_prompt"] == pytest.approx(100.0)
    assert overall["def_at_10"] == pytest.approx(50.0)
    assert overall["hit_at_k"] == 0.0


def test_coverage_and_precision_follow_the_confidence_threshold() -> None:
    scores = [
        score_task("alpha/0", "x", "x", confidence=0.9),
        score_task("alpha/1", "x", "y", confidence=0.6),
        score_task("alpha/2", "x", "x", confidence=0.3),
        score_task("alpha/3", "x", "y", confidence=0.1),
    ]
    overall = aggregate(scores, 0.5)["overall"]
    assert overall["em"] == pytest.approx(50.0)  # full coverage: every task answered
    assert overall["coverage"] == pytest.approx(50.0)
    assert overall["precision"] == pytest.approx(50.0)
    curve = {p["threshold"]: p for p in precision_coverage(scores)}
    assert curve[0.0] == {"threshold": 0.0, "coverage": 100.0, "precision": 50.0}
    assert curve[0.3] == {"threshold": 0.3, "coverage": 75.0, "precision": pytest.approx(200 / 3)}
    assert curve[0.9] == {"threshold": 0.9, "coverage": 25.0, "precision": 100.0}
    assert curve[0.95] == {"threshold": 0.95, "coverage": 0.0, "precision": None}
    # a backend without confidences answers every task: no coverage to report
    plain = aggregate([score_task("alpha/0", "x", "x")], 0.5)
    assert plain["overall"]["coverage"] is None and plain["curve"] == []

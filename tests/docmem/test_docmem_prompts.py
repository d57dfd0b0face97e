"""Parsing model replies: take what is usable, ignore the rest, never fail."""

from __future__ import annotations

from repomem.docmem import prompts


def test_page_choices_only_name_shown_pages() -> None:
    assert prompts.parse_pages("3, 12] to check the options", [3, 7, 12], 5) == [3, 12]
    assert prompts.parse_pages("I want to look up Page [99, 7]", [3, 7], 5) == [7]
    assert prompts.parse_pages("7, 3, 7, 12]", [3, 7, 12], 2) == [7, 3]
    assert prompts.parse_pages("no idea", [1, 2], 3) == []
    assert prompts.parse_sequential("Page 4", [2, 4]) == 4
    assert prompts.parse_sequential("STOP, I have enough", [2, 4]) is None
    assert prompts.parse_sequential("Page 9 please", [2, 4]) is None
    assert prompts.parse_choice("57>\nBecause the section ends", [12, 57]) == 57
    assert prompts.parse_choice("<3> or <4>", [4]) == 4


def test_memory_forms_parse_from_replies() -> None:
    reply = "<Flask; has; config>\nnoise <a; b>\n<SECRET_KEY ; signs ; session cookie, tokens>"
    assert prompts.parse_triples(reply) == [
        ("Flask", "has", "config"),
        ("SECRET_KEY", "signs", "session cookie, tokens"),
    ]
    reply = "1. The key signs cookies. | key | cookies\n2. ok\n3) Set it first."
    facts = prompts.parse_facts(reply)
    assert facts == ["The key signs cookies.", "Set it first."]
    assert prompts.parse_text("A short gist here.\n\nPassage: more prompt text") == (
        "A short gist here."
    )
    assert prompts.parse_text("too short") == ""


def test_rerank_verdict_plan_and_citations() -> None:
    scores = prompts.parse_rerank(
        " 2, Relevance Score: 7\nDoc: 9, Relevance Score: 9\nDoc: 1, Relevance Score: 12", 3
    )
    assert scores == {2: 7.0, 1: 10.0}
    yes = prompts.parse_verdict(" The text says so.\nAction: -2, the answer is 42")
    assert yes.answerable and yes.answer == "the answer is 42" and yes.reason == "The text says so."
    no = prompts.parse_verdict(" Nothing about ports.\nAction: -1, the port is missing")
    assert not no.answerable and no.reason == "the port is missing"
    garbled = prompts.parse_verdict("zzz qq")
    assert not garbled.answerable and garbled.reason == "zzz qq"
    assert prompts.parse_plan(" Which command starts the server?\nRetrieved fact: x") == (
        "question",
        "Which command starts the server?",
    )
    assert prompts.parse_plan(" \nFinal answer: --debug") == ("final", "--debug")
    assert prompts.parse_plan("Final answer: 8080") == ("final", "8080")
    assert prompts.parse_citations("Use [2] and [1, 3]; not [9].", 3) == [1, 0, 2]
    assert prompts.parse_lines("- SECRET_KEY\n2. flask.Flask, --debug\n") == [
        "SECRET_KEY",
        "flask.Flask",
        "--debug",
    ]

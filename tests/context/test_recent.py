"""The recent edits and views provider (``repomem.context.recent``) and how the engine fuses
it with retrieval: ranking by the query, what the prompt already shows left out, the budget,
bounded memory."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from repomem.completion.backends.builtin import BuiltinBackend
from repomem.completion.engine import CompletionEngine
from repomem.context.recent import (
    EDIT,
    MAX_SPAN,
    VIEW,
    RecentContext,
    identifiers,
    jaccard,
)
from repomem.core import Location, RetrievedFragment
from repomem.settings import CompletionConfig, Settings


def numbered(n: int, word: str = "x") -> str:
    return "\n".join(f"{word}_{i} = {i}" for i in range(n))


def test_jaccard_over_identifier_sets():
    assert identifiers("a.b(c, 12) + a") == {"a", "b", "c"}
    assert jaccard(frozenset("ab"), frozenset("bc")) == 1 / 3
    assert jaccard(frozenset(), frozenset()) == 0.0


def test_an_edit_keeps_lines_around_it_and_touching_edits_merge():
    docs = {"a.py": numbered(100)}
    recent = RecentContext(docs.get, context_lines=5)
    recent.edited("a.py", 40, 40, 0)
    assert [(r.start, r.end) for r in recent.ranges()] == [(35, 46)]
    recent.edited("a.py", 48, 48, 0)  # 43..54 touches 35..46
    assert [(r.start, r.end, r.kind) for r in recent.ranges()] == [(35, 54, EDIT)]
    recent.edited("a.py", 90, 90, 0)
    assert [(r.start, r.end) for r in recent.ranges()] == [(85, 96), (35, 54)]


def test_ranges_below_an_edit_move_with_it():
    recent = RecentContext(lambda _: None, context_lines=0)
    recent.edited("a.py", 50, 50, 0)
    recent.viewed("a.py", [(60, 70)])
    recent.edited("a.py", 10, 10, 3)  # one line became four: +3 below line 10
    assert {(r.kind, r.start, r.end) for r in recent.ranges()} == {
        (EDIT, 10, 14),
        (EDIT, 53, 54),
        (VIEW, 63, 73),
    }
    recent.edited("a.py", 20, 29, 0)  # ten lines became one: -9
    assert (EDIT, 44, 45) in {(r.kind, r.start, r.end) for r in recent.ranges()}


def test_memory_is_bounded_in_ranges_documents_and_lines():
    recent = RecentContext(lambda _: None, context_lines=2, max_edits=4, max_viewed=2)
    for i in range(10):
        recent.edited(f"f{i}.py", 0, 0, 0)
    assert [r.path for r in recent.ranges()] == ["f9.py", "f8.py", "f7.py", "f6.py"]
    for i in range(5):
        recent.viewed(f"v{i}.py", [(0, 10)])
    assert {r.path for r in recent.ranges() if r.kind == VIEW} == {"v3.py", "v4.py"}
    recent.viewed("v3.py", [])  # nothing of it on screen any more
    assert {r.path for r in recent.ranges() if r.kind == VIEW} == {"v4.py"}
    # a paste of 1,000 lines keeps MAX_SPAN of them, around the change
    recent.edited("big.py", 0, 0, 999)
    big = next(r for r in recent.ranges() if r.path == "big.py")
    assert big.end - big.start == MAX_SPAN and big.start <= 500 < big.end
    recent.viewed("v4.py", [(0, 10_000)])
    assert all(r.end - r.start <= MAX_SPAN for r in recent.ranges())


def test_search_ranks_by_the_query_then_by_recency():
    docs = {
        "old.py": "def parse_header(raw):\n    name, value = raw.split(':')\n    return name\n",
        "new.py": "def unrelated():\n    pass\n\n\nx = 1\n",
        "same.py": "def parse_header(raw):\n    name, value = raw.split(':')\n    return name\n",
    }
    recent = RecentContext(docs.get, context_lines=2)
    recent.edited("old.py", 1, 1, 0)
    recent.edited("same.py", 1, 1, 0)
    recent.edited("new.py", 1, 1, 0)
    found = recent.search("header = parse_header(raw)", [], limit=5)
    # new.py shares no identifier; of two equal matches the more recent comes first
    assert [f.path for f in found] == ["same.py", "old.py"]
    assert found[0].recent == EDIT and found[0].s_ind == found[1].s_ind > 0
    assert found[0].shown_start == 0 and found[0].locations[0].end == 4
    assert recent.search("header = parse_header(raw)", [], limit=1) == found[:1]
    assert recent.search("", [], limit=3) == []


def test_what_the_prompt_shows_is_left_out():
    docs = {"a.py": numbered(60, "token")}
    recent = RecentContext(docs.get, context_lines=10)
    recent.edited("a.py", 30, 30, 0)  # lines 20..41
    query = "token_25 token_26 token_35"
    (whole,) = recent.search(query, [], limit=3)
    assert (whole.locations[0].start, whole.locations[0].end) == (20, 41)
    # a fragment showing 20..30: what is left is 30..41
    (part,) = recent.search(query, [Location("a.py", 15, 30)], limit=3)
    assert (part.locations[0].start, part.locations[0].end) == (30, 41)
    assert part.shown.splitlines()[0] == "token_30 = 30"
    # covered whole, or all but a sliver: nothing
    assert recent.search(query, [Location("a.py", 0, 40)], limit=3) == []
    # another file's exclusion changes nothing
    assert len(recent.search(query, [Location("b.py", 0, 100)], limit=3)) == 1


def test_overlapping_views_and_edits_are_shown_once():
    docs = {"a.py": numbered(80, "tok")}
    recent = RecentContext(docs.get, context_lines=5)
    recent.edited("a.py", 20, 20, 0)
    recent.viewed("a.py", [(10, 40)])
    found = recent.search("tok_20 tok_21", [], limit=3)
    assert len(found) == 1


def test_a_document_gone_is_skipped_and_forgotten():
    docs = {"a.py": numbered(30, "tok")}
    recent = RecentContext(docs.get, context_lines=3)
    recent.edited("a.py", 5, 5, 0)
    recent.edited("gone.py", 5, 5, 0)
    assert [f.path for f in recent.search("tok_5", [], 3)] == ["a.py"]
    recent.forget("a.py")
    assert [r.path for r in recent.ranges()] == ["gone.py"]


# ---------------------------------------------------------------- the engine


class _Index:
    """A retriever that finds one fragment and knows nothing else."""

    def __init__(self, fragments: list[RetrievedFragment]) -> None:
        self.fragments = fragments

    def retrieve(self, query, *, k, alpha, exclusion):
        return self.fragments[:k]

    def definitions(self, path, left_context, *, draft="", window=20):
        return []

    def occurrences(self, path, left_context):
        return []

    def usages(self, query, path, hits, *, k, exclusion, retrieved=()):
        return []


def _fragment(path: str, start: int, text: str) -> RetrievedFragment:
    end = start + text.count("\n") + 1
    return RetrievedFragment(1, (Location(path, start, end),), text, text, 2.0, 0.0, 2.0, "", start)


EDITED = "def frobnicate_widget(widget, depth):\n    return widget.frob(depth)\n"
CURSOR = "from lib import frobnicate_widget\n\n\ndef go(widget):\n    frobnicate_widget("


def _complete(settings: Settings, recent: RecentContext | None, fragments=()):
    engine = CompletionEngine(_Index(list(fragments)), BuiltinBackend(), settings, recent)
    return asyncio.run(engine.complete("app.py", CURSOR))


def test_the_engine_shows_a_recent_edit_and_the_setting_turns_it_off():
    docs = {"lib.py": "import os\n\n\n" + EDITED, "app.py": CURSOR}
    recent = RecentContext(docs.get, context_lines=2)
    recent.edited("lib.py", 3, 3, 1)
    on = _complete(Settings(), recent)
    shown = [f for f in on.prompt.fragments if f.recent == EDIT]
    assert [f.path for f in shown] == ["lib.py"]
    assert "def frobnicate_widget(widget, depth):" in on.prompt.text
    off = _complete(Settings(completion=CompletionConfig(recent=False)), recent)
    assert "def frobnicate_widget" not in off.prompt.text
    none = _complete(Settings(completion=CompletionConfig(max_recent=0)), recent)
    assert none.prompt.text == off.prompt.text


def test_the_engine_leaves_out_the_cursors_own_code_and_what_retrieval_shows():
    docs = {"lib.py": "import os\n\n\n" + EDITED, "app.py": CURSOR + "\n" * 50 + EDITED}
    recent = RecentContext(docs.get, context_lines=2)
    recent.edited("app.py", 1, 1, 0)  # above the cursor: the left context shows it
    assert _complete(Settings(), recent).iterations[0].retrieved == ()
    recent.edited("lib.py", 3, 3, 1)
    same = _fragment("lib.py", 0, "import os\n\n\n" + EDITED.rstrip("\n"))
    result = _complete(Settings(), recent, [same])
    assert [f.recent for f in result.iterations[0].retrieved] == [""]
    # a range below the cursor in its own file, past its window, is shown
    recent.edited("app.py", 56, 56, 0)
    fused = _complete(Settings(), recent, [same]).iterations[0].retrieved
    assert [(f.path, f.recent) for f in fused] == [("lib.py", ""), ("app.py", EDIT)]


def test_recent_ranges_compete_within_the_prompts_budget():
    docs = {
        f"m{i}.py": f"def frobnicate_widget_{i}(widget):\n    return widget\n" for i in range(3)
    }
    recent = RecentContext(docs.get, context_lines=2)
    for i in range(3):
        recent.edited(f"m{i}.py", 0, 0, 0)
    settings = Settings(completion=CompletionConfig(max_recent=3))
    wide = _complete(settings, recent)
    assert len([f for f in wide.prompt.fragments if f.recent]) == 3
    narrow = replace(settings.completion, max_fragments=2)
    two = _complete(replace(settings, completion=narrow), recent)
    assert len(two.prompt.fragments) == 2


def test_a_whole_text_change_records_the_lines_that_differ():
    recent = RecentContext(lambda _: None, context_lines=0)
    old = "a\nb\nc\nd\ne"
    recent.replaced("a.py", old, old)
    assert recent.ranges() == []
    recent.replaced("a.py", old, "a\nb\nX\nY\nd\ne")  # c became X, Y
    assert [(r.start, r.end) for r in recent.ranges()] == [(2, 4)]
    recent.replaced("b.py", old, "a\nb\nc\nd\ne\nf")  # a line added at the end
    assert (recent.ranges()[0].path, recent.ranges()[0].start) == ("b.py", 5)


def test_explain_labels_recent_ranges():
    from io import StringIO

    from repomem.commands._explain import explain

    docs = {"lib.py": "import os\n\n\n" + EDITED, "app.py": CURSOR}
    recent = RecentContext(docs.get, context_lines=2)
    recent.edited("lib.py", 3, 3, 1)
    out = StringIO()
    explain(_complete(Settings(), recent), 4096, 0.0, out, every=False)
    assert "recent edit lib.py:2-6  Jaccard" in out.getvalue()

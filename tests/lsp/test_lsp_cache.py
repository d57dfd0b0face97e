"""The language server's cache of recent suggestions, including "typed along" requests."""

from __future__ import annotations

from lsp_server.suggestion_cache import Suggestion, SuggestionCache

LEFT = "def run(opts):\n    client = make_client("
RIGHT = "\n    return client\n"
TEXT = "opts.host, opts.port)"
URI = "file:///repo/app.py"


def cache_with_one() -> SuggestionCache:
    cache = SuggestionCache()
    cache.put(URI, LEFT, RIGHT, 7, Suggestion(TEXT, ("pkg/config.py",), "builtin"))
    return cache


def test_the_same_cursor_gets_the_same_suggestion_marked_cached() -> None:
    hit = cache_with_one().get(URI, LEFT, RIGHT, 7)
    assert hit == Suggestion(TEXT, ("pkg/config.py",), "builtin", cached=True)


def test_typing_along_gets_the_rest_of_the_suggestion() -> None:
    cache = cache_with_one()
    for typed in ("o", "opts.h", "opts.host, opts.port"):
        hit = cache.get(URI, LEFT + typed, RIGHT, 7)
        assert hit is not None and hit.text == TEXT[len(typed) :]


def test_no_answer_once_the_user_leaves_or_finishes_the_suggestion() -> None:
    cache = cache_with_one()
    assert cache.get(URI, LEFT + "opts.x", RIGHT, 7) is None  # typed something else
    assert cache.get(URI, LEFT + TEXT, RIGHT, 7) is None  # typed all of it
    assert cache.get(URI, LEFT[:-1], RIGHT, 7) is None  # deleted a character
    assert cache.get(URI, LEFT.replace("opts", "args"), RIGHT, 7) is None  # edited above
    assert cache.get(URI, LEFT, RIGHT + "x", 7) is None  # edited below
    assert cache.get("file:///repo/other.py", LEFT, RIGHT, 7) is None
    assert cache.get(URI, LEFT, RIGHT, 8) is None  # another file changed the index


def test_least_recently_used_entries_go_first() -> None:
    cache = SuggestionCache(capacity=2)
    for i in range(2):
        cache.put(URI, f"x{i} = ", "", 0, Suggestion(f"value_{i}"))
    assert cache.get(URI, "x0 = ", "", 0) is not None  # now the most recent
    cache.put(URI, "x2 = ", "", 0, Suggestion("value_2"))
    assert len(cache) == 2
    assert cache.get(URI, "x1 = ", "", 0) is None
    assert cache.get(URI, "x0 = ", "", 0) is not None
    assert cache.get(URI, "x2 = ", "", 0) is not None


def test_empty_suggestions_are_not_kept() -> None:
    cache = SuggestionCache()
    cache.put(URI, LEFT, RIGHT, 0, Suggestion(""))
    assert len(cache) == 0

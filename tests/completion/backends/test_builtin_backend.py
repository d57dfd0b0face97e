"""The built-in backend: token-level longest match against retrieved code, and the naive
baseline it must beat."""

from __future__ import annotations

import asyncio
import re

import pytest

from repomem.completion.backends.base import BackendError, GenerationRequest
from repomem.completion.backends.builtin import BuiltinBackend
from repomem.completion.postprocess import postprocess
from repomem.core import Location, RetrievedFragment

WINDOW, STRIDE = 20, 10


def fragment(path: str, start: int, text: str, shown: str | None = None) -> RetrievedFragment:
    end = start + text.count("\n") + 1
    return RetrievedFragment(0, (Location(path, start, end),), text, shown or text, 1.0, 0.0, 1.0)


def request(left: str, *fragments: RetrievedFragment, multiline: bool = False, **kw: object):
    return GenerationRequest(
        prompt="", left_context=left, fragments=fragments, multiline=multiline, **kw
    )


# ---------------------------------------------------------------------------------------------
# A small synthetic repository: handler classes with the same three methods in varying order.
# In every method the line before the answer is the same (`record = self.lookup(request)`), so
# copying the line after its first occurrence (the naive baseline) is usually wrong; the
# method's signature two lines up tells the methods apart.

METHODS = {
    "get": "return self.render(record)",
    "post": "return self.save(record, status=201)",
    "delete": "return self.remove(record)",
    "put": "return self.replace(record, request.data)",
}
ORDERS = [
    ("get", "post", "delete", "put"),
    ("put", "get", "delete", "post"),
    ("delete", "put", "post", "get"),
    ("post", "delete", "get", "put"),
]
NAMES = ["User", "Order", "Invoice", "Product", "Customer", "Shipment", "Payment", "Report"]


def handler_source(name: str, order: tuple[str, ...]) -> str:
    lines = ["from app.base import Handler", "", "", f"class {name}Handler(Handler):"]
    lines.append(f'    model = "{name.lower()}"')
    for method in order:
        lines += [
            "",
            f"    def {method}(self, request):",
            "        record = self.lookup(request)",
            f"        {METHODS[method]}",
        ]
    return "\n".join(lines) + "\n"


def windows(path: str, text: str) -> list[RetrievedFragment]:
    """RepoCoder's windows: 20 lines every 10, each shown moved forward by the stride."""
    lines = text.splitlines()
    out = []
    for start in range(0, max(len(lines) - WINDOW, 0) + 1, STRIDE):
        end = min(start + WINDOW, len(lines))
        shown_end = min(end + STRIDE, len(lines))
        shown_start = max(0, shown_end - WINDOW)
        out.append(
            fragment(
                path, start, "\n".join(lines[start:end]), "\n".join(lines[shown_start:shown_end])
            )
        )
    return out


def jaccard_retrieve(query: str, corpus: list[RetrievedFragment], k: int = 10):
    """RepoCoder's sparse retrieval: Jaccard similarity of token sets, best first."""
    q = set(re.findall(r"\w+", query))

    def similarity(f: RetrievedFragment) -> float:
        t = set(re.findall(r"\w+", f.text))
        return len(q & t) / len(q | t)

    return sorted(corpus, key=similarity, reverse=True)[:k]


def exact_match_rate(backend: BuiltinBackend) -> float:
    sources = {f"app/{n.lower()}.py": handler_source(n, ORDERS[i % 4]) for i, n in enumerate(NAMES)}
    hits = total = 0
    for task_path, text in sources.items():
        corpus = [f for p, t in sources.items() if p != task_path for f in windows(p, t)]
        lines = text.splitlines()
        for i, current in enumerate(lines):
            if current.strip() not in METHODS.values():
                continue
            left = "\n".join(lines[:i]) + "\n"
            query = "\n".join(lines[max(0, i - WINDOW) : i])
            req = request(left, *jaccard_retrieve(query, corpus), stop=("\n",))
            completion = postprocess(
                backend.continuation(req).text, mode="line", left_context=left, language="python"
            )
            hits += completion.strip() == current.strip()
            total += 1
    assert total == len(NAMES) * len(METHODS)
    return hits / total


def test_builtin_beats_the_naive_baseline_on_repeated_patterns() -> None:
    naive = exact_match_rate(BuiltinBackend("naive"))
    match = exact_match_rate(BuiltinBackend())
    assert naive < 0.5
    assert match >= 0.9
    assert match > naive + 0.4


# ---------------------------------------------------------------------------------------------


SOURCE = """class Loader:
    def load_a(self):
        path = self.root
        return read_a(path)

    def load_b(self):
        path = self.root
        return read_b(
            path,
            strict=True,
        )
"""


def test_longest_match_picks_the_right_occurrence() -> None:
    left = "def load_b(self):\n    path = self.root\n"
    assert BuiltinBackend().continuation(request(left, fragment("l.py", 0, SOURCE))).text == (
        "    return read_b("
    )
    assert BuiltinBackend("naive").continuation(
        request(left, fragment("l.py", 0, SOURCE))
    ).text == ("    return read_a(path)")


def test_indentation_is_rebased_onto_the_cursors_block() -> None:
    left = "if ready:\n    def load_a(self):\n        path = self.root\n        "
    out = BuiltinBackend().continuation(request(left, fragment("l.py", 0, SOURCE))).text
    assert out == "return read_a(path)"  # the typed indentation is not repeated
    left_at_column_0 = "if ready:\n    def load_a(self):\n        path = self.root\n"
    out = BuiltinBackend().continuation(request(left_at_column_0, fragment("l.py", 0, SOURCE))).text
    assert out == "        return read_a(path)"


def test_an_identifier_being_typed_is_completed() -> None:
    left = "def load_b(self):\n    path = self.ro"
    assert BuiltinBackend().continuation(request(left, fragment("l.py", 0, SOURCE))).text == "ot"
    left = "    path = self.root\n    return read_"
    assert (
        BuiltinBackend().continuation(request(left, fragment("l.py", 0, SOURCE))).text == "a(path)"
    )


def test_no_double_space_after_a_typed_space() -> None:
    src = "total = compute(values)\nprint(total)\n"
    out = BuiltinBackend().continuation(request("x = 1\ntotal = ", fragment("c.py", 0, src))).text
    assert out == "compute(values)"


def test_multiline_copies_the_continuation_reindented() -> None:
    left = "class Other:\n    def load_b(self):\n        path = self.root\n        "
    raw = (
        BuiltinBackend()
        .continuation(request(left, fragment("l.py", 0, SOURCE), multiline=True, max_tokens=256))
        .text
    )
    assert raw.startswith("return read_b(\n            path,\n            strict=True,\n        )")
    assert postprocess(raw, mode="api", left_context=left, language="python") == (
        "return read_b(\n            path,\n            strict=True,\n        )"
    )


def test_continuation_reaches_into_the_lines_shown_after_the_window() -> None:
    lines = [f"step_{i} = run({i})" for i in range(30)]
    window = "\n".join(lines[0:20])
    shown = "\n".join(lines[10:30])
    left = "\n".join(lines[15:20]) + "\n"
    out = BuiltinBackend().continuation(request(left, fragment("s.py", 0, window, shown))).text
    assert out == "step_20 = run(20)"


def test_the_file_itself_is_a_source() -> None:
    left = (
        "def first(self):\n    self.check()\n    return self.first_value\n\n"
        "def second(self):\n    self.check()\n"
    )
    assert BuiltinBackend().continuation(request(left)).text == "    return self.first_value"


def test_stop_sequences_and_token_limit_are_honoured() -> None:
    backend = BuiltinBackend()
    left = "class Other:\n    def load_b(self):\n        path = self.root\n        "
    stopped = backend.continuation(
        request(left, fragment("l.py", 0, SOURCE), multiline=True, stop=("\n",))
    ).text
    assert stopped == "return read_b("
    limited = backend.continuation(
        request(left, fragment("l.py", 0, SOURCE), multiline=True, max_tokens=2)
    ).text
    assert limited == "return "


def test_nothing_to_copy_gives_nothing() -> None:
    assert BuiltinBackend().continuation(request("")).text == ""
    assert BuiltinBackend().continuation(request("zzz_unique = 1\n")).text == ""
    assert BuiltinBackend("naive").continuation(request("x = 1\n")).text == ""


def test_count_tokens_uses_the_documented_regex() -> None:
    backend = BuiltinBackend()
    assert backend.count_tokens("") == 0
    # words, punctuation characters, whitespace runs
    assert backend.count_tokens("foo(bar)\n    x_1") == 6
    assert backend.count_tokens("a  +  b") == 5
    # a run of one punctuation character: one token per 8 characters, so the prompt's
    # separator lines do not eat the budget; different characters still count one each
    assert backend.count_tokens("# " + "-" * 50) == 1 + 1 + 7
    assert backend.count_tokens("))]") == 2
    assert backend.count_tokens("!=") == 2


def test_batch_keeps_order_and_names_the_strategy() -> None:
    backend = BuiltinBackend()
    reqs = [
        request("def load_b(self):\n    path = self.ro", fragment("l.py", 0, SOURCE)),
        request("    path = self.root\n    return read_", fragment("l.py", 0, SOURCE)),
    ]
    assert asyncio.run(backend.complete_batch(reqs)) == ["ot", "a(path)"]
    assert backend.name == "builtin"
    assert BuiltinBackend("naive").name == "builtin-naive"


def test_unknown_strategy_is_an_error() -> None:
    with pytest.raises(BackendError, match="unknown built-in strategy 'magic'"):
        BuiltinBackend("magic")


def test_mid_line_a_candidate_that_fits_the_rest_of_the_line_wins() -> None:
    common = "def reset(copied):\n    copied.__pydantic_extra__ = {}\n"
    rare = "def fill(copied, k, v):\n    copied.__pydantic_extra__[k] = v\n"
    found = (
        fragment("a.py", 0, common),
        fragment("b.py", 0, common),
        fragment("c.py", 0, rare),
    )
    left = "def update(copied):\n    copied.__pydanti"
    backend = BuiltinBackend()
    assert backend.continuation(request(left, *found)).text == "c_extra__ = {}"
    fits = backend.continuation(request(left, *found, right_context="c_extra__[k] = v\n")).text
    assert fits == "c_extra__[k] = v"
    # no candidate fits: the best one is proposed anyway (the editor decides what to offer)
    other = backend.continuation(request(left, *found, right_context="c_extra__.clear()\n")).text
    assert other == "c_extra__ = {}"


def test_near_duplicate_code_continues_with_the_cursors_names() -> None:
    source = (
        "def test_read(data):\n"
        "    fh = io.BytesIO(data.encode('UTF-8'))\n"
        "    graph = nx.read_graphml(fh, node_type=int)\n"
    )
    left = "def test_bad(s):\n    f = io.BytesIO(s.encode('UTF-8'))\n"
    found = request(left, fragment("t.py", 0, source), stop=("\n",))
    assert (
        BuiltinBackend().continuation(found).text == "    graph = nx.read_graphml(f, node_type=int)"
    )
    # the earlier strategy copies the source's names
    assert (
        BuiltinBackend("match").continuation(found).text.endswith("read_graphml(fh, node_type=int)")
    )


def test_a_doc_comments_example_is_not_copied_into_code() -> None:
    """A header's doc comment shows the loop the cursor's code writes; what follows it there
    is the comment's `` * `` lines, no evidence for the code: the function's code is copied."""
    header = (
        "/** Feed a parser:\n"
        " *     while ((bytes = fread(buffer, 1, sizeof(buffer), fp)) > 0) {\n"
        " *         parser_feed(parser, buffer, bytes);\n"
        " */\n"
        "void parser_feed(parser *p, const char *buffer, size_t len);\n"
    )
    code = (
        "  while ((bytes = fread(buf, 1, sizeof(buf), f)) > 0) {\n    parser_feed(p, buf, bytes);\n"
    )
    left = "  while ((bytes = fread(buffer, 1, sizeof(buffer), fp)) > 0) {\n"
    found = request(
        left, fragment("parser.h", 0, header), fragment("main.c", 40, code), language="c"
    )
    assert BuiltinBackend().continuation(found).text == "    parser_feed(p, buffer, bytes);"
    # a comment goes on from a comment (the cursor's line is one too)
    left = " *     while ((bytes = fread(buffer, 1, sizeof(buffer), fp)) > 0) {\n"
    found = request(left, fragment("parser.h", 0, header), language="c")
    assert BuiltinBackend().continuation(found).text.startswith(" *         parser_feed(parser")


def test_a_renamed_names_changed_word_renames_the_helpers_named_with_it() -> None:
    """The match renames ``cmark_reference_map_new`` to the cursor's
    ``cmark_footnote_map_new``: the copied ``reference_free`` is the footnotes'
    ``footnote_free`` (one word changed, the same way); other names stay."""
    source = (
        "cmark_map *cmark_reference_map_new(cmark_mem *mem) {\n"
        "  return cmark_map_new(mem, reference_free);\n"
        "}\n"
    )
    left = "cmark_map *cmark_footnote_map_new(cmark_mem *mem) {\n"
    found = request(left, fragment("references.c", 0, source), language="c", stop=("\n",))
    assert (
        BuiltinBackend().continuation(found).text == "  return cmark_map_new(mem, footnote_free);"
    )


def test_token_counts_are_kept_per_text_the_same_as_counting_again() -> None:
    """A prompt counts mostly the texts the previous request's counted: the counts are kept
    per text, the same as counting again."""
    from repomem.completion.backends import builtin

    backend = BuiltinBackend()
    texts = ["def f(x):\n    return x  # ===>\n", "a b", "", "a b"]
    fresh = [len(builtin._COUNTED.findall(t)) for t in texts]
    assert [backend.count_tokens(t) for t in texts] == fresh == [17, 3, 0, 3]
    assert [backend.count_tokens(t) for t in texts] == fresh


def test_a_text_is_counted_from_its_lines_the_same_as_counting_it_whole() -> None:
    """Lines counted alone add up to the text's count: a line that starts with whitespace
    joins the line break before it into one token, and every line boundary is whitespace."""
    import random

    from repomem.completion.backends import builtin

    rng = random.Random(7)
    alphabet = ["a", "_", "1", "é", " ", "\t", "\n", "\r", "\r\n", "\x0c", "\x1c", "\x85"]
    alphabet += ["\u2028", "\u00a0", "-", "-", "#", "(", ")", "="]
    texts = ["", "\n", "\n\n", " \n ", "x\n\n    y\n", "# " + "-" * 50 + "\n" + "-" * 9]
    texts += ["".join(rng.choices(alphabet, k=rng.randint(1, 80))) for _ in range(3000)]
    backend = BuiltinBackend()
    for text in texts:
        assert backend.count_tokens(text) == len(builtin._COUNTED.findall(text)), repr(text)


def test_a_text_of_lines_counted_before_counts_only_its_new_lines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The left context a keystroke further on, or a new prompt of known fragments, is
    mostly lines counted before: only the new ones are counted."""
    from repomem.completion.backends import builtin

    counted: list[str] = []
    count = builtin._count

    def recorded(text: str) -> int:
        counted.append(text)
        return count(text)

    monkeypatch.setattr(builtin, "_count", recorded)
    backend = BuiltinBackend()
    left = "def f(x):\n    y = x + 1\n    return y\n"
    assert backend.count_tokens(left) == count(left)
    counted.clear()
    further = left + "\n\ndef g(x):\n    return f("
    assert backend.count_tokens(further) == count(further)
    assert counted == ["\n", "def g(x):\n", "    return f("]


def test_kept_values_survive_while_read_and_are_forgotten_past_their_bound() -> None:
    """What the last requests read stays: a text read again outlives the generation that
    made it, one not read for two generations is forgotten, and no more than the bound's
    characters are kept, so that no request has to compute everything again at once."""
    from repomem.completion.backends.builtin import _Kept

    made: list[str] = []

    def make(text: str) -> int:
        made.append(text)
        return len(text)

    kept: _Kept[int] = _Kept(20)  # two generations of 10 characters
    for text in ["aaaa", "bbbb", "cccc", "aaaa", "dddd", "aaaa", "eeee", "ffff", "bbbb"]:
        assert kept.get(text, make) == len(text)
    # "aaaa" was read in every generation, so it was made once; "bbbb" was forgotten
    assert made == ["aaaa", "bbbb", "cccc", "dddd", "eeee", "ffff", "bbbb"]
    assert sum(len(t) for t in {*kept._new, *kept._old}) <= 20


@pytest.mark.parametrize(
    "text",
    ["", "   ", "x", "  a  ", "def f(x):\n\treturn x  # ===>\r\n", "é = ñ1 + 2.5e3\n", "a\u00a0b"],
)
def test_tokens_are_the_word_patterns_matches(text: str) -> None:
    """The tokens read from the split text are the pattern's matches, bounds included."""
    from repomem.completion.backends.builtin import _WORD, _Tokens

    tokens = _Tokens.of(text)
    matches = list(_WORD.finditer(text))
    assert tokens.words == [m.group() for m in matches]
    assert list(tokens.starts) == [m.start() for m in matches]
    assert list(tokens.ends) == [m.end() for m in matches]


def test_tokens_grown_from_a_start_of_the_text_are_the_texts_tokens() -> None:
    """Tokens of a text's start, grown to the whole text, are the whole text's tokens, at
    every place the start may end (inside a word, a run of punctuation or whitespace)."""
    import random

    from repomem.completion.backends.builtin import _Tokens

    rng = random.Random(3)
    alphabet = ["a", "_", "1", "é", " ", "\n", "\t", "(", ")", ".", "=", "\u00a0"]
    for _ in range(300):
        text = "".join(rng.choices(alphabet, k=rng.randint(0, 60)))
        whole = _Tokens.of(text)
        for shared in range(len(text) + 1):
            grown = _Tokens.of(text[:shared]).grown(text, shared)
            assert grown == whole, (text, shared)


def _tokenized(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts the backend tokenizes from now on, in order."""
    from repomem.completion.backends import builtin

    calls: list[str] = []
    of = builtin._Tokens.of

    def counted(text: str) -> builtin._Tokens:
        calls.append(text)
        return of(text)

    monkeypatch.setattr(builtin._Tokens, "of", staticmethod(counted))
    return calls


def test_typing_on_tokenizes_only_the_new_end_of_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """The file's text before the cursor is most of what a request tokenizes, and mostly the
    last request's: where the user typed on, only what follows its last whole token is read."""
    calls = _tokenized(monkeypatch)
    shown = "def area(w, h):\n    return w * h\n"
    backend = BuiltinBackend()
    left = "import geo\n\n\ndef scaled(w, h, k):\n    x = are"
    assert backend.continuation(request(left, fragment("geo.py", 0, shown))).text == "a(w, h):"
    calls.clear()
    further = left + "a(w, h)\n    return x * k\n\n\ny = scaled(1, 2, 3) + area("
    typed_on = backend.continuation(request(further, fragment("geo.py", 0, shown)))
    assert calls == [further[further.index(" are") :]]  # from the end of its last whole token
    assert typed_on == BuiltinBackend().continuation(request(further, fragment("geo.py", 0, shown)))


def test_each_source_is_tokenized_once_across_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    """A language server's requests show mostly the fragments the previous ones showed (and
    a completion's second iteration the same file): each text's tokens are read once."""
    calls = _tokenized(monkeypatch)
    shown = "def area(w, h):\n    return w * h\n"
    backend = BuiltinBackend()
    first = request("x = area(", fragment("geo.py", 0, shown))
    texts = [backend.continuation(first).text for _ in range(2)]
    assert texts == ["w, h):"] * 2
    assert sorted(calls) == sorted({shown.rstrip("\n"), "x = area("})


def test_tokens_are_found_by_scanning_the_text_as_by_comparing_each() -> None:
    """The tokens starting with the identifier being typed, or equal to the query's last
    token, and whether a name is a whole word of a text: found by a scan of the text for the
    name, the same as comparing every token (or trying the pattern at every character)."""
    import random
    import re

    from repomem.completion.backends.builtin import _equal_to, _starting_with, _Tokens, _unseen

    rng = random.Random(5)
    alphabet = ["a", "b", "ab", "_", "1", "é", " ", "\n", "(", ".", "\u00a0", "aab"]
    for _ in range(400):
        text = "".join(rng.choices(alphabet, k=rng.randint(0, 40)))
        tokens = _Tokens.of(text)
        for prefix in ("a", "ab", "b", "_", "é", "a1", "aab"):
            expected = [i for i, w in enumerate(tokens.words) if w.startswith(prefix)]
            assert _starting_with(text, tokens, prefix) == expected, (text, prefix)
            whole = re.search(rf"(?<!\w){re.escape(prefix)}(?!\w)", text) is None
            assert _unseen(prefix, text) == whole, (text, prefix)
        for word in ("a", "ab", "(", ".", "1", "é"):
            expected = [i for i, w in enumerate(tokens.words) if w == word]
            assert _equal_to(tokens.words, word) == expected, (text, word)

"""Post-processing: where a completion ends and what it must not repeat."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from repomem.completion.postprocess import cut_at_right_context, logical_line_start, postprocess


def line(text: str, left: str = "", right: str = "", language: str | None = "python") -> str:
    return postprocess(text, mode="line", left_context=left, right_context=right, language=language)


def api(text: str, left: str = "", right: str = "", language: str | None = "python") -> str:
    return postprocess(text, mode="api", left_context=left, right_context=right, language=language)


def test_line_mode_keeps_the_first_line() -> None:
    assert line("x = compute(a)\ny = 2\n", left="def f(a):\n    ") == "x = compute(a)"
    assert line("return x   \n") == "return x"


@pytest.mark.parametrize("text", ["", "   ", "\t\n\n", "  \n  ", "\n\n   \n"])
def test_whitespace_only_becomes_empty(text: str) -> None:
    assert line(text, left="x = 1\n") == ""
    assert api(text, left="x = 1\n") == ""


def test_line_mode_line_break_first_means_nothing_on_this_line() -> None:
    assert line("\n    return x", left="    x = 1") == ""


def test_closing_bracket_already_after_the_cursor_is_dropped() -> None:
    assert line("a, b)", left="x = foo(", right=")\n") == "a, b"
    assert line("a, b):", left="if check(", right="):\n    pass\n") == "a, b"
    assert line('key"]', left='value = table["', right='"]\n') == "key"


def test_a_completion_cut_where_it_re_types_the_rest_of_the_line_says_so() -> None:
    left, right = "    client = make_client(", ", timeout=t)\n"
    raw = "host, port, timeout=t)\n    return client"
    completion = line(raw, left=left, right=right)
    assert completion == "host, port"
    assert cut_at_right_context(raw, completion)
    assert not cut_at_right_context(raw, line(raw, left=left))
    assert not cut_at_right_context("  ", line("  ", left=left, right=right))


def test_brackets_the_completion_needs_are_kept() -> None:
    # "bar()" closes its own bracket: dropping ")" would unbalance the line
    assert line("bar()", left="x = foo(", right=")\n") == "bar()"
    assert line("x + 1", left="y = (", right=")\n") == "x + 1"


def test_quote_already_after_the_cursor_is_dropped() -> None:
    assert line('hello"', left='greeting = "', right='"\n') == "hello"
    assert line("it's", left='s = "', right='"\n') == "it's"


def test_api_statement_ends_when_brackets_balance() -> None:
    text = "compute(\n        a,\n        b,\n    )\n    y = 2\n"
    assert api(text, left="def f(a, b):\n    x = ") == "compute(\n        a,\n        b,\n    )"


def test_api_statement_can_close_a_bracket_opened_before_the_cursor() -> None:
    left = "result = call(\n    first,\n    "
    assert api("second,\n    third)\nother()\n", left=left) == "second,\n    third)"


def test_api_brackets_in_strings_and_comments_do_not_count() -> None:
    assert api('log("(", x)  # ) ]\nnext()', left="    ") == 'log("(", x)  # ) ]'
    assert api("s = '''(\n[\n'''\nnext()", left="") == "s = '''(\n[\n'''"


def test_api_backslash_continues_a_python_statement() -> None:
    assert api("a + \\\n    b\nc = 1", left="total = ") == "a + \\\n    b"


def test_api_leading_line_break_starts_the_next_statement() -> None:
    assert api("\n    y = g(x)\n    z = 3", left="    x = 1") == "\n    y = g(x)"


def test_api_stops_before_a_bracket_it_never_opened() -> None:
    assert api("a)]\nz", left="f(") == "a)"


def test_api_drops_lines_that_repeat_the_code_below() -> None:
    right = "\n    return total\n"
    text = "total = sum(\n        values)\n    return total"
    assert api(text, left="def f(values):\n    ", right=right) == "total = sum(\n        values)"


def test_api_c_family_statements_end_at_semicolons() -> None:
    assert api("int x =\n    5;\nint y;", language="c") == "int x =\n    5;"
    assert api("for (i = 0; i < n; i++) {\n  s += i;\n}\nreturn s;", language="java") == (
        "for (i = 0; i < n; i++) {\n  s += i;\n}"
    )
    assert api("foo(1); bar(2);", language="rust") == "foo(1);"
    assert api("'(' + x;", language="javascript") == "'(' + x;"
    assert api("if (c == '(') { n++; }\nz;", language="c") == "if (c == '(') { n++; }"


def test_api_line_breaks_end_javascript_and_go_statements() -> None:
    assert api("fetch(url)\n  .then(parse)\nnext()", language="javascript") == (
        "fetch(url)\n  .then(parse)"
    )
    assert api("x := a +\n\tb\ny := 2", language="go") == "x := a +\n\tb"
    assert api("count++\nnext()", language="go") == "count++"


def test_logical_line_start_skips_bracketed_lines() -> None:
    left = "a = 1\nb = f(\n    2,\n    "
    assert left[logical_line_start(left, "python") :] == "b = f(\n    2,\n    "
    doc = 'x = 1\ns = """(\n"""\ny = ('
    assert doc[logical_line_start(doc, "python") :] == "y = ("


def test_unknown_mode_is_rejected() -> None:
    with pytest.raises(ValueError, match="mode"):
        postprocess("x", mode="block")


def test_a_completions_iterations_and_typing_on_lex_only_the_last_statements(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An editor's left context is the file up to the cursor (10 ms to lex 2,400 lines of
    argparse.py), each iteration of a completion post-processes with the same one, and the
    next keystroke's is the same a character further: lexed from the last statement start
    they share, with the same answers."""
    from repomem.completion import postprocess as module

    lexed: list[tuple[str, int]] = []
    tokens = module._tokens

    def counted(text: str, language: str | None, pos: int = 0) -> Iterator[re.Match[str]]:
        lexed.append((text, pos))
        return tokens(text, language, pos)

    monkeypatch.setattr(module, "_tokens", counted)
    monkeypatch.setattr(module, "_LEXED", {})
    left = "".join(f"value_{i} = call_{i}(\n    {i},\n)\n" for i in range(50)) + "    x = ("
    first = [line("call(a)", left=left), line("call(b)\nmore", left=left)]
    assert first == ["call(a)", "call(b)"]
    resumed = left.rindex(")\n", 0, len(left) - module._LOOKAHEAD) + 2
    assert lexed == [(left, 0), (left, resumed)]
    assert logical_line_start(left, "python") == left.rindex("\n") + 1
    further = left + "1)\ny = f(\n    "
    assert logical_line_start(further, "python") == further.rindex("y = f(")
    assert lexed[-1] == (further, resumed)


def _lexed_whole(text: str, language: str) -> int:
    """``logical_line_start`` lexing all of ``text`` (what it did before it kept the ends)."""
    from repomem.completion import postprocess as module

    start = depth = 0
    for tok in module._lexer(language).finditer(text):
        kind = tok.lastgroup
        if kind == "open":
            depth += 1
        elif kind == "close":
            depth = max(depth - 1, 0)
        elif kind == "newline" and depth == 0:
            start = tok.end()
    return start


@pytest.mark.parametrize("language", ["python", "c", "javascript", "go"])
def test_the_statement_start_lexed_from_a_shared_start_is_the_whole_texts(language: str) -> None:
    """Random edits anywhere, typing on, going back: the start found from the last left
    context's line breaks is the start found by lexing the whole text, through strings and
    comments left open, escapes, character literals and brackets."""
    import random

    rng = random.Random(11)
    pieces = ["a", " ", "\n", "(", ")", "[", "]", "{", "}", '"', "'", '"""', "`", "#", "//"]
    pieces += ["/*", "*/", "\\", "\\\n", ";", "'x'", "'\\n'", "x\n", "\n\n", "y = (\n"]
    text = ""
    for _ in range(1500):
        at = rng.choice([len(text), len(text), rng.randint(0, len(text))])
        cut = rng.randint(at, len(text)) if rng.random() < 0.3 else at
        text = text[:at] + "".join(rng.choices(pieces, k=rng.randint(1, 6))) + text[cut:]
        if rng.random() < 0.1:
            text = text[: rng.randint(0, len(text))]  # the cursor went back
        if len(text) > 600:
            text = text[-300:]
        assert logical_line_start(text, language) == _lexed_whole(text, language), repr(text)

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


def test_a_completions_iterations_lex_their_left_context_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An editor's left context is the file up to the cursor (10 ms to lex 2,400 lines of
    argparse.py), and each iteration of a completion post-processes with the same one: it is
    lexed once, with the same answers."""
    from repomem.completion import postprocess as module

    lexed: list[str] = []
    tokens = module._tokens

    def counted(text: str, language: str | None) -> Iterator[re.Match[str]]:
        lexed.append(text)
        return tokens(text, language)

    monkeypatch.setattr(module, "_tokens", counted)
    logical_line_start.cache_clear()
    left = "".join(f"value_{i} = call_{i}(\n    {i},\n)\n" for i in range(50)) + "    x = ("
    first = [line("call(a)", left=left), line("call(b)\nmore", left=left)]
    assert first == ["call(a)", "call(b)"]
    assert lexed == [left]
    assert logical_line_start(left, "python") == left.rindex("\n") + 1

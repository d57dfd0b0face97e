"""Code without comments and literals (``repomem.context.lexer``), per syntax family: what the
context engine reads names from."""

from __future__ import annotations

import re

import pytest

from repomem.context.lexer import code_only, starts_in_code

CASES = {
    "python": (
        'x = f"a{b}" + rb\'c\'  # d e\ndef g():\n    """doc\n    h() more\n    """\n'
        "    return k\ns = '''abc\n def'''\n",
        ["x", "def", "g", "return", "k", "s"],
    ),
    "javascript": (
        "/**\n * of(1) @example\n */\nconst t = `a ${b}\n c` + 'q' + \"r\"; // of()\nrun(x);\n",
        ["const", "t", "run", "x"],
    ),
    "typescript": (
        "/* map(x)\n   pluck() */ let y: Foo = 'a' /* z */ + fromEvent(w);\n",
        ["let", "y", "Foo", "fromEvent", "w"],
    ),
    "java": (
        '/** Javadoc {@link Other#go()}. */\nString s = """\n  text f()\n  """;'
        " char c = '\\n'; g(); // h\n",
        ["String", "s", "char", "c", "g"],
    ),
    "go": (
        "// Add adds.\nx := `raw\nz()` + \"s\" + string('c') /* y */\n",
        ["x", "string"],
    ),
    "rust": (
        "//! crate doc\n/// doc f()\nfn f<'a>(x: &'a str) -> char {\n"
        '    let c = \'x\'; let r = r#"raw "q" "#; b"by"; g(c)\n}\n',
        ["fn", "f", "a", "x", "a", "str", "char", "let", "c", "let", "r", "g", "c"],
    ),
    "c": (
        '#include <stdio.h>\n/* a\n * b() */ int x = \'a\' + 1;\nchar *s = "q\\"r()"; // c()\n',
        ["int", "x", "char", "s"],
    ),
    "cpp": (
        "auto r = R\"x(raw\nf()\n)x\"; int n = 1'000'000; /// doc g()\nh(n);\n",
        ["auto", "r", "int", "n", "h", "n"],
    ),
}


@pytest.mark.parametrize("language", CASES)
def test_only_code_keeps_its_names_rows_and_columns(language: str) -> None:
    text, names = CASES[language]
    code = code_only(text, language)
    assert len(code) == len(text) and code.count("\n") == text.count("\n")
    assert re.findall(r"[A-Za-z_]\w*", code) == names


def test_a_text_that_ends_inside_a_comment_or_docstring_blanks_the_rest() -> None:
    assert code_only('def f():\n    """Opens\n    g(x)', "python").split() == ["def", "f():"]
    assert code_only("int a;\n/* see\n * b()", "c").split() == ["int", "a;"]


def test_a_line_closing_a_comment_or_literal_is_no_place_to_start() -> None:
    assert starts_in_code("", "    x = 1", "python")
    assert not starts_in_code("", '    end of a docstring"""', "python")
    assert not starts_in_code("", " * end */ int x;", "cpp")
    assert not starts_in_code("", "  done` + x", "typescript")
    assert not starts_in_code('#define S "a \\', 'b" int x;', "c")  # a continued line

"""Code without its comments and literals, for every supported language, by one regular
expression per comment/string syntax family.

Names are read from what the cursor's code *says* (``repomem.context.definitions``), and a
card's skeleton from where a class body's braces really are (``repomem.context.cards``):
neither may see the words of a comment, a docstring or a string. ``code_only`` blanks every
comment and every string, character or template literal to spaces, newlines kept, so that
offsets and rows stay those of the text. Whether a text starts inside a comment or string
cannot be told from the text alone: callers lex from the start of the file, or from a line
known to start in code (``starts_in_code``).

Each pattern opens with a lookahead of the characters a comment or literal can start with,
so that the regular expression engine skips plain code at C speed (argparse.py, 100 kB:
about 1 ms). Regex literals (JavaScript) and nested block comments (Rust) are not
recognised; both are rare, and what they hide is at worst a name too many.
"""

from __future__ import annotations

import re
from functools import cache

_LINE = r"//[^\n]*"
_BLOCK = r"/\*[^*]*(?:\*+[^*/][^*]*)*(?:\*+/|\Z)"
# one-line literals: unterminated, one ends at the line's end (as a parser recovers)
_DQ = r'"[^"\\\n]*(?:\\.[^"\\\n]*)*(?:"|(?=\n)|\Z)'
_SQ = r"'[^'\\\n]*(?:\\.[^'\\\n]*)*(?:'|(?=\n)|\Z)"
# one character (or escape) between quotes: C++'s 1'000 and Rust's 'a lifetimes are not one
_CHAR = r"'(?:\\(?:u\{[0-9A-Fa-f]*\}|x[0-9A-Fa-f]{2}|[^\n])|[^'\\\n])'"


def _alternatives(first: str, *patterns: str) -> str:
    return f"(?=[{first}])(?:{'|'.join(patterns)})"


_PATTERNS: dict[str, str] = {
    "python": _alternatives(
        "#\"'rRbBuUfF",
        r"#[^\n]*",
        r"""(?<!\w)[rRbBuUfF]{0,2}(?:"""
        + "|".join(
            (
                r'"""[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*(?:"""|\Z)',
                r"'''[^'\\]*(?:(?:\\[\s\S]|'(?!''))[^'\\]*)*(?:'''|\Z)",
                _DQ,
                _SQ,
            )
        )
        + ")",
    ),
    "js": _alternatives("/\"'`", _LINE, _BLOCK, _DQ, _SQ, r"`[^`\\]*(?:\\[\s\S][^`\\]*)*(?:`|\Z)"),
    "java": _alternatives("/\"'", _LINE, _BLOCK, r'"""[\s\S]*?(?:"""|\Z)', _DQ, _CHAR),
    "go": _alternatives("/\"'`", _LINE, _BLOCK, _DQ, r"`[^`]*(?:`|\Z)", _CHAR),
    "rust": _alternatives(
        "/\"'rb",
        _LINE,
        _BLOCK,
        r'(?<!\w)b?r(?P<hashes>#*)"[\s\S]*?(?:"(?P=hashes)|\Z)',
        r'(?<!\w)b?"[^"\\]*(?:\\[\s\S][^"\\]*)*(?:"|\Z)',
        r"(?<!\w)b?" + _CHAR,
    ),
    "c": _alternatives(
        "/\"'uULR#",
        _LINE,
        _BLOCK,
        r'(?<!\w)(?:u8|[uUL])?R"(?P<delim>[^()\\\s]{0,16})\([\s\S]*?(?:\)(?P=delim)"|\Z)',
        r"(?<!\w)(?:u8|[uUL])?" + _DQ,
        r"(?<!\w)[uUL]?" + _CHAR,
        r"#[ \t]*(?:include|import)[ \t]*<[^>\n]*>",
    ),
}
# what a line that ends a comment or literal opened on an earlier line may hold
_CLOSERS: dict[str, tuple[str, ...]] = {
    "python": ('"""', "'''"),
    "js": ("*/", "`"),
    "java": ("*/", '"""'),
    "go": ("*/", "`"),
    "rust": ("*/", '"'),
    "c": ("*/", ')"'),
}
_FAMILY = {
    "python": "python",
    "javascript": "js",
    "typescript": "js",
    "tsx": "js",
    "java": "java",
    "go": "go",
    "rust": "rust",
    "c": "c",
    "cpp": "c",
}


# how a comment line starts: ``#`` in Python; elsewhere ``//``, ``/*`` or a block comment's
# `` * `` continuation
_COMMENT_LINE = {"python": re.compile(r"[ \t]*#")}
_BRACED_COMMENT_LINE = re.compile(r"[ \t]*(?://|/\*|\*(?:[ \t]|/|$))")


def comment_line(language: str) -> re.Pattern[str] | None:
    """The pattern a comment line of ``language`` matches from its start (None: a language
    without a lexer here)."""
    family = _FAMILY.get(language)
    if family is None:
        return None
    return _COMMENT_LINE.get(family, _BRACED_COMMENT_LINE)


@cache
def _pattern(language: str) -> re.Pattern[str]:
    return re.compile(_PATTERNS[_FAMILY.get(language, "c")])


def _blank(m: re.Match[str]) -> str:
    text = m.group()
    if "\n" not in text:
        return " " * len(text)
    return "\n".join(" " * len(part) for part in text.split("\n"))


def code_only(text: str, language: str) -> str:
    """``text`` with its comments and string, character and template literals blanked to
    spaces (newlines kept: rows and columns are those of ``text``); one substitution (the
    matches' slices joined in Python took a sixth longer)."""
    return _pattern(language).sub(_blank, text)


def starts_in_code(above: str, line: str, language: str) -> bool:
    """Whether a line where a statement of the parse begins surely begins in code: it holds
    nothing that could close a comment or literal opened above it, and the line ``above``
    does not run on into it with a backslash."""
    closers = _CLOSERS[_FAMILY.get(language, "c")]
    return not above.endswith("\\") and not any(closer in line for closer in closers)

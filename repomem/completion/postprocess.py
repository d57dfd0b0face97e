"""From a model's raw text to the completion an editor inserts.

Models do not know where a completion should end, and they happily re-type what already
follows the cursor. Line mode keeps the first line; API (multi-line) mode keeps one
statement: it ends at the first line break where every bracket opened since the start of
the cursor's logical line is closed and no continuation is pending (Python: backslash;
C-family: a ``;`` or a line that cannot continue). Brackets are counted by a small lexer
that skips strings and comments, on the completion appended to the left context, so a
completion may close a bracket the user opened. Then text duplicating the start of the
right context is dropped: closing brackets or quotes already after the cursor, and lines
repeating the ones below it.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from functools import cache

MODES = ("line", "api")

_PAIRS = {")": "(", "]": "[", "}": "{"}

#: per language, the last left context ``logical_line_start`` lexed and the ends of its line
#: breaks with no bracket open
_LEXED: dict[str | None, tuple[str, list[int]]] = {}
#: how far past its start a token, or a failed try at one, reads at most, unless it runs to a
#: line break or the text's end (a C character literal: 12 characters)
_LOOKAHEAD = 16

_COMMON = r"""
 |(?P<cont>\\\n)
 |(?P<open>[(\[{])
 |(?P<close>[)\]}])
 |(?P<newline>\n)
 |(?P<semi>;)
"""

_PYTHON = r"""
 (?P<str>\"\"\"(?:\\.|[^\\])*?\"\"\"|'''(?:\\.|[^\\])*?''')
 |(?P<block>(?:\"\"\"|''')(?:\\.|[^\\])*)
 |(?P<line_str>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
 |(?P<openstr>"(?:\\.|[^"\\\n])*|'(?:\\.|[^'\\\n])*)
 |(?P<comment>\#[^\n]*)
"""

# JavaScript/TypeScript quote strings with '...' and `...`; elsewhere ' is a character literal
# (Rust lifetimes such as 'a stay unmatched) and ` a raw string (Go).
_C_FAMILY = r"""
 (?P<str>"(?:\\.|[^"\\\n])*"|{single}|`[^`]*`)
 |(?P<comment>//[^\n]*|/\*.*?\*/)
 |(?P<block>`[^`]*|/\*.*)
 |(?P<openstr>"(?:\\.|[^"\\\n])*{open_single})
"""
_JS_SINGLE = r"'(?:\\.|[^'\\\n])*'"
_CHAR_LITERAL = r"'(?:\\.[^'\n]{0,8}|[^'\\\n])'"

_C_FAMILY_LANGUAGES = frozenset(
    {"javascript", "typescript", "tsx", "java", "go", "rust", "c", "cpp"}
)
# Languages where a line break ends a statement unless the line cannot end there.
_LINE_BREAK_ENDS = frozenset({"javascript", "typescript", "tsx", "go"})
_CONTINUES_LINE = tuple(",.+-*/%=&|^<>!?:")


@cache
def _lexer(language: str | None) -> re.Pattern[str]:
    if language in _C_FAMILY_LANGUAGES:
        js = language in ("javascript", "typescript", "tsx")
        body = _C_FAMILY.format(
            single=_JS_SINGLE if js else _CHAR_LITERAL,
            open_single=r"|'(?:\\.|[^'\\\n])*" if js else "",
        )
    else:
        body = _PYTHON
    return re.compile(body + _COMMON, re.VERBOSE | re.DOTALL)


def _tokens(text: str, language: str | None, pos: int = 0) -> Iterator[re.Match[str]]:
    return _lexer(language).finditer(text, pos)


def postprocess(
    completion: str,
    *,
    mode: str,
    left_context: str = "",
    right_context: str = "",
    language: str | None = None,
) -> str:
    """The part of ``completion`` to insert at the cursor; "" when nothing but whitespace."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    start = logical_line_start(left_context, language)
    head = left_context[start:]
    if mode == "line":
        text = completion.split("\n", 1)[0]
    else:
        text = _cut_statement(completion, head, language)
        text = _cut_repeated_lines(text, right_context)
    text = _strip_right_overlap(text.rstrip(), head, right_context, language)
    return text if text.strip() else ""


def cut_at_right_context(raw: str, completion: str) -> bool:
    """Whether line-mode :func:`postprocess` made ``completion`` from ``raw`` by cutting off the
    end that re-typed the start of the rest of the line (the only change it makes to a first
    line besides trailing spaces): the completion then goes in before that rest."""
    return bool(completion) and completion != raw.split("\n", 1)[0].rstrip()


def logical_line_start(left_context: str, language: str | None) -> int:
    """Where the statement the cursor is in begins: just after the last line break that had
    no bracket open (line breaks inside strings and comments do not count).

    An editor sends the file up to the cursor (10 ms to lex 2,400 lines of argparse.py), a
    keystroke further each time, and every iteration of a completion asks of the same one:
    the text is lexed from the last such line break of the language's previous left context
    that lies in the start both share, ``_LOOKAHEAD`` characters before its end or more. The
    tokens up to there are the same in both: a token, or a failed try at one, reads no
    further than that past its start unless it runs to a line break or the text's end (an
    unclosed string or comment runs to the end, so no such line break follows it)."""
    text, ends = _LEXED.get(language, ("", []))
    kept = ends[: bisect_right(ends, _shared(text, left_context) - _LOOKAHEAD)]
    start = kept[-1] if kept else 0
    depth = 0
    for tok in _tokens(left_context, language, start):
        kind = tok.lastgroup
        if kind == "open":
            depth += 1
        elif kind == "close":
            depth = max(depth - 1, 0)
        elif kind == "newline" and depth == 0:
            start = tok.end()
            kept.append(start)
    _LEXED[language] = (left_context, kept)
    return start


def _shared(a: str, b: str) -> int:
    """The length of the longest start ``a`` and ``b`` share (bisected: slices compare in C)."""
    low, high = 0, min(len(a), len(b))
    if a[:high] == b[:high]:
        return high
    while high - low > 1:  # a[:low] == b[:low], a[:high] != b[:high]
        mid = (low + high) // 2
        if a[low:mid] == b[low:mid]:
            low = mid
        else:
            high = mid
    return low


def _cut_statement(completion: str, head: str, language: str | None) -> str:
    """``completion`` up to the end of the statement it continues (see the module doc)."""
    text = head + completion
    boundary = len(head)
    stack: list[str] = []
    line_start = head.rfind("\n") + 1
    comment_at: int | None = None
    for tok in _tokens(text, language):
        kind, pos = tok.lastgroup, tok.start()
        if kind == "open":
            stack.append(tok.group())
        elif kind == "close":
            if stack and stack[-1] == _PAIRS[tok.group()]:
                stack.pop()
            elif pos >= boundary:
                return completion[: pos - boundary]  # closes what was never opened
        elif kind == "comment":
            comment_at = pos
        elif kind == "semi" and not stack and pos >= boundary:
            if language in _C_FAMILY_LANGUAGES:
                return completion[: tok.end() - boundary]
        elif kind == "newline" and pos >= boundary:
            written = completion[: pos - boundary]
            line = text[line_start : pos if comment_at is None else comment_at].rstrip()
            next_break = text.find("\n", tok.end())
            following = text[tok.end() : next_break if next_break >= 0 else len(text)]
            if not stack and written.strip() and _line_ends_statement(line, following, language):
                return written
            line_start, comment_at = tok.end(), None
    return completion


def _line_ends_statement(line: str, following: str, language: str | None) -> bool:
    """Whether a line break after ``line`` (before ``following``) ends the statement."""
    if language not in _C_FAMILY_LANGUAGES:
        return True
    if language in _LINE_BREAK_ENDS:
        if following.lstrip().startswith("."):  # a chained call continues: `\n  .then(...)`
            return False
        return not line.endswith(_CONTINUES_LINE) or line.endswith(("++", "--"))
    return line.endswith((";", "}"))


def _cut_repeated_lines(text: str, right_context: str) -> str:
    """Drop the completion's lines from the first that repeats the first non-blank line
    below the cursor's line (the model re-typing code that already follows)."""
    below = right_context.split("\n")[1:]
    target = next((line.strip() for line in below if line.strip()), None)
    if target is None:
        return text
    lines = text.split("\n")
    for i, line in enumerate(lines[1:], start=1):
        if line.strip() == target:
            return "\n".join(lines[:i])
    return text


def _strip_right_overlap(text: str, head: str, right_context: str, language: str | None) -> str:
    """Drop the end of ``text`` that re-types the start of the rest of the cursor's line, when
    that is what makes brackets and quotes balance (``foo(a, b)`` before ``)``)."""
    rest = right_context.split("\n", 1)[0]
    typed = rest.lstrip()
    if not typed or not text:
        return text
    last_line = text.rsplit("\n", 1)[-1]
    if _balanced(head + text + rest, language):
        return text
    for k in range(min(len(typed), len(last_line)), 0, -1):
        if text.endswith(typed[:k]):
            candidate = text[:-k].rstrip()
            if _balanced(head + candidate + rest, language):
                return candidate
    return text


def _balanced(line: str, language: str | None) -> bool:
    """No bracket closed that was not opened (or by the wrong kind) and no string left open
    at the end of a line; brackets may remain open, as statements can continue."""
    stack: list[str] = []
    for tok in _tokens(line, language):
        kind = tok.lastgroup
        if kind == "open":
            stack.append(tok.group())
        elif kind == "close":
            if not stack or stack[-1] != _PAIRS[tok.group()]:
                return False
            stack.pop()
        elif kind == "openstr":
            return False
    return True

"""The C/C++ source as tree-sitter is shown it: macros it would misread, blanked.

A line that is only a macro in capitals (``NS_BEGIN``, ``Q_OBJECT``, ``API_ATTR(2)`` before a
member, ``PRIVATE_UNLESS_TESTED:``), and an export macro between ``class`` and the class's
name (``class CORE_EXPORT Name {``), stand for what the preprocessor expands them to, which
the grammar cannot know: it reads the line as the start of a declaration and glues it onto
the next one, closing a class or namespace early or turning ``class X_API Name {...}`` into a
function. Members then get the wrong owner, or none, and the resolver cards the wrong
definition. Such macros are replaced by as many spaces, so every byte offset and row stays the
file's (fragments and cards are read from the file's own text). A macro line is blanked only
where a declaration could end before it and start after it: after a line ending a statement,
a block or a label (or none), and before a line starting with a name or closing a block (or
none). So the last enumerator of an ``enum``, an argument on a line of its own, a macro body's
last line and ``SYSCALL(x)`` before its ``{`` keep their text, and so does a bare name before
``name(`` (a return type on its own line, ``BOOL``); a line ending with ``;``
(``EXPORT_SYMBOL(f);``) is never blanked.
"""

from __future__ import annotations

import re

#: a line holding one macro name in capitals (three characters at least), its arguments
#: (brackets two deep) or a ``:`` after it, and at most a ``//`` comment; found from the
#: newline before it, which the regex engine looks for as a literal (a pattern starting at
#: ``^`` was tried at every byte: twice the time)
_MACRO_LINE = re.compile(
    rb"\n[ \t]*+([A-Z_][A-Z0-9_]{2,}+(?:[ \t]*\((?:[^()\n;{}]|\([^()\n;{}]*\))*\))?"
    rb"(?:[ \t]*:)?)[ \t]*(?://[^\n]*)?\r?(?=\n|\Z)"
)
#: ``class`` or ``struct`` (each its own pattern, starting with the literal: a ``\\b``
#: before it cost twenty times the time; the byte before is checked apart), a macro in
#: capitals, and the class's name with what may follow it on a class's head (a base list,
#: its body, ``final``, the line's end)
_CLASS_MACROS = tuple(
    re.compile(
        head + rb"[ \t]+([A-Z_][A-Z0-9_]{2,}(?:\([^()\n;{}]*\))?)[ \t]+"
        rb"(?=[A-Za-z_]\w*[ \t]*(?:\{|:(?!:)|final\b|\r?$))",
        re.MULTILINE,
    )
    for head in (rb"class", rb"struct")
)
#: what the search for the code after a macro line passes over: blanks, comments and
#: preprocessor lines
_GAP = re.compile(rb"(?:\s+|//[^\n]*|/\*.*?(?:\*/|\Z)|#(?:\\\r?\n|[^\n])*)*", re.DOTALL)
_CALL_START = re.compile(rb"[A-Za-z_]\w*[ \t]*\(")


def parser_view(source: bytes, cpp: bool) -> bytes:
    """``source`` with the macros the grammar would misread replaced by spaces (see the
    module doc; a class's head only in C++, ``cpp``); ``source`` itself (no copy) where
    there is none. (A macro on a file's first line is left: code starts below a comment or
    an include.)"""
    lines = list(_MACRO_LINE.finditer(source))
    heads = [
        m
        for pattern in (_CLASS_MACROS if cpp else ())
        for m in pattern.finditer(source)
        if not source[m.start() - 1 : m.start()].isalnum()
        and source[m.start() - 1 : m.start()] != b"_"
    ]
    if not lines and not heads:
        return source
    # where the code after each macro line starts, the macro lines after it passed over:
    # found from the last line up, so that a run of them is passed over once, not once a line
    after: dict[int, int] = {}  # a macro's first byte -> that place
    for m in reversed(lines):
        at = _GAP.match(source, m.end()).end()
        after[m.start(1)] = after.get(at, at)
    out = bytearray(source)
    blanked: dict[int, bytes] = {}  # the first byte of each line blanked -> the code before it
    for m in lines:
        before = _last_code(source, m.start() + 1, blanked)
        if _between_declarations(source, m, before, after[m.start(1)]):
            blanked[m.start() + 1] = before
            out[m.start(1) : m.end(1)] = b" " * (m.end(1) - m.start(1))
    for m in heads:
        out[m.start(1) : m.end(1)] = b" " * (m.end(1) - m.start(1))
    return bytes(out)


def _between_declarations(source: bytes, m: re.Match[bytes], before: bytes, at: int) -> bool:
    """Whether the code before the macro line ``m`` (its last character, ``before``) ends a
    statement, a block or a label (or there is none) and the code after it (at ``at``)
    starts with a name, closes a block that the line does not open the body of (an ``enum``
    of one), or there is none; a bare name before ``name(`` may be the return type of the
    function that starts there."""
    if before not in (b"", b";", b"{", b"}", b":"):
        return False
    first = source[at : at + 2]
    if first[:1] == b"}":
        return before != b"{"
    if not (at == len(source) or first[:1].isalpha() or first[:1] in b"_~" or first == b"[["):
        return False
    bare = not any(c in m.group(1) for c in b"(:")
    return not (bare and _CALL_START.match(source, at))


def _last_code(source: bytes, start: int, blanked: dict[int, bytes]) -> bytes:
    """The last character of code before the line at ``start`` (empty where there is none):
    blank, comment and preprocessor lines passed over, and blanked lines (what is before
    each is kept with it); ``\\`` where the line continues a preprocessor line."""
    end = start - 1
    if source[max(end - 2, 0) : max(end, 0)].rstrip(b"\r").endswith(b"\\"):
        return b"\\"
    while end > 0:
        begin = source.rfind(b"\n", 0, end) + 1
        code = source[begin:end].strip()
        if code.endswith(b"*/"):  # the code before the comment, on the line it opens on
            opening = source.rfind(b"/*", 0, begin + source[begin:end].rindex(b"*/"))
            if opening < 0:
                return b""
            begin = source.rfind(b"\n", 0, opening) + 1
            code = source[begin:opening].strip()
        if begin in blanked:
            return blanked[begin]
        if code and not code.startswith((b"#", b"//")):
            code = code.split(b"//", 1)[0].rstrip()
            if code:
                return code[-1:]
        end = begin - 1
    return b""

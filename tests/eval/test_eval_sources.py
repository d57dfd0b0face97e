"""Which rows of a parsed file start code, the rule every line task's cursor obeys."""

from __future__ import annotations

import time

from repomem.index.languages import parser
from repomem_eval.sources import SourceFile

C_TEXT = """\
/* a block comment
   over two lines */
int f(void) {
    const char *s = "one"
        "two";
    // a line comment
    return g('x',
             "a \\
continued string");
}
"""


def _source(text: str, language: str = "c") -> SourceFile:
    tree = parser(language).parse(text.encode("utf-8"))
    return SourceFile(("t.c",), text.splitlines(), tree, language)


def test_comments_and_the_inside_of_strings_start_no_code() -> None:
    f = _source(C_TEXT)
    code = [row for row in range(len(f.lines)) if f.is_code_line(row)]
    # rows 0-1 the block comment, 5 the line comment, 8 the continued string's inside
    assert code == [2, 3, 4, 6, 7, 9]


def test_a_table_in_one_unparsed_initializer_is_classified_in_linear_time() -> None:
    """A header that is only a table (libsodium's ``base.h``) parses as one flat error node:
    looking each row up from the root took seconds per thousand rows, the task builder's stall."""
    f = _source("{\n" + "    { 1, 2, 3, 4 },\n" * 5000 + "}\n")
    assert f.root.has_error
    start = time.perf_counter()
    assert all(f.is_code_line(row) for row in range(len(f.lines)))
    assert time.perf_counter() - start < 2.0

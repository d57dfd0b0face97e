"""A Python definition's card rows (repomem.index.heads): found when the file is parsed,
saved with its node rows, and the same after an update as after a rebuild."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from repos import saved_and_fresh_parses

from repomem.index import heads
from repomem.index.parsing import Lines, parse_source

SOURCE = '''\
import functools


@functools.cache
def long(a,  # (a comment's bracket
         b: list[int] = [1, 2],
         ) -> int:

    """Sums.

    More here.
    """
    return a


class Runs:
    """A paragraph
    that runs
    on past three
    lines."""

    x = 1

    def m(self): return 1

    def n(self):
        "One line."
'''


def _parse(text: str = SOURCE):
    return parse_source("m.py", "python", text, "d")


def _by_name(pf) -> dict[str, int]:
    return {d.name: d.node for d in pf.definitions}


def test_a_python_parse_keeps_each_definitions_header_and_docstring_rows() -> None:
    """The card reads its header and docstring from rows the parse found: a signature over
    three lines (a ``(`` in a comment not counted), a docstring after a blank row and cut
    at its paragraph, one running on (closed by ``...``), a one-line body and docstring."""
    pf = _parse()
    lines = Lines(SOURCE.encode())
    nodes = _by_name(pf)
    header, shown = heads.head(pf, lines, 3, nodes["long"])  # from its decorator's row
    assert header == [
        "def long(a,  # (a comment's bracket",
        "         b: list[int] = [1, 2],",
        "         ) -> int:",
    ]
    assert shown == ["@functools.cache", *header, '    """Sums.', '    ..."""']
    runs = int(pf.node_start[nodes["Runs"]])
    assert heads.head(pf, lines, runs, nodes["Runs"]) == (
        ["class Runs:"],
        ["class Runs:", '    """A paragraph', "    that runs", "    on past three", '    ..."""'],
    )
    m, n = nodes["Runs.m"], nodes["Runs.n"]
    header = ["    def m(self): return 1"]
    assert heads.head(pf, lines, int(pf.node_start[m]), m) == (header, header)
    assert heads.head(pf, lines, int(pf.node_start[n]), n)[1] == [
        "    def n(self):",
        '        "One line."',
    ]
    starts, rows = heads.headers(pf, lines, [m, n])
    assert starts == [int(pf.node_start[m]), int(pf.node_start[n])]
    assert rows == [header, ["    def n(self):"]]
    # only the nodes definitions start hold rows; other languages keep none
    assert np.flatnonzero(pf.node_head).tolist() == sorted(nodes.values())
    c = parse_source("a.c", "c", "int f(int x) {\n  return x;\n}\n", "d")
    assert c.node_head.size == 0


def test_a_saved_index_and_an_update_keep_the_rows_a_fresh_parse_finds(tmp_path: Path) -> None:
    """The rows are saved with the node rows (a loaded index's parse reads them in place),
    and an edit, spliced or parsed whole, gives the rows a parse of the new text gives."""
    edits = [
        SOURCE.replace("    x = 1\n", '    def o(self):\n        """New."""\n\n    x = 1\n'),
        SOURCE.replace("def long(a,  # (a comment's bracket\n", "def long(\n    a,\n"),
        SOURCE.replace('    lines."""', '\n    lines."""'),
    ]
    for saved, fresh, edited in saved_and_fresh_parses(tmp_path / "r", SOURCE, edits):
        assert fresh.node_head.any() or not edited
        assert np.array_equal(saved.node_head, fresh.node_head)

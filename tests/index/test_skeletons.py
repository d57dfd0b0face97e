"""A Python class's public methods (repomem.index.skeletons): found when the file is parsed,
the same as a scan of the file's definition names finds, saved with the node rows, and the
same after an update as after a rebuild."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from repos import saved_and_fresh_parses

from repomem.index import skeletons
from repomem.index.parsed import Definition, ParsedFile
from repomem.index.parsing import parse_source

SOURCE = """\
class A:
    def __init__(self, x):
        def inner():
            pass
        self.x = x

    def run(self):
        pass

    def _hidden(self):
        pass

    def __repr__(self):
        return "A"

    def __call__(self):
        pass

    class Inner:
        def go(self):
            pass


class Empty:
    def _private(self):
        pass


def make():
    class A:
        def local(self):
            pass
    return A


if True:
    class A:
        def later(self):
            pass
"""


def _scanned(pf: ParsedFile, d: Definition) -> list[Definition]:
    """What a card listed before the parse kept them: every definition named ``Class.m``
    (one part more) with ``m`` public, of any class of the file so named."""
    start = len(d.name) + 1
    return [
        m
        for m in pf.definitions
        if m.name.startswith(d.name + ".")
        and "." not in m.name[start:]
        and skeletons.public(m.name[start:])
    ]


def test_the_methods_are_those_a_scan_of_the_names_finds() -> None:
    pf = parse_source("m.py", "python", SOURCE, "d")
    classes = [d for d in pf.definitions if d.is_class]
    assert [d.name for d in classes] == ["A", "A.Inner", "Empty", "make.A", "A"]
    for d in classes:
        assert skeletons.public_methods(pf, d.node) == _scanned(pf, d)
    first = skeletons.public_methods(pf, classes[0].node)
    # source order, the constructor, ``__call__`` and a nested class in, the classes named
    # ``A`` joined
    assert [m.name for m in first] == ["A.__init__", "A.run", "A.__call__", "A.Inner", "A.later"]
    assert skeletons.public_methods(pf, classes[-1].node) == first
    assert skeletons.public_methods(pf, classes[2].node) == []
    # only the classes that have some are kept
    assert pf.class_methods[0] == 4
    c = parse_source("a.c", "c", "struct s { int x; };\nint f(void) { return 0; }\n", "d")
    assert c.class_methods.size == 0


def test_a_saved_index_and_an_update_keep_what_a_fresh_parse_finds(tmp_path: Path) -> None:
    """The array is saved with the node rows (a loaded index's parse reads it in place, its
    definitions still the saved columns), and an edit, spliced or parsed whole, gives what a
    parse of the new text gives."""
    edits = [
        SOURCE.replace(
            "    def run(self):\n", "    def walk(self):\n        pass\n\n    def run(self):\n"
        ),
        SOURCE.replace("class Empty:\n    def _private", "class Empty:\n    def public"),
        SOURCE.replace("if True:\n    class A:", "if True:\n    class B:"),
    ]
    for saved, fresh, edited in saved_and_fresh_parses(tmp_path / "r", SOURCE, edits):
        assert fresh.class_methods.size or not edited
        assert np.array_equal(saved.class_methods, fresh.class_methods)
        if not edited:
            for d in fresh.definitions:
                if d.is_class:
                    assert skeletons.public_methods(saved, d.node) == _scanned(fresh, d)

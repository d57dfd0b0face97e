"""Re-parsing only the top-level statements an edit touched gives what a full parse gives."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest
from repos import parsed_fields

from repomem.config import IndexConfig
from repomem.index import splice
from repomem.index.parsing import ParsedFile, TreeCache, parse_source
from repomem.index.repo import RepoIndex

MODULE = """import os
from .util import helper as h


class Base:
    pass


@decorate
def first(x):
    import json
    return h(x) + json.loads(x)
    # a note at the body's indentation belongs to the body


class A(Base):
    def m(self):
        return self.n()

    def n(self):
        return first(1)


if os.name:
    value = first(2)
else:
    value = None
x = 1; y = first(x)


def last():
    return A().m()
"""


def _insert_after(anchor: str, added: str) -> Callable[[str], str]:
    return lambda text: text.replace(anchor, anchor + added, 1)


# (what the edit does, the edit, whether it may keep the old parse of the rest)
EDITS: list[tuple[str, Callable[[str], str], bool]] = [
    ("append a function", lambda t: t + "\n\ndef added(v):\n    return last()\n", True),
    ("edit inside a decorated function", lambda t: t.replace("h(x) +", "h(x, 2) -"), True),
    ("insert an import between classes", _insert_after("    pass\n", "\nimport sys\n"), True),
    (
        "add a method to a class",
        _insert_after("return first(1)\n", "\n    def o(self):\n        return sys.exit()\n"),
        True,
    ),
    ("edit a row holding two statements", lambda t: t.replace("x = 1; y", "x = 2; y"), True),
    ("delete a whole class", lambda t: t.replace("class Base:\n    pass\n", ""), True),
    # an indented line after a statement may join it: the region takes that statement in
    ("append an indented line", lambda t: t + "    z = first(3)\n", True),
    ("indented comment after a class", _insert_after("return sys.exit()\n", "    # x\n"), True),
    # the bases of the last class of a name win, wherever the edit is
    ("a second class A", lambda t: t + "\n\nclass A(os.PathLike):\n    pass\n", False),
    ("edit the first class A", lambda t: t.replace("self.n()", "self.o()"), False),
    # a syntax error, and the edits after it, parse the whole file
    ("a clause without its statement", lambda t: t + "else:\n    pass\n", False),
    ("an edit while the file is broken", lambda t: t.replace("first(2)", "first(4)"), False),
]


def _spliced_count(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    count = [0]
    join = splice.join

    def counting(*args: object) -> ParsedFile | None:
        joined = join(*args)  # type: ignore[arg-type]
        count[0] += joined is not None
        return joined

    monkeypatch.setattr(splice, "join", counting)
    return count


def _edit_chain(
    count: list[int],
    path: str,
    text: str,
    parsed: ParsedFile,
    edits: list[tuple[str, Callable[[str], str], bool]],
) -> ParsedFile:
    """Apply ``edits`` one after another, each parse spliced from the last where it can:
    each equals a full parse, error rows and digest included, and splices when it should."""
    language = parsed.language
    for k, (what, edit, keeps_rest) in enumerate(edits, 1):
        edited = edit(text)
        assert edited != text, what
        before = count[0]
        got = parse_source(path, language, edited, f"d{k}", previous=(text, parsed))
        want = parse_source(path, language, edited, f"d{k}")
        assert parsed_fields(got) == parsed_fields(want), what
        assert got.digest == f"d{k}"
        assert got.error_rows is not None and want.error_rows is not None
        assert got.error_rows.tolist() == want.error_rows.tolist(), what
        assert count[0] - before == keeps_rest, what
        text, parsed = edited, got
    return parsed


def test_spliced_parses_equal_full_parses(monkeypatch: pytest.MonkeyPatch) -> None:
    count = _spliced_count(monkeypatch)
    text = MODULE
    parsed = parse_source("m.py", "python", text, "d0")
    assert not parsed.has_error
    parsed = _edit_chain(count, "m.py", text, parsed, EDITS)
    assert parsed.has_error


@pytest.mark.parametrize(
    ("what", "old", "new", "keeps_rest"),
    [
        # tree-sitter accepts an indented statement at the top level; after a block, the
        # statement belongs to it: the region takes it in
        ("indented after", "x = 1\n    y = 2\n", "def g():\n    pass\n    y = 2\n", True),
        # ...and such a statement runs on over the next line: ``b, y = 1``
        ("indented before", "x = 1\n    b,\n", "x = 1\n    b,\ny = 1\n", False),
        ("indented inside", "x = 1\ny = 1\n", "x = 1\n    b,\ny = 1\n", False),
        # the region starts with the statement that shares its first row
        ("shared row", "x = 1; y = (\n2)\n", "x = 1; y = (\n3)\n", True),
        # and ends with the statement that shares its last row
        ("shared row after", "y = (\n1); z = 2\n", "w = (\n1); z = 2\n", True),
        # a backslash joins the next line to its statement, before or after the region
        ("continued into", "x = f(1) \\\n\n", "x = f(1) \\\ny = 2\n", False),
        ("continued out of", "x = f(1)\ny = 2\n", "x = f(1) \\\ny = 2\n", False),
        ("old syntax error", "x = 1\ndef broken(:\n", "x = 2\ndef broken(:\n", False),
    ],
)
def test_edges_of_the_region(
    monkeypatch: pytest.MonkeyPatch, what: str, old: str, new: str, keeps_rest: bool
) -> None:
    count = _spliced_count(monkeypatch)
    padding = "".join(f"c{i} = {i}\n" for i in range(10))
    # padded on the side that cannot change the case: after, unless a statement runs on
    old, new = (padding + old, padding + new) if "b," in new else (old + padding, new + padding)
    parsed = parse_source("m.py", "python", old, "d")
    assert not parsed.has_error or what == "old syntax error"
    got = parse_source("m.py", "python", new, "d", previous=(old, parsed))
    assert parsed_fields(got) == parsed_fields(parse_source("m.py", "python", new, "d")), what
    assert count[0] == keeps_rest, what


def test_an_edit_of_most_of_the_file_parses_it_whole() -> None:
    old = "a = (1,\n     2)\nb = 2\n"
    parsed = parse_source("m.py", "python", old, "d")
    assert splice.region(old.encode(), parsed, old.replace("1", "3").encode(), 3) is None
    long = old + "".join(f"c{i} = {i}\n" for i in range(10))
    parsed = parse_source("m.py", "python", long, "d")
    where = splice.region(long.encode(), parsed, long.replace("b = 2", "b = 3").encode(), 13)
    assert where is not None and (where.row, where.old_rows, where.new_rows) == (2, 1, 1)
    assert (where.first_node, where.end_node) == (1, 2)


def test_splicing_comes_before_a_kept_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kept tree would still be read whole; the spliced parse drops it, since it no longer
    matches the text, and a broken text is parsed whole (and, with its error, keeps no tree)."""
    count = _spliced_count(monkeypatch)
    trees = TreeCache()
    parsed = parse_source("m.py", "python", MODULE, "d", trees=trees)
    edited = MODULE.replace("first(2)", "first(3)")
    got = parse_source("m.py", "python", edited, "d", trees=trees, previous=(MODULE, parsed))
    assert parsed_fields(got) == parsed_fields(parse_source("m.py", "python", edited, "d"))
    assert count[0] == 1 and "m.py" not in trees._trees
    broken = edited + "def broken(:\n"
    got = parse_source("m.py", "python", broken, "d", trees=trees, previous=(edited, got))
    assert got.has_error and count[0] == 1 and "m.py" not in trees._trees


C_MODULE = """// SPDX-License-Identifier: GPL-2.0
#include <linux/fs.h>
#include "internal.h"

#define PAGES(x) ((x) >> PAGE_SHIFT)

struct holder {
\tint count;
\tstruct list_head list;
};

static int helper(struct holder *h)
{
\treturn h->count + PAGES(4096);
}

#ifdef CONFIG_HOLDER_DEBUG
static void dump(struct holder *h)
{
\tpr_info("%d\\n", helper(h));
}
#else
static inline void dump(struct holder *h) { }
#endif

int first(struct holder *h)
{
\tif (h->count)
\t\tdump(h);
\treturn helper(h);
}

SYSCALL_DEFINE2(hold, const char __user *, name, int, n)
{
\treturn do_hold(name, n);
}

/*
 * The last one.
 */
int last(void)
{
\treturn first(NULL);
}
"""

C_EDITS: list[tuple[str, Callable[[str], str], bool]] = [
    # the file holds an error (a macro tree-sitter cannot parse): edits away from it splice
    ("edit a function body", lambda t: t.replace("first(NULL)", "first(NULL) + 1"), True),
    ("append a function", lambda t: t + "\nvoid added(void)\n{\n\tlast();\n}\n", True),
    ("insert a define", _insert_after("};\n", "\n#define EXTRA 1\n"), True),
    ("edit inside an #ifdef group", lambda t: t.replace("%d", "%d!"), True),
    ("add a struct", _insert_after("#endif\n", "\nstruct added {\n\tint z;\n};\n"), True),
    ("rename a function", lambda t: t.replace("int helper(", "int helper2("), True),
    # the unit next to the one holding the error: recovering from it looked at this one
    ("edit next to an error", lambda t: t.replace("do_hold(name, n)", "do_hold(n)"), False),
    ("an #if left open", _insert_after("return first(NULL) + 1;\n", "#if X\n"), False),
    ("an edit away from the open #if", lambda t: t.replace("EXTRA 1", "EXTRA 2"), True),
    # an edit that takes an error away parses whole: the recovery from it spread who knows where
    ("the #if closed", lambda t: t.replace("#if X\n", ""), False),
]


def test_spliced_c_parses_equal_full_parses(monkeypatch: pytest.MonkeyPatch) -> None:
    count = _spliced_count(monkeypatch)
    text = C_MODULE
    parsed = parse_source("m.c", "c", text, "d0")
    assert parsed.has_error  # SYSCALL_DEFINE2's arguments are no C
    parsed = _edit_chain(count, "m.c", text, parsed, C_EDITS)
    assert [d.name for d in parsed.definitions][-2:] == ["last", "added"]


@pytest.mark.parametrize(
    ("what", "old", "new"),
    [
        # an ``else`` joins the ``if`` before the region, or the one the region ends with
        ("else after", "if (a)\n\tb();\nint x;\n", "if (a)\n\tb();\nelse\n\tc();\n"),
        ("else before", "int x;\nelse\n\tc();\n", "if (a)\n\tb();\nelse\n\tc();\n"),
        # a struct takes the ``;`` after it, on a later row too; without it, what follows
        (
            "struct's semicolon",
            "struct s { int a; }\n;\nint y;\n",
            "struct s { int a; }\nx;\nint y;\n",
        ),
        # a comment left open at the end of the row before the region
        (
            "open comment",
            "int a; /* was\nint b; */\nint c;\n",
            "int a; /* was\nint bb; */\nint c;\n",
        ),
        # a backslash joins the next line to a directive
        (
            "continued define",
            "#define M(x) \\\n\t(x)\nint y;\n",
            "#define M(x) \\\n\t(x + 1)\nint y;\n",
        ),
        ("continued comment", "int a; // note \\\nint b;\n", "int a; // note \\\nint bb;\n"),
    ],
)
def test_edges_of_a_c_region(
    monkeypatch: pytest.MonkeyPatch, what: str, old: str, new: str
) -> None:
    """Each edit splices, with a region grown over the statement it could join."""
    _padded_edit_splices(monkeypatch, "m.c", "c", what, old, new)


def test_a_c_parse_that_does_not_say_where_its_errors_are_parses_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A parse read back from a stored index keeps no error rows: the first edit of a file
    with an error parses it whole, and the parse it gives knows them."""
    count = _spliced_count(monkeypatch)
    parsed = dataclasses.replace(parse_source("m.c", "c", C_MODULE, "d"), error_rows=None)
    edited = C_MODULE.replace("first(NULL)", "first(NULL) + 1")
    got = parse_source("m.c", "c", edited, "d", previous=(C_MODULE, parsed))
    assert count[0] == 0 and got.error_rows is not None and got.error_rows.size
    again = edited.replace("+ 1", "+ 2")
    got = parse_source("m.c", "c", again, "d", previous=(edited, got))
    assert count[0] == 1
    assert parsed_fields(got) == parsed_fields(parse_source("m.c", "c", again, "d"))


def test_a_c_error_in_the_region_parses_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """A struct without its ``;`` gets a missing one after the comment that follows it, rows
    after the struct: an edit of the comment, whose region holds that error but not the
    struct, must not drop it."""
    count = _spliced_count(monkeypatch)
    padding = "".join(f"int c{i} = {i};\n" for i in range(10))
    old = padding + "struct s { int a; }\n/*\n * #define M(x) \\\n */\n\n#include <y.h>\n" + padding
    new = old.replace("#define M", "#defineM")
    parsed = parse_source("m.c", "c", old, "d")
    assert parsed.error_rows is not None and parsed.error_rows.tolist() == [[13, 13]]
    got = parse_source("m.c", "c", new, "d", previous=(old, parsed))
    assert parsed_fields(got) == parsed_fields(parse_source("m.c", "c", new, "d"))
    assert count[0] == 0


def test_a_loaded_index_splices_its_first_c_edit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A saved index keeps where each parse's errors are, so the first edit of a C file with
    an error, after a load, re-parses only what it touched, and updates as a rebuild would."""
    root = tmp_path / "r"
    root.mkdir()
    (root / "m.c").write_text(C_MODULE)
    RepoIndex.build(root, IndexConfig())
    loaded = RepoIndex.load(root, IndexConfig())
    count = _spliced_count(monkeypatch)
    edited = C_MODULE.replace("first(NULL)", "first(NULL) + 1")
    (root / "m.c").write_text(edited)
    loaded.update_file("m.c", edited)
    assert count[0] == 1
    fresh, _ = RepoIndex.build(root, IndexConfig(), save=False)
    assert parsed_fields(loaded.tables.parsed["m.c"]) == parsed_fields(fresh.tables.parsed["m.c"])


CPP_MODULE = """// The store.
#include <string>
#include "helper.h"

extern "C" {
int c_entry(int x);
}

namespace store {

template <typename T>
T twice(T x)
{
    return helper(x) + helper(x);
}

static const char * schema = R"sql(
CREATE TABLE t (a int); /* not a comment
)sql";

class Table : public Base {
public:
    int size() const { return count(); }

private:
    int n = 0;
    Base* parent_ = nullptr;  // a field of a class type: a fact of its own, kept in node order
};

[[nodiscard]] int first(int v)
{
    auto add = [&](int w) { return twice(w) + v; };
    return add(1);
}

}  // namespace store

int last()
{
    return store::first(2);
}
"""

CPP_EDITS: list[tuple[str, Callable[[str], str], bool]] = [
    # inside a namespace, its declarations are the units
    ("edit a function in the namespace", lambda t: t.replace("add(1)", "add(2)"), True),
    ("edit a template", lambda t: t.replace("helper(x) + helper(x)", "helper(x) * 2"), True),
    ("edit inside a raw string", lambda t: t.replace("TABLE t", "TABLE u"), True),
    ("edit an access specifier", lambda t: t.replace("private:", "protected:"), True),
    ("first in the namespace", _insert_after("namespace store {\n", "int zero = 0;\n"), True),
    ("last in the namespace", _insert_after("add(2);\n}\n", "\nvoid more() { first(3); }\n"), True),
    ("edit inside extern C", lambda t: t.replace("(int x)", "(int x, int y)"), True),
    ("edit after the namespace", lambda t: t.replace("first(2)", "first(4)"), True),
    # the namespace's own rows: the namespace is the unit, half the file or more
    ("rename the namespace", lambda t: t.replace("namespace store {", "namespace keep {"), False),
    # a raw string left open runs on to the end of the file, an error; while the file holds one,
    # the namespace is one unit
    ("a raw string left open", _insert_after("int zero = 0;\n", 'auto s = R"(\n'), False),
    ("the raw string closed", lambda t: t.replace('auto s = R"(\n', ""), False),
    ("an edit once it is whole again", lambda t: t.replace("first(3)", "first(5)"), True),
    # a static function after the class: its fact follows the class's field in node order
    (
        "static after a class",
        _insert_after("first(5); }\n", "static int later() { return 1; }\n"),
        True,
    ),
]


def test_spliced_cpp_parses_equal_full_parses(monkeypatch: pytest.MonkeyPatch) -> None:
    count = _spliced_count(monkeypatch)
    text = CPP_MODULE
    parsed = parse_source("m.cpp", "cpp", text, "d0")
    assert not parsed.has_error
    parsed = _edit_chain(count, "m.cpp", text, parsed, CPP_EDITS)
    names = [d.name for d in parsed.definitions]  # qualified by the renamed namespace
    assert {
        "keep.twice",
        "keep.Table",
        "keep.Table.size",
        "keep.first",
        "keep.more",
        "last",
    } <= set(names)


@pytest.mark.parametrize(
    ("what", "old", "new"),
    [
        # ``catch (long) {}`` alone parses as a function named catch; after a ``try`` it is
        # one more handler of it
        (
            "catch after",
            "int x;\ncatch (long) {}\n",
            "void g() try { f(); } catch (int) {}\ncatch (long) {}\n",
        ),
        # the row before the region opens what looks like a comment, in a raw string: the
        # region grows over it
        (
            "raw string before",
            'auto s = R"x(\n)" /* )x";\nint x;\n',
            'auto s = R"x(\n)" /* )x";\nint xx;\n',
        ),
    ],
)
def test_edges_of_a_cpp_region(
    monkeypatch: pytest.MonkeyPatch, what: str, old: str, new: str
) -> None:
    """Each edit splices, with a region grown over the unit it could join."""
    _padded_edit_splices(monkeypatch, "m.cpp", "cpp", what, old, new)


def _padded_edit_splices(
    monkeypatch: pytest.MonkeyPatch, path: str, language: str, what: str, old: str, new: str
) -> None:
    """``old`` edited into ``new`` between declarations splices, equal to a full parse."""
    count = _spliced_count(monkeypatch)
    padding = "".join(f"int c{i} = {i};\n" for i in range(10))
    old, new = padding + old + padding, padding + new + padding
    parsed = parse_source(path, language, old, "d")
    assert not parsed.has_error, what
    got = parse_source(path, language, new, "d", previous=(old, parsed))
    assert parsed_fields(got) == parsed_fields(parse_source(path, language, new, "d")), what
    assert count[0] == 1, what


def test_a_brace_that_closes_the_namespace_early_parses_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A ``}`` moved up closes the namespace before the region ends, without an error: the
    declarations after it are top-level ones now, the namespace's own ``}`` closes ``f``."""
    count = _spliced_count(monkeypatch)
    padding = "".join(f"int c{i} = {i};\n" for i in range(10))
    old = f"namespace n {{\n{padding}int a;\nvoid f()\n{{\n    x();\n}}\nint b;\n{padding}}}\n"
    new = old.replace("int a;\n", "int a;\n}\n").replace("    x();\n}\n", "    x();\n")
    parsed = parse_source("m.cpp", "cpp", old, "d")
    want = parse_source("m.cpp", "cpp", new, "d")
    assert not parsed.has_error and not want.has_error
    got = parse_source("m.cpp", "cpp", new, "d", previous=(old, parsed))
    assert parsed_fields(got) == parsed_fields(want)
    assert count[0] == 0


@pytest.mark.parametrize(
    ("what", "opening", "closing"),
    [
        ("a declaration on the opening row", "namespace n { int a;", "}"),
        ("a declaration on the closing row", "namespace n {", "int a; }"),
    ],
)
def test_a_namespace_whose_brace_rows_hold_more_is_one_unit(
    monkeypatch: pytest.MonkeyPatch, what: str, opening: str, closing: str
) -> None:
    """Its declarations parse alike inside a copy of its brace rows only when those hold
    nothing else; otherwise the namespace, most of the file here, parses whole."""
    count = _spliced_count(monkeypatch)
    padding = "".join(f"int c{i} = {i};\n" for i in range(10))
    old = f"{opening}\n{padding}int b;\n{padding}{closing}\nint tail;\n"
    new = old.replace("int b;", "int bb;")
    parsed = parse_source("m.cpp", "cpp", old, "d")
    assert not parsed.has_error, what
    got = parse_source("m.cpp", "cpp", new, "d", previous=(old, parsed))
    assert parsed_fields(got) == parsed_fields(parse_source("m.cpp", "cpp", new, "d")), what
    assert count[0] == 0, what


@pytest.mark.parametrize(
    ("what", "language", "old", "new"),
    [
        # outside a switch, ``default:`` takes in the statements after it: the region's...
        ("case before", "c", "default: x;\n#define A 1\n", "default: x;\nint y;\n"),
        # ...and those after the region's
        ("case in the region", "cpp", "int a;\nint b;\n", "default: x;\nint b;\n"),
    ],
)
def test_a_case_outside_a_switch_parses_whole(
    monkeypatch: pytest.MonkeyPatch, what: str, language: str, old: str, new: str
) -> None:
    count = _spliced_count(monkeypatch)
    padding = "".join(f"int c{i} = {i};\n" for i in range(10))
    old, new = padding + old + "int z;\n" + padding, padding + new + "int z;\n" + padding
    got = parse_source(
        "m", language, new, "d", previous=(old, parse_source("m", language, old, "d"))
    )
    assert parsed_fields(got) == parsed_fields(parse_source("m", language, new, "d")), what
    assert count[0] == 0, what

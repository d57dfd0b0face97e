"""Definition lookup (``repomem.context.definitions``) on files as an editor holds them while
the user types: the buffer often ends inside an unfinished statement."""

from __future__ import annotations

import gc
import random
import weakref
from pathlib import Path

import pytest
from repos import write_files

from repomem.config import IndexConfig
from repomem.context.cards import definition_card
from repomem.context.definitions import ANALOGY_CORE, _analogy, find_definitions
from repomem.index.parsing import split_lines
from repomem.index.repo import RepoIndex
from repomem.index.resolve import Resolver

# Cut inside the open tuple: tree-sitter's error recovery leaves no statement node at all, so
# the imports have none either.
UNFINISHED = (
    "import os\n\nfrom pkg.util import helper\n\n\n"
    '@helper.fixture(scope="session")\ndef environ():\n    """Doc."""\n    out = (\n'
    '        (os.environ, "A"),\n'
)


def test_imports_without_a_statement_node_still_give_cards(tmp_path: Path) -> None:
    root = write_files(
        tmp_path / "proj",
        {
            "pkg/__init__.py": "",
            "pkg/util.py": "def helper(x):\n    return x\n",
            "pkg/broken.py": UNFINISHED,
        },
    )
    index, _ = RepoIndex.build(root, IndexConfig(index_dir=str(tmp_path / "idx")), save=False)
    pf = index.tables.parsed["pkg/broken.py"]
    assert pf.n_nodes == 0 and pf.import_nodes and set(pf.import_nodes) == {-1}
    hits = find_definitions(index, "pkg/broken.py", UNFINISHED)
    assert [(h.card.path, h.card.name) for h in hits] == [("pkg/util.py", "helper")]


def test_a_loaded_files_cards_read_its_call_heads_not_its_call_sites(tmp_path: Path) -> None:
    """After a load, the cards of a cursor in a file decode none of its call sites: which
    names the file calls (an import none of its calls uses yet ranks higher) is saved apart,
    and gives the cards a fresh build gives, a pending import included."""
    text = "import os\nimport json\n\nfrom pkg.util import helper\n\n\ndef f(x):\n"
    text += "    return helper(os.path.join(x))\n\n\ndef g(y):\n    "
    root = write_files(
        tmp_path / "proj",
        {"pkg/__init__.py": "", "pkg/util.py": "def helper(x):\n    return x\n", "pkg/a.py": text},
    )
    config = IndexConfig(index_dir=str(tmp_path / "idx"))
    built, _ = RepoIndex.build(root, config)
    loaded = RepoIndex.load(root, config)

    def cards(index: RepoIndex) -> list[tuple[str, str, str]]:
        return [
            (h.card.path, h.card.name, h.how) for h in find_definitions(index, "pkg/a.py", text)
        ]

    assert cards(loaded) == cards(built)
    assert ("pkg/util.py", "helper") in {c[:2] for c in cards(built)}
    pf = loaded.parse("pkg/a.py")
    assert pf is not None and pf._callsites is not None, "the cards decoded its call sites"
    assert pf.call_heads() == built.parse("pkg/a.py").call_heads() == {"helper", "os"}
    assert [c.parts for c in pf.calls] == [c.parts for c in built.parse("pkg/a.py").calls]
    assert pf.call_heads() == {"helper", "os"}  # from the call sites, once decoded


def test_a_file_reached_for_its_imports_makes_neither_its_bases_nor_its_error_rows(
    tmp_path: Path,
) -> None:
    """A loaded file that a cursor's names reach through its imports decodes its saved
    symbols' JSON but makes only what is read of it (its imports): its bases and error rows,
    which neither its bindings nor its cards read, are made when read, as saved."""
    files = {
        "pkg/__init__.py": "",
        "pkg/util.py": "def helper(x):\n    return x\n",
        "pkg/mid.py": "from pkg.util import helper\n\n\nclass Base(dict):\n    pass\n",
        "pkg/a.py": "from pkg import mid\n\n\ndef f(x):\n    return mid.helper(x)\n",
    }
    root = write_files(tmp_path / "proj", files)
    config = IndexConfig(index_dir=str(tmp_path / "idx"))
    built, _ = RepoIndex.build(root, config)
    loaded = RepoIndex.load(root, config)
    text = files["pkg/a.py"] + "    "
    hits = find_definitions(loaded, "pkg/a.py", text)
    assert ("pkg/util.py", "helper") in {(h.card.path, h.card.name) for h in hits}
    mid = loaded.parse("pkg/mid.py")
    assert mid is not None and "imports" in vars(mid)
    assert "bases" not in vars(mid) and "error_rows" not in vars(mid)
    fresh = built.parse("pkg/mid.py")
    assert mid.bases == fresh.bases == {"Base": [("dict",)]}
    assert mid.imports == fresh.imports and mid.has_error == fresh.has_error
    assert mid.error_rows is not None


# A class of more methods than a skeleton lists, so that its card depends on the calls of
# other files; CRLF line ends and non-ASCII text, so that reading lines from the saved UTF-8
# must give the lines a split of the text gives.
_SHAPES = "\n".join(
    ["class Shape:", '    """A shape — with ünicode."""', ""]
    + [f"    def m{i}(self, a, b=2):\n        return a\n" for i in range(14)]
)
_CARDS_REPO = {
    "pkg/__init__.py": "",
    "pkg/shapes.py": _SHAPES + "\n\nLIMIT = 10\n",
    "pkg/util.py": (
        "import functools\r\n\r\n\r\n@functools.cache\r\n"
        "def helper(x: int,\r\n           y: int = 0) -> int:\r\n"
        '    """Add — twice.\r\n\r\n    More.\r\n    """\r\n    return x + y\r\n'
    ),
    "pkg/use.py": (
        "from pkg import shapes\nfrom pkg.shapes import Shape\nfrom pkg.util import helper\n\n\n"
        "def run(s: Shape):\n    s.m3(1)\n    s.m7(2)\n    helper(shapes.LIMIT)\n    "
    ),
    "lib/geo.h": (
        "#ifndef GEO_H\n#define GEO_H\n/** The area. */\n"
        "int area(int w,\n         int h);\n#endif\n"
    ),
    "lib/main.c": '#include "geo.h"\n\nint main(void) {\n    return area(1, 2);\n}\n',
}


def _cards_of(index: RepoIndex) -> list[tuple[object, ...]]:
    """Every card the files' cursors get (at their ends), all that shows of them."""
    out: list[tuple[object, ...]] = []
    for path in ("pkg/use.py", "lib/main.c"):
        text = index.file_text(path) or ""
        for h in find_definitions(index, path, text):
            c = h.card
            out.append((path, c.path, c.line, c.name, c.kind, c.text, c.methods, c.brief, h.how))
    return out


def test_cards_after_a_load_and_after_edits_are_a_fresh_builds(tmp_path: Path) -> None:
    """A loaded index reads its files' lines from the saved UTF-8 as cards ask for them: the
    cards are a fresh build's, CRLF and non-ASCII files included; after edits (a class's
    callers changing its skeleton, a file's text) they are a rebuild's of the edited tree."""
    root = write_files(tmp_path / "proj", _CARDS_REPO)
    config = IndexConfig(index_dir=str(tmp_path / "idx"))
    fresh, _ = RepoIndex.build(root, config, save=False)
    RepoIndex.build(root, config)
    loaded = RepoIndex.load(root, config)
    expected = _cards_of(fresh)
    shown = "\n".join(str(c[5]) for c in expected)
    assert "ünicode" in shown and "Add — twice." in shown and "int h);" in shown
    assert _cards_of(loaded) == expected
    for path, text in _CARDS_REPO.items():  # each card as cut from the split text
        pf = loaded.parse(path)
        assert pf is not None
        for d in pf.definitions:
            split = definition_card(path, pf, split_lines(text), d)
            assert definition_card(path, pf, loaded.file_lines(path), d) == split
    edits = {
        "pkg/use.py": _CARDS_REPO["pkg/use.py"] + "s.m11(3)\n    s.m12(4)\n    s.m13(5)\n    ",
        "pkg/util.py": _CARDS_REPO["pkg/util.py"].replace("Add — twice.", "Add, thrice."),
        "lib/geo.h": _CARDS_REPO["lib/geo.h"].replace("int h);", "int h, int d);"),
    }
    for path, text in edits.items():
        loaded.update_file(path, text)
        (root / path).write_text(text, encoding="utf-8")
    rebuilt, _ = RepoIndex.build(root, IndexConfig(index_dir=str(tmp_path / "idx2")), save=False)
    after = _cards_of(rebuilt)
    assert after != expected
    assert _cards_of(loaded) == after
    # saved again and loaded, each parse's parts (decoded as read) are the rebuild's too
    loaded.save()
    again = RepoIndex.load(root, config)
    assert _cards_of(again) == after
    for path, pf in rebuilt.parses().items():
        saved = again.parse(path)
        assert saved is not None and saved.definition_columns() == pf.definition_columns()
        assert (saved.imports, saved.bases, saved.calls) == (pf.imports, pf.bases, pf.calls)


def test_cards_do_not_keep_the_parses_a_tidy_drops(tmp_path: Path) -> None:
    """A loaded index drops the parses it has not read since its last pause; the cards cut
    from them hold them weakly, so an editing session does not keep the parse of every file
    a cursor's cards came from, and a card asked again after the drop is cut anew."""
    text = "from pkg.util import helper\n\n\ndef f(x):\n    return helper(x)\n"
    root = write_files(
        tmp_path / "proj",
        {"pkg/__init__.py": "", "pkg/util.py": "def helper(x):\n    return x\n", "pkg/a.py": text},
    )
    config = IndexConfig(index_dir=str(tmp_path / "idx"))
    RepoIndex.build(root, config)
    loaded = RepoIndex.load(root, config)
    first = [h.card for h in find_definitions(loaded, "pkg/a.py", text)]
    assert [c.name for c in first] == ["helper"]
    parse = weakref.ref(loaded.tables.parsed["pkg/util.py"])
    loaded.tidy()
    loaded.tidy()  # unread since the last pause: dropped
    gc.collect()
    assert parse() is None
    assert [h.card for h in find_definitions(loaded, "pkg/a.py", text)] == first


def test_a_large_class_card_follows_the_calls_an_update_moves(tmp_path: Path) -> None:
    """A class too large for a whole skeleton lists the methods the repository calls most:
    its card is kept only while the index is the same (a file calling other methods changes
    them), and a smaller class's card, which asks for no calls, is kept across updates."""
    big = "class Big:\n" + "".join(f"    def m{i}(self):\n        pass\n\n" for i in range(14))
    small = "class Small:\n    def run(self):\n        pass\n"
    calls = "from pkg.big import Big\n\n\ndef use(b):\n" + "    Big.m12(b)\n" * 3
    cursor = "from pkg.big import Big\nfrom pkg.small import Small\n\n\ndef f(x: Big, y: Small):\n"
    cursor += "    x.m0()\n    y.run()\n    "
    root = write_files(
        tmp_path / "proj",
        {
            "pkg/__init__.py": "",
            "pkg/big.py": big,
            "pkg/small.py": small,
            "pkg/calls.py": calls,
            "pkg/cursor.py": cursor,
        },
    )
    index, _ = RepoIndex.build(root, IndexConfig(index_dir=str(tmp_path / "idx")), save=False)

    def card(name: str) -> str:
        hits = find_definitions(index, "pkg/cursor.py", cursor)
        return next(h.card.text for h in hits if h.card.name == name)

    assert "def m12(self)" in card("Big") and "def m13(self)" not in card("Big")
    kept = card("Small")
    index.update_file("pkg/calls.py", calls.replace("m12", "m13"))
    assert "def m13(self)" in card("Big") and "def m12(self)" not in card("Big")
    assert card("Small") is kept


def test_a_module_attribute_no_line_begins_with_opens_no_lines(tmp_path: Path) -> None:
    """``mod.NAME`` that resolves to no definition is looked up as a module constant, whose
    assignment begins a line of the module: where no line begins with NAME, the module's
    lines are not split for it (a first lookup's cost at every such attribute); where one
    does, the constant's card comes as before."""
    root = write_files(
        tmp_path / "proj",
        {
            "pkg/__init__.py": "",
            "pkg/consts.py": "# LIMIT is 10\nLIMIT = 10\nx = 'NAME'  # NAME\n"
            'DOC = """\nx in a string\n"""\n',
            "pkg/use.py": "from pkg import consts\n\n\ndef f():\n    return consts.NAME\n",
            "pkg/other.py": "from pkg import consts\n\n\ndef g():\n    return consts.LIMIT\n",
        },
    )
    config = IndexConfig(index_dir=str(tmp_path / "idx"))
    RepoIndex.build(root, config)
    index = RepoIndex.load(root, config)

    text = index.file_text("pkg/use.py") or ""
    assert [h.card.path for h in find_definitions(index, "pkg/use.py", text)] == []
    assert "pkg/consts.py" not in index._search._line_cache
    text = index.file_text("pkg/other.py") or ""
    hits = find_definitions(index, "pkg/other.py", text)
    assert [(h.card.name, h.card.kind, h.card.text) for h in hits] == [
        ("LIMIT", "constant", "LIMIT = 10")
    ]
    assert index.rows_beginning("pkg/consts.py", "LIMIT") == [1]
    assert index.rows_beginning("pkg/consts.py", "x") == [2]  # not a string's line
    assert index.rows_beginning("pkg/consts.py", "# LIMIT") == []  # statements' rows only
    assert index.rows_beginning("pkg/consts.py", "NAME") == []  # inside lines only
    assert index.rows_beginning("pkg/missing.py", "LIMIT") == []


def test_a_name_that_resolves_to_nothing_is_looked_up_once_a_cursor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A local heads dotted names and is asked as a module constant too: its lookup in the
    cursor's file (which searches every ``import *`` of the file) is made once."""
    text = (
        "from pkg import util\nfrom pkg.util import Box\n\n\ndef f(items):\n"
        "    items.append(util.helper(1))\n    items.extend(Box.size)\n    items.sort()\n    "
    )
    root = write_files(
        tmp_path / "proj",
        {
            "pkg/__init__.py": "",
            "pkg/util.py": "def helper(x):\n    return x\n\n\nclass Box:\n"
            "    def size(self):\n        return 1\n",
            "pkg/a.py": text,
        },
    )
    index, _ = RepoIndex.build(root, IndexConfig(index_dir=str(tmp_path / "idx")), save=False)
    resolver = index.resolver
    asked: list[str] = []
    lookup = type(resolver)._lookup

    def counted(self: Resolver, path: str, name: str, depth: int) -> tuple[str, str | None] | None:
        if path == "pkg/a.py" and depth == 0:
            asked.append(name)
        return lookup(self, path, name, depth)

    monkeypatch.setattr(type(resolver), "_lookup", counted)
    hits = find_definitions(index, "pkg/a.py", text)
    assert {(h.card.path, h.card.name) for h in hits} >= {
        ("pkg/util.py", "helper"),
        ("pkg/util.py", "Box.size"),
    }
    assert asked.count("items") == 1


def test_file_callees_rank_as_all_of_them_sorted() -> None:
    """The file's calls grouped once (``_CallGroups``) rank as sorting every group by
    (most calls, nearest call, file and node) would, ties at the cut included; a test file's
    definitions and the file's own are not offered."""
    import random
    from types import SimpleNamespace

    import numpy as np

    from repomem.context.definitions import _CallGroups

    rng = random.Random(3)
    targets = ["pkg/a.py", "pkg/b.py", "tests/test_c.py", "pkg/main.py"]
    node_start = np.array(sorted(rng.sample(range(400), 60)), np.int32)
    calls = np.array(
        [(rng.randrange(-1, 62), rng.randrange(4), rng.randrange(6)) for _ in range(300)], np.int64
    )
    index = SimpleNamespace(resolved_calls=lambda path: (targets, calls))
    groups = _CallGroups(index, "pkg/main.py", SimpleNamespace(node_start=node_start))  # type: ignore[arg-type]
    for cursor in (0, 57, 200, 399):
        seen: dict[tuple[str, int], list[int]] = {}
        for src, t, node in calls.tolist():
            row = int(node_start[src]) if 0 <= src < node_start.size else cursor
            entry = seen.setdefault((targets[t], node), [0, abs(cursor - row)])
            entry[0] += 1
            entry[1] = min(entry[1], abs(cursor - row))
        ranked = sorted(
            (-count, near, key)
            for key, (count, near) in seen.items()
            if key[0] in ("pkg/a.py", "pkg/b.py")
        )
        for n in (0, 1, 3, 8, 20):
            expected = [(key, near, -count) for count, near, key in ranked[:n]]
            assert groups.top(cursor, n) == expected


def _analogy_by_every_pair(name: str, called: str) -> tuple[tuple[str, str, str, str], str] | None:
    """``_analogy`` as first written: every start in ``name`` against every start in
    ``called``, the first longest run kept."""
    best = (0, 0, 0)
    for i in range(len(name)):
        for j in range(len(called)):
            k = 0
            while i + k < len(name) and j + k < len(called) and name[i + k] == called[j + k]:
                k += 1
            if k > best[0]:
                best = (k, i, j)
    k, i, j = best
    if k < ANALOGY_CORE or k in (len(name), len(called)):
        return None
    return (name[:i], name[i + k :], called[:j], called[j + k :]), name[i : i + k]


def test_a_names_analogy_is_the_first_longest_run_they_share() -> None:
    """The run is searched only where a shared run of ``ANALOGY_CORE`` characters starts;
    the rule found is the one every pair of starts finds, ties and repeats included."""
    assert _analogy("RNSVGFeOffset", "FeOffsetView") == (("RNSVG", "", "", "View"), "FeOffset")
    assert _analogy("Marker", "MarkerView") is None  # the whole of one: not an analogue
    rng = random.Random(7)
    for _ in range(3000):
        name = "".join(rng.choice("abAB_") for _ in range(rng.randint(1, 14)))
        called = "".join(rng.choice("abAB_") for _ in range(rng.randint(1, 14)))
        assert _analogy(name, called) == _analogy_by_every_pair(name, called), (name, called)

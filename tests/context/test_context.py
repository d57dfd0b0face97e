"""The context engine: definition cards, the names a cursor's code uses, query-time Eq. 8
ranking, and the definitions block of the prompt."""

from __future__ import annotations

import contextlib
import json
import math
import re
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import pytest
from fakemodel import FakeModel
from repos import make_repo, run_repomem

from repomem.completion.prompt import DEFINITIONS_INTRO, build_prompt, format_card
from repomem.context.cards import Card, constant_card, definition_card
from repomem.context.definitions import (
    _SPACES,
    _TYPED,
    _Finder,
    _uses_name,
    find_definitions,
    resolve_names,
)
from repomem.context.pytypes import _parameter_annotation
from repomem.context.usages import find_usages
from repomem.core import Exclusion
from repomem.index.parsing import parse_source, split_lines
from repomem.index.relations import node_strengths
from repomem.index.repo import RepoIndex

MODULE = '''\
import os

TIMEOUT: float = 3.5


class Client(Base):
    """Talks to the server.

    Keeps one connection open."""

    retries = 3

    def __init__(self, host: str, port: int = 80) -> None:
        self.host = host

    @property
    def url(self) -> str:
        return f"http://{self.host}"

    def send(self, payload: bytes, *, timeout: float = TIMEOUT) -> int:
        """Send ``payload``; return the status."""
        return 200

    def _reconnect(self):
        pass


@cached(size=8)
def connect(host,
            port=80,
            *, secure: bool = False) -> "Client":
    """Open a client.

    A second paragraph the card leaves out."""
    return Client(host, port)
'''


def cards_of(text: str, path: str = "net.py", language: str = "python") -> dict[str, Card]:
    pf = parse_source(path, language, text, "digest")
    lines = split_lines(text)
    return {d.name: definition_card(path, pf, lines, d) for d in pf.definitions}


def test_function_card_is_the_signature_as_written_with_the_first_doc_paragraph() -> None:
    card = cards_of(MODULE)["connect"]
    assert card.kind == "function"
    assert card.line == MODULE.splitlines().index("def connect(host,")
    assert card.text == (
        "@cached(size=8)\n"
        "def connect(host,\n"
        "            port=80,\n"
        '            *, secure: bool = False) -> "Client":\n'
        '    """Open a client.\n'
        '    ..."""'
    )
    assert card.header == "def connect(host,"


def test_method_card_keeps_decorators_and_a_one_line_docstring() -> None:
    cards = cards_of(MODULE)
    assert cards["Client.url"].text == "@property\ndef url(self) -> str:"
    assert cards["Client.send"].text == (
        "def send(self, payload: bytes, *, timeout: float = TIMEOUT) -> int:\n"
        '    """Send ``payload``; return the status."""'
    )


def test_class_card_is_a_skeleton_of_its_public_methods() -> None:
    card = cards_of(MODULE)["Client"]
    assert card.kind == "class"
    assert card.text == (
        "class Client(Base):\n"
        '    """Talks to the server.\n'
        '    ..."""\n'
        "    def __init__(self, host: str, port: int = 80) -> None: ...\n"
        "    def url(self) -> str: ...\n"
        "    def send(self, payload: bytes, *, timeout: float = TIMEOUT) -> int: ..."
    )
    assert "_reconnect" not in card.text


def test_cards_have_a_brief_form_of_what_a_call_needs() -> None:
    cards = cards_of(MODULE)
    # a function: its signature on one line, no decorator or docstring
    assert (
        cards["connect"].brief == 'def connect(host, port=80, *, secure: bool = False) -> "Client":'
    )

    # a class: its header, the constructor, the skeleton's other methods by name
    client = cards["Client"].briefed()
    assert client.text == (
        "class Client(Base):\n"
        "    def __init__(self, host: str, port: int = 80) -> None: ...\n"
        "    # methods: url, send"
    )
    assert client.methods == cards["Client"].methods and client.brief == ""
    # a card no longer than its brief form has none
    assert cards["Client._reconnect"].brief == ""


def test_constant_card_is_its_assignment_line() -> None:
    pf = parse_source("net.py", "python", MODULE, "digest")
    card = constant_card("net.py", pf, split_lines(MODULE), "TIMEOUT")
    assert card == Card("net.py", 2, "TIMEOUT", "constant", "TIMEOUT: float = 3.5")
    assert constant_card("net.py", pf, split_lines(MODULE), "retries") is None  # not top level


def test_a_constant_card_is_the_first_assignment_from_the_rows_given_or_all() -> None:
    text = "X = 1\nif X:\n    Y = 2\nX: int = 3\nZ == 4\nW = (\n    5,\n)\nXY = 6\n"
    pf = parse_source("m.py", "python", text, "digest")
    lines = split_lines(text)
    for name in ("X", "W", "Y", "Z", "XY"):
        rows = [row for row, line in enumerate(lines) if line.startswith(name)]
        assert constant_card("m.py", pf, lines, name, rows) == constant_card(
            "m.py", pf, lines, name
        )
    assert constant_card("m.py", pf, lines, "X") == Card("m.py", 0, "X", "constant", "X = 1")
    assert constant_card("m.py", pf, lines, "W").text == "W = (\n    5,\n)"
    assert constant_card("m.py", pf, lines, "Y") is None  # not at the top of the file
    assert constant_card("m.py", pf, lines, "Z") is None  # a comparison
    # only the rows given are read; one that begins with a longer name (``XY``) is passed over
    assert constant_card("m.py", pf, lines, "X", [8]) is None
    assert constant_card("m.py", pf, lines, "X", [3, 8]).text == "X: int = 3"


class _Reads(list[str]):
    """Lines that note which rows are read."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__(lines)
        self.read: list[int | slice] = []

    def __getitem__(self, i: Any) -> Any:
        self.read.append(i)
        return super().__getitem__(i)


def test_a_constant_card_reads_only_the_rows_that_begin_with_its_name() -> None:
    """Given the rows whose line begins with the name (``RepoIndex.rows_beginning``), a
    module constant's card reads those lines and its own, not the first line of each of the
    module's statements."""
    text = "".join(f"A{i} = {i}\n" for i in range(50)) + "B = (\n    1,\n)\n"
    pf = parse_source("m.py", "python", text, "digest")
    lines = _Reads(split_lines(text))
    card = constant_card("m.py", pf, lines, "B", [50])
    assert card == Card("m.py", 50, "B", "constant", "B = (\n    1,\n)", (), "B = (")
    assert all(not isinstance(i, int) or i == 50 for i in lines.read)


def test_c_card_stops_before_the_body() -> None:
    text = "static int\nadd(int a,\n    int b) {\n  return a + b;\n}\n"
    assert cards_of(text, "m.c", "c")["add"].text == "static int\nadd(int a,\n    int b)"


# ---------------------------------------------------------------------------- finding names
APP = """\
from pkg.net import Client, connect
from pkg import net
from pkg.net import TIMEOUT
from pkg.util import helper


class Service(Client):
    def run(self, other: Client):
        conn = net.connect("h")
        made = Client("h")
        made.send(b"x")
        other.url
        self.send(b"y", timeout=TIMEOUT)
"""


@pytest.fixture()
def app_index(tmp_path: Path) -> RepoIndex:
    root = make_repo(tmp_path / "r", {"pkg/net.py": MODULE, "pkg/app.py": APP})
    index, _ = RepoIndex.build(root, save=False)
    return index


def found(index: RepoIndex, left: str, draft: str = "") -> dict[str, tuple[str, str]]:
    """name as written -> (card path, card name)."""
    hits = find_definitions(index, "pkg/app.py", left, draft=draft)
    return {h.name: (h.card.path, h.card.name) for h in hits}


def test_names_resolve_through_imports_self_bases_and_typed_receivers(app_index) -> None:
    names = found(app_index, APP)
    assert names["net.connect"] == ("pkg/net.py", "connect")  # module attribute
    assert "made.send" not in names  # the same definition, found nearer the cursor as self.send
    early = found(app_index, APP.split("        other.url")[0])
    assert early["made.send"] == ("pkg/net.py", "Client.send")  # constructor-typed receiver
    assert names["other.url"] == ("pkg/net.py", "Client.url")  # annotated parameter
    assert names["self.send"] == ("pkg/net.py", "Client.send")  # through the base class
    assert names["TIMEOUT"] == ("pkg/net.py", "TIMEOUT")  # an imported constant
    assert names["helper"] == ("pkg/util.py", "helper")  # imported, not used yet
    # each definition is listed once, whatever the number of names for it
    hits = find_definitions(app_index, "pkg/app.py", APP)
    assert len({(h.card.path, h.card.name) for h in hits}) == len(hits)


def test_an_untyped_receiver_finds_the_only_method_so_named(app_index) -> None:
    left = APP + "        result = opts.send(b'z')\n        data.get('k')\n        x.run()\n"
    names = found(app_index, left)
    assert names["opts.send"] == ("pkg/net.py", "Client.send")  # one `send` in the repository
    assert "data.get" not in names  # built-in types have a `get`: never guessed
    assert "x.run" not in names  # Base.run and Core.go's callers: `run` is not unique
    hit = next(h for h in find_definitions(app_index, "pkg/app.py", left) if h.name == "opts.send")
    assert hit.how.endswith("guessed: the only definition so named")


TYPED_FILES = {
    "lib/__init__.py": "",
    "lib/files.py": "class SourceFile:\n    path: str\n\n    def read(self):\n        pass\n",
    "lib/scorer.py": (
        "class RetrievedFragment:\n    @property\n    def path(self):\n        return ''\n"
    ),
    "lib/app.py": (
        "from lib.files import SourceFile\n\n\n"
        "def prepare(f: SourceFile, g: Optional[SourceFile], files: list[SourceFile]):\n"
        "    a = f.path\n    b = g.path\n    c = [x.path for x in files]\n"
        "    for y in other:\n        y.path\n"
    ),
    "tests/test_helpers.py": "def check_all(x):\n    pass\n",
}


def test_a_typed_receivers_field_is_never_another_classs_method(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", TYPED_FILES)
    index, _ = RepoIndex.build(root, save=False)
    left = TYPED_FILES["lib/app.py"]
    typed = left.split("    for y")[0]
    # f, g and x are SourceFiles (annotated, Optional[...], items of list[...]): their
    # ``path`` is a field, not RetrievedFragment.path, the only definition named ``path``
    for cut in ("    b =", "    c =", "    for y"):
        cards = {h.card.name for h in find_definitions(index, "lib/app.py", typed.split(cut)[0])}
        assert "RetrievedFragment.path" not in cards
    # y is a loop variable of unknown type: the method-by-name guess, labelled as one
    names = {h.name: h for h in find_definitions(index, "lib/app.py", left)}
    assert names["y.path"].card.name == "RetrievedFragment.path"
    assert names["y.path"].how.endswith("guessed: the only definition so named")
    typed = find_definitions(index, "lib/app.py", left + "    f.read()\n")
    assert [h.how for h in typed if h.name == "f.read"] == ["named here, receiver typed SourceFile"]


def test_the_method_by_name_guess_never_reaches_a_test_file_from_code(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", TYPED_FILES)
    index, _ = RepoIndex.build(root, save=False)
    left = "def go(obj):\n    obj.check_all(1)\n"
    assert "obj.check_all" not in {h.name for h in find_definitions(index, "lib/app.py", left)}
    index.update_file("tests/test_other.py", left)
    tests = {h.name: h.card for h in find_definitions(index, "tests/test_other.py", left)}
    assert tests["obj.check_all"].path == "tests/test_helpers.py"


DOCUMENTED = (
    "from lib import files\n\n\n"
    + "".join(f"def filler{i}(x):\n    return x\n\n\n" for i in range(60))
    + 'def documented():\n    """Calls files.SourceFile() and prepare(f).\n\n'
    + "".join(f"    Line {i}: files.SourceFile.read(); it's prepare() again\n" for i in range(50))
)


def test_names_in_docstrings_and_comments_make_no_cards(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {**TYPED_FILES, "lib/doc.py": DOCUMENTED + '    """\n'})
    index, _ = RepoIndex.build(root, save=False)
    # the cursor is 50 lines into a docstring opened above the 40 lines names are read from
    hits = find_definitions(index, "lib/doc.py", DOCUMENTED)
    assert hits == []  # ``files`` is a module: only a name in the docstring could make a card
    code = "\n".join(
        ["from lib import files", "# files.SourceFile() in a comment", "x = 'files.SourceFile()'"]
    )
    index.update_file("lib/doc.py", code + "\n")
    assert find_definitions(index, "lib/doc.py", code) == []
    called = {h.name for h in find_definitions(index, "lib/doc.py", code + "\nfiles.SourceFile()")}
    assert "files.SourceFile" in called


def test_jsdoc_and_block_comments_make_no_cards(tmp_path: Path) -> None:
    files = {
        # scripts (no import, no export) share their top-level functions, so ``of`` is
        # reachable from use.ts, and only code may name it
        "src/of.ts": "function of(...args: number[]) {\n  return args;\n}\n",
        "src/pluck.ts": "function pluck(key: string) {\n  return key;\n}\n",
        "src/use.ts": (
            "/**\n * Emits a portion of the context.\n *\n * @example\n"
            " * const x = pluck('a');\n */\n"
            "function first() {\n  const s = `of(${1})`; /* pluck(2) */\n"
            "  // of(3)\n  return 'pluck(4)';\n}\n"
        ),
    }
    root = make_repo(tmp_path / "r", files)
    index, _ = RepoIndex.build(root, save=False)
    hits = find_definitions(index, "src/use.ts", files["src/use.ts"])
    assert {h.card.name for h in hits} <= {"first"}
    called = find_definitions(index, "src/use.ts", files["src/use.ts"] + "of(1);\n")
    assert "of" in {h.card.name for h in called}


def test_the_draft_brings_its_names(app_index) -> None:
    left = APP.split("        conn =")[0]  # connect is imported, not called yet
    before = {h.name: h for h in find_definitions(app_index, "pkg/app.py", left)}
    assert not before["connect"].how.startswith("draft") and before["connect"].distance > 0
    after = {
        h.name: h for h in find_definitions(app_index, "pkg/app.py", left, draft="connect('h')")
    }
    assert after["connect"].how.startswith("draft") and after["connect"].distance == 0


def test_a_called_name_outranks_an_only_imported_one(app_index) -> None:
    left = APP.split("        made =")[0]  # connect is called, helper only imported
    hits = find_definitions(app_index, "pkg/app.py", left)
    rank = {h.card.name: i for i, h in enumerate(hits)}
    strength = {h.card.name: h.strength for h in hits}
    assert strength["connect"] > strength["helper"] > 0
    assert rank["connect"] < rank["helper"]


def test_a_typed_receivers_method_named_here_outranks_an_only_imported_name(
    app_index,
) -> None:
    # the index resolves no call through a receiver the cursor's context types: the name the
    # window writes is still one call edge from its definition, not below every import
    filler = "".join(f"N{i} = {i}\n" for i in range(30))
    code = "def go(other: Client):\n    other.send(b'x')\n"
    left = APP.split("class Service")[0] + filler + "\n\n" + code
    app_index.update_file("pkg/app.py", left)
    hits = find_definitions(app_index, "pkg/app.py", left)
    rank = {h.name: i for i, h in enumerate(hits)}
    strength = {h.name: h.strength for h in hits}
    assert strength["other.send"] > strength["helper"] > 0
    assert rank["other.send"] < rank["helper"]


def test_cards_follow_the_index_as_files_change(app_index) -> None:
    before = {h.card.name: h.card for h in find_definitions(app_index, "pkg/app.py", APP)}
    assert before["connect"].text.startswith("@cached(size=8)\ndef connect(host,")
    app_index.update_file("pkg/net.py", MODULE.replace("def connect(host,", "def connect(url,"))
    after = {h.card.name: h.card for h in find_definitions(app_index, "pkg/app.py", APP)}
    assert after["connect"].text.startswith("@cached(size=8)\ndef connect(url,")


BIG = "class Big:\n    def __init__(self, n):\n        self.n = n\n" + "".join(
    f"\n    def m{i}(self):\n        return {i}\n" for i in range(14)
)


def test_a_large_class_lists_the_methods_the_repository_calls_most(tmp_path: Path) -> None:
    use = "from pkg.big import Big\n\nb = Big(1)\n\n\nclass Sub(Big):\n    def run(self):\n"
    calls = "        self.m12()\n        self.m12()\n        self.m13()\n"
    root = make_repo(tmp_path / "r", {"pkg/big.py": BIG, "pkg/use.py": use + calls})
    index, _ = RepoIndex.build(root, save=False)

    def skeleton() -> Card:
        return next(
            h.card for h in find_definitions(index, "pkg/use.py", use) if h.card.name == "Big"
        )

    card = skeleton()
    shown = [line.split("(")[0].split()[-1] for line in card.text.splitlines()[1:-1]]
    # the constructor, the two called methods, then source order; listed in source order
    assert shown == ["__init__", *(f"m{i}" for i in range(7)), "m12", "m13"]
    assert card.text.endswith("# ... 5 more methods")
    pf = index.tables.parsed["pkg/big.py"]
    starts = {d.name: int(pf.node_start[d.node]) for d in pf.definitions}
    assert card.methods == tuple(starts[f"Big.{name}"] for name in shown)
    # another file's edit changes what the repository calls, and the card follows
    calls = "        self.m9()\n        self.m9()\n        self.m10()\n"
    index.update_file("pkg/use.py", use + calls)
    assert "m9" in skeleton().text and "m12" not in skeleton().text


GEO = "def scale(vector, weight):\n    return [v * weight for v in vector]\n"
CALLER = "from pkg.geo import scale\n\n\ndef grow(points):\n{body}    return scale(points, 2.0)\n"


def test_usages_lift_the_window_around_a_call_from_another_file(tmp_path: Path) -> None:
    filler = "".join(f"    x{i} = {i}\n" for i in range(30))
    cursor = "from pkg.geo import scale\n\npoints = [1, 2]\nout = scale(points, 3)\n"
    root = make_repo(
        tmp_path / "r",
        {
            "pkg/geo.py": GEO,
            "pkg/caller.py": CALLER.format(body=filler),
            "pkg/other.py": "def unrelated():\n    return 1\n",
            "pkg/cursor.py": cursor,
        },
    )
    index, _ = RepoIndex.build(root, save=False)
    hits = find_definitions(index, "pkg/cursor.py", cursor)
    assert hits[0].card.name == "scale"
    (usage,) = find_usages(index, "out = scale(points, 3)", "pkg/cursor.py", hits, k=2)
    # the window around the call (not moved forward by the stride), from the caller's file
    assert usage.path == "pkg/caller.py"
    assert "return scale(points, 2.0)" in usage.shown
    start = usage.locations[0].start
    assert start <= 34 < usage.locations[0].end  # the call's 0-based line
    # a fragment already shown, or one the exclusion hides, is not lifted again
    shown = index.retrieve("return scale(points, 2.0)", k=10, alpha=0.0)
    again = find_usages(
        index,
        "out = scale(points, 3)",
        "pkg/cursor.py",
        hits,
        k=2,
        retrieved=[f for f in shown if f.fragment_id == usage.fragment_id],
    )
    assert all(u.fragment_id != usage.fragment_id for u in again)
    hidden = Exclusion("pkg/caller.py", 0)
    assert find_usages(index, "scale", "pkg/cursor.py", hits, k=2, exclusion=hidden) == []
    # the cursor's own file is never a usage (the left context shows it)
    from_caller = find_usages(index, "scale", "pkg/caller.py", hits, k=2)
    assert [u.path for u in from_caller] == ["pkg/cursor.py"]


def test_files_the_index_does_not_hold_get_no_definitions(app_index) -> None:
    assert find_definitions(app_index, "elsewhere/x.py", APP) == []


def test_other_languages_resolve_unique_names(tmp_path: Path) -> None:
    files = {
        "web/lib.js": "function formatDate(d, fmt) {\n  return d;\n}\n",
        "web/app.js": "function main() {\n  const s = formatDate(new Date(), 'iso');\n}\n",
    }
    root = make_repo(tmp_path / "r", files)
    index, _ = RepoIndex.build(root, save=False)
    hits = find_definitions(index, "web/app.js", files["web/app.js"])
    cards = [(h.card.path, h.card.text) for h in hits]
    assert cards[0] == ("web/lib.js", "function formatDate(d, fmt)")  # called: the strongest
    assert set(cards[1:]) == {("web/app.js", "function main()")}  # the prompt drops this one


def test_query_time_strengths_equal_brute_force_eq8(app_index) -> None:
    """sum_k w_k * max-product path, with no hub in the way and nothing below epsilon."""
    graph = app_index.tables.graph
    g = graph.to_networkx()
    cost = nx.Graph()
    cost.add_weighted_edges_from((u, v, -math.log(d["weight"])) for u, v, d in g.edges(data=True))
    offset = graph.stmt_offset["pkg/app.py"]
    sources = np.array([offset + 3, offset + 5, offset + 8], np.int64)
    weights = np.array([0.5, 0.3, 0.2])
    targets = np.array(
        [graph.stmt_offset["pkg/net.py"] + n for n in (1, 2, 5, 7, 2)], np.int64
    )  # a repeated target too
    got = node_strengths(graph, sources, weights, targets, epsilon=1e-9, hub=10**6, node_cap=10**6)
    expected = []
    for t in targets.tolist():
        total = 0.0
        for s, w in zip(sources.tolist(), weights.tolist(), strict=True):
            with contextlib.suppress(nx.NetworkXNoPath):
                total += w * math.exp(-nx.shortest_path_length(cost, s, t, weight="weight"))
        expected.append(total)
    np.testing.assert_allclose(got, expected, rtol=1e-9)
    assert got[1] == got[4]


# ---------------------------------------------------------------------------- the prompt
CARD = Card("pkg/net.py", 24, "connect", "function", "def connect(host, port=80):")
OTHER = Card("pkg/util.py", 3, "helper", "function", "def helper(x):")


def test_cards_sit_between_the_fragments_and_the_left_context_best_last() -> None:
    prompt = build_prompt(
        "x = connect(",
        [],
        FakeModel(),
        language="python",
        cards=[CARD, OTHER],
        definitions_share=0.5,
        path="pkg/app.py",
    )
    assert prompt.cards == (CARD, OTHER)
    assert prompt.text == (
        f"# {DEFINITIONS_INTRO}\n"
        "# " + "-" * 50 + "\n"
        "# pkg/util.py:4\n"
        "# def helper(x):\n"
        "# " + "-" * 50 + "\n"
        "# pkg/net.py:25\n"
        "# def connect(host, port=80):\n"
        "# " + "-" * 50 + "\n"
        "\n"
        "x = connect("
    )
    assert prompt.definitions_tokens > 0


def test_cards_take_only_their_share_and_none_when_it_is_zero() -> None:
    off = build_prompt("x = 1", [], FakeModel(), language="python", cards=[CARD])
    assert off.cards == () and DEFINITIONS_INTRO not in off.text
    many = [Card("m.py", i, f"f{i}", "function", f"def f{i}(a, b, c):") for i in range(200)]
    model = FakeModel(context_window=4000)
    prompt = build_prompt(
        "x = 1", [], model, language="python", cards=many, definitions_share=0.25, path="a.py"
    )
    assert 0 < len(prompt.cards) < 200
    assert prompt.definitions_tokens <= 0.25 * 0.5 * 4000


def test_a_card_shown_brief_counts_as_in_the_prompt() -> None:
    """The prompt shows a shorter copy of a card it was given; the account of the completion
    still says that definition was in the prompt."""
    from repomem.completion.engine import Iteration, _iteration_dict
    from repomem.context.definitions import DefinitionHit

    doc = "\n".join(f"    line {i} of a long docstring" for i in range(40))
    big = [
        Card("m.py", 10 * i, f"f{i}", "function", f"def f{i}(a, b):\n{doc}", (), f"def f{i}(a, b):")
        for i in range(3)
    ]
    model = FakeModel(context_window=4000)
    whole = model.count_tokens(format_card(big[0], "#"))
    prompt = build_prompt(
        "x = 1",
        [],
        model,
        language="python",
        cards=big,
        definitions_share=2 * whole / 2000,
        path="a.py",
    )
    assert prompt.cards[1] != big[1] and prompt.cards[1].key == big[1].key  # shown brief
    hits = tuple(DefinitionHit(c, c.name, "import", 0.5, 1, 1) for c in big)
    it = Iteration("q", (), prompt, "", "", 0.0, 0.0, 0.0, definitions=hits)
    assert [d["in_prompt"] for d in _iteration_dict(it)["definitions"]] == [True, True, True]


def test_a_tight_card_budget_shows_the_best_card_whole_and_the_others_brief() -> None:
    doc = "\n".join(f"    line {i} of a long docstring" for i in range(40))
    big = [
        Card("m.py", 10 * i, f"f{i}", "function", f"def f{i}(a, b):\n{doc}", (), f"def f{i}(a, b):")
        for i in range(6)
    ]
    model = FakeModel(context_window=4000)
    whole = model.count_tokens(format_card(big[0], "#"))
    prompt = build_prompt(
        "x = 1",
        [],
        model,
        language="python",
        cards=big,
        definitions_share=2 * whole / 2000,
        path="a.py",
    )
    # whole, only two would fit: brief, every card does, the best one still whole
    assert [c.name for c in prompt.cards] == [f"f{i}" for i in range(6)]
    assert prompt.cards[0] == big[0]
    assert [c.text for c in prompt.cards[1:]] == [f"def f{i}(a, b):" for i in range(1, 6)]
    # a best card that alone would take half the budget is cut short too
    prompt = build_prompt(
        "x = 1",
        [],
        model,
        language="python",
        cards=big,
        definitions_share=1.5 * whole / 2000,
        path="a.py",
    )
    assert [c.text for c in prompt.cards] == [f"def f{i}(a, b):" for i in range(6)]


def test_a_card_of_the_completed_file_above_the_cursor_is_not_repeated() -> None:
    above = Card("pkg/app.py", 1, "f", "function", "def f():")
    below = Card("pkg/app.py", 9, "g", "function", "def g():")
    prompt = build_prompt(
        "def f():\n    pass\nx = ",
        [],
        FakeModel(),
        language="python",
        cards=[above, below],
        definitions_share=0.5,
        path="pkg/app.py",
    )
    assert prompt.cards == (below,)


def test_a_left_context_starting_below_the_top_shows_cards_above_it() -> None:
    """A benchmark's prompt may start at the file's line 40: a card at line 1 is not in it,
    one at line 41 is, and one below the cursor is news too."""
    cards = [
        Card("pkg/app.py", 1, "f", "function", "def f():"),
        Card("pkg/app.py", 41, "g", "function", "def g():"),
        Card("pkg/app.py", 60, "h", "function", "def h():"),
    ]
    prompt = build_prompt(
        "x = 1\ndef g():\n    pass\ny = ",
        [],
        FakeModel(),
        language="python",
        cards=cards,
        definitions_share=0.5,
        path="pkg/app.py",
        first_line=40,
    )
    assert [c.name for c in prompt.cards] == ["f", "h"]


def test_a_file_too_long_for_the_prompt_shows_the_cards_of_its_cut_top() -> None:
    """The prompt keeps the end of a long file: a definition at its top is no longer shown,
    so its card is news; one in the kept end is not repeated."""
    top = Card("pkg/app.py", 0, "f", "function", "def f():")
    near = Card("pkg/app.py", 1497, "g", "function", "def g():")
    left = "def f():\n    pass\n" + "x = 1\n" * 1495 + "def g():\n    pass\ny = "
    prompt = build_prompt(
        left,
        [],
        FakeModel(context_window=1000),
        language="python",
        cards=[top, near],
        definitions_share=0.5,
        path="pkg/app.py",
    )
    assert "def f():\n    pass" not in prompt.left_context
    assert prompt.cards == (top,)


# ---------------------------------------------------------------------------- end to end
SHOW_ALL = "[completion]\nmin_confidence = 0\n"


def test_complete_explains_and_reports_the_cards(tmp_path: Path) -> None:
    # the completion is a weak copy: shown at any confidence
    files = {"pkg/net.py": MODULE, "pkg/app.py": APP, ".repomem.toml": SHOW_ALL}
    root = make_repo(tmp_path / "r", files)
    line = APP.splitlines().index('        made.send(b"x")') + 1
    proc = run_repomem("complete", f"{root / 'pkg/app.py'}:{line}", "--explain", "--json")
    assert proc.returncode == 0, proc.stderr
    assert "the prompt, top to bottom:" in proc.stderr
    assert "definition  pkg/net.py:" in proc.stderr
    assert "pkg/net.py:" in proc.stderr and "Client" in proc.stderr
    # every card the prompt shows is named with how it was found, a shortened copy too
    shown = proc.stderr.split("the prompt, top to bottom:")[1].split("the file up to")[0]
    cards = [ln for ln in shown.splitlines() if ln.strip().startswith("definition  ")]
    assert cards and all(" <- " in ln for ln in cards), cards
    account = json.loads(proc.stdout)
    first = account["iterations"][0]
    names = {d["name"] for d in first["definitions"]}
    assert {"Client", "connect"} <= names
    assert any(d["in_prompt"] for d in first["definitions"])
    assert "# def connect(host," in first["prompt"] or "# @cached(size=8)" in first["prompt"]
    assert first["prompt_tokens"]["definitions"] > 0


def test_explain_lists_the_prompt_in_order_by_channel_and_the_rest_behind_a_flag(
    tmp_path: Path,
) -> None:
    root = make_repo(tmp_path / "r", {"pkg/net.py": MODULE, "pkg/app.py": APP})
    line = APP.splitlines().index('        made.send(b"x")') + 1
    cursor = f"{root / 'pkg/app.py'}:{line}"
    account = json.loads(run_repomem("complete", cursor, "--json").stdout)
    first = account["iterations"][0]
    proc = run_repomem("complete", cursor, "--explain")
    block = proc.stderr.split("iteration 2")[0].split("the prompt, top to bottom:\n")[1]
    pieces = block.split("    the file up to the cursor")[0].splitlines()
    labels = [p.split()[0] for p in pieces]
    # fragments (most relevant last), then cards (most relevant last), as the prompt has them
    assert labels == sorted(labels, key=lambda label: label == "definition")
    shown = [f for f in first["fragments"] if f["in_prompt"]]
    assert labels.count("similar") + labels.count("usage") == len(shown)
    assert labels.count("definition") == sum(d["in_prompt"] for d in first["definitions"])
    left_out = len(first["fragments"]) + len(first["definitions"]) - len(pieces)
    if left_out:
        assert f"left out: {left_out} of" in proc.stderr
        every = run_repomem("complete", cursor, "--explain-all").stderr.split("iteration 2")[0]
        assert every.count("[left out]") == left_out


def test_retrieve_shows_the_scores_that_mean_something_and_hides_far_cards(
    tmp_path: Path,
) -> None:
    root = make_repo(tmp_path / "r", {"pkg/net.py": MODULE, "pkg/app.py": APP})
    line = APP.splitlines().index('        made.send(b"x")') + 1
    where = f"{root / 'pkg/app.py'}:{line}"
    assert run_repomem("index", root, "--no-progress").returncode == 0
    plain = run_repomem("retrieve", where)
    assert plain.returncode == 0, plain.stderr
    assert "by BM25 (alpha 0)" in plain.stdout and "s_env" not in plain.stdout
    relational = run_repomem("retrieve", where, "--alpha", "0.5").stdout
    assert "s_rel=" in relational and "s_env=" in relational
    listed = json.loads(run_repomem("retrieve", where, "--json").stdout)["definitions"]
    near = [d for d in listed if d["distance"] <= 20 or d["strength"] > 0]
    shown = [row for row in plain.stdout.splitlines() if re.match(r"\s*d\d", row)]
    assert len(shown) <= len(near)
    assert len(run_repomem("retrieve", where, "--all").stdout.splitlines()) >= len(
        plain.stdout.splitlines()
    )


DECLARED = {
    "lib/__init__.py": "from lib.app import *\n",
    "lib/config.py": "class Config(dict):\n    def load(self, name):\n        return name\n",
    "lib/client.py": (
        "class Client:\n    def __enter__(self):\n        return self\n\n"
        "    def fetch(self, url):\n        return url\n"
    ),
    "lib/app.py": (
        "from typing import Optional\n\nfrom lib.client import Client\n"
        "from lib.config import Config\n\n\n"
        "class Base:\n    def __init__(self, client: Client):\n        self.client = client\n"
        "        self.other = None\n        self.config = self.make_config()\n\n"
        "    def make_config(self) -> Config:\n        return Config()\n\n\n"
        "class App(Base):\n    cache: Optional[Config]\n\n"
        "    def test_client(self) -> 'Client':\n        return Client()\n"
    ),
    "lib/other.py": "class Other:\n    def load(self):\n        pass\n",
}


def test_receivers_are_typed_by_return_annotations_and_declared_attributes(
    tmp_path: Path,
) -> None:
    root = make_repo(tmp_path / "r", DECLARED)
    index, _ = RepoIndex.build(root, save=False)
    left = (
        "import lib\n\n\ndef test_app():\n    app = lib.App()\n    app.config.load('x')\n"
        "    app.cache.load('y')\n    app.client.fetch('u')\n"
        "    with app.test_client() as c:\n        c.fetch('v')\n"
    )
    index.update_file("tests/test_app.py", left)
    asked = ["app.config.load", "app.cache.load", "app.client.fetch", "c.fetch", "app.other.load"]
    found = resolve_names(index, "tests/test_app.py", left, asked)
    # through ``import *``, a base class's attributes (a call of a method annotated to return
    # a Config; an annotated parameter), a class-level annotation and a ``with`` statement;
    # ``self.other = None`` says nothing, and an attribute nothing types is not guessed
    assert [f[:2] if f else None for f in found] == [
        ("lib/config.py", "Config.load"),  # not Other.load
        ("lib/config.py", "Config.load"),
        ("lib/client.py", "Client.fetch"),
        ("lib/client.py", "Client.fetch"),
        None,
    ]
    hits = {h.name: h.how for h in find_definitions(index, "tests/test_app.py", left)}
    assert hits["c.fetch"] == "named here, receiver typed Client"


def test_a_receiver_bound_just_above_puts_its_class_first(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", DECLARED)
    index, _ = RepoIndex.build(root, save=False)
    left = (
        "from lib.app import App\n\n\n"
        "def test_fetch():\n    app = App()\n    client = app.test_client()\n"
    )
    index.update_file("tests/test_fetch.py", left)
    hits = find_definitions(index, "tests/test_fetch.py", left)
    # the next line is about to use ``client``: its class comes first; ``test_fetch`` is
    # defined on its line, not used there, so it has no card
    assert hits[0].card.name == "Client"
    assert hits[0].how == "bound just above, receiver typed Client"
    assert "test_fetch" not in {h.card.name for h in hits}


FIXTURES = {
    "lib/__init__.py": "",
    "lib/run.py": (
        "class Client:\n    def fetch(self, url):\n        pass\n\n\n"
        "class App:\n    def test_client(self) -> Client:\n        return Client()\n\n\n"
        "class Runner:\n    def invoke(self, cmd):\n        pass\n\n\n"
        "class SubRunner:\n    def invoke(self, cmd, env=None):\n        pass\n"
    ),
    "tests/conftest.py": (
        "import pytest\n\nfrom lib.run import App, Runner\n\n\n"
        "@pytest.fixture\ndef app():\n    app = App()\n    yield app\n\n\n"
        '@pytest.fixture(scope="session")\ndef runner(request):\n    return Runner()\n\n\n'
        "@pytest.fixture\ndef client(app):\n    return app.test_client()\n"
    ),
    "tests/sub/conftest.py": (
        "import pytest\n\nfrom lib.run import SubRunner\n\n\n"
        "@pytest.fixture\ndef runner():\n    return SubRunner()\n"
    ),
}


def test_test_parameters_are_typed_by_pytests_own_fixture_lookup(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", FIXTURES)
    index, _ = RepoIndex.build(root, save=False)
    asked = ["runner.invoke", "client.fetch", "app.test_client"]

    def resolved(path: str, left: str) -> list[tuple[str, str] | None]:
        index.update_file(path, left)
        return [f[:2] if f else None for f in resolve_names(index, path, left, asked)]

    # a test's parameter is the fixture of the nearest conftest.py up the tree; a fixture's
    # value is typed by its own body (``yield app`` after ``app = App()``; a method's return
    # annotation, on a fixture it requests in turn)
    test = "def test_run(runner, client, app):\n    x = 1\n"
    assert resolved("tests/sub/test_a.py", test) == [
        ("lib/run.py", "SubRunner.invoke"),
        ("lib/run.py", "Client.fetch"),
        ("lib/run.py", "App.test_client"),
    ]
    assert resolved("tests/test_b.py", test)[0] == ("lib/run.py", "Runner.invoke")
    # the fixture's value follows the index as conftest.py changes
    conftest = FIXTURES["tests/conftest.py"].replace("import App, Runner", "import App, SubRunner")
    index.update_file("tests/conftest.py", conftest.replace("Runner()", "SubRunner()"))
    assert resolved("tests/test_b.py", test)[0] == ("lib/run.py", "SubRunner.invoke")
    index.update_file("tests/conftest.py", FIXTURES["tests/conftest.py"])
    # below a closure and a blank line: still the test's parameter
    nested = "def test_n(runner):\n    def cli(ctx):\n        pass\n\n"
    assert resolved("tests/test_b.py", nested)[0] == ("lib/run.py", "Runner.invoke")
    # the test's own module overrides conftest.py; a class's fixture overrides the module's
    own = (
        "import pytest\n\nfrom lib.run import Runner, SubRunner\n\n\n"
        "@pytest.fixture\ndef runner():\n    return Runner()\n\n\n"
        "class TestIt:\n    @pytest.fixture\n    def runner(self):\n        return SubRunner()\n\n"
        "    def test_in_class(self, runner):\n        pass\n"
    )
    assert resolved("tests/sub/test_c.py", own)[0] == ("lib/run.py", "SubRunner.invoke")
    at_top = own.split("\n\n\nclass TestIt")[0] + "\n\n\ndef test_top(runner):\n    pass\n"
    assert resolved("tests/sub/test_c.py", at_top)[0] == ("lib/run.py", "Runner.invoke")
    # no fixture: parameters of a helper, values @pytest.mark.parametrize gives, a test in
    # a folder no conftest.py above reaches
    helper = "def check(runner):\n    pass\n"
    assert resolved("tests/sub/test_d.py", helper)[0] is None
    param = '@pytest.mark.parametrize("runner, x", [(1, 2)])\ndef test_p(runner, x):\n    pass\n'
    assert resolved("tests/sub/test_e.py", "import pytest\n\n\n" + param)[0] is None
    assert resolved("other/test_f.py", test)[0] is None
    # a test that has not used its fixture yet, just below its ``def``: the fixture's class
    # comes first, its methods listed
    fresh = "def test_new(runner):\n"
    index.update_file("tests/sub/test_g.py", fresh)
    first = find_definitions(index, "tests/sub/test_g.py", fresh)[0]
    assert (first.card.name, first.how) == ("SubRunner", "pytest fixture runner, typed SubRunner")


def test_an_overloaded_functions_card_is_its_implementation(tmp_path: Path) -> None:
    stub = "@overload\ndef current(silent: {}) -> {}: ...\n\n\n"
    module = (
        "from typing import Literal, Optional, overload\n\n\n"
        + stub.format("Literal[False] = False", '"Ctx"')
        + stub.format("bool = ...", 'Optional["Ctx"]')
        + 'def current(silent: bool = False) -> Optional["Ctx"]:\n    """The context."""\n'
    )
    root = make_repo(tmp_path / "r", {"pkg/glob.py": module})
    index, _ = RepoIndex.build(root, save=False)
    left = "from pkg.glob import current\n\ncurrent()\n"
    index.update_file("pkg/use.py", left)
    card = find_definitions(index, "pkg/use.py", left)[0].card
    # the name is bound to the last ``def``: its card, the line the eval's targets name
    assert card.line == module.split("\n").index(
        'def current(silent: bool = False) -> Optional["Ctx"]:'
    )
    assert card.text.startswith("def current(silent: bool = False)")
    assert resolve_names(index, "pkg/use.py", left, ["current"])[0][:2] == (
        "pkg/glob.py",
        "current",
    )


def test_a_skeletons_long_method_lines_are_cut_at_a_parameter_and_its_constructor_is_whole() -> (
    None
):
    params = ", ".join(f"option_{i}: Optional[int] = None" for i in range(6))
    text = (
        f"class Wide:\n    def __init__(self, {params}):\n        pass\n\n"
        f"    def render(self, item: Dict[str, int], {params}) -> str:\n        pass\n"
    )
    cards = cards_of(text)
    skeleton = cards["Wide"].text.split("\n")
    assert skeleton[1] == f"    def __init__(self, {params}): ..."
    assert (
        skeleton[2]
        == "    def render(self, item: Dict[str, int], option_0: Optional[int] = None, ...): ..."
    )
    assert cards["Wide.render"].text.startswith(f"def render(self, item: Dict[str, int], {params})")


def test_of_two_definitions_as_related_the_smaller_card_comes_first(tmp_path: Path) -> None:
    doc = '    """' + " ".join(["Long words."] * 40) + '"""\n'
    files = {
        "pkg/a.py": f"def large(a, b, c, d, e, f, g):\n{doc}\n\ndef small(a):\n    pass\n",
    }
    root = make_repo(tmp_path / "r", files)
    index, _ = RepoIndex.build(root, save=False)
    left = "from pkg.a import large, small\n\n" + "".join(f"N{i} = {i}\n" for i in range(40))
    index.update_file("pkg/use.py", left)
    hits = find_definitions(index, "pkg/use.py", left)
    assert [h.card.name for h in hits] == ["small", "large"]
    assert hits[0].strength == hits[1].strength


def test_a_python_file_offers_the_definitions_it_calls_most(tmp_path: Path) -> None:
    root = make_repo(
        tmp_path / "r",
        {
            "pkg/__init__.py": "",
            "pkg/core.py": "class Group:\n    pass\n\n\ndef echo(x):\n    pass\n",
        },
    )
    index, _ = RepoIndex.build(root, save=False)
    tests = "".join(f"def test_{i}():\n    pkg.core.Group()\n\n\n" for i in range(3))
    left = "import pkg.core\n\n\n" + tests + "".join(f"N{i} = {i}\n" for i in range(45))
    index.update_file("tests/test_core.py", left)
    hits = {h.card.name: h for h in find_definitions(index, "tests/test_core.py", left)}
    # no line of the last 40 names Group, the file calls it three times: the next test may too
    assert hits["Group"].how == "called in this file (3 calls)"
    assert "echo" not in hits


def test_an_import_not_called_yet_gets_the_higher_floor(tmp_path: Path) -> None:
    root = make_repo(
        tmp_path / "r", {"pkg/a.py": "def aa(x):\n    pass\n\n\ndef bb(x):\n    pass\n"}
    )
    index, _ = RepoIndex.build(root, save=False)
    left = "from pkg.a import aa, bb\n\nbb(1)\n" + "".join(f"N{i} = {i}\n" for i in range(45))
    index.update_file("pkg/use.py", left)
    finder = _Finder(index, "pkg/use.py", index.tables.parsed["pkg/use.py"], left.split("\n"))
    pending = {f.name: f.pending for f in finder.collect("").values()}
    # the file imports aa for a line below the cursor: no call above uses it yet
    assert pending == {"aa": True, "bb": False}


def test_the_enclosing_class_is_the_innermost_holding_the_cursor(tmp_path: Path) -> None:
    """Of the classes starting above the cursor and holding it (one reaching the file's last
    line holds a buffer ending past it), the one starting last; of two on one row, the outer
    one. A scope is Python's: another language's finder has none."""
    text = (
        "class A:\n    def f(self):\n        pass\n\n    class B:\n        x = 1\n\n"
        "        def g(self):\n            pass\n\n    y = 2\n\n\n"
        "class C: pass\n\n\nclass D: \n    class E: pass\n\n\ndef h():\n    pass\n\n\n"
        "class F:\n    z = 3\n"
    )
    root = make_repo(tmp_path / "r", {"pkg/k.py": text, "pkg/J.java": "class J {\n  int x;\n}\n"})
    index, _ = RepoIndex.build(root, save=False)
    pf = index.tables.parsed["pkg/k.py"]
    lines = text.split("\n")

    def scope(row: int) -> str | None:
        return _Finder(index, "pkg/k.py", pf, lines[:row] + [""]).scope

    rows = {line: row for row, line in enumerate(lines)}
    assert scope(rows["    def f(self):"] + 1) == "A"
    assert scope(rows["        x = 1"]) == "A.B"
    assert scope(rows["            pass"]) == "A.B"
    assert scope(rows["    y = 2"]) == "A"
    assert scope(rows["class C: pass"]) is None  # it starts on the cursor's row
    assert scope(rows["class C: pass"] + 1) is None
    assert scope(rows["    class E: pass"] + 1) is None
    assert scope(rows["    pass"]) is None
    assert scope(rows["    z = 3"]) == "F"
    assert scope(len(lines) + 3) == "F"  # a buffer longer than the index's text
    java = index.tables.parsed["pkg/J.java"]
    assert _Finder(index, "pkg/J.java", java, ["class J {", "  int x;", ""]).scope is None


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("x.run()", "x"),
        ("self.x.run()", "x"),  # an attribute, not the name
        ("y = self.x", "self.x"),
        ("self.xs", "self.x"),
        ("ax + x_ + x1", "x"),
        ("é x", "x"),
        ("éx + 2x", "x"),
        ("x", "x"),
        ("", "x"),
        ("f(x)", "x"),
        ("other.self.x", "self.x"),
        ("(self.x)", "self.x"),
    ],
)
def test_a_name_is_found_as_its_pattern_finds_it(text: str, name: str) -> None:
    pattern = rf"(?<![\w.]){re.escape(name)}\b"
    assert _uses_name(text, name) == (re.search(pattern, text) is not None)


@pytest.mark.parametrize(
    "header",
    [
        "def __init__(self, client: Client, port: int = 80) -> None:",
        "def __init__(self, c: Dict[str, int], client: Optional[Client]):",
        "def __init__(self, clients: list, client: 'Client'):",
        "def __init__(self, client=None, other: Client):",
        "def __init__(self, *, client : Client):",
        "def __init__(self, client):",
    ],
)
def test_a_parameter_annotation_is_read_as_a_pattern_for_its_name_reads_it(header: str) -> None:
    for name in ("client", "port", "c", "clients", "other", "self"):
        found = re.search(rf"[(,]\s*{name}\s*:\s*([^=,)]+)", header)
        expected = found[1].strip() if found else None
        assert _parameter_annotation([header], 0, name) == expected


def test_receivers_types_are_read_alike_with_runs_of_spaces_as_one() -> None:
    # what ``types`` reads the block before the cursor with: every gap of the pattern takes
    # one space or more, and no group holds one
    text = (
        "def f(a:   Foo,\tb :  Optional[  Bar],  c=1):\n"
        "    x   =   mod.make  (a)\n\n    y: \t list[ Baz ]   = []\n"
        "    for   item   in   y:\n        pass\n"
        "    with   open(a,   b)   as   fh   :\n        pass\n"
        "    z =\n\n      pkg.Maker\n   (1)\n    w  .v   =   g(   )\n"
    )
    groups = [m.groups() for m in _TYPED.finditer(text)]
    assert len(groups) >= 6
    assert [m.groups() for m in _TYPED.finditer(_SPACES.sub(" ", text))] == groups

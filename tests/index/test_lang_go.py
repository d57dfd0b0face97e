"""Go resolution: packages, imports through go.mod, receivers, fields, embedding."""

from __future__ import annotations

from pathlib import Path

import pytest
from repos import write_files
from test_index import EXACT, assert_same

from repomem.context.definitions import find_definitions, resolve_names
from repomem.index.langs import for_language
from repomem.index.repo import RepoIndex

FOO = """\
package foo

import (
\t"net/http"

\t"example.com/m/lib/v2"
)

// Client talks to a store.
type Client struct {
\tBase
\thc    *http.Client
\tstore Store
\tName  string
\tCache *Item; Items []Item
}

type Base struct{}

func (b *Base) Close() error { return nil }

type Store interface {
\tGet(k string) (Item, error)
}

type Item struct{}

func (i Item) Size() int { return 0 }

func NewClient() *Client { return &Client{} }

func (c *Client) Do(x int) Item {
\tc.hc.Get("x")
\treturn Item{}
}

func (c *Client) Run() {
\tc.Do(1)
\tc.store.Get("a")
\tc.Close()
\thelper()
\tlib.Version()
}

const (
\tA = 1
\tB = 2
)

var Default Client
"""

FILES = {
    "go.mod": "module example.com/m\n\ngo 1.21\n",
    "pkg/foo/foo.go": FOO,
    "pkg/foo/util.go": "package foo\n\nfunc helper() int { return A }\n",
    "pkg/foo/foo_test.go": "package foo\n\nfunc testOnly() int { return helper() }\n",
    "pkg/foo/ext_test.go": (
        'package foo_test\n\nimport "example.com/m/pkg/foo"\n\nfunc use() { foo.NewClient() }\n'
    ),
    "lib/v2/lib.go": "package lib\n\nfunc Version() int { return 2 }\n",
    "util/fmt.go": "package util\n\nfunc Println(a ...any) {}\n\nfunc Get() {}\n",
    "cmd/main.go": """\
package main

import (
\t"fmt"

\tf "example.com/m/pkg/foo"
\t. "example.com/m/lib/v2"
\t_ "example.com/m/util"
)

func run(c *f.Client, n int) {
\tx := f.NewClient()
\tx.Do(2)
\tc.Close()
\tfmt.Println(f.A)
\tvar y f.Item
\ty.Size()
\tf.Default.Do(3)
\tVersion()
\tz := &f.Item{}
\tz.Size()
\tc.Cache.Size()
\tfor _, it := range c.Items {
\t\tit.Size()
\t}
}
""",
    # a module of its own inside the repository
    "tools/go.mod": "module example.com/tools\n",
    "tools/gen/gen.go": "package gen\n\nfunc Generate() {}\n",
    "cmd/tools.go": (
        'package main\n\nimport (\n\t"example.com/tools/gen"\n'
        '\tother "example.com/m/tools/gen"\n)\n\n'
        "func tools() {\n\tgen.Generate()\n\tother.Generate()\n}\n"
    ),
}


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> RepoIndex:
    root = write_files(tmp_path_factory.mktemp("go"), FILES)
    return RepoIndex.build(root, save=False)[0]


def calls(index: RepoIndex, path: str) -> set[tuple[int, str, str]]:
    """(caller's line, target file, target's qualified name) of a file's call edges."""
    pf = index.tables.parsed[path]
    return {
        (int(pf.node_start[node]) + 1, target, index.resolver.qualnames[target][tnode])
        for node, target, tnode in index.tables.calls[path]
    }


def test_definitions_are_qualified_and_package_level() -> None:
    root_names = {d.name: d.is_class for d in _parse("pkg/foo/foo.go", FOO).definitions}
    assert root_names == {
        "Client": True,
        "Base": True,
        "Base.Close": False,
        "Store": True,
        "Store.Get": False,  # an interface's method
        "Item": True,
        "Item.Size": False,
        "NewClient": False,
        "Client.Do": False,
        "Client.Run": False,
        "A": False,
        "B": False,
        "Default": False,
    }


def test_grouped_constants_have_nodes_of_their_own() -> None:
    pf = _parse("pkg/foo/foo.go", FOO)
    nodes = {d.name: d.node for d in pf.definitions}
    assert nodes["A"] != nodes["B"]
    assert int(pf.node_start[nodes["B"]]) == FOO.splitlines().index("\tB = 2")


def test_package_clause_and_imports_are_read() -> None:
    pf = _parse("cmd/main.go", FILES["cmd/main.go"])
    assert pf.package == "main"
    bound = [(b.name, b.module) for b in pf.imports]
    # ``_`` binds nothing; an import without alias binds the package's declared name
    assert bound == [("", "fmt"), ("f", "example.com/m/pkg/foo"), (".", "example.com/m/lib/v2")]


def test_calls_resolve_through_packages_receivers_fields_and_embedding(index: RepoIndex) -> None:
    foo = "pkg/foo/foo.go"
    assert calls(index, foo) == {
        (30, foo, "Client"),  # &Client{} in NewClient
        (34, foo, "Item"),  # a composite literal
        (38, foo, "Client.Do"),  # c.Do through the receiver
        (39, foo, "Store.Get"),  # c.store.Get: the field's interface declares Get
        (40, foo, "Base.Close"),  # c.Close through the embedded Base
        (41, "pkg/foo/util.go", "helper"),  # another file of the package
        (42, "lib/v2/lib.go", "Version"),  # the package's declared name, not "v2"
    }


def test_calls_resolve_through_aliases_dot_imports_parameters_and_locals(index: RepoIndex) -> None:
    foo, main = "pkg/foo/foo.go", "cmd/main.go"
    assert calls(index, main) == {
        (12, foo, "NewClient"),  # f.NewClient through the alias
        (13, foo, "Client.Do"),  # x := f.NewClient(): the function's result type
        (14, foo, "Base.Close"),  # c.Close: a parameter of type *f.Client, embedding Base
        (17, foo, "Item.Size"),  # var y f.Item
        (18, foo, "Client.Do"),  # f.Default.Do through the package variable's type
        (19, "lib/v2/lib.go", "Version"),  # a dot import
        (20, foo, "Item"),  # &f.Item{}
        (21, foo, "Item.Size"),  # z := &f.Item{}
        (22, foo, "Item.Size"),  # c.Cache.Size through the field's type
        (24, foo, "Item.Size"),  # it ranges over c.Items, a []Item
    }


def test_standard_library_names_never_resolve_to_the_repository(index: RepoIndex) -> None:
    # util defines Println and Get; fmt.Println and c.hc.Get (an *http.Client) are not them
    assert all(target != "util/fmt.go" for _, target, _ in calls(index, "cmd/main.go"))
    assert all(target != "util/fmt.go" for _, target, _ in calls(index, "pkg/foo/foo.go"))
    left = FILES["cmd/main.go"]
    assert resolve_names(index, "cmd/main.go", left, ["fmt.Println", "len", "string"]) == [
        None,
        None,
        None,
    ]
    go = for_language("go")
    for name in ("len", "make", "string", "error", "nil", "int64", "func", "range", "any"):
        assert go.reserved(name), name
    assert not go.reserved("Client")


def test_nested_modules_resolve_by_their_own_path(index: RepoIndex) -> None:
    # example.com/m/tools/gen is inside the directory of example.com/m, but tools/ is a
    # module of its own: only example.com/tools/gen names it
    assert calls(index, "cmd/tools.go") == {(9, "tools/gen/gen.go", "Generate")}


def test_non_test_code_never_resolves_into_test_files(tmp_path: Path) -> None:
    files = {
        **FILES,
        "pkg/foo/util.go": "package foo\n\nfunc helper() int { return testOnly() }\n",
    }
    idx = RepoIndex.build(write_files(tmp_path, files), save=False)[0]
    assert calls(idx, "pkg/foo/util.go") == set()
    # a test file reaches both; an external test package reaches the package by import
    assert calls(idx, "pkg/foo/foo_test.go") == {(3, "pkg/foo/util.go", "helper")}
    assert calls(idx, "pkg/foo/ext_test.go") == {(5, "pkg/foo/foo.go", "NewClient")}
    left = files["pkg/foo/util.go"]
    assert resolve_names(idx, "pkg/foo/util.go", left, ["testOnly"]) == [None]


def test_cards_follow_locals_parameters_and_results(index: RepoIndex) -> None:
    text = FILES["cmd/main.go"]
    left = text[: text.index("\tf.Default")]
    foo = "pkg/foo/foo.go"
    names = ["x.Do", "c.Close", "y.Size", "f.A", "c.store.Get", "c.hc", "f.Client.Run", "n.Foo"]
    got = [None if r is None else r[:2] for r in resolve_names(index, "cmd/main.go", left, names)]
    assert got == [
        (foo, "Client.Do"),  # x := f.NewClient(): the result type of a repository function
        (foo, "Base.Close"),  # a parameter, through the embedded struct
        (foo, "Item.Size"),  # var y f.Item
        (foo, "A"),  # a package-level constant
        (foo, "Store.Get"),  # a field's interface type declares Get
        None,  # a field is no definition
        (foo, "Client.Run"),  # a method expression
        None,  # n is an int
    ]
    hits = {(h.card.path, h.card.name) for h in find_definitions(index, "cmd/main.go", left)}
    assert {(foo, "Client.Do"), (foo, "Base.Close"), (foo, "Item.Size")} <= hits
    assert all(path != "util/fmt.go" for path, _ in hits)


def test_a_fields_type_and_a_calls_result_are_cards(tmp_path: Path) -> None:
    """A field the code names (``c.Out``) is its type's card where the file writes that
    type's name (a field's declaration, a conversion); a member of a call's result
    (``a.NewDec().Decode(``) is the member of the function's declared result type."""
    lib = (
        "package a\n\ntype Writer interface{ Flush() }\n\ntype Ctx struct{ Out Writer }\n\n"
        "type Dec struct{}\n\nfunc (d *Dec) Decode(v any) error { return nil }\n\n"
        "func NewDec() *Dec { return &Dec{} }\n"
    )
    head = 'package b\n\nimport "example.com/m/a"\n\nfunc use(c *a.Ctx) {\n'
    body = "\tkeep(c.Out)\n\ta.NewDec().Decode(nil)\n"
    files = {"go.mod": "module example.com/m\n", "a/a.go": lib, "b/use.go": head + body + "}\n"}
    idx = RepoIndex.build(write_files(tmp_path, files), save=False)[0]
    defs = idx.resolver.defs["a/a.go"]
    writes = head + "\tvar w a.Writer // a Writer\n" + body
    names = ["c.Out", "a.NewDec.Decode"]
    assert resolve_names(idx, "b/use.go", writes, names) == [
        ("a/a.go", "Writer", defs["Writer"]),
        ("a/a.go", "Dec.Decode", defs["Dec.Decode"]),
    ]
    # the type's name only in a comment or a string: not written
    quiet = head + '\t_ = "Writer" // Writer\n' + body
    assert resolve_names(idx, "b/use.go", quiet, ["c.Out"]) == [None]
    cards = {h.card.name for h in find_definitions(idx, "b/use.go", writes)}
    assert {"Writer", "Dec.Decode"} <= cards
    assert "Dec.Decode" not in {h.card.name for h in find_definitions(idx, "b/use.go", head)}


def test_a_local_hides_the_package_names(tmp_path: Path) -> None:
    files = {
        "go.mod": "module example.com/m\n",
        "a/a.go": "package a\n\nfunc state() int { return 1 }\n\ntype Parser struct{}\n\n"
        "func Parse() {}\n",
        "a/b.go": "package a\n\nfunc (p *Parser) Parse() {\n\tstate := 2\n\t_ = state\n"
        "\tx := Parser{Parse: 1}\n",
    }
    idx = RepoIndex.build(write_files(tmp_path, files), save=False)[0]
    left = files["a/b.go"]
    # the local ``state``, the method's own name where it is declared, a literal's key
    assert resolve_names(idx, "a/b.go", left, ["state", "Parse", "Parser"]) == [
        None,
        None,
        ("a/a.go", "Parser", idx.resolver.defs["a/a.go"]["Parser"]),
    ]


def test_updates_equal_a_rebuild(tmp_path: Path) -> None:
    root = write_files(tmp_path / "r", FILES)
    idx = RepoIndex.build(root, EXACT, save=False)[0]
    edits: list[tuple[str, str | None]] = [
        # a field read from another package changes its type, then Client stops embedding
        ("pkg/foo/foo.go", FOO.replace("Cache *Item", "Cache *Base")),
        ("pkg/foo/foo.go", FOO.replace("Items []Item", "Items []Base")),
        ("pkg/foo/foo.go", FOO.replace("\tBase\n", "\tbase Base\n")),
        # Base loses Close; Client gains a method of that name: c.Close resolves anew
        (
            "pkg/foo/foo.go",
            FOO.replace("func (b *Base) Close() error { return nil }", "")
            + "\nfunc (c *Client) Close() {}\n",
        ),
        # the field's type changes from the interface to a struct with a Get method
        ("pkg/foo/foo.go", FOO.replace("store Store", "store *Item")),
        ("pkg/foo/item.go", "package foo\n\nfunc (i *Item) Get(k string) {}\n"),
        # NewClient's result type changes (x := f.NewClient(); x.Do() in cmd/main.go), the
        # method file goes
        ("pkg/foo/foo.go", FOO.replace("func NewClient() *Client", "func NewClient() *Item")),
        ("pkg/foo/item.go", None),
        # the helper moves to another file, then the lib package renames itself
        ("pkg/foo/util.go", None),
        ("pkg/foo/more.go", "package foo\n\n\nfunc helper() int { return B }\n"),
        ("lib/v2/lib.go", "package lab\n\nfunc Version() int { return 2 }\n"),
        ("lib/v2/lib.go", "package lib\n\nfunc Version() int { return 3 }\n"),
        # the external test package becomes the package itself, then a new file appears
        ("pkg/foo/ext_test.go", "package foo\n\nfunc use() { NewClient() }\n"),
        ("cmd/extra.go", "package main\n\nfunc extra() { run(nil, 1) }\n"),
        # an alias changes
        ("cmd/main.go", FILES["cmd/main.go"].replace('f "example', 'g "example')),
    ]
    _updates_equal_rebuilds(root, idx, edits, ["c.Close()", "helper()"])


def _parse(path: str, text: str):  # noqa: ANN202 - a ParsedFile
    from repomem.index.parsing import parse_source

    return parse_source(path, "go", text, "d")


def test_a_file_built_for_another_system_comes_last(tmp_path: Path) -> None:
    files = {
        "go.mod": "module example.com/m\n",
        "a/a_windows.go": "package a\n\nfunc open() int { return 1 }\n",
        "a/open.go": "package a\n\nfunc open() int { return 2 }\n",
        "a/use.go": "package a\n\nfunc use() int { return open() }\n",
    }
    idx = RepoIndex.build(write_files(tmp_path, files), save=False)[0]
    assert calls(idx, "a/use.go") == {(3, "a/open.go", "open")}


def test_range_variables_take_the_element_type(tmp_path: Path) -> None:
    files = {
        "go.mod": "module example.com/m\n",
        "a/a.go": "package a\n\ntype Item struct{}\n\nfunc (i *Item) Size() int { return 0 }\n\n"
        "type Bag struct {\n\titems []*Item\n\tbyName map[string]Item\n}\n\n"
        "func All() []Item { return nil }\n",
        "a/use.go": "package a\n\nfunc (b *Bag) total(extra []*Item) {\n"
        "\tfor _, it := range b.items {\n\t\tit.Size()\n\t}\n"
        "\tfor _, named := range b.byName {\n\t\tnamed.Size()\n\t}\n"
        "\tfor _, more := range extra {\n\t\tmore.Size()\n\t}\n"
        "\tfor i, n := range b {\n\t\tn.Size()\n\t}\n",
    }
    idx = RepoIndex.build(write_files(tmp_path, files), save=False)[0]
    assert calls(idx, "a/use.go") == {(5, "a/a.go", "Item.Size"), (11, "a/a.go", "Item.Size")} | {
        (8, "a/a.go", "Item.Size")
    }
    size = ("a/a.go", "Item.Size", idx.resolver.defs["a/a.go"]["Item.Size"])
    names = ["it.Size", "named.Size", "more.Size", "n.Size"]
    # b is no collection: n has no type to give
    assert resolve_names(idx, "a/use.go", files["a/use.go"], names) == [size, size, size, None]


def test_a_type_switch_types_its_variable_in_each_case(tmp_path: Path) -> None:
    files = {
        "go.mod": "module example.com/m\n",
        "a/a.go": "package a\n\ntype A struct{}\n\nfunc (A) Pos() int { return 0 }\n\n"
        "type B struct{}\n\nfunc (B) Pos() int { return 1 }\n\nfunc (B) End() int { return 2 }\n",
        "a/use.go": "package a\n\nfunc use(x any) {\n\tswitch t := x.(type) {\n\tcase *A:\n"
        "\t\tt.Pos()\n\tcase B:\n\t\tt.End()\n",
    }
    idx = RepoIndex.build(write_files(tmp_path, files), save=False)[0]
    left = files["a/use.go"]
    end = ("a/a.go", "B.End", idx.resolver.defs["a/a.go"]["B.End"])
    # both cases are in the lines before the cursor: t.Pos may be A's or B's
    assert resolve_names(idx, "a/use.go", left, ["t.End", "t.Pos"]) == [None, None]
    only_b = left.replace("\tcase *A:\n\t\tt.Pos()\n", "")
    assert resolve_names(idx, "a/use.go", only_b, ["t.End"]) == [end]


def test_a_repository_in_a_gopath_without_go_mod_is_the_module_of_its_path(
    tmp_path: Path,
) -> None:
    files = {
        "a/a.go": "package a\n\nfunc F() {}\n",
        "b/b.go": 'package b\n\nimport "example.com/m/a"\n\nfunc g() { a.F() }\n',
    }
    root = write_files(tmp_path / "src" / "example.com" / "m", files)
    idx = RepoIndex.build(root, save=False)[0]
    assert calls(idx, "b/b.go") == {(5, "a/a.go", "F")}


def test_an_interface_method_gives_its_declared_result(tmp_path: Path) -> None:
    files = {
        "go.mod": "module example.com/m\n",
        "a/a.go": "package a\n\ntype Fs interface {\n\tOpen(name string) (File, error)\n}\n\n"
        "type File interface {\n\tName() string\n}\n",
        "a/use.go": 'package a\n\nfunc use(fs Fs) {\n\tf, err := fs.Open("x")\n\tf.Name()\n',
    }
    idx = RepoIndex.build(write_files(tmp_path, files), save=False)[0]
    name = ("a/a.go", "File.Name", idx.resolver.defs["a/a.go"]["File.Name"])
    assert resolve_names(idx, "a/use.go", files["a/use.go"], ["f.Name"]) == [name]
    assert calls(idx, "a/use.go") == {(5, "a/a.go", "File.Name"), (4, "a/a.go", "Fs.Open")}


def test_of_files_for_several_go_releases_the_latest_comes_first(tmp_path: Path) -> None:
    files = {
        "go.mod": "module example.com/m\n",
        "a/env_go1_16.go": "package a\n\nfunc Setenv() {}\n",
        "a/env_go1_17.go": "package a\n\nfunc Setenv() {}\n",
        "a/use.go": "package a\n\nfunc use() { Setenv() }\n",
    }
    idx = RepoIndex.build(write_files(tmp_path, files), save=False)[0]
    assert calls(idx, "a/use.go") == {(3, "a/env_go1_17.go", "Setenv")}


def test_a_saved_index_loads_with_the_same_resolution(tmp_path: Path) -> None:
    root = write_files(tmp_path / "r", FILES)
    built = RepoIndex.build(root, EXACT)[0]
    loaded = RepoIndex.load(root, EXACT)
    assert {p: loaded.tables.parsed[p].bases for p in built.tables.parsed} == {
        p: pf.bases for p, pf in built.tables.parsed.items()
    }
    # the saved dependencies stand in for resolving again: an edit after loading still
    # re-resolves the importers, as a rebuild does
    edited = FOO.replace("func NewClient() *Client", "func NewClient() *Item")
    (root / "pkg/foo/foo.go").write_text(edited)
    loaded.update_file("pkg/foo/foo.go", edited)
    assert_same(loaded, RepoIndex.build(root, EXACT, save=False)[0], ["x.Do(2)"])


def test_go_mod_is_read_at_build_and_saved_with_the_index(tmp_path: Path) -> None:
    root = write_files(tmp_path / "r", FILES)
    built = RepoIndex.build(root, EXACT)[0]
    assert built.tables.settings["go"] == {
        "gomods": {"": "example.com/m", "tools": "example.com/tools"},
        "gopath": None,
    }
    version = {e for e in calls(built, "pkg/foo/foo.go") if e[2] == "Version"}
    assert len(version) == 1
    # a loaded index resolves as the build did, though go.mod has changed since
    (root / "go.mod").write_text("module example.com/other\n")
    loaded = RepoIndex.load(root, EXACT)
    loaded.update_file("pkg/foo/foo.go", FOO + "\n")
    assert version <= calls(loaded, "pkg/foo/foo.go")
    # the next build reads it again: example.com/m/lib/v2 names no directory now
    rebuilt = RepoIndex.build(root, EXACT, save=False)[0]
    assert rebuilt.tables.settings["go"]["gomods"][""] == "example.com/other"
    assert not version & calls(rebuilt, "pkg/foo/foo.go")


def test_a_local_just_made_and_not_used_yet_puts_its_type_first(index: RepoIndex) -> None:
    foo = "pkg/foo/foo.go"
    head = 'package main\n\nimport f "example.com/m/pkg/foo"\n\nfunc run() {\n'
    for line in ("\tx := f.NewClient()\n", "\tvar x f.Client\n", "\tx, err := f.NewClient(), 1\n"):
        hits = find_definitions(index, "cmd/main.go", head + line)
        assert (hits[0].card.path, hits[0].card.name) == (foo, "Client"), line
    # a function literal's parameter, just declared
    literal = head + "\tgo func(c *f.Client) {\n"
    hits = find_definitions(index, "cmd/main.go", literal)
    assert (hits[0].card.path, hits[0].card.name) == (foo, "Client")
    # a declaration in a string or a comment declares nothing
    quoted = head + '\ts := "x := f.NewClient()" /* y := f.NewClient() */\n'
    assert all(
        h.how != "bound just above, not used yet"
        for h in find_definitions(index, "cmd/main.go", quoted)
    )
    # once used, the type is no longer first
    used = head + "\tx := f.NewClient()\n\tx.Do(1)\n"
    assert find_definitions(index, "cmd/main.go", used)[0].how != "bound just above, not used yet"


def test_the_files_most_called_definitions_are_cards(index: RepoIndex) -> None:
    text = FILES["cmd/main.go"]
    # far from the calls above, the file's calls still bring their definitions
    left = text + "\n" * 60 + "func later() {\n"
    hits = {(h.card.path, h.card.name) for h in find_definitions(index, "cmd/main.go", left)}
    assert ("pkg/foo/foo.go", "Item.Size") in hits


def test_methods_of_one_written_type_share_its_card(index: RepoIndex) -> None:
    head = 'package main\n\nimport f "example.com/m/pkg/foo"\n\nfunc run(c *f.Client) {\n'
    left = head + "\tc.Do(1)\n\tc.Run()\n"
    how = {h.card.name: h.how for h in find_definitions(index, "cmd/main.go", left)}
    assert "Client" in how and "Client.Do" not in how and "Client.Run" not in how


def test_a_function_literals_parameters_are_typed(index: RepoIndex) -> None:
    head = 'package main\n\nimport f "example.com/m/pkg/foo"\n\nfunc run() {\n'
    left = head + "\tgo func(c *f.Client, n int) {\n\t\tc.Do(n)\n"
    (found,) = resolve_names(index, "cmd/main.go", left, ["c.Run"])
    assert found is not None and found[:2] == ("pkg/foo/foo.go", "Client.Run")


TEXT = """\
package text

// Reader reads text.
type Reader interface {
\t// Advance moves the position n bytes on.
\tAdvance(n int)
\tPeek() byte
}

// BlockReader reads blocks of lines.
type BlockReader interface {
\tReader
\tLines() Segments
}

type (
\tSegments interface {
\t\tLen() int
\t}
)

type reader struct{}

func (r *reader) Advance(n int) {}
"""

INTERFACES = {
    "go.mod": "module example.com/m\n",
    "text/text.go": TEXT,
    "use/use.go": """\
package use

import "example.com/m/text"

type parser struct {
\ttext.Reader
}

func parse(reader text.Reader, block text.BlockReader, p *parser) {
\treader.Advance(1)
\tblock.Advance(2)
\tsegs := block.Lines()
\tsegs.Len()
\tp.Peek()
""",
}


def test_an_interface_s_methods_are_definitions_of_their_own() -> None:
    pf = _parse("text/text.go", TEXT)
    lines = TEXT.splitlines()
    rows = {d.name: int(pf.node_start[d.node]) for d in pf.definitions if not d.is_class}
    assert rows == {
        "Reader.Advance": lines.index("\tAdvance(n int)"),
        "Reader.Peek": lines.index("\tPeek() byte"),
        "BlockReader.Lines": lines.index("\tLines() Segments"),
        "Segments.Len": lines.index("\t\tLen() int"),
        "reader.Advance": lines.index("func (r *reader) Advance(n int) {}"),
    }
    # what an interface's method returns types what it is assigned to
    assert pf.bases["BlockReader.Lines"] == [("Segments",)]


def test_a_value_of_an_interface_type_calls_the_interface_s_method(tmp_path: Path) -> None:
    idx = RepoIndex.build(write_files(tmp_path, INTERFACES), save=False)[0]
    text = "text/text.go"
    assert calls(idx, "use/use.go") == {
        (10, text, "Reader.Advance"),  # a parameter typed with the interface
        (11, text, "Reader.Advance"),  # through the interface BlockReader embeds
        (12, text, "BlockReader.Lines"),
        (13, text, "Segments.Len"),  # typed by the interface method's result
        (14, text, "Reader.Peek"),  # a struct embedding the interface
    }
    left = INTERFACES["use/use.go"]
    got = resolve_names(idx, "use/use.go", left, ["reader.Advance", "block.Advance", "p.Peek"])
    assert [None if r is None else r[:2] for r in got] == [
        (text, "Reader.Advance"),
        (text, "Reader.Advance"),
        (text, "Reader.Peek"),
    ]


def test_an_interface_method_s_card_shows_it_in_its_interface(tmp_path: Path) -> None:
    first = 'package use\n\nimport "example.com/m/text"\n\nfunc first(b text.BlockReader) {\n'
    idx = RepoIndex.build(write_files(tmp_path, INTERFACES), save=False)[0]
    # the code names the interface: its card lists the method the code calls
    left = INTERFACES["use/use.go"]
    left = left[: left.index("\tblock.")]
    cards = {h.card.name: h.card for h in find_definitions(idx, "use/use.go", left)}
    assert TEXT.splitlines().index("\tAdvance(n int)") in cards["Reader"].methods
    # it does not (Advance comes through the interface BlockReader embeds): a card of its own
    left = first + "\tb.Advance(1)\n"
    cards = {h.card.name: h.card for h in find_definitions(idx, "use/use.go", left)}
    card = cards["Reader.Advance"]
    assert card.text == (
        "type Reader interface {\n"
        "    // Advance moves the position n bytes on.\n"
        "    Advance(n int)\n"
        "}\n"
        "// other methods of Reader: Peek"  # (``_add_other_methods``)
    )
    assert card.header == "Advance(n int)"
    assert card.line == TEXT.splitlines().index("\tAdvance(n int)")


def test_updates_of_interfaces_equal_a_rebuild(tmp_path: Path) -> None:
    root = write_files(tmp_path / "r", INTERFACES)
    idx = RepoIndex.build(root, EXACT, save=False)[0]
    edits: list[tuple[str, str | None]] = [
        # Reader loses Peek (p.Peek resolves to nothing), then gets it back
        ("text/text.go", TEXT.replace("\tPeek() byte\n", "")),
        ("text/text.go", TEXT),
        # BlockReader stops embedding Reader, then Lines returns a Reader
        ("text/text.go", TEXT.replace("\tReader\n\tLines", "\tLines")),
        ("text/text.go", TEXT.replace("Lines() Segments", "Lines() Reader")),
        # Segments becomes a struct whose Len another file declares
        (
            "text/text.go",
            TEXT.replace("Segments interface {\n\t\tLen() int\n\t}", "Segments struct{}"),
        ),
        ("text/segments.go", "package text\n\nfunc (s Segments) Len() int { return 0 }\n"),
        ("text/segments.go", None),
        # the embedded interface becomes the parser's field
        ("use/use.go", INTERFACES["use/use.go"].replace("\ttext.Reader\n", "\tr text.Reader\n")),
    ]
    _updates_equal_rebuilds(root, idx, edits, ["reader.Advance(1)", "p.Peek()"])


def _updates_equal_rebuilds(
    root: Path, idx: RepoIndex, edits: list[tuple[str, str | None]], names: list[str]
) -> None:
    """Each edit (a file's new text, None: deleted) updated in ``idx`` leaves it as a rebuild."""
    for rel, text in edits:
        path = root / rel
        if text is None:
            path.unlink()
        else:
            path.write_text(text)
        idx.update_file(rel, text)
        assert_same(idx, RepoIndex.build(root, EXACT, save=False)[0], names)


SCAN = """\
package scan

func scanFollowsTrue(b []byte) bool { return false }

func scanFollowsFalse(b []byte) bool { return false }

func scanFollowsNan(b []byte) bool { return false }

func scanOther() {}

func Parse() {}
"""

# a type of many methods, a helper package, a value's methods, a test named for a method
HELPERS = {
    "go.mod": "module example.com/m\n",
    "scan/scan.go": SCAN,
    "scan/other.go": "package scan\n\nfunc NewError() {}\n",
    "scan/parse.go": 'package scan\n\nimport "example.com/m/chars"\n\nfunc parse(b []byte) {\n'
    "\tchars.Escaped()\n\tif scanFollowsTrue(b) {\n\t}\n}\n",
    "chars/chars.go": "package chars\n\nfunc ValidNext() {}\n\nfunc Escaped() {}\n\n"
    "func hidden() {}\n",
    "chars/use.go": "package chars\n\nfunc use() {\n" + "\thidden()\n" * 5 + "}\n",
    "group/group.go": "package group\n\n"
    "type Group struct{}\n\n"
    + "".join(f"func (g *Group) M{i}() {{}}\n\n" for i in range(30))
    + "func (g *Group) Use() {}\n\nfunc (g *Group) GET() {}\n\nfunc (g *Group) RenderYAML() {}\n\n"
    "func New() *Group { return &Group{} }\n",
    "cmd/main.go": 'package main\n\nimport "example.com/m/group"\n\nfunc run() {\n'
    "\tv := group.New()\n\tv.Use()\n}\n",
    "cmd/main_test.go": 'package main\n\nimport "example.com/m/group"\n',
}


@pytest.fixture(scope="module")
def helpers(tmp_path_factory: pytest.TempPathFactory) -> RepoIndex:
    files = dict(HELPERS)
    # calls that rank the helpers: NewError and ValidNext called often, M0..M29 once
    calls = "".join("\tNewError()\n\tchars.ValidNext()\n\tchars.Escaped()\n" for _ in range(5))
    files["scan/use.go"] = (
        'package scan\n\nimport "example.com/m/chars"\n\nfunc use() {\n' + calls + "\tParse()\n}\n"
    )
    many = "".join(f"\tg.M{i}()\n" for i in range(30)) + "\tg.GET()\n\tg.GET()\n"
    files["group/use.go"] = "package group\n\nfunc use(g *Group) {\n" + many + "}\n"
    root = write_files(tmp_path_factory.mktemp("go-helpers"), files)
    return RepoIndex.build(root, save=False)[0]


def _listed(hits: list) -> set[tuple[str, int]]:
    return {
        at for h in hits for at in (*h.card.listed, *((h.card.path, m) for m in h.card.methods))
    }


def test_a_named_function_lists_its_name_s_family(helpers: RepoIndex) -> None:
    left = HELPERS["scan/parse.go"].removesuffix("}\n")
    hits = find_definitions(helpers, "scan/parse.go", left)
    card = next(h.card for h in hits if h.card.name == "scanFollowsTrue")
    # the siblings its name starts as (``scanFollows``), not ``scanOther``
    assert "scanFollowsFalse" in card.text and "scanFollowsNan" in card.text
    assert "scanOther" not in card.text
    assert for_language("go").family("followsTrue") == []  # a start of two words at least
    assert for_language("go").family("scanFollowsTrue") == ["scanFollows"]


def test_the_packages_most_called_helpers_are_listed(helpers: RepoIndex) -> None:
    left = HELPERS["scan/parse.go"].removesuffix("}\n")
    hits = find_definitions(helpers, "scan/parse.go", left)
    listing = hits[-1].card
    assert listing.kind == "listing" and "this package and those imported" in listing.text
    # the own package's NewError; not the imported package's ValidNext, which the card of
    # Escaped, called above, lists; nor Escaped, named
    assert ("scan/other.go", 2) in listing.listed and ("chars/chars.go", 2) not in listing.listed
    assert ("chars/chars.go", 4) not in listing.listed
    assert ("chars/chars.go", 6) not in listing.listed  # unexported: scan cannot call it


def test_a_function_of_an_imported_package_names_the_package_s_others(helpers: RepoIndex) -> None:
    left = HELPERS["scan/parse.go"].removesuffix("}\n") + "\tNewError()\n"
    hits = find_definitions(helpers, "scan/parse.go", left)
    card = next(h.card for h in hits if h.card.name == "Escaped")
    # the package's other exported functions the repository calls: not Escaped itself, nor
    # the unexported hidden, which the importer cannot call
    assert card.text.splitlines()[-1] == "// other functions of package chars: ValidNext"
    assert ("chars/chars.go", 2) in card.listed
    # none for a function of the file's own package, which no ``pkg.`` qualifies
    own = next(h.card for h in hits if h.card.name == "NewError")
    assert "other functions" not in own.text


def test_the_function_a_test_is_named_for_heads_the_helpers(helpers: RepoIndex) -> None:
    # ``group.New``, called once in the repository, is listed first in ``TestNew`` only
    head = 'package main\n\nimport "example.com/m/group"\n\n'
    new = (
        "group/group.go",
        HELPERS["group/group.go"].splitlines().index("func New() *Group { return &Group{} }"),
    )
    for name, first in (("TestNew", True), ("TestNewGroup", False), ("TestOther", False)):
        left = head + f"func {name}(t *testing.T) {{\n\tvar g group.Group\n"
        hits = find_definitions(helpers, "cmd/main_test.go", left)
        listings = [h.card for h in hits if h.card.kind == "listing"]
        assert (bool(listings) and listings[0].listed[0] == new) is first, name


def test_a_method_called_names_its_type_s_other_methods(helpers: RepoIndex) -> None:
    left = HELPERS["cmd/main.go"].removesuffix("}\n")
    hits = find_definitions(helpers, "cmd/main.go", left)
    card = next(h.card for h in hits if h.card.name == "Group.Use")
    # the most called first (GET), by name; not Use itself, which the code calls
    assert card.text.splitlines()[-1].startswith("// other methods of Group: GET")
    gets = HELPERS["group/group.go"].splitlines().index("func (g *Group) GET() {}")
    assert ("group/group.go", gets) in card.listed


def test_a_test_s_name_puts_the_methods_it_spells_in_its_type_s_card(helpers: RepoIndex) -> None:
    row = HELPERS["group/group.go"].splitlines().index("func (g *Group) RenderYAML() {}")
    head = 'package main\n\nimport "example.com/m/group"\n\n'
    for name, listed in (("TestGroupRenderWithYAML", True), ("TestGroupOther", False)):
        left = head + f"func {name}(t *testing.T) {{\n\tg := group.New()\n"
        hits = find_definitions(helpers, "cmd/main_test.go", left)
        card = next(h.card for h in hits if h.card.name == "Group")
        assert (("group/group.go", row) in _listed([h for h in hits if h.card is card])) is listed


EMBEDDING = {
    "go.mod": "module example.com/m\n\ngo 1.21\n",
    "web/group.go": "package web\n\ntype Group struct {\n\tbase string\n}\n\n"
    "func (g *Group) GET(p string) {}\n\nfunc (g *Group) Static(p, dir string) {}\n\n"
    "func (g *Group) Use(h string) {}\n\nfunc (g *Group) helper() {}\n",
    "web/engine.go": "package web\n\ntype Engine struct {\n\tGroup\n\tName string\n}\n\n"
    "func New() *Engine { return &Engine{} }\n\nfunc (e *Engine) Use(h string) {}\n",
}


def test_an_embedding_type_s_card_names_the_methods_it_is_promoted(tmp_path: Path) -> None:
    # ``Engine`` embeds ``Group``: ``router.Static(`` calls ``Group.Static``, which the
    # ``Engine`` card names; not ``Use`` (``Engine`` declares its own), nor the unexported
    left = 'package main\n\nimport "example.com/m/web"\n\nfunc main() {\n\trouter := web.New()\n'
    idx = RepoIndex.build(write_files(tmp_path, {**EMBEDDING, "cmd/main.go": left}), save=False)[0]
    hits = find_definitions(idx, "cmd/main.go", left)
    card = next(h.card for h in hits if h.card.name == "Engine")
    assert card.text.splitlines()[-1] == "// promoted from the types it embeds: GET, Static"
    rows = EMBEDDING["web/group.go"].splitlines()
    assert ("web/group.go", rows.index("func (g *Group) Static(p, dir string) {}")) in card.listed

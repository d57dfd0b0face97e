"""Rust resolution: the module tree, ``use`` paths, ``impl`` blocks, typed receivers, macros,
the language's own names, test code, and updates equal to a rebuild."""

from __future__ import annotations

from pathlib import Path

import pytest
from repos import write_files
from test_index import EXACT, assert_same

from repomem.context import definitions
from repomem.context.definitions import find_definitions, resolve_names
from repomem.index.langs.rust import LANGUAGE
from repomem.index.repo import RepoIndex

FILES = {
    "src/lib.rs": """\
pub mod ast;
pub mod parse;
mod util;

pub type Result<T> = std::result::Result<T, Error>;

#[derive(Debug, Clone)]
pub struct Error {
    pub kind: usize,
}

#[macro_export]
macro_rules! bail {
    ($e:expr) => {
        return Err($e)
    };
}
""",
    "src/ast/mod.rs": """\
pub mod span;

pub use self::span::Span as Position;

pub const MAX_DEPTH: usize = 8;

pub enum Kind {
    Literal,
    Group,
}

pub struct Ast {
    pub kind: Kind,
    pub span: span::Span,
}

impl Ast {
    pub fn new(kind: Kind) -> Ast {
        Ast { kind, span: span::Span::empty() }
    }

    pub fn depth(&self) -> usize {
        self.span.width()
    }
}

pub trait Visitor {
    fn visit(&mut self, ast: &Ast);
}
""",
    "src/ast/span.rs": """\
#[derive(Debug, Default)]
pub struct Span {
    pub start: usize,
}

impl Span {
    pub fn empty() -> Span {
        Span { start: 0 }
    }
}
""",
    "src/util.rs": """\
use crate::ast::span::Span;

pub(crate) fn widen(s: &Span) -> usize {
    s.start + 1
}

impl Span {
    pub fn width(&self) -> usize {
        widen(self)
    }
}

pub fn u64_helper() -> u64 {
    7
}

pub fn frobnicate_counter() -> usize {
    0
}

pub mod inner {
    pub fn deep() -> usize {
        super::widen(&crate::ast::span::Span::empty())
    }
}
""",
    "src/parse.rs": """\
use crate::ast::{self, Ast, Kind as AstKind, MAX_DEPTH};
use crate::util::inner::deep;
use crate::{bail, Error, Result};
use std::fmt::Debug;

pub struct Parser {
    depth: usize,
    last: Ast,
}

pub type Alias = Parser;

impl Parser {
    pub fn new() -> Parser {
        Parser { depth: 0, last: Ast::new(AstKind::Literal) }
    }

    pub fn parse(&mut self) -> Result<Ast> {
        let node = Ast::new(AstKind::Group);
        let d = node.depth();
        self.check(d)?;
        self.last.depth();
        let w = deep();
        if w > MAX_DEPTH {
            let e = Error { kind: w };
            bail!(e);
        }
        Ok(ast::Ast::new(AstKind::Literal))
    }

    fn check(&self, d: usize) -> Result<()> {
        Ok(())
    }
}

pub fn run(p: &mut Parser) -> usize {
    let q = Alias::new();
    let _ = p.parse();
    q.depth
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> Parser {
        Parser::new()
    }

    #[test]
    fn parses() {
        let mut p = fixture();
        p.parse().unwrap();
    }
}
""",
    "tests/integration.rs": """\
use regex_syntax::parse::Parser;

fn only_in_tests() -> usize {
    3
}

#[test]
fn parses() {
    let mut p = Parser::new();
    p.parse().unwrap();
}
""",
}


def _index(tmp_path: Path, files: dict[str, str] | None = None) -> RepoIndex:
    root = write_files(tmp_path / "regex-syntax-0.6.27", files or FILES)
    return RepoIndex.build(root, EXACT, save=False)[0]


def _edges(idx: RepoIndex, path: str) -> set[str]:
    """The qualified names ``path``'s calls resolve to, as ``file:name``."""
    return {f"{t}:{idx.resolver.qualnames[t][n]}" for _, t, n in idx.tables.calls.get(path, ())}


def _line(idx: RepoIndex, path: str, needle: str) -> str:
    """The left context of ``path`` up to (and without) the line holding ``needle``."""
    lines = idx.file_lines(path)
    row = next(i for i, line in enumerate(lines) if needle in line)
    return "\n".join(lines[:row]) + "\n"


def test_calls_resolve_through_mod_tree_use_paths_and_impls(tmp_path: Path) -> None:
    idx = _index(tmp_path)
    edges = _edges(idx, "src/parse.rs")
    assert "src/ast/mod.rs:Ast.new" in edges  # ``Ast::new`` through ``use crate::ast::{Ast}``
    assert "src/parse.rs:Parser" in edges  # the struct literal ``Parser { .. }``
    assert "src/parse.rs:Parser.check" in edges  # ``self.check`` in the impl
    assert "src/ast/mod.rs:Ast.depth" in edges  # ``self.last.depth()`` through the field
    assert "src/util.rs:inner.deep" in edges  # ``use crate::util::inner::deep``
    assert "src/lib.rs:bail!" in edges  # a ``macro_rules!`` macro imported by ``use``
    assert "src/lib.rs:Error" in edges  # a struct literal through ``use crate::{Error}``
    assert "src/parse.rs:Parser.new" in edges  # ``Alias::new`` through ``type Alias = Parser``
    # the impl of ``Span`` in another file than the struct, through ``super::``/``crate::``
    assert "src/ast/span.rs:Span.empty" in _edges(idx, "src/ast/mod.rs")
    assert "src/util.rs:Span.width" in _edges(idx, "src/ast/mod.rs")
    util = _edges(idx, "src/util.rs")
    assert {"src/util.rs:widen", "src/ast/span.rs:Span.empty"} <= util


def test_use_globs_and_test_modules(tmp_path: Path) -> None:
    idx = _index(tmp_path)
    edges = _edges(idx, "src/parse.rs")
    assert "src/parse.rs:tests.fixture" in edges  # inside ``mod tests``
    # ``use super::*`` in the test module reaches the file's items
    assert "src/parse.rs:Parser.new" in edges
    # tests/ uses the library by its crate name
    assert "src/parse.rs:Parser.new" in _edges(idx, "tests/integration.rs")


def test_names_at_the_cursor_resolve_to_cards(tmp_path: Path) -> None:
    idx = _index(tmp_path)
    left = _line(idx, "src/parse.rs", "if w > MAX_DEPTH")
    names = [
        "Ast::new",
        "node.depth",
        "self.check",
        "self.last.depth",
        "deep",
        "AstKind::Group",
        "ast::Ast",
        "Position",
        "MAX_DEPTH",
        "d.foo",
    ]
    got = resolve_names(idx, "src/parse.rs", left, names)
    found = {
        n: (g[0], idx.resolver.qualnames[g[0]][g[2]]) if g else None
        for n, g in zip(names, got, strict=True)
    }
    assert found["Ast::new"] == ("src/ast/mod.rs", "Ast.new")
    assert found["node.depth"] == ("src/ast/mod.rs", "Ast.depth")  # ``let node = Ast::new(..)``
    assert found["self.check"] == ("src/parse.rs", "Parser.check")
    assert found["self.last.depth"] == ("src/ast/mod.rs", "Ast.depth")
    assert found["deep"] == ("src/util.rs", "inner.deep")
    assert found["AstKind::Group"] == ("src/ast/mod.rs", "Kind")  # a variant: its enum
    assert found["ast::Ast"] == ("src/ast/mod.rs", "Ast")
    assert found["MAX_DEPTH"] == ("src/ast/mod.rs", "MAX_DEPTH")
    assert found["d.foo"] is None  # ``d: usize``
    # a parameter's type: ``p: &mut Parser``
    left = _line(idx, "src/parse.rs", "let _ = p.parse()")
    assert resolve_names(idx, "src/parse.rs", left, ["p.parse"])[0][:2] == (
        "src/parse.rs",
        "Parser.parse",
    )
    hits = find_definitions(idx, "src/parse.rs", _line(idx, "src/parse.rs", "let w = deep()"))
    shown = {(h.card.path, h.card.name) for h in hits}
    # ``Ast::new`` and ``node.depth``: two methods of one written type share its card
    assert ("src/ast/mod.rs", "Ast") in shown
    assert ("src/ast/mod.rs", "Ast.new") not in shown
    assert ("src/util.rs", "inner.deep") in shown  # imported, not yet called


def test_reserved_and_std_names_never_resolve(tmp_path: Path) -> None:
    files = {
        **FILES,
        "src/shadow.rs": "pub struct Debug;\npub fn usize() {}\npub struct Vec;\n"
        "pub fn println() {}\npub struct HashMap;\n",
        "src/user.rs": "use std::collections::HashMap;\nuse serde::Serialize;\n\n"
        "#[derive(Debug, Serialize)]"
        "\npub struct User {\n    id: usize,\n    m: HashMap<u64, Vec<u8>>,\n}\n\n"
        'pub fn make() -> User {\n    println!("x");\n    let v: Vec<u64> = vec![];\n'
        "    User { id: v.len(), m: HashMap::new() }\n}\n",
    }
    idx = _index(tmp_path, files)
    left = "\n".join(idx.file_lines("src/user.rs")) + "\n"
    names = [
        "Debug",
        "usize",
        "u64",
        "Vec",
        "println",
        "HashMap",
        "HashMap::new",
        "Serialize",
        "std::collections::HashMap",
        "vec",
        "Option",
        "Some",
    ]
    assert resolve_names(idx, "src/user.rs", left, names) == [None] * len(names)
    shown = {h.card.path for h in find_definitions(idx, "src/user.rs", left)}
    assert "src/shadow.rs" not in shown
    assert all(t != "src/shadow.rs" for _, t, _ in idx.tables.calls["src/user.rs"])


def test_a_name_a_use_binds_to_the_standard_library_names_no_crate(tmp_path: Path) -> None:
    """``use std::fmt;`` in tests/, then ``fmt::Result``: the standard library's, not the
    library's ``Result`` (tests/ use their library by a name only ``Cargo.toml`` says, and
    the name a ``use`` bound to ``std`` was taken for it)."""
    show = (
        "use std::fmt;\nuse std::io as stdio;\n\npub struct S;\n\nimpl fmt::Display for S {\n"
        "    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {\n"
        "        let e: stdio::Result<()> = Ok(());\n"
    )
    idx = _index(tmp_path, {**FILES, "tests/show.rs": show})
    names = ["fmt::Result", "stdio::Result", "regex_syntax::Result"]
    found = resolve_names(idx, "tests/show.rs", show, names)
    assert [f and f[:2] for f in found] == [None, None, ("src/lib.rs", "Result")]


def test_test_code_is_not_reached_from_library_code(tmp_path: Path) -> None:
    files = {
        **FILES,
        "src/caller.rs": "pub fn go(x: &Thing) {\n    x.only_in_tests_method();\n"
        "    x.frobnicate_counter();\n}\n",
        "tests/helpers.rs": "pub struct T;\nimpl T {\n"
        "    pub fn only_in_tests_method(&self) {}\n}\n",
    }
    idx = _index(tmp_path, files)
    assert not any(t.startswith("tests/") for _, t, _ in idx.tables.calls.get("src/caller.rs", ()))
    left = "\n".join(idx.file_lines("src/caller.rs")) + "\n"
    got = resolve_names(
        idx, "src/caller.rs", left, ["x.only_in_tests_method", "only_in_tests", "fixture"]
    )
    assert got == [None, None, None]
    # an inline ``#[cfg(test)] mod tests`` is test code too
    left = _line(idx, "src/parse.rs", "pub fn run(")
    assert resolve_names(idx, "src/parse.rs", left, ["tests::fixture"]) == [None]


def test_unknown_receiver_is_a_labelled_guess_only_when_unique(tmp_path: Path) -> None:
    files = {
        **FILES,
        "src/guess.rs": "pub fn go(x: i32) {\n    let y = make();\n    y.width();\n"
        "    y.len();\n}\n",
    }
    idx = _index(tmp_path, files)
    left = "\n".join(idx.file_lines("src/guess.rs")) + "\n"
    hits = {h.card.name: h.how for h in find_definitions(idx, "src/guess.rs", left)}
    assert "guess" in hits["Span.width"]
    assert resolve_names(idx, "src/guess.rs", left, ["y.len"]) == [None]


EDITS: list[tuple[str, str | None]] = [
    # a new module file appears: ``util::extra`` now resolves
    ("src/util/extra.rs", "pub fn extra() -> usize {\n    1\n}\n"),
    (
        "src/parse.rs",
        FILES["src/parse.rs"].replace(
            "let w = deep();", "let w = deep() + crate::util::extra::extra();"
        ),
    ),
    # the impl moves to another file; the old one goes
    (
        "src/util.rs",
        FILES["src/util.rs"].replace(
            "impl Span {\n    pub fn width(&self) -> usize {\n        widen(self)\n    }\n}\n", ""
        ),
    ),
    (
        "src/ast/more.rs",
        "use super::span::Span;\n\nimpl Span {\n"
        "    pub fn width(&self) -> usize {\n        2\n    }\n}\n",
    ),
    # a glob appears where a name was unresolved, and a rename changes what a name means
    ("src/ast/span.rs", FILES["src/ast/span.rs"] + "\npub fn stretch() {}\n"),
    (
        "src/ast/mod.rs",
        FILES["src/ast/mod.rs"]
        .replace("pub mod span;", "pub mod span;\nmod more;\nuse self::span::*;")
        .replace("span::Span::empty()", "Span::empty(); stretch()"),
    ),
    # a field's type changes: ``self.last.depth()`` no longer reaches ``Ast.depth``
    ("src/parse.rs", FILES["src/parse.rs"].replace("    last: Ast,", "    last: usize,")),
    ("src/ast/span.rs", None),
]


@pytest.mark.parametrize("upto", [2, 4, 6, len(EDITS)])
def test_updates_equal_a_rebuild(tmp_path: Path, upto: int) -> None:
    idx = _index(tmp_path)
    root = tmp_path / "regex-syntax-0.6.27"
    for rel, text in EDITS[:upto]:
        if text is None:
            (root / rel).unlink()
        else:
            write_files(root, {rel: text})
        idx.update_file(rel, text)
    fresh = RepoIndex.build(root, EXACT, save=False)[0]
    assert_same(idx, fresh, ["Ast::new(kind)", "fn width(&self)"])


def test_macros_defined_once_per_cfg_and_calls_of_modules(tmp_path: Path) -> None:
    files = {
        **FILES,
        "src/macros.rs": '#[cfg(feature = "debug")]\nmacro_rules! trace {\n'
        "    ($($a:tt)*) => { eprintln!($($a)*) };\n}\n\n"
        '#[cfg(not(feature = "debug"))]\nmacro_rules! trace {\n    ($($a:tt)*) => {};\n}\n',
        "src/user.rs": "pub fn go() {\n    trace!(1);\n    util();\n    crate::ast();\n}\n",
    }
    idx = _index(tmp_path, files)
    # both ``trace!`` variants are one macro: the first is the one resolved
    assert _edges(idx, "src/user.rs") == {"src/macros.rs:trace!"}
    left = "\n".join(idx.file_lines("src/user.rs")[:2]) + "\n"
    assert resolve_names(idx, "src/user.rs", left, ["trace"])[0][:2] == (
        "src/macros.rs",
        "trace!",
    )
    # a name the draft brings, not written before the cursor, may be a macro too
    first = idx.file_lines("src/user.rs")[0] + "\n"
    hits = find_definitions(idx, "src/user.rs", first, draft="    trace!(2);")
    assert ("src/macros.rs", "trace!") in {(h.card.path, h.card.name) for h in hits}


def test_a_local_bound_again_loses_its_type(tmp_path: Path) -> None:
    files = {
        **FILES,
        "src/shadow.rs": "use crate::ast::Ast;\nuse crate::parse::Parser;\n\n"
        "pub fn go(x: &Ast, p: &mut Parser) -> usize {\n"
        "    let n = x.depth();\n    let x = other();\n    x.depth()\n}\n\n"
        "pub fn next(y: u8) {\n    y.depth();\n    p.parse();\n}\n",
    }
    idx = _index(tmp_path, files)
    lines = idx.file_lines("src/shadow.rs")
    typed = "\n".join(lines[:5]) + "\n"
    assert resolve_names(idx, "src/shadow.rs", typed, ["x.depth", "p.parse"]) == [
        ("src/ast/mod.rs", "Ast.depth", idx.resolver.defs["src/ast/mod.rs"]["Ast.depth"]),
        ("src/parse.rs", "Parser.parse", idx.resolver.defs["src/parse.rs"]["Parser.parse"]),
    ]
    # ``let x = other();``: the type is not known any more; the method is a labelled guess
    again = "\n".join(lines[:6]) + "\n"
    hits = {h.name: h.how for h in find_definitions(idx, "src/shadow.rs", again)}
    assert "guess" in hits["x.depth"]
    # a primitive's methods are never guessed, and another function's parameter
    # ``p: &mut Parser`` does not type this one's ``p``
    other = "\n".join(lines[:11]) + "\n"
    assert resolve_names(idx, "src/shadow.rs", other, ["y.depth", "p.parse"]) == [None, None]


def test_method_calls_on_bindings_typed_in_their_function(tmp_path: Path) -> None:
    files = {
        **FILES,
        "src/calls.rs": "use crate::ast::span::Span;\n\n"
        "pub fn typed(x: &Span) -> usize {\n    x.width()\n}\n\n"
        "pub fn primitive(x: u8) -> usize {\n    x.width()\n}\n\n"
        "pub fn unknown() -> usize {\n    let x = make();\n    x.width()\n}\n",
    }
    idx = _index(tmp_path, files)
    pf = idx.tables.parsed["src/calls.rs"]
    by_line = {
        int(pf.node_start[s]): f"{t}:{idx.resolver.qualnames[t][n]}"
        for s, t, n in idx.tables.calls["src/calls.rs"]
    }
    assert by_line[3] == "src/util.rs:Span.width"  # ``x: &Span``
    assert 7 not in by_line  # ``x: u8``: a primitive's method, never the repository's
    assert by_line[12] == "src/util.rs:Span.width"  # untyped: the only method so named


def test_a_binding_takes_the_type_its_call_returns(tmp_path: Path) -> None:
    files = {
        **FILES,
        "src/ret.rs": "use crate::ast::span::Span;\nuse crate::ast::Ast;\n\n"
        "pub fn make_span() -> Option<Span> {\n    None\n}\n\n"
        "pub fn count() -> usize {\n    0\n}\n\n"
        "pub fn go() -> Option<usize> {\n    let s = make_span()?;\n"
        "    let a = Ast::new(crate::ast::Kind::Group);\n    let n = count();\n"
        "    let w = make_span().unwrap().width();\n    s.width();\n    a.depth();\n"
        "    n.width();\n    w.width()\n}\n",
    }
    idx = _index(tmp_path, files)
    left = "\n".join(idx.file_lines("src/ret.rs")[:17]) + "\n"
    found = resolve_names(idx, "src/ret.rs", left, ["s.width", "a.depth", "n.width", "w.width"])
    assert [f[:2] if f else None for f in found] == [
        ("src/util.rs", "Span.width"),  # ``Option<Span>`` through ``?``
        ("src/ast/mod.rs", "Ast.depth"),  # ``Ast::new`` returns ``Ast``
        None,  # ``usize``: known, and not the repository's
        ("src/util.rs", "Span.width"),  # not ``make_span``'s value: a guess
    ]
    hits = {h.name: h.how for h in find_definitions(idx, "src/ret.rs", left)}
    assert hits["s.width"] == "named here, receiver typed make_span()"


def test_a_saved_index_resolves_as_the_built_one(tmp_path: Path) -> None:
    root = write_files(tmp_path / "regex-syntax-0.6.27", FILES)
    built = RepoIndex.build(root, EXACT)[0]
    loaded = RepoIndex.load(root, EXACT)
    assert {p: sorted(c) for p, c in loaded.tables.calls.items()} == {
        p: sorted(c) for p, c in built.tables.calls.items()
    }
    left = _line(built, "src/parse.rs", "if w > MAX_DEPTH")
    names = ["Ast::new", "node.depth", "self.last.depth", "deep", "bail"]
    assert resolve_names(loaded, "src/parse.rs", left, names) == resolve_names(
        built, "src/parse.rs", left, names
    )
    assert None not in resolve_names(loaded, "src/parse.rs", left, names)


def test_a_local_binding_is_not_an_item_or_a_macro_of_its_name(tmp_path: Path) -> None:
    files = {
        **FILES,
        "src/locals.rs": "use crate::util::inner::deep;\n\n"
        "pub fn go(bail: usize) -> usize {\n    let deep = bail + 1;\n    deep + bail\n}\n\n"
        "pub fn later() -> usize {\n    bail!(1);\n    deep()\n}\n",
    }
    idx = _index(tmp_path, files)
    lines = idx.file_lines("src/locals.rs")
    inside = "\n".join(lines[:5]) + "\n"
    # ``bail`` is a parameter, ``deep`` a local: not the macro, not the imported function
    assert resolve_names(idx, "src/locals.rs", inside, ["bail", "deep"]) == [None, None]
    later = "\n".join(lines[:10]) + "\n"
    found = resolve_names(idx, "src/locals.rs", later, ["bail", "deep"])
    assert [f[:2] if f else None for f in found] == [
        ("src/lib.rs", "bail!"),  # written ``bail!(``
        ("src/util.rs", "inner.deep"),
    ]


def test_paths_from_crate_and_modules_beside_functions_of_their_name(tmp_path: Path) -> None:
    files = {
        "src/lib.rs": "mod item;\nmod value;\n\npub use crate::item::value;\n"
        "pub use crate::value::Value;\n",
        "src/item.rs": "pub fn value(n: i64) -> crate::Value {\n    crate::Value::Int(n)\n}\n",
        "src/value.rs": "pub enum Value {\n    Int(i64),\n    Str(String),\n}\n",
        "src/de.rs": "pub fn go(v: i64) -> usize {\n    match crate::value::Value::Int(v) {\n"
        "        crate::Value::Int(_) => 0,\n        _ => 1,\n    }\n}\n",
    }
    idx = _index(tmp_path, files)
    left = "\n".join(idx.file_lines("src/de.rs")[:3]) + "\n"
    value = ("src/value.rs", "Value", idx.resolver.defs["src/value.rs"]["Value"])
    # ``crate::value`` is the module (``value.rs``), not the function ``lib.rs`` imports
    names = ["crate::value::Value", "crate::Value::Int", "self::super::x"]
    assert resolve_names(idx, "src/de.rs", left, names) == [value, value, None]
    hits = find_definitions(idx, "src/de.rs", left)
    assert ("src/value.rs", "Value") in {(h.card.path, h.card.name) for h in hits}


TRAITS = {
    "src/lib.rs": "pub mod num;\npub mod big;\npub mod algo;\n",
    "src/num.rs": "pub trait AsCast: Sized {\n    fn as_cast(n: u64) -> Self;\n}\n\n"
    "pub trait Number: AsCast + Copy {}\n\n"
    "pub trait Float: Number {\n    fn pow10(self, n: i32) -> Self;\n}\n\n"
    "pub trait Math: Clone {\n    fn data(&self) -> usize;\n\n"
    "    fn twice(&mut self) -> usize {\n        self.data() * 2\n    }\n}\n",
    "src/big.rs": "use crate::num::Math;\n\n#[derive(Clone)]\n"
    "pub struct Big {\n    n: usize,\n}\n\n"
    "impl Math for Big {\n    fn data(&self) -> usize {\n        self.n\n    }\n}\n",
    "src/algo.rs": "use crate::big::Big;\nuse crate::num::Float;\n\n"
    "pub fn fast<F>(m: u64, b: Big) -> F\nwhere\n    F: Float,\n{\n"
    "    let float = F::as_cast(m);\n    let mut copy = b;\n    copy.twice();\n"
    "    float.pow10(2)\n}\n",
}


def test_generic_bounds_supertraits_and_default_methods_through_impls(tmp_path: Path) -> None:
    idx = _index(tmp_path, TRAITS)
    left = _line(idx, "src/algo.rs", "float.pow10(2)")
    names = ["F::as_cast", "float.pow10", "copy.twice", "b.data"]
    found = [f[:2] if f else None for f in resolve_names(idx, "src/algo.rs", left, names)]
    assert found == [
        ("src/num.rs", "AsCast.as_cast"),  # ``F: Float``, ``Float: Number``, ``Number: AsCast``
        ("src/num.rs", "Float.pow10"),  # ``F::as_cast`` returns ``Self``: an ``F``
        ("src/num.rs", "Math.twice"),  # ``let mut copy = b;`` and ``impl Math for Big``
        ("src/big.rs", "Big.data"),
    ]
    # the call edge of ``copy.twice()`` goes to the trait's default method
    assert "src/num.rs:Math.twice" in _edges(idx, "src/algo.rs")


def test_updates_of_trait_impls_equal_a_rebuild(tmp_path: Path) -> None:
    idx = _index(tmp_path, TRAITS)
    root = tmp_path / "regex-syntax-0.6.27"
    edits = [
        ("src/big.rs", TRAITS["src/big.rs"].replace("impl Math for Big", "impl Math for Small")),
        ("src/big.rs", TRAITS["src/big.rs"]),
        ("src/num.rs", TRAITS["src/num.rs"].replace("fn twice", "fn thrice")),
    ]
    for rel, text in edits:
        write_files(root, {rel: text})
        idx.update_file(rel, text)
        fresh = RepoIndex.build(root, EXACT, save=False)[0]
        assert_same(idx, fresh, ["copy.twice()"])
    assert "src/num.rs:Math.twice" not in _edges(idx, "src/algo.rs")


def test_macros_of_inline_modules_and_std_names_stay_there(tmp_path: Path) -> None:
    files = {
        **FILES,
        "src/checks.rs": "#[cfg(test)]\nmod tests {\n    macro_rules! assert_eq {\n"
        "        ($a:expr, $b:expr) => {};\n    }\n\n    mod inner {\n"
        "        macro_rules! helper {\n            () => {};\n        }\n    }\n\n"
        "    fn t() {\n        assert_eq!(1, 1);\n    }\n}\n",
        "src/user.rs": "pub fn go() {\n    assert_eq!(1, 2);\n    helper!();\n}\n",
    }
    idx = _index(tmp_path, files)
    # the test module's own ``assert_eq!`` is its module's; elsewhere it is the standard one
    assert "src/checks.rs:tests.assert_eq!" in _edges(idx, "src/checks.rs")
    assert _edges(idx, "src/user.rs") == set()


def test_imports_rank_by_how_often_the_file_uses_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # as in a large repository, where the graph's search from the cursor reaches none of them
    monkeypatch.setattr(definitions, "QUERY_EPSILON", 1.0)
    calls = "".join(f"    let x{k} = Ast::new(Kind::Group);\n" for k in range(5))
    other = "".join(f"    let y{k} = {k};\n" for k in range(50))
    files = {
        **FILES,
        "src/many.rs": "use crate::ast::{Ast, Kind};\n"
        "use crate::util::{frobnicate_counter, u64_helper};\n\n"
        "pub fn first() {\n" + calls + "}\n\npub fn go() {\n" + other + "}\n",
    }
    idx = _index(tmp_path, files)
    left = "\n".join(idx.file_lines("src/many.rs")[:-1]) + "\n"
    hits = [h.card.name for h in find_definitions(idx, "src/many.rs", left)]
    # ``Ast`` is called in another function 50 lines up, out of the names read at the
    # cursor: it (and the method called, one of the file's most called) comes before the
    # imports the file never calls, whatever their order
    assert hits[:2] == ["Ast.new", "Ast"]
    assert hits.index("Ast") < min(hits.index("frobnicate_counter"), hits.index("u64_helper"))


def test_what_the_file_calls_most_is_a_candidate(tmp_path: Path) -> None:
    calls = "".join(f"    let x{k} = widen(&s);\n" for k in range(5))
    other = "".join(f"    let y{k} = {k};\n" for k in range(50))
    files = {
        **FILES,
        "src/glob.rs": "use crate::util::*;\nuse crate::ast::span::Span;\n\n"
        "pub fn first(s: Span) {\n" + calls + "}\n\npub fn go() {\n" + other + "}\n",
    }
    idx = _index(tmp_path, files)
    left = "\n".join(idx.file_lines("src/glob.rs")[:-1]) + "\n"
    hits = {h.card.name: h.how for h in find_definitions(idx, "src/glob.rs", left)}
    # ``widen`` comes through a glob, named 50 lines up: the file's calls bring it
    assert hits["widen"] == "called in this file (5 calls)"


def test_a_binding_no_line_uses_yet_puts_its_type_first(tmp_path: Path) -> None:
    # ``go(s: &Span)`` then ``let a = Ast::new(..)``: the body so far calls ``count()``
    # only; the next line is likely to call a member of ``a`` or ``s``, which nothing
    # names yet (the last bound first)
    head = (
        "use crate::ast::span::Span;\nuse crate::ast::Ast;\n\n"
        "pub fn count() -> usize {\n    0\n}\n\n"
        "pub fn go(s: &Span) -> usize {\n    let a = Ast::new(crate::ast::Kind::Group);\n"
        "    count();\n"
    )
    files = {**FILES, "src/fresh.rs": head + "    s.width();\n    a.depth()\n}\n"}
    idx = _index(tmp_path, files)
    hits = [(h.card.path, h.card.name) for h in find_definitions(idx, "src/fresh.rs", head)]
    assert hits[:2] == [("src/ast/mod.rs", "Ast"), ("src/ast/span.rs", "Span")]
    # once the body uses them, their types rank as any other name does
    used = head + "    s.width();\n    a.depth();\n"
    hits = [h.card.name for h in find_definitions(idx, "src/fresh.rs", used)]
    assert hits[0] not in ("Ast", "Span")


def _sized(name: str, body: str) -> str:
    return (
        f"use crate::hint;\n\npub struct {name};\n\nimpl Iterator for {name} {{\n"
        "    type Item = u8;\n\n    fn next(&mut self) -> Option<u8> {\n        None\n    }\n\n"
        f"    fn size_hint(&self) -> (usize, Option<usize>) {{\n{body}"
    )


def test_a_method_just_begun_gets_what_its_other_implementations_call(tmp_path: Path) -> None:
    # ``size_hint`` of the other ``impl Iterator for`` blocks both call ``hint::add``, which
    # no line of ``C``'s names yet; ``hint::mul`` only one of them
    files = {
        "src/lib.rs": "pub mod hint;\npub mod a;\npub mod b;\npub mod c;\n",
        "src/hint.rs": "pub fn add(a: usize) -> usize {\n    a\n}\n\n"
        "pub fn mul(a: usize) -> usize {\n    a\n}\n",
        "src/a.rs": _sized("A", "        (hint::add(1), None)\n    }\n}\n"),
        "src/b.rs": _sized(
            "B", "        let n = hint::mul(2);\n        (hint::add(n), None)\n    }\n}\n"
        ),
        "src/c.rs": _sized("C", "        "),
    }
    idx = _index(tmp_path, files)
    left = files["src/c.rs"]
    hits = find_definitions(idx, "src/c.rs", left)
    assert (hits[0].card.path, hits[0].card.name, hits[0].how) == (
        "src/hint.rs",
        "add",
        "called by 2 other implementations",
    )
    assert "mul" not in {h.card.name for h in hits}
    # not in an ``impl Trait for`` block's method: nothing of the kind
    free = "use crate::hint;\n\npub fn size_hint() -> usize {\n        "
    files["src/c.rs"] = free
    idx = _index(tmp_path / "free", files)
    assert all("implementations" not in h.how for h in find_definitions(idx, "src/c.rs", free))


def test_an_impl_block_just_begun_gets_what_the_trait_s_other_blocks_call(
    tmp_path: Path,
) -> None:
    # ``impl Clone for C {``: the other ``impl Clone for`` blocks invoke ``clone_fields!`` at
    # their top level, ``impl Debug`` ones ``debug_fields!``; an edit of a block is exact
    macros = (
        "macro_rules! clone_fields {\n    ($($f:ident),*) => {};\n}\n\n"
        "macro_rules! debug_fields {\n    ($($f:ident),*) => {};\n}\n"
    )

    def typed(name: str) -> str:
        return (
            f"pub struct {name} {{\n    a: u8,\n}}\n\nimpl Clone for {name} {{\n"
            "    clone_fields!(a);\n}\n\nimpl std::fmt::Debug for "
            f"{name} {{\n    debug_fields!(a);\n}}\n"
        )

    left = "pub struct C {\n    a: u8,\n}\n\nimpl Clone for C {\n    "
    files = {
        "src/lib.rs": "#[macro_use]\nmod macros;\npub mod a;\npub mod b;\npub mod c;\n",
        "src/macros.rs": macros,
        "src/a.rs": typed("A"),
        "src/b.rs": typed("B"),
        "src/c.rs": left,
    }
    idx = _index(tmp_path, files)
    hits = find_definitions(idx, "src/c.rs", left)
    assert (hits[0].card.name, hits[0].how) == (
        "clone_fields!",
        "called by 2 other implementations",
    )
    assert "debug_fields!" not in {h.card.name for h in hits}
    root = tmp_path / "regex-syntax-0.6.27"
    edited = typed("B").replace("impl Clone for B", "impl Copy for B")
    write_files(root, {"src/b.rs": edited})
    idx.update_file("src/b.rs", edited)
    assert_same(idx, RepoIndex.build(root, EXACT, save=False)[0], [])
    assert all("implementations" not in h.how for h in find_definitions(idx, "src/c.rs", left))


def test_a_macro_exported_from_another_file_is_at_its_crates_root(tmp_path: Path) -> None:
    # ``#[macro_export]`` puts ``ensure!`` at the crate's root, whichever file defines it:
    # ``use regex_syntax::ensure;`` (a test crate) and ``use crate::ensure;`` reach it
    files = {
        **FILES,
        "src/lib.rs": "#[macro_use]\nmod macros;\n" + FILES["src/lib.rs"],
        "src/macros.rs": "#[macro_export]\nmacro_rules! ensure {\n    ($e:expr) => {};\n}\n",
        "src/user.rs": "use crate::ensure;\n\npub fn go() {\n    ensure!(1);\n}\n",
        "tests/ui/ensure.rs": "use regex_syntax::ensure;\n\nfn main() {\n    ensure!(1);\n}\n",
    }
    idx = _index(tmp_path, files)
    for path in ("src/user.rs", "tests/ui/ensure.rs"):
        assert _edges(idx, path) == {"src/macros.rs:ensure!"}
        hits = find_definitions(idx, path, idx.file_lines(path)[0] + "\n")
        assert ("src/macros.rs", "ensure!") in {(h.card.path, h.card.name) for h in hits}
    # the macro's file gone, and back: updates equal a rebuild
    root = tmp_path / "regex-syntax-0.6.27"
    for text in (None, files["src/macros.rs"]):
        if text is None:
            (root / "src/macros.rs").unlink()
        else:
            write_files(root, {"src/macros.rs": text})
        idx.update_file("src/macros.rs", text)
        assert_same(idx, RepoIndex.build(root, EXACT, save=False)[0], ["ensure!(1);"])
    assert _edges(idx, "tests/ui/ensure.rs") == {"src/macros.rs:ensure!"}


def test_a_field_typed_by_a_type_parameter_has_its_bounds_members(tmp_path: Path) -> None:
    # ``self.read.peek()`` under ``impl<R: Read> Parser<R>``: ``read: R`` is the block's R
    files = {
        "src/lib.rs": "pub mod read;\npub mod de;\n",
        "src/read.rs": "pub trait Read {\n    fn peek(&mut self) -> u8;\n"
        "    fn parse_str(&mut self) -> usize;\n}\n",
        "src/de.rs": "use crate::read::Read;\n\npub struct Parser<R> {\n    read: R,\n"
        "    depth: usize,\n}\n\nimpl<R: Read> Parser<R> {\n    fn go(&mut self) -> u8 {\n"
        "        self.read.peek()\n    }\n}\n\npub struct Other<R> {\n    read: R,\n}\n\n"
        "impl<R: Read> Other<Vec<R>> {\n    fn go(&mut self, p: Parser<R>) -> u8 {\n"
        "        p.read.peek()\n    }\n}\n",
    }
    idx = _index(tmp_path, files)
    left = _line(idx, "src/de.rs", "self.read.peek()")
    names = ["self.read.parse_str", "self.depth.parse_str"]
    found = [f[:2] if f else None for f in resolve_names(idx, "src/de.rs", left, names)]
    assert found == [("src/read.rs", "Read.parse_str"), None]
    # another type's field of that name is not the block's parameter
    left = _line(idx, "src/de.rs", "p.read.peek()")
    assert resolve_names(idx, "src/de.rs", left, ["p.read.peek"]) == [None]


def test_a_macro_of_a_module_under_tests_reaches_the_test_crates_there(tmp_path: Path) -> None:
    # ``#[macro_use] mod macros;`` in ``tests/test.rs``: ``tests/macros/mod.rs`` has no crate
    # root of its own, and its macros are the test crate's
    files = {
        **FILES,
        "tests/macros/mod.rs": "macro_rules! pretty {\n    ($e:expr) => {};\n}\n",
        "tests/test.rs": "#[macro_use]\nmod macros;\n\n#[test]\nfn t() {\n    pretty!(1);\n}\n",
        "examples/demo.rs": "fn main() {\n    pretty!(1);\n}\n",
    }
    idx = _index(tmp_path, files)
    assert _edges(idx, "tests/test.rs") == {"tests/macros/mod.rs:pretty!"}
    assert _edges(idx, "examples/demo.rs") == set()  # not under ``examples/``
    hits = find_definitions(idx, "tests/test.rs", _line(idx, "tests/test.rs", "pretty!(1)"))
    assert ("tests/macros/mod.rs", "pretty!") in {(h.card.path, h.card.name) for h in hits}
    root = tmp_path / "regex-syntax-0.6.27"
    for text in (None, files["tests/macros/mod.rs"]):
        if text is None:
            (root / "tests/macros/mod.rs").unlink()
        else:
            write_files(root, {"tests/macros/mod.rs": text})
        idx.update_file("tests/macros/mod.rs", text)
        assert_same(idx, RepoIndex.build(root, EXACT, save=False)[0], ["pretty!(1);"])


def test_a_crate_beside_others_in_benches_is_no_module_of_theirs(tmp_path: Path) -> None:
    # ``benches/regex_syntax.rs`` and ``benches/parse.rs`` are crates of their own: their
    # ``use regex_syntax::…`` names the library, not the bench so named (nor itself)
    bench = "use regex_syntax::ast::{Ast, Kind};\n\nfn main() {\n    Ast::new(Kind::Group);\n}\n"
    files = {**FILES, "benches/regex_syntax.rs": bench, "benches/parse.rs": bench}
    idx = _index(tmp_path, files)
    for path in ("benches/regex_syntax.rs", "benches/parse.rs"):
        assert "src/ast/mod.rs:Ast.new" in _edges(idx, path)


def test_a_binding_typed_through_generic_arguments_in_its_path(tmp_path: Path) -> None:
    # ``Ast::<u8>::new(..)`` is ``Ast::new(..)``: its value an ``Ast`` (not a guess: ``Tree``
    # has a ``depth`` too)
    files = {
        **FILES,
        "src/turbo.rs": "use crate::ast::{Ast, Kind};\n\npub struct Tree;\n\nimpl Tree {\n"
        "    pub fn depth(&self) -> usize {\n        0\n    }\n}\n\npub fn go() -> usize {\n"
        "    let a = Ast::<u8>::new(Kind::Group);\n    a.depth()\n}\n",
    }
    idx = _index(tmp_path, files)
    assert "src/ast/mod.rs:Ast.depth" in _edges(idx, "src/turbo.rs")
    left = _line(idx, "src/turbo.rs", "a.depth()")
    assert [
        f[:2] if f else None for f in resolve_names(idx, "src/turbo.rs", left, ["a.depth"])
    ] == [("src/ast/mod.rs", "Ast.depth")]


def test_methods_of_one_written_type_share_its_card(tmp_path: Path) -> None:
    # ``a.depth()`` and ``a.kind()`` on an ``Ast`` the code writes: the type's card names them
    # both (and the next one) in the room of one
    files = {
        **FILES,
        "src/grouped.rs": "use crate::ast::{Ast, Kind};\n\npub fn go() -> usize {\n"
        "    let a = Ast::new(Kind::Group);\n    a.depth();\n    a.kind();\n    0\n}\n",
    }
    files["src/ast/mod.rs"] = files["src/ast/mod.rs"].replace(
        "    pub fn depth(&self) -> usize {",
        "    pub fn kind(&self) -> usize {\n        0\n    }\n\n    pub fn depth(&self) -> usize {",
    )
    idx = _index(tmp_path, files)
    left = _line(idx, "src/grouped.rs", "    0")
    names = {h.card.name for h in find_definitions(idx, "src/grouped.rs", left)}
    assert "Ast" in names
    assert "Ast.depth" not in names and "Ast.kind" not in names


MACROS = {
    "src/lib.rs": "#[macro_use]\nmod macros;\npub mod visit;\npub mod algo;\n",
    "src/macros.rs": "macro_rules! trait_template {\n    ($($t:tt)*) => { $($t)* };\n}\n\n"
    "macro_rules! iterator_wrap {\n    ($($t:tt)*) => {};\n}\n",
    "src/visit.rs": "trait_template! {\n/// Indices of nodes.\npub trait NodeIndexable {\n"
    "    fn node_bound(&self) -> usize;\n    fn to_index(&self, a: u32) -> usize;\n}\n}\n\n"
    "iterator_wrap! {\nimpl (Iterator) for\nstruct Nodes { iter: u32 }\n}\n\n"
    "pub fn after() -> usize {\n    0\n}\n",
    "src/algo.rs": "use crate::visit::NodeIndexable;\n\n"
    "pub fn count<G>(g: G) -> usize\nwhere\n    G: NodeIndexable,\n{\n"
    "    let n = g.node_bound();\n    g.to_index(1) + n\n}\n\n"
    "quickcheck! {\n    fn prop(a: Vec<u8>) -> bool {\n"
    "        crate::visit::after() == 0\n    }\n}\n",
}


def test_items_a_macro_wraps_are_items(tmp_path: Path) -> None:
    # a trait declared inside ``trait_template! { .. }``, functions inside ``quickcheck! {
    # .. }``: the grammar is shown them as items; ``iterator_wrap!``'s body is no item and
    # stays the macro's (the items after it unharmed)
    idx = _index(tmp_path, MACROS)
    defs = idx.resolver.defs
    assert {"NodeIndexable", "NodeIndexable.to_index", "after"} <= set(defs["src/visit.rs"])
    assert "Nodes" not in defs["src/visit.rs"]
    assert "prop" in defs["src/algo.rs"]
    # rows and text stay the file's
    row = idx.parses()["src/visit.rs"].node_start[defs["src/visit.rs"]["NodeIndexable.to_index"]]
    assert "fn to_index" in idx.file_lines("src/visit.rs")[int(row)]
    assert "src/visit.rs:after" in _edges(idx, "src/algo.rs")  # a call in a wrapped function
    left = _line(idx, "src/algo.rs", "g.to_index(1)")
    found = resolve_names(idx, "src/algo.rs", left, ["g.to_index"])
    assert [f[:2] if f else None for f in found] == [("src/visit.rs", "NodeIndexable.to_index")]
    # the wrapper removed, and back: updates equal a rebuild
    root = tmp_path / "regex-syntax-0.6.27"
    plain = MACROS["src/visit.rs"].replace("trait_template! {\n", "").replace("}\n}\n", "}\n", 1)
    for text in (plain, MACROS["src/visit.rs"]):
        write_files(root, {"src/visit.rs": text})
        idx.update_file("src/visit.rs", text)
        assert_same(idx, RepoIndex.build(root, EXACT, save=False)[0], ["g.to_index(1)"])


FOREIGN = {
    "src/lib.rs": "pub mod loom;\npub mod buf;\npub mod shared;\n",
    "src/loom.rs": "pub(crate) mod atomic {\n"
    "    pub(crate) use core::sync::atomic::AtomicPtr;\n\n"
    "    pub(crate) trait AtomicMut<T> {\n        fn with_mut(&mut self) -> T;\n    }\n\n"
    "    impl<T> AtomicMut<T> for AtomicPtr<T> {\n        fn with_mut(&mut self) -> T {\n"
    "            todo!()\n        }\n    }\n}\n",
    "src/buf.rs": "pub trait BufMut {\n    fn put_slice(&mut self, s: &[u8]);\n\n"
    "    fn put_u8(&mut self, n: u8) {\n        self.put_slice(&[n])\n    }\n}\n\n"
    "impl BufMut for Vec<u8> {\n    fn put_slice(&mut self, s: &[u8]) {\n"
    "        self.extend_from_slice(s)\n    }\n}\n\n"
    "pub struct Chunk;\n\nimpl Chunk {\n    pub fn put_u8(&mut self, n: u8) {}\n}\n\n"
    "pub trait Run {\n    fn run(&mut self);\n}\n\n"
    "impl<F: FnMut()> Run for F {\n    fn run(&mut self) {}\n}\n",
    "src/shared.rs": "use core::sync::atomic::AtomicPtr;\nuse crate::buf::BufMut;\n"
    "use crate::loom::atomic::AtomicMut;\n\n"
    "pub fn drop_shared<F>(data: &mut AtomicPtr<()>, v: Vec<u8>, f: F) {\n"
    "    let mut w = Vec::new();\n    let c: Chunk = make();\n"
    "    data.with_mut();\n    w.put_u8(1);\n    v.put_slice(&[]);\n    c.put_u8(2);\n}\n",
}


def test_methods_a_trait_of_the_repository_gives_a_type_from_outside_it(tmp_path: Path) -> None:
    # ``data: &mut AtomicPtr<()>``, ``Vec<u8>``: the repository's ``impl Trait for`` blocks of
    # those types give them their methods, the block's own or the trait's default; a type
    # of the repository (``Chunk``) or a type parameter is none of them
    idx = _index(tmp_path, FOREIGN)
    left = _line(idx, "src/shared.rs", "data.with_mut()")
    names = ["data.with_mut", "w.put_u8", "v.put_slice", "c.put_u8", "data.put_u8", "f.run"]
    found = [f[:2] if f else None for f in resolve_names(idx, "src/shared.rs", left, names)]
    assert found == [
        ("src/loom.rs", "atomic.AtomicPtr.with_mut"),
        ("src/buf.rs", "BufMut.put_u8"),
        ("src/buf.rs", "Vec.put_slice"),
        None,
        None,
        None,  # ``impl<F> Run for F`` is for any type, ``F`` no type so named
    ]
    # bound just above and not used yet: the traits in scope that the repository implements
    # for its type, first (``BufMut``, not in scope, is none of them)
    left = (
        "use core::sync::atomic::AtomicPtr;\nuse crate::loom::atomic::AtomicMut;\n\n"
        "pub fn go(data: &mut AtomicPtr<()>, v: Vec<u8>) {\n"
    )
    write_files(tmp_path / "regex-syntax-0.6.27", {"src/go.rs": left})
    idx.update_file("src/go.rs", left)
    fresh = LANGUAGE.fresh_types(idx.resolver, "src/go.rs", left.split("\n"))
    assert [idx.resolver.qualnames[p][n] for p, n in fresh] == ["atomic.AtomicMut"]
    assert find_definitions(idx, "src/go.rs", left)[0].card.name == "atomic.AtomicMut"


IO = {
    "src/lib.rs": "pub mod io;\npub mod ser;\n",
    "src/io/mod.rs": "pub use self::imp::{Error, Write};\n\n"
    '#[cfg(not(feature = "std"))]\n#[path = "core.rs"]\nmod imp;\n\n'
    '#[cfg(feature = "std")]\nuse std::io as imp;\n',
    "src/io/core.rs": "pub struct Error;\n\nimpl Error {\n    pub fn new() -> Error {\n"
    "        Error\n    }\n}\n\npub trait Write {\n"
    "    fn write(&mut self, buf: &[u8]) -> usize;\n\n"
    "    fn write_all(&mut self, buf: &[u8]) {\n        self.write(buf);\n    }\n}\n",
    "src/ser.rs": "use crate::io;\n\npub fn to_writer<W: io::Write>(mut writer: W) {\n"
    '    writer.write(b"x");\n    io::Error::new();\n    writer.write_all(b",");\n}\n',
}


def test_a_module_a_path_attribute_names_wins_over_a_use_of_its_name(tmp_path: Path) -> None:
    # the ``no_std`` facade: ``#[path = "core.rs"] mod imp;`` beside ``use std::io as imp;``
    # (the other ``#[cfg]``): ``io::Write`` is the repository's ``core.rs``
    idx = _index(tmp_path, IO)
    assert _edges(idx, "src/ser.rs") == {"src/io/core.rs:Error.new"}
    left = _line(idx, "src/ser.rs", "writer.write_all")
    found = resolve_names(idx, "src/ser.rs", left, ["writer.write_all", "io::Error"])
    assert [f[:2] if f else None for f in found] == [
        ("src/io/core.rs", "Write.write_all"),
        ("src/io/core.rs", "Error"),
    ]
    # the named file gone, and back: updates equal a rebuild
    root = tmp_path / "regex-syntax-0.6.27"
    for text in (None, IO["src/io/core.rs"]):
        if text is None:
            (root / "src/io/core.rs").unlink()
        else:
            write_files(root, {"src/io/core.rs": text})
        idx.update_file("src/io/core.rs", text)
        assert_same(idx, RepoIndex.build(root, EXACT, save=False)[0], ["writer.write(b"])
        assert bool(_edges(idx, "src/ser.rs")) == (text is not None)


def test_a_file_a_path_attribute_names_is_of_its_declaring_crate(tmp_path: Path) -> None:
    # ``tests/lexical.rs`` takes ``../src/num.rs`` and ``lexical/float.rs`` as modules by
    # ``#[path]``: in ``float.rs``, ``crate::`` is that test crate
    lexical = '#[path = "../src/num.rs"]\nmod num;\n\n#[path = "lexical/float.rs"]\nmod float;\n'
    files = {
        "src/lib.rs": "pub mod num;\n",
        "src/num.rs": "pub struct Float;\n\nimpl Float {\n    pub fn imul(&mut self) {}\n}\n",
        "tests/lexical.rs": lexical,
        "tests/lexical/float.rs": "use crate::num::Float;\n\nfn check(mut a: Float) {\n"
        "    a.imul();\n}\n",
    }
    idx = _index(tmp_path, files)
    assert _edges(idx, "tests/lexical/float.rs") == {"src/num.rs:Float.imul"}
    root = tmp_path / "regex-syntax-0.6.27"
    for text in (lexical.replace("lexical/float.rs", "lexical/other.rs"), lexical):
        write_files(root, {"tests/lexical.rs": text})
        idx.update_file("tests/lexical.rs", text)
        assert_same(idx, RepoIndex.build(root, EXACT, save=False)[0], ["a.imul();"])
        expected = {"src/num.rs:Float.imul"} if text == lexical else set()
        assert _edges(idx, "tests/lexical/float.rs") == expected


IMPLEMENTED = {
    "Cargo.toml": '[package]\nname = "big"\n',
    "src/lib.rs": "mod math;\nmod bignum;\nmod use_it;\n",
    "src/math.rs": "pub trait Math {\n    fn data(&self) -> u32;\n\n"
    "    fn imul_pow10(&mut self, n: u32) {\n    }\n\n"
    "    fn bit_length(&self) -> u32 {\n        0\n    }\n}\n",
    "src/bignum.rs": "use crate::math::Math;\n\npub struct Bigint {\n    pub data: u32,\n}\n\n"
    "impl Math for Bigint {\n    fn data(&self) -> u32 {\n        self.data\n    }\n}\n",
    "src/use_it.rs": "use crate::bignum::Bigint;\n\nfn large(mantissa: Bigint) {\n"
    "    let mut bigmant = mantissa;\n",
}


def test_a_type_s_card_names_the_methods_of_the_traits_it_implements(tmp_path: Path) -> None:
    # ``impl Math for Bigint``: ``bigmant.imul_pow10(`` calls the trait's default method,
    # which ``Bigint``'s card names; not ``data``, which the impl block gives it
    idx, _ = RepoIndex.build(write_files(tmp_path, IMPLEMENTED), save=False)
    hits = find_definitions(idx, "src/use_it.rs", IMPLEMENTED["src/use_it.rs"])
    card = next(h.card for h in hits if h.card.name == "Bigint")
    heading = "// from the repository's traits it implements: imul_pow10, bit_length"
    assert card.text.splitlines()[-1] == heading
    rows = IMPLEMENTED["src/math.rs"].splitlines()
    assert ("src/math.rs", rows.index("    fn imul_pow10(&mut self, n: u32) {")) in card.listed


FN_USES = {
    "src/lib.rs": "pub mod visit;\npub mod algo;\n",
    "src/visit.rs": "pub struct Filtered;\n\nimpl Filtered {\n"
    "    pub fn from_fn() -> Self {\n        Filtered\n    }\n}\n\n"
    "pub struct Error;\n",
    "src/algo.rs": "pub struct Error;\n\npub fn first() {\n    use crate::visit::Filtered;\n"
    "    use std::fmt::Error;\n    let f = Filtered::from_fn();\n}\n\n"
    "pub fn second() {\n    let e = Error;\n    let g = Filtered::from_fn();\n}\n",
}


def test_a_functions_use_binds_in_that_function(tmp_path: Path) -> None:
    # ``use`` items inside a function body: its calls resolve through them, and a cursor in
    # it reads them; another function's cursor does not, nor does a ``use`` of a name the
    # module defines hide the module's own (``Error``)
    idx = _index(tmp_path, FN_USES)
    assert "src/visit.rs:Filtered.from_fn" in _edges(idx, "src/algo.rs")
    inside = _line(idx, "src/algo.rs", "let f = Filtered")
    names = ["Filtered::from_fn", "Filtered"]
    found = [f[:2] if f else None for f in resolve_names(idx, "src/algo.rs", inside, names)]
    assert found == [("src/visit.rs", "Filtered.from_fn"), ("src/visit.rs", "Filtered")]
    elsewhere = _line(idx, "src/algo.rs", "let g = Filtered")
    names = ["Filtered::from_fn", "Error"]
    found = [f[:2] if f else None for f in resolve_names(idx, "src/algo.rs", elsewhere, names)]
    assert found == [None, ("src/algo.rs", "Error")]
    # not offered as an import of the file (the file's calls of it still count)
    hits = find_definitions(idx, "src/algo.rs", elsewhere)
    assert not [h for h in hits if h.how.startswith("import")]
    assert "called in this file" in next(h.how for h in hits if h.card.name == "Filtered.from_fn")
    # updates equal a rebuild
    root = tmp_path / "regex-syntax-0.6.27"
    moved = FN_USES["src/algo.rs"].replace("    use crate::visit::Filtered;\n", "")
    for text in (moved, FN_USES["src/algo.rs"]):
        write_files(root, {"src/algo.rs": text})
        idx.update_file("src/algo.rs", text)
        fresh = RepoIndex.build(root, EXACT, save=False)[0]
        assert_same(idx, fresh, ["Filtered::from_fn()"])


def test_a_buffer_cut_inside_an_inline_module_keeps_the_files_definitions() -> None:
    """A buffer cut at the cursor inside ``mod state { impl .. { fn .. {`` loses every
    definition of the file in one syntax error: parsed with the closers appended (rows
    unchanged), the module and its items are there. A buffer cut inside an ``impl`` outside
    a module is parsed as written (its repair ranked the ``impl``'s type ahead of the next
    line's definitions)."""
    from repomem.index.parsing import _closers, parse_tree

    head = "use std::fmt;\n\nfn top() -> u8 { b'}' }\n\n"
    cut = "mod state {\n    pub struct S<'a> { s: &'a str }\n    impl<'a> S<'a> {\n"
    cut += "        fn f(&self) {\n            let r = r#\"}\"#;\n            let c = '{';\n"
    source = (head + cut).encode()
    assert _closers("rust", source) == b"}}}"
    fixed, tree = parse_tree("rust", source)
    assert fixed == source[:-1] + b"}}}\n"  # on its last line: its rows stay the same
    assert not tree.root_node.has_error
    outside = (head + cut.replace("mod state {\n", "")).encode()
    kept, broken = parse_tree("rust", outside)
    assert kept == outside and broken.root_node.has_error


def _forwarding(wrapper: str) -> dict[str, str]:
    step = "    pub fn step{}(&self) -> u32 {{\n        {}\n    }}\n\n"
    fillers = "".join(step.format(k, k) for k in range(30))
    return {
        "Cargo.toml": '[package]\nname = "wrap"\n',
        "src/lib.rs": "mod core;\nmod map;\n",
        "src/core.rs": "pub struct Core {\n    n: u32,\n}\n\nimpl Core {\n"
        "    pub fn new() -> Self {\n        Core { n: 0 }\n    }\n\n"
        "    pub fn with_capacity(n: u32) -> Self {\n        Core { n }\n    }\n\n"
        f"{fillers}"
        "    pub fn retain_in_order(&mut self, keep: u32) {\n        self.n = keep;\n    }\n}\n",
        "src/map.rs": "use crate::core::Core;\n\npub struct Map {\n    core: Core,\n}\n\n"
        "impl Map {\n    pub fn new() -> Self {\n        Map { core: Core::new() }\n    }\n\n"
        "    pub fn with_capacity(n: u32) -> Self {\n"
        "        Map { core: Core::with_capacity(n) }\n    }\n\n"
        f"{wrapper}",
    }


def _core_lists_retain_in_order(tmp_path: Path, files: dict[str, str]) -> bool:
    """Whether ``src/map.rs``'s card of ``Core`` lists ``retain_in_order`` among its methods."""
    idx = _index(tmp_path, files)
    card = next(
        h.card
        for h in find_definitions(idx, "src/map.rs", files["src/map.rs"])
        if h.card.name == "Core"
    )
    row = (
        files["src/core.rs"]
        .splitlines()
        .index("    pub fn retain_in_order(&mut self, keep: u32) {")
    )
    return row in card.methods


@pytest.mark.parametrize(
    ("wrapper", "listed"),
    [
        ("    pub fn retain(&mut self, keep: u32) {\n", True),
        ("    pub fn retain_in_order(&mut self, keep: u32) {\n", True),
        ("    pub fn keep(&mut self, keep: u32) {\n", False),
        # a function of the module, no method: no field to forward to
        ("}\n\npub fn retain(map: &mut Map) {\n", False),
    ],
)
def test_a_method_just_begun_lists_first_the_method_it_forwards_to(
    tmp_path: Path, wrapper: str, listed: bool
) -> None:
    # ``fn retain`` of a wrapper calls its field's ``retain_in_order``, which the field's
    # type's card lists first, past the 30 methods its skeleton would list before it
    files = _forwarding(wrapper)
    assert _core_lists_retain_in_order(tmp_path, files) is listed


@pytest.mark.parametrize(
    ("test", "listed"),
    [
        ("    #[test]\n    fn in_order_retain() {\n", False),  # not the words' order
        ("    #[test]\n    fn retain_in_order_keeps() {\n", True),
        ("    #[tokio::test]\n    // why\n    fn keeps_retain_in_order() {\n", True),
        ("    fn test_retain_in_order() {\n", True),
        ("    fn retain_in_order_keeps() {\n", False),  # no test
    ],
)
def test_a_test_s_name_lists_first_the_methods_it_spells(
    tmp_path: Path, test: str, listed: bool
) -> None:
    # ``#[bench] fn many_retain_hashmap_100_000`` calls ``map.retain(``: the type's card
    # lists the methods the test's name spells, words in their order, first
    body = "        let a = Core::new();\n        let b = Core::with_capacity(2);\n"
    files = _forwarding(f"}}\n\n#[cfg(test)]\nmod tests {{\n    use super::*;\n\n{test}{body}")
    assert _core_lists_retain_in_order(tmp_path, files) is listed


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("#[test]\nfn is_a_fail() {\n    fn test(input: &str) {\n", ["is", "a", "fail"]),
        ("fn test_is_a() {\n    let x = 1;\n", ["is", "a"]),
        # a method of an impl in the test is about its own type
        ("#[test]\nfn seq_len() {\n    fn serialize(&self) {\n", []),
        ("fn is_a_fail() {\n    fn test(input: &str) {\n", []),  # no test
    ],
)
def test_a_test_s_subject_passes_its_nested_helpers(text: str, subject: list[str]) -> None:
    assert LANGUAGE.subject(text.split("\n")) == subject


SPELLED = {
    "src/lib.rs": "pub mod bytes;\npub mod str;\n",
    "src/bytes.rs": "".join(
        f"pub fn {n}(s: &str) -> u32 {{\n    0\n}}\n\n" for n in ("tag", "is_a")
    ),
    "src/str.rs": "use crate::bytes::{is_a, tag};\n\n#[cfg(test)]\nmod tests {\n"
    '    use super::*;\n\n    #[test]\n    fn tag_ok() {\n        tag("a");\n        tag("b");\n'
    '        is_a("c");\n    }\n\n    #[test]\n    fn NAME() {\n        fn test(i: &str) {\n',
}


@pytest.mark.parametrize(("name", "first"), [("is_a_fail", "is_a"), ("other_fail", "tag")])
def test_the_function_a_test_is_named_for_comes_first(
    tmp_path: Path, name: str, first: str
) -> None:
    # nom's ``fn is_a_fail() { fn test(input: &str) { is_a(MATCH)(input)``
    files = {**SPELLED, "src/str.rs": SPELLED["src/str.rs"].replace("NAME", name)}
    idx = _index(tmp_path, files)
    hits = find_definitions(idx, "src/str.rs", files["src/str.rs"])
    assert hits[0].card.name == first

"""The benchmark's own view of each language: calls read from a line's code (never from its
comments or strings), API holes in TypeScript, Rust and C repositories, the targets of a task,
and the verdicts on the cards a prompt shows."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from repos import write_files

from repomem.config import IndexConfig
from repomem.context.cards import Card, listing
from repomem.index.repo import RepoIndex
from repomem_eval.card_check import CardChecker, typescript_oracle
from repomem_eval.code_langs import Callee, code_only, identifiers, read_callees
from repomem_eval.context_metrics import definitions_by_name, task_targets, type_names
from repomem_eval.devsuite import default_cache, typescript_dir
from repomem_eval.make_benchmark import make_benchmark


@pytest.mark.parametrize(
    ("family", "line", "expected"),
    [
        (
            "js",
            "const s = new Subscriber(d); this.add(of(1)); // fromEvent(x)",
            [Callee(("Subscriber",), new=True), Callee(("this", "add")), Callee(("of",))],
        ),
        ("js", 'log("pluck(a)", `map(${x})`);', [Callee(("log",))]),
        ("js", "for (const x of (xs)) { f(x) }", [Callee(("f",))]),
        ("js", "function helper(a) {", []),
        (
            "rust",
            "let v = Value::new(x); m!(y); s.parse::<u8>(b'(')?; // f(z)",
            [Callee(("Value", "new")), Callee(("m!",)), Callee(("s", "parse"))],
        ),
        ("rust", "fn apply<'a>(x: &'a str) -> Foo<'a> { g(x) }", [Callee(("g",))]),
        (
            "c",
            "p->alloc(s, n); BrotliFree(m, x); /* foo(1) */ if (x) {",
            [Callee(("p", "alloc")), Callee(("BrotliFree",))],
        ),
        (
            "go",
            'c.engine.handle(ctx); fmt.Sprintf("%s(", x) // call(y)',
            [Callee(("c", "engine", "handle")), Callee(("fmt", "Sprintf"))],
        ),
        ("go", "func (e *Engine) Run(addr string) error {", []),
        (
            "java",
            "Foo f = new Foo<>(1); obj.get().bar(2);",
            [Callee(("Foo",), new=True), Callee(("obj", "get")), Callee(("bar",), chained=True)],
        ),
    ],
)
def test_calls_are_read_from_code_only(family: str, line: str, expected: list[Callee]) -> None:
    assert read_callees(line, family) == expected


TS_FILES = {
    "src/util.ts": "export function helper(x: number): number {\n  return x + 1;\n}\n",
    "src/box.ts": (
        "export class Box {\n  constructor(public v: number) {}\n"
        "  map(f: (x: number) => number): Box {\n    return new Box(f(this.v));\n  }\n}\n"
    ),
    "src/main.ts": (
        'import { helper } from "./util";\nimport { Box } from "./box";\n\n'
        "export function run(n: number): number {\n"
        "  // helper(n) in a comment is not a call\n"
        "  const b = new Box(n);\n"
        "  const xs = [1, 2].map((x) => x * 2);\n"
        "  return helper(b.v);\n}\n"
    ),
}


def test_typescript_api_tasks_call_definitions_of_other_files(tmp_path: Path) -> None:
    repo = write_files(tmp_path / "ts", TS_FILES)
    tasks = make_benchmark(repo, "api", 10, 0, language="typescript")
    assert sorted((t.fpath_tuple[-1], t.ground_truth.strip()) for t in tasks) == [
        ("main.ts", "const b = new Box(n);"),
        ("main.ts", "return helper(b.v);"),
    ]


RUST_FILES = {
    "src/value.rs": (
        "pub struct Value {\n    n: u64,\n}\n\nimpl Value {\n"
        "    pub fn new(n: u64) -> Value {\n        Value { n }\n    }\n}\n"
    ),
    "src/other.rs": (
        "pub struct Other;\n\nimpl Other {\n    pub fn new() -> Other {\n        Other\n    }\n}\n"
    ),
    "src/lib.rs": (
        "mod value;\nmod other;\nuse value::Value;\n\npub fn make(n: u64) -> Value {\n"
        "    let v = Value::new(n);\n    v\n}\n"
    ),
}


def _index(root: Path) -> RepoIndex:
    index, _ = RepoIndex.build(root, IndexConfig(index_dir=str(root.parent / "idx")), save=False)
    return index


def test_a_type_path_call_targets_the_type_and_its_own_constructor(tmp_path: Path) -> None:
    repo = write_files(tmp_path / "rs", RUST_FILES)
    tasks = make_benchmark(repo, "api", 10, 0, language="rust")
    assert [t.ground_truth.strip() for t in tasks] == ["let v = Value::new(n);"]
    index = _index(repo)
    named, types = definitions_by_name(index), type_names(index)
    targets = task_targets(
        index, "src/lib.rs", tasks[0].prompt, tasks[0].ground_truth, named, types
    )
    # Value and Value's new, not Other's new
    assert sorted((t.path, t.name) for t in targets) == [
        ("src/value.rs", "Value"),
        ("src/value.rs", "new"),
    ]


C_FILES = {
    "a/util.h": "#ifndef UTIL_H\n#define UTIL_H\nint scale(int v);\n#endif\n",
    "a/util.c": '#include "util.h"\n\nint scale(int v) {\n  return v * 2;\n}\n',
    "b/util.h": "#ifndef B_UTIL_H\n#define B_UTIL_H\nint scale(int v);\n#endif\n",
    "b/util.c": '#include "util.h"\n\nint scale(int v) {\n  return v * 3;\n}\n',
    "a/main.c": (
        '#include "util.h"\n\nint twice(int v) {\n  /* offset(v) */\n  return scale(v);\n}\n'
    ),
    "a/offset.c": "int offset(int v) {\n  return v + 1;\n}\n",
    "a/mem.c": "void free(void *p) {\n}\n",
    "tests/check.c": "int checked(int v) {\n  return v;\n}\n",
}


def _card(index: RepoIndex, path: str, name: str) -> Card:
    pf = index.tables.parsed[path]
    node = next(d.node for d in pf.definitions if d.name == name)
    return Card(path, int(pf.node_start[node]), name, "function", name)


def test_card_verdicts(tmp_path: Path) -> None:
    repo = write_files(tmp_path / "c", C_FILES)
    index = _index(repo)
    checker = CardChecker(index, definitions_by_name(index))
    buffer = "\n".join(C_FILES["a/main.c"].splitlines()[:4])
    cards = [
        _card(index, "a/util.c", "scale"),  # the definition a/main.c's include reaches
        _card(index, "b/util.c", "scale"),  # another one of the same name
        _card(index, "a/offset.c", "offset"),  # named only in a comment
        _card(index, "tests/check.c", "checked"),  # a test's, from code outside tests
    ]
    verdicts = checker.verdicts("a/main.c", buffer, "  return scale(v) + checked(v);", cards)
    assert verdicts == ["right", "wrong", "wrong", "wrong"]
    # a repository definition named as the standard library's is a wrong guess
    assert (
        checker.verdicts("a/main.c", buffer, "  free(p);", [_card(index, "a/mem.c", "free")])[0]
        == "wrong"
    )
    # a unique name is right wherever it is; a name in a file that includes nothing is open
    assert checker.verdicts("a/offset.c", "", "offset(1); scale(2);", cards[:3:2]) == [
        "undecided",
        "right",
    ]
    # a card listing declarations alone names no definition: no verdict
    helpers = listing([("a/util.c", cards[0].line, "int scale(int v);")], "// helpers:")
    assert checker.verdicts("a/main.c", buffer, "  free(p);", [helpers]) == ["undecided"]


def test_card_verdicts_of_prototypes_and_cpp_sources(tmp_path: Path) -> None:
    """A header's prototype of a function the task's own file defines below the cursor (the
    index is shown the file cut there) is that function; a C++ header's ``.cc`` is its
    source, as a C header's ``.c`` is."""
    files = {
        **C_FILES,
        "a/main.c": C_FILES["a/main.c"] + "int scale2(int v) {\n  return v;\n}\n",
        "a/util.h": C_FILES["a/util.h"].replace("#endif", "int scale2(int v);\n#endif"),
        "a/geo.hh": "namespace g {\nint area(int r);\n}\n",
        "a/geo.cc": '#include "geo.hh"\nnamespace g {\nint area(int r) { return r; }\n}\n',
        "b/geo.cc": "namespace h {\nint area(int r) { return 2 * r; }\n}\n",
        "a/shape.cc": '#include "geo.hh"\nint f(int r) {\n  return 0;\n}\n',
    }
    index = _index(write_files(tmp_path / "c", files))
    checker = CardChecker(index, definitions_by_name(index))
    buffer = "\n".join(files["a/main.c"].splitlines()[:4])
    prototype = _card(index, "a/util.h", "scale2")
    assert checker.verdicts("a/main.c", buffer, "  scale2(v);", [prototype]) == ["right"]
    # another directory (platform) defines it too, out of the file's reach: still right
    index.update_file("b/util.c", files["b/util.c"] + "int scale2(int v) {\n  return 0;\n}\n")
    checker = CardChecker(index, definitions_by_name(index))
    assert checker.verdicts("a/main.c", buffer, "  scale2(v);", [prototype]) == ["right"]
    area = [_card(index, "a/geo.cc", "g.area"), _card(index, "b/geo.cc", "h.area")]
    for card in area:  # as the card check names them: by their last name
        object.__setattr__(card, "name", "area")
    assert checker.verdicts("a/shape.cc", '#include "geo.hh"\n', "  area(r);", area) == [
        "right",
        "wrong",
    ]


def _typescript() -> Path:
    """The compiler ``devsuite fetch`` unpacked (the tests cannot download it)."""
    found = typescript_dir(default_cache())
    if shutil.which("node") is None or not (found / "lib" / "typescript.js").is_file():
        pytest.skip("node or the dev suite's TypeScript compiler is not here")
    return found


@contextlib.contextmanager
def _typescript_checker(
    tmp_path: Path, files: dict[str, str]
) -> Iterator[tuple[RepoIndex, CardChecker]]:
    """The index of a TypeScript repository of ``files`` and a card checker that asks the
    compiler, whose process is stopped afterwards."""
    repo = write_files(tmp_path / "ts", files)
    index = _index(repo)
    oracle = typescript_oracle(_typescript(), repo)
    assert oracle is not None
    try:
        yield index, CardChecker(index, definitions_by_name(index), oracle)
    finally:
        oracle.close()


def test_typescript_cards_are_decided_by_the_compiler(tmp_path: Path) -> None:
    files = {
        **TS_FILES,
        "src/other.ts": "export function helper(s: string): string {\n  return s;\n}\n",
    }
    with _typescript_checker(tmp_path, files) as (index, checker):
        buffer = "\n".join(TS_FILES["src/main.ts"].splitlines()[:7])
        cards = [_card(index, "src/util.ts", "helper"), _card(index, "src/other.ts", "helper")]
        # main.ts imports util's helper: the other one is a wrong card, by the compiler
        assert checker.verdicts("src/main.ts", buffer, "  return helper(b.v);", cards) == [
            "right",
            "wrong",
        ]


ALIAS_FILES = {
    "src/types.ts": "const stringType = (): number => 1;\nconst other = (): number => 2;\n"
    "export { stringType as string, other };\nexport { other as default };\n",
    "src/main.ts": "import * as z from './types';\n\nexport function main(): number {\n",
}


def test_a_definition_written_by_the_alias_its_file_exports_it_under(tmp_path: Path) -> None:
    """``export { stringType as string }``, then ``z.string()``: the code names the card by
    its alias, so the card is not wrong for want of its own name; the alias alone says
    nothing of which definition of it the code means (undecided: the compiler's answer there
    is the export's alias, not a definition); a name exported as ``default`` is no alias the
    code writes."""
    repo = write_files(tmp_path / "ts", ALIAS_FILES)
    index = _index(repo)
    checker = CardChecker(index, definitions_by_name(index))
    buffer = ALIAS_FILES["src/main.ts"]
    cards = [_card(index, "src/types.ts", "stringType"), _card(index, "src/types.ts", "other")]
    truth = "  return z.string() + default;"
    assert checker.verdicts("src/main.ts", buffer, truth, cards) == ["undecided", "wrong"]


def test_the_compiler_is_asked_at_the_ground_truth_s_own_line(tmp_path: Path) -> None:
    """The task's buffer ends with its last line's newline (``task_view.user_buffer``): the
    ground truth follows on the next line, as in the file the compiler reads, not one below
    (there ``other('b')`` stands at the same column and would judge ``helper``'s card; the
    compiler cannot follow the import, so the ground truth's line alone could decide)."""
    files = {
        "util.ts": "export function helper(s: string): string {\n  return s;\n}\n",
        "other.ts": "export function other(s: string): string {\n  return s;\n}\n",
        "main.ts": "import { helper } from '@demo/pkg';\nimport { other } from './other';\n\n"
        "export function f(): void {\n  helper('a');\n  other('b');\n}\n",
    }
    with _typescript_checker(tmp_path, files) as (index, checker):
        buffer = "".join(files["main.ts"].splitlines(keepends=True)[:4])
        card = _card(index, "util.ts", "helper")
        assert checker.verdicts("main.ts", buffer, "  helper('a');", [card]) == ["right"]


def test_the_compiler_is_asked_where_the_name_stands_after_strings(tmp_path: Path) -> None:
    """Strings before the name keep their length: emptied, they moved the point left, here
    onto ``other`` (and a template literal over lines moved it up)."""
    gt = "  const v = ['abcdefghijk', other('b'), helper(s)];"
    files = {
        "util.ts": "export function helper(s: string): string {\n  return s;\n}\n",
        "other.ts": "export function other(s: string): string {\n  return s;\n}\n",
        "main.ts": "import { helper } from '@demo/pkg';\nimport { other } from './other';\n\n"
        f"export function f(s: string): void {{\n{gt}\n}}\n",
    }
    with _typescript_checker(tmp_path, files) as (index, checker):
        buffer = "".join(files["main.ts"].splitlines(keepends=True)[:4])
        card = _card(index, "util.ts", "helper")
        assert checker.verdicts("main.ts", buffer, gt, [card]) == ["right"]


def test_an_import_the_compiler_cannot_follow_decides_no_typescript_card(tmp_path: Path) -> None:
    """The compiler answers an import of a module it cannot find with the import's own
    binding: that names no other definition, so the card stays for the later rules."""
    files = {
        "index.ts": "export { helper } from './util';\n",
        "util.ts": "export function helper(s: string): string {\n  return s;\n}\n",
        "tests/a.test.ts": "import { helper } from '@demo/pkg';\n\nhelper('x');\n",
    }
    with _typescript_checker(tmp_path, files) as (index, checker):
        card = _card(index, "util.ts", "helper")
        # undecided by the compiler; the only definition so named: right
        assert checker.verdicts("tests/a.test.ts", files["tests/a.test.ts"], "", [card]) == [
            "right"
        ]


def test_a_name_the_compiler_cannot_resolve_somewhere_keeps_its_card_undecided(
    tmp_path: Path,
) -> None:
    """``slice.reducer(`` on a value of a package the compiler cannot find leads nowhere: the
    file's local ``reducer``, which it does resolve, does not make ``Slice.reducer``'s card
    wrong, since that may be what ``slice.reducer`` is."""
    gt = "  return slice.reducer(reducer);"
    files = {
        "slice.ts": "export interface Slice {\n  reducer(s: number): number;\n}\n",
        "other.ts": "export function reducer(s: number): number {\n  return s;\n}\n",
        "main.ts": "import { makeSlice } from '@demo/pkg';\n\n"
        "export function f(): number {\n  const slice = makeSlice();\n"
        f"  const reducer = slice.initial;\n{gt}\n}}\n",
    }
    with _typescript_checker(tmp_path, files) as (index, checker):
        buffer = "".join(files["main.ts"].splitlines(keepends=True)[:5])
        card = _card(index, "slice.ts", "Slice.reducer")
        assert checker.verdicts("main.ts", buffer, gt, [card]) == ["undecided"]
        # where every mention resolves and none to the card, it is wrong
        assert checker.verdicts("main.ts", buffer, "  return reducer;", [card]) == ["wrong"]


def test_a_receiver_that_is_no_type_is_not_an_owner(tmp_path: Path) -> None:
    files = {
        "go.mod": "module example.com/demo\n",
        "context.go": "package demo\n\ntype Context struct{}\n\nfunc (c *Context) JSON() {}\n",
        "binding.go": (
            "package demo\n\ntype jsonBinding struct{}\n\nvar JSON = jsonBinding{}\n\n"
            "func (jsonBinding) Bind(v int) error {\n\treturn nil\n}\n"
        ),
        "main.go": "package demo\n\nfunc run() error {\n\treturn JSON.Bind(1)\n}\n",
    }
    repo = write_files(tmp_path / "go", files)
    index = _index(repo)
    targets = task_targets(
        index,
        "main.go",
        "package demo\n\nfunc run() error {\n",
        "\treturn JSON.Bind(1)",
        definitions_by_name(index),
        type_names(index),
    )
    # JSON is a variable here: the method called is Bind, not the Context's JSON
    assert [(t.path, t.name) for t in targets] == [("binding.go", "Bind")]


@pytest.mark.parametrize("family", ["java", "go", "c"])
def test_an_apostrophe_in_a_block_comment_opens_no_char_literal(family: str) -> None:
    # the comment's inner lines are read as code: ``can't`` ... ``don't`` once hid every
    # line between them, and a card named there was judged a name the code never wrote
    text = "/*\n * It can't be tested here.\n */\nstart();\n// we don't stop\n"
    assert "start" in identifiers(text, family)
    assert [c.parts for c in read_callees(text, family)] == [("start",)]


def test_a_quote_in_a_block_comment_over_lines_opens_no_string() -> None:
    """brotli's tools/brotli.c: a ``"`` in a two-line comment hid every later name from the
    card check, so cards of names the code uses counted as made from comments."""
    text = (
        'int f(void) {\n  /* C99: "members argv[0] through\n     contain pointers"; NULL */\n'
        '  OpenFiles(ctx);\n  puts("done");\n}\n'
    )
    assert "OpenFiles" in identifiers(text, "c")
    assert "members" not in identifiers(text, "c")
    assert code_only(text, "c").count("\n") == text.count("\n")


def test_rust_cards_of_macros_and_after_continued_strings(tmp_path: Path) -> None:
    files = {
        "src/lib.rs": "mod a;\n\nmacro_rules! tri {\n    ($e:expr) => {\n        $e\n    };\n}\n",
        "src/a.rs": "pub fn helper(x: u8) -> u8 {\n    x\n}\n",
    }
    index = _index(write_files(tmp_path / "r", files))
    checker = CardChecker(index, definitions_by_name(index))
    # a string going on over a ``\`` line ending is one string: the code after it is code
    buffer = (
        'fn go(x: u8) -> u8 {\n    let s = "tried \\\n        to";\n'
        '    let y = helper(x);\n    let t = "z";\n'
    )
    macro = Card("src/lib.rs", 2, "tri!", "macro", "macro_rules! tri")
    helper = _card(index, "src/a.rs", "helper")
    assert checker.verdicts("src/a.rs", buffer, "    tri!(y)", [macro, helper]) == [
        "right",  # the only ``tri!``, written ``tri!(``
        "right",  # ``helper`` is code, not inside a string
    ]


def test_a_rust_crate_s_own_item_named_as_the_prelude_s_is_not_a_wrong_guess(
    tmp_path: Path,
) -> None:
    """nom's ``Err`` (``use crate::internal::Err;``, then ``Err::Error(e)``) is nom's: the
    prelude's name stands for the standard library only where the crate does not bring in
    its own."""
    files = {
        "Cargo.toml": '[package]\nname = "my-nom"\nversion = "1.0.0"\n',
        "src/lib.rs": "pub mod internal;\npub mod a;\n",
        "src/internal.rs": "pub enum Err<E> {\n    Error(E),\n}\n",
        "src/a.rs": "",
        "tests/t.rs": "",
    }
    index = _index(write_files(tmp_path / "r", files))
    checker = CardChecker(index, definitions_by_name(index))
    card = _card(index, "src/internal.rs", "Err")
    truth = "    Err(Err::Error(1))"

    def verdict(path: str, buffer: str) -> str:
        return checker.verdicts(path, buffer, truth, [card])[0]

    assert verdict("src/a.rs", "use crate::internal::{Err, Needed};\nfn f() {\n") == "right"
    assert verdict("src/a.rs", "fn f() {\n    crate::Err::Error(0);\n") == "right"
    assert verdict("tests/t.rs", "use my_nom::{error::Kind, Err};\nfn f() {\n") == "right"
    # the standard library's, wherever the crate does not bring its own in
    assert verdict("src/a.rs", "use std::fmt;\nfn f() {\n") == "wrong"
    assert verdict("src/a.rs", "use crate::internal::Err as E;\nfn f() {\n") == "wrong"


def test_rust_targets_of_macros_and_of_the_prelude(tmp_path: Path) -> None:
    files = {
        **RUST_FILES,
        "src/ser.rs": "pub trait Ser {\n    type Ok;\n}\n\npub struct S;\n\n"
        "impl Ser for S {\n    type Ok = ();\n}\n\npub fn parse() {}\n",
        "src/macros.rs": "macro_rules! parse {\n    () => {};\n}\n",
    }
    index = _index(write_files(tmp_path / "rs", files))
    named, types = definitions_by_name(index), type_names(index)
    files["src/checks.rs"] = (
        "mod tests {\n    macro_rules! assert_eq {\n        () => {};\n    }\n}\n"
    )
    index = _index(write_files(tmp_path / "rs", files))
    named = definitions_by_name(index)
    truth = "    parse!(Ok(Vec::new())); assert_eq!(1, 1);"
    targets = task_targets(index, "src/lib.rs", "", truth, named, types)
    # the macro, not the function ``parse``; neither ``type Ok`` nor anything for
    # ``Vec::new``, nor a test module's ``assert_eq!`` for the standard library's
    assert [(t.path, t.name) for t in targets] == [("src/macros.rs", "parse!")]

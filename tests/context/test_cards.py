"""Definition cards outside Python (``repomem.context.cards``): the declaration as written up
to its body, the first sentence of its doc comment, type skeletons, Rust ``impl`` headers,
C macros, and never a header's include guard or licence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from repos import write_files

from repomem.config import IndexConfig
from repomem.context.cards import MAX_BRIEF_NAMES, Card, definition_card
from repomem.context.definitions import find_definitions
from repomem.index.parsing import Definition, parse_source, split_lines
from repomem.index.repo import RepoIndex


def cards_of(path: str, language: str, text: str) -> dict[str, Card]:
    pf = parse_source(path, language, text, "digest")
    lines = split_lines(text)
    return {d.name: definition_card(path, pf, lines, d) for d in pf.definitions}


HEADER = """\
/* Copyright (c) the authors. Licensed under the BSD licence. */
#ifndef UTIL_H_
#define UTIL_H_

#include <stdio.h>

/**
 * Adds two numbers. Overflow wraps.
 * @param a the first
 */
static inline int add(int a,
                      int b) {
#if DEBUG
    printf("add\\n");
#endif
    return a + b;
}

/** Does plain things. */
int plain(int a);

/// Frees a buffer.
#define FREE(m, p) \\
    do { free(p); } \\
    while (0)

/*! A list node. */
struct node {
    int value; /* the value */
    struct node *next;
};

#endif
"""


def test_a_header_function_card_is_its_signature_not_the_include_guard() -> None:
    cards = cards_of("util.h", "c", HEADER)
    assert cards["add"].text == (
        "/** Adds two numbers. */\nstatic inline int add(int a,\n                      int b)"
    )
    assert cards["add"].line == HEADER.splitlines().index("static inline int add(int a,")
    pf = parse_source("util.h", "c", HEADER, "digest")
    row = HEADER.splitlines().index("int plain(int a);")
    prototype = Definition("plain", int(pf.line_owner[row]), False)  # a header's declaration
    card = definition_card("util.h", pf, split_lines(HEADER), prototype)
    assert card.text == "/** Does plain things. */\nint plain(int a);"
    assert cards["node"].text == (
        "/** A list node. */\nstruct node {\n    int value;\n    struct node *next;\n}"
    )


def test_a_function_inside_an_if_group_is_its_own_statement() -> None:
    pf = parse_source("util.h", "c", HEADER, "digest")
    node = next(d.node for d in pf.definitions if d.name == "add")
    assert (int(pf.node_start[node]), int(pf.node_end[node])) == (10, 16)
    row = HEADER.splitlines().index('    printf("add\\n");')
    assert int(pf.node_start[pf.line_owner[row]]) == row  # the statement inside the #if


def test_a_macro_card_is_its_define_lines() -> None:
    pf = parse_source("util.h", "c", HEADER, "digest")
    lines = split_lines(HEADER)
    row = lines.index("#define FREE(m, p) \\")
    macro = Definition("FREE", int(pf.line_owner[row]), False)  # as a C resolver defines it
    card = definition_card("util.h", pf, lines, macro)
    assert card.kind == "macro"
    assert card.text == (
        "/// Frees a buffer.\n#define FREE(m, p) \\\n    do { free(p); } \\\n    while (0)"
    )
    assert card.header == "#define FREE(m, p) \\"


TS = """\
import { Observer } from './types';

/**
 * Creates an Observable that emits the arguments. More detail.
 *
 * @example
 * of(1, 2).subscribe();
 */
export function of<T>(...args: T[]): Observable<T> {
  return new Observable(args);
}

/** Subscribes. */
export class Subscriber<T> extends Subscription implements Observer<T> {
  protected isStopped: boolean = false;
  private secret = 1;

  constructor(destination?: Observer<T>) {
    super();
  }

  next(value: T): void {
    this.destination.next(value);
  }

  @Input()
  complete(
    a: number,
    b: string,
  ): void {}
}

export interface Observer<T> {
  closed?: boolean;
  next: (value: T) => void
  error(err: any): void;
}
"""


def test_typescript_cards() -> None:
    cards = cards_of("src/a.ts", "typescript", TS)
    assert cards["of"].text == (
        "/** Creates an Observable that emits the arguments. */\n"
        "export function of<T>(...args: T[]): Observable<T>"
    )
    assert cards["Subscriber"].text == (
        "/** Subscribes. */\n"
        "export class Subscriber<T> extends Subscription implements Observer<T> {\n"
        "    protected isStopped: boolean = false;\n"
        "    constructor(destination?: Observer<T>);\n"
        "    next(value: T): void;\n"
        "    complete(a: number, b: string): void;\n"
        "}"
    )
    # the brief form, as Java's and Go's: the declaration, the constructor and the other
    # members by name (public fields are definitions too)
    assert cards["Subscriber"].brief == (
        "export class Subscriber<T> extends Subscription implements Observer<T> {\n"
        "    constructor(destination?: Observer<T>);\n"
        "    // methods: isStopped, next, complete\n"
        "}"
    )
    lines = TS.splitlines()
    # the TypeScript module qualifies members and makes public fields definitions too
    assert cards["Subscriber"].methods == (
        lines.index("  protected isStopped: boolean = false;"),
        lines.index("  constructor(destination?: Observer<T>) {"),
        lines.index("  next(value: T): void {"),
        lines.index("  complete("),
    )
    assert (
        cards["Subscriber.complete"].text
        == "@Input()\ncomplete(\n  a: number,\n  b: string,\n): void"
    )
    assert cards["Observer"].text == (
        "export interface Observer<T> {\n"
        "    closed?: boolean;\n"
        "    next: (value: T) => void\n"
        "    error(err: any): void;\n"
        "}"
    )


def test_typescript_object_types_are_no_bodies() -> None:
    """A ``{`` in a type's place (a return type, a field's type) opens an object type: the
    card and the skeleton line keep it, where they stopped at it (``):;``)."""
    text = (
        "export class NodeType {\n"
        "  attrs: {[name: string]: Attribute}\n"
        "  static compile<N extends string>(nodes: N[]): {readonly [n in N]: NodeType} {\n"
        "    return {}\n"
        "  }\n"
        "  check(\n"
        "    a: {x: number},\n"
        "  ): {ok: boolean} | null { return null }\n"
        "}\n"
    )
    cards = cards_of("src/schema.ts", "typescript", text)
    assert cards["NodeType.compile"].text == (
        "static compile<N extends string>(nodes: N[]): {readonly [n in N]: NodeType}"
    )
    assert cards["NodeType.check"].text == "check(\n  a: {x: number},\n): {ok: boolean} | null"
    assert cards["NodeType"].text == (
        "export class NodeType {\n"
        "    attrs: {[name: string]: Attribute}\n"
        "    static compile<N extends string>(nodes: N[]): {readonly [n in N]: NodeType};\n"
        "    check(a: {x: number}): {ok: boolean} | null;\n"
        "}"
    )


JAVA = """\
package a.b;

/**
 * A box of things. It holds them.
 */
public class Box<T> extends Base implements Holder {
    private int count;
    public final Map<String, Integer> names = new HashMap<>();

    /** Makes a box. */
    public Box(int n) {
        this.count = n;
    }

    @Override
    public int size() {
        return count;
    }

    public static <U> Box<U> of(U value)
            throws IOException {
        return null;
    }
}
"""


def test_java_cards() -> None:
    pf = parse_source("a/b/Box.java", "java", JAVA, "digest")
    lines = split_lines(JAVA)
    box = next(
        d for d in pf.definitions if d.name == "Box" and "class" in lines[pf.node_start[d.node]]
    )
    assert definition_card("a/b/Box.java", pf, lines, box).text == (
        "/** A box of things. */\n"
        "public class Box<T> extends Base implements Holder {\n"
        "    public final Map<String, Integer> names = new HashMap<>();\n"
        "    public Box(int n);\n"
        "    public int size();\n"
        "    public static <U> Box<U> of(U value) throws IOException;\n"
        "}"
    )
    # the brief form: the declaration, the constructors and the other methods by name
    assert definition_card("a/b/Box.java", pf, lines, box).brief == (
        "public class Box<T> extends Base implements Holder {\n"
        "    public Box(int n);\n"
        "    // methods: size, of\n"
        "}"
    )
    cards = cards_of("a/b/Box.java", "java", JAVA)
    # Java's definitions are qualified by their class
    assert cards["Box.size"].text == "@Override\npublic int size()"
    of = "public static <U> Box<U> of(U value)\n        throws IOException"
    assert cards["Box.of"].text == of


GO = """\
package kv

// Store is a key value store. It is safe for concurrent use.
type Store struct {
	mu   sync.Mutex
	Name string
}

// Get returns the value
// stored for key.
func (s *Store) Get(key string) ([]byte, error) {
	return nil, nil
}

type (
	// Backend stores bytes.
	Backend interface {
		Put(key string, value []byte) error
		Watch(stop chan struct{}) (<-chan []byte, error)
	}
	Size int
)
"""


def test_go_cards() -> None:
    cards = cards_of("kv/store.go", "go", GO)
    # Go's methods are qualified by their receiver's type (``Store.Get``) and join its card
    assert cards["Store"].text == (
        "// Store is a key value store.\ntype Store struct {\n    mu sync.Mutex\n    Name string\n"
        "    func (s *Store) Get(key string) ([]byte, error);\n}"
    )
    assert cards["Store"].brief == "type Store struct {\n    // methods: Get\n}"
    assert cards["Store.Get"].text == (
        "// Get returns the value stored for key.\nfunc (s *Store) Get(key string) ([]byte, error)"
    )
    # a grouped declaration: each card starts at its own name, not at ``type (``
    assert cards["Backend"].text == (
        "// Backend stores bytes.\n"
        "Backend interface {\n"
        "    Put(key string, value []byte) error\n"
        "    Watch(stop chan struct{}) (<-chan []byte, error)\n"
        "}"
    )
    assert cards["Size"].text == "Size int"
    # an interface's methods are its own definitions: its brief form names them
    assert cards["Backend"].brief == "Backend interface {\n    // methods: Put, Watch\n}"


RUST = """\
use std::fmt;

/// A point in space.
/// Second line of the summary.
#[derive(Debug, Clone)]
pub struct Point<T> {
    pub x: T,
    y: HashMap<String, Vec<u8>>,
}

impl<T: Copy> fmt::Display for Point<T> {
    /// Formats the point. Really.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.x)
    }
}

pub trait Shape {
    fn area(&self) -> f64;
    fn name(&self) -> String {
        "shape".into()
    }
}
"""


def test_rust_cards() -> None:
    cards = cards_of("src/point.rs", "rust", RUST)
    assert cards["Point"].text == (
        "/// A point in space.\n"
        "#[derive(Debug, Clone)]\n"
        "pub struct Point<T> {\n"
        "    pub x: T,\n"
        "    y: HashMap<String, Vec<u8>>,\n"
        # Rust's methods are qualified by their type (``Point.fmt``), so an impl block's
        # methods join the type's skeleton
        "    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;\n"
        "}"
    )
    assert cards["Point.fmt"].text == (
        "impl<T: Copy> fmt::Display for Point<T> {\n"
        "    /// Formats the point.\n"
        "    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result"
    )
    assert cards["Point.fmt"].header == "fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result"
    assert cards["Shape"].text == (
        "pub trait Shape {\n    fn area(&self) -> f64;\n    fn name(&self) -> String;\n}"
    )
    # the brief form, as Java's, Go's and TypeScript's: the declaration, the methods by name
    assert cards["Point"].brief == "pub struct Point<T> {\n    // methods: fmt\n}"
    assert cards["Shape"].brief == "pub trait Shape {\n    // methods: area, name\n}"


def test_a_method_below_an_attribute_is_listed_as_one() -> None:
    # Rust's attributes are no part of a method's node: the member's text starts on the
    # attribute's row, the method on the next; both are the trait's methods
    text = (
        "pub trait Buf {\n    fn remaining(&self) -> usize;\n\n    #[inline]\n"
        "    fn has_remaining(&self) -> bool {\n        self.remaining() > 0\n    }\n"
        '    #[cfg(feature = "std")]\n    fn chunk(&self) -> &[u8];\n}\n'
    )
    card = cards_of("src/buf.rs", "rust", text)["Buf"]
    assert card.methods == (1, 4, 8)
    assert card.brief == "pub trait Buf {\n    // methods: remaining, has_remaining, chunk\n}"


def test_a_rust_tuple_or_unit_struct_s_card_names_its_impl_methods() -> None:
    # no body to list them in: an ``impl`` line of its own, in the brief form (the
    # declaration, the constructors, the methods by name): such small types stay small cards
    text = (
        "/// The year flags.\npub struct YearFlags(pub(super) u8);\n\npub struct Marker;\n\n"
        "impl YearFlags {\n    pub fn from_year(year: i32) -> YearFlags {\n"
        "        YearFlags(year as u8)\n    }\n\n"
        "    pub(super) fn ndays(&self) -> u32 {\n        365\n    }\n}\n"
    )
    cards = cards_of("src/internals.rs", "rust", text)
    assert cards["YearFlags"].text == (
        "pub struct YearFlags(pub(super) u8);\nimpl YearFlags {\n"
        "    // methods: from_year, ndays\n}"
    )
    rows = text.splitlines()
    assert cards["YearFlags"].methods == (
        rows.index("    pub fn from_year(year: i32) -> YearFlags {"),
        rows.index("    pub(super) fn ndays(&self) -> u32 {"),
    )
    assert cards["Marker"].text == "pub struct Marker;"
    assert cards["Marker"].methods == ()


def test_qualified_method_names_join_their_types_skeleton() -> None:
    """A resolver that qualifies methods (``Store.Get``) gets them listed under the type even
    where they are declared outside its body (Go receivers, Rust ``impl`` blocks)."""
    pf = parse_source("kv/store.go", "go", GO, "digest")
    pf.definitions = [
        d._replace(name="Store.Get") if d.name == "Get" else d for d in pf.definitions
    ]
    lines = split_lines(GO)
    store = next(d for d in pf.definitions if d.name == "Store")
    card = definition_card("kv/store.go", pf, lines, store)
    assert card.text.endswith("    func (s *Store) Get(key string) ([]byte, error);\n}")
    assert card.methods == (lines.index("func (s *Store) Get(key string) ([]byte, error) {"),)
    method = next(d for d in pf.definitions if d.name == "Store.Get")
    assert definition_card("kv/store.go", pf, lines, method).text.endswith(
        "func (s *Store) Get(key string) ([]byte, error)"
    )


def test_an_indexed_header_shows_signatures_not_preambles(tmp_path: Path) -> None:
    root = write_files(
        tmp_path / "proj",
        {"util.h": HEADER, "main.c": '#include "util.h"\n\nint main(void) {\n  return add(1, 2'},
    )
    index, _ = RepoIndex.build(root, IndexConfig(index_dir=str(tmp_path / "idx")), save=False)
    left = index.file_text("main.c") or ""
    cards = {h.card.name: h.card for h in find_definitions(index, "main.c", left)}
    assert cards["add"].header == "static inline int add(int a,"


def test_tags_banners_and_parameter_comments_stay_out_of_a_card() -> None:
    text = (
        "/**\n * @deprecated Will be removed. Details: https://example.com\n */\n"
        "export function old(): void {}\n\n"
        "/*********** section ***********/\n/**\n * @brief Opens it. Then more.\n */\n"
        "export function open(\n  /** The path. */\n  path: string,\n  // the mode\n"
        "  mode = 'r',\n): void {}\n"
    )
    cards = cards_of("src/io.ts", "typescript", text)
    assert cards["old"].text == "export function old(): void"
    assert cards["open"].text == (
        "/** Opens it. */\nexport function open(\n  path: string,\n  mode = 'r',\n): void"
    )


def _big_class_card(
    methods: int, statements: int, called: tuple[int, ...]
) -> tuple[Card, list[str]]:
    """The card of a TypeScript class ``Big`` (a constructor, then methods ``m0`` … of
    ``statements`` statements and a return each), where ``m{i}`` is called 100 - i times for
    each i in ``called``; and the file's lines."""
    body = "".join(
        f"  m{i}(x: number): number {{\n" + "    x += 1;\n" * statements + "    return x;\n  }\n"
        for i in range(methods)
    )
    text = f"export class Big {{\n  constructor() {{}}\n{body}}}\n"
    pf = parse_source("src/big.ts", "typescript", text, "digest")
    lines = split_lines(text)
    by_name = {d.name: d for d in pf.definitions}
    calls = np.zeros(pf.n_nodes, np.int64)
    for i in called:
        calls[by_name[f"Big.m{i}"].node] = 100 - i
    return definition_card("src/big.ts", pf, lines, by_name["Big"], lambda: calls), lines


def test_a_large_types_skeleton_lists_its_constructor_and_the_most_called() -> None:
    card, _ = _big_class_card(12, 8, (11, 3, 7, 0, 9, 5, 1, 8, 10))
    shown = [line.strip() for line in card.text.splitlines()[1:-1]]
    kept = sorted((0, 1, 3, 5, 7, 8, 9, 10, 11))  # the nine called most, in source order
    assert shown == [
        "constructor();",
        *(f"m{i}(x: number): number;" for i in kept),
        "// ... 3 more members; methods: m2, m4, m6",  # the rest named, as ranked
    ]
    assert len(card.methods) == 13 and card.methods[0] == 1


def test_a_large_types_brief_form_names_the_members_its_skeleton_leaves_out() -> None:
    card, lines = _big_class_card(30, 0, (29, 3, 7, 0, 9, 5, 1, 8, 10))
    listed = sorted((0, 1, 3, 5, 7, 8, 9, 10, 29))  # the skeleton's, in source order
    # then, up to MAX_BRIEF_NAMES names, the others as ranked (none called: in source order)
    others = [i for i in range(30) if i not in listed][: MAX_BRIEF_NAMES - len(listed)]
    assert card.brief == (
        "export class Big {\n    constructor();\n    // methods: "
        + ", ".join(f"m{i}" for i in listed + others)
        + "\n}"
    )
    # whole or brief, the card names the others too
    assert card.text.splitlines()[-2].strip() == (
        "// ... 21 more members; methods: " + ", ".join(f"m{i}" for i in others)
    )
    def_lines = {i: lines.index(f"  m{i}(x: number): number {{") for i in range(30)}
    assert card.methods[10:] == tuple(def_lines[i] for i in others)
    assert card.briefed().methods == card.methods

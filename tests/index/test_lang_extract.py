"""What each language family reads from one file (``Language.extract``): its package,
definitions, call sites, imports and declared types, straight from the parse, before any
resolution; and the settings each family reads from the repository (``go.mod``,
``tsconfig.json``, ``package.json``)."""

from __future__ import annotations

from pathlib import Path

from repos import write_files

from repomem.index.langs import for_language
from repomem.index.langs.c import ANGLE, QUOTED, RECEIVER, CFamily
from repomem.index.langs.go import Go
from repomem.index.langs.rust import Rust
from repomem.index.langs.typescript import TypeScript
from repomem.index.parsed import ParsedFile
from repomem.index.parsing import parse_source

GO = """\
package shop

import (
	"fmt"
	str "strings"
)

type Cart struct {
	Items []Item
	owner *User
}

func (c *Cart) Add(it Item) int {
	c.Items = append(c.Items, it)
	fmt.Println(str.ToUpper(it.Name))
	return c.Count()
}

func NewCart() *Cart { return &Cart{} }
"""

TS = """\
import { Cart } from "./cart";
import * as util from "../util";

export class Shop extends Base implements Store {
  cart: Cart = new Cart();
  add(item: Item): number {
    util.log(item.name);
    return this.cart.add(item);
  }
}

export function open(): Shop {
  return new Shop();
}
"""

RUST = """\
mod cart;
use crate::cart::{Cart, Item};
use std::fmt;

pub struct Shop {
    cart: Cart,
}

impl Shop {
    pub fn add(&mut self, item: Item) -> usize {
        println!("{}", item.name);
        self.cart.push(item);
        helper(1)
    }
}

fn helper(x: u32) -> usize { x as usize }
"""

C = """\
#include "cart.h"
#include <stdio.h>

struct cart { int n; };

static int count(struct cart *c) { return c->n; }

int add(struct cart *c, int item) {
    printf("%d", item);
    return count(c);
}
"""


TSCONFIG = '{"compilerOptions": {"baseUrl": "src", "paths": {"@app/*": ["app/*"]}}}'


def _defs(pf: ParsedFile) -> list[tuple[str, bool]]:
    return [(d.name, d.is_class) for d in pf.definitions]


def _calls(pf: ParsedFile) -> list[tuple[str, ...]]:
    return [c.parts for c in pf.calls]


def _line(pf: ParsedFile, node: int) -> int:
    return int(pf.node_start[node])


def test_go_package_receivers_imports_and_field_types() -> None:
    pf = parse_source("shop/cart.go", "go", GO, "d")
    assert pf.package == "shop"
    assert _defs(pf) == [("Cart", True), ("Cart.Add", False), ("NewCart", False)]
    # ``&Cart{}``: a composite literal uses its type as a call does
    calls = [("append",), ("fmt", "Println"), ("str", "ToUpper"), ("c", "Count"), ("Cart",)]
    assert _calls(pf) == calls
    # the receiver's call knows its type; a call outside a method does not
    scopes = {c.parts: c.scope for c in pf.calls}
    assert scopes[("c", "Count")] == "Cart"
    assert scopes[("fmt", "Println")] is None
    assert [(i.name, i.module) for i in pf.imports] == [("", "fmt"), ("str", "strings")]
    # fields and results keep their declared types, for typed receivers later
    assert pf.bases["Cart.owner"] == [("User",)]
    assert pf.bases["NewCart"] == [("Cart",)]
    assert _line(pf, pf.definitions[1].node) == 12  # func (c *Cart) Add


def test_typescript_classes_members_imports_and_exports() -> None:
    pf = parse_source("src/shop.ts", "typescript", TS, "d")
    assert _defs(pf) == [("Shop", True), ("Shop.cart", False), ("Shop.add", False), ("open", False)]
    calls = {c.parts: c.scope for c in pf.calls}
    assert calls[("util", "log")] == "Shop.add"
    # ``this.cart`` is typed by the field's annotation
    assert calls[("Cart", "add")] == "Shop.add"
    assert calls[("Shop",)] == "open"
    imported = [(i.name, i.module, i.symbol) for i in pf.imports if i.module]
    assert imported == [("Cart", "./cart", "Cart"), ("util", "../util", None)]
    exported = sorted(i.symbol for i in pf.imports if not i.module)
    assert exported == ["Shop", "open"]
    assert pf.bases["Shop"] == [("Base",), ("Store",)]


def test_rust_impl_methods_use_lists_and_macros() -> None:
    pf = parse_source("src/shop.rs", "rust", RUST, "d")
    assert _defs(pf) == [("Shop", True), ("Shop.add", False), ("helper", False)]
    assert _calls(pf) == [("println!",), ("self", "cart", "push"), ("helper",)]
    # a ``use`` list binds each name to its full path
    assert [(i.name, i.module) for i in pf.imports] == [
        ("Cart", "crate::cart::Cart"),
        ("Item", "crate::cart::Item"),
        ("fmt", "std::fmt"),
    ]
    assert ("Cart",) in [b[1:] for b in pf.bases["Shop"]]  # the struct's field type


def test_c_includes_statics_and_structs() -> None:
    pf = parse_source("src/cart.c", "c", C, "d")
    assert _defs(pf) == [("cart", True), ("count", False), ("add", False)]
    assert _calls(pf) == [("printf",), ("count",)]
    includes = [(i.module, i.level) for i in pf.imports if i.level in (ANGLE, QUOTED)]
    assert includes == [("cart.h", 1), ("stdio.h", 0)]  # quoted: next to the file first
    statics = [i.symbol for i in pf.imports if not i.module]
    assert statics == ["count"]  # file-local: never a target from another file
    # both take a ``struct cart *`` first: the type's methods
    receivers = [(i.symbol, i.module) for i in pf.imports if i.level == RECEIVER]
    assert receivers == [("count", "cart"), ("add", "cart")]


def test_each_family_is_its_language_class() -> None:
    assert isinstance(for_language("go"), Go)
    assert isinstance(for_language("typescript"), TypeScript)
    assert isinstance(for_language("javascript"), TypeScript)
    assert isinstance(for_language("rust"), Rust)
    assert isinstance(for_language("c"), CFamily)
    assert isinstance(for_language("cpp"), CFamily)


def test_reserved_names_are_the_languages_own() -> None:
    rust, ts, c = Rust(), TypeScript(), CFamily()
    assert rust.reserved("Vec") and rust.reserved("Some")
    assert not rust.reserved("Shop")
    assert ts.reserved("console") and not ts.reserved("Shop")
    assert c.reserved("printf") and not c.reserved("count")


def test_go_reads_the_module_path_of_each_go_mod(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "go.mod": "module example.com/shop\n\ngo 1.22\n",
            "tools/go.mod": "module example.com/shop/tools\n",
            "tools/gen/main.go": "package main\n",
            "cart/cart.go": "package cart\n",
        },
    )
    found = Go().settings(tmp_path, ["cart/cart.go", "tools/gen/main.go"])
    assert found == {
        "gomods": {"": "example.com/shop", "tools": "example.com/shop/tools"},
        "gopath": None,
    }
    assert Go().settings(tmp_path / "tools" / "gen", ["main.go"]) is None


def test_typescript_reads_tsconfig_paths_and_workspace_packages(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "tsconfig.json": TSCONFIG,
            "packages/ui/package.json": '{"name": "@shop/ui", "main": "index.js"}',
            "packages/ui/index.js": "export function button() {}\n",
            "src/app/main.ts": "export const x = 1;\n",
        },
    )
    found = TypeScript().settings(tmp_path, ["src/app/main.ts", "packages/ui/index.js"])
    assert found is not None
    assert found["configs"][""]["base"] == "src"
    # targets are read relative to ``baseUrl``, kept relative to the repository
    assert found["configs"][""]["paths"] == [["@app/*", ["src/app/*"]]]
    assert found["packages"]["@shop/ui"][0] == "packages/ui"
    assert TypeScript().settings(tmp_path / "src", ["app/main.ts"]) is None

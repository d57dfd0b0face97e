"""JavaScript/TypeScript resolution (``repomem.index.langs.typescript``): calls become graph
edges and names at the cursor become cards through ES modules, CommonJS, ``tsconfig.json``
paths, declared types and class hierarchies; what the code does not bind stays unresolved."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from repos import write_files
from test_index import CONFIG_IDS, CONFIGS, apply_on_disk, assert_same

from repomem.config import IndexConfig
from repomem.context.definitions import (
    MANY_PENDING,
    MAX_PENDING,
    find_definitions,
    resolve_names,
)
from repomem.index import parsing
from repomem.index.langs import for_language
from repomem.index.parsing import _closers
from repomem.index.repo import RepoIndex

FILES: dict[str, str] = {
    "tsconfig.json": """{
  // JSON with comments, as tsc reads it
  "compilerOptions": {
    "baseUrl": ".",
    "paths": { "@app/*": ["src/*"], "@lib": ["lib/main.js"], },
  },
}
""",
    "src/util/math.ts": """\
export function add(a: number, b: number): number {
  return a + b;
}

export const double = (x: number) => x * 2;

export default function mul(a: number, b: number): number {
  return a * b;
}

function helper(): number {
  return 1;
}
""",
    "src/util/index.ts": "export * from './math';\nexport { default as times } from './math';\n",
    "src/copies/one.ts": "export function helper(): number {\n  return 1;\n}\n",
    "src/copies/two.ts": "export function helper(): number {\n  return 1;\n}\n",
    "src/models/base.ts": """\
export interface Named {
  name(): string;
}

export class Base implements Named {
  name(): string {
    return 'base';
  }

  helper(): number {
    return 1;
  }

  static create(): Base {
    return new Base();
  }
}

export const instance = new Base();

export function makeBase(): Base {
  return new Base();
}
""",
    "src/models/user.ts": """\
import { Base } from './base';
import { add } from '@app/util';

export class User extends Base {
  private other: Base;

  constructor(private peer: Base) {
    super();
    this.other = new Base();
  }

  total(): number {
    this.peer.helper();
    this.other.name();
    return add(this.helper(), super.helper());
  }
}
""",
    "src/main.ts": """\
import * as util from './util';
import mul from './util/math.js';
import { User } from './models/user';
import { helper } from './copies/two';
import { main } from '@lib';
import { instance, makeBase } from './models/base';
const legacy = require('./legacy');
const { count } = require('./legacy');

export function run(u: User): number {
  const made = new User(u);
  u.total();
  made.total();
  util.double(2);
  legacy.legacy();
  count();
  helper();
  main();
  instance.helper();
  const made2 = makeBase();
  made2.name();
  return mul(2, 3);
}
""",
    "src/legacy.js": """\
exports.legacy = function () {
  return 1;
};

function count() {
  return 2;
}

module.exports.count = count;
""",
    "lib/main.js": "export function main() {\n  return 0;\n}\n",
    "web/shared.js": "function shared(x) {\n  return x + 1;\n}\n",
    "web/page.js": "function page() {\n  return shared(2);\n}\n",
    "web/page.test.js": "function only_in_tests() {\n  return 3;\n}\n",
    "web/uses.js": "function uses() {\n  return only_in_tests();\n}\n",
}


def _index(tmp_path: Path, files: dict[str, str] = FILES) -> RepoIndex:
    root = write_files(tmp_path / "proj", files)
    config = IndexConfig(index_dir=str(tmp_path / "idx"))
    return RepoIndex.build(root, config, save=False)[0]


def _updated(
    tmp_path: Path, files: dict[str, str], path: str, text: str
) -> tuple[RepoIndex, RepoIndex]:
    """An index of ``files`` updated with ``path``'s new ``text``, and one built afresh from
    the edited tree: what update-equals-rebuild compares."""
    root = write_files(tmp_path / "proj", files)
    config = IndexConfig(index_dir=str(tmp_path / "idx"))
    index, _ = RepoIndex.build(root, config, save=False)
    apply_on_disk(root, {path: text})
    index.update_file(path, text)
    return index, RepoIndex.build(root, config, save=False)[0]


def _edges(index: RepoIndex, path: str) -> set[tuple[str, str]]:
    """(callee as written on the call's line, target's qualified name) of a file's edges."""
    lines = index.file_lines(path)
    pf = index.tables.parsed[path]
    out = set()
    for node, target, target_node in index.tables.calls[path]:
        line = lines[int(pf.node_start[node])].strip()
        out.add((line, f"{target}:{index.resolver.qualnames[target][target_node]}"))
    return out


def test_calls_resolve_through_imports_and_declared_types(tmp_path: Path) -> None:
    index = _index(tmp_path)
    main = {target for _, target in _edges(index, "src/main.ts")}
    assert main == {
        "src/models/user.ts:User",  # new User(u)
        "src/models/user.ts:User.total",  # u: User, and made = new User(...)
        "src/util/math.ts:double",  # util.* through the barrel's export *
        "src/legacy.js:legacy",  # require + exports.legacy = function
        "src/legacy.js:count",  # destructured require + module.exports.count = count
        "src/copies/two.ts:helper",  # the copy the file imports, not "ambiguous"
        "lib/main.js:main",  # tsconfig paths, exact pattern
        "src/util/math.ts:mul",  # default import, './math.js' is math.ts
        "src/models/base.ts:Base.helper",  # a const's members are its type's
        "src/models/base.ts:makeBase",
        "src/models/base.ts:Base.name",  # a function's result has its return type
    }
    assert _edges(index, "src/models/user.ts") == {
        ("this.other = new Base();", "src/models/base.ts:Base"),
        ("this.peer.helper();", "src/models/base.ts:Base.helper"),  # constructor field
        ("this.other.name();", "src/models/base.ts:Base.name"),  # field type
        ("return add(this.helper(), super.helper());", "src/util/math.ts:add"),  # @app/*
        ("return add(this.helper(), super.helper());", "src/models/base.ts:Base.helper"),
    }


def test_scripts_share_globals_but_not_with_tests(tmp_path: Path) -> None:
    index = _index(tmp_path)
    assert _edges(index, "web/page.js") == {("return shared(2);", "web/shared.js:shared")}
    assert _edges(index, "web/uses.js") == set()


def test_definitions_are_qualified(tmp_path: Path) -> None:
    index = _index(tmp_path)
    defs = {d.name: d.is_class for d in index.tables.parsed["src/models/base.ts"].definitions}
    assert defs == {
        "Named": True,
        "Named.name": False,
        "Base": True,
        "Base.name": False,
        "Base.helper": False,
        "Base.create": False,
        "instance": False,
        "makeBase": False,
    }
    math = [d.name for d in index.tables.parsed["src/util/math.ts"].definitions]
    assert math == ["add", "double", "mul", "helper"]


def _cards(index: RepoIndex, path: str, left: str) -> list[tuple[str, str]]:
    return [(h.card.path, h.card.name) for h in find_definitions(index, path, left)]


def test_names_at_the_cursor_resolve_as_calls_do(tmp_path: Path) -> None:
    index = _index(tmp_path)
    left = FILES["src/main.ts"].split("  u.total();")[0] + "  const b = makeBase();\n"
    names = ["made.total", "b.helper", "util.times", "helper", "User.create"]
    got = resolve_names(index, "src/main.ts", left, names)
    assert [g[:2] if g else None for g in got] == [
        ("src/models/user.ts", "User.total"),  # a local typed by ``new``
        ("src/models/base.ts", "Base.helper"),  # by the return type of what made it
        ("src/util/math.ts", "mul"),  # the barrel's renamed default export
        ("src/copies/two.ts", "helper"),
        ("src/models/base.ts", "Base.create"),  # inherited static method
    ]
    inside = FILES["src/models/user.ts"].split("    this.peer.helper();")[0] + "    this.peer.\n"
    got = resolve_names(index, "src/models/user.ts", inside, ["this.peer.name", "this.total"])
    assert [g[:2] if g else None for g in got] == [
        ("src/models/base.ts", "Base.name"),  # a constructor's parameter property
        ("src/models/user.ts", "User.total"),
    ]


def test_keywords_globals_and_unbound_names_make_no_cards(tmp_path: Path) -> None:
    files = {
        **FILES,
        # repository definitions named like JavaScript's own: never what ``Object.create``,
        # ``undefined`` or the ``of`` of ``for ... of`` mean
        "src/rx/of.ts": "export function of<T>(x: T): T[] {\n  return [x];\n}\n",
        "src/rx/undef.ts": "export function undefined_(): void {}\nexport const undefined = 0;\n",
        "src/rx/sub.ts": "export class Subscriber {\n  static create(): Subscriber {\n"
        "    return new Subscriber();\n  }\n}\n",
        "src/rx/use.ts": "import { helper } from '../copies/one';\n\n"
        "export function use(xs: number[]) {\n  for (const x of xs) {\n"
        "    const o = Object.create(null);\n    if (o === undefined) {\n      helper();\n",
    }
    index = _index(tmp_path, files)
    cards = _cards(index, "src/rx/use.ts", files["src/rx/use.ts"])
    assert sorted(cards) == [("src/copies/one.ts", "helper"), ("src/rx/use.ts", "use")]
    assert _edges(index, "src/rx/use.ts") == {("helper();", "src/copies/one.ts:helper")}
    ts = for_language("typescript")
    for name in ("Object", "undefined", "Promise", "console", "Map", "for", "string", "Partial"):
        assert ts.reserved(name), name
    assert not ts.reserved("of") and not ts.reserved("Subscriber")


def test_a_test_file_is_not_reached_from_code_outside_tests(tmp_path: Path) -> None:
    index = _index(tmp_path)
    left = "function uses() {\n  return only_in_tests();\n"
    assert resolve_names(index, "web/uses.js", left, ["only_in_tests"]) == [None]
    assert resolve_names(index, "web/page.js", left, ["shared"])[0][:2] == (
        "web/shared.js",
        "shared",
    )


def test_tsconfig_is_read_at_build_and_saved_with_the_index(tmp_path: Path) -> None:
    root = write_files(tmp_path / "proj", FILES)
    config = IndexConfig(index_dir=str(tmp_path / "idx"))
    built, _ = RepoIndex.build(root, config)
    paths = [["@app/*", ["src/*"]], ["@lib", ["lib/main.js"]]]
    assert built.tables.settings == {
        "js": {"configs": {"": {"base": "", "paths": paths}}, "packages": {}}
    }
    (root / "tsconfig.json").write_text(json.dumps({"compilerOptions": {}}))
    # a loaded index resolves as the build did: its saved calls and an update agree
    loaded = RepoIndex.load(root, config)
    text = FILES["src/main.ts"].replace("  main();\n", "  main();\n  main();\n")
    loaded.update_file("src/main.ts", text)
    assert "lib/main.js:main" in {t for _, t in _edges(loaded, "src/main.ts")}
    # the next build reads it again: '@lib' is a package outside the repository now
    rebuilt, _ = RepoIndex.build(root, config)
    assert rebuilt.tables.settings == {
        "js": {"configs": {"": {"base": None, "paths": []}}, "packages": {}}
    }
    assert "lib/main.js:main" not in {t for _, t in _edges(rebuilt, "src/main.ts")}


def test_workspace_packages_import_each_other_by_name(tmp_path: Path) -> None:
    files = {
        "packages/core/package.json": '{"name": "@demo/core", "main": "dist/index.js"}',
        "packages/core/src/index.ts": "export { coreFn } from './impl';\n",
        "packages/core/src/impl.ts": "export function coreFn(): number {\n  return 1;\n}\n",
        "packages/core/src/extra.ts": "export function extraFn(): number {\n  return 2;\n}\n",
        # a copy elsewhere: the name alone says nothing
        "packages/legacy/src/extra.ts": "export function extraFn(): number {\n  return 3;\n}\n",
        "packages/app/package.json": '{"name": "app"}',
        "packages/app/src/app.ts": "import { coreFn } from '@demo/core';\n"
        "import { extraFn } from '@demo/core/extra';\n"
        "import { other } from 'left-pad';\n\n"
        "export function app(): number {\n  return coreFn() + extraFn() + other();\n}\n",
    }
    index = _index(tmp_path, files)
    assert {t for _, t in _edges(index, "packages/app/src/app.ts")} == {
        "packages/core/src/impl.ts:coreFn",  # main: dist/index.js, sources in src/
        "packages/core/src/extra.ts:extraFn",
    }


def test_a_package_s_sources_import_the_package_by_its_own_name(tmp_path: Path) -> None:
    """Without its package.json (a package's sources alone), the package's tests import it by
    its name: a named or namespace import of a bare specifier nothing else maps is looked for
    in the package's own entry; a default import, or a name the entry does not export, stays
    unresolved."""
    files = {
        "index.ts": "export { configureStore } from './store';\nexport * from 'redux';\n",
        "store.ts": "export function configureStore(): number {\n  return 1;\n}\n",
        "query/index.ts": "export function fetchQuery(): number {\n  return 2;\n}\n",
        "tests/helpers.ts": "export function setup(): number {\n  return 3;\n}\n",
        "tests/store.test.ts": "import { configureStore } from '@demo/toolkit';\n"
        "import { fetchQuery } from '@demo/toolkit/query';\n"
        "import { setup } from '@internal/tests/helpers';\n"
        "import { combineReducers } from 'redux';\n"
        "import React from 'react';\n\n"
        "export function check(): number {\n"
        "  return configureStore() + fetchQuery() + setup() + combineReducers() + React.render();"
        "\n}\n",
        # a path out of the repository into the sources' own folder; one inside that is wrong
        "tests/rel.test.ts": "import { fetchQuery as fq } from '../../src/query';\n"
        "import { gone } from './missing';\n\n"
        "export function rel(): number {\n  return fq() + gone();\n}\n",
        # a subpath re-exporting another one by the package's name
        "query/react/index.ts": "export * from '@demo/toolkit/query';\n",
        "tests/react.test.ts": "import { fetchQuery } from '@demo/toolkit/query/react';\n\n"
        "export function react(): number {\n  return fetchQuery();\n}\n",
        # a namespace of the package's subpath, and one of another package
        "tests/ns.test.ts": "import * as tk from '@demo/toolkit/query';\n"
        "import * as dom from 'react-dom';\n\n"
        "export function ns(): number {\n  return tk.fetchQuery() + dom.render();\n}\n",
    }
    index = _index(tmp_path, files)
    assert {t for _, t in _edges(index, "tests/store.test.ts")} == {
        "store.ts:configureStore",
        "query/index.ts:fetchQuery",
        "tests/helpers.ts:setup",  # an alias of the source folder, as tsconfig paths write it
    }
    assert {t for _, t in _edges(index, "tests/rel.test.ts")} == {"query/index.ts:fetchQuery"}
    assert {t for _, t in _edges(index, "tests/react.test.ts")} == {"query/index.ts:fetchQuery"}
    assert _edges(index, "tests/ns.test.ts") == {
        ("return tk.fetchQuery() + dom.render();", "query/index.ts:fetchQuery")
    }
    # the same files in a repository with a package.json: its name is the package's, not these
    named = _index(tmp_path / "named", {**files, "package.json": '{"name": "other"}'})
    assert _edges(named, "tests/store.test.ts") == set()


def test_a_package_s_own_entry_appearing_re_resolves_its_importers(tmp_path: Path) -> None:
    files = {
        "store.ts": "export function configureStore(): number {\n  return 1;\n}\n",
        "tests/store.test.ts": "import { configureStore } from '@demo/toolkit';\n\n"
        "export function check(): number {\n  return configureStore();\n}\n",
        "tests/ns.test.ts": "import * as tk from '@demo/toolkit';\n\n"
        "export function ns(): number {\n  return tk.configureStore();\n}\n",
    }
    root = write_files(tmp_path / "proj", files)
    config = IndexConfig(index_dir=str(tmp_path / "idx"))
    index, _ = RepoIndex.build(root, config, save=False)
    assert _edges(index, "tests/store.test.ts") == set()
    entry = "export { configureStore } from './store';\n"
    apply_on_disk(root, {"index.ts": entry})
    index.update_file("index.ts", entry)
    assert {t for _, t in _edges(index, "tests/store.test.ts")} == {"store.ts:configureStore"}
    assert {t for _, t in _edges(index, "tests/ns.test.ts")} == {"store.ts:configureStore"}
    assert_same(index, RepoIndex.build(root, config, save=False)[0], ["configureStore"])


EDITS: list[tuple[str, str | None]] = [
    # the barrel stops re-exporting math: util.double no longer resolves
    ("src/util/index.ts", "export { default as times } from './math';\n"),
    # and gains it back through a new module
    ("src/util/more.ts", "export { double, add } from './math';\n"),
    ("src/util/index.ts", "export * from './more';\nexport { default as times } from './math';\n"),
    # a directory index appears where './legacy' was a file: the file still wins
    ("src/legacy/index.js", "exports.legacy = function () {\n  return 2;\n};\n"),
    # the file goes: './legacy' is the directory's index now
    ("src/legacy.js", None),
    # the base class loses a method; the subclass's calls of it no longer resolve
    (
        "src/models/base.ts",
        "export class Base {\n  name(): string {\n    return 'b';\n  }\n}\n",
    ),
    # user.ts imports another copy; a script becomes a module
    ("src/main.ts", FILES["src/main.ts"].replace("./copies/two", "./copies/one")),
    ("web/shared.js", "export function shared(x) {\n  return x;\n}\n"),
    # the module the paths map to goes
    ("lib/main.js", None),
]


@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_updates_equal_a_rebuild(tmp_path: Path, config: IndexConfig) -> None:
    root = write_files(tmp_path / "proj", FILES)
    config = replace(config, index_dir=str(tmp_path / "idx"))
    index, _ = RepoIndex.build(root, config, save=False)
    for rel, text in EDITS:
        before = dict(index.tables.calls)
        apply_on_disk(root, {rel: text})
        index.update_file(rel, text)
        fresh, _ = RepoIndex.build(root, config, save=False)
        assert_same(index, fresh, ["util.double", "this.peer.helper()"])
        assert before != dict(index.tables.calls) or rel == "src/legacy/index.js", rel


def test_a_method_return_type_change_re_resolves_its_callers(tmp_path: Path) -> None:
    files = {
        "a.ts": "export class A {\n  run(): number {\n    return 1;\n  }\n}\n"
        "export class B {\n  run(): number {\n    return 2;\n  }\n}\n",
        "f.ts": "import { A } from './a';\n\nexport class Factory {\n"
        "  make(): A {\n    return new A();\n  }\n}\n",
        "use.ts": "import { Factory } from './f';\n\nexport function use(f: Factory): number {\n"
        "  const made = f.make();\n  return made.run();\n}\n",
    }
    root = write_files(tmp_path / "proj", files)
    config = IndexConfig(index_dir=str(tmp_path / "idx"))
    index, _ = RepoIndex.build(root, config, save=False)
    assert "a.ts:A.run" in {t for _, t in _edges(index, "use.ts")}
    text = files["f.ts"].replace("{ A }", "{ A, B }").replace("make(): A", "make(): B")
    apply_on_disk(root, {"f.ts": text})
    index.update_file("f.ts", text)
    assert "a.ts:B.run" in {t for _, t in _edges(index, "use.ts")}
    assert_same(index, RepoIndex.build(root, config, save=False)[0], ["made.run()"])


def test_declaration_files_and_anonymous_default_exports(tmp_path: Path) -> None:
    files = {
        "types/foo.d.ts": "export declare class Foo {\n  bar(x: number): string;\n}\n"
        "export declare function makeFoo(): Foo;\n",
        "src/use.ts": "import { makeFoo } from '../types/foo';\n\n"
        "export function use(): string {\n  const f = makeFoo();\n  return f.bar(1);\n}\n",
        # a module, though it names no export: its functions are not globals
        "web/anon.js": "function notGlobal() {\n  return 1;\n}\n\nexport default function () {}\n",
        "web/page.js": "function page() {\n  return notGlobal();\n}\n",
    }
    index = _index(tmp_path, files)
    assert {t for _, t in _edges(index, "src/use.ts")} == {
        "types/foo.d.ts:makeFoo",
        "types/foo.d.ts:Foo.bar",
    }
    assert _edges(index, "web/page.js") == set()


def test_callback_parameters_are_typed_by_the_function_they_are_passed_to(
    tmp_path: Path,
) -> None:
    files = {
        "src/sub.ts": "export class Sub {\n  complete(): void {}\n  next(v: number): void {}\n}\n"
        "export class Other {\n  complete(): void {}\n}\n",
        "src/operate.ts": "import { Sub } from './sub';\n\n"
        "export function operate(init: (source: Sub, subscriber: Sub) => void): void {}\n",
        "src/op.ts": "import { operate } from './operate';\n\nexport function op(): void {\n"
        "  operate((source, subscriber) => {\n    subscriber.complete();\n  });\n}\n",
    }
    root = write_files(tmp_path / "proj", files)
    config = IndexConfig(index_dir=str(tmp_path / "idx"))
    index, _ = RepoIndex.build(root, config, save=False)
    assert {t for _, t in _edges(index, "src/op.ts")} == {
        "src/operate.ts:operate",
        "src/sub.ts:Sub.complete",
    }
    left = files["src/op.ts"].split("    subscriber.complete")[0] + "    subscriber.next(1);\n"
    got = resolve_names(index, "src/op.ts", left, ["subscriber.next"])
    assert got[0] is not None and got[0][:2] == ("src/sub.ts", "Sub.next")
    # the callback's declared parameter type changes: the call re-resolves
    text = files["src/operate.ts"].replace("{ Sub }", "{ Other, Sub }")
    text = text.replace("subscriber: Sub", "subscriber: Other")
    apply_on_disk(root, {"src/operate.ts": text})
    index.update_file("src/operate.ts", text)
    assert "src/sub.ts:Other.complete" in {t for _, t in _edges(index, "src/op.ts")}
    assert_same(index, RepoIndex.build(root, config, save=False)[0], ["subscriber.complete()"])


FACTORY_FILES = {
    "src/build.ts": """\
export interface Slice {
  reducer(s: number): number;
}
export interface Store {
  dispatch(a: number): void;
}

export function buildCreateSlice(opts: number = 1) {
  const unused = opts;
  function reducer(s: number): number {
    return s + unused;
  }
  return function createSlice(name: string): Slice {
    return { reducer: (s: number) => s };
  };
}

export function configure(a: string): Store;
export function configure(a: number): Store;
export function configure(a: any) {
  return a;
}
""",
    "src/slice.ts": "import { buildCreateSlice } from './build';\n\n"
    "export const createSlice = buildCreateSlice();\n",
    "src/use.ts": """\
import { configure } from './build';
import { createSlice } from './slice';

export function use(): number {
  const slice = createSlice('a');
  const store = configure(1);
  store.dispatch(2);
  return slice.reducer(1);
}
""",
}


def test_results_of_factories_and_overloaded_functions_are_typed(tmp_path: Path) -> None:
    """``const x = f()`` types ``x`` by what ``f`` is declared to return: an overload's
    return type when the implementation declares none, and a factory's returned function's
    (``createSlice = buildCreateSlice()``: ``createSlice()`` makes a ``Slice``, whose
    ``reducer`` comes before the factory's local ``reducer``, taken only while no return
    type is declared); an update of either, in another file than the calls, equals a
    rebuild."""
    root = write_files(tmp_path / "proj", FACTORY_FILES)
    config = IndexConfig(index_dir=str(tmp_path / "idx"))
    index, _ = RepoIndex.build(root, config, save=False)
    assert {t for _, t in _edges(index, "src/use.ts")} == {
        "src/slice.ts:createSlice",
        "src/build.ts:configure",
        "src/build.ts:Store.dispatch",
        "src/build.ts:Slice.reducer",
    }
    left = FACTORY_FILES["src/use.ts"].split("  return")[0]
    got = resolve_names(index, "src/use.ts", left, ["slice.reducer", "store.dispatch"])
    assert [g[:2] if g else None for g in got] == [
        ("src/build.ts", "Slice.reducer"),
        ("src/build.ts", "Store.dispatch"),
    ]
    # the returned function and the overloads lose their return types: nothing is typed
    text = FACTORY_FILES["src/build.ts"].replace("): Slice {", ") {")
    text = text.replace("): Store;", ");")
    apply_on_disk(root, {"src/build.ts": text})
    index.update_file("src/build.ts", text)
    assert {t for _, t in _edges(index, "src/use.ts")} == {
        "src/slice.ts:createSlice",
        "src/build.ts:configure",
        "src/build.ts:buildCreateSlice.reducer",
    }
    assert_same(index, RepoIndex.build(root, config, save=False)[0], ["slice.reducer("])
    # and gain them back
    apply_on_disk(root, FACTORY_FILES)
    index.update_file("src/build.ts", FACTORY_FILES["src/build.ts"])
    assert "src/build.ts:Slice.reducer" in {t for _, t in _edges(index, "src/use.ts")}
    assert_same(index, RepoIndex.build(root, config, save=False)[0], ["store.dispatch("])


def test_a_receiver_declared_above_the_window_is_typed(tmp_path: Path) -> None:
    """A test's ``let adapter: Adapter`` at the top of a long ``describe`` callback types
    ``adapter.`` hundreds of lines below; a ``const adapter = ...`` in the window hides it,
    and a ``this: Adapter`` parameter up there types no ``this.`` at the cursor."""
    files = {
        "src/adapter.ts": "export interface Adapter {\n  addOne(x: number): number;\n}\n",
        "src/adapter.test.ts": "import { Adapter } from './adapter';\n\n"
        "type Bound = (this: Adapter) => void;\n"
        "describe('adapter', () => {\n  let adapter: Adapter;\n"
        + "  it('works', () => {\n    expect(1).toBe(1);\n  });\n"
        * 80,
    }
    index = _index(tmp_path, files)
    left = files["src/adapter.test.ts"] + "  it('adds', () => {\n"
    got = resolve_names(index, "src/adapter.test.ts", left, ["adapter.addOne"])
    assert got[0] is not None and got[0][:2] == ("src/adapter.ts", "Adapter.addOne")
    hidden = left + "    const adapter = makeOther();\n"
    assert resolve_names(index, "src/adapter.test.ts", hidden, ["adapter.addOne"]) == [None]
    # a function's ``this: Adapter`` far above is that function's, not the cursor's
    assert resolve_names(index, "src/adapter.test.ts", left, ["this.addOne"]) == [None]


def test_a_generic_call_signature_after_a_member_without_semicolon_parses(
    tmp_path: Path,
) -> None:
    """The grammar takes a line's ``<T>(x: T): T`` after a type member without ``;`` for a
    comparison and loses the rest of the file in a syntax error: the definitions after it
    are still found, and an edit of the file, parsed incrementally, equals a rebuild."""
    files = {
        "src/creators.ts": "interface Creator {\n  (x: number): number\n  <T>(x: T): T\n"
        "  withTypes<T>(): Creator\n}\n\nexport function createThing(): Thing {\n"
        "  return new Thing();\n}\n\nexport class Thing {\n  run(): void {}\n}\n",
        "src/use.ts": "import { createThing } from './creators';\n\n"
        "export function use(): void {\n  const t = createThing();\n  t.run();\n}\n",
    }
    root = write_files(tmp_path / "proj", files)
    config = IndexConfig(index_dir=str(tmp_path / "idx"))
    index, _ = RepoIndex.build(root, config, save=False)
    names = [d.name for d in index.tables.parsed["src/creators.ts"].definitions]
    assert names == ["Creator", "Creator.withTypes", "createThing", "Thing", "Thing.run"]
    assert index.file_text("src/creators.ts") == files["src/creators.ts"]
    assert {t for _, t in _edges(index, "src/use.ts")} == {
        "src/creators.ts:createThing",
        "src/creators.ts:Thing.run",
    }
    text = files["src/creators.ts"].replace("run(): void {}", "run(): void {}\n  stop(): void {}")
    apply_on_disk(root, {"src/creators.ts": text})
    index.update_file("src/creators.ts", text)
    index.update_file("src/creators.ts", text.replace("stop", "halt"))
    apply_on_disk(root, {"src/creators.ts": text.replace("stop", "halt")})
    assert "Thing.halt" in [d.name for d in index.tables.parsed["src/creators.ts"].definitions]
    assert_same(index, RepoIndex.build(root, config, save=False)[0], ["t.run("])


def test_a_dynamic_import_binds_like_an_import(tmp_path: Path) -> None:
    """``const { f } = await import('./lib')`` (a test that mocks a module first) binds ``f``
    to the module's export, and ``const m = await import('./lib')`` binds ``m`` to the
    module: calls and names at the cursor resolve through them."""
    files = {
        "src/lib.ts": "export function configure(): number {\n  return 1;\n}\n",
        "src/lib.test.ts": "describe('lib', async () => {\n"
        "  const { configure } = await import('./lib');\n"
        "  const lib = await import('./lib');\n"
        "  it('works', () => {\n    configure();\n    lib.configure();\n  });\n});\n",
    }
    index = _index(tmp_path, files)
    assert _edges(index, "src/lib.test.ts") == {
        ("configure();", "src/lib.ts:configure"),
        ("lib.configure();", "src/lib.ts:configure"),
    }
    left = files["src/lib.test.ts"].split("    configure();")[0]
    assert _cards(index, "src/lib.test.ts", left) == [("src/lib.ts", "configure")]


def test_a_callback_parameter_bound_just_above_brings_its_type(tmp_path: Path) -> None:
    """``build((builder) => {`` just above the cursor: the next line uses ``builder``
    through a member no line names yet, so its interface's card (listing the members) is a
    candidate; once the code uses ``builder`` it is an ordinary name again."""
    files = {
        "src/builder.ts": "export interface Builder {\n  addCase(x: number): Builder;\n}\n\n"
        "export function build(cb: (builder: Builder) => void): void {}\n",
        "src/use.ts": "import { build } from './builder';\n\n",
    }
    index = _index(tmp_path, files)
    left = files["src/use.ts"] + "build((builder) => {\n"
    hits = find_definitions(index, "src/use.ts", left)
    assert {(h.card.path, h.card.name, h.how) for h in hits} == {
        ("src/builder.ts", "Builder", "in scope"),
        ("src/builder.ts", "build", "named here, resolved through imports"),
    }
    used = left + "  builder.addCase(1);\n"
    assert set(_cards(index, "src/use.ts", used)) == {
        ("src/builder.ts", "Builder.addCase"),
        ("src/builder.ts", "build"),
    }


OPTION_FILES = {
    "src/builder.ts": """\
export interface Builder {
  addCase(x: number): Builder;
  addMatcher(x: number): Builder;
}
export interface Other {
  addCase(x: number): Other;
}
export interface Api {
  take(n: number): void;
}
export type Effect = (action: number, api: Api) => void;
export interface Options {
  name: string;
  extra?: (builder: Builder) => void;
  effect: Effect;
}
export function build(options: Options): void {}
export function factory() {
  return function make(o: Options): Builder {
    return o as any;
  };
}
""",
    "src/made.ts": "import { factory } from './builder';\n\nexport const make = factory();\n",
    "src/use.ts": """\
import { build } from './builder';
import { make } from './made';

build({
  name: 'a',
  extra(builder) {
    builder.addCase(1);
  },
  effect: (action, api) => {
    api.take(1);
  },
});
make({
  name: 'b',
  extra: (b) => {
    b.addCase(2);
  },
  effect(action, api) {},
});
""",
}


def test_object_literal_callbacks_are_typed_by_the_called_function_s_parameter(
    tmp_path: Path,
) -> None:
    """A function written as property ``p`` of an object literal passed to ``f`` (``p: (x)
    => ...``, ``p(x) {...}``) has its parameters typed by the function type of ``p`` in
    ``f``'s declared parameter type, written inline or named (``effect: Effect``), ``f``
    being a function or a ``const`` a factory made; calls and names at the cursor alike, and
    an update of the option type equals a rebuild."""
    root = write_files(tmp_path / "proj", OPTION_FILES)
    config = IndexConfig(index_dir=str(tmp_path / "idx"))
    index, _ = RepoIndex.build(root, config, save=False)
    assert _edges(index, "src/use.ts") == {
        ("build({", "src/builder.ts:build"),
        ("builder.addCase(1);", "src/builder.ts:Builder.addCase"),
        ("api.take(1);", "src/builder.ts:Api.take"),
        ("make({", "src/made.ts:make"),
        ("b.addCase(2);", "src/builder.ts:Builder.addCase"),
    }
    text = OPTION_FILES["src/use.ts"]
    left = text.split("    builder.addCase")[0] + "    builder.addMatcher(1);\n"
    got = resolve_names(index, "src/use.ts", left, ["builder.addMatcher"])
    assert got[0] is not None and got[0][:2] == ("src/builder.ts", "Builder.addMatcher")
    left = text.split("    api.take")[0]
    assert resolve_names(index, "src/use.ts", left, ["api.take"])[0][:2] == (
        "src/builder.ts",
        "Api.take",
    )
    # bound by the line above and not used yet: its interface is the first card
    hits = find_definitions(index, "src/use.ts", text.split("    b.addCase")[0])
    assert (hits[0].card.path, hits[0].card.name, hits[0].how) == (
        "src/builder.ts",
        "Builder",
        "in scope",
    )
    edited = OPTION_FILES["src/builder.ts"].replace("(builder: Builder)", "(builder: Other)")
    apply_on_disk(root, {"src/builder.ts": edited})
    index.update_file("src/builder.ts", edited)
    assert ("builder.addCase(1);", "src/builder.ts:Other.addCase") in _edges(index, "src/use.ts")
    assert_same(index, RepoIndex.build(root, config, save=False)[0], ["builder.addCase(1)"])
    # the caller's edit: the callback moves to an option the type does not have
    edited = text.replace("  extra(builder) {", "  other(builder) {")
    apply_on_disk(root, {"src/use.ts": edited})
    index.update_file("src/use.ts", edited)
    assert ("builder.addCase(1);", "src/builder.ts:Other.addCase") not in _edges(
        index, "src/use.ts"
    )
    assert_same(index, RepoIndex.build(root, config, save=False)[0], ["builder.addCase(1)"])


def test_chained_calls_are_typed_by_each_call_s_return_type(tmp_path: Path) -> None:
    """``combine(a).lazy<T>()`` (over lines too) is what ``lazy``, a member of ``combine``'s
    return type, returns: its members resolve, in call edges and at the cursor."""
    files = {
        "src/reducer.ts": "export interface Reducer {\n  lazy<T>(): Reducer;\n"
        "  inject(x: number): Reducer;\n}\n"
        "export function combine(a: number): Reducer {\n  return null as any;\n}\n",
        "src/use.ts": "import { combine } from './reducer';\n\nexport function use(): void {\n"
        "  const r =\n    combine(1).lazy<\n      string\n    >();\n"
        "  combine(2).lazy().inject(3);\n",
    }
    index = _index(tmp_path, files)
    assert ("combine(2).lazy().inject(3);", "src/reducer.ts:Reducer.inject") in _edges(
        index, "src/use.ts"
    )
    got = resolve_names(index, "src/use.ts", files["src/use.ts"], ["r.inject"])
    assert got[0] is not None and got[0][:2] == ("src/reducer.ts", "Reducer.inject")


ALIAS_FILES = {
    "src/types.ts": """\
export class ZodType {
  optional(): ZodType {
    return this;
  }
  describe(d: string): this {
    return this;
  }
}
export class ZodBigInt extends ZodType {
  static create = (): ZodBigInt => new ZodBigInt();
  gt(n: bigint): ZodBigInt {
    return this;
  }
}
const bigIntType = ZodBigInt.create;
export { bigIntType as bigint };
""",
    "src/use.ts": """\
import * as z from './types';

export function use(): void {
  const a = z.bigint().describe("a");
  z.bigint().describe("b").gt(1n);
  a.gt(2n);
  z.bigint().gt(3n);
""",
}


def test_an_alias_const_and_a_this_result_keep_a_chain_s_type(tmp_path: Path) -> None:
    """``const bigIntType = ZodBigInt.create`` is what it names: ``z.bigint()`` makes what
    ``create`` returns; a method declared to return ``this`` gives back its receiver, the
    subclass's instance (``describe("b").gt`` is ``ZodBigInt.gt``), in call edges and at
    the cursor (``a.gt``: a card); an update that drops the ``this`` result equals a
    rebuild."""
    root = write_files(tmp_path / "proj", ALIAS_FILES)
    config = IndexConfig(index_dir=str(tmp_path / "idx"))
    index, _ = RepoIndex.build(root, config, save=False)
    edges = _edges(index, "src/use.ts")
    assert ('z.bigint().describe("b").gt(1n);', "src/types.ts:ZodBigInt.gt") in edges
    assert ("a.gt(2n);", "src/types.ts:ZodBigInt.gt") in edges
    left = ALIAS_FILES["src/use.ts"]
    got = resolve_names(index, "src/use.ts", left, ["a.gt", "z.bigint.describe.gt"])
    assert [g[:2] if g else None for g in got] == [("src/types.ts", "ZodBigInt.gt")] * 2
    assert ("src/types.ts", "ZodBigInt.gt") in _cards(index, "src/use.ts", left)
    text = ALIAS_FILES["src/types.ts"].replace("): this {", "): ZodType {")
    apply_on_disk(root, {"src/types.ts": text})
    index.update_file("src/types.ts", text)
    edges = _edges(index, "src/use.ts")
    assert ('z.bigint().describe("b").gt(1n);', "src/types.ts:ZodBigInt.gt") not in edges
    assert ("z.bigint().gt(3n);", "src/types.ts:ZodBigInt.gt") in edges
    assert_same(index, RepoIndex.build(root, config, save=False)[0], ["gt("])


def test_an_import_no_code_uses_yet_is_carded_first(tmp_path: Path) -> None:
    """A value the file imports and no code of it uses yet is imported to be used below: its
    card comes before those of the names the last lines use; an ``import type`` name never
    is one (a type is not called)."""
    files = {
        "src/lib.ts": "export function used(): number {\n  return 1;\n}\n"
        "export function later(): number {\n  return 2;\n}\n"
        "export interface Shape {\n  size: number;\n}\n"
        "export class Box {\n  size = 1;\n}\n",
        "src/use.ts": "import { used, later, Box } from './lib';\n"
        "import type { Shape } from './lib';\n\n"
        "export function run(): number {\n  let b: Box;\n  let c = 1;\n  c += 1;\n  c += 2;\n"
        "  const a = used();\n",
    }
    index = _index(tmp_path, files)
    hits = find_definitions(index, "src/use.ts", files["src/use.ts"])
    assert [h.card.name for h in hits if h.card.path == "src/lib.ts"][:2] == ["later", "used"]
    # a type only the code's words name (a local's annotation) is used
    pf, lines = index.tables.parsed["src/use.ts"], files["src/use.ts"].split("\n")
    assert for_language("typescript").pending_imports(pf, lines) == {"later"}


def test_many_imports_no_code_uses_yet_are_ranked_as_other_names(tmp_path: Path) -> None:
    """A file cut far below its imports (the buffer at the cursor) has many no code above
    uses yet: the code below uses them, so they do not come before what the lines at the
    cursor name (``MAX_PENDING``); a few still do."""
    n = MAX_PENDING + 1
    files = {
        "src/lib.ts": "".join(
            f"export function f{i}(): number {{\n  return {i};\n}}\n" for i in range(n)
        )
        + "export function near(): number {\n  return 0;\n}\n",
        "src/use.ts": f"import {{ {', '.join(f'f{i}' for i in range(n))}, near }} from './lib';\n\n"
        "export function run(): number {\n  const a = near();\n",
    }
    index = _index(tmp_path, files)
    names = [h.card.name for h in find_definitions(index, "src/use.ts", files["src/use.ts"])]
    assert names.index("near") < min(names.index(f"f{i}") for i in range(n))
    few = files["src/use.ts"].replace("f0, ", "")  # MAX_PENDING of them: they come first
    index = _index(tmp_path / "few", {**files, "src/use.ts": few})
    names = [h.card.name for h in find_definitions(index, "src/use.ts", few)]
    assert names.index("near") > max(names.index(f"f{i}") for i in range(1, n))


def test_of_many_imports_no_code_uses_yet_the_most_called_come_first(tmp_path: Path) -> None:
    """Of more than ``MAX_PENDING`` imports no code above uses yet, the ``MANY_PENDING`` the
    repository calls most still come before what the lines at the cursor name (a project's
    helpers); those no code calls (types, constants) do not."""
    n = MAX_PENDING + 1
    calls = {"rare": 1, "many": 6, "die": 5, "some": 4, "few": 3}
    names = (*(f"f{i}" for i in range(n)), *calls, "near")
    files = {
        "src/lib.ts": "".join(
            f"export function {name}(): number {{\n  return 0;\n}}\n" for name in names
        ),
        "src/other.ts": f"import {{ {', '.join(calls)} }} from './lib';\n\n"
        "export function other(): void {\n"
        + "".join(f"  {name}();\n" * count for name, count in calls.items())
        + "}\n",
        "src/use.ts": f"import {{ {', '.join(names)} }} from './lib';\n\n"
        "export function run(): number {\n  const a = near();\n",
    }
    index = _index(tmp_path, files)
    got = [h.card.name for h in find_definitions(index, "src/use.ts", files["src/use.ts"])]
    assert MANY_PENDING == 3 and set(got[:3]) == {"many", "die", "some"} and got[3] == "near"
    assert max(got.index(name) for name in ("few", "rare")) < min(
        got.index(f"f{i}") for i in range(n)
    )


def test_type_imports_come_after_the_values_imported(tmp_path: Path) -> None:
    """Of the imports no line near the cursor names, the values come before the types that
    a closing ``import type`` block binds, though those are nearer: no call needs a type."""
    files = {
        "src/lib.ts": "export function make(): number {\n  return 1;\n}\n"
        "export interface Shape {\n  size: number;\n}\n"
        "export interface Other {\n  name: string;\n}\n",
        "src/use.ts": "import { make } from './lib';\n"
        "import type { Shape, Other } from './lib';\n\n"
        "export function run(s: Shape, o: Other): number {\n  const a = make;\n"
        + "".join(f"  let c{i} = {i};\n" for i in range(40)),
    }
    index = _index(tmp_path, files)
    names = [h.card.name for h in find_definitions(index, "src/use.ts", files["src/use.ts"])]
    assert names.index("make") < min(names.index("Shape"), names.index("Other"))


def test_an_import_only_a_comment_names_is_not_used_yet(tmp_path: Path) -> None:
    """A doc comment's ``{@link SequenceError}`` (or a block comment naming ``defer``) is no
    use of the import: it is still imported to be used below."""
    files = {
        "src/lib.ts": "export class SequenceError {}\nexport function defer(): void {}\n",
        "src/use.ts": "import { SequenceError, defer } from './lib';\n\n"
        "/**\n * Throws a {@link SequenceError}.\n */\nexport function one(): void {\n"
        "  /* defer the work */\n  let c = 1;\n",
    }
    index = _index(tmp_path, files)
    pf, lines = index.tables.parsed["src/use.ts"], files["src/use.ts"].split("\n")
    assert for_language("typescript").pending_imports(pf, lines) == {"SequenceError", "defer"}


def test_the_files_own_definitions_come_after_other_files(tmp_path: Path) -> None:
    """The prompt's own text shows the cursor's file: a definition of it above the cursor
    comes after the other files' definitions the code reaches, however near its use."""
    files = {
        "src/lib.ts": "export function other(): number {\n  return 1;\n}\n",
        "src/use.ts": "import { other } from './lib';\n\n"
        "function local(): number {\n  return 2;\n}\n\n"
        "export function run(): number {\n  other();\n  let c = 1;\n  c += 1;\n"
        "  local();\n  local();\n",
    }
    index = _index(tmp_path, files)
    hits = find_definitions(index, "src/use.ts", files["src/use.ts"])
    shown = [(h.card.path, h.card.name) for h in hits]
    assert shown[0] == ("src/lib.ts", "other") and ("src/use.ts", "local") in shown


def test_a_buffer_cut_inside_a_class_keeps_its_definitions(tmp_path: Path) -> None:
    """The buffer of a file being written ends at the cursor with its class, method and
    blocks still open: parsed as written, the grammar loses the class in a syntax error, and
    ``this.`` at the cursor reaches nothing; parsed with the closers appended on its last
    line (its rows unchanged), the class and its fields type ``this.peer``."""
    files = {
        "src/peer.ts": "export class Peer {\n  on(event: string): void {}\n}\n",
        "src/host.ts": "import { Peer } from './peer';\n\nexport class Host {\n"
        "  peer!: Peer;\n\n  start(flag: boolean): void {\n    const label = `x ${flag}`;\n"
        "    if (flag) {\n      this.peer.on('a');\n    }\n\n    if (label) {\n",
    }
    index = _index(tmp_path, files)
    got = resolve_names(index, "src/host.ts", files["src/host.ts"], ["this.peer.on"])
    assert got[0] is not None and got[0][:2] == ("src/peer.ts", "Peer.on")
    pf = index.tables.parsed["src/host.ts"]
    assert pf.line_owner.size == files["src/host.ts"].count("\n")
    assert {d.name for d in pf.definitions} >= {"Host", "Host.peer", "Host.start"}


@pytest.mark.parametrize(
    ("source", "closers"),
    [
        (b"class A {\n  m() {\n    if (x) {", b"}}}"),
        (b"a = `x ${f({", b"})}`"),  # a template's ``${`` and the template itself
        (b"f('}', /* { */ [", b"])"),  # strings and comments hide brackets
        (b"a { b } c", b""),
        (b"x {\n  // note", b""),  # closers written here would be commented out
        (b'x { y = "abc', b""),  # a string left open
    ],
)
def test_the_closers_of_a_cut_buffer(source: bytes, closers: bytes) -> None:
    assert _closers("typescript", source) == closers


def test_a_cast_types_a_receiver(tmp_path: Path) -> None:
    """``const t = expr as Foo`` (a chain over lines too, ``as unknown as Foo``, and after a
    call, whose result type the cast overrides) types ``t.`` at the cursor."""
    files = {
        "src/types.ts": "export interface Codec {\n  decode(x: string): unknown;\n}\n"
        "export interface Pair {\n  input: Codec;\n}\n"
        "export function make(): number {\n  return 1;\n}\n",
        "src/use.ts": "import { Pair, Codec, make } from './types';\n\n"
        "export function run(opts: any): void {\n  const t = opts.config\n"
        "    .transformer as Pair;\n  const u = opts.x as unknown as Codec;\n"
        "  const v = make() as Codec;\n",
    }
    index = _index(tmp_path, files)
    names = ["t.input.decode", "u.decode", "v.decode"]
    got = resolve_names(index, "src/use.ts", files["src/use.ts"], names)
    assert [g[:2] if g else None for g in got] == [("src/types.ts", "Codec.decode")] * 3


def test_an_error_inside_the_file_is_not_repaired_at_its_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A line being typed (``foo(`` inside a file) leaves a bracket open at the file's end
    too, but its error does not run there: no closers are looked for, no second parse."""
    scanned: list[bytes] = []
    monkeypatch.setattr(parsing, "_closers", lambda _, s: scanned.append(s) or b"")
    body = (
        "export class A {\n  m(): void {\n    foo(\n  }\n\n  n(): number {\n    return 1;\n  }\n}\n"
    )
    parsing.parse_tree("typescript", body.encode())
    assert scanned == []
    parsing.parse_tree("typescript", b"export class A {\n  m(): void {\n    if (x) {\n")
    assert len(scanned) == 1


def test_a_member_destructured_from_this_brings_its_type(tmp_path: Path) -> None:
    """``const { source } = this`` just above the cursor (tested, not used yet): the next
    line uses ``source`` through a member no line names, so the class of the field's
    declared type is a candidate, found through the class's base."""
    files = {
        "src/obs.ts": "export class Source {\n  subscribe(): void {}\n}\n\n"
        "export class Observable {\n  source: Source | undefined;\n}\n",
        "src/subject.ts": "import { Observable } from './obs';\n\n"
        "export class Subject extends Observable {\n  run(): void {\n"
        "    const { source } = this;\n    if (source) {\n",
    }
    index = _index(tmp_path, files)
    hits = find_definitions(index, "src/subject.ts", files["src/subject.ts"])
    assert ("src/obs.ts", "Source", "in scope") in {(h.card.path, h.card.name, h.how) for h in hits}
    renamed = files["src/subject.ts"].replace("{ source }", "{ source: from }")
    renamed = renamed.replace("if (source)", "if (from)") + "      from.subscribe();\n"
    index.update_file("src/subject.ts", renamed)
    assert ("src/obs.ts", "Source.subscribe") in _cards(index, "src/subject.ts", renamed)


def test_what_the_file_calls_elsewhere_is_a_candidate(tmp_path: Path) -> None:
    """A function the file calls more than any other (a project's ``die``), named nowhere
    near the cursor, is a candidate: the next line often calls it again; so is a method
    the class inherits and calls elsewhere (``this.emit``)."""
    files = {
        "src/errors.ts": "export function die(code: number): never {\n  throw code;\n}\n",
        "src/events.ts": "export class Emitter {\n  emit(name: string): void {}\n}\n",
        "src/editor.ts": "import { die } from './errors';\nimport { Emitter } from './events';\n\n"
        "export class Editor extends Emitter {\n  a(): void {\n    die(1);\n"
        "    this.emit('a');\n  }\n  b(): void {\n    die(2);\n  }\n"
        + "".join(f"  m{i}(): number {{\n    return {i};\n  }}\n" for i in range(30))
        + "  c(): void {\n",
    }
    index = _index(tmp_path, files)
    hits = {
        (h.card.path, h.card.name): h.how
        for h in find_definitions(index, "src/editor.ts", files["src/editor.ts"])
    }
    assert hits[("src/errors.ts", "die")] == "called in this file (2 calls)"
    assert hits[("src/events.ts", "Emitter.emit")] == "called in this file (1 call)"


def test_type_parameters_and_type_aliases_type_receivers_by_what_they_name(
    tmp_path: Path,
) -> None:
    """``s: T`` with ``<T extends AnyStore>`` has ``AnyStore``'s members, and ``AnyStore``,
    an alias of ``Store<any>``, ``Store``'s: ``s.dispatch`` is ``Store.dispatch``, at the
    cursor and in the index's calls."""
    files = {
        "src/store.ts": "export interface Store<S> {\n  dispatch(action: S): void;\n}\n"
        "export type AnyStore = Store<any>;\n",
        "src/use.ts": "import type { AnyStore } from './store';\n\n"
        "export function run<\n  TStore extends AnyStore,\n  TName extends string,\n"
        ">(s: TStore, name: TName): void {\n  s.dispatch(name);\n",
        "src/alias.ts": "import type { AnyStore } from './store';\n\n"
        "export function go(s: AnyStore): void {\n  s.dispatch(1);\n}\n",
    }
    index = _index(tmp_path, files)
    assert ("src/store.ts", "Store.dispatch") in _cards(index, "src/use.ts", files["src/use.ts"])
    assert _edges(index, "src/alias.ts") == {("s.dispatch(1);", "src/store.ts:Store.dispatch")}
    assert ("s.dispatch(name);", "src/store.ts:Store.dispatch") in _edges(index, "src/use.ts")


def test_awaited_promises_and_returned_instances_type_results(tmp_path: Path) -> None:
    """``await load()`` with ``load(): Promise<Store>`` is a Store; so is the result of a
    function declaring no type that ends in ``return new Store()``."""
    files = {
        "src/store.ts": "export class Store {\n  dispatch(): void {}\n}\n"
        "export async function load(): Promise<Store> {\n  return new Store();\n}\n"
        "export function make() {\n  // one store each\n  return new Store();\n}\n",
        "src/use.ts": "import { load, make } from './store';\n\n"
        "export async function run(): Promise<void> {\n  const a = await load();\n"
        "  const b = make();\n  a.dispatch();\n  b.dispatch();\n",
    }
    index = _index(tmp_path, files)
    assert _edges(index, "src/use.ts") >= {
        ("a.dispatch();", "src/store.ts:Store.dispatch"),
        ("b.dispatch();", "src/store.ts:Store.dispatch"),
    }
    assert ("src/store.ts", "Store.dispatch") in _cards(index, "src/use.ts", files["src/use.ts"])


INFERRED_FILES = {
    "src/kind.ts": "export class Kind {\n  check(): void {}\n}\n"
    "export class Other {\n  check(): void {}\n}\n",
    "src/pos.ts": "export class Pos {\n  depth(): number {\n    return 1;\n  }\n"
    "  sharedDepth(n: number): number {\n    return n;\n  }\n"
    "  static resolve(n: number): Pos {\n    return new Pos();\n  }\n}\n",
    "src/node.ts": "import { Pos } from './pos';\nimport { Kind } from './kind';\n\n"
    "export class Node {\n  constructor(readonly kind: Kind) {}\n"
    "  resolve(n: number) {\n    return Pos.resolve(n);\n  }\n"
    "  get parent() {\n    return this.resolve(0);\n  }\n}\n",
    "src/use.ts": "import { Node } from './node';\n\n"
    "export function run(doc: Node, opts: Readonly<Node>): void {\n"
    "  opts.kind.check();\n  let node = doc\n  let p = node.parent\n"
    "  const r = doc.resolve(1);\n",
}


def test_members_typed_by_parameter_properties_returns_and_reads(tmp_path: Path) -> None:
    """A constructor's ``readonly kind: Kind`` types ``node.kind``; a method declaring no
    return type returns what its final ``return`` calls (``Pos.resolve(n)``, ``this.resolve``);
    ``let node = doc`` and ``let p = node.parent`` are typed as ``doc`` and ``node.parent``
    are; ``Readonly<Node>`` has ``Node``'s members."""
    index = _index(tmp_path, INFERRED_FILES)
    assert ("opts.kind.check();", "src/kind.ts:Kind.check") in _edges(index, "src/use.ts")
    names = ["node.kind.check", "p.sharedDepth", "r.depth", "opts.kind.check"]
    got = resolve_names(index, "src/use.ts", INFERRED_FILES["src/use.ts"], names)
    assert [g[:2] if g else None for g in got] == [
        ("src/kind.ts", "Kind.check"),
        ("src/pos.ts", "Pos.sharedDepth"),
        ("src/pos.ts", "Pos.depth"),
        ("src/kind.ts", "Kind.check"),
    ]


def test_a_parameter_property_type_change_equals_a_rebuild(tmp_path: Path) -> None:
    text = INFERRED_FILES["src/node.ts"].replace("{ Kind }", "{ Other }")
    text = text.replace("kind: Kind", "kind: Other")
    index, rebuilt = _updated(tmp_path, INFERRED_FILES, "src/node.ts", text)
    assert ("opts.kind.check();", "src/kind.ts:Other.check") in _edges(index, "src/use.ts")
    assert_same(index, rebuilt, ["opts.kind.check()"])


def test_a_returned_parameter_or_local_is_not_the_file_name_so_spelled(tmp_path: Path) -> None:
    """``return store.state()`` with a parameter (or a local) ``store`` says nothing of the
    imported ``store``: the function's result stays untyped."""
    files = {
        "src/store.ts": "export class Box {\n  open(): void {}\n}\n"
        "export class Store {\n  state(): Box {\n    return new Box();\n  }\n}\n"
        "export const store = new Store();\n",
        "src/use.ts": "import { store } from './store';\n\n"
        "function peek(store: any) {\n  return store.state();\n}\n"
        "function keep(x: any) {\n  const { store } = x;\n  return store.state();\n}\n"
        "function mine() {\n  return store.state();\n}\n\n"
        "export function run(): void {\n  const a = peek(1);\n  const b = keep(2);\n"
        "  const c = mine();\n",
    }
    index = _index(tmp_path, files)
    got = resolve_names(index, "src/use.ts", files["src/use.ts"], ["a.open", "b.open", "c.open"])
    assert [g[:2] if g else None for g in got] == [None, None, ("src/store.ts", "Box.open")]


def test_a_returned_local_types_the_function_s_result(tmp_path: Path) -> None:
    """A function declaring no return type that ends in ``return x`` returns what its body's
    ``const x = …`` (or ``let x: Foo``) holds: ``new Box()``, a call's result, the declared
    type; not where a later assignment may have changed it, nor a block's local."""
    files = {
        "src/store.ts": "export class Box {\n  open(): void {}\n}\n"
        "export function makeBox(): Box {\n  return new Box();\n}\n",
        "src/use.ts": "import { Box, makeBox } from './store';\n\n"
        "function built() {\n  const box = new Box();\n  box.open();\n  return box;\n}\n"
        "function called() {\n  const b = makeBox();\n  return b;\n}\n"
        "function typed(x: any) {\n  let b: Box = x;\n  return b;\n}\n"
        "function changed(x: any) {\n  let b = makeBox();\n  b = x;\n  return b;\n}\n"
        "function nested(x: any) {\n  if (x) {\n    const b = makeBox();\n  }\n"
        "  return b;\n}\n\n"
        "export function run(): void {\n  const a = built();\n  const c = called();\n"
        "  const t = typed(1);\n  const d = changed(2);\n  const n = nested(3);\n",
    }
    index = _index(tmp_path, files)
    names = ["a.open", "c.open", "t.open", "d.open", "n.open"]
    got = resolve_names(index, "src/use.ts", files["src/use.ts"], names)
    box = ("src/store.ts", "Box.open")
    assert [g[:2] if g else None for g in got] == [box, box, box, None, None]
    assert ("a.open();", "src/store.ts:Box.open") not in _edges(index, "src/use.ts")
    # the code graph's calls go through it too
    text = files["src/use.ts"] + "  a.open();\n}\n"
    index = _index(tmp_path / "calls", {**files, "src/use.ts": text})
    assert ("a.open();", "src/store.ts:Box.open") in _edges(index, "src/use.ts")


def test_a_returned_local_s_edit_equals_a_rebuild(tmp_path: Path) -> None:
    """The local a function returns changes type in its own file: its callers' calls in
    another file follow, as a rebuild resolves them."""
    files = {
        "src/box.ts": "export class Box {\n  open(): void {}\n}\n"
        "export class Jar {\n  open(): void {}\n}\n"
        "export function make() {\n  const made = new Box();\n  return made;\n}\n",
        "src/use.ts": "import { make } from './box';\n\n"
        "export function run(): void {\n  const a = make();\n  a.open();\n}\n",
    }
    text = files["src/box.ts"].replace("new Box()", "new Jar()")
    index, rebuilt = _updated(tmp_path, files, "src/box.ts", text)
    assert ("a.open();", "src/box.ts:Jar.open") in _edges(index, "src/use.ts")
    assert_same(index, rebuilt, ["a.open()"])


def test_an_object_declared_with_a_type_lists_the_type_s_members(tmp_path: Path) -> None:
    """``export const timeoutProvider: TimeoutProvider = {`` (an object of functions, whose
    card is that line) lists on its card the members its type declares, which the next line
    calls on it; an object declared without a type, or a function, lists none."""
    files = {
        "src/provider.ts": "interface TimeoutProvider {\n  setTimeout(f: () => void): number;\n"
        "  clearTimeout(h: number): void;\n}\n"
        "export const timeoutProvider: TimeoutProvider = {\n"
        "  setTimeout(f) {\n    return 1;\n  },\n  clearTimeout(h) {},\n};\n"
        "export const plain = {\n  run() {},\n};\n",
        "src/use.ts": "import { timeoutProvider, plain } from './provider';\n\n"
        "export function report(err: any): void {\n  const p = plain;\n",
    }
    index = _index(tmp_path, files)
    hits = {h.card.name: h.card for h in find_definitions(index, "src/use.ts", files["src/use.ts"])}
    card = hits["timeoutProvider"]
    assert "// its type's members: setTimeout, clearTimeout" in card.text
    assert ("src/provider.ts", 1) in card.listed and ("src/provider.ts", 2) in card.listed
    assert "members" not in hits["plain"].text and not hits["plain"].listed


def test_a_singleton_lists_its_class_s_and_its_bases_members(tmp_path: Path) -> None:
    """``export const focusManager = new FocusManager()`` (a module's instance, imported
    through a barrel) lists on its card what its class declares, then its bases' members
    (``subscribe``), not the constructor nor a ``#private`` one: what the next line calls on
    it; a declared type before the ``new`` is read the same."""
    files = {
        "src/subscribable.ts": "export class Subscribable {\n  subscribe(): void {}\n}\n",
        "src/focus.ts": "import { Subscribable } from './subscribable';\n"
        "class FocusManager extends Subscribable {\n  #focused = false;\n"
        "  constructor() {\n    super();\n  }\n  #setup(): void {}\n"
        "  isFocused(): boolean {\n    return true;\n  }\n}\n"
        "export const focusManager = new FocusManager();\n"
        "export const typed: FocusManager = new FocusManager();\n",
        "src/index.ts": "export * from './focus';\n",
        "src/use.ts": "import { focusManager, typed } from './index';\n\n"
        "export function run(): void {\n  const x = 1;\n",
    }
    index = _index(tmp_path, files)
    hits = {h.card.name: h.card for h in find_definitions(index, "src/use.ts", files["src/use.ts"])}
    for name in ("focusManager", "typed"):
        card = hits[name]
        assert card.text.endswith("// its type's members: isFocused, subscribe")
        # the rows of ``isFocused()`` and ``subscribe()``
        assert card.listed == (("src/focus.ts", 7), ("src/subscribable.ts", 1))


WRAPPED_FILES = {
    "src/utils.ts": "export type RequiredKeys<T, K extends keyof T> = Omit<T, K> &\n"
    "  Required<Pick<T, K>>\n",
    "src/options.ts": "export interface FacetOptions {\n"
    "  getFacets?: (table: Table) => () => number\n}\n"
    "export interface SortOptions {\n  getSorted?: (table: Table) => () => number\n}\n"
    "export interface Options extends FacetOptions {\n  debug?: boolean\n}\n",
    "src/state.ts": "export interface ObjectState {\n  revoke_(): void\n  type_: number\n}\n"
    "export interface MapState {\n  finalize_(): void\n  type_: number\n}\n"
    "export type State =\n  | ObjectState\n  | MapState\n"
    "export interface Extra {\n  extra_(): void\n}\nexport type Full = ObjectState & Extra\n",
    "src/table.ts": "import { RequiredKeys } from './utils';\n"
    "import { Options } from './options';\n\n"
    "export interface Table {\n  options: RequiredKeys<Options, 'debug'>\n}\n",
    "src/use.ts": "import { Table } from './table';\n"
    "import { Full, State } from './state';\n\n"
    "export function run(table: Table, state: State, full: Full): void {\n"
    "  table.options.getFacets(table);\n  table.options.getSorted(table);\n"
    "  state.finalize_();\n  full.extra_();\n",
}


def test_a_project_generic_and_a_union_alias_have_their_parts_members(tmp_path: Path) -> None:
    """A member a project's generic does not declare is its first type argument's
    (``RequiredKeys<Options, 'debug'>``, an alias of ``Omit<T, K> & ...``: ``Options``'s
    ``getFacets``); a union or intersection alias has each part's members
    (``state.finalize_`` is ``MapState``'s, ``full.extra_`` ``Extra``'s), in the index's
    calls and at the cursor."""
    index = _index(tmp_path, WRAPPED_FILES)
    assert _edges(index, "src/use.ts") >= {
        ("table.options.getFacets(table);", "src/options.ts:FacetOptions.getFacets"),
        ("state.finalize_();", "src/state.ts:MapState.finalize_"),
        ("full.extra_();", "src/state.ts:Extra.extra_"),
    }
    names = ["table.options.getFacets", "state.revoke_", "state.type_"]
    got = resolve_names(index, "src/use.ts", WRAPPED_FILES["src/use.ts"], names)
    assert [g[:2] if g else None for g in got] == [
        ("src/options.ts", "FacetOptions.getFacets"),
        ("src/state.ts", "ObjectState.revoke_"),
        ("src/state.ts", "ObjectState.type_"),
    ]


def test_a_generic_s_argument_change_equals_a_rebuild(tmp_path: Path) -> None:
    text = WRAPPED_FILES["src/options.ts"].replace("extends FacetOptions", "extends SortOptions")
    index, rebuilt = _updated(tmp_path, WRAPPED_FILES, "src/options.ts", text)
    edges = {target for _, target in _edges(index, "src/use.ts")}
    assert "src/options.ts:SortOptions.getSorted" in edges
    assert "src/options.ts:FacetOptions.getFacets" not in edges
    assert_same(index, rebuilt, ["getFacets"])


def test_a_local_bound_to_what_a_method_returns_through_another_brings_its_class(
    tmp_path: Path,
) -> None:
    """``let $p = doc.resolve(1)`` just above the cursor, ``resolve`` declaring no type and
    returning ``Pos.at(pos)``, which returns a Pos: the Pos class's card is a candidate."""
    files = {
        "src/pos.ts": "export class Pos {\n  depth(): number {\n    return 1;\n  }\n"
        "  static at(n: number): Pos {\n    return new Pos();\n  }\n}\n",
        "src/doc.ts": "import { Pos } from './pos';\n\nexport class Doc {\n"
        "  resolve(n: number) {\n    return Pos.at(n);\n  }\n}\n",
        "src/use.ts": "import { Doc } from './doc';\n\nexport function run(doc: Doc): void {\n"
        "  let $p = doc.resolve(1)\n",
    }
    index = _index(tmp_path, files)
    hits = find_definitions(index, "src/use.ts", files["src/use.ts"])
    assert ("src/pos.ts", "Pos", "in scope") in {(h.card.path, h.card.name, h.how) for h in hits}


def test_a_union_s_alternatives_change_equals_a_rebuild_and_bring_no_card(
    tmp_path: Path,
) -> None:
    """A union's alternative is none of its type: a ``State`` bound just above the cursor
    brings no ``ObjectState`` card; an edit of the alternatives re-resolves the calls."""
    root = write_files(tmp_path / "proj", WRAPPED_FILES)
    config = IndexConfig(index_dir=str(tmp_path / "idx"))
    index, _ = RepoIndex.build(root, config, save=False)
    left = WRAPPED_FILES["src/use.ts"] + "  let other: State = state\n"
    assert not [h for h in find_definitions(index, "src/use.ts", left) if h.how == "in scope"]
    before = {target for _, target in _edges(index, "src/use.ts")}
    assert "src/state.ts:MapState.finalize_" in before
    text = WRAPPED_FILES["src/state.ts"].replace("  | MapState\n", "  | Extra\n")
    apply_on_disk(root, {"src/state.ts": text})
    index.update_file("src/state.ts", text)
    edges = {target for _, target in _edges(index, "src/use.ts")}
    assert "src/state.ts:MapState.finalize_" not in edges
    assert_same(index, RepoIndex.build(root, config, save=False)[0], ["finalize_"])


def test_a_jsdoc_param_type_types_a_javascript_receiver(tmp_path: Path) -> None:
    """Plain JavaScript writes its types in doc comments: ``@param {Option} option`` types
    ``option`` (``{(Option | null)}`` too), where ``Option`` is bound (required); a
    TypeScript file's types are its annotations only."""
    files = {
        "lib/option.js": "class Option {\n  attributeName() {\n    return 'a';\n  }\n}\n\n"
        "exports.Option = Option;\n",
        "lib/use.js": "const { Option } = require('./option.js');\n\n"
        "/**\n * Shows it.\n * @param {Option} option\n * @param {(Option | null)} [other]\n */\n"
        "function show(option, other) {\n  const key = option.attributeName();\n",
        "lib/typed.ts": "import { Option } from './option.js';\n\n"
        "/**\n * @param {Option} option\n */\n"
        "export function show(option) {\n  const key = option.attributeName();\n",
    }
    index = _index(tmp_path, files)
    names = ["option.attributeName", "other.attributeName"]
    got = resolve_names(index, "lib/use.js", files["lib/use.js"], names)
    assert [g[:2] if g else None for g in got] == [("lib/option.js", "Option.attributeName")] * 2
    assert resolve_names(index, "lib/typed.ts", files["lib/typed.ts"], names[:1]) == [None]


def test_a_bare_promise_in_a_union_is_no_type(tmp_path: Path) -> None:
    """``Promise | undefined`` (no type argument) types nothing, and neither the build nor a
    query fails on it."""
    files = {
        "src/a.ts": "export class Box {\n  open(): void {}\n}\n"
        "export function get(): Promise | undefined {\n  return undefined\n}\n",
        "src/b.ts": "import { Box } from './a';\n\n"
        "export function run(p: Promise | undefined, b: Box) {\n  b.open()\n",
    }
    index = _index(tmp_path, files)
    got = resolve_names(index, "src/b.ts", files["src/b.ts"], ["p.then", "b.open"])
    assert [g[:2] if g else None for g in got] == [None, ("src/a.ts", "Box.open")]


def test_a_jsdoc_typedef_import_binds_a_type_name(tmp_path: Path) -> None:
    """``@typedef {import("./command.js").Command} Command`` binds ``Command`` as ``import
    type`` does: ``@param {Command} cmd`` types ``cmd``; only comments name it, so it is no
    candidate of its own, nor the class of a ``cmd`` bound just above the cursor (the code
    never names the class)."""
    files = {
        "lib/command.js": "class Command {\n  name() {\n    return 'c';\n  }\n}\n\n"
        "exports.Command = Command;\n",
        "lib/help.js": '/**\n * @typedef { import("./command.js").Command } Command\n */\n\n'
        "class Help {\n  /**\n   * @param {Command} cmd\n   */\n  title(cmd) {\n"
        "    return cmd.name();\n",
    }
    index = _index(tmp_path, files)
    got = resolve_names(index, "lib/help.js", files["lib/help.js"], ["cmd.name"])
    assert [g[:2] if g else None for g in got] == [("lib/command.js", "Command.name")]
    assert ("lib/command.js", "Command") not in _cards(index, "lib/help.js", files["lib/help.js"])
    fresh = files["lib/help.js"].split("    return")[0]
    assert ("lib/command.js", "Command") not in _cards(index, "lib/help.js", fresh)


RECEIVER_FILES = {
    "src/core.ts": "export interface Core {\n  getState(): number;\n"
    "  getCoreRows(): number[];\n}\n",
    "src/sorting.ts": "export interface Sorting {\n  getSortedRows(): number[];\n}\n",
    "src/table.ts": "import { Core } from './core';\nimport { Sorting } from './sorting';\n\n"
    "export interface Table extends Core, Sorting {\n  getRows(): number[];\n}\n",
    "src/use.ts": "import { Table } from './table';\n\nexport function run(table: Table): void {\n"
    "  const s = table.getState();\n",
}


def _receiver_card(index: RepoIndex, path: str, left: str) -> str:
    hits = find_definitions(index, path, left)
    return next(h.card.text for h in hits if h.card.name == "Table")


def test_a_receiver_s_type_lists_the_members_its_bases_declare(tmp_path: Path) -> None:
    """``table: Table`` named just above the cursor: the next line may call a member of the
    interfaces ``Table`` extends, which no line names (``table.getCoreRows()``); its card
    names them after its own (``getState``, which the lines above name, last)."""
    index = _index(tmp_path, RECEIVER_FILES)
    hits = find_definitions(index, "src/use.ts", RECEIVER_FILES["src/use.ts"])
    card = next(h.card for h in hits if h.card.name == "Table")
    assert card.text.split("\n")[-2:] == [
        "}",
        "// its bases' members: getCoreRows, getSortedRows, getState",
    ]
    assert card.listed == (("src/core.ts", 2), ("src/sorting.ts", 1), ("src/core.ts", 1))


def test_a_receiver_s_base_member_added_equals_a_rebuild(tmp_path: Path) -> None:
    text = RECEIVER_FILES["src/sorting.ts"].replace("}\n", "  getSortedFirst(): number;\n}\n")
    index, rebuilt = _updated(tmp_path, RECEIVER_FILES, "src/sorting.ts", text)
    left = RECEIVER_FILES["src/use.ts"]
    assert "getSortedFirst" in _receiver_card(index, "src/use.ts", left)
    assert _receiver_card(index, "src/use.ts", left) == _receiver_card(rebuilt, "src/use.ts", left)
    assert_same(index, rebuilt, ["getSortedFirst"])


ARRAY_FILES = {
    "src/mark.ts": "export class Mark {\n  addToSet(set: readonly Mark[]): Mark[] { return [] }\n"
    "  eq(other: Mark): boolean { return true }\n}\n",
    "src/context.ts": 'import { Mark } from "./mark"\n'
    "export class NodeContext {\n  marks: Mark[] = []\n}\n"
    "export class ParseContext {\n  nodes: NodeContext[] = []\n"
    "  get top() {\n    return this.nodes[this.nodes.length - 1]\n  }\n}\n",
    "src/use.ts": 'import { Mark } from "./mark"\n'
    'import { ParseContext } from "./context"\n'
    "export function apply(ctx: ParseContext, marks: readonly Mark[], all: Array<Mark>) {\n"
    "  let top = ctx.top\n"
    "  let first = top.marks[0]\n"
    "  for (const each of all) each.eq(first)\n"
    "  top.marks.forEach((m) => m.eq(first))\n"
    "  return marks.filter((m) => m.addToSet(marks))\n"
    "}\n"
    "export function same(a: Mark[], b: Mark) {\n  return a[0].eq(b)\n}\n",
}


def test_array_elements_are_typed_by_the_array_s_element_type(tmp_path: Path) -> None:
    """An array's element has its element type's members: an index (``top.marks[0]``), a
    loop's variable (``for (const each of all)``), an element callback's parameter
    (``marks.filter((m) =>``), a getter returning an element (``return this.nodes[i]``),
    a call on an indexed parameter (``a[0].eq(b)``); the array itself has none of them
    (``marks.eq``)."""
    index = _index(tmp_path, ARRAY_FILES)
    names = ["first.eq", "each.eq", "m.addToSet", "top.marks", "marks.eq"]
    got = resolve_names(index, "src/use.ts", ARRAY_FILES["src/use.ts"], names)
    assert [g[:2] if g else None for g in got] == [
        ("src/mark.ts", "Mark.eq"),
        ("src/mark.ts", "Mark.eq"),
        ("src/mark.ts", "Mark.addToSet"),
        ("src/context.ts", "NodeContext.marks"),
        None,
    ]
    assert ("return a[0].eq(b)", "src/mark.ts:Mark.eq") in _edges(index, "src/use.ts")


def test_an_array_field_s_element_type_change_equals_a_rebuild(tmp_path: Path) -> None:
    """An array field's element type changing re-resolves what reads its elements."""
    text = ARRAY_FILES["src/context.ts"].replace("nodes: NodeContext[]", "nodes: Other[]")
    other = "class Other {\n  marks: Mark[] = []\n}\nexport class ParseContext"
    text = text.replace("export class ParseContext", other)
    index, rebuilt = _updated(tmp_path, ARRAY_FILES, "src/context.ts", text)
    got = resolve_names(index, "src/use.ts", ARRAY_FILES["src/use.ts"], ["top.marks"])
    assert got[0][:2] == ("src/context.ts", "Other.marks")
    assert_same(index, rebuilt, ["top.marks"])


OWN_TYPE_FILES = {
    "src/match.ts": "/** A state of a content expression. */\nexport class ContentMatch {\n"
    + "".join(f"  step{i}(n: number): ContentMatch {{ return this }}\n" for i in range(14))
    + "  edge(n: number): ContentMatch { return this }\n}\n",
    "src/other.ts": "export function helper(a: number): number { return a }\n",
    "src/use.ts": "import { ContentMatch } from './match';\nimport { helper } from './other';\n\n"
    "export function scan(match: ContentMatch): number {\n"
    "  let n = helper(match.step0(1).step1(2) ? 1 : 0)\n",
}


def test_a_receiver_s_own_type_comes_first_in_its_brief_form(tmp_path: Path) -> None:
    """``match: ContentMatch`` named just above the cursor, a type with no bases: its card
    comes first, in its brief form (the members it names: ``edge``, which no line names
    yet), not whole, which would take the room of the cards after it; a type only a doc
    comment above the window names is not carded so (the code does not name it)."""
    index = _index(tmp_path, OWN_TYPE_FILES)
    left = OWN_TYPE_FILES["src/use.ts"]
    first = find_definitions(index, "src/use.ts", left)[0]
    assert first.card.name == "ContentMatch"
    assert "edge" in first.card.text and "step9(n: number)" not in first.card.text
    assert ("src/match.ts", 16) in {(first.card.path, line) for line in first.card.methods}
    commented = left.replace(
        "export function scan(match: ContentMatch)",
        "/**\n" + " * Scan a ContentMatch.\n" * 12 + " */\nexport function scan(match: M)",
    ).replace(
        "import { ContentMatch } from './match';", "import { ContentMatch as M } from './match';"
    )
    index.update_file("src/use.ts", commented)
    hits = find_definitions(index, "src/use.ts", commented)
    assert hits[0].card.name != "ContentMatch"


COLLECTION_FILES = {
    "src/store.ts": "export class Store {\n  dispatch(a: number): void {}\n}\n",
    "src/use.ts": "import { Store } from './store';\n"
    "export class Hub {\n"
    "  private stores = new Map<string, Store>();\n"
    "  private byId: ReadonlyMap<string, Store> = new Map();\n"
    "  private all: Set<Store> = new Set();\n"
    "  constructor(store: Store) {\n    this.main = store;\n  }\n"
    "  run(key: string) {\n"
    "    this.stores.get(key)!.dispatch(1);\n"
    "    const local = new Map<string, Store>();\n"
    "    const got = local.get(key);\n"
    "    for (const each of this.all) each.dispatch(2);\n"
    "    return this.byId.get(key)?.dispatch(3);\n"
    "  }\n"
    "}\n",
}


def test_maps_and_sets_are_typed_by_their_values(tmp_path: Path) -> None:
    """A map's ``get`` and a set's loop give a value of the collection's value type
    (``Map<string, Store>``, ``new Map<string, Store>()``, ``Set<Store>``), a field assigned a
    typed parameter in the constructor has its type; ``m.get`` itself is the map's own
    method (no card of the value type for it)."""
    index = _index(tmp_path, COLLECTION_FILES)
    left = COLLECTION_FILES["src/use.ts"].split("  }\n}\n")[0]
    names = [
        "this.stores.get.dispatch",
        "this.byId.get.dispatch",
        "got.dispatch",
        "each.dispatch",
        "this.main.dispatch",
        "this.stores.get",
        "local.get",
    ]
    got = resolve_names(index, "src/use.ts", left, names)
    dispatch = ("src/store.ts", "Store.dispatch")
    assert [g[:2] if g else None for g in got] == [dispatch] * 5 + [None, None]
    edges = _edges(index, "src/use.ts")
    assert ("this.stores.get(key)!.dispatch(1);", "src/store.ts:Store.dispatch") in edges


def test_a_map_field_s_value_type_change_equals_a_rebuild(tmp_path: Path) -> None:
    files = {**COLLECTION_FILES, "src/other.ts": "export class Other {\n  dispatch(): void {}\n}\n"}
    text = files["src/use.ts"].replace(
        "new Map<string, Store>();\n    const", "new Map<string, Other>();\n    const"
    )
    text = text.replace("new Map<string, Store>()", "new Map<string, Other>()")
    text = "import { Other } from './other';\n" + text
    index, rebuilt = _updated(tmp_path, files, "src/use.ts", text)
    assert ("this.stores.get(key)!.dispatch(1);", "src/other.ts:Other.dispatch") in _edges(
        index, "src/use.ts"
    )
    assert _edges(index, "src/use.ts") == _edges(rebuilt, "src/use.ts")
    assert_same(index, rebuilt, ["dispatch"])


RECEIVERS_FILES = {
    "src/match.ts": "export class ContentMatch {\n"
    + "".join(f"  step{i}(n: number): ContentMatch {{ return this }}\n" for i in range(3))
    + "}\n",
    "src/fragment.ts": "export class Fragment {\n  append(f: Fragment): Fragment { return this }\n"
    "  get size(): number { return 0 }\n}\n",
    "src/type.ts": "import { ContentMatch } from './match';\nexport class NodeType {\n"
    "  declare contentMatch: ContentMatch\n}\n",
    "src/use.ts": "import { ContentMatch } from './match';\n"
    "import { Fragment } from './fragment';\n"
    "import { NodeType } from './type';\n\n"
    + "\n".join(f"export function pad{i}(): number {{ return {i} }}" for i in range(30))
    + "\n\nexport function fill(type: NodeType, content: Fragment, other: Fragment) {\n"
    "  if (type.contentMatch.step0(content.size)) return\n"
    "  content = other.append(content)\n",
}


def test_the_types_of_two_receivers_and_of_a_chain_of_fields_are_carded(
    tmp_path: Path,
) -> None:
    """The two nearest receivers' types, one card a type (``content`` and ``other`` are both
    Fragments): ``Fragment``, which the window names, and ``ContentMatch``, the type of the
    chain of fields ``type.contentMatch``, which only the file's imports name."""
    index = _index(tmp_path, RECEIVERS_FILES)
    hits = find_definitions(index, "src/use.ts", RECEIVERS_FILES["src/use.ts"])
    assert {h.card.name for h in hits[:2]} == {"Fragment", "ContentMatch"}
    unnamed = RECEIVERS_FILES["src/use.ts"].replace("import { ContentMatch } from './match';\n", "")
    index.update_file("src/use.ts", unnamed)
    hits = find_definitions(index, "src/use.ts", unnamed)
    assert "ContentMatch" not in [h.card.name for h in hits[:2]]


def test_a_variable_bound_just_above_lists_its_type_s_bases_members(tmp_path: Path) -> None:
    """``const s = new Safe({`` bound a line above and not used yet: the next line may call a
    member ``Safe``'s bases declare (``s.unsubscribe()``), which its own card does not show."""
    files = {
        "src/sub.ts": "export class Subscription {\n  unsubscribe(): void {}\n}\n"
        "export class Safe extends Subscription {\n  next(v: number): void {}\n}\n",
        "src/use.ts": "import { Safe } from './sub';\n\nexport function first(): void {\n"
        "  const s = new Safe({\n    next: (value: number) => {\n",
    }
    index = _index(tmp_path, files)
    hits = find_definitions(index, "src/use.ts", files["src/use.ts"])
    card = next(h.card for h in hits if h.card.name == "Safe")
    assert ("src/sub.ts", 1) in card.listed
    assert card.text.endswith("// its bases' members: unsubscribe")


MIXIN_FILES: dict[str, str] = {
    "src/lexer.ts": "import type { Mixed } from './mixed';\n\nexport class Lexer {\n"
    "  LA(this: Mixed, n: number): number {\n    return n;\n  }\n}\n",
    "src/tracer.ts": "export class Tracer {\n  trace(name: string): void {}\n}\n",
    "src/engine.ts": "import type { Mixed } from './mixed';\n\nexport class Engine {\n"
    "  run(this: Mixed): number {\n    this.trace('run');\n    return this.LA(1);\n  }\n"
    "  plain(): void {\n    this.run();\n  }\n}\n",
    "src/mixed.ts": "import { Lexer } from './lexer';\nimport { Tracer } from './tracer';\n"
    "import { Engine } from './engine';\n\nexport type Mixed = Lexer & Tracer & Engine;\n",
}


def test_a_declared_this_types_the_calls_on_this(tmp_path: Path) -> None:
    """A mixin's method declares ``this: Mixed`` (the intersection of the classes mixed
    into one): ``this.LA()`` is a member of any of them, not only of the class around it; a
    method that declares none keeps its class's ``this``. An edit of the intersection
    re-resolves the calls as a rebuild does."""
    index = _index(tmp_path, MIXIN_FILES)
    assert _edges(index, "src/engine.ts") == {
        ("this.trace('run');", "src/tracer.ts:Tracer.trace"),
        ("return this.LA(1);", "src/lexer.ts:Lexer.LA"),
        ("this.run();", "src/engine.ts:Engine.run"),
    }
    text = MIXIN_FILES["src/mixed.ts"].replace("Lexer & Tracer", "Lexer")
    index, rebuilt = _updated(tmp_path / "edit", MIXIN_FILES, "src/mixed.ts", text)
    edges = _edges(index, "src/engine.ts")
    assert ("this.trace('run');", "src/tracer.ts:Tracer.trace") not in edges
    assert_same(index, rebuilt, ["trace", "LA"])

"""Rust: names resolved through the module tree, ``use`` declarations and ``impl`` blocks.

What a file holds (``extract``):

* definitions qualified within the file: ``f``, ``Foo``, a method of an ``impl``/``trait``
  block ``Foo.new``, an item of an inline ``mod a { }`` ``a.f``, a ``macro_rules!`` macro
  ``m!``; types (struct, enum, union, trait, type alias) are classes;
* imports: every name a ``use`` binds (``use a::{b, c::D as E}``, globs ``use a::*``) as an
  ``ImportBinding(name, path, symbol, USE)`` whose ``module`` is the path as written
  (``crate::a::b``); ``*`` globs are numbered per module (``*0``, ``*1``); an inline module is
  a binding of level ``INLINE_MOD`` (``TEST_MOD`` for ``#[cfg(test)]``/``mod tests``). A
  binding made inside an inline module is named ``a.b::name`` (its module, then the name);
* bases: a struct's fields (``(".field", *type path)``) and a type alias's target
  (``("=", *path)``), which typed receivers follow;
* calls: a path as its segments (``("Foo", "new")``, ``("crate", "a", "f")``), a macro with
  a ``!`` on its last segment, a method call on ``self`` as ``("self", ..., "m")``, on a
  binding the function's code types before the call (``x: &Foo``, ``let x = Foo::new()``) as
  ``("Foo", "m")``, on any other receiver as ``("?", "m")``; the call's ``scope`` is its
  inline module and, inside an ``impl``/``trait`` block, ``#`` and the block's type
  (``tests#Foo``).

Modules are files as Cargo lays them out: a crate root is ``lib.rs``/``main.rs`` (nearest
above the file) or a file directly in ``tests/``, ``examples/``, ``benches/``, ``src/bin/``;
``mod x;`` in ``a.rs`` is ``a/x.rs`` or ``a/x/mod.rs`` (never a crate root: ``tests/x.rs`` is
no module of ``tests/y.rs``). A module file under ``tests/``, ``examples/``, ``benches/`` with
no crate root above it (``tests/common/mod.rs``) belongs, for its macros, to each crate root
beside it there. A crate is known to the others by its directory's name
(``regex-syntax-0.6.27/src/lib.rs`` is ``regex_syntax``). ``#[path]`` attributes and
``Cargo.toml`` renames are not read.

A method on a type is found in the type's file or in any ``impl`` block of the repository
whose type resolves, in that block's file, to the same definition. Names of the standard
library and of crates outside the repository never resolve. A method call on a receiver
whose type the code does not show is the one guess left: the repository's only method so
named, never in test code for a caller outside it, and not a name the standard library's
types have.
"""

from __future__ import annotations

import bisect
import posixpath
import re
import weakref
from collections.abc import Callable, Iterable, Iterator
from functools import cache, cached_property
from typing import TYPE_CHECKING

from repomem.index.langs import MAX_SIBLINGS, SIBLING_LINES, Language, shared_dirs
from repomem.index.langs import is_test as _is_test
from repomem.index.languages import parser
from repomem.index.parsing import CallSite, Definition, ImportBinding

if TYPE_CHECKING:
    from tree_sitter import Node

    from repomem.index.parsing import ParsedFile
    from repomem.index.resolver_types import ResolverTables as Resolver
    from repomem.index.resolver_types import Target

NS = "rust"
is_test = cache(_is_test)
#: ``bases`` key of a file's ``impl Trait for Type`` blocks: (statement node, trait, type)
BLOCKS = "#blocks"
#: ``ImportBinding.level`` of a ``use`` binding, an inline module, an inline test module, a
#: file module a ``#[path = ".."]`` attribute names (its ``module``: the file's path), a
#: ``use`` inside a function (``_Items._local_uses``)
USE, INLINE_MOD, TEST_MOD, PATH_MOD, FN_USE = 0, 1, 2, 3, 4
_INLINE = (INLINE_MOD, TEST_MOD)
_USES = (USE, FN_USE)
_MAX_DEPTH = 8
#: how many methods of the traits a type implements its card names
TRAIT_METHODS = 16
_CRATE_DIRS = frozenset({"tests", "examples", "benches"})
_ROOT_FILES = ("lib.rs", "main.rs")
_TYPES = frozenset({"struct_item", "enum_item", "union_item", "trait_item", "type_item"})
_FUNCTIONS = frozenset({"function_item", "function_signature_item"})
_PATH_NODES = frozenset({"identifier", "type_identifier", "crate", "self", "super"})
#: keywords that begin a path (``crate::a::f``)
_PATH_ROOTS = frozenset({"crate", "self", "super", "Self"})

# a resolved path: ("mod", file, inline module) or ("def", file, qualified name)
Ref = tuple[str, str, str]


class _Items:
    """One walk over a file's items in source order, filling ``parsed``: the enclosing
    items are on a stack, so that each item is qualified by them (items inside a function
    body are its own and left out); modules and impls are the call scopes of the code in
    them, and functions the spans whose locals type receivers (``_FnTypes``)."""

    def __init__(self, parsed: ParsedFile) -> None:
        self.parsed = parsed
        # enclosing items: (end byte, kind, qualified name, inline module)
        self.stack: list[tuple[int, str, str, str]] = []
        self.scopes: list[tuple[int, int, str]] = []  # (start, end, call scope): mods, impls
        self.globs: dict[str, int] = {}
        self.fns: list[tuple[int, int]] = []  # functions (not those inside other functions)
        self.file_mods: set[str] = set()  # ``mod x;`` declarations, by their scoped names

    def walk(self, defs: list[tuple[Node, Node]], def_nodes: list[int]) -> None:
        order = sorted(
            range(len(defs)), key=lambda k: (defs[k][0].start_byte, -defs[k][0].end_byte)
        )
        stack = self.stack
        local_uses: list[tuple[Node, int, str]] = []
        for k in order:
            node, name = defs[k]
            while stack and stack[-1][0] < node.end_byte:
                stack.pop()
            kind, prefix, mod = stack[-1][1:] if stack else ("", "", "")
            if kind == "fn":
                if node.type == "use_declaration":
                    local_uses.append((name, def_nodes[k], mod))
                continue  # items inside a function body are its own
            t, i = node.type, def_nodes[k]
            text = _text(name)
            qual = f"{prefix}.{text}" if prefix else text
            if t == "field_declaration":
                self._field(node, kind, prefix, text)
            elif t == "mod_item":
                self._module(node, text, i, qual, mod)
            elif t == "impl_item":
                self._impl(node, name, i, prefix, mod)
            elif t == "use_declaration":
                self._use(name, i, mod)
            elif t == "extern_crate_declaration":
                self._extern_crate(node, text, i, mod)
            else:
                self._item(node, text, i, qual, mod)
        self._local_uses(local_uses)
        if self.file_mods:  # a ``use`` beside ``mod x;`` binding ``x`` is another ``#[cfg]``'s
            parsed = self.parsed
            keep = [
                k
                for k, b in enumerate(parsed.imports)
                if b.level not in _USES or b.name not in self.file_mods
            ]
            parsed.imports = [parsed.imports[k] for k in keep]
            parsed.import_nodes = [parsed.import_nodes[k] for k in keep]

    def _local_uses(self, uses: list[tuple[Node, int, str]]) -> None:
        """A ``use`` inside a function (a test's ``use petgraph::visit::EdgeFiltered;``) binds
        in its module, as the paths in it are read, where the module binds or defines no such
        name: the function's code names what it brings in, which had resolved to nothing. No
        import of the file's own: the cursor's file does not offer it as a candidate
        (``Rust.offers``)."""
        parsed = self.parsed
        bound = {b.name for b in parsed.imports if b.level == USE}
        bound.update(_scoped(*d.name.rpartition(".")[::2]) for d in parsed.definitions)
        start = len(parsed.imports)
        for name, i, mod in uses:
            self._use(name, i, mod, FN_USE)
        keep = [k for k in range(start, len(parsed.imports)) if parsed.imports[k].name not in bound]
        parsed.imports[start:] = [parsed.imports[k] for k in keep]
        parsed.import_nodes[start:] = [parsed.import_nodes[k] for k in keep]

    def _field(self, node: Node, kind: str, prefix: str, text: str) -> None:
        """A struct's field: its type, a base ``(".field", *type)`` of the struct."""
        if kind == "struct":
            ty = _type_path(node.child_by_field_name("type"))
            if ty:
                self.parsed.bases.setdefault(prefix, []).append((f".{text}", *ty))

    def _module(self, node: Node, text: str, i: int, qual: str, mod: str) -> None:
        if node.child_by_field_name("body") is None:
            # ``mod x;``: the file x.rs, found by its path, or the one ``#[path]`` names (from
            # the file's folder: modules of inline ones are not read)
            self.file_mods.add(_scoped(mod, text))
            where = _path_attribute(node)
            if where and not mod:
                file = posixpath.normpath(
                    posixpath.join(posixpath.dirname(self.parsed.path), where)
                )
                if not file.startswith("../"):
                    self.parsed.imports.append(ImportBinding(text, file, None, PATH_MOD))
                    self.parsed.import_nodes.append(i)
            return
        level = TEST_MOD if text == "tests" or _cfg_test(node) else INLINE_MOD
        self.parsed.imports.append(ImportBinding(_scoped(mod, text), "", None, level))
        self.parsed.import_nodes.append(i)
        self.stack.append((node.end_byte, "mod", qual, qual))
        self.scopes.append((node.start_byte, node.end_byte, qual))

    def _impl(self, node: Node, name: Node, i: int, prefix: str, mod: str) -> None:
        ty = _type_path(name)
        if not ty:
            return
        qual = f"{prefix}.{ty[-1]}" if prefix else ty[-1]
        trait = _type_path(node.child_by_field_name("trait"))
        if trait and all(trait):
            self.parsed.bases.setdefault(f"{mod}#impl", []).append(("::".join(trait), *ty))
            if i >= 0:  # the block's statement, whose calls ``Rust.siblings`` reads
                self.parsed.bases.setdefault(BLOCKS, []).append((str(i), trait[-1], ty[-1]))
        self.stack.append((node.end_byte, "impl", qual, mod))
        self.scopes.append((node.start_byte, node.end_byte, f"{mod}#{ty[-1]}"))

    def _use(self, name: Node, i: int, mod: str, level: int = USE) -> None:
        for bound, path, glob in _use_tree(name, []):
            if glob:
                n = self.globs.get(mod, 0)
                self.globs[mod] = n + 1
                bound = f"*{n}"
            elif bound == "_":
                continue
            self.parsed.imports.append(
                ImportBinding(_scoped(mod, bound), "::".join(path), "*" if glob else None, level)
            )
            self.parsed.import_nodes.append(i)

    def _extern_crate(self, node: Node, text: str, i: int, mod: str) -> None:
        alias = node.child_by_field_name("alias")
        bound = _text(alias) if alias is not None else text
        self.parsed.imports.append(ImportBinding(_scoped(mod, bound), f"::{text}", None, USE))
        self.parsed.import_nodes.append(i)

    def _item(self, node: Node, text: str, i: int, qual: str, mod: str) -> None:
        """A definition: a function, type, trait, macro, constant..."""
        parsed, t = self.parsed, node.type
        if t == "macro_definition":
            qual += "!"
        if i >= 0:
            parsed.definitions.append(Definition(qual, i, t in _TYPES))
        if t in _FUNCTIONS:
            self.stack.append((node.end_byte, "fn", qual, mod))
            self.fns.append((node.start_byte, node.end_byte))
            ret = _returned(node.child_by_field_name("return_type"))
            if ret:
                parsed.bases[qual] = [("->", *ret)]
        elif t == "trait_item":
            supers = [_type_path(b) for b in _bounds(node.child_by_field_name("bounds"))]
            if any(supers):
                parsed.bases[qual] = [(":", *b) for b in supers if b]
            self.stack.append((node.end_byte, "impl", qual, mod))
            self.scopes.append((node.start_byte, node.end_byte, f"{mod}#{text}"))
        elif t in ("struct_item", "union_item"):
            self.stack.append((node.end_byte, "struct", qual, mod))
        elif t == "type_item":
            ty = _type_path(node.child_by_field_name("type"))
            if ty:
                parsed.bases[qual] = [("=", *ty)]


class Rust(Language):
    namespace = NS
    scoped_names = True
    # ``use`` lists are long and sorted by path: what the file calls most is what it will
    rank_imports_by_use = True
    file_callees = 8
    # a receiver's methods called line after line (``g.add_node(``, ``g.edge_count(``): its
    # type's card names them all, and the next one, in the room of one
    group_members = 2
    value_members_listed = True
    value_heading = "// from the repository's traits it implements:"

    # ---- parse time ----------------------------------------------------------------------
    def extract(
        self,
        parsed: ParsedFile,
        source: bytes,
        root: Node,
        defs: list[tuple[Node, Node]],
        def_nodes: list[int],
        calls: list[tuple[Node, Node]],
        call_nodes: list[int],
    ) -> None:
        items = _Items(parsed)
        items.walk(defs, def_nodes)
        spans = _Scopes(items.scopes)
        types = _FnTypes(source, items.fns)
        for (call, fn), i in zip(calls, call_nodes, strict=True):
            if i < 0:
                continue
            parts = _callee(call, fn, source)
            if parts is not None and len(parts[0]) > 1 and parts[0][0] == "?":
                ty = types.at(parts[0][1:], call.start_byte)
                parts = (*ty, parts[-1]) if ty else ("?", parts[-1])
            if parts is not None:
                parsed.calls.append(CallSite(i, parts, spans.at(call.start_byte)))

    # ---- tables --------------------------------------------------------------------------
    def add(self, r: Resolver, path: str, pf: ParsedFile) -> None:
        name = _crate_name(path)
        if name is not None:
            _tables(r).setdefault(name, set()).add(path)
        for table, names in _ENTERED:
            entries = table(r)
            for key in names(pf):
                entries.setdefault(key, set()).add(path)

    def remove(self, r: Resolver, path: str, pf: ParsedFile) -> None:
        name = _crate_name(path)
        if name is not None:
            _tables(r).get(name, set()).discard(path)
        for table, names in _ENTERED:
            entries = table(r)
            for key in names(pf):
                entries.get(key, set()).discard(path)

    def provides(self, path: str, pf: ParsedFile) -> Iterable[str]:
        yield f"file:{path}"
        name = _crate_name(path)
        if name is not None:
            yield f"crate:{name}"
        for d in pf.definitions:
            yield d.name.rsplit(".", 1)[-1]
        for trait in _impl_traits(pf):
            yield f"impl:{trait}"
        for module in _path_modules(pf):
            yield f"declared:{module}"

    # ---- resolution ----------------------------------------------------------------------
    def resolve_call(self, r: Resolver, path: str, call: CallSite) -> Target | None:
        mod, self_type = _split_scope(call.scope)
        found = _Resolution(r, path, mod, self_type).call(list(call.parts))
        return None if found is None else found[0]

    def resolve_name(
        self, r: Resolver, path: str, parts: tuple[str, ...], lines: list[str]
    ) -> tuple[Target, str] | None:
        if path not in r.files:
            return None
        cursor = _cursor(r, path, lines)
        return _at_cursor(r, path, cursor).name(parts, cursor)

    def value_members(self, r: Resolver, path: str, node: int, line: str) -> list[Target]:
        """A struct or enum of the repository: the methods of the repository's traits that
        ``impl Trait for Type`` blocks implement for it, which a value of it calls as its
        own (``bigmant.imul_pow10(`` through ``impl Math for Bigint``) and its card does not
        show, at most ``TRAIT_METHODS``, the traits' own order."""
        qual = r.qualnames[path].get(node, "")
        if qual not in r.classes[path]:
            return []
        name = qual.rsplit(".", 1)[-1]
        # (made at the first impl of a repository trait: most types have none)
        res: _Resolution | None = None
        own: set[str] | None = None
        out: list[Target] = []
        for where in sorted(_impl_type_tables(r).get(name, ())):
            for mod, trait_path, type_path in _impl_blocks(r.files[where]):
                # (most impls are of the standard library's traits: no look-up)
                if type_path[-1] != name or not r.by_name.get((NS, trait_path.rsplit("::", 1)[-1])):
                    continue
                if res is None:
                    res = _Resolution(r, path, _mod_of(r, path, qual), "", record=False)
                if res._path(where, mod, type_path, False, 1) != ("def", path, qual):
                    continue
                trait = res._path(where, mod, trait_path.split("::"), False, 1)
                if trait is None or trait[0] != "def":
                    continue
                if own is None:
                    own = {d.name.rsplit(".", 1)[-1] for d in r.files[path].members(qual)}
                for d in r.files[trait[1]].members(trait[2]):
                    bare = d.name[len(trait[2]) + 1 :]
                    if "." not in bare and bare not in own:
                        own.add(bare)
                        out.append((trait[1], d.node))
        return out[:TRAIT_METHODS]

    def fresh_types(self, r: Resolver, path: str, lines: list[str]) -> list[Target]:
        """The repository types of the bindings the last ``FRESH_LINES`` lines make (a
        function's parameters, ``let x = Foo::new()``) that no code uses yet; of a type from
        outside the repository (``data: &mut AtomicPtr<()>``), the repository's traits in
        scope that its ``impl Trait for Type`` blocks implement for it (what its methods
        there are)."""
        if path not in r.files:
            return []
        cursor = _cursor(r, path, lines)
        res = _at_cursor(r, path, cursor)
        out: dict[Target, None] = {}
        for ty in _fresh(lines):
            ref = res._returns(list(ty[1:]))[1] if ty[0] == "<-" else res._walk(list(ty), False)
            if ref is not None and ref[0] == "def" and ref[1] != path:
                out.setdefault(res._target(ref))
            elif ref is None and _written_type(ty)[:1].isupper():
                if not res._foreign(path, cursor.mod, _written_type(ty)):
                    continue
                for trait in res._foreign_traits(_written_type(ty)):
                    # in scope, as a trait's methods must be to be called
                    name = trait[2].rsplit(".", 1)[-1]
                    if res._item(path, cursor.mod, name, False, 1) == trait:
                        out.setdefault(res._target(trait))
        return list(out)

    def siblings(self, r: Resolver, path: str, lines: list[str]) -> list[Target]:
        """The same method of the trait's other ``impl`` blocks (``size_hint`` of the other
        ``impl Iterator for`` types), for a cursor at most ``SIBLING_LINES`` lines into a
        method's body in an ``impl Trait for Type`` block."""
        begun = _fn_begun(lines) or _block_begun(lines)
        if begun is None or path not in r.files:
            return []
        trait, self_type, method = begun
        out = []
        files = _impl_tables(r).get(trait, ())
        for p in sorted(files, key=lambda p: (-shared_dirs(p, path), p))[: 2 * MAX_SIBLINGS]:
            if is_test(p) and not is_test(path):
                continue
            if not method:  # the block's top level: the other blocks whole
                out.extend(
                    (p, int(node))
                    for node, tr, ty in r.files[p].bases.get(BLOCKS, ())
                    if tr == trait and (p, ty) != (path, self_type)
                )
                continue
            for key, entries in r.files[p].bases.items():
                if not key.endswith("#impl"):
                    continue
                mod = key[: -len("#impl")]
                for entry in entries:
                    if entry[0].rsplit("::", 1)[-1] != trait or (p, entry[-1]) == (path, self_type):
                        continue
                    qual = f"{entry[-1]}.{method}"
                    node = r.defs[p].get(f"{mod}.{qual}" if mod else qual)
                    if node is not None:
                        out.append((p, node))
        out.sort(key=lambda t: (-shared_dirs(t[0], path), t))
        return out[:MAX_SIBLINGS]

    def forwarder(self, lines: list[str]) -> str:
        """The method whose body the cursor has just begun, in an ``impl`` block or a
        trait's default (a function's own name is none: it has no field to forward to)."""
        begun = _fn_start(lines)
        if begun is None or not lines[begun[0]].startswith((" ", "\t")):
            return ""
        return begun[1]

    def subject(self, lines: list[str]) -> list[str]:
        """The words of the test or benchmark function around the cursor (``#[test]``,
        ``#[bench]``, or named ``test_``/``bench_``), its leading ``test``/``bench`` aside:
        ``many_retain_hashmap_100_000`` calls ``retain``. A helper function nested in it is
        passed (nom's ``fn is_a_fail() { fn test(input: &str) {``), a method is not."""
        depth = None
        for row in range(len(lines) - 2, -1, -1):
            line = lines[row]
            indent = len(line) - len(line.lstrip())
            if (depth is not None and indent >= depth) or not _FN.match(line):
                continue
            name = _FN_NAME.search(line)
            if name is None:
                return []
            words = [w for w in name["name"].split("_") if w]
            marked = len(words) > 1 and words[0] in ("test", "bench")
            above = row - 1
            while above >= 0 and lines[above].lstrip().startswith(("#[", "//")):
                marked = marked or _TEST_ATTRIBUTE.search(lines[above]) is not None
                above -= 1
            if marked:
                return words[1:] if words[0] in ("test", "bench") else words
            if indent == 0 or _SELF.search(line):
                return []  # (a method: of its own type, not the test's subject)
            depth = indent
        return []

    def offers(self, binding: ImportBinding) -> bool:
        """A function's own ``use`` is no import of the file: it binds what that function
        names, which the names at the cursor reach where it is the cursor's."""
        return binding.level != FN_USE

    def reserved(self, name: str) -> bool:
        head, sep, _ = name.partition("::")
        head = head.strip()
        return head in RESERVED and not (sep and head in _PATH_ROOTS)

    def parser_view(self, source: bytes) -> bytes:
        """Items a macro wraps, shown to the grammar as items: where a macro invoked with
        braces stands among items and its body begins with one (``cfg_rt! { pub mod rt; }``,
        petgraph's ``trait_template! { pub trait NodeIndexable { .. } }``), its name, ``!``
        and braces are blanked (nested ones too, ``_MAX_NESTING`` deep). The grammar reads
        a macro's body as tokens: the traits, functions and modules in it were no
        definitions, and the calls in them none of the file's. A file without such a macro
        is parsed once, as before."""
        if _ITEM_MACRO.search(source) is None:
            return source
        view = source
        for _ in range(_MAX_NESTING):
            spans = _item_macros(parser(NS).parse(view).root_node)
            if not spans:
                break
            out = bytearray(view)
            for start, end in spans:
                out[start:end] = re.sub(rb"[^\r\n]", b" ", view[start:end])
            view = bytes(out)
            # again only where an unwrapped body holds another (a macro's opening and
            # closing spans alternate)
            bodies = zip(spans[::2], spans[1::2], strict=True)
            if not any(_ITEM_MACRO.search(view, a[1], b[0]) for a, b in bodies):
                break
        return view


#: how deep item macros nest in one another that ``Rust.parser_view`` unwraps
_MAX_NESTING = 3
#: what may begin an item, after blanks, comments and attributes
_ITEM_HEAD = (
    rb"(?:\s|//[^\n]*|/\*.*?\*/|#!?\[[^\n]*\])*"
    rb"(?:pub|fn|trait|struct|enum|union|impl|type|const|static|mod|use|unsafe|extern|async)\b"
)
_ITEM_BODY = re.compile(_ITEM_HEAD, re.DOTALL)
#: a line that may begin an item macro (``name! {`` and an item): most files have none
_ITEM_MACRO = re.compile(
    rb"(?m)^[ \t]*(?:[A-Za-z_]\w*::)*[A-Za-z_]\w*[ \t]*![ \t]*\{" + _ITEM_HEAD, re.DOTALL
)
#: the nodes whose named children are items
_ITEM_LEVEL = frozenset({"source_file", "declaration_list"})


def _item_macros(root: Node) -> list[tuple[int, int]]:
    """The byte spans to blank of the item macros among the items of ``root`` (its own and
    its modules', ``impl`` and ``trait`` blocks'): each one's name up to its ``{``, and its
    ``}``, where its body is items (``_items_alone``)."""
    spans = []
    todo = [root]
    while todo:
        node = todo.pop()
        for child in node.named_children:
            t = child.type
            if t == "macro_invocation":
                body = child.named_children[-1] if child.named_child_count else None
                if (
                    body is not None
                    and body.type == "token_tree"
                    and body.text[:1] == b"{"
                    and body.text[-1:] == b"}"
                    and _ITEM_BODY.match(body.text, 1) is not None
                    and _items_alone(body.text[1:-1])
                ):
                    spans.append((child.start_byte, body.start_byte + 1))
                    spans.append((body.end_byte - 1, body.end_byte))
            elif t in ("mod_item", "impl_item", "trait_item"):
                inner = child.child_by_field_name("body")
                if inner is not None and inner.type in _ITEM_LEVEL:
                    todo.append(inner)
    return spans


def _items_alone(body: bytes) -> bool:
    """Whether a macro's body, parsed alone, is items with no syntax error between them (an
    error inside one, a trait body's ``@section`` marker, stays in it): petgraph's
    ``iterator_wrap! { impl (Iterator) for struct .. }`` is no item, and shown as one would
    turn the items after it into an error too."""
    root = parser(NS).parse(body).root_node
    return not any(c.type == "ERROR" or c.is_missing for c in root.children)


class _FilesByName:
    """Files of a resolver by a name they declare or implement, a table per resolver, kept
    weakly (it goes with its resolver)."""

    def __init__(self) -> None:
        self._tables: weakref.WeakKeyDictionary[Resolver, dict[str, set[str]]] = (
            weakref.WeakKeyDictionary()
        )

    def __call__(self, r: Resolver) -> dict[str, set[str]]:
        found = self._tables.get(r)
        if found is None:
            found = self._tables[r] = {}
        return found


# the crates by name -> their ``lib.rs`` files
_tables = _FilesByName()
# the files by the (last) names of the traits they implement for a type
_impl_tables = _FilesByName()
# the files by the (last) names of the types their ``impl Trait for Type`` blocks are for
# (query time only: what reads it notes no dependency)
_impl_type_tables = _FilesByName()
# the files a ``#[path]`` module declaration names -> the declaring files
_path_tables = _FilesByName()


# id(parse) -> (the parse, held weakly, and its blocks): a saved parse is not hashable
_IMPL_BLOCKS: dict[int, tuple[weakref.ref[ParsedFile], list[tuple[str, str, list[str]]]]] = {}


def _impl_blocks(pf: ParsedFile) -> list[tuple[str, str, list[str]]]:
    """``pf``'s ``impl Trait for Type`` blocks as (module, trait path, type path), kept with
    the parse: a type's card reads those of every file implementing a trait for its name,
    cursor after cursor (query time only)."""
    hit = _IMPL_BLOCKS.get(id(pf))
    if hit is not None and hit[0]() is pf:
        return hit[1]
    if len(_IMPL_BLOCKS) >= 8192:
        _IMPL_BLOCKS.clear()
    blocks = [
        (key[: -len("#impl")], trait_path, type_path)
        for key, found in pf.bases.items()
        if key.endswith("#impl")
        for trait_path, *type_path in found
    ]
    _IMPL_BLOCKS[id(pf)] = (weakref.ref(pf), blocks)
    return blocks


def _impl_types(pf: ParsedFile) -> set[str]:
    """The last names of the types ``pf``'s ``impl Trait for Type`` blocks are for."""
    return {b[-1] for key, found in pf.bases.items() if key.endswith("#impl") for b in found}


def _path_modules(pf: ParsedFile) -> set[str]:
    """The files ``pf``'s ``#[path = ".."] mod x;`` declarations name."""
    return {b.module for b in pf.imports if b.level == PATH_MOD}


def _impl_traits(pf: ParsedFile) -> set[str]:
    """The last names of the traits ``pf``'s ``impl Trait for Type`` blocks implement."""
    return {
        b[0].rsplit("::", 1)[-1]
        for key, found in pf.bases.items()
        if key.endswith("#impl")
        for b in found
    }


# the tables a file enters its names in (``add``, ``remove``), with what names it enters
_ENTERED: tuple[tuple[_FilesByName, Callable[[ParsedFile], set[str]]], ...] = (
    (_impl_tables, _impl_traits),
    (_path_tables, _path_modules),
    (_impl_type_tables, _impl_types),
)


class _Crates:
    """The repository's files, crates and macros as the file at ``path`` sees them (``test``:
    from test code, which may use test code). ``record``: note what it reads as dependencies
    of the file (index time), or not (query time)."""

    def __init__(self, r: Resolver, path: str, record: bool, test: bool) -> None:
        self.r = r
        self.path = path
        self.record = record
        self.test = test

    # -- dependencies
    def _lookup_noted(self, path: str, name: str) -> None:
        if self.record:
            self.r.note_lookup(path, name)

    def _key_noted(self, key: str) -> None:
        if self.record:
            self.r.note_key(NS, key)

    def _exists(self, path: str) -> bool:
        self._key_noted(f"file:{path}")
        return path in self.r.files and self.r.files[path].language == "rust"

    # -- modules and crates
    def _crate_root(self, path: str, depth: int = 0) -> str | None:
        """The crate root file of ``path``: itself when it is one, else the nearest
        ``lib.rs``/``main.rs`` above it, else, where a ``#[path]`` module declaration names
        it (``tests/lexical/float.rs`` of ``tests/lexical.rs``), its declaring file's."""
        if _own_root(path):
            return path
        dirs = path.split("/")[:-1]
        for j in range(len(dirs), -1, -1):
            base = "".join(f"{d}/" for d in dirs[:j])
            for name in _ROOT_FILES:
                if self._exists(base + name):
                    return base + name
        if depth >= _MAX_NESTING:
            return None
        self._key_noted(f"declared:{path}")
        for parent in sorted(_path_tables(self.r).get(path, ())):
            root = self._crate_root(parent, depth + 1)
            if root is not None:
                return root
        return None

    def _in_crate(self, path: str, root: str | None) -> bool:
        """Whether ``path`` is a module of the crate whose root file is ``root``: its own
        crate root is ``root``, or it has none and lies where ``root``'s file modules do, under
        ``tests/``, ``examples/`` or ``benches/`` (``tests/macros/mod.rs``: each test crate
        there that declares ``mod macros;`` shares it)."""
        own = self._crate_root(path)
        if own == root:
            return True
        if own is not None or root is None or not _own_root(root):
            return False
        parts = root.split("/")
        return len(parts) > 1 and parts[-2] in _CRATE_DIRS and path.startswith(_child_dir(root))

    def _parent(self, path: str, mod: str) -> Ref | None:
        """The module ``super`` names in module ``mod`` of ``path``."""
        if mod:
            return "mod", path, mod.rpartition(".")[0]
        if _own_root(path):
            return None
        dirs, name = path.rsplit("/", 1) if "/" in path else ("", path)
        if name == "mod.rs":
            dirs = dirs.rpartition("/")[0] if "/" in dirs else ""
        base = f"{dirs}/" if dirs else ""
        candidates = [f"{dirs}.rs"] if dirs else []
        candidates += [f"{base}mod.rs", *(base + r for r in _ROOT_FILES)]
        for candidate in candidates:
            if candidate != path and self._exists(candidate):
                return "mod", candidate, ""
        return None

    def _crate(self, name: str) -> Ref | None:
        """A crate of the repository by its name; in ``tests/``, ``examples/``, ``benches/``
        (which use the library they sit beside by its name) the repository's own
        ``src/lib.rs`` when no crate has that name."""
        if name in _STD_CRATES or name in RESERVED:
            return None
        self._key_noted(f"crate:{name}")
        roots = _tables(self.r).get(name)
        if not roots and _CRATE_DIRS.intersection(self.path.split("/")[:-1]):
            self._key_noted("crate:")
            roots = _tables(self.r).get("")
        if not roots or len(roots) != 1:
            return None
        root = next(iter(roots))
        if is_test(root) and not self.test:
            return None
        return "mod", root, ""

    def _macro_in_crate(self, name: str, root: Callable[[], str | None]) -> Ref | None:
        """The ``macro_rules!`` macro ``name`` of the crate whose root file ``root`` gives
        (read only where a macro is so named: it notes the files it looks for): the crate's
        macros so named when one file holds them all (one file may define a macro once per
        ``#[cfg]``: the first of them)."""
        self._key_noted(f"{name}!")
        candidates = self.r.by_name.get((NS, f"{name}!"))
        if not candidates:
            return None
        crate = root()
        hits = sorted(
            (other, node)
            for other, node in candidates
            if (self.test or not is_test(other))
            and "." not in self.r.qualnames[other][node]
            and self._in_crate(other, crate)
        )
        if not hits or any(other != hits[0][0] for other, _ in hits):
            return None
        other, node = hits[0]
        return "def", other, self.r.qualnames[other][node]

    def _crate_macro(self, name: str) -> Ref | None:
        """A ``macro_rules!`` macro used by its bare name: the crate's (macros are in scope
        textually, and ``#[macro_export]`` ones crate-wide). A macro of an inline module is
        seen only inside it (found by the path walk), and a name of the standard library's
        macros (``assert_eq``) is the standard library's unless one is in scope."""
        if name in _STD_MACROS:
            return None
        return self._macro_in_crate(name, lambda: self._crate_root(self.path))

    def _guess(self, name: str) -> tuple[Target, str] | None:
        """A method on a receiver of unknown type: the repository's only method so named,
        unless the standard library's types have one (``push``, ``len``)."""
        if name in _STD_METHODS or name in RESERVED:
            return None
        self._key_noted(name)
        hits = [
            (other, node)
            for other, node in self.r.by_name.get((NS, name), ())
            if "." in self.r.qualnames[other][node]
        ]
        if len(hits) != 1:
            return None
        other, node = hits[0]
        qual = self.r.qualnames[other][node]
        if not self.test and (is_test(other) or _in_test_mod(self.r, other, qual)):
            return None
        return (other, node), "guess: the only method so named"


class _Resolution(_Crates):
    """One resolution from a place of ``path``: its inline module ``mod`` and, inside an
    ``impl``/``trait`` block, the block's type name ``self_type``."""

    def __init__(
        self,
        r: Resolver,
        path: str,
        mod: str,
        self_type: str,
        record: bool = True,
        generics: dict[str, list[tuple[str, ...]]] | None = None,
        fn_uses: frozenset[str] | None = None,
    ) -> None:
        super().__init__(r, path, record, is_test(path) or _in_test_mod(r, path, mod))
        self.mod = mod
        self.self_type = self_type
        # the type parameters in scope and their bounds (``F: Float``; query time only)
        self.generics = generics or {}
        # the names the ``use`` items of the cursor's function bind (query time; None: a
        # call's resolution, which reads every function's of its own file)
        self.fn_uses = fn_uses

    # -- entry points
    def call(self, parts: list[str]) -> tuple[Target, str] | None:
        macro = parts[-1].endswith("!")
        if macro:
            parts = [*parts[:-1], parts[-1][:-1]]
        if parts[0] == "?":
            return self._guess(parts[-1])
        found = self._walk(parts, macro)
        if found is None and macro and len(parts) == 1:
            found = self._crate_macro(parts[0])
        if found is None or found[0] != "def":
            return None
        return self._target(found), "resolved through paths"

    def name(self, parts: tuple[str, ...], cursor: _Cursor) -> tuple[Target, str] | None:
        """A name written at the cursor: ``a::b::c`` (a path: the longest prefix that
        resolves), ``x.m``/``self.a.m`` (members through the receiver's type)."""
        head = [s.strip() for s in parts[0].split("::")]
        rest = [p.strip() for p in parts[1:]]
        if not all(head[1:]) or not all(rest):
            return None
        if len(head) > 1:  # a path
            if head[0] == "self":
                head = head[1:]
            for end in range(len(head), 0, -1):
                found = self._walk(head[:end], False)
                if found is not None and found[0] == "def":
                    if end == len(head) and rest:
                        return None  # a member of a value whose type is not known
                    return self._target(found), "resolved through paths"
            return None
        segs = head + rest
        if segs[0] != "self" and len(segs) > 1:
            ty = cursor.types.get(segs[0])
            if ty == ():  # a binding of a type the code does not show
                return self._guess(segs[-1]) if len(segs) == 2 else None
            if ty is not None and ty[0] == "<-":
                known, start = self._returns(list(ty[1:]))
                if not known:  # a call of something the repository does not declare
                    return self._guess(segs[-1]) if len(segs) == 2 else None
                shown = ".".join(ty[1:3]) if ty[1] == "self" else "::".join(ty[1:])
                shown += "()"
            elif ty is not None:
                start, shown = self._walk(list(ty), False), "::".join(ty)
            if ty is not None:
                found = self._members(start, segs[1:]) if start is not None else None
                written = _written_type(ty)
                if start is None and len(segs) == 2 and self._foreign(self.path, self.mod, written):
                    found = self._foreign_member(written, segs[1])
                if found is None:
                    return None
                return self._target(found), f"receiver typed {shown}"
            if self._walk([segs[0]], False) is None:
                return self._guess(segs[-1]) if len(segs) == 2 else None
        if len(segs) == 1 and segs[0] in cursor.types:
            return None  # a binding of the cursor's function, not an item
        found = self._walk(segs, False)
        if found is None and len(segs) == 1 and cursor.may_be_macro(segs[0]):
            found = self._crate_macro(segs[0])
        if found is None or found[0] != "def":
            return None
        if segs[0] == "self":
            return self._target(found), f"method of {self.self_type}"
        how = "this file" if found[1] == self.path else "resolved through paths"
        return self._target(found), how

    def _returns(self, segs: list[str]) -> tuple[bool, Ref | None]:
        """Whether the type a call of the path ``segs`` returns is known, and the type when
        the repository defines it: the callee's declared return type (``Self``: the type of
        its ``impl``), else, for ``T::f``, ``T``."""
        callee = self._walk(segs, False)
        if callee is not None and callee[0] == "def":
            path, qual = callee[1], callee[2]
            ret = next((b for b in self.r.files[path].bases.get(qual, ()) if b[0] == "->"), None)
            if ret is not None:
                owner = qual.rpartition(".")[0]
                if ret[1:] == ("Self",):
                    # ``T::f()`` is a ``T`` (a type parameter too, not the trait of ``f``)
                    receiver = self._walk(segs[:-1], False) if segs[0] != "self" else None
                    if receiver is not None and receiver[0] in ("def", "gen"):
                        return True, receiver
                    return True, ("def", path, owner) if owner in self.r.defs[path] else None
                mod = _mod_of(self.r, path, qual)
                found = self._path(path, mod, list(ret[1:]), False, 0)
                return True, found if found is not None and found[0] == "def" else None
        if len(segs) > 1 and segs[-2][:1].isupper():
            return True, self._walk(segs[:-1], False)
        return callee is not None, None

    def _target(self, ref: Ref) -> Target:
        return ref[1], self.r.defs[ref[1]][ref[2]]

    # -- paths
    def _walk(self, segs: list[str], macro: bool, depth: int = 0) -> Ref | None:
        """What a path written at the resolution's place refers to."""
        head = segs[0]
        if head == "self" and len(segs) > 1:  # a value: ``self.a.m``
            ref = self._self_ref(depth)
            return None if ref is None else self._members(ref, segs[1:], macro, depth)
        if head == "Self":
            ref = self._self_ref(depth)
            return None if ref is None else self._members(ref, segs[1:], macro, depth)
        if head in self.generics:  # a type parameter: its members are its bounds'
            ref = "gen", "", head
            return ref if len(segs) == 1 else self._members(ref, segs[1:], macro, depth)
        return self._path(self.path, self.mod, segs, macro, depth)

    def _self_ref(self, depth: int) -> Ref | None:
        if not self.self_type:
            return None
        ref = self._item(self.path, self.mod, self.self_type, False, depth)
        return ref if ref is not None and ref[0] == "def" else None

    def _path(self, path: str, mod: str, segs: list[str], macro: bool, depth: int) -> Ref | None:
        if depth > _MAX_DEPTH:
            return None
        head, rest = segs[0], segs[1:]
        cur: Ref | None
        if head in ("crate", "$crate"):
            root = self._crate_root(path)
            cur = None if root is None else ("mod", root, "")
        elif head == "self":
            cur = ("mod", path, mod)
        elif head == "super":
            cur = self._parent(path, mod)
        elif head == "":  # ``::name``: a crate by its name
            if not rest:
                return None
            cur, rest = self._crate(rest[0]), rest[1:]
        else:
            cur = self._item(path, mod, head, macro and not rest, depth, bool(rest))
            if cur is None and head not in _STD_CRATES and not self._std_bound(path, mod, head):
                cur = self._crate(head)
        for k, seg in enumerate(rest):
            if cur is None:
                return None
            last = k == len(rest) - 1
            if cur[0] == "mod":
                if seg == "super":
                    cur = self._parent(cur[1], cur[2])
                elif seg != "self":
                    cur = self._item(cur[1], cur[2], seg, macro and last, depth + 1, not last)
            else:
                return self._members(cur, rest[k:], macro, depth + 1)
        return cur

    def _item(
        self, path: str, mod: str, name: str, macro: bool, depth: int, scope: bool = False
    ) -> Ref | None:
        """What ``name`` means in module ``mod`` of ``path``: an item defined there, an inline
        module, a ``use`` binding, a file module, or a name a glob brings. ``scope``: the name
        is followed by ``::`` and so is a module or a type (Rust keeps them apart from
        functions: ``use item::value;`` beside ``mod value;``)."""
        if depth > _MAX_DEPTH or path not in self.r.files:
            return None
        defs = self.r.defs.get(path, {})
        qual = f"{mod}.{name}" if mod else name
        if macro:
            self._lookup_noted(path, qual + "!")
            if qual + "!" in defs:
                return "def", path, qual + "!"
        self._lookup_noted(path, qual)
        if qual in defs and (not scope or qual in self.r.classes[path]):
            return "def", path, qual
        bound = _scoped(mod, name)
        self._lookup_noted(path, bound)
        b = self._binding(path, bound)
        if b is not None:
            if b.level == TEST_MOD and not self.test:
                return None
            if b.level == PATH_MOD:
                if not self._exists(b.module) or (is_test(b.module) and not self.test):
                    return None
                return "mod", b.module, ""
            if b.level not in _USES:
                return "mod", path, qual
            found = self._path(path, mod, b.module.split("::"), macro, depth + 1)
            if not scope or found is None or self._scope_like(found):
                return found
        child = _child_dir(path) + "".join(f"{p}/" for p in mod.split(".") if p)
        # a file directly in ``tests/``, ``examples/``, ``benches/`` is a crate of its own, no
        # module of a sibling's (``use bytes::Buf;`` in ``benches/buf.rs`` beside
        # ``benches/bytes.rs`` names the library)
        siblings = (f"{child}{name}.rs",) if not _own_root(f"{child}{name}.rs") else ()
        for candidate in (*siblings, f"{child}{name}/mod.rs"):
            if self._exists(candidate):
                if is_test(candidate) and not self.test:
                    return None
                return "mod", candidate, ""
        n = 0
        while True:
            glob = _scoped(mod, f"*{n}")
            self._lookup_noted(path, glob)
            if glob not in self.r.bindings.get(path, {}):
                break
            b = self._binding(path, glob)  # None: another function's glob
            target = self._path(path, mod, b.module.split("::"), False, depth + 1) if b else None
            if target is not None and target[0] == "mod":
                found = self._item(target[1], target[2], name, macro, depth + 1, scope)
                if found is not None:
                    return found
            n += 1
        # nothing else so named: a macro (``use crate::bail;`` imports ``bail!``), at a crate's
        # root one any file of the crate exports (``#[macro_export]`` puts it there)
        self._lookup_noted(path, qual + "!")
        if not macro and qual + "!" in defs:
            return "def", path, qual + "!"
        return self._macro_in_crate(name, lambda: path) if not mod and _own_root(path) else None

    def _std_bound(self, path: str, mod: str, name: str) -> bool:
        """Whether a ``use`` in module ``mod`` of ``path`` binds ``name`` to the standard
        library (``use std::fmt;``): then ``name`` is no crate, not even the library a test
        file uses by a name only ``Cargo.toml`` says (``fmt::Result`` is not its ``Result``)."""
        bound = _scoped(mod, name)
        self._lookup_noted(path, bound)
        b = self._binding(path, bound)
        if b is None or b.level not in _USES:
            return False
        return b.module.lstrip(":").split("::")[0] in _STD_CRATES

    def _binding(self, path: str, bound: str) -> ImportBinding | None:
        """What ``bound`` is bound to in ``path``: a function's own ``use`` only in that
        file, and at the cursor only where that function is the cursor's."""
        b = self.r.bindings.get(path, {}).get(bound)
        hidden = path != self.path or (self.fn_uses is not None and bound not in self.fn_uses)
        return None if b is not None and b.level == FN_USE and hidden else b

    def _scope_like(self, ref: Ref) -> bool:
        """Whether ``ref`` may be followed by ``::``: a module or a type."""
        return ref[0] == "mod" or ref[2] in self.r.classes[ref[1]]

    def _members(
        self, ref: Ref, segs: list[str], macro: bool = False, depth: int = 0
    ) -> Ref | None:
        """``Type::f``, ``value.field.method``: each segment a field (all but the last) or
        an associated item (the last) of the type before it."""
        cur: Ref | None = ref
        for k, seg in enumerate(segs):
            if cur is None or depth > _MAX_DEPTH:
                return None
            if k == len(segs) - 1 and cur[0] in ("def", "gen"):
                return self._member(cur, seg, depth)
            if cur[0] != "def":
                return None
            cur = self._field(cur, seg, depth)
        return cur

    def _alias(self, ref: Ref, depth: int) -> Ref:
        """The type a ``type X = Y;`` alias names (the alias itself when not resolvable)."""
        for _ in range(3):
            path, qual = ref[1], ref[2]
            self._lookup_noted(path, qual)
            target = next((b for b in self.r.files[path].bases.get(qual, ()) if b[0] == "="), None)
            if target is None:
                return ref
            mod = _mod_of(self.r, path, qual)
            found = self._path(path, mod, list(target[1:]), False, depth + 1)
            if found is None or found[0] != "def":
                return ref
            ref = found
        return ref

    def _field(self, ref: Ref, name: str, depth: int) -> Ref | None:
        """The type of field ``name`` of ``ref``; a field of the ``impl`` block's own type
        typed by a type parameter (``read: R`` under ``impl<R: Read> Deserializer<R>``) is
        that parameter, whose members are its bounds' (query time only)."""
        ref = self._alias(ref, depth)
        path, qual = ref[1], ref[2]
        self._lookup_noted(path, f"{qual}.{name}")
        for base in self.r.files[path].bases.get(qual, ()):
            if base[0] == f".{name}":
                found = self._path(
                    path, _mod_of(self.r, path, qual), list(base[1:]), False, depth + 1
                )
                if found is None and len(base) == 2 and base[1] in self.generics:
                    return ("gen", "", base[1]) if ref == self._self_ref(depth + 1) else None
                return found if found is not None and found[0] == "def" else None
        return None

    def _member(self, ref: Ref, name: str, depth: int) -> Ref | None:
        """An associated function, method or constant of a type or trait: in its own file,
        else in an ``impl`` block elsewhere whose type resolves to it, else through a trait
        (``_trait_member``); of a type parameter, its bounds' first that has it."""
        if ref[0] == "gen":
            for bound in self.generics.get(ref[2], ()):
                found = self._path(self.path, self.mod, list(bound), False, depth + 1)
                if found is not None and found[0] == "def":
                    member = self._member(found, name, depth + 1)
                    if member is not None:
                        return member
            return None
        ref = self._alias(ref, depth)
        path, qual = ref[1], ref[2]
        self._lookup_noted(path, f"{qual}.{name}")
        if f"{qual}.{name}" in self.r.defs[path]:
            return "def", path, f"{qual}.{name}"
        type_name = qual.rsplit(".", 1)[-1]
        self._key_noted(name)
        found = []
        for other, node in self.r.by_name.get((NS, name), ()):
            if other == path or (is_test(other) and not self.test):
                continue
            parts = self.r.qualnames[other][node].split(".")
            if len(parts) < 2 or parts[-2] != type_name:
                continue
            mod = ".".join(parts[:-2])
            if _in_test_mod(self.r, other, mod) and not self.test:
                continue
            if self._item(other, mod, type_name, False, depth + 1) == ref:
                found.append((other, node, ".".join(parts)))
        if found:
            other, _, q = min(found)
            return "def", other, q
        return self._trait_member(ref, name, depth)

    def _foreign(self, path: str, mod: str, *type_path: str) -> bool:
        """Whether a type written in module ``mod`` of ``path`` is one from outside the
        repository: a path the repository does not hold, the prelude's or a primitive, or a
        name a ``use`` binds to such a path (a type parameter, ``impl<F> Parser for F``, is
        bound by none: not one)."""
        if not type_path or not type_path[-1][:1].isalpha():
            return False
        if len(type_path) > 1:
            return self._path(path, mod, list(type_path), False, 1) is None
        name = type_path[0]
        if name in _PRELUDE or name in _PRIMITIVES:
            return True
        bound = _scoped(mod, name)
        self._lookup_noted(path, bound)
        b = self._binding(path, bound)
        if b is None or b.level not in _USES:
            return False
        return self._path(path, mod, b.module.split("::"), False, 1) is None

    def _foreign_member(self, type_name: str, name: str) -> Ref | None:
        """A method the repository gives a type from outside it (``AtomicPtr``, ``Vec<u8>``,
        ``f64``; written ``type_name`` at the cursor, where it resolves to nothing of the
        repository) through a trait: the method so named of its ``impl Trait for Type``
        blocks (a type outside the repository there too) when one block has it, else a
        trait's default method that such a block implements."""
        if not type_name:
            return None
        own = set()
        for other, node in self.r.by_name.get((NS, name), ()):
            qual = self.r.qualnames[other][node]
            parts = qual.split(".")
            if len(parts) < 2 or parts[-2] != type_name or (is_test(other) and not self.test):
                continue
            mod = ".".join(parts[:-2])
            if _in_test_mod(self.r, other, mod) and not self.test:
                continue
            if mod == _mod_of(self.r, other, qual) and self._foreign(other, mod, type_name):
                own.add(("def", other, qual))
        if own:
            return next(iter(own)) if len(own) == 1 else None
        return self._trait_member(("ext", "", type_name), name, 0)

    def _foreign_traits(self, type_name: str) -> list[Ref]:
        """The repository's traits that its ``impl Trait for Type`` blocks implement for a
        type so named from outside it (query time only)."""
        out: list[Ref] = []
        for where in sorted(_impl_type_tables(self.r).get(type_name, ())):
            if is_test(where) and not self.test:
                continue
            for key, found in self.r.files[where].bases.items():
                if not key.endswith("#impl"):
                    continue
                mod = key[: -len("#impl")]
                for trait_path, *type_path in found:
                    if type_path[-1] != type_name or not self._foreign(where, mod, *type_path):
                        continue
                    trait = self._path(where, mod, trait_path.split("::"), False, 1)
                    if trait is not None and trait[0] == "def" and trait not in out:
                        out.append(trait)
        return out

    def _trait_member(self, ref: Ref, name: str, depth: int) -> Ref | None:
        """A method ``ref`` has through a trait: a supertrait's when ``ref`` is a trait
        (``trait Float: Number``), else one a trait declares (a default method) and an
        ``impl Trait for Type`` block of the repository implements for ``ref`` (``("ext", "",
        name)``: a type so named from outside the repository)."""
        path, qual = ref[1], ref[2]
        for base in self.r.files[path].bases.get(qual, ()) if ref[0] == "def" else ():
            if base[0] == ":" and depth < _MAX_DEPTH:
                sup = self._path(
                    path, _mod_of(self.r, path, qual), list(base[1:]), False, depth + 1
                )
                if sup is not None and sup[0] == "def":
                    found = self._member(sup, name, depth + 1)
                    if found is not None:
                        return found
        impls = _impl_tables(self.r)
        for other, node in self.r.by_name.get((NS, name), ()):
            parts = self.r.qualnames[other][node].split(".")
            if len(parts) < 2 or (is_test(other) and not self.test):
                continue
            trait = ("def", other, ".".join(parts[:-1]))
            self._key_noted(f"impl:{parts[-2]}")
            for where in sorted(impls.get(parts[-2], ())):
                if self._implements(where, trait, ref, depth):
                    return "def", other, ".".join(parts)
        return None

    def _implements(self, where: str, trait: Ref, ref: Ref, depth: int) -> bool:
        """Whether a block ``impl Trait for Type`` of file ``where`` implements ``trait`` for
        the type ``ref``."""
        pf = self.r.files.get(where)
        if pf is None or depth >= _MAX_DEPTH:
            return False
        for key, found in pf.bases.items():
            if not key.endswith("#impl"):
                continue
            mod = key[: -len("#impl")]
            self._lookup_noted(where, key)
            for trait_path, *type_path in found:
                segs = trait_path.split("::")
                if segs[-1] != trait[2].rsplit(".", 1)[-1]:
                    continue
                if ref[0] == "ext":
                    if type_path[-1] != ref[2] or not self._foreign(where, mod, *type_path):
                        continue
                elif self._path(where, mod, type_path, False, depth + 1) != ref:
                    continue
                if self._path(where, mod, segs, False, depth + 1) == trait:
                    return True
        return False


# ---- helpers over paths ----------------------------------------------------------------
@cache
def _own_root(path: str) -> bool:
    """Whether ``path`` is a crate root by where it lies (``lib.rs``, ``main.rs``, a file
    directly in ``tests/``, ``examples/``, ``benches/`` or ``src/bin/``, ``build.rs``)."""
    parts = path.split("/")
    name = parts[-1]
    if name in _ROOT_FILES or (name == "build.rs" and "src" not in parts):
        return True
    return len(parts) > 1 and (parts[-2] in _CRATE_DIRS or parts[-3:-1] == ["src", "bin"])


@cache
def _child_dir(path: str) -> str:
    """Where the file modules that ``path`` declares (``mod x;``) live, with a final ``/``."""
    dirs, _, name = path.rpartition("/")
    base = f"{dirs}/" if dirs else ""
    if name == "mod.rs" or _own_root(path):
        return base
    return f"{base}{name.removesuffix('.rs')}/"


_VERSION = re.compile(r"-\d+(?:\.\d+)*(?:[-+.][\w.]*)?$")


@cache
def _crate_name(path: str) -> str | None:
    """The name a library crate root (``<dir>/src/lib.rs``) is used by: its directory's
    name, less a version (``regex-syntax-0.6.27``), ``-`` read as ``_``; "" for the
    repository's own ``src/lib.rs`` (whose name only ``Cargo.toml`` says); None for other
    files."""
    parts = path.split("/")
    if parts[-2:] != ["src", "lib.rs"]:
        return None
    return _VERSION.sub("", parts[-3]).replace("-", "_") if len(parts) > 2 else ""


def _scoped(mod: str, name: str) -> str:
    return f"{mod}::{name}" if mod else name


def _split_scope(scope: str | None) -> tuple[str, str]:
    mod, _, self_type = (scope or "").partition("#")
    return mod, self_type


def _mod_of(r: Resolver, path: str, qual: str) -> str:
    """The inline module a qualified name of ``path`` is in (``a.b`` of ``a.b.Foo.new``)."""
    parts = qual.split(".")
    mod = ""
    bindings = r.bindings.get(path, {})
    for p in parts[:-1]:
        b = bindings.get(_scoped(mod, p))
        if b is None or b.level not in _INLINE:
            break
        mod = f"{mod}.{p}" if mod else p
    return mod


def _in_test_mod(r: Resolver, path: str, mod: str) -> bool:
    """Whether the inline module ``mod`` of ``path`` is, or is inside, a test module."""
    bindings = r.bindings.get(path, {})
    cur = ""
    for p in mod.split(".") if mod else ():
        b = bindings.get(_scoped(cur, p))
        if b is not None and b.level == TEST_MOD:
            return True
        cur = f"{cur}.{p}" if cur else p
    return False


_MACRO_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*!\s*[(\[{]")
_MACRO_LINES = 41  # the finder's names come from the cursor's line and the 40 above it
_WORD = re.compile(r"[A-Za-z_]\w*")


class _Cursor:
    """What every name written at one cursor reads: the inline module and ``impl``/``trait``
    type there, the types of the bindings before it and the macros invoked (read once,
    when a name needs them)."""

    def __init__(self, r: Resolver, path: str, lines: list[str]) -> None:
        self.pf = r.files[path]
        self.lines = lines
        self.rows = len(lines)
        self.mod, self.self_type = _scope_of(r, path, lines)

    @cached_property
    def types(self) -> dict[str, tuple[str, ...]]:
        return _local_types(self.lines)

    @cached_property
    def generics(self) -> dict[str, list[tuple[str, ...]]]:
        return _generics(self.lines)

    @cached_property
    def fn_uses(self) -> frozenset[str]:
        """The names bound by the ``use`` items of the innermost function holding the
        cursor, above it."""
        pf, cursor = self.pf, self.rows - 1
        last = pf.line_owner.size - 1
        start = max(
            (
                int(pf.node_start[d.node])
                for d in pf.definitions
                if not d.is_class
                and int(pf.node_start[d.node]) < cursor
                and int(pf.node_end[d.node]) >= min(cursor, last)
            ),
            default=None,
        )
        if start is None:
            return frozenset()
        return frozenset(
            b.name
            for b, node in zip(pf.imports, pf.import_nodes, strict=True)
            if b.level == FN_USE and node >= 0 and start <= int(pf.node_start[node]) < cursor
        )

    def may_be_macro(self, name: str) -> bool:
        """Whether a bare ``name`` may be a macro: the lines before the cursor invoke it as
        one (``name!(``), or do not write it at all (a name of the draft)."""
        return name in self._macros[0] or name not in self._macros[1]

    @cached_property
    def _macros(self) -> tuple[frozenset[str], frozenset[str]]:
        """The names invoked as macros in the lines the finder reads names from, and all
        the names written there."""
        text = "\n".join(self.lines[-_MACRO_LINES:])
        return frozenset(_MACRO_CALL.findall(text)), frozenset(_WORD.findall(text))


#: per resolver, its last cursor (a buffer is kept while the file's parse is the same)
_CURSORS: weakref.WeakKeyDictionary[Resolver, _Cursor] = weakref.WeakKeyDictionary()


def _at_cursor(r: Resolver, path: str, cursor: _Cursor) -> _Resolution:
    """The resolution of names written at ``cursor`` (query time: nothing recorded)."""
    return _Resolution(
        r,
        path,
        cursor.mod,
        cursor.self_type,
        record=False,
        generics=cursor.generics,
        fn_uses=cursor.fn_uses,
    )


def _cursor(r: Resolver, path: str, lines: list[str]) -> _Cursor:
    last = _CURSORS.get(r)
    same = last is not None and last.pf is r.files[path] and last.lines is lines
    if last is None or not same or last.rows != len(lines):
        last = _CURSORS[r] = _Cursor(r, path, lines)
    return last


def _scope_of(r: Resolver, path: str, lines: list[str]) -> tuple[str, str]:
    """From the index's parse of the file: the innermost definition holding the cursor's
    line (its inline module, and its impl/trait type when it is a method)."""
    pf = r.files[path]
    cursor = len(lines) - 1
    best: tuple[int, str] | None = None
    last = pf.line_owner.size - 1
    for d in pf.definitions:
        start, end = int(pf.node_start[d.node]), int(pf.node_end[d.node])
        if start < cursor and (end >= cursor or end >= last) and (best is None or start > best[0]):
            best = (start, d.name)
    if best is None:
        return _mod_at(r, path, pf, cursor), _impl_at(lines)
    qual = best[1]
    mod = _mod_of(r, path, qual)
    rest = qual[len(mod) + 1 :].split(".") if mod else qual.split(".")
    return mod, rest[0] if len(rest) > 1 else _impl_at(lines) if len(rest) == 1 else ""


def _mod_at(r: Resolver, path: str, pf: ParsedFile, cursor: int) -> str:
    """The innermost inline module whose statement holds line ``cursor``."""
    best = ""
    for b, node in zip(pf.imports, pf.import_nodes, strict=True):
        inside = 0 <= node < pf.n_nodes and pf.node_start[node] < cursor <= pf.node_end[node]
        if b.level in _INLINE and inside:
            name = b.name.replace("::", ".")
            best = name if len(name) > len(best) else best
    return best


_IMPL = re.compile(
    r"^\s*(?:(?:pub(?:\([^)]*\))?|unsafe|default)\s+)*(?:impl\b(?:\s*<[^{]*?>)?\s+"
    r"(?:[^{]*?\s+for\s+)?&?(?:[A-Za-z_]\w*::)*(?P<impl>[A-Za-z_]\w*)|trait\s+(?P<trait>\w+))"
)


_TRAIT_IMPL = re.compile(
    r"^\s*(?:unsafe\s+)?impl\b(?:\s*<[^{]*?>)?\s+(?:[A-Za-z_]\w*::)*(?P<trait>[A-Za-z_]\w*)"
    r"(?:<[^{]*?>)?\s+for\s+&?(?:'\w+\s+)?(?:mut\s+)?(?:[A-Za-z_]\w*::)*(?P<type>[A-Za-z_]\w*)"
)
_FN_NAME = re.compile(r"\bfn\s+(?P<name>[A-Za-z_]\w*)")
_SELF = re.compile(r"\bself\b")
_TEST_ATTRIBUTE = re.compile(r"#\[\s*(?:\w+::)*(?:test|bench)\b")


def _fn_start(lines: list[str]) -> tuple[int, str] | None:
    """(row, name) of the function whose body the cursor is at most ``SIBLING_LINES`` lines
    into, else None."""
    row = len(lines) - 1
    start = next(
        (k for k in range(row - 1, max(-1, row - 4 * SIBLING_LINES), -1) if _FN.match(lines[k])),
        None,
    )
    if start is None:
        return None
    name = _FN_NAME.search(lines[start])
    text = _STRING.sub('""', "\n".join(lines[start:row]))
    brace = _header(lines[start:row], 0)
    body = [line for line in text[len(brace) + 1 :].split("\n") if line.strip()]
    if name is None or len(brace) >= len(text) or len(body) > SIBLING_LINES:
        return None
    if text.count("{", len(brace)) <= text.count("}", len(brace)):
        return None  # the body is closed
    return start, name["name"]


def _fn_begun(lines: list[str]) -> tuple[str, str, str] | None:
    """(trait, type, method) where the cursor is at most ``SIBLING_LINES`` lines into the
    body of a method of an ``impl Trait for Type`` block, else None."""
    begun = _fn_start(lines)
    if begun is None:
        return None
    start, name = begun
    for k in range(start - 1, max(-1, start - 400), -1):
        line = lines[k]
        if line.startswith(("}", "impl", "pub", "fn", "trait", "mod")) and "impl" not in line:
            return None  # the method is no ``impl`` block's
        m = _TRAIT_IMPL.match(line) if "impl" in line else None
        if m is not None:
            return m["trait"], m["type"], name
        if _IMPL_LINE.match(line):
            return None  # an inherent ``impl Type``
    return None


def _block_begun(lines: list[str]) -> tuple[str, str, str] | None:
    """(trait, type, "") where the cursor is at most ``SIBLING_LINES`` lines into an
    ``impl Trait for Type`` block, at its top level and before any ``fn``, else None."""
    row = len(lines) - 1
    for k in range(row - 1, max(-1, row - 4 * SIBLING_LINES), -1):
        line = lines[k]
        if _FN.match(line):
            return None
        m = _TRAIT_IMPL.match(line) if "impl" in line else None
        if m is None:
            continue
        text = _STRING.sub('""', "\n".join(lines[k:row]))
        brace = len(_header(lines[k:row], 0))
        body = [x for x in text[brace + 1 :].split("\n") if x.strip()]
        if brace >= len(text) or len(body) > SIBLING_LINES or "{" in text[brace + 1 :]:
            return None
        return None if "}" in text[brace:] else (m["trait"], m["type"], "")
    return None


def _impl_at(lines: list[str]) -> str:
    """The type of the last ``impl``/``trait`` header above the cursor (lines newer than
    the index's parse)."""
    for row in range(len(lines) - 1, max(-1, len(lines) - 400), -1):
        line = lines[row]
        if "impl" in line or "trait" in line:
            m = _IMPL.match(line)
            if m is not None:
                return m["impl"] or m["trait"]
    return ""


# a binding's type at the cursor: ``let x: T``, a parameter ``x: &mut T``,
# ``let x = T { .. }`` / ``T(..)``, ``let x = f(..)`` / ``T::f(..)`` / ``self.f(..)`` (what ``f``
# returns, else ``T``: a constructor; generic arguments aside: ``T::<A>::f(..)``); any other
# ``x = ..`` or ``x: t`` leaves its type unknown (a type is a path whose last segment is
# capitalised)
_TYPED = re.compile(
    r"\b(?P<name>[a-z_]\w*)\s*(?::(?!:)\s*&?\s*(?:'\w+\s+)?(?:mut\s+)?(?:dyn\s+|impl\s+)?"
    r"(?P<annot>(?:[A-Za-z_]\w*::)*[A-Za-z_]\w*)"
    r"|=(?![=>])\s*(?:&\s*)?(?:mut\s+)?(?:(?P<call>(?:self\.)?(?:[A-Za-z_]\w*(?:::<[^>]*>)?::)*"
    r"[A-Za-z_]\w*)(?:::<[^>]*>)?\s*(?P<open>[({]))?)"
)
# a path's generic arguments (``DiGraph::<_, ()>::new``: ``DiGraph::new``)
_TURBOFISH = re.compile(r"::<[^>]*>")
# what may follow a call whose value is bound: ``?``, ``.unwrap()``, ``.expect(..)`` and the
# statement's end, or arguments going on to the next lines
_CALL_END = re.compile(r"[^\n]*?\)\s*\.(?!unwrap\(\)|expect\()")
_MOVED = re.compile(r"([a-z_]\w*)\s*;")
_FN = re.compile(r"^\s*(?:(?:pub(?:\([^)]*\))?|const|async|unsafe|extern(?:\s+\"\w+\")?)\s+)*fn\b")
_STRING = re.compile(r'"(?:\\.|[^"\\])*"')
#: lines before the cursor searched for receivers' types (from the last ``fn`` among them)
TYPE_LINES = 200
#: lines before the cursor whose bindings, unused yet, make their types ``fresh_types``
FRESH_LINES = 3


_BOUNDED = re.compile(r"(?<![\w:'])([A-Z]\w*)\s*:(?!:)")
_IMPL_LINE = re.compile(r"^\s*(?:unsafe\s+)?impl\b")


def _generics(lines: list[str]) -> dict[str, list[tuple[str, ...]]]:
    """The type parameters in scope at the cursor with their trait bounds, from the header
    of the function it is in and of the ``impl`` block around it (``<F: Float>``,
    ``where V: de::Visitor<'de> + Clone``)."""
    first = max(0, len(lines) - TYPE_LINES)
    start = next((k for k in range(len(lines) - 1, first - 1, -1) if _FN.match(lines[k])), None)
    if start is None:
        return {}
    headers = [_header(lines, start)]
    impl = next((k for k in range(start - 1, first - 1, -1) if _IMPL_LINE.match(lines[k])), None)
    if impl is not None:
        headers.append(_header(lines, impl))
    out: dict[str, list[tuple[str, ...]]] = {}
    for text in headers:
        for m in _BOUNDED.finditer(text):
            for bound in _bound_list(text, m.end()):
                out.setdefault(m[1], []).append(bound)
    return out


def _header(lines: list[str], start: int) -> str:
    """An item's header: its lines from ``start`` up to the body's ``{`` (12 lines at most)."""
    text = "\n".join(lines[start : start + 12])
    depth = 0
    for k, c in enumerate(text):
        if c in "<(":
            depth += 1
        elif c in ">)" and k and text[k - 1] != "-":
            depth -= 1
        elif c in "{;" and depth <= 0:
            return text[:k]
    return text


def _bound_list(text: str, at: int) -> Iterator[tuple[str, ...]]:
    """The trait paths of the bounds written from ``at`` (``A + b::C<T> + 'a + ?Sized``),
    up to the ``,``, ``>`` or ``{`` that ends them."""
    depth = 0
    start = at
    for k in range(at, len(text) + 1):
        c = text[k] if k < len(text) else ","
        if c == "<":
            depth += 1
        elif c == ">" and depth:
            depth -= 1
        elif depth == 0 and c in "+,>{\n" or k == len(text):
            m = re.match(r"\s*(?:dyn\s+)?((?:[A-Za-z_]\w*::)*[A-Z]\w*)", text[start:k])
            if m is not None and m[1] not in RESERVED:
                yield tuple(m[1].split("::"))
            if c != "+":
                return
            start = k + 1


def _local_types(lines: list[str]) -> dict[str, tuple[str, ...]]:
    """``name -> type`` (``_typed_bindings``) of the bindings made in the function the cursor
    is in, the last one winning."""
    first = max(0, len(lines) - TYPE_LINES)
    start = next((k for k in range(len(lines) - 1, first - 1, -1) if _FN.match(lines[k])), first)
    return {name: ty for _, name, ty in _typed_bindings("\n".join(lines[start:]))}


def _fresh(lines: list[str]) -> list[tuple[str, ...]]:
    """The known types of the bindings the last ``FRESH_LINES`` lines make in the cursor's
    function that the code after them does not use, the last made first."""
    first = max(0, len(lines) - TYPE_LINES)
    start = next((k for k in range(len(lines) - 1, first - 1, -1) if _FN.match(lines[k])), first)
    text = "\n".join(lines[start:])
    recent = len("\n".join(lines[start : max(start, len(lines) - 1 - FRESH_LINES)]))
    out = []
    for at, name, ty in _typed_bindings(text):
        after = text[at + len(name) :]
        if at >= recent and ty and not re.search(rf"(?<![\w.]){name}\b", after):
            out.append(ty)
    return out[::-1]


def _typed_bindings(text: str) -> Iterator[tuple[int, str, tuple[str, ...]]]:
    """(offset, name, type) of each binding ``text`` makes; the type is a path, ``()`` when
    not known, or ``("<-", *callee)`` for what a call returns, ``T`` of ``T::f`` in last
    place (``_returns``)."""
    code = _STRING.sub(lambda m: '"' + " " * (len(m[0]) - 2) + '"', text)  # offsets kept
    seen: dict[str, tuple[str, ...]] = {}
    for m in _TYPED.finditer(code):
        name = m["name"]
        if name in ("self", "mut"):
            continue
        ty = m["annot"] or _TURBOFISH.sub("", m["call"] or "")
        segs = ty.replace("self.", "self::").split("::")
        known = segs[-1][:1].isupper() or segs[-1] in _PRIMITIVES
        if m["open"] == "(" and not segs[-1][:1].isupper():
            # a call: its value unless a method of it is called on the same line
            found = () if _CALL_END.match(code, m.end()) else ("<-", *segs)
        elif not ty and (moved := _MOVED.match(code, m.end())):
            found = seen.get(moved[1], ())  # ``let x = y;``: ``y``'s type
        else:
            found = tuple(segs) if ty and known else ()
        seen[name] = found
        yield m.start(), name, found


def _written_type(ty: tuple[str, ...]) -> str:
    """The name of the type a binding's type (``_typed_bindings``) writes: its path's last
    segment, or ``T`` of a call ``T::f`` ("" for another call)."""
    if ty[:1] != ("<-",):
        return ty[-1]
    return ty[-2] if len(ty) > 2 and ty[-2][:1].isupper() else ""


class _FnTypes:
    """The receivers' types of a file's method calls, as the code of the function around
    each call declares them before it."""

    def __init__(self, source: bytes, fns: list[tuple[int, int]]) -> None:
        self.source = source
        self.fns = sorted(fns)
        self.starts = [start for start, _ in self.fns]
        self.bindings: dict[int, dict[str, list[tuple[int, tuple[str, ...]]]]] = {}

    def at(self, name: str, byte: int) -> tuple[str, ...]:
        """The type of the binding ``name`` in force at ``byte`` (``()``: not known)."""
        k = bisect.bisect_right(self.starts, byte) - 1
        if k < 0 or byte >= self.fns[k][1]:
            return ()
        if k not in self.bindings:
            start, end = self.fns[k]
            raw = self.source[start:end]
            text = raw.decode("utf-8", "replace")
            table: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
            for offset, bound, ty in _typed_bindings(text):
                if not raw.isascii():
                    offset = len(text[:offset].encode("utf-8"))
                table.setdefault(bound, []).append((start + offset, ty))
            self.bindings[k] = table
        found = self.bindings[k].get(name, ())
        before = [ty for offset, ty in found if offset < byte]
        ty = before[-1] if before else ()
        if ty[:1] == ("<-",):  # what a function returns is not read here: ``T::f`` is a ``T``
            return ty[1:-1] if len(ty) > 2 and ty[-2][:1].isupper() else ()
        return ty


# ---- helpers over syntax ---------------------------------------------------------------
def _text(node: Node) -> str:
    return node.text.decode("utf-8", "replace")


_PATH_ATTRIBUTE = re.compile(rb'^#\[\s*path\s*=\s*"([^"]+)"\s*\]$')


def _path_attribute(node: Node) -> str | None:
    """The file a ``#[path = "x.rs"]`` attribute of an item names, as written."""
    prev = node.prev_named_sibling
    while prev is not None and prev.type in ("attribute_item", "line_comment"):
        m = _PATH_ATTRIBUTE.match(prev.text or b"")
        if m is not None:
            return m[1].decode("utf-8", "replace")
        prev = prev.prev_named_sibling
    return None


def _cfg_test(node: Node) -> bool:
    """Whether an item carries ``#[cfg(test)]`` (its attributes are its siblings before it)."""
    prev = node.prev_named_sibling
    while prev is not None and prev.type == "attribute_item":
        if re.search(rb"cfg\s*\(\s*test\s*\)", prev.text or b""):
            return True
        prev = prev.prev_named_sibling
    return False


def _path(node: Node | None) -> list[str] | None:
    """``a::b::C`` as its segments (generic arguments dropped); None for anything else."""
    out: list[str] = []
    while node is not None:
        t = node.type
        if t in _PATH_NODES:
            out.append(_text(node))
            break
        if t in ("scoped_identifier", "scoped_type_identifier"):
            name = node.child_by_field_name("name")
            if name is None:
                return None
            out.append(_text(name))
            node = node.child_by_field_name("path")
            if node is None:
                out.append("")  # ``::name``
                break
        elif t == "generic_type":
            node = node.child_by_field_name("type")
        elif t == "generic_function":
            node = node.child_by_field_name("function")
        else:
            return None
    return out[::-1]


def _type_path(node: Node | None) -> tuple[str, ...]:
    """The named type of a type expression (``&mut Foo<T>``, ``Box<Foo>``: ``Foo``... the
    outer one but for references and pointers), () when it has none."""
    while node is not None and node.type in ("reference_type", "pointer_type"):
        node = node.child_by_field_name("type")
    found = _path(node)
    return tuple(found) if found and all(found) else ()


_WRAPPERS = frozenset({"Option", "Result", "Box", "Rc", "Arc"})


def _returned(node: Node | None) -> tuple[str, ...]:
    """The named type a function returns, through ``Option``/``Result``/``Box``/``Rc``/
    ``Arc`` (what ``?``, ``unwrap`` and derefs reach), () when it has none."""
    for _ in range(3):
        while node is not None and node.type in ("reference_type", "pointer_type"):
            node = node.child_by_field_name("type")
        if node is None or node.type != "generic_type":
            break
        outer = node.child_by_field_name("type")
        args = node.child_by_field_name("type_arguments")
        if outer is None or args is None or _text(outer) not in _WRAPPERS:
            break
        node = next((c for c in args.named_children if c.type != "lifetime"), None)
    return _type_path(node)


def _bounds(node: Node | None) -> list[Node]:
    """The trait types of a ``trait_bounds`` node (``: A + b::C<T> + 'a``)."""
    if node is None:
        return []
    return [c for c in node.named_children if c.type != "lifetime"]


def _use_tree(node: Node, prefix: list[str]) -> Iterable[tuple[str, list[str], bool]]:
    """(bound name, path, glob) of each name a ``use`` tree binds."""
    t = node.type
    if t == "use_as_clause":
        path = _path(node.child_by_field_name("path"))
        alias = node.child_by_field_name("alias")
        if path is not None and alias is not None:
            yield _text(alias), prefix + path, False
    elif t == "use_wildcard":
        inner = next((c for c in node.named_children), None)
        path = _path(inner) if inner is not None else []
        if path is not None:
            yield "*", prefix + path, True
    elif t == "scoped_use_list":
        head = node.child_by_field_name("path")
        path = _path(head) if head is not None else []
        body = node.child_by_field_name("list")
        if path is not None and body is not None:
            yield from _use_tree(body, prefix + path)
    elif t == "use_list":
        for child in node.named_children:
            yield from _use_tree(child, prefix)
    else:
        path = _path(node)
        if path:
            full = prefix + path
            if full[-1] == "self":  # ``use a::b::{self}`` binds ``b``
                full = full[:-1]
            if full and full[-1] not in ("crate", "super", "self", ""):
                yield full[-1], full, False


_SIMPLE_PATH = re.compile(rb"[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*")
_SIMPLE_FIELD = re.compile(rb"self(?:\.[A-Za-z_]\w*)*")
#: callees longer than this are not read as text (a long method chain would be copied once
#: per call in it)
_SHORT = 120


def _callee(call: Node, fn: Node, source: bytes) -> tuple[str, ...] | None:
    """A call's callee as ``CallSite.parts`` (see the module doc)."""
    if fn.type == "field_expression":
        field = fn.child_by_field_name("field")
        value = fn.child_by_field_name("value")
        if field is None or value is None or field.type != "field_identifier":
            return None
        if value.type == "identifier":  # ``x.m``: typed by the function's code, if it does
            return f"?{_text(value)}", _text(field)
        if value.end_byte - value.start_byte < _SHORT:
            raw = source[value.start_byte : value.end_byte]
            if _SIMPLE_FIELD.fullmatch(raw):  # ``self.a.m``
                return (*raw.decode("ascii").split("."), _text(field))
        return "?", _text(field)
    if fn.end_byte - fn.start_byte < _SHORT:
        raw = source[fn.start_byte : fn.end_byte]
        if _SIMPLE_PATH.fullmatch(raw):  # the common case without walking the nodes
            parts = raw.decode("ascii").split("::")
            if call.type == "macro_invocation":
                return (*parts[:-1], parts[-1] + "!")
            if parts[0] == "self" and len(parts) > 1:
                parts = parts[1:]  # ``self::f`` is ``f`` of this module
            return tuple(parts)
    path = _path(fn)
    if not path or not all(path[1:]):
        return None
    if call.type == "macro_invocation":
        return (*path[:-1], path[-1] + "!")
    if path[0] == "self" and len(path) > 1:
        path = path[1:]
    return tuple(path)


class _Scopes:
    """The modules and ``impl``/``trait`` blocks of a file, for the innermost one holding a
    byte: spans in pre-order, each with the span around it."""

    def __init__(self, spans: list[tuple[int, int, str]]) -> None:
        spans.sort(key=lambda s: (s[0], -s[1]))
        self.spans = spans
        self.starts = [start for start, _, _ in spans]
        self.outer: list[int] = []
        for k, (_, end, _) in enumerate(spans):
            up = k - 1
            while up >= 0 and spans[up][1] < end:
                up = self.outer[up]
            self.outer.append(up)

    def at(self, byte: int) -> str | None:
        """The call scope (``mod#Type``) of the innermost span holding ``byte``."""
        k = bisect.bisect_right(self.starts, byte) - 1
        while k >= 0 and byte >= self.spans[k][1]:
            k = self.outer[k]
        return self.spans[k][2] if k >= 0 else None


# ---- the language's own names ----------------------------------------------------------
def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_KEYWORDS = _words(
    """
    as async await break const continue crate dyn else enum extern false fn for if impl
    in let loop match mod move mut pub ref return static struct trait true type union
    unsafe use where while abstract become box do final macro override priv typeof
    unsized virtual yield try macro_rules
    """
)
_PRIMITIVES = _words(
    """
    bool char str u8 u16 u32 u64 u128 usize i8 i16 i32 i64 i128 isize f32 f64
    """
)
_PRELUDE = _words(
    """
    Option Some None Result Ok Err Vec String Box Default Clone Copy Debug Send
    Sync Sized Unpin Drop Fn FnMut FnOnce From Into TryFrom TryInto AsRef AsMut Iterator
    IntoIterator DoubleEndedIterator ExactSizeIterator Extend PartialEq Eq PartialOrd
    Ord Hash ToOwned ToString FromIterator drop std core alloc
    """
)
_STD_MACROS = _words(
    """
    println print eprintln eprint format format_args write writeln vec panic assert
    assert_eq assert_ne debug_assert debug_assert_eq debug_assert_ne unreachable
    unimplemented todo matches include include_str include_bytes concat stringify env
    option_env cfg line column file module_path compile_error dbg thread_local
    """
)
_STD_CRATES = frozenset({"std", "core", "alloc", "proc_macro", "test"})
RESERVED = _KEYWORDS | _PRIMITIVES | _PRELUDE | _STD_MACROS | _STD_CRATES
#: methods the standard library's common types have: a call of one on a receiver of
#: unknown type is more likely theirs than the repository's
_STD_METHODS = _words(
    """
    new default clone to_owned to_string len is_empty push pop insert remove get get_mut
    contains iter iter_mut into_iter map and_then unwrap unwrap_or unwrap_or_else
    unwrap_or_default expect ok err ok_or ok_or_else is_some is_none is_ok is_err as_ref
    as_mut as_str as_slice as_bytes borrow borrow_mut take replace extend clear first
    last split join trim starts_with ends_with find collect filter fold next count sum
    max min rev zip chain skip enumerate any all sort sort_by dedup retain truncate
    drain keys values entry or_insert or_insert_with lock read write flush fmt eq ne cmp
    partial_cmp hash from into try_from try_into parse chars bytes lines with_capacity
    capacity reserve append extend_from_slice split_at swap copied cloned position
    windows chunks concat push_str to_vec to_lowercase to_uppercase deref send recv
    spawn wait get_or_insert filter_map flat_map flatten peek peekable step_by last_mut
    first_mut binary_search iter_rev set resize fill to_le_bytes to_be_bytes checked_add
    checked_sub saturating_sub wrapping_add abs pow min_by_key max_by_key sort_unstable
    index to_str to_os_string to_string_lossy as_os_str as_path display exists is_file
    is_dir file_name extension with_extension parent to_path_buf canonicalize metadata
    into_string into_boxed_str into_bytes is_char_boundary char_indices split_whitespace
    trim_start trim_end strip_prefix strip_suffix replace_all matches rfind rsplit
    splitn to_ascii_lowercase to_ascii_uppercase eq_ignore_ascii_case is_ascii
    is_alphabetic is_numeric is_alphanumeric is_whitespace is_digit to_digit
    map_err map_or map_or_else or_else and unwrap_err expect_err transpose flatten
    as_deref as_deref_mut get_or_insert_with copied filter_map take_while skip_while
    scan inspect partition max_by min_by last nth for_each try_for_each product
    contains_key get_key_value values_mut iter_rev split_off split_first split_last
    starts_with ends_with as_ptr as_mut_ptr into_inner get_ref downcast downcast_ref
    type_id name id kind message description source cause write_str write_fmt
    write_all read_to_string read_line lines_any sort_by_key binary_search_by
    """
)


LANGUAGE = Rust()

"""JavaScript, TypeScript and TSX: names resolve through ES modules and CommonJS.

Parse time (``extract``) reads, per file:

* definitions, qualified by what holds them: ``f``, ``Cls``, ``Cls.method``, ``Iface.method``,
  ``outer.inner`` (a function or arrow ``const`` inside a function), top-level ``const``s,
  type aliases, enums, namespaces, CommonJS ``exports.f = function``;
* call sites with their whole callee (``f``, ``m.f``, ``this.m``, ``super.m``, ``new Cls``,
  JSX ``<Comp/>``); a receiver whose type the file declares (a parameter or local ``x: Foo``,
  ``x = new Foo()``, a class field ``this.x: Foo``) is replaced by its type: ``x.m()`` is
  saved as ``Foo.m``; ``x = f()`` by ``f``, whose bases are its return type; a callback's
  untyped parameter ``j`` passed as argument ``i`` of ``f(...)`` by ``f #i #j``;
* imports as ``ImportBinding``\\ s: ``import {a as b} from './x'`` binds ``b`` to symbol ``a``
  of module ``./x``, ``import d from`` to ``default``, ``import * as m`` / ``require`` /
  ``await import('./x')`` to the module (symbol None; destructured, to its exports); what
  the file exports under another name is an entry named ``export:NAME`` (``export {a as
  NAME} from``, ``export default X``, ``module.exports``), and all its ``export * from``
  modules one entry named ``export*`` (modules one a line), so that any change to them is a
  change of that entry; a JavaScript file's JSDoc ``@typedef {import("./m").A} A`` binds
  ``A`` as ``import type`` does (its doc comments' ``@param {A} a`` type ``a`` at the
  cursor);
* bases: classes' and interfaces' ``extends``/``implements`` types; a top-level ``const``'s
  declared or constructed type (``export const cache = new Cache()``: ``cache.get`` is
  ``Cache.get``), the function that made it, or the name it is another name for (``const
  stringType = ZodString.create``: ``stringType()`` makes what ``create`` returns); a
  function's or method's return type (each overload's; for a factory that declares none,
  that of the function it returns; else what the ``return`` ending it calls, reads or
  makes; a declared ``this``, the receiver) and a field's type (a constructor's parameter
  property, a field only assigned ``this.x = new Foo()``, under ``Cls.x``); and, under
  ``f#i``, the parameter types of the function type of ``f``'s parameter ``i``.

A file that neither imports nor exports is a script: its top-level definitions are globals
for the other scripts (where only one script defines the name).

Module specifiers resolve as TypeScript's ``node`` resolution does inside the repository:
relative paths with ``.ts``/``.tsx``/``.d.ts``/``.js``/... extensions and ``index`` files
(``./a.js`` also finds ``a.ts``), and bare specifiers through the ``paths`` and ``baseUrl`` of
the nearest ``tsconfig.json``/``jsconfig.json`` (``extends`` followed), then by the name of a
``package.json`` of the repository (a workspace's packages). Those files are not indexed
code: they are read when the index is built (``settings``) and saved with it, so that updates
and queries resolve as the build did; a change to them takes effect at the next
``repomem index``. Anything else (a package in ``node_modules``, a global) does
not resolve.
"""

from __future__ import annotations

import bisect
import json
import posixpath
import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from tree_sitter import Node, Query, QueryCursor

from repomem.index.langs import Language, is_test
from repomem.index.languages import grammar
from repomem.index.parsing import CallSite, Definition, ImportBinding

if TYPE_CHECKING:
    from repomem.index.names import PerFile
    from repomem.index.parsing import ParsedFile
    from repomem.index.resolver_types import ResolverTables as Resolver
    from repomem.index.resolver_types import Target

NAMESPACE = "js"
#: how deep a name is followed through re-exports and bases
_MAX_DEPTH = 10
#: lines before the cursor searched for receivers' types
TYPE_LINES = 200
#: lines before the cursor whose receivers, bound and not used yet, bring their types' cards
FRESH_LINES = 3
#: lines before the cursor whose receivers' types are carded with their members
#: (``receiver_functions``), and how many members a type and its bases give at most
RECEIVER_LINES = 8
_MAX_INHERITED = 200
_EXTENSIONS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
_CONFIGS = ("tsconfig.json", "jsconfig.json")
_STAR = "export*"
#: the ``bases`` key of a definition's union alternatives is its name with this after it
_UNION = "|"
#: a type's last part: an array of the type before it (``Foo[]`` is ("Foo", "[]"))
ARRAY = "[]"
#: a part of a name: an element of the array before it (``xs[i]``, ``for (const x of xs)``)
ELEMENT = "[i]"
#: the array methods calling a function with elements, and which of its parameters are ones
_ELEMENT_CALLBACKS = {
    **{name: ("#0",) for name in ("forEach", "map", "filter", "find", "findLast", "flatMap")},
    **{name: ("#0",) for name in ("findIndex", "findLastIndex", "some", "every")},
    "sort": ("#0", "#1"),
    "reduce": ("#1",),
    "reduceRight": ("#1",),
}
#: a map's method reading one of its values (``m.get(k)``: an element of the map)
_VALUE_GET = "get"
#: ``ImportBinding.level`` of a name ``import type`` (or ``import {type a}``) binds: a type,
#: never a value the code calls
TYPE_ONLY = 1
#: ``ImportBinding.level`` of a name a JavaScript doc comment's ``@typedef {import(...)}``
#: binds: a type only doc comments name, which the code never does (no card of its own)
DOC_TYPE = 2

# (module, file-level name) -> what it means: a definition (file, qualified name) or a module
# (file, None)
_Entity = tuple[str, str | None]


class _Tables(NamedTuple):
    """The family's tables over the resolver's files."""

    imports: dict[str, dict[str, ImportBinding]]  # file -> local name -> binding
    exports: dict[str, dict[str, ImportBinding]]  # file -> exported name -> binding
    stars: dict[str, list[str]]  # file -> its ``export * from`` specifiers
    globals: dict[str, list[tuple[str, str]]]  # name -> scripts' top-level definitions
    configs: dict[str, dict]  # config directory -> {"base": dir | None, "paths": [...]}
    packages: dict[str, list]  # package name -> [directory, [entry file, ...]]
    # (directory, specifier) -> (the file it names or None, the "file:" keys tried): valid
    # while the family's set of files stays the same
    modules: dict[tuple[str, str], tuple[str | None, tuple[str, ...]]]
    # each file's members by their class or interface (``_own_members``), made when first read
    members: PerFile[dict[str, list[tuple[str, int]]]]


# ---- parse time ------------------------------------------------------------------------------

_IMPORTS = """
(import_statement) @import
(export_statement) @export
(program (expression_statement
  (assignment_expression left: (member_expression) @lhs right: (_) @rhs)))
(variable_declarator name: (_) @req_name value: (call_expression function: (identifier) @fn
  arguments: (arguments . (string) @spec)) (#eq? @fn "require"))
(variable_declarator name: (_) @req_name value: (await_expression (call_expression
  function: (import) arguments: (arguments . (string) @spec))))
(class_heritage) @heritage
(assignment_expression
  left: (member_expression object: (this) property: (property_identifier) @field)
  right: (new_expression constructor: (_) @ctor))
(variable_declarator name: (identifier) @var value: (new_expression constructor: (_) @ctor))
(arguments [(arrow_function) (function_expression)] @callback)
(arguments (object [
  (pair key: (property_identifier) value: [(arrow_function) (function_expression)] @callback)
  (method_definition name: (property_identifier)) @callback]))
(variable_declarator name: (identifier) @var value: [
  (call_expression function: [(identifier) (member_expression)] @ctor)
  (await_expression (call_expression function: [(identifier) (member_expression)] @ctor))])
"""
_TS_IMPORTS = """
(extends_type_clause) @heritage
(required_parameter pattern: [(identifier) (this)] @var type: (type_annotation) @type)
(optional_parameter pattern: (identifier) @var type: (type_annotation) @type)
(variable_declarator name: (identifier) @var type: (type_annotation) @type)
(public_field_definition name: (property_identifier) @field type: (type_annotation) @type)
(public_field_definition name: (property_identifier) @field
  value: (new_expression constructor: (_) @ctor))
(required_parameter
  type: (type_annotation (function_type parameters: (formal_parameters) @signature)))
(optional_parameter
  type: (type_annotation (function_type parameters: (formal_parameters) @signature)))
(type_parameter name: (type_identifier) @tparam constraint: (constraint (_) @constraint))
"""

_CLASS_KINDS = frozenset(
    {
        "class_declaration",
        "abstract_class_declaration",
        "class",
        "interface_declaration",
        "enum_declaration",
    }
)
_DOTTED = re.compile(r"[A-Za-z_$#][\w$]*(?:\s*\??\.\s*[A-Za-z_$#][\w$]*)*")
_TYPE = re.compile(r"([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\s*(?:<.*>)?", re.S)
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
# an object declared with its type, ``export const x: Foo = {``, or a class's instance,
# ``export const x = new Foo(`` (a module's singleton)
_DECLARED = re.compile(
    r"(?:export\s+)?(?:const|let|var)\s+(?P<name>[A-Za-z_$][\w$]*)\s*"
    r"(?::[^=]*=\s*\{\s*$|(?::[^=]*)?=\s*new\s)"
)
_WORD_OR_DOT = re.compile(r"[\w$.]")
_ARGUMENT = re.compile(r"#\d+")  # a call's argument or a function's parameter, by position


@cache
def _query(language: str) -> Query:
    text = _IMPORTS if language == "javascript" else _IMPORTS + _TS_IMPORTS
    return Query(grammar(language), text)


def _text(node: Node | None) -> str:
    return "" if node is None else node.text.decode("utf-8", "replace")


def _string(node: Node | None) -> str | None:
    """The value of a string literal node (no escapes are interpreted: module paths)."""
    if node is None or node.type != "string":
        return None
    return _text(node)[1:-1]


def _dotted(node: Node) -> tuple[str, ...] | None:
    """``a.b?.c`` as ("a", "b", "c"), ``a.b(x).c`` too (``_chain``); None when the expression
    holds more than names and calls."""
    raw = _text(node)
    if not _DOTTED.fullmatch(raw):
        return _chain(node) if node.type == "member_expression" else None
    return tuple(p.strip().rstrip("?") for p in raw.replace("?.", ".").split("."))


_THROUGH = frozenset({"non_null_expression", "parenthesized_expression", "await_expression"})


def _chain(node: Node) -> tuple[str, ...] | None:
    """A member of a chain of calls, ``make(x).build<T>().run`` as ("make", "build", "run"),
    ``new Foo(x).run`` as ("Foo", "run"): what a call returns has the members of the called
    function's return type (``_member`` reads a function's members so), an instance those of
    its class; ``a.b[i].c`` as ("a", "b", ``ELEMENT``, "c"). None when the chain holds more
    than names, calls, indexes and ``new``."""
    parts: list[str] = []
    while True:
        if node.type == "member_expression":
            prop = node.child_by_field_name("property")
            if prop is None:
                return None
            parts.append(_text(prop))
            node = node.child_by_field_name("object")
        elif node.type == "call_expression":
            node = node.child_by_field_name("function")
        elif node.type == "subscript_expression":
            parts.append(ELEMENT)
            node = node.child_by_field_name("object")
        elif node.type == "new_expression":
            node = node.child_by_field_name("constructor")
        elif node.type in _THROUGH and node.named_children:
            node = node.named_children[0]
        elif node.type in ("identifier", "this", "super"):
            parts.append(_text(node))
            return tuple(reversed(parts))
        else:
            return None
        if node is None:
            return None


def _type_parts(text: str) -> tuple[str, ...] | None:
    """The named type of a type annotation: ``Foo<T>`` -> ("Foo",), ``ns.Bar`` -> ("ns",
    "Bar"), ``Foo | undefined`` -> ("Foo",); an array of a named type (``Foo[]``,
    ``readonly Foo[]``, ``Array<Foo>``), and a map or set of one, read as an array of its
    values (``Map<string, Foo>``, ``Set<Foo>``) -> ("Foo", ``ARRAY``); None for anything else
    (unions, literals, built-in types, arrays of arrays)."""
    text = text.lstrip(":").strip()
    if _IDENT.fullmatch(text):  # the common case, ``x: Foo``
        return None if text in _BUILTIN_TYPES or text in _GLOBALS else (text,)
    alternatives = [
        t.strip() for t in text.split("|") if t.strip() not in ("null", "undefined", "")
    ]
    if len(alternatives) != 1:
        return None
    one = alternatives[0].removeprefix("readonly ").strip()
    if one.endswith("[]"):
        element = _type_parts(one[:-2])
        return None if element is None or element[-1] == ARRAY else (*element, ARRAY)
    m = _TYPE.fullmatch(one)
    if m is None:
        return None
    parts = tuple(m.group(1).split("."))
    inner = one.partition("<")[2].rstrip()
    if parts in _ARRAYS or parts in _COLLECTIONS:  # ``Array<Foo>``, ``Map<string, Foo>``
        arguments = _top_level(inner[:-1], ",") if inner.endswith(">") else []
        at = _COLLECTIONS.get(parts, 0)
        element = _type_parts(arguments[at]) if len(arguments) > at else None
        return None if element is None or element[-1] == ARRAY else (*element, ARRAY)
    if parts in _PROMISES or parts in _WRAPPERS:  # ``Promise<Foo>``, ``Readonly<Foo>``: a Foo
        return _type_parts(_first_argument(inner[:-1])) if inner.endswith(">") else None
    return None if parts[0] in _BUILTIN_TYPES or parts[0] in _GLOBALS else parts


def _type_bases(text: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """What a declared type gives its value the members of: its named type (``_type_parts``),
    each named part of an intersection, and, for a generic that is not one of TypeScript's
    own, then its first type argument, where what the generic itself does not declare is
    looked for (a project's alias ``RequiredKeys<TableOptions<T>, 'state'>`` of ``Omit<T, K>
    & ...``); and apart, the named alternatives of a union (``type ImmerState =
    ProxyObjectState | MapState``: a member of either, but neither is its type)."""
    text = text.lstrip(":").strip()
    union = [t for t in _top_level(text, "|") if t not in ("null", "undefined", "")]
    if len(union) > 1:
        return [], list(dict.fromkeys(ty for t in union for ty in _type_bases(t)[0]))
    parts = _top_level(union[0], "&") if union else []
    if len(parts) > 1:
        return list(dict.fromkeys(ty for t in parts for ty in _type_bases(t)[0])), []
    ty = _type_parts(text)
    if ty is None or not parts or ty[-1] == ARRAY:
        return ([] if ty is None else [ty]), []
    one = parts[0]
    m = _TYPE.fullmatch(one)
    head = None if m is None else tuple(m.group(1).split("."))
    if head is None or head in _PROMISES or head in _WRAPPERS or not one.endswith(">"):
        return [ty], []
    argument = _type_parts(_first_argument(one[one.index("<") + 1 : -1]))
    return ([ty] if argument is None or argument == ty else [ty, argument]), []


def _top_level(text: str, operator: str) -> list[str]:
    """``text`` split at each ``operator`` outside brackets (``=>`` is no bracket), stripped;
    none for a function type (its ``=>`` outside brackets: ``(a: A) => B | C`` is no union)."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "<([{":
            depth += 1
        elif c == ">" and text[i - 1 : i] == "=":
            if depth == 0:
                return []
        elif c in ")]}>":
            depth -= 1
        elif c == operator and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def _first_argument(text: str) -> str:
    """The first of a generic's type arguments: ``Foo<A, B>, "k"`` -> ``Foo<A, B>``."""
    depth = 0
    for i, c in enumerate(text):
        if c in "<([{":
            depth += 1
        elif c in ">)]}":
            depth -= 1
        elif c == "," and depth == 0:
            return text[:i]
    return text


_FUNCTIONS = frozenset({"function_expression", "arrow_function", "function"})
_PROMISES = frozenset({("Promise",), ("PromiseLike",)})
_ARRAYS = frozenset({("Array",), ("ReadonlyArray",)})
#: collections read as arrays of their values (``for…of``, ``forEach``; a map's ``get``): which
#: type argument the values are
_COLLECTIONS = {
    **{(name,): 1 for name in ("Map", "ReadonlyMap", "WeakMap")},
    **{(name,): 0 for name in ("Set", "ReadonlySet", "WeakSet")},
}
# TypeScript's utility types whose value has (some of) the members of their first argument
_WRAPPERS = frozenset(
    (name,) for name in ("Readonly", "Partial", "Required", "NonNullable", "Pick", "Omit")
)


def _declared_types(
    d: Node, owner: str | None
) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """The return type of a function, method or arrow ``const``, the type of a field, the
    named type a type alias stands for (``_type_bases``: its types, a union's alternatives
    apart); for a function that declares none, the return type of the function it returns (a
    factory, ``function build() { return function make(): Slice {...} }``: what a call of its
    result makes, so ``const make = build(); const s = make()`` types ``s``), else what the
    ``return`` ending it gives (``_returned``; ``owner``: the class of a method, whose
    ``this`` it names); for a ``const`` of another name, that name."""
    value = d.child_by_field_name("value")
    if d.type == "type_alias_declaration":  # ``type AnyRouter = Router<any>``: a Router
        return ([], []) if value is None else _type_bases(_text(value))
    typed = d.child_by_field_name("type") or d.child_by_field_name("return_type")
    aliased = value is not None and value.type in ("identifier", "member_expression")
    if d.type == "variable_declarator" and typed is None and aliased:
        # ``const stringType = ZodString.create``: another name for what it reads
        named = _dotted(value)
        ok = named is not None and named[0] not in RESERVED and named[0] != "this"
        return ([named] if ok else []), []
    if typed is None and value is not None:
        typed = value.child_by_field_name("return_type")
    if typed is None:
        fn = value if value is not None and value.type in _FUNCTIONS else d
        returned = _returned_function(fn)
        typed = None if returned is None else returned.child_by_field_name("return_type")
        if returned is None:
            ty = _returned(fn, owner)
            return ([] if ty is None else [ty]), []
    return ([], []) if typed is None else _type_bases(_text(typed))


def _returned(fn: Node, owner: str | None) -> tuple[str, ...] | None:
    """What a function that declares no return type gives in the ``return`` ending its body
    (or as an arrow's body): ``return new Foo(...)`` a Foo; ``return this.node(d)`` or
    ``return Pos.resolve(d)`` what that call returns, ``return this.parent`` that member's
    type (read as ``Owner.node``, ``Owner.parent``: a member of ``owner``), ``return
    this.nodes[i]`` an element of that member; None for a bare name (a local's type is not
    known here) or ``this`` outside a class."""
    value = _returned_value(fn)
    if value is not None and value.type == "identifier":  # ``const x = f(); return x``
        declarator = _local_declarator(fn, _text(value))
        typed = None if declarator is None else declarator.child_by_field_name("type")
        if typed is not None:
            return _type_parts(_text(typed))
        value = None if declarator is None else declarator.child_by_field_name("value")
        while value is not None and value.type in _THROUGH and value.named_children:
            value = value.named_children[0]
    if value is None:
        return None
    if value.type == "new_expression":  # ``return new Foo(...)``: a Foo
        made = value.child_by_field_name("constructor")
        return None if made is None else _dotted(made)
    if value.type not in ("call_expression", "member_expression", "subscript_expression"):
        return None
    parts = _chain(value)
    if parts is None or (len(parts) == 1 and value.type != "call_expression"):
        return None
    if parts[0] == "this":
        return None if owner is None or len(parts) < 2 else (*owner.split("."), *parts[1:])
    return None if parts[0] in RESERVED or _binds(fn, parts[0]) else parts


def _local_declarator(fn: Node, name: str) -> Node | None:
    """The declarator of ``name`` among the ``const``/``let`` statements of a function's
    body (not of a nested block), the last of them: what a ``return name`` ending the body
    gives, its type or value (none where an assignment after it may have changed it)."""
    body = fn.child_by_field_name("body")
    found = None
    for statement in body.named_children if body is not None else ():
        if statement.type == "lexical_declaration":
            for d in statement.named_children:
                if d.type == "variable_declarator" and _text(d.child_by_field_name("name")) == name:
                    found = d
        elif found is not None and re.search(
            rf"(?<![\w$.]){re.escape(name)}\s*(?:[-+*/%&|^]|\?\?|<<|>>>?|\*\*)?=(?![=>])",
            _text(statement),
        ):
            found = None  # assigned after it: the value may be another's
    return found


def _binds(fn: Node, name: str) -> bool:
    """Whether ``name`` is a parameter or a local of ``fn``: not the file's name of that
    spelling, which is all a base can be resolved as."""
    params = fn.child_by_field_name("parameters") or fn.child_by_field_name("parameter")
    word = rf"(?<![\w$.]){re.escape(name)}(?![\w$])"
    if params is not None and re.search(word, _text(params)):
        return True
    body = fn.child_by_field_name("body")
    local = rf"\b(?:const|let|var)\s+(?:[^=;]*?[{{,\s])?{re.escape(name)}(?![\w$])"
    return body is not None and re.search(local, _text(body)) is not None


def _returned_value(fn: Node) -> Node | None:
    """The expression of the ``return`` that ends a function's body (or an arrow's body),
    parentheses, ``!`` and ``await`` removed."""
    body = fn.child_by_field_name("body")
    if body is not None and body.type == "statement_block":
        code = [c for c in body.named_children if c.type != "comment"]
        last = code[-1] if code else None
        body = (
            last.named_children[0]
            if last is not None and last.type == "return_statement" and last.named_children
            else None
        )
    while body is not None and body.type in _THROUGH and body.named_children:
        body = body.named_children[0]
    return body


def _returned_function(fn: Node) -> Node | None:
    """The function expression a function returns: an arrow's body, or the value of a
    ``return`` among the statements of its body (not of a nested block)."""
    body = fn.child_by_field_name("body")
    if body is None:
        return None
    if body.type in _FUNCTIONS:  # ``() => (x) => ...``
        return body
    for statement in body.named_children if body.type == "statement_block" else ():
        if statement.type == "return_statement" and statement.named_children:
            value = statement.named_children[0]
            while value.type == "parenthesized_expression" and value.named_children:
                value = value.named_children[0]
            if value.type in _FUNCTIONS:
                return value
    return None


class _Scopes:
    """Spans of the definitions, pre-ordered: the innermost one holding a byte."""

    def __init__(self, spans: list[tuple[int, int, str]]) -> None:
        self.spans = spans
        self.starts = [s for s, _, _ in spans]
        self.enclosing: list[int] = []
        for k, (_, end, _) in enumerate(spans):
            outer = k - 1
            while outer >= 0 and spans[outer][1] < end:
                outer = self.enclosing[outer]
            self.enclosing.append(outer)

    def of(self, byte: int) -> int:
        k = bisect.bisect_right(self.starts, byte) - 1
        while k >= 0 and byte >= self.spans[k][1]:
            k = self.enclosing[k]
        return k

    def chain(self, k: int) -> Iterable[int]:
        while k >= 0:
            yield k
            k = self.enclosing[k]


class _Matches(NamedTuple):
    """What the file's own query found beside its imports and exports."""

    extra_defs: list[tuple[Node, str, int]]  # CommonJS ``exports.f = function``
    heritage: list[Node]
    typed: list[tuple[Node, str, tuple[str, ...]]]  # (node, "x"/"this.x", type)
    signatures: list[Node]  # the parameters of a parameter's function type
    constraints: list[tuple[Node, tuple[str, ...]]]  # ``<T extends Foo>``: (T, Foo)


def _read_matches(parsed: ParsedFile, root: Node) -> _Matches:
    """Run the file's query: imports, ``require`` bindings and then exports go to
    ``parsed``; the rest is returned for the steps after the definitions."""
    owner = parsed.line_owner

    def stmt(node: Node) -> int:
        row = node.start_point.row
        return int(owner[row]) if row < owner.size else -1

    found = _Matches([], [], [], [], [])
    exports: list[tuple[ImportBinding, int]] = []
    stars: list[tuple[str, int]] = []
    for _, caps in QueryCursor(_query(parsed.language)).matches(root):
        if "import" in caps:
            node = caps["import"][0]
            for b in _import_bindings(node):
                parsed.imports.append(b)
                parsed.import_nodes.append(stmt(node))
        elif "export" in caps:
            node = caps["export"][0]
            bindings, star = _export_bindings(node)
            exports.extend((b, stmt(node)) for b in bindings)
            if star is not None:
                stars.append((star, stmt(node)))
        elif "lhs" in caps:
            bindings, defined = _commonjs(caps["lhs"][0], caps["rhs"][0])
            exports.extend((b, stmt(caps["lhs"][0])) for b in bindings)
            if defined is not None:
                found.extra_defs.append((caps["rhs"][0], defined, stmt(caps["lhs"][0])))
        elif "req_name" in caps:
            spec = _string(caps["spec"][0])
            if spec is not None:
                node = caps["req_name"][0]
                for b in _require_bindings(node, spec):
                    parsed.imports.append(b)
                    parsed.import_nodes.append(stmt(node))
        elif "heritage" in caps:
            found.heritage.append(caps["heritage"][0])
        elif "callback" in caps:
            found.typed.extend(_callback_params(caps["callback"][0]))
        elif "signature" in caps:
            found.signatures.append(caps["signature"][0])
        elif "tparam" in caps:
            ty = _type_parts(_text(caps["constraint"][0]))
            if ty is not None:
                found.constraints.append((caps["tparam"][0], ty))
        elif "ctor" in caps or "type" in caps:
            found.typed.extend(_typed_names(caps))
    for b, i in exports:
        parsed.imports.append(b)
        parsed.import_nodes.append(i)
    if stars:
        parsed.imports.append(ImportBinding(_STAR, "\n".join(s for s, _ in stars), None, 0))
        parsed.import_nodes.append(stars[0][1])
    return found


#: a JSDoc type import, plain JavaScript's ``import type``: ``@typedef
#: {import("./command.js").Command} Command`` (the module, the name it exports, the local name)
_TYPEDEF = re.compile(
    rb"@typedef\s*\{\s*import\(\s*[\"']([^\"'\n]+)[\"']\s*\)\.([A-Za-z_$][\w$]*)\s*\}"
    rb"\s*([A-Za-z_$][\w$]*)"
)


def _typedef_imports(parsed: ParsedFile, source: bytes) -> None:
    """A JavaScript file's JSDoc type imports into ``parsed`` as bindings of level
    ``DOC_TYPE`` (what its doc comments' ``@param {Command} cmd`` then name); a name the code
    binds itself keeps its binding."""
    if b"@typedef" not in source:
        return
    bound = {b.name for b in parsed.imports}
    owner = parsed.line_owner
    for m in _TYPEDEF.finditer(source):
        spec, name, alias = (g.decode("utf-8", "replace") for g in m.groups())
        if alias in bound:
            continue
        bound.add(alias)
        row = source.count(b"\n", 0, m.start())
        parsed.imports.append(ImportBinding(alias, spec, name, DOC_TYPE))
        parsed.import_nodes.append(int(owner[row]) if row < owner.size else -1)


def _made(ctor: Node) -> tuple[str, ...] | None:
    """The type ``new`` makes with ``ctor``: its name, or a collection's values
    (``new Map<string, Foo>()``: ``Foo``'s, ``_type_parts``)."""
    args = ctor.next_named_sibling
    targs = _text(args) if args is not None and args.type == "type_arguments" else ""
    return _collection_made(_text(ctor), targs) or _dotted(ctor)


def _collection_made(ctor: str, targs: str) -> tuple[str, ...] | None:
    """What ``new ctor<targs>(`` holds where it makes a collection (``new Map<string,
    Foo>()``: an array of ``Foo``, ``_type_parts``); None for any other ``new``."""
    made = _type_parts(ctor + targs) if targs else None
    return made if made and made[-1] == ARRAY else None


def _typed_names(caps: dict[str, list[Node]]) -> list[tuple[Node, str, tuple[str, ...]]]:
    """The names a ``new Foo()`` or ``: Foo`` match types: a variable, a parameter (and the
    field a ``constructor(private x: Foo)`` parameter also is), or a field."""
    ty = _made(caps["ctor"][0]) if "ctor" in caps else _type_parts(_text(caps["type"][0]))
    if ty is None or ty == ("require",):  # ``require`` binds a module
        return []
    if "field" in caps:
        return [(caps["field"][0], "this." + _text(caps["field"][0]), ty)]
    var = caps["var"][0]
    out = [(var, _text(var), ty)]
    param = var.parent
    if param.type.endswith("_parameter") and any(
        c.type in ("accessibility_modifier", "readonly") for c in param.children
    ):  # ``constructor(private x: Foo)`` is also a field
        out.append((var, "this." + _text(var), ty))
    return out


def _definitions(
    parsed: ParsedFile,
    defs: list[tuple[Node, Node]],
    def_nodes: list[int],
    extra_defs: list[tuple[Node, str, int]],
) -> tuple[list[tuple[int, int, str]], list[str]]:
    """Definitions, pre-ordered, qualified by the definitions around them, into ``parsed``
    (with their declared types as bases); returns every definition's span ``(start, end,
    qualified name)`` and node type, overloads included."""
    items = [(d, _text(n), i) for (d, n), i in zip(defs, def_nodes, strict=True)] + extra_defs
    items.sort(key=lambda x: (x[0].start_byte, -x[0].end_byte))
    seen: set[int] = set()
    spans: list[tuple[int, int, str]] = []
    kinds: list[str] = []
    stack: list[tuple[int, str, str]] = []  # (end byte, qualified name, kind)
    implemented = {name for d, name, _ in items if d.type in ("function_declaration", "function")}
    for d, name, i in items:
        if d.type == "variable_declarator" and (d.start_byte in seen or _is_require(d)):
            continue  # a top-level arrow ``const`` matched twice; an import
        seen.add(d.start_byte)
        while stack and stack[-1][0] <= d.start_byte:
            stack.pop()
        qual = f"{stack[-1][1]}.{name}" if stack else name
        stack.append((d.end_byte, qual, d.type))
        spans.append((d.start_byte, d.end_byte, qual))
        kinds.append(d.type)
        overload = d.type == "function_signature" and bool(stack[:-1] or name in implemented)
        if i >= 0 and not overload:  # an overload: the implementation is the definition
            parsed.definitions.append(Definition(qual, i, d.type in _CLASS_KINDS))
        if d.type not in _CLASS_KINDS:
            # a function's members are its return type's (each overload's: what a call of it
            # may return); a method's ``this`` is the class around it
            owner = stack[-2] if len(stack) > 1 and stack[-2][2] in _CLASS_KINDS else None
            types, alternatives = _declared_types(d, None if owner is None else owner[1])
            bases = parsed.bases.setdefault(qual, [])
            bases.extend(ty for ty in types if ty not in bases)
            if not bases:
                del parsed.bases[qual]
            if alternatives:  # the first declaration's (an overload's)
                parsed.bases.setdefault(f"{qual}{_UNION}", alternatives)
            _parameter_bases(parsed, d, qual)
    return spans, kinds


def _parameter_bases(parsed: ParsedFile, d: Node, qual: str) -> None:
    """The declared types of what a call passes to ``qual`` (a function, method, arrow
    ``const``, function-typed field or property, a type alias of a function type), as bases
    "qual(" (the first declaration's, () for an untyped parameter); for a factory, those of
    the function it returns as "qual()(": a callback passed in an object literal is typed
    through them (``f({ build: (b) => ... })`` with ``f(o: Options)``, ``Options.build:
    (b: Builder) => void``)."""
    params = _parameters(d)
    if params is not None and f"{qual}(" not in parsed.bases:
        types = _parameter_types(params)
        if types:
            parsed.bases[f"{qual}("] = types
    value = d.child_by_field_name("value")
    fn = value if value is not None and value.type in _FUNCTIONS else d
    returned = _returned_function(fn) if d.type not in _TYPES else None
    params = None if returned is None else returned.child_by_field_name("parameters")
    if params is not None and f"{qual}()(" not in parsed.bases:
        types = _parameter_types(params)
        if types:
            parsed.bases[f"{qual}()("] = types


_TYPES = frozenset({"type_alias_declaration", "property_signature", "public_field_definition"})


def _parameters(d: Node) -> Node | None:
    """The parameter list of a function-like definition, of an arrow or function ``const``'s
    value, of the function type of a field, a property or a type alias; None for others."""
    params = d.child_by_field_name("parameters")
    if params is not None:
        return params
    value = d.child_by_field_name("value")
    if value is not None and value.type in _FUNCTIONS:
        return value.child_by_field_name("parameters")
    typed = value if d.type == "type_alias_declaration" else d.child_by_field_name("type")
    if typed is not None and typed.type == "type_annotation" and typed.named_children:
        typed = typed.named_children[0]
    while typed is not None and typed.type == "parenthesized_type" and typed.named_children:
        typed = typed.named_children[0]
    if typed is None or typed.type != "function_type":
        return None
    return typed.child_by_field_name("parameters")


def _parameter_types(params: Node) -> list[tuple[str, ...]]:
    """Each parameter's named type (() for none; a ``this`` parameter, which a call does not
    pass, left out); empty when none is named."""
    types = [
        _param_type(p)
        for p in params.named_children
        if p.type.endswith("_parameter") and _text(p.child_by_field_name("pattern")) != "this"
    ]
    return types if any(types) else []


def _heritage_bases(parsed: ParsedFile, heritage: list[Node], scopes: _Scopes) -> None:
    """``extends`` / ``implements``: bases of the class around them."""
    for node in heritage:
        k = scopes.of(node.start_byte)
        if k < 0:
            continue
        bases = [p for t in _heritage_types(node) if (p := _dotted(t)) is not None]
        parsed.bases.setdefault(scopes.spans[k][2], []).extend(bases)


def _signature_bases(parsed: ParsedFile, signatures: list[Node], scopes: _Scopes) -> None:
    """``f(init: (a: A, b: B) => void)``: bases "f#0": [A, B]."""
    for node in signatures:
        param = node.parent.parent.parent  # formal_parameters > type > annotation > param
        k = scopes.of(node.start_byte)
        if param is None or param.parent is None or k < 0:
            continue
        arg = [c.id for c in param.parent.named_children].index(param.id)
        parsed.bases.setdefault(
            f"{scopes.spans[k][2]}#{arg}", [_param_type(p) for p in node.named_children]
        )


def _local_types(
    parsed: ParsedFile,
    typed: list[tuple[Node, str, tuple[str, ...]]],
    constraints: list[tuple[Node, tuple[str, ...]]],
    scopes: _Scopes,
    kinds: list[str],
) -> dict[tuple[int, str], tuple[str, ...]]:
    """The type of each typed name, by (definition around it, name): fields by their
    class; a top-level ``const``'s type is also its definition's base. A type parameter
    stands for its constraint (``s: T`` with ``<T extends Store>`` is a Store)."""
    spans = scopes.spans
    bounds = {(scopes.of(node.start_byte), _text(node)): ty for node, ty in constraints}
    types: dict[tuple[int, str], tuple[str, ...]] = {}
    for node, name, ty in typed:
        k = scopes.of(node.start_byte)
        if bounds:
            bound = next((bounds[j, ty[0]] for j in scopes.chain(k) if (j, ty[0]) in bounds), None)
            ty = ty if bound is None else (*bound, *ty[1:])
        if name.startswith("this."):  # a field: the class around it
            k = next((j for j in scopes.chain(k) if kinds[j] in _CLASS_KINDS), -1)
            if k < 0:
                continue
            # a member of the class's type too, where no declaration types it (a constructor's
            # ``readonly x: Foo``, ``this.x = new Foo()``): ``obj.x.m()`` is ``Foo.m``
            parsed.bases.setdefault(f"{spans[k][2]}.{name[5:]}", [ty])
        elif k >= 0 and kinds[k] == "variable_declarator" and spans[k][0] == node.start_byte:
            # a top-level ``const x: Foo`` / ``= new Foo()``: its members are Foo's
            parsed.bases.setdefault(spans[k][2], [ty])
            k = scopes.enclosing[k]
        types.setdefault((k, name), ty)
    return types


def _typed_calls(
    parsed: ParsedFile,
    calls: list[tuple[Node, Node]],
    call_nodes: list[int],
    scopes: _Scopes,
    types: dict[tuple[int, str], tuple[str, ...]],
) -> None:
    """Call sites into ``parsed``, a typed receiver replaced by its type (``x.m()`` with
    ``x: Foo`` is ``Foo.m``), scoped by the definition around them."""
    typed_names = {name for _, name in types}
    for (call, callee), i in zip(calls, call_nodes, strict=True):
        if i < 0:
            continue
        parts = _dotted(callee)
        if parts is None:
            continue
        k = scopes.of(call.start_byte)
        for _ in range(3):  # ``x = f.make()`` where ``f: Factory``: typed in turn
            if len(parts) < 2:
                break
            key = "this." + parts[1] if parts[0] == "this" and len(parts) > 2 else parts[0]
            if key not in typed_names:
                break
            chain = (*scopes.chain(k), -1)
            ty = next((types[j, key] for j in chain if (j, key) in types), None)
            if ty is None:
                break
            parts = (*ty, *parts[2 if key.startswith("this.") else 1 :])
        parsed.calls.append(CallSite(i, parts, scopes.spans[k][2] if k >= 0 else None))


class TypeScript(Language):
    """ES modules and CommonJS over the repository's JavaScript/TypeScript/TSX files."""

    namespace = NAMESPACE
    fresh_in_scope = True
    file_callees = 8
    receiver_heading = "// its bases' members:"
    receiver_names = 16
    receiver_types = 2
    value_members_listed = True

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
        found = _read_matches(parsed, root)
        if parsed.language == "javascript":
            _typedef_imports(parsed, source)
        spans, kinds = _definitions(parsed, defs, def_nodes, found.extra_defs)
        scopes = _Scopes(spans)
        _heritage_bases(parsed, found.heritage, scopes)
        _signature_bases(parsed, found.signatures, scopes)
        types = _local_types(parsed, found.typed, found.constraints, scopes, kinds)
        _typed_calls(parsed, calls, call_nodes, scopes, types)

    def warm_up(self, language: str) -> None:
        _query(language)

    # ---- the family's tables -------------------------------------------------------------
    def add(self, r: Resolver, path: str, pf: ParsedFile) -> None:
        t = _tables(r)
        imports, exports = {}, {}
        for b in pf.imports:
            if b.name == _STAR:
                t.stars[path] = b.module.split("\n")
            elif b.name.startswith("export:"):
                exports[b.name[7:]] = b
            else:
                imports[b.name] = b
        t.imports[path], t.exports[path] = imports, exports
        t.modules.clear()
        t.members.forget(path)
        for name in _globals(pf):
            t.globals.setdefault(name, []).append((path, name))

    def remove(self, r: Resolver, path: str, pf: ParsedFile) -> None:
        t = _tables(r)
        for table in (t.imports, t.exports, t.stars):
            table.pop(path, None)
        t.modules.clear()
        t.members.forget(path)
        for name in _globals(pf):
            t.globals[name] = [g for g in t.globals[name] if g[0] != path]

    def provides(self, path: str, pf: ParsedFile) -> Iterable[str]:
        return (f"file:{path}", *(f"global:{name}" for name in _globals(pf)))

    def settings(self, root: Path, paths: Iterable[str]) -> dict | None:
        """What module resolution reads from the directories holding, or above, one of
        ``paths`` (relative to ``root``): ``configs``, the ``paths``/``baseUrl`` of each
        ``tsconfig.json``/``jsconfig.json`` ({directory: {"base": the baseUrl directory or
        None, "paths": [[pattern, [target, ...]], ...]}}), and ``packages``, the ``name`` of
        each ``package.json`` ({name: [directory, [entry file, ...]]}: a workspace's
        packages import each other by name)."""
        dirs = {""}
        for p in paths:
            parts = p.split("/")[:-1]
            dirs.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
        configs, packages = {}, {}
        for d in sorted(dirs):
            for name in _CONFIGS:
                config = _read_config(root, posixpath.join(d, name) if d else name)
                if config is not None:
                    configs[d] = config
                    break
            package = _read_package(root, d)
            if package is not None:
                packages.setdefault(package[0], [d, package[1]])
        if not configs and not packages:
            return None
        return {"configs": configs, "packages": packages}

    # ---- resolution ----------------------------------------------------------------------
    def resolve_call(self, r: Resolver, path: str, call: CallSite) -> Target | None:
        return _target(r, _resolve(r, path, call.parts, call.scope, 0))

    def imported(self, r: Resolver, path: str, binding: ImportBinding) -> str | None:
        if binding.name == _STAR or not binding.module:
            return None
        return _module(r, path, binding.module)

    def resolve_name(
        self, r: Resolver, path: str, parts: tuple[str, ...], lines: list[str]
    ) -> tuple[Target, str] | None:
        pf = r.files.get(path)
        if pf is None or not all(_IDENT.fullmatch(p) for p in parts):
            return None
        scope, first = _cursor_scope(r, path, pf, len(lines) - 1)
        jsdoc = pf.language == "javascript"
        head, ty = parts[0], None
        found = _target(r, _resolve(r, path, parts, scope, 0)) if head == "this" else None
        # a receiver typed before the cursor: ``this.field.m`` (a constructor's parameter
        # property; a declared field's type is the index's) or ``x.m``, where ``x`` is not a
        # name of the file
        if found is None and head == "this" and len(parts) > 2:
            # a bare ``x`` above the window is another function's
            ty = _receiver_type(lines, first, f"this.{parts[1]}", jsdoc) or (
                _line_types(lines, first, jsdoc).get(parts[1]) or None
            )
            ty = None if ty is None else _outer_typed(r, path, ty, scope, lines, first, jsdoc)
            rest = parts[2:]
        elif len(parts) > 1 and head != "super" and _local(r, path, head, scope, 0) is None:
            ty, rest = _receiver_type(lines, first, head, jsdoc), parts[1:]
            ty = None if ty is None else _outer_typed(r, path, ty, scope, lines, first, jsdoc)
        if ty is not None:
            found = _target(r, _resolve(r, path, (*ty, *rest), scope, 0))
            return None if found is None else (found, f"receiver typed {'.'.join(ty)}")
        if head != "this":
            found = _target(r, _resolve(r, path, parts, scope, 0))
        if found is None:
            return None
        if head in ("this", "super"):
            return found, f"method of {_class_of(r, path, scope)}"
        return found, "this file" if found[0] == path else "resolved through imports"

    def in_scope(self, r: Resolver, path: str, lines: list[str]) -> list[tuple[Target, int]]:
        """The class or interface of each name the last ``FRESH_LINES`` lines bind and the
        code does not use yet, typed as the cursor's receivers are (a callback's parameter
        as the function it is passed to types it: ``builder`` in ``build((builder) => {``):
        the next line is likely to use it through a member no line names yet."""
        pf = r.files.get(path)
        if pf is None:
            return []
        scope, outer = _cursor_scope(r, path, pf, len(lines) - 1)
        first = max(0, len(lines) - 1 - FRESH_LINES)
        rows = [_STRING.sub('""', line) for line in lines[first:]]
        out: list[tuple[Target, int]] = []
        for i in range(len(rows) - 1, -1, -1):  # nearest first
            after = "\n".join(rows[i:])
            for name, ty in _assignments(rows[i]):
                # what the row alone does not type (an object literal's callback), the
                # window does
                # (not a doc comment's: its class is a card no code names)
                ty = ty or _line_types(lines, outer, False).get(name, ())
                # a test of it (``if (source) {``) uses none of its members
                mention = rf"(?<![\w$.!])(?<!if \()(?<!if \(!){re.escape(name)}(?![\w$])"
                if not ty or len(re.findall(mention, after)) > 1:
                    continue  # untyped, or used since it was bound
                ty = _outer_typed(r, path, ty, scope, lines, outer, False)
                if ty is None:
                    continue
                found = _class(r, _resolve(r, path, ty, scope, 0))
                target = _target(r, found) if found is not None else None
                if target is not None:
                    out.append((target, first + i))
        return out

    def receiver_functions(
        self, r: Resolver, path: str, lines: list[str], types: int
    ) -> list[tuple[Target, list[Target]]]:
        """The class or interface of another file of up to ``types`` receivers the last
        ``RECEIVER_LINES`` lines name (``x.``, ``this.x.`` or a chain of fields, ``top.match.``,
        typed as the cursor's receivers are) or bind (``const s = new Safe({``: only where
        its bases declare members), the nearest first, one card a type, whose name
        the code since the window's start writes, or the file imports or declares something
        as (a card of a type the code never names puzzles more than it helps), each with the members
        its bases declare in other files, where that code does not name them all: the next
        line often calls one of them that no line above names (``table.getCoreRowModel()``,
        declared by one of the fifteen interfaces ``Table`` extends), and the type's own card
        shows only its own members."""
        pf = r.files.get(path)
        if pf is None or types <= 0:
            return []
        scope, outer = _cursor_scope(r, path, pf, len(lines) - 1)
        first = max(0, len(lines) - 1 - RECEIVER_LINES)
        seen: set[str] = set()
        classes: set[_Entity] = set()
        words: set[str] | None = None  # the window's, read once a type is found
        named: set[str] | None = None  # the file's imports and declared types, read if need be
        out: list[tuple[Target, list[Target]]] = []
        for row in range(len(lines) - 1, first - 1, -1):
            code = _STRING.sub('""', lines[row])
            bound = _BOUND.findall(code)
            for name in (*_receivers(code), *reversed(bound)):
                if name in seen:
                    continue
                seen.add(name)
                chained = name.count(".") > (1 if name.startswith("this.") else 0)
                if chained:
                    cls = self._chain_class(r, path, name, lines)
                else:
                    cls = _receiver_class(r, path, name, scope, lines, outer)
                target = _target(r, cls)
                if cls is None or cls[0] == path or target is None or cls in classes:
                    continue  # untyped, or a type of the cursor's file, which shows it
                classes.add(cls)
                if words is None:
                    window = "\n".join(lines[_window_start(lines, outer) :])
                    # a window starting inside a doc comment: its rest is no code
                    end = window.find("*/")
                    if end >= 0 and "/*" not in window[:end]:
                        window = window[end + 2 :]
                    words = set(_IDENT.findall(_NOT_CODE.sub('""', window)))
                bare = cls[1].rsplit(".", 1)[-1]
                if bare not in words:
                    if named is None:
                        named = _named_types(pf)
                    if bare not in named:
                        continue
                members = _inherited(r, cls, path)
                if not members and name in bound:
                    continue  # a variable not used yet: its own type's card is in scope
                if not members or any(
                    r.qualnames[f][n].rsplit(".", 1)[-1] not in words for f, n in members
                ):
                    out.append((target, members))
                    if len(out) >= types:
                        return out
        return out

    def _chain_class(self, r: Resolver, path: str, name: str, lines: list[str]) -> _Entity | None:
        """The class of the field chain ``a.x`` (``this.x.y``), typed as the names the
        cursor's code writes are (``resolve_name``)."""
        found = self.resolve_name(r, path, tuple(name.split(".")), lines)
        if found is None:
            return None
        (file, node), _ = found
        return _class(r, (file, r.qualnames[file].get(node)))

    def value_members(self, r: Resolver, path: str, node: int, line: str) -> list[Target]:
        """A top-level ``const timeoutProvider: TimeoutProvider = {`` (an object of
        functions, whose card is that line) or ``const focusManager = new FocusManager()``
        (a singleton another module imports): the members its type declares, which
        ``timeoutProvider.setTimeout(`` calls, in their order, then its bases' (a
        singleton's ``subscribe`` of ``Subscribable``), at most ``receiver_names``."""
        pf, qual = r.files.get(path), r.qualnames[path].get(node, "")
        bases = pf.bases.get(qual) if pf is not None else None
        m = _DECLARED.match(line)
        if not bases or len(bases) != 1 or m is None or m["name"] != qual:
            return []
        cls = _class(r, _resolve(r, path, bases[0], None, 0))
        if cls is None:
            return []
        prefix = f"{cls[1]}."
        members = sorted(  # what the value's users may call: no constructor, no #private
            n
            for n, q in r.qualnames[cls[0]].items()
            if q.startswith(prefix)
            and "." not in q[len(prefix) :]
            and q[len(prefix) :] != "constructor"
            and not q[len(prefix) :].startswith("#")
        )
        own: list[Target] = [(cls[0], n) for n in members]
        return (own + _inherited(r, cls, ""))[: self.receiver_names]

    def receiver_key(self, qual: str) -> str:
        return qual.rsplit(".", 1)[-1]  # a member, as ``x.name`` writes it

    def pending_imports(self, pf: ParsedFile, lines: list[str]) -> set[str]:
        """The imports no call of the file makes yet (``new C()``, ``x.m()`` with ``x: C``
        and ``<C/>`` call ``C``), no declared type names (a parameter's, a result's, a
        field's, ``extends``) and no word of the code of the ``TYPE_LINES`` lines before the
        cursor outside import statements names (a local's type, a value passed on; a
        comment's ``{@link SequenceError}`` is no use); ``import type`` ones and re-exports
        left out. The file's part is read once per parse of it (an
        update replaces it)."""
        global _pending_cache
        cached, names = _pending_cache  # read once: a concurrent query may replace it
        if cached is not pf:
            called = pf.call_heads()
            called.update(part for types in pf.bases.values() for ty in types for part in ty)
            names = frozenset(
                b.name
                for b in pf.imports
                if b.level not in (TYPE_ONLY, DOC_TYPE)
                and b.name != _STAR
                and not b.name.startswith("export:")
                and b.name not in called
            )
            _pending_cache = (pf, names)
        if not names:
            return set()
        imports = set()  # the rows of import statements (not of ``export`` ones)
        for b, node in zip(pf.imports, pf.import_nodes, strict=True):
            if b.name in names and 0 <= node < pf.n_nodes:
                imports.update(range(int(pf.node_start[node]), int(pf.node_end[node]) + 1))
        first = max(0, len(lines) - 1 - TYPE_LINES)
        text = "\n".join(
            line for row, line in enumerate(lines[first:], first) if row not in imports
        )
        return set(names - set(_IDENT.findall(_NOT_CODE.sub('""', text))))

    def reserved(self, name: str) -> bool:
        return name in RESERVED or not _IDENT.fullmatch(name)

    def offers(self, binding: ImportBinding) -> bool:
        return binding.level != DOC_TYPE

    def types_only(self, binding: ImportBinding) -> bool:
        return binding.level == TYPE_ONLY


LANGUAGE = TypeScript()


def _globals(pf: ParsedFile) -> list[str]:
    """A script's top-level definitions (a file that neither imports nor exports anything
    shares one global scope with the other scripts a page loads)."""
    if pf.imports:
        return []
    return [d.name for d in pf.definitions if "." not in d.name]


def _tables(r: Resolver) -> _Tables:
    t = r.tables.get(NAMESPACE)
    if t is None:
        settings = r.settings.get(NAMESPACE) or {}
        configs, packages = settings.get("configs", {}), settings.get("packages", {})
        members = r.per_file(_own_members)
        t = r.tables[NAMESPACE] = _Tables({}, {}, {}, {}, configs, packages, {}, members)
    return t  # type: ignore[return-value]


# ---- parse-time helpers ------------------------------------------------------------------------


def _import_bindings(node: Node) -> list[ImportBinding]:
    """``import d, {a as b} from 'm'``, ``import * as m from 'm'``, ``import x = require('m')``;
    those of ``import type`` and ``import {type a}`` with level ``TYPE_ONLY``."""
    spec = _string(node.child_by_field_name("source"))
    level = TYPE_ONLY if any(c.type == "type" for c in node.children) else 0
    out = []
    for child in node.named_children:
        if child.type == "import_require_clause":
            spec = _string(child.child_by_field_name("source"))
            name = next((c for c in child.named_children if c.type == "identifier"), None)
            if spec is not None and name is not None:
                out.append(ImportBinding(_text(name), spec, None, 0))
        elif child.type == "import_clause" and spec is not None:
            for part in child.named_children:
                if part.type == "identifier":
                    out.append(ImportBinding(_text(part), spec, "default", level))
                elif part.type == "namespace_import":
                    name = next((c for c in part.named_children if c.type == "identifier"), None)
                    if name is not None:
                        out.append(ImportBinding(_text(name), spec, None, level))
                elif part.type == "named_imports":
                    for s in part.named_children:
                        if s.type != "import_specifier":
                            continue
                        name = s.child_by_field_name("name")
                        alias = s.child_by_field_name("alias") or name
                        typed = level or any(c.type == "type" for c in s.children)
                        out.append(
                            ImportBinding(_text(alias), spec, _text(name), TYPE_ONLY * typed)
                        )
    return out


def _export_bindings(node: Node) -> tuple[list[ImportBinding], str | None]:
    """An ``export`` statement's entries (``export:NAME`` -> module and symbol; "" is this
    file) and the module of an ``export * from``."""
    spec = _string(node.child_by_field_name("source"))
    out: list[ImportBinding] = []
    clause = next((c for c in node.named_children if c.type == "export_clause"), None)
    if clause is not None:
        for s in clause.named_children:
            if s.type != "export_specifier":
                continue
            name = s.child_by_field_name("name")
            alias = s.child_by_field_name("alias") or name
            out.append(ImportBinding(f"export:{_text(alias)}", spec or "", _text(name), 0))
        return out, None
    ns = next((c for c in node.named_children if c.type == "namespace_export"), None)
    if ns is not None and spec is not None:
        name = next((c for c in ns.named_children), None)
        if name is not None:
            out.append(ImportBinding(f"export:{_text(name)}", spec, None, 0))
        return out, None
    if spec is not None:
        return out, spec  # export * from 'm'
    is_default = any(c.type == "default" for c in node.children)
    is_assignment = any(c.type == "=" for c in node.children)  # TypeScript ``export = X``
    if is_default or is_assignment:
        declaration = node.child_by_field_name("declaration")
        value = node.child_by_field_name("value")
        if value is None and is_assignment:
            value = next((c for c in node.named_children), None)
        target = None
        if declaration is not None:
            target = _text(declaration.child_by_field_name("name")) or None
        elif value is not None and value.type == "identifier":
            target = _text(value)
        # an anonymous one (``export default {...}``) names nothing, but makes a module
        out.append(ImportBinding("export:default", "", target or None, 0))
        return out, None
    # ``export function f``, ``export const a = 1, b = 2``: the file is a module
    declaration = node.child_by_field_name("declaration")
    if declaration is not None and declaration.type == "ambient_declaration":
        declaration = next(iter(declaration.named_children), None)  # export declare class
    if declaration is None:
        return out, None
    names = [declaration.child_by_field_name("name")]
    if declaration.type in ("lexical_declaration", "variable_declaration"):
        names = [d.child_by_field_name("name") for d in declaration.named_children]
    for name in names:
        if name is not None and name.type in ("identifier", "type_identifier"):
            out.append(ImportBinding(f"export:{_text(name)}", "", _text(name), 0))
    return out, None


def _commonjs(lhs: Node, rhs: Node) -> tuple[list[ImportBinding], str | None]:
    """``module.exports = X`` / ``= {a, b: c}`` (entries) and ``exports.f = function`` (a
    definition named ``f``) at the top of a file."""
    target = _dotted(lhs)
    if target is None:
        return [], None
    if target == ("module", "exports"):
        if rhs.type == "identifier":
            return [ImportBinding("export:default", "", _text(rhs), 0)], None
        if rhs.type == "object":
            out = []
            for c in rhs.named_children:
                if c.type == "shorthand_property_identifier":
                    out.append(ImportBinding(f"export:{_text(c)}", "", _text(c), 0))
                elif c.type == "pair":
                    key, value = c.child_by_field_name("key"), c.child_by_field_name("value")
                    if value is not None and value.type == "identifier":
                        out.append(ImportBinding(f"export:{_text(key)}", "", _text(value), 0))
            return out, None
        return [], None
    if (
        len(target) == 2
        and target[0] == "exports"
        or (len(target) == 3 and target[:2] == ("module", "exports"))
    ):
        name = target[-1]
        if rhs.type in ("function_expression", "arrow_function", "class", "function"):
            return [], name
        if rhs.type == "identifier" and _text(rhs) != name:
            return [ImportBinding(f"export:{name}", "", _text(rhs), 0)], None
    return [], None


def _is_require(declarator: Node) -> bool:
    value = declarator.child_by_field_name("value")
    while value is not None and value.type == "await_expression":
        value = value.named_children[0] if value.named_children else None
    if value is None or value.type != "call_expression":
        return False
    fn = value.child_by_field_name("function")
    return (
        fn is not None
        and fn.type in ("identifier", "import")
        and _text(fn)
        in (
            "require",
            "import",
        )
    )


def _require_bindings(name: Node, spec: str) -> list[ImportBinding]:
    """``const x = require('m')`` binds ``x`` to the module; ``const {a, b: c} = require('m')``
    binds ``a`` and ``c`` to its exports."""
    if name.type == "identifier":
        return [ImportBinding(_text(name), spec, None, 0)]
    out = []
    if name.type == "object_pattern":
        for c in name.named_children:
            if c.type == "shorthand_property_identifier_pattern":
                out.append(ImportBinding(_text(c), spec, _text(c), 0))
            elif c.type == "pair_pattern":
                key, value = c.child_by_field_name("key"), c.child_by_field_name("value")
                if value is not None and value.type == "identifier":
                    out.append(ImportBinding(_text(value), spec, _text(key), 0))
    return out


def _param_type(param: Node) -> tuple[str, ...]:
    """A parameter's named type, () when it has none."""
    annotation = param.child_by_field_name("type")
    return (annotation and _type_parts(_text(annotation))) or ()


def _callback_params(fn: Node) -> list[tuple[Node, str, tuple[str, ...]]]:
    """The untyped parameters of a function passed as argument ``i`` of a call ``f(...)``,
    each typed as ``f``'s parameter ``i`` types it: ``(*f, "#i", "#j")`` for the ``j``-th;
    of one passed as property ``p`` of an object literal that is argument ``i`` (``p: (x) =>
    ...``, ``p(x) {...}``), as the function type of that property of ``f``'s parameter
    ``i``'s declared type types it: ``(*f, "#i", "p", "#j")``."""
    key: tuple[str, ...] = ()
    item: Node | None = fn  # the call's argument holding the function
    if fn.type == "method_definition":
        key, item = (_text(fn.child_by_field_name("name")),), fn.parent
    elif fn.parent is not None and fn.parent.type == "pair":
        key, item = (_text(fn.parent.child_by_field_name("key")),), fn.parent.parent
    args = None if item is None else item.parent
    call = None if args is None else args.parent
    callee = None if call is None else call.child_by_field_name("function")
    parts = None if callee is None else _dotted(callee)
    if parts is None or item is None or args is None:
        return []
    arg = [c.id for c in args.named_children].index(item.id)
    parts = (*parts, f"#{arg}", *key)
    single = fn.child_by_field_name("parameter")  # ``x => ...``
    params = [single] if single is not None else []
    if single is None:
        formal = fn.child_by_field_name("parameters")
        params = [] if formal is None else formal.named_children
    out = []
    for j, p in enumerate(params):
        name = p if p.type == "identifier" else p.child_by_field_name("pattern")
        if name is not None and name.type == "identifier" and p.child_by_field_name("type") is None:
            out.append((name, _text(name), (*parts, f"#{j}")))
    return out


def _heritage_types(node: Node) -> list[Node]:
    """The type expressions of a class's or interface's ``extends``/``implements``."""
    out = []
    for clause in node.named_children if node.type == "class_heritage" else [node]:
        if clause.type == "extends_clause":
            value = clause.child_by_field_name("value")
            if value is not None:
                out.append(value)
        elif clause.type in ("implements_clause", "extends_type_clause"):
            for t in clause.named_children:
                if t.type == "generic_type":
                    t = t.child_by_field_name("name") or t
                out.append(t)
        else:  # JavaScript: ``class A extends B``
            out.append(clause)
    return out


# ---- configuration -----------------------------------------------------------------------------

_JSONC = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/|,(?=\s*[}\]])', re.S)


def _read_config(root: Path, rel: str, depth: int = 0) -> dict | None:
    """A ``tsconfig.json``'s module resolution: its baseUrl and paths, directories relative to
    the repository (``extends`` followed within it); None when the file is absent or is not
    JSON with comments. Entries leading out of the repository are dropped."""
    file = root / rel
    try:
        text = file.read_text(encoding="utf-8")
        data = json.loads(_JSONC.sub(lambda m: m.group() if m.group()[0] == '"' else "", text))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    here = posixpath.dirname(rel)
    config: dict = {"base": None, "paths": []}
    parent = data.get("extends")
    if isinstance(parent, str) and parent.startswith(".") and depth < 5:
        parent_rel = _inside(posixpath.join(here, parent))
        if parent_rel is not None:
            if not parent_rel.endswith(".json"):
                parent_rel += ".json"
            inherited = _read_config(root, parent_rel, depth + 1)
            if inherited is not None:
                config = inherited
    options = data.get("compilerOptions")
    if not isinstance(options, dict):
        return config
    base = options.get("baseUrl")
    if isinstance(base, str):
        config["base"] = _inside(posixpath.join(here, base))
    paths = options.get("paths")
    if isinstance(paths, dict):
        # targets are relative to baseUrl when it is set, else to this file's directory
        origin = config["base"] if isinstance(base, str) else here
        if origin is not None:
            config["paths"] = [
                [pattern, [t for x in targets if (t := _inside(posixpath.join(origin, x)))]]
                for pattern, targets in paths.items()
                if isinstance(pattern, str)
                and isinstance(targets, list)
                and all(isinstance(x, str) for x in targets)
            ]
    return config


def _read_package(root: Path, directory: str) -> tuple[str, list[str]] | None:
    """A ``package.json``'s name and entry files (relative to the repository), or None."""
    try:
        data = json.loads((root / directory / "package.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return None
    entries = [
        e
        for key in ("source", "types", "typings", "module", "main")
        if isinstance(data.get(key), str)
        and (e := _inside(posixpath.join(directory, data[key]))) is not None
    ]
    return data["name"], entries


def _inside(path: str) -> str | None:
    """A repository-relative path normalised ("" is the root); None outside the repository."""
    norm = posixpath.normpath(path)
    if norm == ".":
        return ""
    if norm.startswith("../") or norm == ".." or norm.startswith("/"):
        return None
    return norm


# ---- resolution --------------------------------------------------------------------------------


def _module(r: Resolver, path: str, spec: str) -> str | None:
    """The repository file a module specifier written in ``path`` names, or None."""
    if not spec:
        return path
    t = _tables(r)
    key = (posixpath.dirname(path), spec)
    hit = t.modules.get(key)
    if hit is None:
        tried: list[str] = []
        hit = t.modules[key] = (_find_module(r, key[0], spec, tried), tuple(tried))
    for k in hit[1]:
        r.note_key(NAMESPACE, k)
    return hit[0]


def _find_module(r: Resolver, directory: str, spec: str, tried: list[str]) -> str | None:
    if spec.startswith("."):
        base = _inside(posixpath.join(directory, spec))
        return None if base is None else _probe(r, base, tried)
    config = _config_of(r, directory) or {"base": None, "paths": []}
    for pattern, targets in config["paths"]:
        if "*" in pattern:
            head, _, tail = pattern.partition("*")
            if not (spec.startswith(head) and spec.endswith(tail)) or len(spec) < len(head + tail):
                continue
            star = spec[len(head) : len(spec) - len(tail)]
            candidates = [t.replace("*", star, 1) for t in targets]
        elif pattern == spec:
            candidates = targets
        else:
            continue
        for c in candidates:
            found = _probe(r, c, tried)
            if found is not None:
                return found
    if config["base"] is not None:
        found = _probe(r, _inside(posixpath.join(config["base"], spec)) or "", tried)
        if found is not None:
            return found
    return _package_module(r, spec, tried)


def _package_module(r: Resolver, spec: str, tried: list[str]) -> str | None:
    """``@scope/pkg`` or ``pkg/sub/path`` of a package of the repository: its entry files
    (``source``, ``types``, ``module``, ``main``; built ones looked for under ``src`` too),
    else ``src/index`` or ``index``; a path inside it, also under ``src``."""
    packages = _tables(r).packages
    name = spec
    while name not in packages:
        if "/" not in name:
            return None
        name = name.rsplit("/", 1)[0]
    directory, entries = packages[name]
    sub = spec[len(name) + 1 :]
    if sub:
        candidates = [posixpath.join(directory, sub), posixpath.join(directory, "src", sub)]
    else:
        candidates = [c for e in entries for c in (e, _source_of(directory, e))]
        candidates += [posixpath.join(directory, *rest) for rest in (("src", "index"), ("index",))]
    for c in candidates:
        if c is not None:
            found = _probe(r, c, tried)
            if found is not None:
                return found
    return None


def _outside(path: str, spec: str) -> str:
    """A relative ``spec`` written in ``path`` that leaves the repository (``../../src``
    from ``tests/a.ts``, the repository being that ``src``) as the path it names from the
    repository's parent (``src``), which ``_own_package`` reads as a bare specifier; any
    other specifier as it is."""
    if not spec.startswith("."):
        return spec
    norm = posixpath.normpath(posixpath.join(posixpath.dirname(path), spec))
    if not norm.startswith("../"):
        return spec  # inside the repository: what does not resolve there stays unresolved
    return "/".join(p for p in norm.split("/") if p != "..")


def _own_package(r: Resolver, spec: str) -> str | None:
    """The module a bare ``spec`` names when the repository is a package's sources without
    its ``package.json`` (none is indexed, so neither the package's name nor its
    ``tsconfig.json`` aliases are known): a package's tests and examples import it by its
    own name (``from 'pkg'``, ``from '@scope/pkg/sub'``) or through an alias of its source
    folder (``from '@internal/query/core'``, ``paths: {"@internal/*": ["src/*"]}``). So the
    longest tail of the specifier's path (its first segment dropped) that is a module below
    the root or ``src/``, else the package's entry (``index`` or ``src/index``); a relative
    path out of the repository comes here as the path it names from the repository's
    parent (``_outside``: ``'../../src'`` from ``tests/``, the sources being that ``src``).
    Only named and namespace imports and ``export *`` come here (``_binding``, ``_export``):
    the name, or the namespace's member (``import * as z from 'zod/v4'``, ``z.string()``),
    must then be exported there, so a name of another package resolves only if that module
    exports a definition of that very name."""
    t = _tables(r)
    if t.packages or spec.startswith((".", "/")):
        return None
    key = ("/", spec)  # no repository directory is "/": the key is this lookup's own
    hit = t.modules.get(key)
    if hit is None:
        parts = spec.split("/")
        tails = ["/".join(parts[k:]) for k in range(1, len(parts)) if parts[k]]
        tried: list[str] = []
        found = None
        for c in [p for t in tails for p in (t, f"src/{t}")] + ["index", "src/index"]:
            found = _probe(r, c, tried)
            if found is not None:
                break
        hit = t.modules[key] = (found, tuple(tried))
    for k in hit[1]:
        r.note_key(NAMESPACE, k)
    return hit[0]


def _source_of(directory: str, entry: str) -> str | None:
    """``dist/index.js`` of a package as ``src/index``: where its sources usually are."""
    rel = entry[len(directory) :].lstrip("/") if directory else entry
    head, _, rest = rel.partition("/")
    if head not in ("dist", "lib", "build", "esm", "cjs", "out") or not rest:
        return None
    return posixpath.join(directory, "src", rest)


def _probe(r: Resolver, base: str, tried: list[str]) -> str | None:
    """``base`` as a file, with an extension, or as a directory's ``index``: the first that is
    a file of the repository (each one tried is added to ``tried`` as a ``file:`` key)."""
    stem = base
    for ext in (".js", ".jsx", ".mjs", ".cjs"):
        if base.endswith(ext):  # TypeScript's ``./a.js`` is ``a.ts`` before compilation
            stem = base[: -len(ext)]
            break
    candidates = [base] if base and base != stem or base.endswith(_EXTENSIONS) else []
    if stem:
        candidates += [stem + e for e in _EXTENSIONS]
    candidates += [posixpath.join(stem, "index" + e) if stem else "index" + e for e in _EXTENSIONS]
    for c in candidates:
        tried.append(f"file:{c}")
        pf = r.files.get(c)
        if pf is not None and pf.language in ("javascript", "typescript", "tsx"):
            return c
    return None


def _config_of(r: Resolver, directory: str) -> dict | None:
    """The configuration of the nearest directory at or above ``directory`` that has one."""
    configs = _tables(r).configs
    if not configs:
        return None
    d = directory
    while True:
        if d in configs:
            return configs[d]
        if not d:
            return None
        d = posixpath.dirname(d)


def _local(r: Resolver, path: str, name: str, scope: str | None, depth: int) -> _Entity | None:
    """What a name written in ``path`` (inside the definition ``scope``) means: a definition
    of an enclosing function, of the file, or an import."""
    defs = r.defs.get(path, {})
    if scope:
        classes = r.classes.get(path, set())
        parts = scope.split(".")
        for end in range(len(parts), 0, -1):
            outer = ".".join(parts[:end])
            if outer in classes:
                continue  # a class's members are not in scope by their bare names
            r.note_lookup(path, f"{outer}.{name}")
            if f"{outer}.{name}" in defs:
                return path, f"{outer}.{name}"
    r.note_lookup(path, name)
    if name in defs:
        return path, name
    t = _tables(r)
    b = t.imports.get(path, {}).get(name)
    if b is not None:
        return _binding(r, path, b, depth + 1)
    if not r.files[path].imports:  # a script: another script's global, when only one has it
        r.note_key(NAMESPACE, f"global:{name}")
        found = t.globals.get(name, [])
        if len(found) == 1 and (not is_test(found[0][0]) or is_test(path)):
            return found[0]
    return None


def _binding(r: Resolver, path: str, b: ImportBinding, depth: int) -> _Entity | None:
    if depth > _MAX_DEPTH:
        return None
    if not b.module:  # ``export {a as b}`` of this file's own name
        return None if b.symbol is None else _local(r, path, b.symbol, None, depth + 1)
    target = _module(r, path, b.module)
    if target is None and b.symbol != "default":
        target = _own_package(r, _outside(path, b.module))
    if target is None:
        return None
    if b.symbol is None:
        return target, None
    return _export(r, target, b.symbol, depth + 1)


def _export(r: Resolver, path: str, name: str, depth: int) -> _Entity | None:
    """What module ``path`` exports as ``name``: its own definition, an export entry, or what
    one of its ``export *`` modules exports so."""
    if depth > _MAX_DEPTH:
        return None
    r.note_lookup(path, name)
    if name in r.defs.get(path, {}):
        return path, name
    t = _tables(r)
    r.note_lookup(path, f"export:{name}")
    b = t.exports.get(path, {}).get(name)
    if b is not None:
        return _binding(r, path, b, depth + 1)
    r.note_lookup(path, _STAR)
    if name == "default":
        return None
    for spec in t.stars.get(path, ()):
        target = _module(r, path, spec) or _own_package(r, _outside(path, spec))
        if target is not None and target != path:
            found = _export(r, target, name, depth + 1)
            if found is not None:
                return found
    return None


def _member(r: Resolver, path: str, qual: str, name: str, depth: int) -> _Entity | None:
    """``qual.name``: a member of a class, interface, enum or namespace, inherited ones
    included, or of a ``const``'s declared or constructed type (its ``bases``, then its
    union's alternatives, the first that has it). Outside a class, interface or enum the
    declared type comes first: a function's members are its return type's (``slice.reducer``
    on a ``createSlice()`` result is ``Slice.reducer``); only where that type has none is a
    definition local to the function's body taken (a factory whose result is an object of
    its local functions)."""
    if depth > _MAX_DEPTH:
        return None
    r.note_lookup(path, f"{qual}.{name}")
    own = f"{qual}.{name}" in r.defs.get(path, {})
    if qual in r.classes.get(path, ()) and (own or f"{qual}.{name}" in r.files[path].bases):
        return path, f"{qual}.{name}"  # a member, or a field only typed (no definition)
    bases = r.files[path].bases
    r.note_lookup(path, f"{qual}{_UNION}")  # re-resolved when the alternatives change
    for base in (*bases.get(qual, ()), *bases.get(f"{qual}{_UNION}", ())):
        found = _resolve_base(r, path, qual, base, depth + 1)
        if found is not None and found[1] is not None:
            hit = _member(r, found[0], found[1], name, depth + 1)
            if hit is not None:
                return hit
    return (path, f"{qual}.{name}") if own else None


def _class(r: Resolver, entity: _Entity | None, depth: int = 0) -> _Entity | None:
    """A class, interface or enum as it is; a field, ``const`` or function as the class of
    its declared type (``const { source } = this``: ``source`` has ``Observable``'s members),
    followed through functions that return what another returns (``resolve(pos) { return
    ResolvedPos.resolveCached(this, pos) }``: a ResolvedPos); None for anything else."""
    if entity is None or entity[1] is None or depth > _MAX_DEPTH:
        return None
    file, qual = entity
    if qual in r.classes.get(file, ()):
        return entity
    for base in r.files[file].bases.get(qual, ())[:1]:
        return _class(r, _resolve_base(r, file, qual, base, 1), depth + 1)
    return None


def _resolve_base(
    r: Resolver, path: str, qual: str, base: tuple[str, ...], depth: int
) -> _Entity | None:
    """What a base of the definition ``qual`` names; a method's declared result ``this`` is
    the class around it (of a member read through the method, ``_resolve`` keeps the
    receiver, a subclass's instance)."""
    if base == ("this",):
        cls = _class_of(r, path, qual)
        return None if cls is None else (path, cls)
    return _resolve(r, path, base, None, depth)


def _class_of(r: Resolver, path: str, scope: str | None) -> str | None:
    """The innermost class around the definition ``scope``."""
    if not scope:
        return None
    classes = r.classes.get(path, set())
    parts = scope.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in classes:
            return ".".join(parts[:end])
    return None


def _resolve(
    r: Resolver, path: str, parts: tuple[str, ...], scope: str | None, depth: int
) -> _Entity | None:
    """The definition or module a dotted name written in ``path`` refers to."""
    if depth > _MAX_DEPTH:
        return None
    head = parts[0]
    if head in ("this", "super"):
        cls = _class_of(r, path, scope)
        if cls is None or len(parts) < 2:
            return None
        if head == "this":
            current = _member(r, path, cls, parts[1], depth + 1)
        else:
            current = None
            for base in r.files[path].bases.get(cls, ()):
                found = _resolve(r, path, base, None, depth + 1)
                if found is not None and found[1] is not None:
                    current = _member(r, found[0], found[1], parts[1], depth + 1)
                    if current is not None:
                        break
        rest = parts[2:]
    else:
        current, rest = _local(r, path, head, scope, depth), parts[1:]
    while rest:
        if current is None:
            return None
        file, qual = current
        if rest[0] == ARRAY:  # an array of ``current``: its element, or none of its members
            step = _element_step(rest[1:])
            if step == 0:
                return None
            rest = rest[1 + step :]
            continue
        # ``xs[i]``, ``xs.map((x) =>``: an element of the array ``current`` holds (of
        # anything else, its own ``map``'s parameter)
        step = _element_step(rest) if qual is not None else 0
        element = _element(r, file, qual, depth + 1) if step else None
        if element is not None:
            current, rest = element, rest[step:]
            continue
        if qual is not None and _ARGUMENT.fullmatch(rest[0]):
            if len(rest) > 1 and _ARGUMENT.fullmatch(rest[1]):
                current = _callback_param(r, file, qual, rest[0], rest[1], depth + 1)
                rest = rest[2:]
            else:  # ``f({p: (x) => ...})``: the parameter's type (a member of it next)
                current, rest = _parameter(r, file, qual, rest[0], depth + 1), rest[1:]
            continue
        if qual is None:
            current = _export(r, file, rest[0], depth + 1)
        else:
            current = _member(r, file, qual, rest[0], depth + 1)
            if len(rest) > 1 and current is not None and _returns_this(r, current):
                current = file, qual  # ``s.min(1).max``: ``min(): this`` gives ``s`` back
        rest = rest[1:]
    return current


def _returns_this(r: Resolver, entity: _Entity) -> bool:
    """Whether the method ``entity`` declares its result ``this``: the receiver it was
    called on, whatever subclass that is."""
    return r.files[entity[0]].bases.get(entity[1] or "", [()])[0] == ("this",)


def _element_step(rest: tuple[str, ...]) -> int:
    """How many of ``rest``'s first parts read an element of an array: 1 for ``ELEMENT``
    (``xs[i]``) or a map's ``get`` with a member of its value next (``m.get(k).run``), 3
    for an element callback's parameter (``xs.map((x) =>``: "map", "#0", "#0"); 0
    otherwise."""
    if rest[:1] == (ELEMENT,) or (rest[:1] == (_VALUE_GET,) and len(rest) > 1):
        return 1  # (``m.get`` itself is the map's own method, not a value)
    if len(rest) >= 3 and rest[1] == "#0" and rest[2] in _ELEMENT_CALLBACKS.get(rest[0], ()):
        return 3
    return 0


def _element(r: Resolver, path: str, qual: str, depth: int) -> _Entity | None:
    """The class of the elements of the array that the definition ``qual`` (a field, a
    ``const``, a getter) holds: its declared type's element (``nodes: NodeContext[]``), or
    the elements of what its declared type or returned value is (``get top() { return
    this.nodes[this.open] }``)."""
    if depth > _MAX_DEPTH:
        return None
    r.note_lookup(path, qual)  # re-resolved when ``qual``'s bases change
    for base in r.files[path].bases.get(qual, ())[:1]:
        if base[-1] == ARRAY:
            return _class(r, _resolve(r, path, base[:-1], None, depth + 1))
        found = _resolve(r, path, base, None, depth + 1)
        if found is not None and found[1] is not None and found[1] not in r.classes[found[0]]:
            return _element(r, found[0], found[1], depth + 1)
    return None


def _callback_param(
    r: Resolver, path: str, qual: str, arg: str, param: str, depth: int
) -> _Entity | None:
    """The declared type of parameter ``param`` ("#j") of the function that ``qual`` takes as
    argument ``arg`` ("#i"): what a callback passed there is called with."""
    r.note_lookup(path, f"{qual}{arg}.{param}")  # re-resolved when ``qual{arg}`` changes
    types = r.files[path].bases.get(f"{qual}{arg}")
    if types is None:  # a parameter typed by a function type's name: ``cb: Listener``
        found = _parameter(r, path, qual, arg, depth + 1)
        return None if found is None else _parameter(r, found[0], found[1], param, depth + 1)
    j = int(param[1:])
    if j >= len(types) or not types[j]:
        return None
    found = _resolve(r, path, types[j], None, depth + 1)
    return found if found is not None and found[1] is not None else None


def _parameter(r: Resolver, path: str, qual: str, arg: str, depth: int) -> _Entity | None:
    """The definition typing parameter ``arg`` ("#i") of ``qual``: a function, a method, a
    function-typed property or type alias (their "qual(" bases); else through ``qual``'s
    declared type or maker: a field or ``const`` typed by a function type's name (``effect:
    Effect``), a ``const`` a factory made (``const create = build()``: the parameters of the
    function ``build`` returns, its "build()(" bases)."""
    if depth > _MAX_DEPTH:
        return None
    r.note_lookup(path, f"{qual}(.{arg}")  # re-resolved when ``qual(`` changes
    bases = r.files[path].bases
    types, where = bases.get(f"{qual}("), path
    if types is None:
        r.note_lookup(path, f"{qual}.{arg}")  # re-resolved when ``qual``'s bases change
    for base in bases.get(qual, ()) if types is None else ():
        found = _resolve(r, path, base, None, depth + 1)
        if found is None or found[1] is None:
            continue
        file, name = found
        r.note_lookup(file, f"{name}()(.{arg}")
        r.note_lookup(file, f"{name}(.{arg}")
        where, held = file, r.files[file].bases
        types = held.get(f"{name}()(", held.get(f"{name}("))
        if types is not None:
            break
    i = int(arg[1:])
    if types is None or i >= len(types) or not types[i]:
        return None
    found = _resolve(r, where, types[i], None, depth + 1)
    return found if found is not None and found[1] is not None else None


#: a variable a line binds (``const sub = new SafeSubscriber({``): a receiver the next lines use
_BOUND = re.compile(r"(?<![\w$.])(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*[:=]")


def _named_types(pf: ParsedFile) -> set[str]:
    """The names the file's code gives types by: what it imports (not a doc comment's
    ``@typedef``) and the parts of its declared types (a field's ``contentMatch:
    ContentMatch``, a method's result)."""
    out = {b.name for b in pf.imports if b.level != DOC_TYPE}
    out.update(part for types in pf.bases.values() for ty in types for part in ty)
    return out


def _receivers(code: str) -> Iterable[str]:
    """The receivers whose members a line of code reads, the last first; a chain of fields
    (``top.match.``) is read whole, then through its shorter heads (``top.``)."""
    for m in reversed(list(_RECEIVER.finditer(code))):
        parts = re.sub(r"[\s?!]", "", m["receiver"]).split(".")
        for end in range(len(parts), 0, -1):
            yield ".".join(parts[:end])


def _receiver_class(
    r: Resolver,
    path: str,
    name: str,
    scope: str | None,
    lines: list[str],
    first: int,
) -> _Entity | None:
    """The class or interface of the receiver ``name`` (``x`` or ``this.x``) at the cursor,
    as ``resolve_name`` types one, but not by a doc comment (its class is a card no code
    names); None for a name of the file or an import (``Foo.of``: its own card shows its
    members)."""
    if name.startswith("this."):
        found = _resolve(r, path, ("this", name[5:]), scope, 0)
        if found is not None:
            return _class(r, found)
        ty = _receiver_type(lines, first, name, False)
        ty = None if ty is None else _outer_typed(r, path, ty, scope, lines, first, False)
    elif _local(r, path, name, scope, 0) is not None:
        return None
    else:
        ty = _receiver_type(lines, first, name, False)
        ty = None if ty is None else _outer_typed(r, path, ty, scope, lines, first, False)
    return None if ty is None else _class(r, _resolve(r, path, ty, scope, 0))


def _inherited(r: Resolver, cls: _Entity, path: str) -> list[Target]:
    """The members of the bases of the class or interface ``cls`` (intersections' parts,
    then union alternatives, theirs in turn), one per name, the nearest declaration first:
    those neither ``cls`` itself declares (its card shows them) nor the file ``path`` does
    (the cursor's file shows them); at most ``_MAX_INHERITED``."""
    out: dict[str, Target | None] = {}
    todo: list[_Entity | None] = [cls]
    done: set[_Entity] = set()
    while todo and len(out) < _MAX_INHERITED:
        entity = todo.pop(0)
        if entity is None or entity[1] is None or entity in done or len(done) > _MAX_DEPTH * 4:
            continue
        done.add(entity)
        file, qual = entity
        for bare, node in _tables(r).members[file].get(qual, ()):
            if bare not in out:
                out[bare] = None if entity == cls or file == path else (file, node)
        bases = r.files[file].bases
        for base in (*bases.get(qual, ()), *bases.get(f"{qual}{_UNION}", ())):
            todo.append(_class(r, _resolve(r, file, base, None, 1)))
    return [t for t in out.values() if t is not None][:_MAX_INHERITED]


def _own_members(pf: ParsedFile) -> dict[str, list[tuple[str, int]]]:
    """A file's members (not a constructor, not one nested deeper) by the qualified name of
    their class or interface, each as (its own name, its node), in order: a table of the
    family's (``_Tables.members``), since ``_inherited`` reads a type's bases' at every
    cursor."""
    owners: dict[str, list[tuple[str, int]]] = {}
    for d in pf.definitions:
        owner, _, bare = d.name.rpartition(".")
        if owner and bare != "constructor":
            owners.setdefault(owner, []).append((bare, d.node))
    return owners


def _target(r: Resolver, entity: _Entity | None) -> Target | None:
    """The definition node of an entity; a module stands for its default export (a
    ``require``d module called, ``new`` of a module)."""
    if entity is None:
        return None
    file, qual = entity
    if qual is None:
        found = _export(r, file, "default", 0)
        if found is None or found[1] is None:
            return None
        file, qual = found
    node = r.defs.get(file, {}).get(qual)
    return None if node is None else (file, node)


# ---- query time ----------------------------------------------------------------------------------

# the last parse asked for its pending imports, and them (one tuple, replaced whole)
_pending_cache: tuple[ParsedFile | None, frozenset[str]] = (None, frozenset())

_scope_cache: dict[tuple[str, int], tuple[ParsedFile, tuple[str | None, int]]] = {}


def _cursor_scope(r: Resolver, path: str, pf: ParsedFile, row: int) -> tuple[str | None, int]:
    """The innermost definition whose span holds the cursor's row (the buffer may end at the
    cursor: a definition reaching the file's last line holds it), and the first row of the
    outermost one (-1: none), where the types the cursor can see are declared."""
    hit = _scope_cache.get((path, row))
    if hit is not None and hit[0] is pf:
        return hit[1]
    best: tuple[int, int, str] | None = None
    first = -1
    last = pf.line_owner.size - 1
    for d in pf.definitions:
        start, end = int(pf.node_start[d.node]), int(pf.node_end[d.node])
        if start < row and (end >= row or end >= last):
            key = (start, -end, d.name)
            if best is None or key[:2] > best[:2]:
                best = key
            first = start if first < 0 else min(first, start)
    found = (None if best is None else best[2], first)
    if len(_scope_cache) > 64:
        _scope_cache.clear()
    _scope_cache[(path, row)] = (pf, found)
    return found


_TYPED = re.compile(
    # a loop over an array's elements: ``for (const x of this.xs)``
    r"(?<![\w$.])for\s*\(\s*(?:const|let|var)\s+(?P<each>[A-Za-z_$][\w$]*)\s+of\s+"
    r"(?P<items>(?:this|[A-Za-z_$][\w$]*)(?:\s*[?!]?\.\s*[A-Za-z_$#][\w$]*)*)\s*!?\s*\)"
    # a destructuring of a receiver's members: ``const { source, a: b } = this.x``
    r"|(?<![\w$.])(?:(?:const|let|var)\s*\{(?P<fields>[^{}=;]*)\}\s*=\s*"
    r"(?P<holder>(?:this|[A-Za-z_$][\w$]*)(?:\.[A-Za-z_$][\w$]*)*)\s*(?=;|\n|$)"
    # a type parameter's constraint: ``<TRouter extends AnyRouter,`` (``_assignments`` checks
    # the ``<`` or ``,`` before it: ``class A extends B`` is no type parameter)
    r"|(?P<tparam>[A-Z][\w$]*)\s+extends\s+"
    r"(?P<constraint>(?:[A-Za-z_$][\w$]*\.)*[A-Za-z_$][\w$]*)(?=\s*[,>=<])"
    r"|(?:const|let|var)\s+(?P<called>[A-Za-z_$][\w$]*)\s*=\s*(?:await\s+)?"
    # a chain of calls too: ``const r = combine(a).lazy<T>()`` is ``combine.lazy``'s result
    r"(?P<result>[A-Za-z_$][\w$]*(?:\.[A-Za-z_$#][\w$]*)*"
    r"(?:\s*(?:<[^;()]*>)?\((?:[^()]|\([^()]*\))*\)\s*[!?]?\.\s*[A-Za-z_$#][\w$]*"
    r"(?:\.[A-Za-z_$#][\w$]*)*)*)"
    r"\s*(?:<[^;()]*>)?\("
    # a member read or another name: ``let parent = this.parent``, ``let node = doc``, or
    # an element of one: ``let next = node.marks[i]``; a field so assigned (``this.store =
    # store`` in a constructor)
    r"|(?:(?:const|let|var)\s+|(?<![\w$.])(?=this\.))(?P<read>(?:this\.)?[A-Za-z_$][\w$]*)\s*=\s*"
    r"(?P<chain>(?:this|[A-Za-z_$][\w$]*)"
    r"(?:\s*[?!]?\.\s*[A-Za-z_$#][\w$]*)*)(?P<index>\[[^\[\]\n]*\])?[ \t]*!?[ \t]*"
    r"(?=[;,)]|$|\n(?![ \t]*(?:\??\.|as\b)))"  # not a chain or cast going on below
    r"|(?:const|let|var)\s+(?P<untyped>[A-Za-z_$][\w$]*)\s*=(?!\s*new\b)(?![=>])"
    r"|(?P<name>(?:this\.)?[A-Za-z_$][\w$]*)\s*[?!]?\s*"
    # a type's last part is capitalised: ``{key: value.attr}`` is not an annotation
    r"(?::\s*(?P<annot>(?:readonly\s+)?(?:[A-Za-z_$][\w$]*\.)*[A-Z][\w$]*(?:<[^=;{}()]*>)?"
    r"(?:\[\])?(?:\s*\|\s*(?:null|undefined))*)(?![\w$.\[])"
    r"|=\s*new\s+(?P<new>[A-Za-z_$][\w$.]*)(?P<targs>\s*<[^;()]*>)?)"
    # an arrow function passed to a call: ``operate((source, subscriber) => {``
    r"|(?P<callee>[A-Za-z_$][\w$]*(?:\.[A-Za-z_$#][\w$]*)*)\s*(?:<[^;()]*>)?\((?P<before>[^(){}]*?)"
    r"(?:async\s+)?(?:\((?P<params>[^()]*)\)|(?P<param>[A-Za-z_$][\w$]*))\s*"
    r"(?::[^=;{}()]*)?=>)"
    # a function that is property ``key`` of an object literal: ``key: (a, b) =>``, ``key: a
    # =>``, ``key: function (a) {``, ``key(a) {`` (``_object_call`` finds the call)
    # (the parameters are looked ahead at, not consumed: an annotation there types them too)
    r"|(?<![\w$.])(?P<key>[A-Za-z_$][\w$]*)(?=\s*(?::\s*(?:async\s+)?"
    r"(?:\((?P<kparams>[^()]*)\)\s*(?::[^=;{}()]*)?=>|(?P<kparam>[A-Za-z_$][\w$]*)\s*=>"
    r"|function\b[^(]*\((?P<fparams>[^()]*)\))|\((?P<mparams>[^()]*)\)\s*(?::[^=;{}()]*)?\{))"
)
# the rest of ``const x = ...`` when it ends with a cast ``as Foo`` (``as unknown as Foo``
# too), over the lines a chain continues on (``.transformer as CombinedDataTransformer``)
_AS_CAST = re.compile(
    r"(?:[^;{}=()\n]|\((?:[^()]|\([^()]*\))*\)|\n\s*(?=\??\.))*?\bas\s+"
    r"(?P<cast>(?:[A-Za-z_$][\w$]*\.)*[A-Z][\w$]*(?:<[^=;{}()]*>)?)\s*(?:;|\n|$)"
)
# a call's arguments in a chain, and the blanks and ``!``/``?`` up to the next ``.``
_CALL_ARGUMENTS = re.compile(r"\s*(?:<[^;()]*>)?\((?:[^()]|\([^()]*\))*\)\s*[!?]?|\s+")
# a receiver whose member is read: ``x.``, ``this.x.`` or a chain of fields, ``a.x.`` (not
# ``x..``, nor a chain through a call or an index)
_RECEIVER = re.compile(
    r"(?<![\w$.])(?P<receiver>[A-Za-z_$][\w$]*(?:\s*[?!]?\.\s*[A-Za-z_$][\w$]*)*)"
    r"\s*[?!]?\.\s*[A-Za-z_$]"
)
_STRING = re.compile(r"""("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`[^`]*`|//[^\n]*)""")
# the same with block comments too (a JSDoc ``{@link SequenceError}`` names no use of it)
_NOT_CODE = re.compile(_STRING.pattern[:-1] + r"|/\*.*?\*/)", re.S)
# the last query's buffer, whether doc comments' types were read, and its types: one query
# resolves many names over the same lines (one tuple, replaced whole, so that a concurrent
# query never reads another's half)
_types_cache: tuple[list[str] | None, bool, dict[str, tuple[str, ...]]] = (None, False, {})
# the lines above the window of the last query's buffer, joined, with each row's offset, and
# the types found there by name
_earlier_cache: tuple[list[str] | None, str, list[int], dict[str, tuple[str, ...] | None]] = (
    None,
    "",
    [],
    {},
)
#: lines above the window searched for a receiver's type (the cost stays bounded in long files)
EARLIER_LINES = 2000
#: lines read after a line naming a receiver above the window, for a type written over several
_DECLARATION_LINES = 3


def _window_start(lines: list[str], first: int) -> int:
    """The first row whose types the cursor sees: from the outermost definition around the
    cursor (as the index last saw it: a few rows more, for lines deleted above it since), at
    most ``TYPE_LINES`` back. ``first``: that definition's first row (-1: none)."""
    start = len(lines) - 1 - TYPE_LINES
    if first >= 0:
        start = max(start, first - 10)
    return max(0, start)


def _assignments(text: str) -> Iterable[tuple[str, tuple[str, ...]]]:
    """``(name, type)`` for each name that ``text`` (code) types, in order: annotations,
    ``new``, a cast (``const x = y as Foo``), the result of a call (``const x = f()``:
    ``f``'s return type), a member read or another name (``const x = a.b``: as ``a.b`` is
    typed; ``a.b[i]``: an element of it), a loop's element (``for (const x of xs)``), a
    callback's parameters (as the function it is passed to types them: ``xs.map((x) =>``
    an element of ``xs``) and destructured members (``const { a } = x``: ``x.a``); ``()``
    for ``const x = ...`` otherwise, which forgets what an earlier ``x: Foo`` said."""
    stripped = _STRING.sub('""', text)
    for m in _TYPED.finditer(stripped):
        if m["holder"]:  # ``const { a, b: c } = x``: ``a`` is ``x.a``, ``c`` is ``x.b``
            holder = tuple(m["holder"].split("."))
            for field in m["fields"].split(","):
                key, _, name = field.partition(":")
                key, name = key.strip(), (name or key).strip()
                if _IDENT.fullmatch(key) and _IDENT.fullmatch(name) and name not in RESERVED:
                    yield name, (*holder, key)
        elif m["tparam"]:  # ``<T extends Foo>``: a ``T`` has ``Foo``'s members
            before = stripped[: m.start()].rstrip()
            ty = _type_parts(m["constraint"]) if before.endswith(("<", ",")) else None
            if ty is not None:
                yield m["tparam"], ty
        elif m["called"]:  # ``const x = f()``: what ``f`` returns, unless a cast says
            cast = _AS_CAST.match(stripped, m.end() - 1)
            called = tuple(_CALL_ARGUMENTS.sub("", m["result"]).split("."))
            yield m["called"], (cast and _type_parts(cast["cast"])) or called
        elif m["callee"]:  # ``f(a, (x, y) => ...)``: as ``f`` types its argument's parameters
            callee, arg = tuple(m["callee"].split(".")), m["before"].count(",")
            params = [m["param"]] if m["param"] else m["params"].split(",")
            for j, p in enumerate(params):
                name, _, annotation = p.partition(":")
                name = name.strip().rstrip("?")
                if _IDENT.fullmatch(name) and name not in RESERVED:
                    typed = _type_parts(annotation) if annotation.strip() else None
                    yield name, typed or (*callee, f"#{arg}", f"#{j}")
        elif m["key"]:  # ``f({ key: (x, y) => ...})``: as ``f``'s option ``key`` types them
            yield from _property_params(stripped, m)
        elif m["read"]:  # ``const x = a.b``: as ``a.b`` is typed (a literal: untyped)
            chain = tuple(re.sub(r"[\s?!]", "", m["chain"]).split("."))
            chain = (*chain, ELEMENT) if m["index"] else chain
            yield m["read"], () if chain[0] in RESERVED else chain
        elif m["each"]:  # ``for (const x of xs)``: an element of ``xs``
            items = tuple(re.sub(r"[\s?!]", "", m["items"]).split("."))
            yield m["each"], () if items[0] in RESERVED else (*items, ELEMENT)
        elif m["untyped"]:  # ``const x = ... as Foo``: a cast types it
            cast = _AS_CAST.match(stripped, m.end())
            yield m["untyped"], (cast and _type_parts(cast["cast"])) or ()
        else:
            if m["annot"]:
                ty = _type_parts(m["annot"])
            else:  # ``new Foo()``; ``new Map<string, Foo>()``: a collection of ``Foo``
                made = _collection_made(m["new"], m["targs"] or "")
                ty = made or tuple(m["new"].split("."))
            if ty is not None:
                yield m["name"], ty


def _property_params(text: str, m: re.Match[str]) -> Iterable[tuple[str, tuple[str, ...]]]:
    """The parameters of a function written as property ``key`` of an object literal passed
    to a call (``_TYPED``'s ``key`` match in ``text``): typed ``(*callee, "#i", key, "#j")``
    when annotated with no type, () when the call is not found (a binding all the same)."""
    key = m["key"]
    params = m["kparams"] if m["kparam"] is None else m["kparam"]
    params = next((p for p in (params, m["fparams"], m["mparams"]) if p is not None), "")
    if not params.strip() or key in RESERVED or not _in_object(text, m.start("key")):
        return
    bound = []
    for j, p in enumerate(params.split(",")):
        name, _, annotation = p.partition(":")
        name = name.strip().rstrip("?")
        if _IDENT.fullmatch(name) and name not in RESERVED:
            bound.append((j, name, _type_parts(annotation) if annotation.strip() else None))
    # the call is looked for only when a parameter has no type of its own
    call = _object_call(text, m.start("key")) if any(t is None for *_, t in bound) else None
    for j, name, typed in bound:
        yield name, typed or (() if call is None else (*call[0], f"#{call[1]}", key, f"#{j}"))


#: how far back a property's object literal and its call are looked for
_OBJECT_CHARS = 4000
_CALLEE_END = re.compile(
    r"([A-Za-z_$][\w$]*(?:\s*\??\.\s*[A-Za-z_$#][\w$]*)*)\s*(?:<[^;()]*>)?\s*$"
)


def _in_object(text: str, at: int) -> bool:
    """Whether the code before ``at`` ends with ``{`` or ``,`` (``async`` skipped), where an
    object literal's member starts, or holds nothing (a line read alone)."""
    i = at - 1
    while i >= 0 and text[i].isspace():
        i -= 1
    if i >= 4 and text[i - 4 : i + 1] == "async":
        i -= 5
        while i >= 0 and text[i].isspace():
            i -= 1
    return i < 0 or text[i] in "{,"


def _unmatched_opening(text: str, i: int, limit: int, commas: list[int]) -> int:
    """The index of the bracket opening the innermost one holding ``text[i]`` (scanning
    back from ``i`` to ``limit``), -1 if none; ``commas[0]`` counts the commas met at its
    level."""
    depth = 0
    while i >= limit:
        c = text[i]
        if c in ")]}":
            depth += 1
        elif c in "([{":
            if depth == 0:
                return i
            depth -= 1
        elif c == "," and depth == 0:
            commas[0] += 1
        i -= 1
    return -1


def _object_call(text: str, at: int) -> tuple[tuple[str, ...], int] | None:
    """(callee, argument index) of the call an object literal holding ``text[at]`` is an
    argument of: ``build(a, {`` -> (("build",), 1); None elsewhere."""
    limit = max(0, at - _OBJECT_CHARS)
    brace = _unmatched_opening(text, at - 1, limit, [0])
    if brace < 0 or text[brace] != "{":
        return None
    i = brace - 1
    while i >= limit and text[i].isspace():
        i -= 1
    if i < limit or text[i] not in "(,":
        return None
    commas = [0]
    paren = _unmatched_opening(text, i, limit, commas)
    if paren < 0 or text[paren] != "(":
        return None
    m = _CALLEE_END.search(text[max(limit, paren - 200) : paren])
    if m is None:
        return None
    parts = tuple(re.sub(r"\s+", "", m[1]).replace("?.", ".").split("."))
    return None if parts[0] in RESERVED else (parts, commas[0])


def _line_types(lines: list[str], first: int, jsdoc: bool) -> dict[str, tuple[str, ...]]:
    """``name -> type`` in the window before the cursor (``_window_start``; the nearest
    wins), ``()`` for a name declared there with no type the code writes down; with
    ``jsdoc`` (plain JavaScript, whose types are its doc comments'), a name the code leaves
    untyped as a doc comment's ``@param {Option} option`` types it."""
    global _types_cache
    cached_lines, cached_jsdoc, cached = _types_cache
    if cached_lines is lines and cached_jsdoc == jsdoc:
        return cached
    text = "\n".join(lines[_window_start(lines, first) :])
    out = dict(_assignments(text))
    for m in _JSDOC_PARAM.finditer(text) if jsdoc else ():
        ty = _type_parts(m["type"].strip().removeprefix("(").removesuffix(")"))
        if ty is not None and not out.get(m["name"]):
            out[m["name"]] = ty
    _types_cache = (lines, jsdoc, out)
    return out


#: a JSDoc comment's typed parameter, ``@param {Option} option`` (``[name]`` if optional)
_JSDOC_PARAM = re.compile(r"@param\s*\{(?P<type>[^{}\n]*)\}\s*\[?(?P<name>[A-Za-z_$][\w$]*)")


def _receiver_type(lines: list[str], first: int, name: str, jsdoc: bool) -> tuple[str, ...] | None:
    """The type of the receiver ``name`` (or ``this.name``) at the cursor: as the window
    before it types it, else as the nearest line above the window that types it does, in the
    outermost definition around the cursor or, outside any, in the file (a test's
    ``let adapter: EntityAdapter`` at the top of a long ``describe`` callback), at most
    ``EARLIER_LINES`` above the window."""
    global _earlier_cache
    types = _line_types(lines, first, jsdoc)
    if name in types or name == "this":  # a function's ``this: Foo`` is that function's
        return types.get(name) or None
    cache = _earlier_cache  # read once: a concurrent query may replace it
    if cache[0] is not lines:
        start = _window_start(lines, first)
        above = lines[max(0, first - 10, start - EARLIER_LINES) : start]
        starts = [0]
        for line in above:
            starts.append(starts[-1] + len(line) + 1)
        cache = _earlier_cache = (lines, "\n".join(above), starts, {})
    _, text, starts, found = cache
    if name not in found:
        found[name] = _earlier_type(text, starts, name)
    return found[name]


def _outer_typed(
    r: Resolver,
    path: str,
    ty: tuple[str, ...],
    scope: str | None,
    lines: list[str],
    first: int,
    jsdoc: bool,
) -> tuple[str, ...] | None:
    """A type whose head the file does not define read through the code's own types of that
    head: ``x = f.make()`` with ``f: Factory`` is ``Factory.make``'s result, ``p: TProc``
    with ``<TProc extends AnyProc>`` an ``AnyProc``, ``p = node.parent`` with ``node = doc``
    and ``doc: Node`` a ``Node.parent`` (a few such steps); None when the head has none."""
    for _ in range(_OUTER_STEPS):
        if ty[0] == "this" or _local(r, path, ty[0], scope, 0) is not None:
            return ty
        inner = _receiver_type(lines, first, ty[0], jsdoc)
        if inner is None or inner[0] == ty[0]:
            return None
        ty = (*inner, *ty[1:])
    return None


#: how many names ``_outer_typed`` follows, each typed by the next (``p = node.x``, ``node = doc``)
_OUTER_STEPS = 3


def _earlier_type(text: str, starts: list[int], name: str) -> tuple[str, ...] | None:
    """``_receiver_type`` in ``text``, the lines above the window (``starts``: their
    offsets): the last line that types ``name``, read with the lines after it (a type written
    over several). Only lines where ``name`` is followed by what may declare it are read:
    ``:`` (an annotation), ``=`` (``const x = f()``, ``x = new Foo()``), a parameter list's
    ``,``/``)`` before ``=>`` (a callback's)."""
    # a literal first, which the scan looks for fast; the character before it is checked here
    declares = re.compile(rf"{re.escape(name)}\s*[?!]?\s*(?::|=|[,)][^;{{}}\n]*=>)")
    rows = [
        bisect.bisect_right(starts, m.start()) - 1
        for m in declares.finditer(text)
        if m.start() == 0 or not _WORD_OR_DOT.match(text, m.start() - 1)
    ]
    for row in sorted(set(rows), reverse=True):  # the nearest first
        end = starts[min(len(starts) - 1, row + _DECLARATION_LINES)]
        typed = [ty for found, ty in _assignments(text[starts[row] : end]) if found == name]
        if typed:
            return typed[-1] or None
    return None


# ---- the language's own names ------------------------------------------------------------------


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_BUILTIN_TYPES = _words(
    """any unknown never void string number boolean symbol object bigint null undefined true
    false"""
)
_KEYWORDS = _words(
    """break case catch class const continue debugger default delete do else export extends
    finally for function if import in instanceof new return switch throw try typeof
    var void while with yield let static enum await implements package protected interface
    private public null true false arguments constructor prototype"""
)
# ECMAScript's global objects and functions, TypeScript's utility types, and the globals of
# browsers and Node.js that projects do not define themselves
_GLOBALS = _words(
    """Object Function Array Number Boolean String Symbol BigInt Math JSON Date RegExp Promise
    Proxy Reflect Map Set WeakMap WeakSet WeakRef FinalizationRegistry Error EvalError
    RangeError ReferenceError SyntaxError TypeError URIError AggregateError ArrayBuffer
    SharedArrayBuffer DataView Atomics Int8Array Uint8Array Uint8ClampedArray Int16Array
    Uint16Array Int32Array Uint32Array Float32Array Float64Array BigInt64Array BigUint64Array
    Intl Iterator AsyncIterator Generator AsyncGenerator GeneratorFunction globalThis NaN
    Infinity undefined eval isFinite isNaN parseFloat parseInt decodeURI decodeURIComponent
    encodeURI encodeURIComponent escape unescape
    Partial Required Readonly Record Pick Omit Exclude Extract NonNullable ReturnType
    Parameters ConstructorParameters InstanceType ThisType ThisParameterType
    OmitThisParameter Awaited Uppercase Lowercase Capitalize Uncapitalize PromiseLike
    ArrayLike ReadonlyArray ReadonlyMap ReadonlySet Iterable IterableIterator AsyncIterable
    AsyncIterableIterator PropertyKey PropertyDescriptor TemplateStringsArray
    console window document navigator globalThis self process Buffer require module exports
    __dirname __filename setTimeout clearTimeout setInterval clearInterval setImmediate
    clearImmediate queueMicrotask structuredClone requestAnimationFrame
    cancelAnimationFrame localStorage sessionStorage XMLHttpRequest WebSocket TextEncoder
    TextDecoder URL URLSearchParams AbortController AbortSignal HTMLElement
    EventTarget"""
)
RESERVED = _KEYWORDS | _GLOBALS | _BUILTIN_TYPES

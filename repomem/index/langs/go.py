"""Go: names resolve through packages (a directory's files), imports and declared types.

A package is the files of one directory declaring the same package clause (``foo`` and its
external test package ``foo_test`` are two). Every file of a package sees every definition of
the others; a ``_test.go`` file's definitions are seen only from other test files. An import
path names a directory through the module that holds it: the closest ``go.mod`` above the
directory (nested modules are their own), its ``module`` path followed by the directory's path
below it; a repository in a GOPATH without ``go.mod`` is the module of its path below ``src``.
The ``go.mod`` files are read when the index is built (``settings``) and saved with it, so that
updates resolve as the build did. An import binds its alias, or
the package's declared name, or (``.``) every name of the package; ``_`` binds nothing, and
a package outside the repository (the standard library included) resolves nothing.

Definitions are qualified as Go writes them: ``F``, ``T``, ``T.M`` (methods by their
receiver's type, a top-level interface's methods by the interface), package-level
``const``/``var``. Members go through types: a receiver,
parameter or local (``var x T``, ``x := T{}``, ``x := NewT()`` through the function's result
type, ``range`` over a slice or map so declared; at the cursor also a type switch's case and a
function literal's parameters) and
a struct field's type (``s.client.Do()``); a type's own methods, then those of the types it
embeds, so that a value of an interface type calls the interface's ``I.M`` (through the
interfaces it embeds too). What a type declares is kept in
``ParsedFile.bases`` (see ``_bases``), so that it is saved with the index and an edit of it
re-resolves exactly the files that read it.

At the cursor (``resolve_name``), a name ending at a field (``c.Writer``) is its type's, where
the buffer's code writes that type's name. Not resolved: method calls on values whose type
only inference through expressions would give (chained calls, index expressions), generic
instantiation, ``replace`` directives of ``go.mod``; a method on a value of unknown type is
never guessed. A ``go.mod`` edited after
the index was built takes effect at the next ``repomem index``.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from repomem.index.langs import WORDS, Language, camel_starts, is_test
from repomem.index.parsing import CallSite, Definition, ImportBinding

if TYPE_CHECKING:
    from collections.abc import Iterable

    from tree_sitter import Node

    from repomem.index.parsing import ParsedFile
    from repomem.index.resolver_types import ResolverTables as Resolver
    from repomem.index.resolver_types import Target

#: a type expression: ("T",), ("pkg", "T"); ("()", *callee): the result type of a call
TypeExpr = tuple[str, ...]
_CALL = "()"
#: a collection's type expression: ("[]", *its element's), for slices, arrays and maps;
#: ("range", *value): the element type of the collection a dotted value is
_COLLECTION = "[]"
_RANGE = "range"
_MAX_DEPTH = 6
#: lines before the cursor whose locals, not used yet, put their types first
FRESH_LINES = 3
#: how many methods an embedding type's card names of those its embedded types promote
PROMOTED = 16

# fmt: off
_KEYWORDS = frozenset((
    "break", "case", "chan", "const", "continue", "default", "defer", "else", "fallthrough",
    "for", "func", "go", "goto", "if", "import", "interface", "map", "package", "range",
    "return", "select", "struct", "switch", "type", "var"
))
# predeclared types, constants and functions
_PREDECLARED = frozenset((
    "any", "bool", "byte", "comparable", "complex64", "complex128", "error", "float32",
    "float64", "int", "int8", "int16", "int32", "int64", "rune", "string", "uint", "uint8",
    "uint16", "uint32", "uint64", "uintptr", "true", "false", "iota", "nil", "append", "cap",
    "clear", "close", "complex", "copy", "delete", "imag", "len", "make", "max", "min", "new",
    "panic", "print", "println", "real", "recover"
))
# fmt: on
_DOTTED = re.compile(rb"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_TEST = re.compile(r"func\s+(?:Test|Benchmark|Example|Fuzz)_?(\w+)\s*\(")
_MODULE = re.compile(r"^\s*module\s+\"?([^\s\"/]+[^\s\"]*)\"?", re.MULTILINE)


def _text(node: Node) -> str:
    return node.text.decode("utf-8", "replace")


def _dir(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


# fmt: off
# operating systems and architectures a file may be built for only (``x_windows.go``)
_GOOS = frozenset((
    "aix", "android", "darwin", "dragonfly", "freebsd", "hurd", "illumos", "ios", "js", "nacl",
    "netbsd", "openbsd", "plan9", "solaris", "wasip1", "windows", "zos"
))
_GOARCH = frozenset((
    "386", "arm", "armbe", "arm64be", "loong64", "mips", "mipsle", "mips64", "mips64le",
    "mips64p32", "mips64p32le", "ppc", "ppc64", "ppc64le", "riscv", "riscv64", "s390", "s390x",
    "sparc", "sparc64", "wasm"
))
# fmt: on


_SEPARATOR = re.compile(r"[_-]")
_RELEASE = re.compile(r"go1[_.](\d+)")


def _preferred(target: Target) -> tuple[bool, int, str, int]:
    """The order in which one name's definitions in several files of a package are taken:
    a file built only for another system than Linux on amd64/arm64 comes last, and of files
    for several Go releases the latest first (a name is defined once per build; files name
    the build they are for: ``x_windows.go`` by Go's rule, ``x-plan9.go`` or ``x_go1_17.go``
    by a build constraint, as a name seldom says otherwise)."""
    name = target[0].rsplit("/", 1)[-1].removesuffix(".go").removesuffix("_test")
    parts = _SEPARATOR.split(name)[1:]
    release = _RELEASE.search(name)
    other = any(p in _GOOS or p in _GOARCH for p in parts)
    return other, -int(release[1]) if release else 0, target[0], target[1]


def _slot(pf: ParsedFile) -> str:
    """Which package of its directory a file belongs to: the directory's own (""), or its
    external test package (``package foo_test``)."""
    return "|test" if pf.package.endswith("_test") else ""


def _type_expr(node: Node | None) -> TypeExpr | None:
    """A named type, pointers, parentheses and type arguments left out: ``*pkg.T[int]`` is
    ("pkg", "T"); None for anything without methods of its own (slices, maps, funcs...)."""
    while node is not None and node.type in ("pointer_type", "parenthesized_type", "generic_type"):
        node = (
            node.child_by_field_name("type") if node.type == "generic_type" else node.named_child(0)
        )
    if node is None:
        return None
    if node.type == "type_identifier":
        name = _text(node)
        return None if name in _PREDECLARED else (name,)
    if node.type == "qualified_type":
        pkg, name = node.child_by_field_name("package"), node.child_by_field_name("name")
        if pkg is not None and name is not None:
            return (_text(pkg), _text(name))
    return None


def _top_level(spec: Node) -> bool:
    """Whether a ``var``/``const`` spec is declared at the package's level."""
    node = spec.parent
    while node is not None and node.type in ("var_spec_list", "var_declaration"):
        node = node.parent
    return node is None or node.type in ("source_file", "const_declaration")


def _assigned(value: Node) -> Node | None:
    """The name a call or composite literal is the value of, in ``x := value``,
    ``x, err := value`` or ``x := &value``."""
    node = value.parent
    if node is not None and node.type == "unary_expression":
        value, node = node, node.parent
    if node is None or node.type != "expression_list" or node.named_child(0) != value:
        return None
    decl = node.parent
    if (
        decl is None
        or decl.type != "short_var_declaration"
        or decl.child_by_field_name("right") != node
    ):
        return None
    left = decl.child_by_field_name("left")
    first = left.named_child(0) if left is not None else None
    return first if first is not None and first.type == "identifier" else None


def _declared(node: Node | None) -> TypeExpr | None:
    """A declared type: a named one, or a slice, array or map of a named one, as
    ``("[]", *element)``: what ``range`` gives."""
    while node is not None and node.type == "pointer_type":
        node = node.named_child(0)
    if node is not None and node.type in ("slice_type", "array_type", "map_type"):
        element = _type_expr(
            node.child_by_field_name("value" if node.type == "map_type" else "element")
        )
        return None if element is None else (_COLLECTION, *element)
    return _type_expr(node)


def _result(node: Node) -> list[TypeExpr]:
    """A function's (first) result type, as a ``bases`` entry."""
    result = node.child_by_field_name("result")
    if result is not None and result.type == "parameter_list":
        first = next((c for c in result.named_children if c.type == "parameter_declaration"), None)
        result = first.child_by_field_name("type") if first is not None else None
    found = _declared(result)
    return [found] if found is not None else []


def _receiver(node: Node) -> tuple[str, TypeExpr | None]:
    """(receiver name, receiver type) of a method declaration."""
    recv = node.child_by_field_name("receiver")
    params = recv.named_children if recv is not None else []
    decl = next((c for c in params if c.type == "parameter_declaration"), None)
    if decl is None:
        return "", None
    name = decl.child_by_field_name("name")
    return (_text(name) if name is not None else ""), _type_expr(decl.child_by_field_name("type"))


def _params(node: Node, into: dict[str, TypeExpr]) -> None:
    """Parameter names of a function or method -> their named types (``()``: a type with
    no methods of its own; the name still hides the package's)."""
    params = node.child_by_field_name("parameters")
    for decl in params.named_children if params is not None else ():
        if decl.type in ("parameter_declaration", "variadic_parameter_declaration"):
            t = _declared(decl.child_by_field_name("type")) or ()
            for name in decl.children_by_field_name("name"):
                into[_text(name)] = t


def _bases(bases: dict[str, list[TypeExpr]], name: str, spec: Node) -> None:
    """What a type declaration says about members, in ``ParsedFile.bases``: ``T`` -> the
    types it embeds (an alias: the type it names); ``T.f`` -> a struct field's type ([] when
    it is not a named type: the member exists). An interface's methods are definitions."""
    kind = spec.child_by_field_name("type")
    if kind is None:
        return
    if spec.type == "type_alias":
        target = _type_expr(kind)
        bases[name] = [target] if target is not None else []
        return
    embedded: list[TypeExpr] = []
    if kind.type == "struct_type":
        fields = next((c for c in kind.named_children if c.type == "field_declaration_list"), None)
        for decl in fields.named_children if fields is not None else ():
            if decl.type != "field_declaration":
                continue
            names = decl.children_by_field_name("name")
            if not names:
                t = _type_expr(decl.child_by_field_name("type"))
                embedded.extend([t] if t is not None else [])
            t = _declared(decl.child_by_field_name("type"))
            for n in names:
                bases[f"{name}.{_text(n)}"] = [t] if t is not None else []
    elif kind.type == "interface_type":
        for elem in kind.named_children:
            if elem.type == "type_elem" and elem.named_child_count == 1:
                t = _type_expr(elem.named_child(0))
                if t is not None:
                    embedded.append(t)
    if embedded:
        bases[name] = embedded


def _read(path: Path) -> str | None:
    """A file's text, None where there is none to read."""
    try:
        return path.read_text("utf-8", "replace") if path.is_file() else None
    except OSError:
        return None


@dataclass
class _Tables:
    """The Go tables of one resolver."""

    # directory -> the module path its go.mod declares; "" -> the GOPATH module of a
    # repository without a go.mod at its top (``Go.settings``)
    gomods: dict[str, str]
    gopath: str | None
    # package (directory + ``_slot``) -> name -> its definitions
    defs: dict[str, dict[str, list[Target]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list))
    )
    # directory -> declared package names of its files (imports bind them)
    names: dict[str, dict[str, int]] = field(default_factory=lambda: defaultdict(dict))
    # directory -> (module path, module directory) from the closest go.mod, None: no module
    module_of: dict[str, tuple[str, str] | None] = field(default_factory=dict)
    modules: dict[str, str] = field(default_factory=dict)  # module path -> its directory
    directories: dict[str, str | None] = field(default_factory=dict)  # ``directory``'s

    def module(self, d: str) -> tuple[str, str] | None:
        """The module a directory belongs to: the closest ``go.mod`` above it; without
        one, a repository inside a GOPATH (``.../src/example.com/m``) is the module of
        its path there."""
        if d not in self.module_of:
            if d in self.gomods:
                found: tuple[str, str] | None = (self.gomods[d], d)
            elif d:
                found = self.module(_dir(d))
            else:
                found = (self.gopath, "") if self.gopath is not None else None
            self.module_of[d] = found
            if found is not None and found[0] not in self.modules:
                self.modules[found[0]] = found[1]
                self.directories.clear()
        return self.module_of[d]

    def directory(self, import_path: str) -> str | None:
        """The repository directory an import path names: through the module whose path
        is its longest prefix, when that directory does belong to that module."""
        if import_path not in self.directories:
            self.directories[import_path] = self._directory(import_path)
        return self.directories[import_path]

    def _directory(self, import_path: str) -> str | None:
        best: tuple[int, str] | None = None
        for mod_path, mod_dir in self.modules.items():
            if import_path == mod_path:
                rest = ""
            elif import_path.startswith(mod_path + "/"):
                rest = import_path[len(mod_path) + 1 :]
            else:
                continue
            d = f"{mod_dir}/{rest}".strip("/") if rest else mod_dir
            if self.module(d) == (mod_path, mod_dir) and (best is None or len(mod_path) > best[0]):
                best = (len(mod_path), d)
        return None if best is None else best[1]


class Go(Language):
    """Go's resolution (see the module doc)."""

    namespace = "go"
    # the next line mostly calls what the file calls elsewhere: a test's ``toml.Unmarshal``,
    # ``PerformRequest``, ``router.GET`` (call edges resolve through receivers' types)
    file_callees = 8
    group_members = 2
    name_families = 4
    other_methods = 8
    value_members_listed = True
    call_chains = True
    value_heading = "// promoted from the types it embeds:"
    helpers_heading = "most called of this package and those imported, not named here:"

    # ---- parse time ------------------------------------------------------------------
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
        top = [c for c in root.named_children if c.type != "comment"]
        clause = next((c for c in top if c.type == "package_clause"), None)
        if clause is not None and clause.named_child_count:
            parsed.package = _text(clause.named_child(0))
        self._imports(parsed, [c for c in top if c.type == "import_declaration"])
        scopes, declared = _definitions(parsed, source, defs, def_nodes)
        sites = _call_sites(source, calls, call_nodes, declared)
        receivers = _LocalTypes(scopes, declared)
        for call, parts, i in sites:
            t = receivers.receiver(call.start_byte, parts)
            parsed.calls.append(CallSite(i, parts, None if t is None else ".".join(t)))

    def _imports(self, parsed: ParsedFile, decls: list[Node]) -> None:
        """One binding per import: (alias, "." or "" for the package's own name; path)."""
        tops = np.flatnonzero(parsed.node_parent == -1)
        rows = parsed.node_start[tops]
        for decl in decls:
            k = int(np.searchsorted(rows, decl.start_point.row))
            node = int(tops[k]) if k < rows.size else -1
            specs = [c for c in decl.named_children if c.type == "import_spec"]
            for spec_list in (c for c in decl.named_children if c.type == "import_spec_list"):
                specs.extend(c for c in spec_list.named_children if c.type == "import_spec")
            for spec in specs:
                path = spec.child_by_field_name("path")
                alias = spec.child_by_field_name("name")
                name = _text(alias) if alias is not None else ""
                if path is None or name == "_":
                    continue
                module = _text(path).strip('"`')
                parsed.imports.append(ImportBinding(name, module, None, 0))
                parsed.import_nodes.append(node)

    def settings(self, root: Path, paths: Iterable[str]) -> dict | None:
        """The module paths of the ``go.mod`` files in the directories holding, or above,
        one of ``paths`` (``gomods``: {directory: module path}), and ``gopath``, the module
        path of a repository inside a GOPATH (``.../src/example.com/m``) without a
        ``go.mod`` at its top."""
        dirs = {""}
        for p in paths:
            parts = p.split("/")[:-1]
            dirs.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
        gomods = {}
        for d in sorted(dirs):
            text = _read(root / d / "go.mod")
            m = _MODULE.search(text) if text is not None else None
            if m is not None:
                gomods[d] = m.group(1)
        gopath = None
        if "" not in gomods and "src" in root.parts[:-1]:
            parts = root.parts
            gopath = "/".join(parts[len(parts) - parts[::-1].index("src") :])
        if not gomods and gopath is None:
            return None
        return {"gomods": gomods, "gopath": gopath}

    # ---- tables ----------------------------------------------------------------------
    def _tables(self, r: Resolver) -> _Tables:
        tables = r.tables.get(self.namespace)
        if tables is None:
            saved = r.settings.get(self.namespace) or {}
            assert isinstance(saved, dict)
            tables = r.tables[self.namespace] = _Tables(
                dict(saved.get("gomods", {})), saved.get("gopath")
            )
        assert isinstance(tables, _Tables)
        return tables

    def add(self, r: Resolver, path: str, pf: ParsedFile) -> None:
        t = self._tables(r)
        d = _dir(path)
        t.module(d)
        pkg = t.defs[d + _slot(pf)]
        for definition in pf.definitions:
            pkg[definition.name].append((path, definition.node))
            pkg[definition.name].sort(key=_preferred)
        if not pf.package.endswith("_test"):
            names = t.names[d]
            names[pf.package] = names.get(pf.package, 0) + 1

    def remove(self, r: Resolver, path: str, pf: ParsedFile) -> None:
        t = self._tables(r)
        d = _dir(path)
        pkg = t.defs[d + _slot(pf)]
        for definition in pf.definitions:
            pkg[definition.name] = [x for x in pkg[definition.name] if x[0] != path]
            if not pkg[definition.name]:
                del pkg[definition.name]
        if not pf.package.endswith("_test"):
            names = t.names[d]
            names[pf.package] -= 1
            if not names[pf.package]:
                del names[pf.package]

    def provides(self, path: str, pf: ParsedFile) -> Iterable[str]:
        package = _dir(path) + _slot(pf)
        yield f"{_dir(path)}={pf.package}"
        for d in pf.definitions:
            yield f"{package}:{d.name}"

    # ---- resolution ------------------------------------------------------------------
    def resolve_call(self, r: Resolver, path: str, call: CallSite) -> Target | None:
        local = {} if call.scope is None else {call.parts[0]: (_split(call.scope),)}
        found = _Resolution(r, self._tables(r), path, local).name(call.parts)
        return None if found is None else found[0]

    def resolve_name(
        self, r: Resolver, path: str, parts: tuple[str, ...], lines: list[str]
    ) -> tuple[Target, str] | None:
        if path not in r.files:
            return None
        buffer = self._buffer(lines)
        if len(parts) == 1 and parts[0] in buffer.not_used:
            return None
        res = _Resolution(r, self._tables(r), path, buffer.types)
        found = res.name(parts)
        if found is None and len(parts) > 1:
            # a field (``c.Writer``): its type, where the file names that type (its field's
            # declaration, a conversion): the methods the next line calls on the field
            typed = res.name(parts, fields=True)
            if typed is not None and r.qualnames[typed[0][0]][typed[0][1]] in buffer.words:
                return typed[0], f"the type of the field {parts[-1]}"
        return found

    def included_definitions(self, r: Resolver, path: str, lines: list[str]) -> list[Target]:
        """The package-level functions of the file's own package (its other files) and the
        exported ones of the repository packages it imports: the project's helpers, which
        the next line may call though no line above names them
        (``characters.Utf8ValidNext`` beside the ``characters.Utf8TomlValidAlreadyEscaped``
        called above, a test's ``requestWithBody``)."""
        pf = r.files.get(path)
        if pf is None:
            return []
        t = self._tables(r)
        test = _is_test(path)
        own = _dir(path) + _slot(pf)
        packages = [own, *(d for b in pf.imports if (d := t.directory(b.module)) is not None)]
        out: list[Target] = []
        for package in dict.fromkeys(packages):
            for name, targets in t.defs.get(package, {}).items():
                if "." in name or (package != own and not name[:1].isupper()):
                    continue  # a method, or what another package cannot call
                found = next((x for x in targets if test or not _is_test(x[0])), None)
                if found is not None and found[0] != path and name not in r.classes[found[0]]:
                    out.append(found)
        return out

    def package_functions(self, r: Resolver, path: str, target: Target) -> list[Target]:
        """The exported package-level names of the package of another directory declaring
        ``target`` (its non-test files'), other than ``target`` and its types: what the
        file reaches through the same ``pkg.`` (``testsuite.CmpJSON`` after
        ``testsuite.ValueToTaggedJSON``)."""
        pf = r.files.get(target[0])
        if pf is None or _dir(target[0]) == _dir(path):
            return []
        out: list[Target] = []
        for name, targets in self._tables(r).defs.get(_dir(target[0]) + _slot(pf), {}).items():
            if "." in name or not name[:1].isupper():
                continue  # a method, or what another package cannot call
            found = next((x for x in targets if not _is_test(x[0])), None)
            if found is not None and found != target and name not in r.classes[found[0]]:
                out.append(found)
        return out

    def value_members(self, r: Resolver, path: str, node: int, line: str) -> list[Target]:
        """A struct or interface type embedding repository types (``Engine`` embeds
        ``RouterGroup``): the exported methods it gets from them and does not declare, which
        a value of it calls as its own (``router.Static(``) and its card does not show, at
        most ``PROMOTED`` of them, the embedded types' order."""
        pf, qual = r.files.get(path), r.qualnames[path].get(node, "")
        embedded = pf.bases.get(qual) if pf is not None and qual in r.classes[path] else None
        if not embedded:
            return []
        t = self._tables(r)
        res = _Resolution(r, t, path, {})
        own = {d.name.rsplit(".", 1)[-1] for d in pf.members(qual)}
        out: list[Target] = []
        for expr in embedded:
            inner = res.type_of(path, expr, 0)
            if inner is None:
                continue
            prefix = r.qualnames[inner[0]][inner[1]] + "."
            package = t.defs.get(_dir(inner[0]) + _slot(r.files[inner[0]]), {})
            for name, targets in package.items():
                bare = name[len(prefix) :]
                if name.startswith(prefix) and bare[:1].isupper() and bare not in own:
                    own.add(bare)
                    out.append(targets[0])
        return out[:PROMOTED]

    def subject(self, lines: list[str]) -> list[str]:
        """The words of the test function around the cursor, after ``Test`` (``Benchmark``,
        ``Example``, ``Fuzz``): Go names a test for what it tests."""
        for line in reversed(lines[:-1]):
            if line.startswith("func"):
                test = _TEST.match(line)
                return WORDS.findall(test[1]) if test is not None else []
        return []

    def family(self, name: str) -> list[str]:
        """A package-level name by its words (``scanFollows`` of ``scanFollowsTrue``:
        ``scanFollowsFalse``, ``scanFollowsNan``; ``ErrorType`` of ``ErrorTypePublic``)."""
        return camel_starts(name)

    def reserved(self, name: str) -> bool:
        return name in _KEYWORDS or name in _PREDECLARED

    def fresh_types(self, r: Resolver, path: str, lines: list[str]) -> list[Target]:
        """The repository types of the locals the last ``FRESH_LINES`` lines declare
        (``x := NewT()``, ``c, _ := pkg.Make()``, ``x := &T{}``, ``var x T``, a function
        literal's parameters) that no code after them uses yet, the last declared first."""
        if path not in r.files:
            return []
        res = _Resolution(r, self._tables(r), path, self._buffer(lines).types)
        out: dict[Target, None] = {}
        for expr in _fresh(lines[max(0, len(lines) - 1 - FRESH_LINES) :]):
            found = res.type_of(path, expr, 0)
            if found is not None and found[0] != path:  # the buffer shows its own types
                out.setdefault(found)
        return list(out)

    _last: tuple[list[str], _Buffer] | None = None

    def _buffer(self, lines: list[str]) -> _Buffer:
        """What the buffer says about the function the cursor is in; kept for the buffer
        the last query passed (a query resolves many names in one buffer)."""
        last = self._last
        if last is None or last[0] is not lines:
            last = self._last = (lines, _Buffer(lines))
        return last[1]


_is_test = cache(is_test)


def _definitions(
    parsed: ParsedFile, source: bytes, defs: list[tuple[Node, Node]], def_nodes: list[int]
) -> tuple[list[tuple[int, int]], list[tuple[int, str, TypeExpr]]]:
    """Fill ``parsed``'s definitions (and the declared types it keeps in ``bases``); return
    the function spans and the locals they declare, ``(byte, name, type)``, parameters
    first."""
    scopes: list[tuple[int, int]] = []
    declared: list[tuple[int, str, TypeExpr]] = []
    for (d, name_node), i in zip(defs, def_nodes, strict=True):
        if i < 0:
            continue
        name = _text(name_node)
        if d.type in ("type_spec", "type_alias"):
            parsed.definitions.append(Definition(name, i, True))
            _bases(parsed.bases, name, d)
            continue
        if d.type == "range_clause":  # for k, v := range x.items: v is an element
            over = d.child_by_field_name("right")
            raw = source[over.start_byte : over.end_byte] if over is not None else b""
            if _DOTTED.fullmatch(raw):
                declared.append((d.start_byte, name, (_RANGE, *raw.decode().split("."))))
            continue
        if d.type in ("var_spec", "const_spec"):
            t = _declared(d.child_by_field_name("type"))
            if not _top_level(d):
                declared.append((d.start_byte, name, t or ()))
                continue
            parsed.definitions.append(Definition(name, i, False))
            if t is not None:
                parsed.bases[name] = [t]
            continue
        if d.type == "method_elem":  # an interface's: ``I.M``, with its result type
            spec = d.parent.parent if d.parent is not None else None
            owner = spec.child_by_field_name("name") if spec is not None else None
            if owner is None:
                continue
            name = f"{_text(owner)}.{name}"
            parsed.definitions.append(Definition(name, i, False))
            result = _result(d)
            if result:
                parsed.bases[name] = result
            continue
        local: dict[str, TypeExpr] = {}
        if d.type == "method_declaration":
            recv_name, recv = _receiver(d)
            if recv is not None and len(recv) == 1:
                name = f"{recv[0]}.{name}"
            if recv_name:
                local[recv_name] = recv or ()
        _params(d, local)
        parsed.definitions.append(Definition(name, i, False))
        result = _result(d)
        if result:
            parsed.bases[name] = result
        scopes.append((d.start_byte, d.end_byte))
        declared.extend((d.start_byte, n, t) for n, t in local.items())
    return scopes, declared


def _call_sites(
    source: bytes,
    calls: list[tuple[Node, Node]],
    call_nodes: list[int],
    declared: list[tuple[int, str, TypeExpr]],
) -> list[tuple[Node, tuple[str, ...], int]]:
    """The calls of dotted names, ``(call, parts, statement)``; a call assigned to a local
    (``x := y.M()``, ``x := T{}``) declares it in ``declared``."""
    sites: list[tuple[Node, tuple[str, ...], int]] = []
    for (call, fn), i in zip(calls, call_nodes, strict=True):
        raw = source[fn.start_byte : fn.end_byte]
        if i < 0 or not _DOTTED.fullmatch(raw):
            continue
        parts = tuple(raw.decode("ascii").split("."))
        sites.append((call, parts, i))
        assigned = _assigned(call)
        if assigned is not None:
            made = parts if call.type == "composite_literal" else (_CALL, *parts)
            declared.append((assigned.start_byte, _text(assigned), made))
    return sites


class _LocalTypes:
    """Per function, per name: the bytes and types of its declarations, in order."""

    def __init__(
        self, scopes: list[tuple[int, int]], declared: list[tuple[int, str, TypeExpr]]
    ) -> None:
        scopes.sort()
        self.starts = [start for start, _ in scopes]
        self.types: dict[tuple[int, str], tuple[list[int], list[TypeExpr]]] = {}
        for byte, name, t in sorted(declared):
            k = bisect.bisect_right(self.starts, byte) - 1
            if k >= 0 and byte < scopes[k][1]:
                at, given = self.types.setdefault((k, name), ([], []))
                at.append(byte)
                given.append(t)

    def typed(self, k: int, name: str, byte: int) -> tuple[int, TypeExpr] | None:
        """(where, type) of the declaration of local ``name`` of function ``k`` that holds
        at ``byte``."""
        found = self.types.get((k, name))
        n = bisect.bisect_left(found[0], byte) if found is not None else 0
        return (found[0][n - 1], found[1][n - 1]) if found is not None and n > 0 else None

    def receiver(self, byte: int, parts: tuple[str, ...]) -> TypeExpr | None:
        """The type of the receiver ``parts[0]`` of a call at ``byte``, where its function
        declares it."""
        k = bisect.bisect_right(self.starts, byte) - 1
        head = self.typed(k, parts[0], byte) if len(parts) > 1 else None
        t = head[1] if head is not None else None
        if head is not None and len(head[1]) > 1 and head[1][0] in (_CALL, _RANGE):
            # x := y.M(), range y.items: y's type, where the function shows it, stands
            # for y; range over a local collection: its element type
            inner = self.typed(k, head[1][1], head[0])
            given = inner[1] if inner is not None else ()
            if given[:1] == (_COLLECTION,) and head[1][0] == _RANGE and len(head[1]) == 2:
                t = given[1:]
            elif given and given[0] not in (_CALL, _COLLECTION, _RANGE) and len(head[1]) > 2:
                t = (head[1][0], *given, *head[1][2:])
        return t


def _split(expr: str) -> TypeExpr:
    return tuple(expr.split(".")) if expr else ()


#: the lines whose names the cards look up (the cursor's and the 40 before it), and those
#: read for the types of locals
_WINDOW = 41
_TYPE_LINES = 200
_IDENT = re.compile(r"(?<![\w.])[A-Za-z_]\w*")
_NAMES = re.compile(r"[A-Za-z_]\w*")  # a package's names after ``pkg.`` too
_TYPE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?")
_RECEIVER = re.compile(r"func\s*\(\s*(?P<name>\w+)\s+\*?\s*(?P<type>\w+)(?:\[[^\]]*\])?\s*\)")
_PARAMS = re.compile(r"^\s*\w+\s*(?:\[[^\]]*\])?\s*\(([^()]*)\)")
_ELEMENT = re.compile(r"(?:\[\w*\]|map\[[\w.*]+\])\*?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)")
_TYPED_LOCAL = re.compile(
    r"\bvar\s+(?P<var>\w+)\s+(?P<vtype>(?:\[\w*\]|map\[[\w.*]+\])?\*?[A-Za-z_][\w.]*)\s*(?:$|=|//)"
    r"|(?P<target>\w+)(?:\s*,\s*\w+)*\s*:=\s*(?:&?(?P<lit>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)\s*\{"
    r"|(?P<callee>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)\s*\()"
)
# strings, runes and comments, which declare nothing (a raw string or a block comment may span
# lines: a string is left as ``""``)
_NOT_CODE = re.compile(
    r'"(?:\\.|[^"\\\n])*"|`[^`]*`|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/', re.DOTALL
)
# a function literal whose body the line opens: ``router.Use(func(c *Context) {``
_LITERAL = re.compile(r"(?<![\w.])func\s*\(([^()]*)\)[^{}]*\{\s*$")
# ``switch v := x.(type) {``, and a case of one type
_SWITCH = re.compile(r"\bswitch\s+(\w+)\s*:=.*\.\(type\)\s*\{")
_CASE = re.compile(r"\s*case\s+\*?([A-Za-z_][\w.]*)\s*:")
# ``for k, v := range x.items {``: v is an element of x.items
_RANGED = re.compile(
    r"\bfor\s+\w+\s*,\s*(?P<elem>\w+)\s*:=\s*range\s+(?P<over>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\s*\{"
)
# names a function declares: ``a, b :=`` (``for k, v := range`` too), ``var a``, ``type T``
_DECLARES = re.compile(
    r"(?<![\w.])(\w+(?:\s*,\s*\w+)*)\s*:=|\bvar\s+(\w+(?:\s*,\s*\w+)*)|\btype\s+(\w+)"
)
# a name that is no use of a definition: a method's name where it is declared, a key of a
# composite literal (``Name: x``)
_NOT_A_USE = re.compile(r"^func\s*\([^)]*\)\s*(\w+)|(?<![\w.])(\w+)\s*:(?!=)")


class _Buffer:
    """What the lines before the cursor say about the names they use: the locals the
    functions there declare (parameters, ``:=``, ``var``, local types) with the type a
    declaration shows (the last one in a function; every function's where there are
    several, as
    the window's names may come from either, unless they name the same type), and the
    names written there only where they
    are no use of a definition (a method's name where it is declared, a composite literal's
    key)."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        first = max(0, len(lines) - _TYPE_LINES)
        header = max(0, len(lines) - _WINDOW)
        while header > 0 and not lines[header].startswith("func"):
            header -= 1  # the function the window starts in
        self.types: dict[str, tuple[TypeExpr, ...]] = {}
        opened = header < first and lines[header].startswith("func")
        function = _header(lines[header]) if opened else {}
        window_start = len(lines) - _WINDOW
        switched = ""  # the variable of the last type switch
        for row in range(max(first, header), len(lines)):
            line = lines[row]
            if line.startswith("func"):
                self._merge(function)
                function = _header(line)
                continue
            if line[:1].isalpha():  # a declaration at the top level ends the function
                self._merge(function)
                function = {}
                continue
            literal = _LITERAL.search(line) if "func" in line else None
            if literal is not None:  # ``router.Use(func(c *Context) {``: its parameters
                function.update(_param_types(literal[1]))
            case = _CASE.match(line) if switched else None
            if case is not None:
                # each case gives the variable its type; the window's names may come from
                # any of the cases in it
                if row > window_start and switched in function:
                    self._merge({switched: function[switched]})
                function[switched] = _written(case[1])
                continue
            if ":=" not in line and "var " not in line and "type " not in line:
                continue  # most lines declare nothing: spare them the patterns
            switch = _SWITCH.search(line)
            if switch is not None:
                switched = switch[1]
                function.pop(switched, None)  # typed by its cases
                continue
            ranged = _RANGED.search(line)
            if ranged is not None:
                function[ranged["elem"]] = (_RANGE, *_split(ranged["over"]))
                continue
            for m in _DECLARES.finditer(line):
                for name in (m[1] or m[2] or m[3]).split(","):
                    function.setdefault(name.strip(), ())
            for m in _TYPED_LOCAL.finditer(line):
                if m["var"]:
                    function[m["var"]] = _written(m["vtype"].replace("*", ""))
                elif m["lit"]:
                    function[m["target"]] = _split(m["lit"])
                else:
                    function[m["target"]] = (_CALL, *_split(m["callee"]))
        self._merge(function)
        window = [line.split("//", 1)[0] for line in lines[max(0, len(lines) - _WINDOW) :]]
        named = Counter(_IDENT.findall("\n".join(window)))
        others = Counter(
            m[1] or m[2]
            for line in window
            if not line.lstrip().startswith(("case ", "default"))
            for m in _NOT_A_USE.finditer(line)
        )
        self.not_used = {name for name, n in others.items() if named[name] == n}

    @cached_property
    def words(self) -> set[str]:
        """The names the lines' code writes (strings and comments left out)."""
        return set(_NAMES.findall(_NOT_CODE.sub(" ", "\n".join(self.lines))))

    def _merge(self, function: dict[str, TypeExpr]) -> None:
        for name, typed in function.items():
            known = self.types.setdefault(name, ())
            if typed not in known:
                self.types[name] = (*known, typed)


def _fresh(lines: list[str]) -> list[TypeExpr]:
    """The types of the locals ``lines`` declare that the code after the declaration does
    not use, the last declared first."""
    text = _NOT_CODE.sub(lambda m: '""' if m[0][0] in '"`' else "", "\n".join(lines))
    code = text.split("\n")
    found: list[tuple[int, str, TypeExpr]] = []
    start = 0
    for line in code:
        for m in _TYPED_LOCAL.finditer(line):
            if m["var"]:
                typed = _written(m["vtype"].replace("*", ""))
            elif m["lit"]:
                typed = _split(m["lit"])
            else:
                typed = (_CALL, *_split(m["callee"]))
            found.append((start + m.end(), m["var"] or m["target"], typed))
        literal = _LITERAL.search(line)
        if line.startswith("func"):  # a declaration's receiver and parameters
            found.extend((start + len(line), name, t) for name, t in _header(line).items())
        elif literal is not None:  # a function literal's parameters
            params = _param_types(literal[1])
            found.extend((start + len(line), name, t) for name, t in params.items())
        start += len(line) + 1
    out = []
    for end, name, typed in sorted(found, reverse=True):
        used = re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text[end:])
        if used is None and typed and typed[0] != _COLLECTION and typed[-1] not in _PREDECLARED:
            out.append(typed)
    return out


def _written(text: str) -> TypeExpr:
    """A type as written (pointers left out): ``T``, ``pkg.T``, ``[]T``, ``map[K]T``."""
    element = _ELEMENT.fullmatch(text)
    if element is not None:
        return (_COLLECTION, *_split(element[1]))
    return _split(text) if _TYPE.fullmatch(text) else ()


def _header(line: str) -> dict[str, TypeExpr]:
    """The receiver's and parameters' types of a ``func`` line."""
    out: dict[str, TypeExpr] = {}
    recv = _RECEIVER.match(line)
    rest = line[recv.end() :] if recv is not None else line[len("func") :]
    if recv is not None:
        out[recv["name"]] = (recv["type"],)
    params = _PARAMS.search(rest)
    if params is not None:
        out.update(_param_types(params.group(1)))
    return out


def _param_types(params: str) -> dict[str, TypeExpr]:
    """Parameter names -> their types, of a parameter list's text (``a, b int, c *T``)."""
    out: dict[str, TypeExpr] = {}
    pending: list[str] = []
    for param in params.split(","):
        words = param.replace("*", " ").replace("...", " ").split()
        if len(words) == 1 and _IDENT.fullmatch(words[0]):
            pending.append(words[0])
            continue
        if len(words) >= 2:
            for name in (*pending, words[0]):
                out[name] = _written("".join(words[1:]))
        pending = []
    return out


class _Resolution:
    """Names resolved in one file, recording what they read (``Resolver.note_*``)."""

    def __init__(
        self, r: Resolver, tables: _Tables, path: str, local: dict[str, tuple[TypeExpr, ...]]
    ) -> None:
        """``local``: the locals in scope -> the types their declarations give them (an
        empty type: one without methods, or not known)."""
        self.r, self.t, self.path, self.local = r, tables, path, local
        self.test = _is_test(path)

    def at(self, path: str) -> _Resolution:
        """The resolution of what is written in ``path`` (its imports, no locals)."""
        return self if path == self.path else _Resolution(self.r, self.t, path, {})

    def name(
        self, parts: tuple[str, ...], depth: int = 0, fields: bool = False
    ) -> tuple[Target, str] | None:
        """The definition a dotted name written in this file refers to, and how (``fields``:
        a name ending at a field is its type's)."""
        head, rest = parts[0], parts[1:]
        typed = self.local.get(head)
        if typed is not None:  # a local: a member of its type, if it has a named one
            owners = {self.type_of(self.path, t, depth + 1) if t else None for t in typed}
            owner = owners.pop() if len(owners) == 1 and rest else None
            found = None if owner is None else self.members(owner, rest, depth, fields)
            how = f"receiver typed {self.r.qualnames[owner[0]][owner[1]]}" if owner else ""
            return None if found is None else (found, how)
        pf = self.r.files[self.path]
        hit = self.lookup(_dir(self.path) + _slot(pf), head)
        how = "this package"
        if hit is None and not rest:
            for b in pf.imports:
                d = self.t.directory(b.module) if b.name == "." else None
                hit = self.lookup(d, head) if d is not None else None
                if hit is not None:
                    how = f"imported {b.module}"
                    break
        elif hit is None:
            d, module = self.imported(head)
            hit = self.lookup(d, rest[0]) if d is not None else None
            how, rest = f"imported {module}", rest[1:]
        found = None if hit is None else self.members(hit, rest, depth, fields)
        return None if found is None else (found, how)

    def imported(self, name: str) -> tuple[str | None, str]:
        """(directory, import path) of the repository package ``name`` is bound to in this
        file: by its alias, else by the package's declared name."""
        imports = self.r.files[self.path].imports
        for b in imports:
            if b.name == name:
                return self.t.directory(b.module), b.module
        for b in imports:
            d = self.t.directory(b.module) if b.name == "" else None
            if d is not None:
                self.r.note_key("go", f"{d}={name}")
                if name in self.t.names.get(d, {}):
                    return d, b.module
        return None, ""

    def lookup(self, package: str, name: str) -> Target | None:
        """A package's definition of ``name`` (a test file's only from a test file)."""
        self.r.note_key("go", f"{package}:{name}")
        for target in self.t.defs.get(package, {}).get(name, ()):
            if self.test or not target[0].endswith("_test.go"):
                self.r.note_lookup(target[0], name)
                return target
        return None

    def members(
        self, found: Target, rest: tuple[str, ...], depth: int, fields: bool = False
    ) -> Target | None:
        """``found.rest[0].rest[1]...``: each part a member of the type of what precedes it;
        the last one a method (an interface's too), or with ``fields`` a field's type."""
        final = True
        for part in rest:
            owner = self.type_of_definition(found, depth + 1)
            hit = self.member(owner, part, depth + 1) if owner is not None else None
            if hit is None:
                return None
            found, final = hit
        return found if final or fields else None

    def is_type(self, found: Target) -> bool:
        return self.r.qualnames[found[0]][found[1]] in self.r.classes[found[0]]

    def type_of_definition(self, found: Target, depth: int) -> Target | None:
        """The type a definition is (a type) or has (a variable, a function's result)."""
        if self.is_type(found):
            return found
        path, node = found
        qual = self.r.qualnames[path][node]
        self.r.note_lookup(path, qual)
        declared = self.r.files[path].bases.get(qual)
        return self.type_of(path, declared[0], depth + 1) if declared else None

    def type_of(self, path: str, expr: TypeExpr, depth: int) -> Target | None:
        """The type definition a type expression written in ``path`` names."""
        if depth > _MAX_DEPTH:
            return None
        res = self.at(path)
        if expr[0] == _CALL:
            fn = res.name(expr[1:], depth + 1)
            if fn is None:
                return None
            return self.type_of_definition(fn[0], depth + 1)
        if expr[0] == _COLLECTION:
            return None  # no methods of its own
        if expr[0] == _RANGE:
            declared = res.declared_type(expr[1:], depth + 1)
            if declared is None or declared[1][0] != _COLLECTION:
                return None
            return self.type_of(declared[0], declared[1][1:], depth + 1)
        if len(expr) == 1:
            found = res.lookup(_dir(path) + _slot(self.r.files[path]), expr[0])
        else:
            d, _ = res.imported(expr[0])
            found = res.lookup(d, expr[1]) if d is not None else None
        return found if found is not None and self.is_type(found) else None

    def declared_type(self, parts: tuple[str, ...], depth: int) -> tuple[str, TypeExpr] | None:
        """(file, type expression) of the declaration of a dotted value: a local, a
        package variable or a field of one."""
        if depth > _MAX_DEPTH:
            return None
        head, rest = parts[0], parts[1:]
        found: tuple[str, TypeExpr] | None = None
        if head in self.local:
            typed = set(self.local[head])
            found = (self.path, typed.pop()) if len(typed) == 1 else None
        else:
            pf = self.r.files[self.path]
            hit = self.lookup(_dir(self.path) + _slot(pf), head)
            if hit is None and rest:
                d, _ = self.imported(head)
                hit = self.lookup(d, rest[0]) if d is not None else None
                rest = rest[1:]
            if hit is not None and self.is_type(hit):  # a type standing for a value of it
                found = (hit[0], (self.r.qualnames[hit[0]][hit[1]],)) if rest else None
            elif hit is not None:
                qual = self.r.qualnames[hit[0]][hit[1]]
                self.r.note_lookup(hit[0], qual)
                declared = self.r.files[hit[0]].bases.get(qual)
                found = (hit[0], declared[0]) if declared else None
        for part in rest:
            owner = self.type_of(*found, depth + 1) if found and found[1] else None
            found = self.field(owner, part, depth + 1) if owner is not None else None
        return found if found and found[1] else None

    def field(self, owner: Target, name: str, depth: int) -> tuple[str, TypeExpr] | None:
        """(file, declared type) of a field of a type or of a type it embeds."""
        if depth > _MAX_DEPTH:
            return None
        path, node = owner
        type_name = self.r.qualnames[path][node]
        pf = self.r.files[path]
        key = f"{type_name}.{name}"
        self.r.note_lookup(path, key)
        self.r.note_lookup(path, type_name)
        if key in pf.bases:
            return (path, pf.bases[key][0]) if pf.bases[key] else None
        for embedded in pf.bases.get(type_name, ()):
            inner = self.type_of(path, embedded, depth + 1)
            hit = self.field(inner, name, depth + 1) if inner is not None else None
            if hit is not None:
                return hit
        return None

    def member(self, owner: Target, name: str, depth: int) -> tuple[Target, bool] | None:
        """A member of a type, or of a type it embeds: (its method or an interface's, True)
        or (a field's type, False)."""
        if depth > _MAX_DEPTH:
            return None
        path, node = owner
        type_name = self.r.qualnames[path][node]
        pf = self.r.files[path]
        key = f"{type_name}.{name}"
        method = self.lookup(_dir(path) + _slot(pf), key)
        if method is not None:
            return method, True
        for k in (key, type_name):
            self.r.note_lookup(path, k)
        if key in pf.bases:
            declared = pf.bases[key]
            field_type = self.type_of(path, declared[0], depth + 1) if declared else None
            return None if field_type is None else (field_type, False)
        for embedded in pf.bases.get(type_name, ()):
            inner = self.type_of(path, embedded, depth + 1)
            hit = self.member(inner, name, depth + 1) if inner is not None else None
            if hit is not None:
                return hit
        return None


LANGUAGE = Go()

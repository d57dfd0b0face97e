"""Java: names resolve as javac finds them, through packages, imports and the class hierarchy.

Parse time reads what resolution needs from the syntax tree:

* definitions qualified by their enclosing types (``Outer.Inner``, ``Outer.Inner.run``;
  methods of anonymous classes are left out: nothing names them); classes, interfaces, enums,
  records and annotation types are types; a constructor is ``Box.Box``;
* the ``package`` declaration and the imports, as :class:`ImportBinding` s: ``import a.b.C;``
  binds ``C`` (module ``a.b.C``, symbol ``C``); ``import a.b.*;`` is ``("a.b.*", "a.b", "*")``;
  static imports have ``level`` 1 (``import static a.b.C.m;`` binds ``m`` of ``a.b.C``);
* ``extends``/``implements`` as ``bases``;
* each call's receiver: ``x.run()`` becomes ``(*type of x, "run")`` where a field, local or
  parameter declaration in the file types ``x`` (``Foo x``, ``var x = new Foo()``), and
  ``new Box(1)`` is ``("new", "Box")``; ``("this", m)``, ``("super", m)`` and ``("", m)`` (a
  receiver that is an expression) are kept as such, the enclosing type as ``scope``.

A simple type name resolves as the compiler looks it up: member types of the enclosing types,
the file's own types, a single-type import, the file's package (every file of it), on-demand
imports. A single-type import of a type outside the repository (``import java.util.List;``)
ends the search: it never resolves to a repository type of the same name. Members are looked
up in the type, then through its ``extends``/``implements``. A constructor call resolves to its
class; the overloads of a method are one target, its first declaration. Unqualified calls go
through the enclosing types and their supertypes, then static imports.

At the cursor, receivers are typed from the declarations the buffer shows above the cursor
(the index's copy of the file may be older); by the naming conventions a capitalised bare
name is a type and any other a method; a name the last lines only read (``builder.indent;``)
is a field, not the method of that name. One guess remains there, labelled as such: a
method called on a receiver of unknown type (``builder().run()``, an inherited field) is the
repository's only method of that name, never one in a test file for code outside tests, and
never a name the JDK's common types have (``get``, ``add``, ``close``). Call edges never guess.
"""

from __future__ import annotations

import re
import weakref
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING

from repomem.index.langs import MAX_SIBLINGS, SIBLING_LINES, Language, is_test, shared_dirs

if TYPE_CHECKING:
    from tree_sitter import Node

    from repomem.index.parsing import CallSite, ParsedFile
    from repomem.index.resolver_types import ResolverTables as Resolver
    from repomem.index.resolver_types import Target

NAMESPACE = "java"
_MAX_DEPTH = 8
#: ``bases`` entries of a type that are not supertypes: ``(FIELD, name, *type)`` for a field of
#: a class type, ``(RESULT, name, *type)`` for a method returning one (kept with the type, so
#: that a change of either is a change of the type for the files that looked it up)
FIELD = "#field"
RESULT = "#result"
#: lines above the cursor searched for the declarations that type a receiver
TYPE_LINES = 200
#: lines above the cursor whose declarations, unused yet, make their types ``fresh_types``
FRESH_LINES = 3
#: lines above the cursor whose names tell fields from methods
NAME_LINES = 40

_TYPES = frozenset(
    {
        "class_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
        "annotation_type_declaration",
    }
)
# nodes whose class body has no name: what is defined in it cannot be named from outside
_ANONYMOUS = frozenset({"object_creation_expression", "enum_constant"})


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# (``this`` and ``super`` start the names they qualify: ``this.run``)
_KEYWORDS = _words(
    """abstract assert boolean break byte case catch char class const continue default do
    double else enum extends final finally float for goto if implements import instanceof int
    interface long native new package private protected public return short static strictfp
    switch synchronized throw throws transient try void volatile while var record
    yield sealed permits non-sealed true false null"""
)
# the public types of java.lang, imported into every file (``Module``, ``Record``,
# ``Package`` and ``Compiler`` are left out: projects name their own types so, and javac
# prefers a project's type of the file's package or imports to java.lang's anyway)
_JAVA_LANG = _words(
    """Appendable AutoCloseable CharSequence Cloneable Comparable Iterable Readable Runnable
    Boolean Byte Character Class ClassLoader ClassValue Double Enum Float
    InheritableThreadLocal Integer Long Math ModuleLayer Number Object Process ProcessBuilder
    ProcessHandle Runtime RuntimePermission SecurityManager Short StackTraceElement
    StackWalker StrictMath String StringBuffer StringBuilder System Thread ThreadGroup
    ThreadLocal Throwable Void ArithmeticException ArrayIndexOutOfBoundsException
    ArrayStoreException ClassCastException ClassNotFoundException
    CloneNotSupportedException EnumConstantNotPresentException Exception
    IllegalAccessException IllegalArgumentException IllegalCallerException
    IllegalMonitorStateException IllegalStateException IllegalThreadStateException
    IndexOutOfBoundsException InstantiationException InterruptedException
    NegativeArraySizeException NoSuchFieldException NoSuchMethodException
    NullPointerException NumberFormatException ReflectiveOperationException RuntimeException
    SecurityException StringIndexOutOfBoundsException TypeNotPresentException
    UnsupportedOperationException AbstractMethodError AssertionError BootstrapMethodError
    ClassCircularityError ClassFormatError Error ExceptionInInitializerError
    IllegalAccessError IncompatibleClassChangeError InstantiationError InternalError
    LinkageError NoClassDefFoundError NoSuchFieldError NoSuchMethodError OutOfMemoryError
    StackOverflowError ThreadDeath UnknownError UnsatisfiedLinkError
    UnsupportedClassVersionError VerifyError VirtualMachineError Deprecated
    FunctionalInterface Override SafeVarargs SuppressWarnings"""
)
# methods of the JDK's everyday types (Object, String, collections, streams, I/O, builders):
# a receiver of unknown type calling one of these is more likely the JDK's than the
# repository's only method of that name
_JDK_METHODS = _words(
    """equals hashCode toString getClass clone finalize notify notifyAll wait compareTo
    length charAt substring indexOf lastIndexOf trim strip isEmpty isBlank split startsWith
    endsWith contains replace replaceAll toLowerCase toUpperCase format valueOf matches
    getBytes toCharArray concat join chars intern append insert reverse delete deleteCharAt
    setLength size get set add addAll put putAll remove removeAll retainAll clear containsKey
    containsValue keySet values entrySet getKey getValue setValue iterator hasNext next
    listIterator stream forEach map filter collect reduce sorted distinct limit skip findFirst
    findAny anyMatch allMatch noneMatch count min max toArray of ofNullable orElse orElseGet
    orElseThrow isPresent ifPresent subList sort indexOf peek poll offer push pop element
    apply accept test run call close flush read write print println printf getMessage
    getCause printStackTrace getName getSimpleName getType getModifiers invoke newInstance
    name ordinal intValue longValue doubleValue floatValue booleanValue byteValue shortValue
    charValue start join interrupt isAlive cancel isDone submit execute shutdown await
    countDown lock unlock getAndIncrement incrementAndGet compareAndSet getAndSet
    asList emptyList singletonList unmodifiableList copyOf requireNonNull hash build
    getOrDefault putIfAbsent computeIfAbsent compute merge descendingIterator first last
    floor ceiling higher lower headMap tailMap subMap getFirst getLast addFirst addLast
    removeFirst removeLast"""
)

_DOTTED = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")
_TYPE_ARGS = re.compile(r"<[^<>]*>")
_SPACE = re.compile(r"\s+")
# ``Foo x =``, ``Map<K, V> m;``, ``(Foo x,``, ``for (Foo x :``: a declaration of a class type
# (capitalised, by the naming conventions); ``var x = new Foo(`` is read by ``_VAR_NEW``
_DECLARED = re.compile(
    r"\b(?P<type>[A-Z][\w$]*(?:\.[A-Za-z_$][\w$]*)*)(?P<args><[^;{}()=]*>)?"
    r"(?P<array>(?:\[\s*\])*)\s+(?P<name>[a-z_$][\w$]*)\s*(?=[=;,):])"
)
_VAR_NEW = re.compile(r"\bvar\s+(?P<name>[A-Za-z_$][\w$]*)\s*=\s*new\s+(?P<type>[\w$.]+)")
_WORD = re.compile(r"[A-Za-z_$][\w$]*")
# a type declaration's header up to its ``{`` (``name``, its ``extends`` and ``implements``
# clauses), else a brace
_HEADER_OR_BRACE = re.compile(
    r"\b(?:class|interface|enum|record)\s+(?P<name>[A-Za-z_$][\w$]*)[^{};=]*?"
    r"(?:\bextends\s+(?P<extends>[^{};]*?))?(?:\bimplements\s+(?P<implements>[^{};]*?))?"
    r"(?:\bpermits\s+[^{};]*?)?\{|[{}]"
)
# ``).b.c(``: members of a parenthesised expression's value, the last one called
_AFTER_CALL = re.compile(r"\)\s*(?P<rest>(?:\.\s*[A-Za-z_$][\w$]*\s*)+)\(")
# what a call's ``(`` follows: ``new Foo``, ``a.b.f``, or ``).f`` (``dot``: a chained call)
_CALLEE_END = re.compile(
    r"(?:(?P<new>\bnew\s+)|(?P<dot>\)\s*\.\s*)|(?<![\w$.]))"
    r"(?P<name>[A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*)\s*(?:<[^<>()]*>\s*)?$"
)
_CAST = re.compile(r"\s*\(\s*(?P<type>[A-Z][\w$.]*)(?:<[^()]*>)?\s*\)")
_CALLED = re.compile(r"([A-Za-z_$][\w$]*)\s*\(|::\s*([A-Za-z_$][\w$]*)")
_READ = re.compile(r"(?<![\w$])([A-Za-z_$][\w$]*)(?!\s*[(\w$])")
_STRING = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'')
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
# a test class's name and the class it tests: ``FooTest``, ``FooTests``, ``TestFoo``
_TEST_CLASS = re.compile(r"(?P<before>[A-Z][\w$]*?)Tests?|Test(?P<after>[A-Z][\w$]*)")
_PRIMITIVE = frozenset({"int", "long", "short", "byte", "char", "boolean", "float", "double"})


def _text(node: Node) -> str:
    return node.text.decode("utf-8", "replace")


def _parts(text: str) -> tuple[str, ...] | None:
    """``a.b.C<T>`` as ("a", "b", "C"); None for anything but a dotted name (arrays,
    primitives, wildcards)."""
    text = _SPACE.sub("", text)
    while "<" in text:
        stripped = _TYPE_ARGS.sub("", text)
        if stripped == text:
            return None
        text = stripped
    if not _DOTTED.fullmatch(text) or text in _PRIMITIVE or text == "var":
        return None
    return tuple(text.split("."))


def _outer(qual: str) -> str | None:
    return qual.rsplit(".", 1)[0] if "." in qual else None


def _chain(scope: str | None) -> Iterable[str]:
    """``A.B.C`` -> ``A.B.C``, ``A.B``, ``A``: the enclosing types, innermost first."""
    while scope:
        yield scope
        scope = _outer(scope)


class _Declarations:
    """The variables a file declares, to type the receivers of its calls: a local is
    visible from its declaration to the end of its method, a parameter in all its method, a
    field in all its class; the innermost wins, then the nearest above. Declarations are
    kept as found; a type is read only for a name some call has as its receiver."""

    def __init__(self, source: bytes, types: _Segments, methods: _Segments) -> None:
        self.source = source
        self.types = types
        self.methods = methods
        # name -> [(declaration, its name node)]
        self.by_name: dict[bytes, list[tuple[Node, Node]]] = defaultdict(list)
        self._spans: dict[bytes, list[tuple[tuple[int, int], int, int, Node, Node]]] = {}

    def add(self, node: Node, name: Node) -> None:
        """A declaration matched by the file query: its node and the declared name."""
        self.by_name[self.source[name.start_byte : name.end_byte]].append((node, name))

    def type_at(
        self, name: bytes, byte: int, fields_only: bool = False
    ) -> tuple[bool, tuple[str, ...] | None]:
        """(declared, type or None when not known) of ``name`` at ``byte``."""
        best: tuple[tuple[int, int], Node, Node] | None = None
        for key, lo, hi, node, declared in self._visible(name):
            if lo <= byte < hi and (best is None or key > best[0]) and not (fields_only and key[0]):
                best = (key, node, declared)
        if best is None:
            return False, None
        _, node, declared = best
        type_ = node.child_by_field_name("type")
        if type_ is None:
            return True, None
        text = _text(type_)
        if text == "var" and declared.parent is not None:  # ``var x = new Foo()``
            init = declared.parent.child_by_field_name("value")
            made = init.child_by_field_name("type") if init is not None else None
            if init is None or init.type != "object_creation_expression" or made is None:
                return True, None
            text = _text(made)
        return True, _parts(text)

    def _visible(self, name: bytes) -> list[tuple[tuple[int, int], int, int, Node, Node]]:
        """The declarations of ``name``, each with its rank (fields 0, the others 1, then
        by where it starts) and the bytes where it is visible."""
        found = self._spans.get(name)
        if found is not None:
            return found
        found = []
        for node, declared in self.by_name.get(name, ()):
            kind, start = node.type, node.start_byte
            if kind == "field_declaration":
                span = self.types.at(start)
                if span is not None:
                    found.append(((0, span[0]), span[0], span[1], node, declared))
            elif kind == "enhanced_for_statement":
                found.append(((1, start), start, node.end_byte, node, declared))
            else:
                span = self.methods.at(start)
                if span is not None:
                    lo = span[0] if kind == "formal_parameter" else start
                    found.append(((1, start), lo, span[1], node, declared))
        self._spans[name] = found
        return found


class _Segments:
    """The innermost of nested (start, end, label) spans holding a byte."""

    def __init__(self, spans: list[tuple[int, int, str]]) -> None:
        spans.sort()
        self.points: list[int] = [-1]
        self.spans: list[tuple[int, int, str] | None] = [None]
        stack: list[tuple[int, int, str]] = []
        for span in spans:
            self._close(stack, span[0])
            stack.append(span)
            self.points.append(span[0])
            self.spans.append(span)
        self._close(stack, 1 << 62)

    def _close(self, stack: list[tuple[int, int, str]], upto: int) -> None:
        while stack and stack[-1][1] <= upto:
            end = stack.pop()[1]
            self.points.append(end)
            self.spans.append(stack[-1] if stack else None)

    def at(self, byte: int) -> tuple[int, int, str] | None:
        return self.spans[bisect_right(self.points, byte) - 1]


def _reserved(name: str) -> bool:
    """A name of the language's own: a keyword, a primitive type, a ``java.lang`` type."""
    return name in _KEYWORDS or name in _PRIMITIVE or name in _JAVA_LANG


class _Types:
    """Java's types and their members, looked up in the tables of each resolver: a dotted
    type name as a file sees it (its own and nested types, imports, its package, wildcard
    imports, fully qualified names), members own or inherited, and field and result types.
    Every lookup is noted as a dependency of the file asking."""

    def __init__(self) -> None:
        # per resolver: type's fully qualified name -> [(file, qualified name)], and per
        # file the first declaration of each qualified name (overloads are one target)
        self._tables: weakref.WeakKeyDictionary[Resolver, _Tables] = weakref.WeakKeyDictionary()
        self._last: tuple[weakref.ref[Resolver], _Tables] | None = None  # the last one asked

    def _of(self, r: Resolver) -> _Tables:
        last = self._last
        if last is not None and last[0]() is r:
            return last[1]
        tables = self._tables.get(r)
        if tables is None:
            tables = self._tables[r] = _Tables()
        self._last = (weakref.ref(r), tables)
        return tables

    def _fqn(self, r: Resolver, path: str, fqn: str) -> tuple[str, str] | None:
        """The repository type of a fully qualified name, as seen from ``path``: never one
        in a test file from outside tests; of several copies, the nearest by path."""
        r.note_key(NAMESPACE, fqn)
        found = self._of(r).types.get(fqn)
        if not found:
            return None
        if not is_test(path):
            found = [t for t in found if not is_test(t[0])]
        if len(found) < 2:
            return found[0] if found else None
        return min(found, key=lambda t: (-shared_dirs(t[0], path), t[0]))

    def _simple_type(
        self, r: Resolver, path: str, name: str, scope: str | None
    ) -> tuple[str, str] | None:
        classes = r.classes.get(path, set())
        for outer in _chain(scope):
            key = f"{outer}.{name}"
            r.note_lookup(path, key)
            if key in classes:
                return path, key
        r.note_lookup(path, name)
        if name in classes:
            return path, name
        pf = r.files[path]
        binding = r.bindings.get(path, {}).get(name)
        if binding is not None and binding.level == 0 and binding.symbol == name:
            return self._fqn(r, path, binding.module)  # outside the repository: nothing
        found = self._fqn(r, path, f"{pf.package}.{name}" if pf.package else name)
        if found is not None:
            return found
        for b in pf.imports:
            if b.symbol == "*":
                found = self._fqn(r, path, f"{b.module}.{name}")
                if found is not None:
                    return found
        return None

    def _type(
        self, r: Resolver, path: str, parts: tuple[str, ...], scope: str | None, depth: int = 0
    ) -> tuple[str, str] | None:
        """(file, qualified name) of the type a dotted type name refers to in ``path``."""
        if not parts or _reserved(parts[0]):
            return None
        found = self._simple_type(r, path, parts[0], scope)
        rest = parts[1:]
        if found is None:
            if not parts[0][:1].islower():
                return None
            for end in range(2, len(parts) + 1):  # package-qualified: ``a.b.C``
                found = self._fqn(r, path, ".".join(parts[:end]))
                if found is not None:
                    rest = parts[end:]
                    break
            else:
                return None
        for part in rest:
            hit = self._member(r, *found, part, depth + 1)
            if hit is None or hit[1] not in r.classes[hit[0]]:
                return None
            found = hit
        return found

    def _member(
        self, r: Resolver, path: str, qual: str, name: str, depth: int = 0
    ) -> tuple[str, str] | None:
        """(file, qualified name) of member ``name`` (a method or a member type) of type
        ``qual``, its own or inherited through ``extends``/``implements``."""
        if depth > _MAX_DEPTH:
            return None
        key = f"{qual}.{name}"
        r.note_lookup(path, key)
        if key in self._of(r).first.get(path, {}):
            return path, key
        r.note_lookup(path, qual)  # its bases
        for base in supertypes(r.files[path].bases.get(qual, ())):
            found = self._type(r, path, base, _outer(qual), depth + 1)
            if found is not None:
                hit = self._member(r, *found, name, depth + 1)
                if hit is not None:
                    return hit
        return None

    def _supers(
        self, r: Resolver, path: str, scope: str | None, name: str
    ) -> tuple[str, str] | None:
        """Member ``name`` through the supertypes of ``scope`` (``super.name``)."""
        if scope is None:
            return None
        r.note_lookup(path, scope)
        for base in supertypes(r.files[path].bases.get(scope, ())):
            found = self._type(r, path, base, _outer(scope))
            if found is not None:
                hit = self._member(r, *found, name)
                if hit is not None:
                    return hit
        return None

    def _member_type(
        self, r: Resolver, path: str, qual: str, kind: str, name: str, depth: int = 0
    ) -> tuple[str, str] | None:
        """(file, qualified name) of the repository type of field (``FIELD``) or method
        result (``RESULT``) ``name`` of type ``qual``, its own or inherited; the type is read
        as the declaring file names it."""
        if depth > _MAX_DEPTH:
            return None
        r.note_lookup(path, qual)
        entries = r.files[path].bases.get(qual, ())
        for entry in entries:
            if entry[0] == kind and entry[1] == name:
                return self._type(r, path, entry[2:], qual)
        for base in supertypes(entries):
            found = self._type(r, path, base, _outer(qual), depth + 1)
            if found is not None:
                hit = self._member_type(r, *found, kind, name, depth + 1)
                if hit is not None:
                    return hit
        return None

    def _inherited(self, r: Resolver, start: tuple[str, str], shown: set[str]) -> list[Target]:
        """The methods of ``start``'s supertypes (breadth first, ``_MAX_DEPTH`` levels) whose
        names are not in ``shown``, the nearest type's of each name."""
        found: dict[str, Target] = {}
        seen = {start}
        level = [start]
        for _ in range(_MAX_DEPTH):
            above: list[tuple[str, str]] = []
            for p, qual in level:
                for base in supertypes(r.files[p].bases.get(qual, ())):
                    hit = self._type(r, p, base, _outer(qual))
                    if hit is not None and hit not in seen:
                        seen.add(hit)
                        above.append(hit)
            for p, qual in above:
                for name, node in _method_names(r, self._of(r), p, qual).items():
                    if name not in shown and name not in found:
                        found[name] = (p, node)
            if not above:
                break
            level = above
        return list(found.values())

    def _reached(
        self, r: Resolver, path: str, pf: ParsedFile, cursor: _Cursor, lines: list[str]
    ) -> Iterable[tuple[tuple[str, str], int]]:
        """The types of the enclosing types' fields (by the row where the buffer last uses the
        field), then in a test class the class it is named for (``_tested``), wherever the
        cursor is: what the class's tests call."""
        yield from self._field_types(r, path, pf, cursor, lines)
        tested = _tested(path, cursor, lines)
        subject = None if tested is None else self._type(r, path, (tested,), None)
        if subject is not None:
            yield subject, len(lines) - 1

    def _field_types(
        self, r: Resolver, path: str, pf: ParsedFile, cursor: _Cursor, lines: list[str]
    ) -> list[tuple[tuple[str, str], int]]:
        """The repository types of the enclosing types' own fields, each with the last row
        above the cursor that names the field (else the enclosing type's first row)."""
        fields: dict[str, tuple[str, ...]] = {}
        scopes: dict[str, str] = {}
        for outer in _chain(cursor.scope):
            for entry in pf.bases.get(outer, ()):
                if entry[0] == FIELD and entry[1] not in fields:
                    fields[entry[1]] = entry[2:]
                    scopes[entry[1]] = outer
        if not fields:
            return []
        last: dict[str, int] = {}
        row = len(lines) - 1
        for i in range(row, max(-1, row - TYPE_LINES), -1):
            for word in _WORD.findall(lines[i]):
                if word in fields and word not in last:
                    last[word] = i
        out = []
        for name, typed in fields.items():
            hit = self._type(r, path, typed, scopes[name])
            if hit is not None:
                out.append((hit, last.get(name, cursor.scope_row)))
        return out

    def _fresh(self, r: Resolver, path: str, cursor: _Cursor) -> list[tuple[str, str]]:
        """The repository types of another file of the variables ``cursor`` sees declared
        and not used yet (the buffer shows its own file's types)."""
        out: dict[tuple[str, str], None] = {}
        for typed in cursor.fresh:
            hit = self._type(r, path, typed, cursor.scope)
            if hit is not None and hit[0] != path:
                out.setdefault(hit)
        return list(out)

    def _inheriting(
        self, r: Resolver, found: list[tuple[tuple[str, str], set[str]]], types: int
    ) -> list[tuple[Target, list[Target]]]:
        """The first ``types`` of the types ``found`` that inherit a method (``_inherited``)
        neither they declare nor the names given with them, each with those methods."""
        out: list[tuple[Target, list[Target]]] = []
        seen: set[tuple[str, str]] = set()
        for hit, own in found:
            if hit not in seen and len(out) < types:
                seen.add(hit)
                declared = own | set(_method_names(r, self._of(r), *hit))
                inherited = self._inherited(r, hit, declared)
                if inherited:
                    out.append((self._target(r, hit), inherited))
        return out

    def _target(self, r: Resolver, found: tuple[str, str]) -> Target:
        return found[0], self._of(r).first[found[0]][found[1]]


class Java(_Types, Language):
    """Java's resolution (see the module doc)."""

    namespace = NAMESPACE
    file_callees = 8
    group_members = 2
    receiver_types = 2
    receiver_heading = "// its bases' members:"
    receiver_names = 16
    receiver_written_first = True
    successors = 2
    other_methods = 8

    def __init__(self) -> None:
        super().__init__()
        self._context: tuple[ParsedFile, list[str], _Cursor] | None = None

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
        from repomem.index.parsing import CallSite, Definition, ImportBinding

        types: list[tuple[int, int, str]] = []  # named types: (start, end, qualified name)
        methods: list[tuple[int, int, str]] = []
        outer: dict[int, str | None] = {}
        for (d, name), i in zip(defs, def_nodes, strict=True):
            qual = _qualify(d, _text(name), outer)
            if qual is None:
                continue
            is_type = d.type in _TYPES
            (types if is_type else methods).append((d.start_byte, d.end_byte, qual))
            if is_type:
                outer[d.start_byte] = qual
                bases = _bases(d)
                if bases:
                    parsed.bases[qual] = bases
            elif d.type == "method_declaration" and "." in qual:
                result = _class_type(d)
                if result is not None:
                    owner, _, method = qual.rpartition(".")
                    parsed.bases.setdefault(owner, []).append((RESULT, method, *result))
            if i >= 0:
                parsed.definitions.append(Definition(qual, i, is_type))
        scopes = _Segments(types)
        declared = _Declarations(source, scopes, _Segments(methods))
        invocations = []
        for (c, name), i in zip(calls, call_nodes, strict=True):
            kind = c.type
            if kind == "method_invocation" or kind == "object_creation_expression":
                invocations.append((c, name, i))
            elif kind == "package_declaration":
                parsed.package = _SPACE.sub("", _text(name))
            elif kind == "import_declaration":
                parsed.imports.append(ImportBinding(*_import(c, name)))
                row = c.start_point.row
                owner = parsed.line_owner
                parsed.import_nodes.append(int(owner[row]) if row < owner.size else -1)
            else:
                declared.add(c, name)
                if kind == "field_declaration":
                    span = scopes.at(c.start_byte)
                    typed = _class_type(c)
                    if span is not None and typed is not None:
                        parsed.bases.setdefault(span[2], []).append((FIELD, _text(name), *typed))

        for c, name, i in invocations:
            if i < 0:
                continue
            span = scopes.at(c.start_byte)
            scope = span[2] if span is not None else None
            if c.type == "object_creation_expression":
                parts = _parts(_text(name))
                if parts is not None:
                    parsed.calls.append(CallSite(i, ("new", *parts), scope))
                continue
            receiver = _receiver(c.child_by_field_name("object"), c.start_byte, declared)
            parsed.calls.append(CallSite(i, (*receiver, _text(name)), scope))

    # ---- tables --------------------------------------------------------------------------
    def add(self, r: Resolver, path: str, pf: ParsedFile) -> None:
        tables = self._of(r)
        first: dict[str, int] = {}
        for d in pf.definitions:
            first.setdefault(d.name, d.node)
        tables.first[path] = first
        for fqn, qual in _type_names(pf):
            tables.types[fqn].append((path, qual))

    def remove(self, r: Resolver, path: str, pf: ParsedFile) -> None:
        tables = self._of(r)
        tables.first.pop(path, None)
        for fqn, _ in _type_names(pf):
            kept = [t for t in tables.types[fqn] if t[0] != path]
            if kept:
                tables.types[fqn] = kept
            else:
                del tables.types[fqn]

    def provides(self, path: str, pf: ParsedFile) -> Iterable[str]:
        return (fqn for fqn, _ in _type_names(pf))

    def reserved(self, name: str) -> bool:
        return _reserved(name)

    def _unqualified(
        self, r: Resolver, path: str, name: str, scope: str | None, cursor: _Cursor | None = None
    ) -> tuple[tuple[str, str], str] | None:
        """A method called by its bare name: of the enclosing types (inherited ones too), else
        statically imported; at the cursor, also through the supertypes the buffer declares."""
        for outer in _chain(scope):
            hit = self._scope_member(r, path, outer, name, cursor)
            if hit is not None:
                return hit, f"method of {outer}"
        r.note_lookup(path, name)
        binding = r.bindings.get(path, {}).get(name)
        if binding is not None and binding.level == 1:
            owner = self._fqn(r, path, binding.module)
            hit = self._member(r, *owner, name) if owner is not None else None
            return None if hit is None else (hit, "static import")
        for b in r.files[path].imports:
            if b.level == 1 and b.symbol == "*":
                owner = self._fqn(r, path, b.module)
                hit = self._member(r, *owner, name) if owner is not None else None
                if hit is not None:
                    return hit, "static import"
        return None

    # ---- call edges ----------------------------------------------------------------------
    def resolve_call(self, r: Resolver, path: str, call: CallSite) -> Target | None:
        parts, scope = call.parts, call.scope
        head, name = parts[0], parts[-1]
        found: tuple[str, str] | None = None
        if head == "new":
            found = self._type(r, path, parts[1:], scope)
        elif len(parts) == 1:
            hit = self._unqualified(r, path, name, scope)
            found = None if hit is None else hit[0]
        elif head == "this" and len(parts) == 2:
            found = self._member(r, path, scope, name) if scope else None
        elif head == "super" and len(parts) == 2:
            found = self._supers(r, path, scope, name)
        elif head not in ("", "this", "super"):
            owner = self._type(r, path, parts[:-1], scope)
            found = None if owner is None else self._member(r, *owner, name)
        return None if found is None else self._target(r, found)

    # ---- the cursor's names --------------------------------------------------------------
    def resolve_name(
        self, r: Resolver, path: str, parts: tuple[str, ...], lines: list[str]
    ) -> tuple[Target, str] | None:
        pf = r.files.get(path)
        if pf is None:
            return None
        cursor = self._cursor(pf, lines)
        found = self._name(r, path, parts, cursor)
        if found is None or parts[-1] not in cursor.fields:
            return found
        (target, node), _ = found
        # a name the buffer only reads as a field (``this.indent = builder.indent;``) is
        # not the method of the same name
        return found if r.qualnames[target][node] in r.classes[target] else None

    def in_scope(self, r: Resolver, path: str, lines: list[str]) -> list[tuple[Target, int]]:
        """What the code at the cursor reaches without the last lines naming it: the
        supertypes the enclosing types declare (their members are what unqualified calls and
        ``this.`` reach; their own supertypes, which the file does not name, are left out),
        the types of the enclosing types' fields and a test class's subject (``_reached``),
        and the methods called on a call's or a cast's result in the last lines
        (``getHandler(p).start()``, ``((Html) p).handler.end()``)."""
        pf = r.files.get(path)
        if pf is None:
            return []
        cursor = self._cursor(pf, lines)
        found: dict[tuple[str, str], int] = {}
        for target, row in self._chained(r, path, cursor):
            found.setdefault(target, row)
        for outer in _chain(cursor.scope):
            for base in supertypes(pf.bases.get(outer, ())) or cursor.text_bases.get(outer, ()):
                hit = self._type(r, path, base, _outer(outer))
                if hit is not None:  # as near as the last lines' names: all of them use it
                    found.setdefault(hit, max(cursor.scope_row, len(lines) - 1 - NAME_LINES))
        for target, row in self._reached(r, path, pf, cursor, lines):
            found.setdefault(target, row)
        # the buffer shows its own file's definitions
        return [(self._target(r, hit), row) for hit, row in found.items() if hit[0] != path]

    def fresh_types(self, r: Resolver, path: str, lines: list[str]) -> list[Target]:
        """The repository types of the variables the last ``FRESH_LINES`` lines declare (a
        method's parameters, ``Foo x = ...``, a loop's variable) and no code uses yet."""
        pf = r.files.get(path)
        fresh = [] if pf is None else self._fresh(r, path, self._cursor(pf, lines))
        return [self._target(r, hit) for hit in fresh]

    def receiver_functions(
        self, r: Resolver, path: str, lines: list[str], types: int
    ) -> list[tuple[Target, list[Target]]]:
        """Up to ``types`` of: the supertypes of another file that the enclosing type
        declares, each with the methods it inherits that neither it nor the enclosing type
        declares (what ``this.`` and a bare call reach that no card shows: the views'
        ``relativeOnWidth``, declared two classes above the ``GroupView`` they extend); then
        ``fresh_types``, each with the methods it inherits and does not declare (``Document
        doc``, then ``doc.select(`` of the ``Element`` it extends)."""
        pf = r.files.get(path)
        cursor = None if pf is None or types <= 0 else self._cursor(pf, lines)
        if pf is None or cursor is None:
            return []
        scope = cursor.scope
        found: list[tuple[tuple[str, str], set[str]]] = []
        if scope is not None:
            own = set(_method_names(r, self._of(r), path, scope))
            for base in supertypes(pf.bases.get(scope, ())) or cursor.text_bases.get(scope, ()):
                hit = self._type(r, path, base, _outer(scope))
                if hit is not None and hit[0] != path:
                    found.append((hit, own))
        found += [(hit, set()) for hit in self._fresh(r, path, cursor)]
        return self._inheriting(r, found, types)

    def receiver_key(self, qual: str) -> str:
        return qual.rsplit(".", 1)[-1]  # a method, as a call writes it

    def siblings(self, r: Resolver, path: str, lines: list[str]) -> list[Target]:
        """The same method of the other classes sharing a supertype with the enclosing class
        (and the supertypes' own), for a cursor at most ``SIBLING_LINES`` lines into the
        method's body: ``getPath`` of the other views of a ``RenderableView``."""
        pf = r.files.get(path)
        method = _method_begun(lines)
        if pf is None or method is None:
            return []
        cursor = self._cursor(pf, lines)
        scope = cursor.scope
        if scope is None:
            return []
        supers = {
            found
            for base in supertypes(pf.bases.get(scope, ())) or cursor.text_bases.get(scope, ())
            if (found := self._type(r, path, base, _outer(scope))) is not None
        }
        if not supers:
            return []
        test = is_test(path)
        out = []
        named = r.by_name.get((NAMESPACE, method), ())
        nearest = sorted(named, key=lambda t: (-shared_dirs(t[0], path), t))
        for p, node in nearest[: 4 * MAX_SIBLINGS]:
            owner = r.qualnames[p][node].rpartition(".")[0]
            if (p, owner) == (path, scope) or (is_test(p) and not test) or not owner:
                continue
            if (p, owner) in supers or any(
                self._type(r, p, base, _outer(owner)) in supers
                for base in supertypes(r.files[p].bases.get(owner, ()))
            ):
                out.append((p, node))
        return out[:MAX_SIBLINGS]

    def _chained(
        self, r: Resolver, path: str, cursor: _Cursor
    ) -> list[tuple[tuple[str, str], int]]:
        """Members reached through a call's result or a cast in the last lines, each with
        its row: ``a.b().c(`` is ``c`` of ``b``'s declared result type."""
        text, first = cursor.code, cursor.code_row
        out = []
        for m in _AFTER_CALL.finditer(text):
            owner = self._result_of(r, path, cursor, text, m.start())
            if owner is None:
                continue
            parts = tuple(p.strip() for p in m["rest"].split(".") if p.strip())
            found = self._walk(r, owner, parts, "chained")
            if found is not None:
                hit = (found[0][0], r.qualnames[found[0][0]][found[0][1]])
                out.append((hit, first + text.count("\n", 0, m.start())))
        return out

    def _result_of(
        self, r: Resolver, path: str, cursor: _Cursor, text: str, close: int, depth: int = 0
    ) -> tuple[str, str] | None:
        """The repository type of the parenthesised expression ending at ``text[close]``: a
        call's declared result (``f(x)``, ``a.f(x)``, ``a.f().g()``), a constructor's class
        (``new Foo()``) or a cast's type (``((Foo) x)``)."""
        level, i = 0, close
        while i >= 0:
            if text[i] == ")":
                level += 1
            elif text[i] == "(":
                level -= 1
                if level == 0:
                    break
            i -= 1
        if i < 0 or depth > 4:
            return None
        callee = _CALLEE_END.search(text, max(0, i - 200), i)
        if callee is None:  # a parenthesised expression: a cast's type, if any
            cast = _CAST.match(text, i + 1)
            parts = _parts(cast["type"]) if cast is not None else None
            return self._type(r, path, parts, cursor.scope) if parts else None
        name = tuple(p.strip() for p in callee["name"].split("."))
        if callee["new"]:
            return self._type(r, path, name, cursor.scope)
        if callee["dot"]:  # ``a.f().g(``: ``g`` of ``f``'s result
            owner = self._result_of(r, path, cursor, text, callee.start("dot"), depth + 1)
            method = self._walk(r, owner, name, "chained") if owner is not None else None
        else:
            method = self._name(r, path, name, cursor)
        if method is None:
            return None
        (file, node), _ = method
        qual = r.qualnames[file][node]
        owner_qual, _, bare = qual.rpartition(".")
        if not owner_qual or qual in r.classes[file]:
            return None
        return self._member_type(r, file, owner_qual, RESULT, bare)

    def _name(
        self, r: Resolver, path: str, parts: tuple[str, ...], cursor: _Cursor
    ) -> tuple[Target, str] | None:
        scope = cursor.scope

        def type_of(parts: tuple[str, ...]) -> tuple[str, str] | None:
            if parts not in cursor.resolved:  # a buffer names the same types again and again
                cursor.resolved[parts] = self._type(r, path, parts, scope)
            return cursor.resolved[parts]

        head, rest = parts[0], parts[1:]
        how = ""
        if head == "this" or head == "super":
            if not rest or scope is None:
                return None
            if head == "super":
                member = self._supers(r, path, scope, rest[0])
                return self._walk(r, member, rest[1:], f"member of a supertype of {scope}")
            if len(rest) > 1 and cursor.types.get(rest[0]):
                head, rest = rest[0], rest[1:]  # ``this.field.m``: the field's type
            elif len(rest) > 1 and (field := self._scope_field(r, path, rest[0], cursor)):
                return self._walk(r, field, rest[1:], f"field {rest[0]}")
            else:
                member = self._scope_member(r, path, scope, rest[0], cursor)
                return self._walk(r, member, rest[1:], "this")
        if head in cursor.types:  # a variable
            typed = cursor.types[head]
            if not rest:
                return None
            if typed is None:
                return self._guess(r, path, parts)
            owner, how = type_of(typed), f"receiver typed {'.'.join(typed)}"
        elif not rest:  # by the naming conventions, a type or else a method
            if not head[:1].islower():
                found = type_of(parts)
                return None if found is None else (self._target(r, found), "type")
            hit = self._unqualified(r, path, head, scope, cursor)
            return None if hit is None else (self._target(r, hit[0]), hit[1])
        elif head[:1].islower() and (field := self._scope_field(r, path, head, cursor)):
            return self._walk(r, field, rest, f"field {head}")
        else:
            owner, how = type_of((head,)), "type"
            if owner is None and head[:1].islower():  # ``com.acme.Box.unit`` or a guess
                for end in range(2, len(parts) + 1):
                    owner = self._fqn(r, path, ".".join(parts[:end]))
                    if owner is not None:
                        rest, how = parts[end:], "qualified name"
                        break
                else:
                    if len(parts) == 2 and head not in r.bindings[path]:
                        return self._guess(r, path, parts)
        if owner is None:
            return None
        if not rest:
            return self._target(r, owner), how
        return self._walk(r, owner, rest, how)

    def _scope_field(
        self, r: Resolver, path: str, name: str, cursor: _Cursor
    ) -> tuple[str, str] | None:
        """The type of field ``name`` of the enclosing types (declared anywhere in their
        files, or inherited), for a field the buffer's last lines do not declare."""
        for outer in _chain(cursor.scope):
            found = self._member_type(r, path, outer, FIELD, name)
            for base in () if found is not None else cursor.text_bases.get(outer, ()):
                owner = self._type(r, path, base, _outer(outer))
                found = self._member_type(r, *owner, FIELD, name) if owner else None
                if found is not None:
                    break
            if found is not None:
                return found
        return None

    def _scope_member(
        self, r: Resolver, path: str, outer: str, name: str, cursor: _Cursor | None
    ) -> tuple[str, str] | None:
        """Member ``name`` of enclosing type ``outer``, through the supertypes the buffer
        declares where the index's parse lost them."""
        hit = self._member(r, path, outer, name)
        for base in () if hit is not None or cursor is None else cursor.text_bases.get(outer, ()):
            owner = self._type(r, path, base, _outer(outer))
            hit = self._member(r, *owner, name) if owner is not None else None
            if hit is not None:
                break
        return hit

    def _walk(
        self, r: Resolver, found: tuple[str, str] | None, rest: tuple[str, ...], how: str
    ) -> tuple[Target, str] | None:
        """Further members of a type reached so far (``Outer.Inner.run``); a part with more
        after it that is no member type is a field, which stands for its type
        (``box.lid.close``)."""
        for i, part in enumerate(rest):
            if found is None or found[1] not in r.classes[found[0]]:
                return None
            hit = self._member(r, *found, part)
            if i < len(rest) - 1 and (hit is None or hit[1] not in r.classes[hit[0]]):
                hit = self._member_type(r, *found, FIELD, part)
            found = hit
        return None if found is None else (self._target(r, found), how)

    def _guess(self, r: Resolver, path: str, parts: tuple[str, ...]) -> tuple[Target, str] | None:
        """``x.name`` for a receiver of unknown type: the repository's only method so named."""
        name = parts[-1]
        if len(parts) != 2 or name in _JDK_METHODS or self.reserved(parts[0]):
            return None
        test = is_test(path)
        found = {
            (p, r.qualnames[p][n])
            for p, n in r.by_name.get((NAMESPACE, name), ())
            if (test or not is_test(p)) and not _is_type_or_constructor(r, p, r.qualnames[p][n])
        }
        if len(found) != 1:
            return None
        return self._target(r, found.pop()), "guess: the only method so named"

    def _cursor(self, pf: ParsedFile, lines: list[str]) -> _Cursor:
        """The enclosing type and the declared variables at the end of ``lines`` (kept
        while the same buffer is asked about)."""
        cached = self._context
        if cached is not None and cached[0] is pf and cached[1] is lines:
            return cached[2]
        cursor = _Cursor(pf, lines)
        self._context = (pf, lines, cursor)
        return cursor


def _tested(path: str, cursor: _Cursor, lines: list[str]) -> str | None:
    """The class a test class is named for (``MethodSpecTest``, ``TestMethodSpec``:
    ``MethodSpec``; JUnit's convention, the class under test in its package), while the test
    class's first ``NAME_LINES`` lines or its code above the cursor name it: a test class
    whose tests have gone on without naming it tests it through another API
    (``SelectorTest``'s ``doc.select(...)``)."""
    if cursor.scope is None or not is_test(path):
        return None
    stem = _TEST_CLASS.fullmatch(cursor.scope.split(".", 1)[0])
    name = None if stem is None else stem["before"] or stem["after"]
    if not name or len(lines) - 1 - cursor.scope_row <= NAME_LINES:
        return name
    body = _COMMENT.sub(" ", _STRING.sub('""', "\n".join(lines[cursor.scope_row :])))
    return name if re.search(rf"(?<![\w$.]){re.escape(name)}(?![\w$])", body) else None


class _Tables:
    def __init__(self) -> None:
        self.types: dict[str, list[tuple[str, str]]] = defaultdict(list)
        self.first: dict[str, dict[str, int]] = {}


class _Cursor:
    """What the buffer shows at the cursor: the innermost type of the index's parse holding
    the cursor's line, and ``types``: variable -> declared class type (None: an array), the
    nearest declaration above winning."""

    def __init__(self, pf: ParsedFile, lines: list[str]) -> None:
        row = len(lines) - 1
        best: tuple[int, str] | None = None
        for d in pf.definitions:
            if not d.is_class:
                continue
            start, end = int(pf.node_start[d.node]), int(pf.node_end[d.node])
            holds = end >= row or end >= pf.line_owner.size - 1
            if start < row and holds and (best is None or start >= best[0]):
                best = (start, d.name)
        self.scope = None if best is None else best[1]
        self.scope_row = 0 if best is None else best[0]
        # supertypes of enclosing types the index's parse lost, as the buffer declares them
        self.text_bases: dict[str, list[tuple[str, ...]]] = {}
        if best is None:
            self._scope_from_text(lines)
        block = "\n".join(lines[max(0, row - TYPE_LINES) : row + 1])
        block = _COMMENT.sub(" ", _STRING.sub('""', block))
        found: list[tuple[int, str, tuple[str, ...] | None]] = []
        for m in _DECLARED.finditer(block):
            found.append((m.start(), m["name"], None if m["array"] else _parts(m["type"])))
        for m in _VAR_NEW.finditer(block):
            found.append((m.start(), m["name"], _parts(m["type"])))
        found.sort(key=lambda f: f[0])
        self.types: dict[str, tuple[str, ...] | None] = {name: t for _, name, t in found}
        self.fresh = _fresh(lines[max(0, row - FRESH_LINES) : row + 1])
        self.resolved: dict[tuple[str, ...], tuple[str, str] | None] = {}
        # names the last lines read but never call (fields, variables), the name being
        # typed at the very end left out
        near = "\n".join(lines[max(0, row - NAME_LINES) : row + 1])
        near = _COMMENT.sub(" ", _STRING.sub('""', near))
        near = near.rstrip()
        end = len(near)
        while end and (near[end - 1].isalnum() or near[end - 1] in "_$"):
            end -= 1
        near = near[:end]
        self.code, self.code_row = near, max(0, row - NAME_LINES)
        called = {a or b for a, b in _CALLED.findall(near)}
        self.fields = {n for n in _READ.findall(near) if n not in called}

    def _scope_from_text(self, lines: list[str]) -> None:
        """The types open at the end of ``lines`` and their declared supertypes, read from
        the text: a buffer cut at the cursor leaves its types unclosed, and the parse then
        often holds no type around the cursor."""
        text = _COMMENT.sub(" ", _STRING.sub('""', "\n".join(lines)))
        stack: list[tuple[str, int, list[tuple[str, ...]]] | None] = []
        for m in _HEADER_OR_BRACE.finditer(text):
            if m["name"] is not None:
                bases = [
                    parts
                    for clause in (m["extends"], m["implements"])
                    if clause
                    for t in _split_types(clause)
                    if (parts := _parts(t)) is not None
                ]
                stack.append((m["name"], text.count("\n", 0, m.start()), bases))
            elif m.group() == "{":
                stack.append(None)
            elif stack:
                stack.pop()
        named = [t for t in stack if t is not None]
        if not named:
            return
        qual = ""
        for name, _, bases in named:
            qual = f"{qual}.{name}" if qual else name
            self.text_bases[qual] = bases
        self.scope, self.scope_row = qual, named[-1][1]


# a method's header: modifiers and annotations, a result type, the name and its ``(``
_METHOD = re.compile(
    r"^\s*(?:@[\w$.]+(?:\([^)]*\))?\s+)*(?:[a-z]+\s+)*(?:<[^>]*>\s+)?"
    r"[A-Za-z_$][\w$.]*(?:<[^;{}()=]*>)?(?:\[\s*\])*\s+(?P<name>[A-Za-z_$][\w$]*)\s*\("
)
_STATEMENT_WORDS = frozenset({"return", "throw", "new", "else", "case", "yield"})


def _method_begun(lines: list[str]) -> str | None:
    """The name of the method whose body the cursor is at most ``SIBLING_LINES`` lines
    into (its header, up to its ``{``, within the few lines above), else None."""
    row = len(lines) - 1
    for k in range(row - 1, max(-1, row - 2 * SIBLING_LINES - 1), -1):
        m = _METHOD.match(lines[k])
        if m is None or m.group().split()[0] in _STATEMENT_WORDS:
            continue
        text = _COMMENT.sub(" ", _STRING.sub('""', "\n".join(lines[k:row])))
        brace = text.find("{")
        if brace < 0 or text.count("{", brace) <= text.count("}", brace):
            return None  # no body, or a closed one
        body = [line for line in text[brace + 1 :].split("\n") if line.strip()]
        return m["name"] if len(body) <= SIBLING_LINES else None
    return None


def _fresh(lines: list[str]) -> list[tuple[str, ...]]:
    """The class types of the variables ``lines`` declare that the code after the
    declaration does not use, the last declared first."""
    text = _COMMENT.sub(" ", _STRING.sub('""', "\n".join(lines)))
    out = []
    for m in _DECLARED.finditer(text):
        parts = None if m["array"] else _parts(m["type"])
        used = re.search(rf"(?<![\w$.]){re.escape(m['name'])}(?![\w$])", text[m.end() :])
        if parts is not None and used is None:
            out.append(parts)
    return out[::-1]


def _split_types(clause: str) -> list[str]:
    """``A<B, C>, D`` as ``A<B, C>`` and ``D``: commas outside type arguments."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(clause):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(clause[start:i])
            start = i + 1
    out.append(clause[start:])
    return [t.strip() for t in out if t.strip()]


def _is_type_or_constructor(r: Resolver, path: str, qual: str) -> bool:
    if qual in r.classes[path]:
        return True
    *_, owner, name = ["", *qual.split(".")]
    return owner == name


def _type_names(pf: ParsedFile) -> list[tuple[str, str]]:
    """(fully qualified name, qualified name) of each type the file declares."""
    prefix = f"{pf.package}." if pf.package else ""
    return [(prefix + d.name, d.name) for d in pf.definitions if d.is_class]


def _qualify(node: Node, name: str, outer: dict[int, str | None]) -> str | None:
    """``Outer.Inner.name`` for a definition; None inside an anonymous class body.
    ``outer``: the qualified names of the types met so far, by start byte (the file query
    gives an enclosing type before what it holds)."""
    parent = node.parent
    while parent is not None:
        kind = parent.type
        if kind in _TYPES:
            if parent.start_byte not in outer:
                named = parent.child_by_field_name("name")
                outer[parent.start_byte] = (
                    None if named is None else _qualify(parent, _text(named), outer)
                )
            prefix = outer[parent.start_byte]
            return None if prefix is None else f"{prefix}.{name}"
        if kind == "class_body" and parent.parent and parent.parent.type in _ANONYMOUS:
            return None
        parent = parent.parent
    return name


def _class_type(node: Node) -> tuple[str, ...] | None:
    """The declared type of a field or a method's result when it is a class type (by the
    naming conventions, capitalised), as a dotted name; None for ``var``, primitives, arrays
    and type variables too short to tell (``T``)."""
    type_ = node.child_by_field_name("type")
    parts = _parts(_text(type_)) if type_ is not None else None
    if parts is None or not parts[-1][:1].isupper() or len(parts[-1]) < 2:
        return None
    return parts


def _method_names(r: Resolver, tables: _Tables, path: str, qual: str) -> dict[str, int]:
    """The methods type ``qual`` of ``path`` declares, by name (their first declarations);
    not its constructors, nor its member types or theirs."""
    prefix, bare = f"{qual}.", qual.rsplit(".", 1)[-1]
    classes = r.classes.get(path, set())
    return {
        name: node
        for q, node in tables.first.get(path, {}).items()
        if q.startswith(prefix)
        and "." not in (name := q[len(prefix) :])
        and name != bare
        and q not in classes
    }


def supertypes(entries: Iterable[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """A type's ``bases`` entries less its members' types: its ``extends``/``implements``."""
    return [e for e in entries if e[0] not in (FIELD, RESULT)]


def _bases(node: Node) -> list[tuple[str, ...]]:
    """The ``extends``/``implements`` types of a type declaration, as dotted names."""
    out = []
    for child in node.children:
        if child.type == "superclass":
            types = child.named_children
        elif child.type in ("super_interfaces", "extends_interfaces"):
            types = [t for c in child.named_children for t in c.named_children]
        else:
            continue
        for t in types:
            parts = _parts(_text(t))
            if parts is not None:
                out.append(parts)
    return out


def _import(node: Node, name: Node) -> tuple[str, str, str, int]:
    """An import declaration's binding (see the module doc); ``name``: its dotted name."""
    static = any(c.type == "static" for c in node.children)
    star = any(c.type == "asterisk" for c in node.children)
    dotted = _SPACE.sub("", _text(name))
    level = 1 if static else 0
    if star:
        return f"{dotted}.*", dotted, "*", level
    module, _, last = dotted.rpartition(".")
    if static:
        return last, module, last, level
    return last, dotted, last, level


def _receiver(obj: Node | None, byte: int, declared: _Declarations) -> tuple[str, ...]:
    """The receiver of a method call as ``CallSite`` parts (see the module doc)."""
    if obj is None:
        return ()
    if obj.type in ("this", "super"):
        return (obj.type,)
    source = declared.source
    if obj.type == "identifier":
        name = source[obj.start_byte : obj.end_byte]
        known, parts = declared.type_at(name, byte)
        if known:
            return parts if parts is not None else ("",)
        return (name.decode("utf-8", "replace"),)
    if obj.type == "field_access":
        inner = obj.child_by_field_name("object")
        field = obj.child_by_field_name("field")
        if inner is not None and inner.type == "this" and field is not None:
            name = source[field.start_byte : field.end_byte]
            known, parts = declared.type_at(name, byte, fields_only=True)
            return parts if known and parts is not None else ("",)
        parts = _parts(_text(obj))
        if parts is None or declared.type_at(parts[0].encode(), byte)[0]:
            return ("",)
        return parts
    if obj.type == "object_creation_expression":
        made = obj.child_by_field_name("type")
        parts = _parts(_text(made)) if made is not None else None
        return parts if parts is not None else ("",)
    return ("",)


LANGUAGE = Java()

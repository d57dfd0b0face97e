"""What the benchmark needs to know about each language, kept apart from the index's own view.

Tasks and their targets measure the context engine, so they must not be defined by it: the
API holes are found with this module's own tree-sitter queries (what a file defines, what a
line calls), and the callees of a ground truth are read from its text with the language's
own comment and string syntax. Languages are grouped in *families* whose files may call each
other (TypeScript and JavaScript; C and C++), as the index's namespaces group them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from tree_sitter import Query

from repomem.index.languages import CODE_EXTENSIONS, grammar

# suite language -> the tree-sitter languages of its files
FAMILIES: dict[str, frozenset[str]] = {
    "python": frozenset({"python"}),
    "typescript": frozenset({"typescript", "tsx", "javascript"}),
    "java": frozenset({"java"}),
    "go": frozenset({"go"}),
    "rust": frozenset({"rust"}),
    "c": frozenset({"c"}),
    "cpp": frozenset({"cpp", "c"}),
}
# tree-sitter language -> the family whose definitions it may call
FAMILY_OF: dict[str, str] = {
    "python": "python",
    "typescript": "js",
    "tsx": "js",
    "javascript": "js",
    "java": "java",
    "go": "go",
    "rust": "rust",
    "c": "c",
    "cpp": "c",
}
assert set(FAMILY_OF) == set(CODE_EXTENSIONS.values())

# What a file defines: functions, methods, classes and types, macros.
_DEFINITIONS: dict[str, str] = {
    "typescript": """
(function_declaration name: (identifier) @name)
(function_signature name: (identifier) @name)
(class_declaration name: (type_identifier) @name)
(abstract_class_declaration name: (type_identifier) @name)
(interface_declaration name: (type_identifier) @name)
(type_alias_declaration name: (type_identifier) @name)
(enum_declaration name: (identifier) @name)
(method_definition name: (property_identifier) @name)
(method_signature name: (property_identifier) @name)
(abstract_method_signature name: (property_identifier) @name)
(variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)])
""",
    "javascript": """
(function_declaration name: (identifier) @name)
(class_declaration name: (identifier) @name)
(method_definition name: (property_identifier) @name)
(variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)])
""",
    "java": """
(class_declaration name: (identifier) @name)
(interface_declaration name: (identifier) @name)
(enum_declaration name: (identifier) @name)
(record_declaration name: (identifier) @name)
(method_declaration name: (identifier) @name)
(constructor_declaration name: (identifier) @name)
""",
    "go": """
(function_declaration name: (identifier) @name)
(method_declaration name: (field_identifier) @name)
(type_spec name: (type_identifier) @name)
""",
    "rust": """
(function_item name: (identifier) @name)
(function_signature_item name: (identifier) @name)
(struct_item name: (type_identifier) @name)
(enum_item name: (type_identifier) @name)
(union_item name: (type_identifier) @name)
(trait_item name: (type_identifier) @name)
(type_item name: (type_identifier) @name)
(macro_definition name: (identifier) @name)
""",
    "c": """
(function_definition declarator: (function_declarator declarator: (identifier) @name))
(function_definition declarator: (pointer_declarator
  declarator: (function_declarator declarator: (identifier) @name)))
(declaration declarator: (function_declarator declarator: (identifier) @name))
(declaration declarator: (pointer_declarator
  declarator: (function_declarator declarator: (identifier) @name)))
(preproc_function_def name: (identifier) @name)
(type_definition declarator: (type_identifier) @name)
(struct_specifier name: (type_identifier) @name body: (_))
""",
}
_DEFINITIONS["tsx"] = _DEFINITIONS["typescript"]
_DEFINITIONS["cpp"] = (
    _DEFINITIONS["c"]
    + """
(class_specifier name: (type_identifier) @name body: (_))
(function_definition declarator: (function_declarator
  declarator: (qualified_identifier name: (identifier) @name)))
(field_declaration declarator: (function_declarator declarator: (field_identifier) @name))
(function_definition declarator: (function_declarator declarator: (field_identifier) @name))
(function_definition declarator: (reference_declarator
  (function_declarator declarator: (field_identifier) @name)))
(function_definition declarator: (pointer_declarator
  declarator: (function_declarator declarator: (field_identifier) @name)))
"""
)

# What a line calls: ``@name`` is the called name, ``@scope`` a type or module before it
# (``Foo::new``), ``@member`` marks a call on a receiver (``obj.m(``, ``obj->m(``).
_CALLS: dict[str, str] = {
    "typescript": """
(call_expression function: (identifier) @name) @call
(call_expression function: (member_expression property: (property_identifier) @name) @member)
  @call
(new_expression constructor: (identifier) @name) @call
""",
    "java": """
(method_invocation object: (_) @member name: (identifier) @name) @call
(method_invocation !object name: (identifier) @name) @call
(object_creation_expression type: (type_identifier) @name) @call
(object_creation_expression type: (generic_type (type_identifier) @name)) @call
""",
    "go": """
(call_expression function: (identifier) @name) @call
(call_expression function: (selector_expression field: (field_identifier) @name) @member) @call
""",
    "rust": """
(call_expression function: (identifier) @name) @call
(call_expression function: (field_expression field: (field_identifier) @name) @member) @call
(call_expression function: (scoped_identifier path: (_) @scope name: (identifier) @name)) @call
(macro_invocation macro: (identifier) @name) @call
""",
    "c": """
(call_expression function: (identifier) @name) @call
(call_expression function: (field_expression field: (field_identifier) @name) @member) @call
""",
}
_CALLS["tsx"] = _CALLS["javascript"] = _CALLS["typescript"]
_CALLS["cpp"] = (
    _CALLS["c"]
    + """
(call_expression function: (qualified_identifier scope: (_) @scope name: (identifier) @name))
  @call
(new_expression type: (type_identifier) @name) @call
"""
)

# Methods of the standard library's everyday types: ``xs.push(v)`` or ``m.get(k)`` never make a
# task just because the repository also defines a ``push`` or ``get``.
COMMON_METHODS: dict[str, frozenset[str]] = {
    "js": frozenset(
        [
            "push",
            "pop",
            "shift",
            "unshift",
            "slice",
            "splice",
            "concat",
            "join",
            "indexOf",
            "lastIndexOf",
            "includes",
            "map",
            "filter",
            "forEach",
            "reduce",
            "some",
            "every",
            "find",
            "findIndex",
            "sort",
            "reverse",
            "keys",
            "values",
            "entries",
            "get",
            "set",
            "has",
            "delete",
            "add",
            "clear",
            "then",
            "catch",
            "finally",
            "call",
            "apply",
            "bind",
            "toString",
            "valueOf",
            "hasOwnProperty",
            "split",
            "replace",
            "trim",
            "startsWith",
            "endsWith",
            "substring",
            "substr",
            "charAt",
            "charCodeAt",
            "toLowerCase",
            "toUpperCase",
            "match",
            "test",
            "exec",
            "assign",
            "create",
            "freeze",
            "defineProperty",
            "getPrototypeOf",
            "isArray",
            "from",
            "of",
            "resolve",
            "reject",
            "all",
            "race",
            "log",
            "warn",
            "error",
            "next",
            "return",
            "throw",
            "stringify",
            "parse",
            "max",
            "min",
            "floor",
            "ceil",
            "abs",
            "random",
            "now",
        ]
    ),
    "java": frozenset(
        [
            "toString",
            "equals",
            "hashCode",
            "getClass",
            "get",
            "put",
            "add",
            "addAll",
            "remove",
            "size",
            "contains",
            "isEmpty",
            "clear",
            "append",
            "length",
            "charAt",
            "substring",
            "indexOf",
            "iterator",
            "hasNext",
            "next",
            "close",
            "println",
            "print",
            "format",
            "valueOf",
            "getName",
            "set",
            "stream",
            "map",
            "filter",
            "collect",
            "forEach",
            "compareTo",
            "getMessage",
            "printStackTrace",
            "startsWith",
            "endsWith",
            "trim",
            "split",
            "replace",
            "intValue",
            "booleanValue",
            "longValue",
            "doubleValue",
            "containsKey",
            "keySet",
            "values",
            "entrySet",
            "getKey",
            "getValue",
            "of",
            "asList",
            "toArray",
            "invoke",
            "newInstance",
            "getSimpleName",
            "isInstance",
            "cast",
            "write",
            "read",
            "flush",
            "run",
            "start",
            "call",
            "apply",
            "accept",
            "test",
        ]
    ),
    "go": frozenset(
        [
            "String",
            "Error",
            "Len",
            "Less",
            "Swap",
            "Write",
            "Read",
            "Close",
            "Get",
            "Set",
            "Add",
            "Del",
            "Lock",
            "Unlock",
            "RLock",
            "RUnlock",
            "Done",
            "Wait",
            "Errorf",
            "Sprintf",
            "Printf",
            "Println",
            "Fprintf",
            "New",
            "Is",
            "As",
            "Unwrap",
        ]
    ),
    "rust": frozenset(
        [
            "new",
            "clone",
            "to_string",
            "to_owned",
            "unwrap",
            "expect",
            "iter",
            "iter_mut",
            "into_iter",
            "map",
            "push",
            "pop",
            "len",
            "is_empty",
            "as_ref",
            "as_mut",
            "as_str",
            "get",
            "get_mut",
            "insert",
            "remove",
            "collect",
            "fmt",
            "into",
            "from",
            "ok",
            "err",
            "write_str",
            "write_fmt",
            "next",
            "eq",
            "cmp",
            "partial_cmp",
            "hash",
            "contains",
            "extend",
            "unwrap_or",
            "unwrap_or_else",
            "ok_or",
            "ok_or_else",
            "and_then",
            "map_err",
            "is_some",
            "is_none",
            "is_ok",
            "is_err",
            "default",
            "take",
            "replace",
            "chars",
            "bytes",
            "split",
            "starts_with",
            "ends_with",
            "trim",
            "format",
            "println",
            "print",
            "write",
            "writeln",
            "vec",
            "assert",
            "assert_eq",
            "assert_ne",
            "panic",
            "debug_assert",
            "unreachable",
            "matches",
            "Some",
            "Ok",
            "Err",
            "Box",
            "Vec",
            "String",
        ]
    ),
    "c": frozenset(
        [
            "memcpy",
            "memset",
            "memmove",
            "memcmp",
            "strlen",
            "strcmp",
            "strncmp",
            "strcpy",
            "malloc",
            "calloc",
            "realloc",
            "free",
            "printf",
            "fprintf",
            "sprintf",
            "snprintf",
            "assert",
            "sizeof",
            "exit",
            "abort",
        ]
    ),
    "python": frozenset(),
}

# C++'s standard containers, strings and streams: their methods are what ``v.size()`` or
# ``m.find(k)`` calls in C++ code, whatever the repository defines (C code calls none)
_CPP_METHODS = frozenset(
    [
        "push_back",
        "pop_back",
        "emplace_back",
        "emplace",
        "push",
        "pop",
        "front",
        "back",
        "begin",
        "end",
        "rbegin",
        "rend",
        "cbegin",
        "cend",
        "size",
        "empty",
        "clear",
        "insert",
        "erase",
        "find",
        "count",
        "at",
        "data",
        "reserve",
        "resize",
        "swap",
        "substr",
        "c_str",
        "length",
        "append",
        "compare",
        "get",
        "reset",
        "release",
        "lock",
        "unlock",
        "wait",
        "notify_one",
        "notify_all",
        "load",
        "store",
        "first",
        "second",
        "top",
        "str",
        "what",
        "value",
        "has_value",
        "value_or",
        "emplace_hint",
        "lower_bound",
        "upper_bound",
        "equal_range",
        "contains",
        "assign",
        "capacity",
        "shrink_to_fit",
        "write",
        "read",
        "flush",
        "close",
        "open",
        "good",
        "fail",
        "eof",
        "seekg",
        "tellg",
        "getline",
    ]
)


def common_methods(language: str) -> frozenset[str]:
    """The methods of ``language``'s everyday standard types (a tree-sitter language name):
    its family's, and for C++ also the standard library's containers' and strings'."""
    common = COMMON_METHODS[FAMILY_OF[language]]
    return common | _CPP_METHODS if language == "cpp" else common


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Names the language or its standard library owns wherever the code does not define them
# itself: a card of a repository definition with such a name is a wrong guess.
RESERVED: dict[str, frozenset[str]] = {
    "python": _words(
        "len print range dict list set str int float bool object type isinstance super open"
        " tuple bytes iter next map filter zip enumerate sorted min max sum any all"
    ),
    "js": _words(
        """Object Array Promise Map Set WeakMap WeakSet Error TypeError RangeError Symbol Number
        String Boolean Date RegExp JSON Math console undefined NaN Infinity globalThis Function
        Reflect Proxy parseInt parseFloat setTimeout clearTimeout setInterval clearInterval
        queueMicrotask Partial Readonly Record Pick Omit ReturnType Parameters"""
    ),
    "java": _words(
        """Object String Integer Long Short Byte Double Float Boolean Character Number Math
        System Thread Runnable Exception RuntimeException Error Throwable Class Iterable
        Comparable CharSequence StringBuilder Override Deprecated SuppressWarnings Void Enum
        FunctionalInterface IllegalArgumentException IllegalStateException NullPointerException
        UnsupportedOperationException IndexOutOfBoundsException ClassCastException"""
    ),
    "go": _words(
        """append cap clear close complex copy delete imag len make max min new panic print
        println real recover bool byte complex64 complex128 error float32 float64 int int8
        int16 int32 int64 rune string uint uint8 uint16 uint32 uint64 uintptr any
        comparable"""
    ),
    "rust": _words(
        """u8 u16 u32 u64 u128 usize i8 i16 i32 i64 i128 isize f32 f64 bool char str String Vec
        Option Some None Result Ok Err Box Clone Copy Send Sync Sized Drop Fn FnMut FnOnce
        Default Debug Iterator IntoIterator Extend PartialEq Eq PartialOrd Ord Hash AsRef AsMut
        Into From ToString ToOwned"""
    )
    # the standard library's macros, named as the index names a ``macro_rules!`` (``m!``)
    | frozenset(
        f"{m}!"
        for m in _words(
            """println print eprintln eprint format format_args write writeln vec panic
            assert assert_eq assert_ne debug_assert debug_assert_eq debug_assert_ne
            unreachable unimplemented todo matches include include_str include_bytes concat
            stringify env option_env cfg line column file module_path compile_error dbg
            thread_local"""
        )
    ),
    "c": _words(
        """printf fprintf sprintf snprintf malloc calloc realloc free memcpy memset memmove
        memcmp strlen strcmp size_t ssize_t uint8_t uint16_t uint32_t uint64_t int8_t int16_t
        int32_t int64_t uintptr_t NULL bool"""
    ),
}


@cache
def definitions_query(language: str) -> Query:
    return Query(grammar(language), _DEFINITIONS[language])


@cache
def calls_query(language: str) -> Query:
    return Query(grammar(language), _CALLS[language])


# --- reading names from a line's text --------------------------------------------------

_LINE_COMMENT: dict[str, str] = {"python": "#"}
_STRINGS: dict[str, str] = {
    "python": r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'",
    "js": r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'|`(?:\\.|[^`\\])*`",
    # a char literal never spans lines: an apostrophe in the prose of a block comment's inner
    # lines (which the line-by-line reading does not see as comment) must not open one
    "java": r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\\n])+'",
    "go": r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\\n])+'|`[^`]*`",
    # a char literal, not a lifetime: ``'a'`` but never ``'a``; a string goes on over a
    # line ending in ``\``
    "rust": r"r#*\"[^\"]*\"#*|b?\"(?:\\[\s\S]|[^\"\\])*\"|b?'(?:\\.[^']*|[^'\\])'",
    "c": r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\\n])+'",
}


def code_only(text: str, family: str, *, keep_positions: bool = False) -> str:
    """``text`` with strings emptied and comments removed (a block comment runs to its
    ``*/`` across lines, so a quote in it opens no string; a comment opened before ``text``
    is not seen); with ``keep_positions`` each of their characters but newlines becomes a
    space instead, so every name stays at its offset, line and column."""
    comment = _LINE_COMMENT.get(family, "//")
    pattern = re.compile(
        _STRINGS[family]
        + (r"|/\*[\s\S]*?(?:\*/|\Z)" if comment == "//" else "")
        + "|"
        + re.escape(comment)
        + r".*",
        re.MULTILINE,
    )

    def blank(m: re.Match[str]) -> str:
        token = m.group()
        if keep_positions:
            return re.sub(r"[^\n]", " ", token)
        if token.startswith(comment) or token.startswith("/*"):
            return " " + "\n" * token.count("\n")  # lines kept: the oracle counts them
        return '""'

    return pattern.sub(blank, text)


_NAME = r"[A-Za-z_$][\w$]*"
# a called name: identifier, optional turbofish / generic arguments, optional ``!``, then ``(``
_CALLED = re.compile(rf"(?<![\w$])({_NAME})\s*(?:(?:::)?\s*<[^<>()]*>)?\s*(!)?\s*\(")
_SEPARATOR = re.compile(r"(\?\.|\.|->|::)\s*$")
_BEFORE = re.compile(rf"({_NAME})\s*$")
_KEYWORDS = frozenset(
    [
        "if",
        "for",
        "while",
        "switch",
        "return",
        "sizeof",
        "catch",
        "function",
        "typeof",
        "new",
        "super",
        "this",
        "match",
        "loop",
        "else",
        "do",
        "case",
        "in",
        "await",
        "yield",
        "throw",
        "defined",
        "alignof",
        "_Alignof",
        "decltype",
        "static_assert",
        "synchronized",
        "try",
        "func",
        "fn",
        "impl",
        "where",
    ]
)
# ``for (const x of (xs))``: the keyword ``of``, not a call of a function ``of``
_FOR_OF = re.compile(r"\b(?:const|let|var)\s+[^=;()]*\s$")
# the word before a name that makes the name a definition, not a call
_DEFINING = re.compile(
    r"(?:\bfunction\*?|\bfn|\bfunc(?:\s*\([^)]*\))?|\bdef|\bclass|\binterface|\bstruct|\benum)"
    r"\s+$"
)


@dataclass(frozen=True)
class Callee:
    """A call read from text: its dotted ``parts`` (``("Foo", "new")``, ``("obj", "m")``),
    ``chained`` when the receiver is an expression, not a name (``f().m(``), and ``new`` for a
    constructor call (``new Foo(``)."""

    parts: tuple[str, ...]
    chained: bool = False
    new: bool = False


def read_callees(text: str, family: str) -> list[Callee]:
    """The calls ``text`` makes, in order, strings and comments left out: ``f(``, ``obj.m(``,
    ``obj->m(``, ``pkg.F(``, ``Foo::new(``, ``new Foo(``, ``m!(`` (a Rust macro, named
    ``m!`` as the index names its ``macro_rules!``)."""
    code = code_only(text, family)
    found: list[Callee] = []
    for m in _CALLED.finditer(code):
        name = m.group(1)
        parts = [name + "!" if m.group(2) and family == "rust" else name]
        at = m.start(1)
        chained = False
        while True:
            sep = _SEPARATOR.search(code, 0, at)
            if sep is None:
                break
            before = code[: sep.start()].rstrip()
            word = _BEFORE.search(before)
            if word is None:
                chained = bool(before) and before[-1] in ")]>"
                break
            parts.insert(0, word.group(1))
            at = word.start(1)
        if len(parts) == 1 and name in _KEYWORDS:
            continue
        head = code[:at]
        if parts == ["of"] and _FOR_OF.search(head):
            continue
        new = bool(re.search(r"\bnew\s+$", head))
        if _DEFINING.search(head) and not new:
            continue
        found.append(Callee(tuple(parts), chained, new))
    return found


def identifiers(text: str, family: str) -> set[str]:
    """Every identifier the code of ``text`` names (strings and comments left out)."""
    return set(re.findall(_NAME, code_only(text, family)))

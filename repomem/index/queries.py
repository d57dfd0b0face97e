"""Tree-sitter queries per language: statement-level nodes, definitions and call sites.

Statement-level nodes are the named children of block-like containers plus clause nodes
(``elif``/``else``/``except``...), so that every code line has one deepest owner and a
fragment's lines are covered by non-overlapping nodes (FragRel Eq. 8). Calls are matched by
name; Python gets import-aware resolution on top (``repomem.index.resolve``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
from tree_sitter import Query

from repomem.index.languages import grammar


@dataclass(frozen=True)
class LanguageQueries:
    containers: tuple[str, ...]
    clauses: tuple[str, ...]
    # captures: @def (the defining node) and @name (its name)
    definitions: str
    # captures: @call (the call expression) and @name (the called name, last component)
    calls: str
    # more statement-level nodes (@s) than the containers' children
    statements: str = ""


# JavaScript/TypeScript: qualified names, kinds and scopes are worked out in
# ``repomem.index.langs.typescript``; calls capture the whole callee (``a.b.c``, ``this.m``)
_JS_DEFS = """
(function_declaration name: (identifier) @name) @def
(generator_function_declaration name: (identifier) @name) @def
(class_declaration name: (_) @name) @def
(class_body
  (method_definition name: [(property_identifier) (private_property_identifier)] @name) @def)
(variable_declarator
  name: (identifier) @name value: [(arrow_function) (function_expression) (class)]) @def
(program (lexical_declaration (variable_declarator name: (identifier) @name) @def))
(program (export_statement
  declaration: (lexical_declaration (variable_declarator name: (identifier) @name) @def)))
"""
_JS_FIELDS = """
(field_definition
  property: (property_identifier) @name value: [(arrow_function) (function_expression)]) @def
"""
_TS_DEFS = (
    _JS_DEFS
    + """
(public_field_definition name: [(property_identifier) (private_property_identifier)] @name) @def
(interface_body (property_signature name: (property_identifier) @name) @def)
(interface_declaration name: (type_identifier) @name) @def
(abstract_class_declaration name: (type_identifier) @name) @def
(type_alias_declaration name: (type_identifier) @name) @def
(enum_declaration name: (identifier) @name) @def
(internal_module name: (identifier) @name) @def
(interface_body (method_signature name: (property_identifier) @name) @def)
(class_body (method_signature name: (property_identifier) @name) @def)
(class_body (abstract_method_signature name: (property_identifier) @name) @def)
(function_signature name: (identifier) @name) @def
"""
)
_JS_CALLS = """
(call_expression function: [(identifier) (member_expression)] @name) @call
(new_expression constructor: [(identifier) (member_expression)] @name) @call
"""
_JSX_CALLS = """
(jsx_opening_element name: (identifier) @name) @call
(jsx_self_closing_element name: (identifier) @name) @call
"""
_JS_CONTAINERS = ("program", "statement_block", "class_body", "switch_body")
# an interface's members are statements too, so that each method signature is a definition
_TS_CONTAINERS = (*_JS_CONTAINERS, "interface_body")
_JS_CLAUSES = ("else_clause", "catch_clause", "finally_clause")

# C and C++ (``repomem.index.langs.c`` reads the matches): function definitions and
# prototypes by their declarator (its name is found under pointers and parentheses), tagged
# types, typedefs, macros (constants and function-like) and ``#include``s
_C_DEFS = """
(function_definition declarator: (_) @name) @def
(declaration declarator: (function_declarator declarator: (_) @name)) @def
(declaration declarator: (pointer_declarator declarator:
    (function_declarator declarator: (_) @name))) @def
(struct_specifier name: (type_identifier) @name body: (_)) @def
(union_specifier name: (type_identifier) @name body: (_)) @def
(enum_specifier name: (type_identifier) @name body: (_)) @def
(type_definition declarator: (_) @name) @def
(preproc_def name: (identifier) @name) @def
(preproc_function_def name: (identifier) @name) @def
(preproc_include path: (_) @name) @def
"""
_C_CALLS = """
(call_expression function: (identifier) @name) @call
"""
# C++ adds classes, method declarations in class bodies, namespaces (for qualified names),
# ``using`` declarations and aliases; calls by qualified name, through a receiver (the whole
# ``a.m``/``p->m`` expression), of a template function and by ``new``
_CPP_DEFS = (
    _C_DEFS
    + """
(class_specifier name: (_) @name body: (_)) @def
(field_declaration declarator: (function_declarator declarator: (_) @name)) @def
(namespace_definition body: (_) @name) @def
(using_declaration (_) @name) @def
(namespace_alias_definition name: (_) @name) @def
(alias_declaration name: (_) @name) @def
"""
)
_CPP_CALLS = (
    _C_CALLS
    + """
(call_expression function: (qualified_identifier) @name) @call
(call_expression function: (field_expression) @name) @call
(call_expression function: (template_function) @name) @call
(new_expression type: (_) @name) @call
"""
)
# a file tree-sitter could not parse as a whole has an ERROR node for its root (macros it
# cannot expand; lz4.c): the declarations and directives it holds are statements still
_C_TOP = (
    "function_definition declaration type_definition struct_specifier union_specifier "
    "enum_specifier linkage_specification preproc_if preproc_ifdef preproc_include preproc_def "
    "preproc_function_def preproc_call expression_statement"
)
_CPP_TOP = (
    _C_TOP + " namespace_definition class_specifier template_declaration using_declaration "
    "alias_declaration namespace_alias_definition template_instantiation"
)


def _inside_error(kinds: str) -> str:
    return "(ERROR [" + " ".join(f"({k})" for k in kinds.split()) + "] @s)"


# an ``#if`` group's lines are statements of their own, as a block's are (a header's
# definitions sit inside its include guard); their conditions are not (``_C_NOT_STATEMENTS``)
_C_PREPROC = ("preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef")

QUERIES: dict[str, LanguageQueries] = {
    "python": LanguageQueries(
        containers=("module", "block"),
        clauses=(
            "elif_clause",
            "else_clause",
            "except_clause",
            "except_group_clause",
            "finally_clause",
            "case_clause",
        ),
        definitions="""
(function_definition name: (identifier) @name) @def
(class_definition name: (identifier) @name) @def
""",
        # Python resolves whole dotted callees (``m.f``, ``self.meth``): capture the function.
        calls="""
(call function: [(identifier) (attribute)] @name) @call
""",
    ),
    "javascript": LanguageQueries(
        _JS_CONTAINERS, _JS_CLAUSES, _JS_DEFS + _JS_FIELDS, _JS_CALLS + _JSX_CALLS
    ),
    "typescript": LanguageQueries(_TS_CONTAINERS, _JS_CLAUSES, _TS_DEFS, _JS_CALLS),
    "tsx": LanguageQueries(_TS_CONTAINERS, _JS_CLAUSES, _TS_DEFS, _JS_CALLS + _JSX_CALLS),
    "java": LanguageQueries(
        containers=(
            "program",
            "block",
            "class_body",
            "interface_body",
            "enum_body_declarations",
            "constructor_body",
            "switch_block",
        ),
        clauses=("catch_clause", "finally_clause"),
        definitions="""
(method_declaration name: (identifier) @name) @def
(constructor_declaration name: (identifier) @name) @def
(compact_constructor_declaration name: (identifier) @name) @def
(class_declaration name: (identifier) @name) @def
(interface_declaration name: (identifier) @name) @def
(enum_declaration name: (identifier) @name) @def
(record_declaration name: (identifier) @name) @def
(annotation_type_declaration name: (identifier) @name) @def
""",
        # ``new`` captures the whole type (``Box``, ``Box<T>``, ``a.b.Box``): a constructor
        # call resolves to its class. The same pass also matches what resolution reads
        # besides calls, told apart by the node's type (``repomem.index.langs.java``): the
        # package, the imports and the declarations that type a call's receiver.
        calls="""
(method_invocation name: (identifier) @name) @call
(object_creation_expression type: (_) @name) @call
(package_declaration [(identifier) (scoped_identifier)] @name) @call
(import_declaration [(identifier) (scoped_identifier)] @name) @call
(field_declaration declarator: (variable_declarator name: (identifier) @name)) @call
(local_variable_declaration declarator: (variable_declarator name: (identifier) @name)) @call
(formal_parameter name: (identifier) @name) @call
(enhanced_for_statement name: (identifier) @name) @call
(resource name: (identifier) @name) @call
""",
    ),
    # Go resolves dotted callees (``pkg.F``, ``x.M``) and types' composite literals; each
    # spec of a grouped declaration is a statement of its own, so that it has its own node;
    # a top-level interface's methods are definitions (``I.M``), as a struct's are
    "go": LanguageQueries(
        containers=(
            "source_file",
            "block",
            "statement_list",
            "type_declaration",
            "const_declaration",
            "var_spec_list",
        ),
        clauses=("expression_case", "default_case", "type_case", "communication_case"),
        definitions="""
(function_declaration name: (identifier) @name) @def
(method_declaration name: (field_identifier) @name) @def
(source_file (type_declaration (type_spec name: (type_identifier) @name) @def))
(source_file (type_declaration (type_alias name: (type_identifier) @name) @def))
(source_file (type_declaration (type_spec type: (interface_type
    (method_elem name: (field_identifier) @name) @def))))
(source_file (const_declaration (const_spec name: (identifier) @name) @def))
(source_file (var_declaration (var_spec name: (identifier) @name) @def))
(source_file (var_declaration (var_spec_list (var_spec name: (identifier) @name) @def)))
(statement_list (var_declaration (var_spec name: (identifier) @name type: (_)) @def))
(statement_list (var_declaration
    (var_spec_list (var_spec name: (identifier) @name type: (_)) @def)))
(range_clause left: (expression_list (_) . (identifier) @name .)) @def
""",
        calls="""
(call_expression function: [(identifier) (selector_expression)] @name) @call
(composite_literal type: [(type_identifier) (qualified_type)] @name) @call
""",
        # a top-level interface's method elements are statements of their own, so that each
        # is a definition with its own node
        statements="""
(source_file (type_declaration (type_spec type: (interface_type (method_elem) @s))))
""",
    ),
    "rust": LanguageQueries(
        containers=("source_file", "block", "declaration_list", "match_block"),
        clauses=("else_clause",),
        # items, and what qualifies them: ``impl``/``trait`` blocks, inline modules, ``use``
        # declarations, struct fields (``repomem.index.langs.rust``)
        definitions="""
(function_item name: (identifier) @name) @def
(function_signature_item name: (identifier) @name) @def
(struct_item name: (type_identifier) @name) @def
(enum_item name: (type_identifier) @name) @def
(union_item name: (type_identifier) @name) @def
(trait_item name: (type_identifier) @name) @def
(type_item name: (type_identifier) @name) @def
(const_item name: (identifier) @name) @def
(static_item name: (identifier) @name) @def
(macro_definition name: (identifier) @name) @def
(mod_item name: (identifier) @name) @def
(impl_item type: (_) @name) @def
(use_declaration argument: (_) @name) @def
(extern_crate_declaration name: (identifier) @name) @def
(field_declaration name: (field_identifier) @name) @def
""",
        # whole callees (paths, ``self.a.m``), macros and struct literals
        calls="""
(call_expression function: (_) @name) @call
(macro_invocation macro: (_) @name) @call
(struct_expression name: (_) @name) @call
""",
    ),
    "c": LanguageQueries(
        containers=(
            "translation_unit",
            "compound_statement",
            "field_declaration_list",
            "declaration_list",
            *_C_PREPROC,
        ),
        clauses=("else_clause",),
        definitions=_C_DEFS,
        calls=_C_CALLS,
        statements=_inside_error(_C_TOP),
    ),
    "cpp": LanguageQueries(
        containers=(
            "translation_unit",
            "compound_statement",
            "field_declaration_list",
            "declaration_list",
            *_C_PREPROC,
        ),
        clauses=("else_clause", "catch_clause"),
        definitions=_CPP_DEFS,
        calls=_CPP_CALLS,
        statements=_inside_error(_CPP_TOP),
    ),
}

# Languages whose definitions may serve each other's calls (one resolution namespace).
NAMESPACE: dict[str, str] = {
    "javascript": "js",
    "typescript": "js",
    "tsx": "js",
    "c": "c",
    "cpp": "c",
}


def _known(language: str, node_types: tuple[str, ...]) -> tuple[str, ...]:
    lang = grammar(language)
    return tuple(t for t in node_types if lang.id_for_node_kind(t, True))


# the conditions of C's ``#if``/``#ifdef``/``#elif``, named children of those groups
_C_NOT_STATEMENTS = frozenset(
    {
        "identifier",
        "number_literal",
        "char_literal",
        "preproc_defined",
        "unary_expression",
        "binary_expression",
        "parenthesized_expression",
        "call_expression",
    }
)


@cache
def comment_kinds(language: str) -> np.ndarray:
    """Kind ids of comments and, in C and C++, of ``#if`` conditions: named children of
    blocks that are never statements."""
    lang = grammar(language)
    names = {"comment", "line_comment", "block_comment"}
    if language in ("c", "cpp"):
        names |= _C_NOT_STATEMENTS
    return np.array(
        [k for k in range(lang.node_kind_count) if lang.node_kind_for_id(k) in names], np.int64
    )


@cache
def file_query(language: str) -> Query:
    """Everything a file contributes, matched in one pass: statements (@s, and the named
    children of each container, @in), definitions (@def + @name), calls (@call + @name) and,
    for Python, imports (@imp). A container is matched once and its children read as a list
    rather than each child matched: a match costs more than its node, and a third of the C
    statements' matches went (the kernel's parsing workers: ~0.5 us a line, ~4%)."""
    q = QUERIES[language]
    patterns = [f"({c}) @in" for c in _known(language, q.containers)]
    patterns += [f"({c}) @s" for c in _known(language, q.clauses)]
    patterns += [q.statements, q.definitions, q.calls]
    if language == "python":
        patterns.append("(decorated_definition definition: (_) @s)")
        patterns.append(
            "(import_statement) @imp (import_from_statement) @imp (future_import_statement) @imp"
        )
    return Query(grammar(language), "\n".join(patterns))

"""C and C++ resolution: the include graph, prototypes and their definitions, ``static``,
macros, types, C++ namespaces, classes and receivers, and updates equal to a rebuild."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from repos import run_repomem, write_files
from test_index import assert_same

from repomem.config import IndexConfig
from repomem.context.cards import LISTING
from repomem.context.definitions import find_definitions, resolve_names
from repomem.index import cmacros, langs
from repomem.index.langs import c
from repomem.index.langs.c import RECEIVER, _has_static, _open_namespaces
from repomem.index.languages import code_language
from repomem.index.parsing import _closers, parse_source
from repomem.index.repo import RepoIndex
from repomem.index.resolve import Resolver

C_FILES: dict[str, str] = {
    "include/lib/util.h": """\
#ifndef LIB_UTIL_H
#define LIB_UTIL_H
#include <stddef.h>

#define UTIL_MAX 64
#define FREE(m, p) util_free((m), (p))

typedef struct buffer {
    char *data;
    size_t len;
} buffer_t;

int util_sum(int a, int b);
void util_free(void *m, void *p);
#endif
""",
    "src/util.c": """\
#include "lib/util.h"

static int twice(int x)
{
    return x * 2;
}

int util_sum(int a, int b)
{
    return twice(a) + b;
}

void util_free(void *m, void *p)
{
    (void)m;
    (void)p;
}
""",
    "src/main.c": """\
#include <stdio.h>
#include <lib/util.h>
#include "local.h"

int main(void)
{
    buffer_t b;
    int n = util_sum(1, UTIL_MAX);
    n = util_sum(util_sum(n, 1), 2);
    FREE(0, b.data);
    local_helper(n);
    printf("%d", n);
    return twice(n);
}
""",
    "src/local.h": "static inline int local_helper(int v) { return v + 1; }\n",
    "src/other.c": """\
static int twice(int x)
{
    return x + x;
}

int other(void)
{
    return twice(3) + lonely();
}
""",
    "src/lonely.c": "int lonely(void)\n{\n    return 7;\n}\n",
    "src/libc.c": "int strlen_ours(void) { return 0; }\nint memcpy(void) { return 1; }\n",
    "src/uses.c": "int uses(void)\n{\n    return memcpy() + only_in_tests();\n}\n",
    "tests/helpers.c": "int only_in_tests(void)\n{\n    return 0;\n}\n",
    "tools/state.h": "enum state { ON, OFF };\n",
}

CPP_FILES: dict[str, str] = {
    "cpp/shape.h": """\
#pragma once
namespace geo {
class Shape {
 public:
  virtual ~Shape();
  double area() const;
  void scale(double k);
};

class Circle : public Shape {
 public:
  explicit Circle(double r);
  double radius() const { return r_; }
 private:
  double r_;
};

double total(const Shape& s);
}  // namespace geo
""",
    "cpp/shape.cc": """\
#include "shape.h"

namespace geo {
Shape::~Shape() {}

double Shape::area() const {
  return 0.0;
}

void Shape::scale(double k) {
  (void)k;
  this->area();
}

Circle::Circle(double r) : r_(r) {}

double total(const Shape& s) {
  return s.area();
}
}  // namespace geo

namespace {
int hidden() { return 1; }
}
""",
    "cpp/app.cc": """\
#include "shape.h"
#include <vector>

using namespace geo;

struct Holder {
  Circle* c_;
  double go() { return c_->radius(); }
};

int run() {
  Circle c(2.0);
  Circle* p = new Circle(1.0);
  c.scale(2.0);
  p->area();
  std::vector<int> v;
  v.push_back(1);
  return static_cast<int>(geo::total(c));
}
""",
    "cpp/alias.cc": """\
#include "shape.h"
namespace g = geo;
using geo::Circle;

double use(const Circle& c) {
  return g::total(c) + c.radius();
}
""",
}


def build(tmp_path: Path, files: dict[str, str]) -> RepoIndex:
    root = write_files(tmp_path / "r", files)
    idx, _ = RepoIndex.build(root, IndexConfig(), save=False)
    return idx


def edges(idx: RepoIndex, path: str) -> set[tuple[int, str, str]]:
    """(calling statement's first row, target file, target's qualified name)."""
    pf = idx.tables.parsed[path]
    out = set()
    for src, target, node in idx.tables.calls.get(path, ()):
        out.add((int(pf.node_start[src]), target, idx.resolver.qualnames[target][node]))
    return out


def called(idx: RepoIndex, path: str) -> set[tuple[str, str]]:
    return {(t, q) for _, t, q in edges(idx, path)}


def names(idx: RepoIndex, path: str, *wanted: str) -> list[tuple[str, str] | None]:
    text = idx.tables.files[path].text
    found = resolve_names(idx, path, text, list(wanted))
    return [None if f is None else (f[0], f[1]) for f in found]


def test_calls_follow_includes_prototypes_and_linkage(tmp_path: Path) -> None:
    idx = build(tmp_path, C_FILES)
    main = called(idx, "src/main.c")
    # a prototype in a header the file includes is one entity with its definition
    assert ("src/util.c", "util_sum") in main
    # a function-like macro is a definition; an inline function of an included header too
    assert ("include/lib/util.h", "FREE") in main
    assert ("src/local.h", "local_helper") in main
    # ``twice`` is static in two other files: seen by neither, so not resolved
    assert not any(q == "twice" for _, q in main)
    # the C library's names never resolve to a repository definition of that name
    assert not any(q == "printf" for _, q in main)
    # a static function resolves in its own file
    assert called(idx, "src/util.c") == {("src/util.c", "twice")}
    assert ("src/other.c", "twice") in called(idx, "src/other.c")
    # nothing declares ``lonely`` where other.c can see: the only definition, a guess
    assert ("src/lonely.c", "lonely") in called(idx, "src/other.c")
    # a type no include brings in is some other program's: not guessed
    assert names(idx, "src/uses.c", "state") == [None]
    uses = called(idx, "src/uses.c")
    assert not any(q == "memcpy" for _, q in uses)  # the C library's, even when defined here
    assert not any(t.startswith("tests/") for t, _ in uses)  # never into tests from outside


def test_names_at_the_cursor_resolve_as_calls_do(tmp_path: Path) -> None:
    idx = build(tmp_path, C_FILES)
    assert names(idx, "src/main.c", "util_sum", "UTIL_MAX", "buffer_t", "twice", "printf") == [
        ("src/util.c", "util_sum"),
        ("include/lib/util.h", "UTIL_MAX"),
        ("include/lib/util.h", "buffer_t"),
        None,
        None,
    ]
    hits = find_definitions(idx, "src/main.c", idx.tables.files["src/main.c"].text)
    cards = {(h.card.path, h.card.name) for h in hits}
    assert ("src/util.c", "util_sum") in cards
    assert not any(n in ("twice", "printf", "n", "b") for _, n in cards)
    # a header's definition is carded from its own line, not from the include guard
    card = next(h.card for h in hits if h.card.name == "buffer_t")
    assert card.text.startswith("typedef struct buffer")


def test_cards_take_names_from_further_up_in_c(tmp_path: Path) -> None:
    # an include names no function: a call 80 lines up is what the next line may call again
    idx = build(tmp_path, C_FILES)
    left = '#include "lib/util.h"\nint f(void)\n{\n    util_sum(1, 2);\n' + "    ;\n" * 80
    cards = {(h.card.path, h.card.name) for h in find_definitions(idx, "src/main.c", left)}
    assert ("src/util.c", "util_sum") in cards


def test_cards_offer_what_the_file_calls_most_beyond_the_names_read(tmp_path: Path) -> None:
    """A function the file calls again and again, but not in the last 120 lines, is a card:
    the next line often calls it once more."""
    body = "    util_sum(1, 2);\n    FREE(0, 0);\n    FREE(0, 1);\n"
    main = '#include "lib/util.h"\nint f(void)\n{\n' + body + "    ;\n" * 130
    idx = build(tmp_path, {**C_FILES, "src/main.c": main})
    hits = find_definitions(idx, "src/main.c", main)
    found = {h.card.name: h.how for h in hits}
    assert found.get("FREE") == "called in this file (2 calls)"
    assert found.get("util_sum") == "called in this file (1 call)"
    assert "util_free" not in found  # FREE's expansion is not written in this file


def test_a_local_shadows_a_definition_of_the_same_name(tmp_path: Path) -> None:
    files = {**C_FILES, "src/count.c": "int count(void)\n{\n    return 0;\n}\n"}
    idx = build(tmp_path, files)
    left = '#include "lib/util.h"\nint f(void)\n{\n    int count = 0;\n    count'
    assert resolve_names(idx, "src/main.c", left, ["count"]) == [None]
    assert resolve_names(idx, "src/main.c", "int f(void)\n{\n    count", ["count"])[0] is not None
    # an apostrophe in a comment opens no character literal that would hide the local
    left = (
        '#include "lib/util.h"\nint f(void)\n{\n    /* the caller\'s count */\n'
        "    int count = 0;\n    char c = 'x';\n    count"
    )
    assert resolve_names(idx, "src/main.c", left, ["count"]) == [None]


MACRO_FILES: dict[str, str] = {
    "include/api.h": "typedef struct StateStruct State;\nState* make(void);\n",
    "src/mem.h": "void* alloc(int n);\n",
    "src/state.h": (
        '#include "api.h"\ntypedef struct StateStruct StateInternal;\n#define State StateInternal\n'
    ),
    "src/mem.c": (
        '#include "api.h"\n#if defined(FAST)\nvoid* alloc(int n) {\n  return 0;\n}\n'
        "#else\nvoid* alloc(int n) {\n  return (void*)0;\n}\n#endif\n"
    ),
    "src/other.c": "void* alloc(int n) {\n  return 0;\n}\n",
    "src/use.c": (
        '#include "state.h"\n#include "mem.h"\n'
        "void run(void) {\n  State* s = make();\n  alloc(1);\n}\n"
    ),
}


def test_a_macro_the_file_sees_hides_a_type_and_if_alternatives_are_one(tmp_path: Path) -> None:
    """``#define State StateInternal`` renames ``State`` wherever it is seen (brotli's
    ``BrotliDecoderState``); two definitions of ``alloc`` under ``#if``/``#else`` in the
    header's namesake file are one function, so the call resolves to the first, not to the
    prototype."""
    idx = build(tmp_path, MACRO_FILES)
    assert names(idx, "src/use.c", "State", "alloc") == [
        ("src/state.h", "State"),
        ("src/mem.c", "alloc"),
    ]
    # from a file that sees only the typedef, the name is the typedef
    assert names(idx, "include/api.h", "State") == [("include/api.h", "State")]


PLATFORM_FILES: dict[str, str] = {
    **{
        f"arch/{os}/proc.h": "int proc_exe(int pid);\n"
        "typedef struct {\n  int n;\n} COUNTERS, *PCOUNTERS;\n"
        for os in ("osx", "bsd", "win")
    },
    **{f"arch/{os}/proc.c": "int proc_exe(int pid) {\n  return pid;\n}\n" for os in ("osx", "bsd")},
    "arch/win/proc.c": "int proc_exe(int pid) {\n  return 0;\n}\n",
    "arch/aix/only.c": "int only_here(void) {\n  return 0;\n}\n",
    "arch/sun/only.h": "int only_here(void);\n",
    "lone.c": "int h(void) {\n  return only_here();\n}\n",
    "_psutil_osx.c": (
        '#include "arch/osx/proc.h"\nint f(void) {\n  COUNTERS c;\n  proc_exe(1);\n}\n'
    ),
}


def test_platform_headers_declare_their_own_directorys_definitions(tmp_path: Path) -> None:
    """psutil: every platform's ``arch/<os>/proc.h`` declares a ``proc_exe`` its own
    ``proc.c`` defines; the one the file includes says which. A ``typedef`` naming a type and
    its pointer (``COUNTERS, *PCOUNTERS``) is carded as the first name, the one used."""
    idx = build(tmp_path, PLATFORM_FILES)
    assert names(idx, "_psutil_osx.c", "proc_exe", "COUNTERS") == [
        ("arch/osx/proc.c", "proc_exe"),
        ("arch/osx/proc.h", "COUNTERS"),
    ]
    # two platforms' headers included (under #if): the first one's definition
    both = '#include "arch/bsd/proc.h"\n#include "arch/osx/proc.h"\nint g(void) {\n  proc_exe(1);\n'
    idx.update_file("_psutil_osx.c", both)
    assert names(idx, "_psutil_osx.c", "proc_exe") == [("arch/bsd/proc.c", "proc_exe")]
    # the only definition of a name another unit's header declares is that unit's: no guess
    assert names(idx, "lone.c", "only_here") == [None]
    idx.update_file("_psutil_osx.c", PLATFORM_FILES["_psutil_osx.c"])
    cards = {
        h.card.name for h in find_definitions(idx, "_psutil_osx.c", PLATFORM_FILES["_psutil_osx.c"])
    }
    assert "COUNTERS" in cards and "PCOUNTERS" not in cards


def test_cpp_namespaces_classes_and_receivers(tmp_path: Path) -> None:
    idx = build(tmp_path, CPP_FILES)
    app = called(idx, "cpp/app.cc")
    assert ("cpp/shape.cc", "geo.Shape.scale") in app  # c.scale: inherited, through the type
    assert ("cpp/shape.cc", "geo.Shape.area") in app  # p->area()
    assert ("cpp/shape.cc", "geo.total") in app  # geo::total
    assert ("cpp/shape.h", "geo.Circle") in app  # new Circle
    assert not any(q.endswith("push_back") for _, q in app)
    # a namespace alias, a using declaration, a parameter's type
    assert called(idx, "cpp/alias.cc") == {
        ("cpp/shape.cc", "geo.total"),
        ("cpp/shape.h", "geo.Circle.radius"),
    }
    shape = called(idx, "cpp/shape.cc")
    assert ("cpp/shape.cc", "geo.Shape.area") in shape  # this->area(), s.area()
    # a field's declared type, at the cursor
    left = idx.tables.files["cpp/app.cc"].text.split("double go()")[0] + "double go() { return c_->"
    assert resolve_names(idx, "cpp/app.cc", left + "radius", ["c_.radius"]) == [
        ("cpp/shape.h", "geo.Circle.radius", idx.resolver.defs["cpp/shape.h"]["geo.Circle.radius"])
    ]
    assert names(idx, "cpp/app.cc", "geo.total", "std.vector", "hidden") == [
        ("cpp/shape.cc", "geo.total"),
        None,
        None,
    ]


ADAPTER_FILES = {
    "lib/adapters.hpp": """\
namespace ns {
template<typename C> class protocol {
  public:
    virtual void write_character(C c) = 0;
};
class Foo { public: int go(); };
template<typename C> using adapter_t = std::shared_ptr<protocol<C>>;
}
""",
    "lib/writer.hpp": """\
#include "adapters.hpp"
namespace ns {
template<typename C> class writer {
  public:
    explicit writer(adapter_t<C> adapter, Foo &f, int n) : oa(std::move(adapter)), m_f(f), k(n) {}
    void more() {
""",
}


def test_cpp_aliases_and_member_initialisers_type_the_receivers(tmp_path: Path) -> None:
    """An alias's members are those of the type it names (``std::shared_ptr<P<C>>``: P's);
    a field the class body does not declare above the cursor (C++ declares fields last) is
    typed by the constructor parameter its member initialiser takes."""
    idx = build(tmp_path, ADAPTER_FILES)
    text = ADAPTER_FILES["lib/writer.hpp"] + "        oa->"
    defs = idx.resolver.defs["lib/adapters.hpp"]
    names = ["oa.write_character", "m_f.go", "k.go"]
    assert resolve_names(idx, "lib/writer.hpp", text, names) == [
        ("lib/adapters.hpp", "ns.protocol.write_character", defs["ns.protocol.write_character"]),
        ("lib/adapters.hpp", "ns.Foo.go", defs["ns.Foo.go"]),
        None,
    ]
    # a declared field keeps its declared type; an edited alias re-resolves as a rebuild does
    declared = text.replace("    void more", "    Foo *oa;\n    void more")
    assert resolve_names(idx, "lib/writer.hpp", declared, ["oa.go"])[0] is not None
    edited = ADAPTER_FILES["lib/adapters.hpp"].replace("std::shared_ptr<protocol<C>>", "Foo")
    (tmp_path / "r" / "lib/adapters.hpp").write_text(edited)
    idx.update_file("lib/adapters.hpp", edited)
    fresh = build(tmp_path / "again", {**ADAPTER_FILES, "lib/adapters.hpp": edited})
    for index in (idx, fresh):
        found = resolve_names(index, "lib/writer.hpp", text, ["oa.write_character", "oa.go"])
        assert [f and f[:2] for f in found] == [None, ("lib/adapters.hpp", "ns.Foo.go")]


def test_cpp_guesses_no_name_the_standard_library_owns(tmp_path: Path) -> None:
    """The repository's only definition of a name its file does not see is a guess: never
    for a name the C++ standard library owns (``find``; C may call its own)."""
    files = {
        "lib/store.cc": "int find(int k) { return k; }\nint helper(int x) { return x; }\n",
        "app/use.cc": "namespace app {\nint run(int k) {\n  helper(k);\n  return find(k);\n",
        "c/main.c": "int main(void) {\n  return find(1);\n}\n",
    }
    idx = build(tmp_path, files)
    found = resolve_names(idx, "app/use.cc", files["app/use.cc"], ["helper", "find"])
    assert [f and f[:2] for f in found] == [("lib/store.cc", "helper"), None]
    assert called(idx, "app/use.cc") == {("lib/store.cc", "helper")}
    assert called(idx, "c/main.c") == {("lib/store.cc", "find")}


def test_cpp_a_namespace_a_syntax_error_leaves_open_still_scopes_its_code(
    tmp_path: Path,
) -> None:
    """A buffer cut where no closer can be written (in a comment) leaves ``namespace geo {``
    loose in a syntax error: its definitions and calls are still the namespace's; and at a
    cursor between definitions, names are looked up from the namespaces the lines open."""
    cut = (
        '#include "shape.h"\nnamespace geo {\nnamespace {\ndouble twice(const Shape& s) {\n'
        "  return total(s) * 2;\n}\n}\n\ndouble thrice(const Shape& s) {\n  return 3; /* open"
    )
    between = '#include "shape.h"\nnamespace geo {\ndouble one() { return 1.0; }\n\n'
    idx = build(tmp_path, {**CPP_FILES, "cpp/cut.cc": cut, "cpp/between.cc": between + "}\n"})
    # (an anonymous namespace's names are qualified as a whole file's are)
    assert [d.name for d in idx.tables.parsed["cpp/cut.cc"].definitions] == ["geo..twice"]
    assert ("cpp/shape.cc", "geo.total") in called(idx, "cpp/cut.cc")
    total = idx.resolver.defs["cpp/shape.cc"]["geo.total"]
    left = between + "double two = "
    assert resolve_names(idx, "cpp/between.cc", left, ["total"]) == [
        ("cpp/shape.cc", "geo.total", total)
    ]
    # an apostrophe in a comment opens no character literal that would hide a namespace
    lines = ["namespace geo {", "/* the shapes' area */", "namespace flat {", "char u = 'm';"]
    assert _open_namespaces(lines) == "geo.flat"


def test_cpp_a_using_declarations_namespace_is_searched_as_its_arguments_would_be(
    tmp_path: Path,
) -> None:
    """``using ::geo::Shape;`` then ``total(s)`` outside the namespace: argument-dependent
    lookup finds ``geo::total`` through the argument's type, which the file brings in."""
    adl = (
        '#include "shape.h"\nusing ::geo::Shape;\n\n'
        "double sum(const Shape& s) {\n  return total(s);\n}\n"
    )
    idx = build(tmp_path, {**CPP_FILES, "cpp/adl.cc": adl})
    assert called(idx, "cpp/adl.cc") == {("cpp/shape.cc", "geo.total")}


def test_cpp_header_is_parsed_as_cpp(tmp_path: Path) -> None:
    assert code_language("a/shape.h", CPP_FILES["cpp/shape.h"]) == "cpp"
    assert code_language("a/util.h", C_FILES["include/lib/util.h"]) == "c"
    # a nested namespace's definition (C++17, jsonnet's string_utils.h)
    assert code_language("a/s.h", "namespace jsonnet::internal {\nint f();\n}\n") == "cpp"
    c_header_for_cpp = '#ifdef __cplusplus\nextern "C" {\n#endif\nint f(void);\n'
    assert code_language("a/x.h", c_header_for_cpp) == "c"
    root = write_files(tmp_path / "r", {**CPP_FILES, **C_FILES})
    out = run_repomem("index", str(root), "--json", "--no-progress")
    assert out.returncode == 0, out.stderr
    counts = json.loads(out.stdout)["files_by_language"]
    assert counts["cpp"] == len(CPP_FILES) and counts["c"] == len(C_FILES)


def test_each_cpp_line_marks_a_header_first_or_later_indented_or_not() -> None:
    """Every kind of line only C++ writes, at the text's start and after C lines, with and
    without blanks before it (the search leaves a line whose first character starts none)."""
    lines = [
        "template <typename T>",
        "namespace a {",
        "inline namespace v1 {",
        "using namespace std;",
        "class A : public B {",
        "public:",
        "private :",
        "protected:",
        'extern "C++" {',
        "#include <vector>",
        "# include <cstdio>",
    ]
    c_lines = "#define X 1\nstruct s { int a; };\nstatic int f(void);\n"
    for line in lines:
        for blank in ("", "  ", "\t"):
            assert code_language("a/x.h", blank + line + "\nint f(void);\n") == "cpp", line
            assert code_language("a/x.h", c_lines + blank + line + "\n") == "cpp", line
    not_cpp = "#include <stdio.h>\n\tclass_init();\n  publicity:\n\ttemplate_x = 1;\n"
    assert code_language("a/x.h", c_lines + not_cpp) == "c"


# a library's own macros, as a header-only library writes them (nlohmann/json): a
# namespace opened and closed by a macro line, attribute macros on lines of their own before
# members, an access label by a macro, an export macro in a class's head
MACRO_LINE_FILES: dict[str, str] = {
    "mac/lexer.hpp": """\
#pragma once
#include <string>

LIB_NAMESPACE_BEGIN
namespace detail
{
class lexer
{
  public:
    LIB_NON_NULL(2)
    int scan(const char* s) { return 0; }

    /*!
    @brief a token's name
    */
    LIB_RETURNS_NON_NULL
    LIB_CONST
    static const char* token_type_name(int t) { return "t"; }

    /// the token read last
    std::string get_token_string() const { return ""; }

  LIB_PRIVATE_UNLESS_TESTED:
    int current = 0;
};
}  // namespace detail
LIB_NAMESPACE_END
""",
    "mac/reader.hpp": """\
#pragma once
#include <string>

LIB_NAMESPACE_BEGIN
namespace detail
{
class LIB_API reader
{
  public:
    bool parse()
    {
        return get_token_string().empty();
    }

  private:
    LIB_NON_NULL(3)
    std::string get_token_string() const { return "r"; }
};
}  // namespace detail
LIB_NAMESPACE_END
""",
}


def test_cpp_lines_of_a_macro_alone_keep_members_in_their_class(tmp_path: Path) -> None:
    """Macro lines that stand for a namespace's braces or for attributes do not end the
    class the grammar reads: each member keeps its class (and the file its text), so a call
    of a member that another class also has is carded with the caller's own, and with none
    in a buffer cut before the caller's own is written (the other class's, taken for a free
    function, was)."""
    idx = build(tmp_path, MACRO_LINE_FILES)
    assert [d.name for d in idx.tables.parsed["mac/lexer.hpp"].definitions] == [
        "detail.lexer",
        "detail.lexer.scan",
        "detail.lexer.token_type_name",
        "detail.lexer.get_token_string",
    ]
    reader = [d.name for d in idx.tables.parsed["mac/reader.hpp"].definitions]
    assert reader == ["detail.reader", "detail.reader.parse", "detail.reader.get_token_string"]
    assert "LIB_NON_NULL(3)" in idx.tables.files["mac/reader.hpp"].text
    text = MACRO_LINE_FILES["mac/reader.hpp"]
    left = text[: text.index("return get_token_string")] + "return get_token_string"
    cards = {(h.card.path, h.card.name) for h in find_definitions(idx, "mac/reader.hpp", left)}
    assert ("mac/reader.hpp", "detail.reader.get_token_string") in cards
    idx.update_file("mac/reader.hpp", left)
    cards = {(h.card.path, h.card.name) for h in find_definitions(idx, "mac/reader.hpp", left)}
    assert not any(name.endswith("get_token_string") for _, name in cards)


EDITS: list[tuple[str, str | None]] = [
    # util_sum becomes static: main.c's call no longer resolves to it
    ("src/util.c", C_FILES["src/util.c"].replace("int util_sum", "static int util_sum")),
    # a header main.c includes comes to define ``twice``
    ("src/local.h", C_FILES["src/local.h"] + "static inline int twice(int v) { return v; }\n"),
    # the header comes to hold C++: parsed as C++ from then on
    ("src/local.h", C_FILES["src/local.h"] + "namespace extra {\nint f();\n}\n"),
    # the include directory's header goes, then comes back elsewhere
    ("include/lib/util.h", None),
    ("other/lib/util.h", C_FILES["include/lib/util.h"]),
    # a second definition of lonely: the guess stops
    ("src/lonely2.c", "int lonely(void)\n{\n    return 8;\n}\n"),
    ("src/util.c", C_FILES["src/util.c"]),
    ("cpp/shape.h", CPP_FILES["cpp/shape.h"].replace("public Shape", "public Other")),
    ("cpp/app.cc", CPP_FILES["cpp/app.cc"].replace("p->area()", "p->radius()")),
    ("cpp/shape.h", CPP_FILES["cpp/shape.h"]),
    ("src/local.h", None),
    # a header comes to rename util_sum by a macro, then stops
    ("include/lib/util.h", C_FILES["include/lib/util.h"] + "#define util_sum util_sum2\n"),
    ("include/lib/util.h", C_FILES["include/lib/util.h"]),
    # a macro line loses the statement before it, then the namespace's closing macro goes
    ("mac/lexer.hpp", MACRO_LINE_FILES["mac/lexer.hpp"].replace("return 0; }", "return 0; ")),
    ("mac/reader.hpp", MACRO_LINE_FILES["mac/reader.hpp"].replace("LIB_NAMESPACE_END\n", "")),
    ("mac/lexer.hpp", MACRO_LINE_FILES["mac/lexer.hpp"]),
]


@pytest.mark.parametrize("stop", [3, len(EDITS)])
def test_updates_equal_a_rebuild(tmp_path: Path, stop: int) -> None:
    files = {**C_FILES, **CPP_FILES, **MACRO_LINE_FILES}
    root = write_files(tmp_path / "r", files)
    idx, _ = RepoIndex.build(root, IndexConfig(), save=False)
    for rel, text in EDITS[:stop]:
        p = root / rel
        if text is None:
            p.unlink()
        else:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
        idx.update_file(rel, text)
    fresh, _ = RepoIndex.build(root, IndexConfig(), save=False)
    assert {p: pf.language for p, pf in idx.tables.parsed.items()} == {
        p: pf.language for p, pf in fresh.tables.parsed.items()
    }
    assert_same(idx, fresh, ["util_sum(1, 2)", "twice(n)"])
    assert {p: sorted(c) for p, c in idx.tables.calls.items()} == {
        p: sorted(c) for p, c in fresh.tables.calls.items()
    }


NODE_FILES: dict[str, str] = {
    "include/node.h": """\
#ifndef NODE_H
#define NODE_H
typedef struct node node;
node *node_new(int kind);
int node_kind(const node *n);
void node_append_child(node *parent, node *child);
void node_free(struct node *n);
int node_count(void);
int kind_name(int kind);
#endif
""",
    "src/node.c": """\
#include "node.h"
struct node {
    int kind;
};
node *node_new(int kind) { return 0; }
int node_kind(const node *n) { return n->kind; }
void node_append_child(node *parent, node *child) {}
void node_free(struct node *n) {}
int node_count(void) { return 0; }
int kind_name(int kind) { return kind; }
""",
    "src/use.c": """\
#include "node.h"

static void build(int kind)
{
    node *root = node_new(kind);
""",
}


def test_functions_taking_a_type_first_are_its_methods(tmp_path: Path) -> None:
    """A function whose first parameter is a named type (``node *``, ``const node *``,
    ``struct node *``) is recorded as taking it; one taking a built-in type or nothing is
    not; the file sees those its includes declare, one per name."""
    idx = build(tmp_path, NODE_FILES)
    lines = NODE_FILES["src/use.c"].split("\n")
    found = langs.for_language("c").receiver_functions(idx.resolver, "src/use.c", lines, 2)
    assert len(found) == 1  # ``kind`` is an int: no type of the repository's
    (type_path, type_node), functions = found[0]
    assert idx.resolver.qualnames[type_path][type_node] == "node"
    named = sorted(idx.resolver.qualnames[p][n] for p, n in functions)
    assert named == ["node_append_child", "node_free", "node_kind"]


def test_the_type_of_the_variable_near_the_cursor_is_carded_with_its_functions(
    tmp_path: Path,
) -> None:
    """The next line passing ``root`` on calls one of the functions taking a ``node``, which
    no line above names: the type's card comes first and lists their declarations, each
    counted as shown (its line among the card's methods)."""
    idx = build(tmp_path, NODE_FILES)
    hits = find_definitions(idx, "src/use.c", NODE_FILES["src/use.c"])
    card = hits[0].card
    assert (card.path, card.name) == ("include/node.h", "node")
    assert card.text.split("\n")[1:] == [
        "// functions taking a node first:",
        "int node_kind(const node *n);",
        "void node_append_child(node *parent, node *child);",
        "void node_free(struct node *n);",
    ]
    assert card.listed == (("include/node.h", 4), ("include/node.h", 5), ("include/node.h", 6))


def test_functions_named_above_give_their_place_on_the_types_card(tmp_path: Path) -> None:
    """Beyond ``MAX_METHODS`` functions taking the type, those the lines above already name
    are left out first (their own cards show them); the card says how many more there are."""
    header = "typedef struct node node;\n" + "".join(
        f"int node_f{i}(node *n);\n" for i in range(12)
    )
    use = '#include "node.h"\nvoid g(node *n)\n{\n    node_f0(n);\n    node_f1(n);\n'
    idx = build(tmp_path, {"node.h": header, "use.c": use})
    card = next(h.card for h in find_definitions(idx, "use.c", use) if h.card.name == "node")
    listed = [line for line in card.text.split("\n") if line.startswith("int node_f")]
    assert listed == [f"int node_f{i}(node *n);" for i in range(2, 12)]
    assert card.text.endswith("// ... 3 more")  # node_f0, node_f1 and the file's own g


FAMILY_FILES: dict[str, str] = {
    "include/dns.h": """\
#define DNS_HEADER_QID(h) (((h)[0] << 8) | (h)[1])
#define DNS_HEADER_QR(h) (((h)[2] >> 7) & 0x1)
#define DNS_HEADER_AA(h) (((h)[2] >> 2) & 0x1)
#define DNS_HEADER_RD(h) ((h)[2] & 0x1)
#define DNS_RR_TYPE(r) (((r)[0] << 8) | (r)[1])
int dns_hash_init(int *state);
int dns_hash_update(int *state, int v);
int dns_hash_final(int *state);
""",
    "src/impl.c": """\
#include "dns.h"
int dns_hash_init(int *state) { return 0; }
int dns_hash_update(int *state, int v) { return v; }
int dns_hash_final(int *state) { return 0; }
static int dns_hash_helper(int v) { return v; }
""",
    "src/show.c": """\
#include "dns.h"

static void show(const unsigned char *abuf, int *state)
{
    int qid = DNS_HEADER_QID(abuf);
    int qr = DNS_HEADER_QR(abuf);
    dns_hash_init(state);
    dns_hash_update(state, qid);
""",
}


def test_a_named_macro_or_function_lists_its_name_family_beside_it(tmp_path: Path) -> None:
    """The next line calls the next of a family the lines above name (``DNS_HEADER_AA``
    after ``DNS_HEADER_QR``, ``dns_hash_final`` after ``_init`` and ``_update``), which no
    line names: the nearest member named lists the rest beside it, nearest first, never one
    the file cannot call (a ``static`` of another file) nor one of another prefix."""
    idx = build(tmp_path, FAMILY_FILES)
    hits = find_definitions(idx, "src/show.c", FAMILY_FILES["src/show.c"])
    by_name = {h.card.name: h.card for h in hits}
    qr = by_name["DNS_HEADER_QR"]
    assert qr.text.split("\n")[1:] == [
        "// beside it in dns.h:",
        "#define DNS_HEADER_AA(h) (((h)[2] >> 2) & 0x1)",
        "#define DNS_HEADER_RD(h) ((h)[2] & 0x1)",
    ]
    assert qr.listed == (("include/dns.h", 2), ("include/dns.h", 3))
    assert "//" not in by_name["DNS_HEADER_QID"].text  # the family's nearest stands for it
    update = by_name["dns_hash_update"]
    assert update.text.split("\n")[1:] == [
        "// beside it in impl.c:",
        "int dns_hash_final(int *state);",
    ]


def test_a_name_in_words_has_the_family_of_its_longest_start_shared(tmp_path: Path) -> None:
    """``BrotliBitReaderSaveState`` has no ``BrotliBitReaderSave`` sibling: its family is the
    ``BrotliBitReader`` functions, nearest first (``RestoreState``, 19 lines below ``Save``
    in brotli's decoder); a start of one word is none, nor is ``ares__`` of ``ares__x_y``."""
    files = {
        "bit.h": "void BrotliBitReaderSaveState(int *br);\n"
        "void BrotliBitReaderRestoreState(int *br);\n"
        "void BrotliOther(int *br);\n"
        "void BrotliBitReaderUnload(int *br);\n",
        "use.c": '#include "bit.h"\n\nvoid f(int *br) {\n    BrotliBitReaderSaveState(br);\n'
        + "    br++;\n" * 18,
    }
    idx = build(tmp_path, files)
    hits = find_definitions(idx, "use.c", files["use.c"])
    card = next(h.card for h in hits if h.card.name == "BrotliBitReaderSaveState")
    assert card.listed == (("bit.h", 1), ("bit.h", 3))
    family = c.LANGUAGE.family
    assert family("BrotliBitReaderSaveState")[:2] == ["BrotliBitReaderSave", "BrotliBitReader"]
    assert family("BrotliOther") == [] and family("ares__x_y") == ["ares__x_"]


PENDING_FILES: dict[str, str] = {
    "include/fast_log.h": """\
double FastLog2(unsigned v);
unsigned Log2Floor(unsigned v);
""",
    "include/big.h": "".join(f"int big_f{i}(int v);\n" for i in range(7)),
    "include/used.h": "int used_f(int v);\nint used_g(int v);\n",
    "src/cost.h": "double cost(const unsigned *p, int n);\n",
    "src/cost.c": """\
#include "cost.h"
#include "fast_log.h"
#include "big.h"
#include "used.h"

double cost(const unsigned *p, int n)
{
    double sum = used_f(n);
    int i;
    for (i = 0; i < n; ++i) {
""",
}


def test_a_small_header_included_and_not_used_yet_lists_its_definitions(
    tmp_path: Path,
) -> None:
    """A file includes a small header for what it is about to call: while the code above
    names none of its definitions, they are listed under the first card of another file; not
    a large header's, nor one the code uses, nor the file's own header's (what it defines)."""
    idx = build(tmp_path, PENDING_FILES)
    hits = find_definitions(idx, "src/cost.c", PENDING_FILES["src/cost.c"])
    first = next(h.card for h in hits if h.card.path != "src/cost.c")
    assert first.name == "used_f"
    assert first.text.split("\n")[1:] == [
        "// declared by headers included above, none used yet:",
        "double FastLog2(unsigned v);",
        "unsigned Log2Floor(unsigned v);",
    ]
    assert first.listed == (("include/fast_log.h", 0), ("include/fast_log.h", 1))
    assert [h.card.name for h in hits].count("FastLog2") == 0
    used = PENDING_FILES["src/cost.c"] + "        sum += FastLog2(p[i]);\n"
    assert all("//" not in h.card.text for h in find_definitions(idx, "src/cost.c", used))


def test_a_cursor_reads_its_own_includes_once_and_again_after_an_edit(tmp_path: Path) -> None:
    """The pending headers and the helpers ask one cursor's includes in turn: read once, and
    read again once a file comes or goes (the same lines, another header)."""
    idx = build(tmp_path, PENDING_FILES)
    lines = PENDING_FILES["src/cost.c"].split("\n")
    lang, r = c.LANGUAGE, idx.resolver
    pf = r.files["src/cost.c"]
    first = c._own_includes(lang, r, pf, "src/cost.c", lines)
    assert "include/fast_log.h" in {h for h, _ in first}
    assert c._own_includes(lang, r, pf, "src/cost.c", lines) is first
    assert c._own_includes(lang, r, pf, "src/cost.c", lines[:]) == first  # another cursor
    (tmp_path / "r/include/fast_log.h").unlink()
    idx.update_file("include/fast_log.h", None)
    pf = idx.resolver.files["src/cost.c"]
    after = c._own_includes(lang, idx.resolver, pf, "src/cost.c", lines)
    assert "include/fast_log.h" not in {h for h, _ in after}
    assert lang.pending_definitions(idx.resolver, "src/cost.c", lines) == []


def test_a_file_including_many_headers_it_uses_nothing_of_yet_lists_none(
    tmp_path: Path,
) -> None:
    """More than ``MAX_PENDING`` such definitions are the top of a file that includes all it
    will use: none is listed."""
    files = dict(PENDING_FILES)
    files["include/more.h"] = "".join(f"int more_f{i}(int v);\n" for i in range(6))
    files["src/cost.c"] = '#include "more.h"\n' + PENDING_FILES["src/cost.c"]
    idx = build(tmp_path, files)
    assert all(
        "//" not in h.card.text for h in find_definitions(idx, "src/cost.c", files["src/cost.c"])
    )


HELPER_FILES: dict[str, str] = {
    "common.h": "".join(f"int common_f{i}(int v);\n" for i in range(8))
    + "void raise_error(const char *msg);\n#define DEBUG(msg) raise_error(msg)\n"
    + "int rarely(int v);\nstruct thing { int v; };\n",
    **{
        f"user{i}.c": '#include "common.h"\n'
        f'void u{i}(void)\n{{\n    raise_error("x");\n    DEBUG("y");\n}}\n'
        for i in range(4)
    },
    "rare.c": '#include "common.h"\nvoid r(void)\n{\n    rarely(1);\n}\n',
    "proc.c": """\
#include "common.h"

int proc(int v)
{
    if (common_f0(v) < 0)
""",
    "alone.c": """\
#include "common.h"

static int twice(int v)
{
    return 2 * v;
}

int alone(int v)
{
    if (twice(v) < 0)
""",
}


def test_the_headers_helpers_the_repository_calls_most_are_listed(tmp_path: Path) -> None:
    """A project header the file includes declares helpers the next line may call though no
    line above names them (an error raiser, a debug macro): those the repository calls most,
    ``HELPER_CALLS`` times at least, are listed on a card of their own that comes last (it
    takes the room the cards leave); not one the code names, not one seldom called, not a
    type."""
    idx = build(tmp_path, HELPER_FILES)
    hits = find_definitions(idx, "proc.c", HELPER_FILES["proc.c"])
    last = hits[-1].card
    assert [h.card.kind for h in hits].count(LISTING) == 1 and last.kind == LISTING
    assert last.text.split("\n") == [
        "// most called of the headers included above, not named here:",
        "void raise_error(const char *msg);",
        "#define DEBUG(msg) raise_error(msg)",
    ]
    assert (last.path, last.line, last.name) == ("common.h", 8, "")
    assert last.listed == (("common.h", 8), ("common.h", 9))
    named = HELPER_FILES["proc.c"] + '        raise_error("negative");\n'
    last = find_definitions(idx, "proc.c", named)[-1].card
    assert last.text.split("\n")[1:] == ["#define DEBUG(msg) raise_error(msg)"]
    # with no card of another file to show, still listed
    hits = find_definitions(idx, "alone.c", HELPER_FILES["alone.c"])
    assert {h.card.path for h in hits[:-1]} == {"alone.c"} and hits[-1].card.kind == LISTING


def test_cpp_free_functions_take_their_first_reference_and_methods_take_nothing(
    tmp_path: Path,
) -> None:
    """A C++ free function's first ``ns::T &`` parameter makes it ``ns.T``'s; a method's first
    parameter is no receiver (``this`` is), nor is a value passed by copy."""
    source = (
        "namespace ns { struct T { int v; void set(T *other); }; }\n"
        "void touch(ns::T &t) {}\n"
        "int size(ns::T t) { return 0; }\n"
    )
    idx = build(tmp_path, {"a.cc": source})
    facts = {(b.symbol, b.module) for b in idx.tables.parsed["a.cc"].imports if b.level == RECEIVER}
    assert facts == {("touch", "ns.T")}


def test_the_types_functions_follow_the_repositorys_calls_after_an_edit(tmp_path: Path) -> None:
    """Beyond ``MAX_METHODS``, the most called functions are listed, counted afresh after an
    edit elsewhere calls another one many times."""
    header = "typedef struct node node;\n" + "".join(
        f"int node_f{i}(node *n);\n" for i in range(12)
    )
    use = '#include "node.h"\nvoid g(node *n)\n{\n'
    files = {"node.h": header, "use.c": use, "other.c": '#include "node.h"\n'}
    root = write_files(tmp_path / "r", files)
    idx, _ = RepoIndex.build(root, IndexConfig(), save=False)

    def listed() -> list[str]:
        card = next(h.card for h in find_definitions(idx, "use.c", use) if h.card.name == "node")
        return [line.split("(")[0][4:] for line in card.text.split("\n")[2:12]]

    assert "node_f11" not in listed()  # no calls anywhere: the first ten in source order
    calls = "".join("    node_f11(n);\n" for _ in range(3))
    idx.update_file("other.c", '#include "node.h"\nvoid h(node *n)\n{\n' + calls + "}\n")
    assert "node_f11" in listed()


@pytest.mark.parametrize("ext", ["c", "cpp"])
def test_a_buffer_cut_inside_a_function_keeps_it(tmp_path: Path, ext: str) -> None:
    """The buffer of a file being written ends at the cursor inside a function: parsed as
    written, the grammar loses the open function in a syntax error; parsed with the closers
    appended on its last line (its rows unchanged), the function is there."""
    text = (
        '#include "peer.h"\n#define OPEN(x) (x\n\n'
        "static int helper(int x) { return x + '}'; }\n\n"
        "int run(struct peer *p, int flag)\n{\n    if (flag) {\n        p->"
    )
    files = {"peer.h": "struct peer { int id; };\n", f"host.{ext}": text + "\n"}
    idx = build(tmp_path, files)
    pf = idx.tables.parsed[f"host.{ext}"]
    assert pf.line_owner.size == text.count("\n") + 1
    assert {d.name for d in pf.definitions} >= {"helper", "run", "OPEN"}


@pytest.mark.parametrize(
    ("language", "source", "closers"),
    [
        ("c", b"int f(void) {\n  if (x) {\n    g(", b")}}"),
        ("c", b"#define OPEN(x) (x \\\n  + [\nint f(void) { h('{', \"(\", ", b")}"),
        ("c", b"int f(void) {\n#if A", b""),  # closers written here would be in a directive
        ("cpp", b'void f() { auto s = R"x(})x"; g(', b")}"),  # a raw string
        ("c", b"int f(void) { /* open", b""),
    ],
)
def test_the_closers_of_a_cut_c_buffer(language: str, source: bytes, closers: bytes) -> None:
    assert _closers(language, source) == closers


@pytest.mark.parametrize(
    ("source", "blanked"),
    [
        # a namespace's macros, attributes before a member, an access label, an export macro
        (b"#include <x>\nNS_BEGIN\nint f();\nNS_END\n", [b"NS_BEGIN", b"NS_END"]),
        (b"};\n  API_ATTR(2)\n  int f();\n", [b"API_ATTR(2)"]),
        (b"  int g();\n  A_PURE\n  A_CONST // why\n  int f();\n", [b"A_PURE", b"A_CONST"]),
        (b"  int g();\n  PRIVATE_UNLESS_TESTED:\n  int f();\n", [b"PRIVATE_UNLESS_TESTED:"]),
        (b"class CORE_EXPORT Obj : public Base {\n};\n", [b"CORE_EXPORT"]),
        (b"  }\n  NS_END\n}  // namespace std\n", [b"NS_END"]),
        # statements and what is not a declaration's neighbour keep their text
        (b"}\nEXPORT_SYMBOL(f);\nint g;\n", []),
        (b"}\nSYSCALL_DEFINE1(close, int, fd)\n{\n", []),
        (b"enum e {\n  ONE,\n  LAST_ONE\n};\n", []),
        (b"enum e {\n  ONLY_ONE\n};\n", []),
        (b"int x = f(a,\n          MAX_SIZE\n);\n", []),
        (b"#define X \\\n  BODY_OF(x)\nint g;\n", []),
        (b"int g;\nHRESULT\nname(void) { return 0; }\n", []),
        (b"struct FILE_INFO info;\n", []),
    ],
)
def test_macro_lines_the_grammar_would_misread_are_blanked(source: bytes, blanked: list) -> None:
    """What the C++ grammar is shown: each macro blanked to as many spaces (offsets and rows
    stay), only where a declaration could end before it and start after it."""
    view = cmacros.parser_view(source, cpp=True)
    assert len(view) == len(source) and view.count(b"\n") == source.count(b"\n")
    expected = source
    for macro in blanked:
        expected = expected.replace(macro, b" " * len(macro), 1)
    assert view == expected


@pytest.mark.parametrize("seed", range(3))
def test_static_is_found_as_the_word_pattern_finds_it(seed: int) -> None:
    """A declaration is static where ``\\bstatic\\b`` searched between its start and its name
    finds the word: the byte before the start counts as a neighbour, the byte at the end
    does not."""
    rng = random.Random(seed)
    pieces = ["static", "static", "_", "x", "1", " ", "\n", "(", "*", "é"]
    for _ in range(400):
        source = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12))).encode()
        start = rng.randint(0, len(source))
        end = rng.randint(start, len(source))
        expected = re.compile(rb"\bstatic\b").search(source, start, end) is not None
        assert _has_static(source, start, end) == expected, (source, start, end)


def test_a_name_the_file_sees_defined_reads_no_other_definitions_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A call the file's own or included definition answers reads the linkage of no other
    file defining the name (``_kinds``, made from that file's parse): the whole Linux
    kernel's static helpers of one name are each defined in hundreds of files; where the
    file sees only a prototype, the definitions it does not see are read."""
    read: list[str] = []
    kinds = c._kinds
    monkeypatch.setattr(c, "_kinds", lambda pf: read.append(pf.path) or kinds(pf))
    texts = {
        f"d{i}/m.c": "static int helper(void) { return 0; }\nint g(void) { return helper(); }\n"
        for i in range(4)
    }
    texts["inc/api.h"] = "int api(void);\n"
    texts["lib/api.c"] = '#include "../inc/api.h"\nint api(void) { return 1; }\n'
    texts["use/u.c"] = '#include "../inc/api.h"\nint u(void) { return api(); }\n'
    r = Resolver({p: parse_source(p, "c", t, "d") for p, t in texts.items()})
    node = r.defs["d0/m.c"]["helper"]
    assert [(t, n) for _, t, n in r.calls_of("d0/m.c")] == [("d0/m.c", node)]
    assert read == ["d0/m.c"]
    read.clear()
    assert [t for _, t, _ in r.calls_of("use/u.c")] == ["lib/api.c"]
    assert sorted(read) == ["inc/api.h", "lib/api.c"]


def test_an_include_is_found_once_for_a_directory_as_from_each_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The files of one directory find an include at the same file: the files its tail
    names (one ``asm/`` header per architecture of the Linux kernel) are weighed once for
    the directory, not again for each file including it."""
    weighed: list[str] = []
    nearest = c._nearest
    monkeypatch.setattr(c, "_nearest", lambda at, found: weighed.append(at) or nearest(at, found))
    texts = {
        f"arch/{a}/include/asm/io.h": f"static inline int io(void) {{ return {i}; }}\n"
        for i, a in enumerate(("arm", "x86"))
    }
    texts |= {
        p: f"#include <asm/io.h>\nint {p[-3]}(void) {{ return io(); }}\n"
        for p in ("drivers/x/a.c", "drivers/x/b.c", "arch/x86/kernel/k.c")
    }
    r = Resolver({p: parse_source(p, "c", t, "d") for p, t in texts.items()})
    targets = {p: [t for _, t, _ in r.calls_of(p)] for p in texts if p.endswith(".c")}
    assert targets == {
        "drivers/x/a.c": ["arch/arm/include/asm/io.h"],
        "drivers/x/b.c": ["arch/arm/include/asm/io.h"],
        "arch/x86/kernel/k.c": ["arch/x86/include/asm/io.h"],
    }
    assert weighed == ["drivers/x", "arch/x86/kernel"]


def test_an_include_naming_the_librarys_own_folder_finds_its_contents() -> None:
    """A header-only library's files include each other through its folder's name
    (``<lib/detail/io.hpp>``), which a repository of that folder's contents lacks: the path
    less its first directory is looked up where the whole is not found; a lone file is not
    (``<sys/types.h>`` is no repository ``types.h``), and a file added under the whole path
    takes its place, as a rebuild finds it."""
    texts = {
        "detail/io.hpp": "inline int io_put(int c) { return c; }\n",
        "other/io.hpp": "inline int io_put(int c) { return 0; }\n",  # no guess: two of them
        "types.h": "static inline int own_type(void) { return 1; }\n",
        "detail/writer.hpp": (
            "#include <lib/detail/io.hpp>\n#include <sys/types.h>\n"
            "inline int put() { return io_put(1) + own_type(); }\n"
        ),
    }
    r = Resolver({p: parse_source(p, "cpp", t, "d") for p, t in texts.items()})
    assert [t for _, t, _ in r.calls_of("detail/writer.hpp")] == ["detail/io.hpp"]
    whole = "inline int io_put(int c) { return 2 * c; }\n"
    r.update("lib/detail/io.hpp", parse_source("lib/detail/io.hpp", "cpp", whole, "d"))
    again = {**texts, "lib/detail/io.hpp": whole}
    fresh = Resolver({p: parse_source(p, "cpp", t, "d") for p, t in again.items()})
    for resolver in (r, fresh):
        assert [t for _, t, _ in resolver.calls_of("detail/writer.hpp")] == ["lib/detail/io.hpp"]


NEXT_FILES: dict[str, str] = {
    "src/vm.h": '#include "ast.h"\nnamespace ns {\n'
    "/** Runs it. Unlike vm_stream, one result. */\nint vm_run(Ast *a);\n",
    "src/ast.h": "namespace ns {\nstruct Ast { int kind; };\n}\n",
    "src/vm.cpp": """\
#include "vm.h"
namespace ns {
static int helper(Ast *a) { return a->kind; }
int vm_run(Ast *a) { return helper(a); }
int vm_multi(Ast *a) { return 2; }
namespace {
int hidden(Ast *a) { return 3; }
}
int vm_stream(Ast *a) { return 4; }
int vm_first(Ast *a) { return 0; }
}
""",
}


def test_a_header_lists_what_its_source_defines_after_its_declarations_above(
    tmp_path: Path,
) -> None:
    """A header declares its source's functions, mostly in their order: the ones after the
    last one its code names come first, then the rest; not a static's, an anonymous
    namespace's, nor one the code names (a comment naming one does not)."""
    idx = build(tmp_path, NEXT_FILES)
    hits = find_definitions(idx, "src/vm.h", NEXT_FILES["src/vm.h"])
    host = next(h.card for h in hits if h.card.path != "src/vm.h")
    assert host.name == "ns.Ast"
    assert host.text.split("\n")[-4:] == [
        "// defined in vm.cpp, not declared above yet:",
        "int vm_multi(Ast *a);",
        "int vm_stream(Ast *a);",
        "int vm_first(Ast *a);",
    ]
    assert host.listed[-3:] == (("src/vm.cpp", 4), ("src/vm.cpp", 8), ("src/vm.cpp", 9))
    # a header naming nothing yet lists them alone, in the source's order
    top = "namespace ns {\n"
    (only,) = find_definitions(idx, "src/vm.h", top)
    assert (only.card.kind, only.card.text.split("\n")[1]) == (LISTING, "int vm_run(Ast *a);")
    # inside a function's body, nothing is declared next
    body = NEXT_FILES["src/vm.h"] + "inline int twice(Ast *a) {\n    "
    idx.update_file("src/vm.h", body)
    assert all("defined in" not in h.card.text for h in find_definitions(idx, "src/vm.h", body))


def test_an_out_of_line_methods_class_is_in_scope(tmp_path: Path) -> None:
    """In ``void Pass::fodder() {``, a bare call is ``Pass``'s member: the header's class
    card shows them, though the body names no method yet."""
    files = {
        "pass.h": "namespace ns {\nclass Pass {\n  public:\n    virtual void element(int i) {}\n"
        "    void fodder(int f);\n};\n}\n",
        "pass.cpp": '#include "pass.h"\nnamespace ns {\nvoid Pass::fodder(int f)\n{\n',
    }
    idx = build(tmp_path, files)
    hits = find_definitions(idx, "pass.cpp", files["pass.cpp"] + "    ")
    (card,) = [h for h in hits if h.card.name == "ns.Pass"]
    assert card.how == "in scope"
    assert "    virtual void element(int i);" in card.card.text.split("\n")
    inline = {"pass.cpp": '#include "pass.h"\nnamespace ns {\nvoid free_f(int f)\n{\n'}
    idx = build(tmp_path / "free", {**files, **inline})
    hits = find_definitions(idx, "pass.cpp", inline["pass.cpp"] + "    ")
    assert "ns.Pass" not in {h.card.name for h in hits}


PIPELINE: dict[str, str] = {
    "steps.h": "int lex(int s);\nint parse(int t);\nint desugar(int a);\nint check(int a);\n",
    "steps.c": '#include "steps.h"\nint lex(int s) { return s; }\nint parse(int t) { return t; }\n'
    "int desugar(int a) { return a; }\nint check(int a) { return a; }\n",
    "one.c": '#include "steps.h"\nint one(int s) {\n    int t = lex(s);\n    int a = parse(t);\n'
    "    return desugar(a);\n}\n",
    "two.c": '#include "steps.h"\nint two(int s) {\n    int a = parse(lex(s));\n'
    "    desugar(a);\n    return check(a);\n}\n",
    "run.c": '#include "steps.h"\nint run(int s) {\n    int t = lex(s);\n    int a = parse(t);\n',
}


def test_a_call_just_above_lists_what_its_other_calls_are_followed_by(tmp_path: Path) -> None:
    """``parse`` is followed by ``desugar`` at both its other calls: the next line of a third
    caller likely takes that step too, which no line names yet; once one of two callers
    calls something else next, nothing is listed (two must agree)."""
    idx = build(tmp_path, PIPELINE)
    hits = find_definitions(idx, "run.c", PIPELINE["run.c"] + "    ")
    (card,) = [h.card for h in hits if h.card.name == "parse"]
    assert card.text.split("\n")[-2:] == [
        "// what its other calls are followed by:",
        "int desugar(int a);",
    ]
    assert card.listed == (("steps.c", 3),)
    other = {**PIPELINE, "two.c": PIPELINE["two.c"].replace("    desugar(a);\n", "")}
    idx = build(tmp_path / "other", other)
    hits = find_definitions(idx, "run.c", other["run.c"] + "    ")
    assert all("followed by" not in h.card.text for h in hits)


def test_c_receivers_under_pointers_in_definitions_and_prototypes(tmp_path: Path) -> None:
    """A C function's receiver (its first parameter's type, passed by pointer) is found
    whether its name sits under a function declarator that a pointer declarator holds (a
    definition or a prototype returning a pointer), or right under it; none for a value, a
    built-in type or a pointer to a function."""
    source = (
        "struct dev *dev_get(struct dev *d) { return d; }\n"
        "int dev_put(struct dev *d);\n"
        "char *dev_name(const struct dev *d);\n"
        "static int dev_count(struct bus *b) { return 0; }\n"
        "int dev_size(struct dev d);\n"
        "int dev_id(int *p);\n"
        "int (*dev_hook)(struct dev *d);\n"
        "void dev_none(void) {}\n"
    )
    idx = build(tmp_path, {"a.c": source})
    facts = {(b.symbol, b.module) for b in idx.tables.parsed["a.c"].imports if b.level == RECEIVER}
    assert facts == {
        ("dev_get", "dev"),
        ("dev_put", "dev"),
        ("dev_name", "dev"),
        ("dev_count", "bus"),
    }


SAX_FILES = {
    "lib/sax.hpp": (
        "namespace ns {\ntemplate<typename B>\nclass dom_parser {\n  public:\n"
        "    bool null() { return true; }\n    bool boolean(bool v) { return v; }\n};\n}\n"
    ),
    "lib/reader.hpp": (
        '#include "sax.hpp"\nnamespace ns {\n'
        "template<typename B, typename I, typename SAX = dom_parser<B>, typename P = B>\n"
        "class reader {\n    using sax_t = SAX;\n    using plain_t = P;\n  public:\n"
        "    void start(sax_t* s, I* in) {\n        sax = s;\n        this->src = in;\n    }\n"
        "    bool parse() {\n        return sax->boolean(true);\n    }\n"
        "    sax_t* sax = nullptr;\n    SAX* other = nullptr;\n    I ia;\n    plain_t p;\n};\n}\n"
    ),
}


def test_cpp_a_template_parameter_with_a_default_types_the_fields_it_types(
    tmp_path: Path,
) -> None:
    """A class template's parameter that defaults to a named type (``typename SAX =
    dom_parser<B>``) types the fields and aliases written with it, as the template is used
    unless told otherwise; a parameter without one, or defaulting to another parameter,
    types nothing (its members are not guessed)."""
    files = SAX_FILES
    idx = build(tmp_path, files)
    text = files["lib/reader.hpp"].split("        return sax")[0]
    defs = idx.resolver.defs["lib/sax.hpp"]
    names = ["sax.null", "other.boolean", "ia.get", "p.null"]
    found = resolve_names(idx, "lib/reader.hpp", text, names)
    assert found == [
        ("lib/sax.hpp", "ns.dom_parser.null", defs["ns.dom_parser.null"]),
        ("lib/sax.hpp", "ns.dom_parser.boolean", defs["ns.dom_parser.boolean"]),
        None,
        None,
    ]
    # the buffer cut above the fields (C++ declares them last): the parameter a method
    # assigns to one types it, as a rebuild of that buffer does
    for index in (idx, build(tmp_path / "cut", {**files, "lib/reader.hpp": text})):
        index.update_file("lib/reader.hpp", text)
        assert resolve_names(index, "lib/reader.hpp", text, ["sax.null", "src.get"]) == [
            ("lib/sax.hpp", "ns.dom_parser.null", defs["ns.dom_parser.null"]),
            None,
        ]
    # the default edited away: a rebuild and an update alike leave the receivers untyped
    edited = files["lib/reader.hpp"].replace(" = dom_parser<B>", "")
    (tmp_path / "r" / "lib/reader.hpp").write_text(edited)
    idx.update_file("lib/reader.hpp", edited)
    fresh = build(tmp_path / "again", {**files, "lib/reader.hpp": edited})
    cut = edited.split("        return sax")[0]
    for index in (idx, fresh):
        assert resolve_names(index, "lib/reader.hpp", cut, names[:2]) == [None, None]


def test_cpp_a_method_called_names_all_its_class_s_methods(tmp_path: Path) -> None:
    # ``h->start()`` called 30 lines up: the card of the nearest method the lines above call
    # on a class names all the class's methods, ``key`` which the code calls too (its own
    # card may be ranked out), not its constructor, destructor, operators or aliases
    files = {
        "handler.hpp": "#pragma once\nclass handler {\n  public:\n    using value_t = int;\n"
        "    handler() = default;\n    ~handler() = default;\n"
        "    handler& operator=(const handler&) = default;\n    bool start() { return true; }\n"
        "    bool key() { return true; }\n    bool end() { return true; }\n};\n",
        "use.cpp": '#include "handler.hpp"\n\nbool run(handler* h)\n{\n    h->key();\n'
        "    h->start();\n" + "    int x = 0;\n" * 30,
    }
    idx, _ = RepoIndex.build(write_files(tmp_path, files), save=False)
    hits = find_definitions(idx, "use.cpp", files["use.cpp"])
    (card,) = [h.card for h in hits if h.card.name == "handler.start"]
    assert card.text.split("\n")[-1] == "// other methods of handler: key, end"
    assert ("handler.hpp", 9) in card.listed  # end, the next line's
    # one method stands for its class
    assert not [h for h in hits if h.card.name == "handler.key" and "other methods" in h.card.text]

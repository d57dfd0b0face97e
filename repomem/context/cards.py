"""Definition cards: what a model needs to call a function or class correctly, in a few lines.

Signatures suffice where bodies do not fit (HCP, STALL+, R2C2): a card shows a function's
decorators and its ``def`` line(s) exactly as written (parameters, annotations, defaults, the
return annotation), the first paragraph of its docstring; a class its header, docstring
paragraph, constructor signature and public methods one line each (a skeleton: when a
class has more than ``MAX_METHODS``, the ones the repository calls most, listed in source
order); a module-level constant its assignment line. The brace-delimited languages get the
same from their own syntax (``_braced_card``): the declaration up to its body, the first
sentence of the doc comment above it, a type's fields and member signatures. Cards are cut
from the index's parse (statement spans) and the file's current lines, so no parsing happens
at query time and a card is as current as the index the editor keeps updated.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from repomem.context.lexer import code_only
from repomem.index import heads, skeletons
from repomem.index.heads import MAX_SIGNATURE_LINES
from repomem.index.parsing import Definition, ParsedFile

# At most this many methods in a class skeleton.
MAX_METHODS = 10
#: a Python class skeleton's method line (the constructor's aside) is cut to this many
#: characters at a parameter: the skeleton says what the class offers, a method's own card
#: its whole signature, and a long line of each of ten methods would fill the prompt's card
#: budget with one class (rich's Console: 756 tokens of 819, 479 cut)
SKELETON_WIDTH = 76

_CONSTANT = re.compile(r"^([A-Za-z_]\w*)\s*(?::[^=]*)?=(?!=)")
_SPACES = re.compile(r"\s+")
_NOT_HEADER = ("@", "//", "/*", "#[")
_IMPL = re.compile(r"(?:unsafe\s+)?impl\b")
# a Go interface's declaration line (grouped: without ``type``), which its methods' cards
# show above them
_GO_INTERFACE = re.compile(r"(?:type\s+)?(\w+(?:\[.*\])?\s+interface)\s*\{")
# the lines a method's card shows above it: a Rust ``impl``'s, a Go interface's
_OWNER = re.compile(_IMPL.pattern + r"|type\s+\w+(?:\[.*\])?\s+interface\s*\{$")


#: the ``kind`` of a card listing declarations alone (``listing``)
LISTING = "listing"


@dataclass(frozen=True)
class Card:
    """A definition as the prompt shows it: ``path`` and 0-based ``line`` of its ``def`` or
    ``class`` line (or assignment), its qualified ``name``, its ``kind`` (function, class,
    constant, or ``LISTING``: declarations alone, ``listing``), the card's ``text`` and the
    0-based ``def`` lines of the methods a class skeleton lists (their signatures are shown
    too) and of the members it names besides (``MORE_NAMED``: whole or ``briefed``, the card
    names them). ``brief`` is the card cut to what a call needs (Python: a function's
    signature on one line, a class's header and constructor, a constant's first line; empty
    where there is no shorter form): the prompt shows it when the whole card does not fit.
    ``listed``: (path, 0-based line) of the definitions of any file whose declarations the
    text lists besides (a C type's functions, ``with_functions``)."""

    path: str
    line: int
    name: str
    kind: str
    text: str
    methods: tuple[int, ...] = ()
    brief: str = ""
    listed: tuple[tuple[str, int], ...] = ()

    def briefed(self) -> Card:
        """This card showing its ``brief`` (a class's skeleton methods and the members it
        names besides, named, not shown: the same ``methods``)."""
        return replace(self, text=self.brief, brief="")

    @property
    def key(self) -> tuple[str, int, str]:
        """The definition this card shows, whether whole or ``briefed``: what a prompt's cards
        are matched by against the cards it was given."""
        return self.path, self.line, self.name

    @property
    def header(self) -> str:
        """The ``def``/``class``/declaration/assignment line, stripped (decorators,
        annotations and a doc comment skipped): what marks this definition in any text that
        shows it (a Rust method's, not its ``impl`` line; a Go interface method's, not its
        interface's)."""
        lines = [line.strip() for line in self.text.splitlines()]
        above = _OWNER if self.kind == "function" else _IMPL
        return next((s for s in lines if not s.startswith(_NOT_HEADER) and not above.match(s)), "")


def definition_card(
    path: str,
    pf: ParsedFile,
    lines: Sequence[str],
    definition: Definition,
    calls: Callable[[], np.ndarray] | None = None,
) -> Card:
    """The card of one of ``pf``'s definitions (``lines``: the file's current lines;
    ``calls``: how often the repository calls each of the file's nodes, by node, which
    picks a large class's skeleton methods: asked only where a skeleton must choose, so
    that a caller knows whether the card depends on the repository's calls)."""
    if pf.language != "python":
        return _braced_card(path, pf, lines, definition, calls or _no_calls)
    # each header is read once, for the card's text and its brief form alike
    header, shown = _head(pf, lines, definition.node)
    if definition.is_class:
        public = skeletons.public_methods(pf, definition.node)  # as the parse found them
        methods = skeleton_methods(public, calls or _no_calls)
        starts, headers = heads.headers(pf, lines, [m.node for m in methods])
        text = _class_text(shown, methods, len(public) - len(methods), headers)
        brief = _class_brief(header, methods, headers)
        line = _def_line(pf, definition)
        return Card(
            path, line, definition.name, "class", text, tuple(starts), _shorter(brief, text)
        )
    text = _dedent(shown)
    one = _one_line(header)
    return Card(
        path, _def_line(pf, definition), definition.name, "function", text, (), _shorter(one, text)
    )


def constant_card(
    path: str,
    pf: ParsedFile,
    lines: Sequence[str],
    name: str,
    rows: Iterable[int] | None = None,
) -> Card | None:
    """The assignment line of a module-level ``name``, if the file has one: the first
    statement at the top of the file whose line assigns it. ``rows``: the rows whose line
    begins with ``name`` (those a top-level statement starts on at least), ascending, where
    the caller knows them (``RepoIndex.rows_beginning`` finds them from the statements' first
    bytes in the file's UTF-8: the first line of each of a module's statements, decoded to
    find one constant, took ~0.1 ms of a first card); else every row is tried."""
    node = _constant_node(pf, lines, name, range(len(lines)) if rows is None else rows)
    if node is None:
        return None
    row = int(pf.node_start[node])
    end = min(int(pf.node_end[node]), row + MAX_SIGNATURE_LINES - 1)
    text = "\n".join(lines[row : end + 1])
    return Card(path, row, name, "constant", text, (), _shorter(lines[row], text))


def _constant_node(
    pf: ParsedFile, lines: Sequence[str], name: str, rows: Iterable[int]
) -> int | None:
    """The first top-level statement starting on one of ``rows`` (ascending) whose line
    assigns ``name`` (a parse's nodes are in source order: their starts ascend)."""
    for row in rows:
        if row >= len(lines):
            break
        match = _CONSTANT.match(lines[row])
        if match is None or match.group(1) != name:
            continue
        first, last = pf.node_start.searchsorted([row, row + 1]).tolist()
        top = (pf.node_parent[first:last] == -1).nonzero()[0]
        if top.size:
            return first + int(top[0])
    return None


def _def_line(pf: ParsedFile, definition: Definition) -> int:
    return int(pf.node_start[definition.node])


def _decorated_start(pf: ParsedFile, lines: Sequence[str], node: int) -> int:
    """Where a definition's decorators begin: its parent statement when that is the
    decorated definition wrapping it (same end, earlier start, an ``@`` line first)."""
    start = int(pf.node_start[node])
    parent = int(pf.node_parent[node])
    if parent < 0 or pf.node_end[parent] != pf.node_end[node]:
        return start
    first = int(pf.node_start[parent])
    return first if first < start and lines[first].lstrip().startswith("@") else start


def _head(pf: ParsedFile, lines: Sequence[str], node: int) -> tuple[list[str], list[str]]:
    """A Python definition's header and the rows its card shows above its body: its
    decorators, the header and its docstring's first paragraph (``heads.head``)."""
    return heads.head(pf, lines, _decorated_start(pf, lines, node), node)


def _no_calls() -> np.ndarray:
    """No calls known: every node's count 0 (``call_count``)."""
    return np.zeros(0, np.int64)


def call_count(counts: np.ndarray, node: int) -> int:
    """How many calls reach ``node`` by ``counts`` (calls by node; none past its end)."""
    return int(counts[node]) if node < counts.size else 0


def skeleton_methods(
    methods: list[Definition], calls: Callable[[], np.ndarray]
) -> list[Definition]:
    """The ``methods`` a class's skeleton lists, in source order: all of them up to
    ``MAX_METHODS``; beyond, the constructor and the ones called most (the next line more
    likely calls a popular method than the tenth in source order), ties in source order."""
    if len(methods) <= MAX_METHODS:
        return methods
    counts = calls()
    ranks = [-call_count(counts, m.node) for m in methods]
    order = sorted(
        range(len(methods)), key=lambda i: (not methods[i].name.endswith(".__init__"), ranks[i])
    )
    return [methods[i] for i in sorted(order[:MAX_METHODS])]


def _class_text(
    head: list[str], methods: list[Definition], more: int, headers: list[list[str]]
) -> str:
    """A class's ``head`` (``_head``'s shown lines) then a line per method of ``methods``
    (``headers``: theirs, in order)."""
    text = list(head)
    for method, sig in zip(methods, headers, strict=True):
        if not sig:
            continue
        first = sig[0]
        indent = first[: len(first) - len(first.lstrip())]
        one = _SPACES.sub(" ", _joined(sig))
        if not method.name.endswith(".__init__"):
            one = _shortened(one, SKELETON_WIDTH)
        text.append(indent + one + " ...")
    if more > 0:
        text.append(f"    # ... {more} more methods")
    return _dedent(text)


def _class_brief(head: list[str], methods: list[Definition], headers: list[list[str]]) -> str:
    """A class's header (``head``), its constructor's signature cut to ``SKELETON_WIDTH`` and
    its skeleton's other methods (``headers``: theirs, in order) by name: what it offers in
    three lines."""
    text = [_one_line(head)]
    names = []
    for method, sig in zip(methods, headers, strict=True):
        bare = method.name.rsplit(".", 1)[-1]
        if bare == "__init__":
            text.append("    " + _shortened(_one_line(sig), SKELETON_WIDTH) + " ...")
        else:
            names.append(bare)
    if names:
        text.append("    # methods: " + ", ".join(names))
    return "\n".join(text)


def _shorter(brief: str, text: str) -> str:
    """``brief`` where it is shorter than the card's ``text`` (else no brief form)."""
    return brief if len(brief) < len(text) else ""


def _shortened(signature: str, width: int) -> str:
    """A one-line ``def`` cut after the last parameter that ends within ``width``
    characters (``def f(self, a: int, ...):``), or whole when it fits."""
    if len(signature) <= width:
        return signature
    depth, cut = 0, -1
    for i, char in enumerate(signature[: width - 5]):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 1:
            cut = i
    return signature[:cut] + ", ...):" if cut > 0 else signature


def _dedent(lines: list[str]) -> str:
    """``lines`` less the indentation their non-blank lines share, joined."""
    cut = min((len(line) - len(rest) for line in lines if (rest := line.lstrip())), default=0)
    return "\n".join([line[cut:] for line in lines] if cut else lines)


# ----------------------------------------------------------------- brace-delimited languages
#: at most this many fields in a type's skeleton (methods go by ``MAX_METHODS``)
MAX_FIELDS = 10
#: how far above a declaration its doc comment may begin, in lines
MAX_DOC_SCAN = 80
# the rows of a definition read for its declaration (where its name is, then its signature);
# a type's skeleton reads them all
_HEAD_ROWS = 60 + 4 * MAX_SIGNATURE_LINES
# the names a constructor has besides its class's: TypeScript's, Rust's convention
_CONSTRUCTORS = frozenset({"constructor", "new"})
# the languages whose type cards have a brief form (``_type_brief``): the prompt shows more
# of the definitions ranked below a large class (measured on Java and Go, then on TypeScript,
# where a class of ten members' signatures crowded out the card of the method called next,
# then on Rust, where a struct's fields and methods crowded out the next line's enum or trait)
_BRIEFED = frozenset({"java", "go", "rust", "typescript", "tsx", "javascript"})
#: a type's brief form names at most this many members: the skeleton's, then those it leaves
#: out, as ranked (a name is a word; the member the next line calls is often not among the ten
#: a skeleton lists: ``NodeType.hasRequiredAttrs``, one of 28)
MAX_BRIEF_NAMES = 24
#: the languages whose type cards, whole as well as brief, name the members their skeleton
#: leaves out (the whole card of the best-ranked type listed its ten most called methods, not
#: the one the next line calls: ``node.restoreCanvas(`` on a Java ``VirtualView``)
MORE_NAMED = frozenset({"java", "go", "rust", "typescript", "tsx", "javascript"})
_ATTRIBUTE = ("#[", "@")
_DIRECTIVE = re.compile(r"^\s*#\s*[a-z]")  # a C preprocessor line (not Rust's ``#[``)
_DEFINE = re.compile(r"^\s*#\s*define\b")
# a declaration that opens a type: its body is a skeleton's
_TYPE_HEAD = re.compile(r"\b(?:class|interface|trait|enum|struct|union)\b")
_ANNOTATIONS = re.compile(r"^(?:(?:@[\w.]+(?:\([^()]*\))?|#\[[^\]]*\])\s*)+")
_ACCESS = re.compile(r"^(?:(?:public|protected|private)\s*:\s*)+")
_STRUCTURE = re.compile(r"[{}()\[\];,\n]")
_OPENING = re.compile(r"([(\[]) ")
_TRAILING = re.compile(r",? ([)\]])")
# angle brackets of generics, not arrows (``->``, ``=>``, Go's ``<-``) or comparisons
_OPENING_ANGLE = re.compile(r"<(?![-=])")
_CLOSING_ANGLE = re.compile(r"(?<![-=])>(?!=)")
_SENTENCE = re.compile(r"^(.*?[.!?])(?:\s|$)")
_DOC_TAG = re.compile(r"^[@\\][a-zA-Z]")
_DECORATION = re.compile(r"[*=\-/#~_+]{3,}")  # a banner's rules
_BRIEF = re.compile(r"^[@\\]brief\b\s*(.*)")
# languages whose members may end at a line's end (no ``;``)
_NEWLINE_ENDS = frozenset({"go", "javascript", "typescript", "tsx"})
_CONTINUED = tuple("=:|&,.(<+-*/?")  # a line ending so goes on on the next
# languages where a ``{`` in a type's place opens an object type, not a body
_TYPE_LITERALS = frozenset({"typescript", "tsx"})
_BEFORE_TYPE = frozenset(":|&<")  # what comes before a type: an annotation, a union, a generic


def _type_literal(language: str, last: str) -> bool:
    """Whether a ``{`` after the code character ``last`` opens an object type (TypeScript's
    ``): {[name: string]: T} {``, ``attrs: {a: A}``): a bracket, not a body."""
    return language in _TYPE_LITERALS and last in _BEFORE_TYPE


def _braced_card(
    path: str,
    pf: ParsedFile,
    lines: Sequence[str],
    definition: Definition,
    calls: Callable[[], np.ndarray],
) -> Card:
    """A card of the C family, Go, Rust, Java or JavaScript/TypeScript: the first sentence of
    the doc comment above the declaration, the declaration as written up to its body's ``{``
    (a method of a Rust ``impl`` under the ``impl`` line, of a Go interface in it, a
    ``#define`` whole), a type's skeleton below it (fields, then member signatures, the most
    called when there are many)."""
    node = definition.node
    start, end = int(pf.node_start[node]), int(pf.node_end[node])
    end = min(end, len(lines) - 1)
    code = code_only("\n".join(lines[start : min(end, start + _HEAD_ROWS) + 1]), pf.language)
    code = code.split("\n")
    bare = definition.name.rsplit(".", 1)[-1].rsplit("::", 1)[-1]
    decl = _declaration_start(code, bare)
    row = start + decl
    doc = _doc_comment(lines, row, pf.language)
    line = _def_line(pf, definition)
    if _DEFINE.match(code[decl]):
        last = min(len(code) - 1, decl + MAX_SIGNATURE_LINES - 1)
        while last > decl and not code[last].strip():
            last -= 1
        text = _dedent([*doc, *lines[row : start + last + 1]])
        return Card(path, line, definition.name, "macro", text)
    head, body = _braced_signature(lines[start : start + len(code)], code, decl, pf.language)
    attributes = _attributes(lines, row)
    is_type = _TYPE_HEAD.search(" ".join(code[decl : decl + len(head)])) is not None
    # a Rust tuple or unit struct (``struct YearFlags(u8);``, ``struct Local;``): its
    # methods, all of ``impl`` blocks, named under an ``impl`` line of its own, in the brief
    # form (whole, such small types' cards crowded out others: measured)
    bodiless = (
        is_type and body is None and pf.language == "rust" and bool(pf.members(definition.name))
    )
    if not is_type or (body is None and not bodiless):
        kind = "class" if definition.is_class or is_type else "function"
        impl = _impl_header(pf, lines, node) if pf.language in ("rust", "go") else ""
        text = _dedent([*doc, *attributes, *head])
        if impl:
            close = ["}"] if pf.language == "go" else []
            text = "\n".join([impl, *("    " + s for s in text.split("\n")), *close])
        return Card(path, line, definition.name, kind, text)
    if body is not None and end >= start + len(code):
        code = code_only("\n".join(lines[start : end + 1]), pf.language).split("\n")
    members = _members(code, body, pf.language) if body is not None else []
    shown, more, listed, unlisted = _skeleton(pf, lines, definition, start, members, calls())
    named = _more_named(definition, listed, unlisted) if pf.language in MORE_NAMED else []
    if more > 0:
        names = ", ".join(d.name.rsplit(".", 1)[-1] for d in named)
        shown.append(f"// ... {more} more members" + (f"; methods: {names}" if names else ""))
    indent = head[0][: len(head[0]) - len(head[0].lstrip())]
    if body is None:
        head.append(f"{indent}impl {bare}")
    head[-1] = head[-1].rstrip() + " {"
    text = _dedent([*doc, *attributes, *head, *(f"{indent}    {s}" for s in shown), f"{indent}}}"])
    brief = _type_brief(head, indent, definition, listed, named) if pf.language in _BRIEFED else ""
    methods = tuple(_def_line(pf, d) for d, _ in listed) + tuple(_def_line(pf, d) for d in named)
    if body is None:
        return Card(path, line, definition.name, "class", brief, methods)
    return Card(path, line, definition.name, "class", text, methods, _shorter(brief, text))


def _more_named(
    definition: Definition, listed: list[tuple[Definition, str]], unlisted: list[Definition]
) -> list[Definition]:
    """The members a type's card names besides its skeleton's: those it leaves out
    (``unlisted``, as ranked), one per name, up to ``MAX_BRIEF_NAMES`` names with the
    skeleton's other methods (its constructors aside)."""
    names = _method_names(definition, listed)
    added: list[Definition] = []
    for method in unlisted:
        if len(names) >= MAX_BRIEF_NAMES:
            break
        bare = method.name.rsplit(".", 1)[-1]
        if bare not in names:
            names.setdefault(bare)
            added.append(method)
    return added


def _constructs(method: Definition, own: str) -> bool:
    """Whether ``method`` is a constructor of the type named ``own`` (bare)."""
    bare = method.name.rsplit(".", 1)[-1]
    return bare == own or bare in _CONSTRUCTORS


def _method_names(definition: Definition, listed: list[tuple[Definition, str]]) -> dict[str, None]:
    """The bare names of the methods a type's skeleton lists, its constructors aside, once
    each in order: what its brief form names and what the names its card adds count with."""
    own = definition.name.rsplit(".", 1)[-1]
    names: dict[str, None] = {}
    for method, _ in listed:
        if not _constructs(method, own):
            names.setdefault(method.name.rsplit(".", 1)[-1])
    return names


def _type_brief(
    head: list[str],
    indent: str,
    definition: Definition,
    listed: list[tuple[Definition, str]],
    named: list[Definition],
) -> str:
    """A type's declaration, its constructors and its skeleton's other methods by name, then
    the members it names besides (``_more_named``): what it offers in a few lines, as a
    Python class's brief form; none for a type without methods, which would read as an empty
    one."""
    if not listed:
        return ""
    own = definition.name.rsplit(".", 1)[-1]
    text = [*head, *(f"{indent}    {s}" for m, s in listed if _constructs(m, own))]
    names = _method_names(definition, listed)
    names.update((d.name.rsplit(".", 1)[-1], None) for d in named)
    if names:
        text.append(f"{indent}    // methods: " + ", ".join(names))
    return _dedent([*text, f"{indent}}}"])


def function_line(pf: ParsedFile, lines: Sequence[str], definition: Definition) -> tuple[int, str]:
    """A function's declaration line and its declaration on one line, as a type's card lists
    it (``with_functions``); a macro's is its ``#define`` line."""
    row = _def_line(pf, definition)
    if lines[row].lstrip().startswith("#"):
        return row, lines[row].strip().removesuffix("\\").rstrip()
    return row, _method_line(pf, lines, definition)


def with_functions(
    card: Card,
    functions: list[tuple[str, int, str]],
    more: int,
    heading: str = "",
    names: bool = False,
) -> Card:
    """A C ``card`` followed by the declarations of ``functions`` ((path, line, declaration
    on one line), listed as given) under ``heading``, and how many ``more`` the cursor's file
    sees: a type's the functions taking one as their first parameter (its default heading),
    C's methods, which a skeleton lists as another language's type lists its own; they may
    be declared in other files than the type. With ``names``, the third item of each is its
    name, and the heading's line names them (its brief form too, which then names them as
    well): a TypeScript type's bases' members, many in little room."""
    if not functions:
        return card
    listed = (*card.listed, *((path, line) for path, line, _ in functions))
    if names:
        line = f"{heading} " + ", ".join(f[2] for f in functions)
        brief = f"{card.brief}\n{line}" if card.brief else ""
        return replace(card, text=f"{card.text}\n{line}", brief=brief, listed=listed)
    bare = card.name.rsplit(".", 1)[-1]
    heading = heading or f"// functions taking a {bare} first:"
    text = [card.text, heading, *(f[2] for f in functions)]
    if more > 0:
        text.append(f"// ... {more} more")
    return replace(card, text="\n".join(text), listed=listed)


def listing(functions: list[tuple[str, int, str]], heading: str) -> Card:
    """A card of declarations alone (``functions``: (path, line, declaration on one line),
    listed under ``heading``), shown by the first's place and named by none: no definition
    the code names, only what its next line may call, so it comes after every card and takes
    the room they leave (``kind`` ``listing``)."""
    path, line, _ = functions[0]
    text = "\n".join([heading, *(f[2] for f in functions)])
    return Card(path, line, "", LISTING, text, listed=tuple((p, n) for p, n, _ in functions))


def _attributes(lines: Sequence[str], row: int) -> list[str]:
    """The attribute or decorator lines right above ``row`` (Rust's ``#[derive(...)]``,
    TypeScript's ``@Input()``), which the parse keeps apart from the declaration."""
    top = row
    while top > 0 and lines[top - 1].lstrip().startswith(_ATTRIBUTE):
        top -= 1
    return lines[top:row]


def _names(text: str, bare: str) -> bool:
    """Whether ``text`` has ``bare`` as a whole name."""
    return re.search(rf"(?<![\w$]){re.escape(bare)}(?![\w$])", text) is not None


def _declaration_start(code: list[str], bare: str) -> int:
    """The row (within the node) where the declaration of ``bare`` begins: the first code
    line naming it, with the lines before it that continue it (a return type, annotations,
    attributes) but never a preprocessor line or a statement ended above (an include guard,
    a grouped declaration's earlier members)."""
    row = next((r for r, text in enumerate(code[:60]) if _names(text, bare)), 0)
    if code[row].lstrip().startswith("}"):
        return 0  # ``typedef struct {…} name;``: the name closes the declaration it names
    while row > 0:
        above = code[row - 1].strip()
        if not above or above.endswith((";", "{", "}")) or _DIRECTIVE.match(code[row - 1]):
            break
        row -= 1
    return row


def _braced_signature(
    lines: Sequence[str], code: list[str], start: int, language: str
) -> tuple[list[str], tuple[int, int] | None]:
    """The declaration's lines from ``start`` up to its body's ``{`` (left out), a closing
    ``;`` or (Go) the end of a line, brackets balanced, lines holding only a comment left out
    (a parameter's doc), and where the body's ``{`` is (row, column), if it has one."""
    depth = 0
    last = ""  # the code's last character that is not a blank
    types: list[bool] = []  # each open ``{``: whether it opens an object type
    kept: list[str] = []
    for row in range(start, min(len(code), start + 4 * MAX_SIGNATURE_LINES)):
        text = code[row]
        for col, char in enumerate(text):
            if char == "{":
                types.append(_type_literal(language, last))
            if char in "([" or (char == "{" and types[-1]):
                depth += 1
            elif char in ")]" or (char == "}" and types and types.pop()):
                depth -= 1
            elif depth <= 0 and char == "{":
                head = lines[row][:col].rstrip()
                return [*kept, *([head] if head.strip() else [])], (row, col)
            elif depth <= 0 and char == ";":
                return [*kept, lines[row][: col + 1]], None
            if not char.isspace():
                last = char
        if text.strip() or not lines[row].strip():
            kept.append(lines[row])
        if len(kept) >= MAX_SIGNATURE_LINES:
            break
        if language == "go" and depth <= 0 and not text.rstrip().endswith(_CONTINUED):
            break
    return kept, None


def _doc_comment(lines: Sequence[str], row: int, language: str) -> list[str]:
    """The first sentence of the doc comment right above ``row`` (JSDoc, Javadoc, Doxygen
    ``/** */`` or ``/*! */``, rustdoc or Doxygen ``///``, godoc's ``//`` block), as one
    comment line; none when a blank line or code comes between."""
    above = row - 1
    while above >= 0 and lines[above].lstrip().startswith(_ATTRIBUTE):
        above -= 1
    if above < 0:
        return []
    last = lines[above].strip()
    indent = lines[row][: len(lines[row]) - len(lines[row].lstrip())]
    if last.endswith("*/"):
        top = above
        while top > max(-1, above - MAX_DOC_SCAN) and "/*" not in lines[top]:
            top -= 1
        opener = lines[top].lstrip() if top >= 0 else ""
        if not opener.startswith(("/**", "/*!")) or opener.startswith("/**/"):
            return []
        body = [re.sub(r"^\s*(?:/\*[*!]?|\*(?!/))?", "", s) for s in lines[top : above + 1]]
        body[-1] = body[-1].rsplit("*/", 1)[0]
        sentence = _first_sentence(body)
        return [f"{indent}/** {sentence} */"] if sentence else []
    marker = "///" if last.startswith("///") else "//" if language == "go" else ""
    if not marker or not last.startswith(marker):
        return []
    top = above
    while top > 0 and lines[top - 1].strip().startswith(marker) and above - top < MAX_DOC_SCAN:
        top -= 1
    sentence = _first_sentence([s.strip()[len(marker) :] for s in lines[top : above + 1]])
    return [f"{indent}{marker} {sentence}"] if sentence else []


def _first_sentence(body: list[str]) -> str:
    """The first sentence of a comment's text lines (markers gone): its first paragraph (or
    Doxygen's ``@brief``) up to a tag line (``@param``, ``@deprecated``), cut after the first
    full stop."""
    words: list[str] = []
    for text in body:
        text = _DECORATION.sub("", text).strip()
        if not any(c.isalnum() for c in text):
            text = ""
        if not text:
            if words:
                break
            continue
        if _DOC_TAG.match(text):
            brief = _BRIEF.match(text)
            if words or brief is None:
                break  # the description comes before the tags
            text = brief.group(1)
            if not text:
                continue
        words.append(text)
    joined = _SPACES.sub(" ", " ".join(words)).strip()
    match = _SENTENCE.match(joined)
    sentence = match.group(1) if match else joined
    return sentence if len(sentence) <= 240 else sentence[:237].rstrip() + "..."


def _impl_header(pf: ParsedFile, lines: Sequence[str], node: int) -> str:
    """The header, on one line, of the block a method is in (its parent statement): a Rust
    ``impl``'s, a Go interface's (``type I interface {``), or ""."""
    parent = int(pf.node_parent[node])
    if parent < 0:
        return ""
    row = int(pf.node_start[parent])
    if pf.language == "go":
        interface = _GO_INTERFACE.match(lines[row].lstrip())
        return "" if interface is None else f"type {interface[1]} {{"
    if not _IMPL.match(lines[row].lstrip()):
        return ""
    end = min(int(pf.node_end[parent]), row + MAX_SIGNATURE_LINES - 1, len(lines) - 1)
    code = code_only("\n".join(lines[row : end + 1]), pf.language).split("\n")
    head, body = _braced_signature(lines[row : end + 1], code, 0, pf.language)
    return _one_line(head) + " {" if body else ""


def _members(code: list[str], body: tuple[int, int], language: str) -> list[tuple[int, str]]:
    """The members declared directly in a type's body (from its ``{`` at ``body``): each
    one's row and its declaration on one line, bodies left out (``;`` after a method)."""
    text = "\n".join(code)
    offsets = [0]
    for line in code:
        offsets.append(offsets[-1] + len(line) + 1)
    begin = offsets[body[0]] + body[1] + 1
    out: list[tuple[int, str]] = []
    braces = brackets = 0
    types: list[bool] = []  # each open ``{``: whether it opens an object type (a bracket)
    member = begin

    def emit(stop: int, end: str) -> None:
        piece = text[member:stop]
        stripped = piece.strip()
        if stripped:
            row = bisect.bisect_right(offsets, member + len(piece) - len(piece.lstrip())) - 1
            out.append((row, _one_line([stripped]) + end))

    for m in _STRUCTURE.finditer(text, begin):
        char, pos = m.group(), m.start()
        if char in "([":
            brackets += 1
        elif char in ")]":
            brackets -= 1
        elif char == "{":
            before = text[member:pos].rstrip()
            types.append(braces == 0 and _type_literal(language, before[-1:]))
            if types[-1]:
                brackets += 1
                continue
            if braces == 0 and brackets <= 0:
                emit(pos, ";")
            braces += 1
        elif char == "}" and types and types.pop():
            brackets -= 1
        elif char == "}":
            braces -= 1
            if braces < 0:
                emit(pos, "")
                break
            if braces == 0 and brackets <= 0:
                member = pos + 1
        elif braces == 0 and brackets <= 0:
            piece = text[member:pos]
            angles = len(_OPENING_ANGLE.findall(piece)) - len(_CLOSING_ANGLE.findall(piece))
            if char == ";" or (char == "," and angles <= 0):
                emit(pos, char)
                member = pos + 1
            elif (
                char == "\n"
                and language in _NEWLINE_ENDS
                and angles <= 0
                and piece.strip()
                and not piece.rstrip().endswith(_CONTINUED)
            ):
                emit(pos, "")
                member = pos + 1
    return out


def _skeleton(
    pf: ParsedFile,
    lines: Sequence[str],
    definition: Definition,
    start: int,
    members: list[tuple[int, str]],
    calls: np.ndarray,
) -> tuple[list[str], int, list[tuple[Definition, str]], list[Definition]]:
    """A type's skeleton lines, how many members it leaves out, the methods it lists with
    their signatures and the methods it leaves out, as ranked: its fields
    (``MAX_FIELDS`` at most), its methods (all up to ``MAX_METHODS``, else the constructor
    and the most called), both in source order, then the methods declared outside its body
    under a qualified name (a Go receiver's, a Rust ``impl``'s)."""
    by_row: dict[int, list[Definition]] = {}
    for d in pf.definitions:
        if d.node != definition.node:
            by_row.setdefault(_def_line(pf, d), []).append(d)
    fields: list[tuple[int, str]] = []
    inside: list[tuple[Definition, str]] = []
    end = int(pf.node_end[definition.node])
    # a member led by attributes (``#[inline]``: Rust's are no part of a method's node)
    # starts on their row, its definition on a row below, before the next member's
    rows = [start + row for row, _ in members]
    for k, (row, text) in enumerate(members):
        led = _ANNOTATIONS.match(text) is not None
        stop = (rows[k + 1] if k + 1 < len(rows) else end) if led else start + row + 1
        text = _ACCESS.sub("", _ANNOTATIONS.sub("", text)).strip()
        if not text or text.startswith(("private ", "#")) or text in (";", ","):
            continue
        method = None
        for at in range(start + row, max(stop, start + row + 1)):
            named = by_row.get(at, [])
            method = next((d for d in named if _names(text, d.name.rsplit(".", 1)[-1])), None)
            if method is not None:
                named.remove(method)
                break
        if method is not None:
            inside.append((method, text))
        else:
            fields.append((start + row, text))
    listed = {m.node for m, _ in inside}
    first = len(definition.name) + 1
    outside = [
        (d, _method_line(pf, lines, d))
        for d in pf.members(definition.name)
        if "." not in d.name[first:]
        and d.node not in listed
        and not start <= _def_line(pf, d) <= end
    ]
    every = inside + outside
    ranked = _ranked(definition, [d for d, _ in every], calls)
    chosen = {d.node for d in ranked[:MAX_METHODS]}
    shown_fields = fields[:MAX_FIELDS]
    text = [t for _, t in shown_fields] + [t for d, t in every if d.node in chosen]
    more = len(fields) - len(shown_fields) + len(every) - len(chosen)
    listed = [(d, t) for d, t in every if d.node in chosen]
    return text, more, listed, ranked[MAX_METHODS:]


def _ranked(
    definition: Definition, methods: list[Definition], calls: np.ndarray
) -> list[Definition]:
    """``methods`` constructors first, then by how often the repository calls them."""
    own = definition.name.rsplit(".", 1)[-1]
    return sorted(methods, key=lambda d: (not _constructs(d, own), -call_count(calls, d.node)))


def _method_line(pf: ParsedFile, lines: Sequence[str], definition: Definition) -> str:
    """A method's declaration on one line (``;`` for its body)."""
    start, end = int(pf.node_start[definition.node]), int(pf.node_end[definition.node])
    end = min(end, start + MAX_SIGNATURE_LINES - 1, len(lines) - 1)
    code = code_only("\n".join(lines[start : end + 1]), pf.language).split("\n")
    decl = _declaration_start(code, definition.name.rsplit(".", 1)[-1])
    one = _one_line(_braced_signature(lines[start : end + 1], code, decl, pf.language)[0])
    return one if one.endswith(";") else one + ";"


def _joined(text: list[str]) -> str:
    """Lines stripped and joined by a blank (one line, stripped: no generator for it)."""
    return text[0].strip() if len(text) == 1 else " ".join(s.strip() for s in text)


def _one_line(text: list[str]) -> str:
    """Lines of a declaration joined on one line, spaces inside brackets dropped."""
    one = _SPACES.sub(" ", _joined(text)).strip()
    # each pattern's space tested first: most signatures have none (half the time)
    if "( " in one or "[ " in one:
        one = _OPENING.sub(r"\1", one)
    return _TRAILING.sub(r"\1", one) if " )" in one or " ]" in one else one

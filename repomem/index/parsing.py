"""One source file -> its statement-level syntax nodes, definitions, call sites and imports.

Everything is gathered with tree-sitter queries (matched in C), never by walking every syntax
node in Python: that is what keeps indexing a large repository within a few times the bare
parse time.
"""

from __future__ import annotations

import bisect
import re
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from functools import cache
from operator import attrgetter
from typing import overload

import numpy as np
from tree_sitter import Node, Point, Query, QueryCursor, Tree

from repomem.index import cmacros, langs, splice
from repomem.index.heads import node_heads
from repomem.index.jit import numba
from repomem.index.languages import grammar, parser
from repomem.index.parsed import STAR, CallSite, Definition, ImportBinding, ParsedFile
from repomem.index.queries import QUERIES, comment_kinds, file_query
from repomem.index.skeletons import class_methods


def split_lines(text: str) -> list[str]:
    """Lines as tree-sitter counts rows: split on ``\\n``; a final newline ends the last line."""
    lines = text.split("\n")
    if lines and lines[-1] == "" and len(lines) > 1:
        lines.pop()
    if "\r" not in text:  # most files: no copy (cards split whole files per request)
        return lines
    return [line.rstrip("\r") for line in lines]


class Lines(Sequence[str]):
    """A file's lines as ``split_lines`` gives them, decoded from its UTF-8 one line (or one
    slice) at a time: a card or a shown window reads a few lines of a file, and splitting the
    whole file made a string of every line of it (and kept them, for the collector to walk)."""

    def __init__(self, encoded: bytes | memoryview, newlines: np.ndarray | None = None) -> None:
        """``encoded``: the UTF-8, or a view of it where a saved index maps it (a line read
        touches its own pages, not a copy of the file's); ``newlines``: where it holds its
        newlines (``newline_positions``), as a saved index keeps them, sparing the scan of
        the whole file that a card's first read of it paid. Line ``i`` runs from the newline
        before it to its own (or the end): its bounds are read from them as it is read, not
        laid out for every line first."""
        self._data = encoded
        self._newlines = newline_positions(encoded) if newlines is None else newlines
        # read through a memoryview, whose items are Python ints, made faster than numpy
        # scalars (cards and type lookups read lines one by one)
        self._marks = memoryview(self._newlines)
        self._size, self._bytes = len(self._marks), len(encoded)
        # a final newline ends the last line: no line begins after it
        self._n = self._size + 1 - (self._size > 0 and self._marks[-1] == self._bytes - 1)

    def __len__(self) -> int:
        return self._n

    @property
    def nbytes(self) -> int:
        """What it holds of its own: where its newlines are, and the UTF-8 unless it is a
        view (of a mapped index's text, whose pages the process hands back)."""
        held = self._newlines.nbytes
        return held if isinstance(self._data, memoryview) else held + len(self._data)

    def row_at(self, offset: int) -> int:
        """The row holding the UTF-8's byte at ``offset`` (as many rows as newlines before
        it)."""
        return bisect.bisect_left(self._marks, offset)

    def _start(self, i: int) -> int:
        return self._marks[i - 1] + 1 if i else 0

    def _end(self, i: int) -> int:
        return self._marks[i] if i < self._size else self._bytes

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            first, last, step = i.indices(self._n)
            if step != 1:
                return [self[k] for k in range(first, last, step)]
            if first >= last:
                return []
            text = str(
                self._data[self._start(first) : self._end(last - 1)], "utf-8", "surrogatepass"
            )
            lines = text.split("\n")
            return [line.rstrip("\r") for line in lines] if "\r" in text else lines
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        start = self._marks[i - 1] + 1 if i else 0
        end = self._marks[i] if i < self._size else self._bytes
        # (a line without a ``\r`` at its end is returned as it is)
        return str(self._data[start:end], "utf-8", "surrogatepass").rstrip("\r")


def newline_positions(encoded: bytes | np.ndarray) -> np.ndarray:
    """Where a UTF-8 text (bytes or a uint8 array) holds ``\\n``, in order (int32: 4 bytes a
    line, as a cache of hundreds of files' lines holds them; a file is far under 2 GiB)."""
    newline = (np.frombuffer(encoded, np.uint8) == 10).view(np.uint8)
    return _positions(newline, int(np.count_nonzero(newline)))


@numba.njit(cache=True, nogil=True)
def _positions(mask: np.ndarray, count: int) -> np.ndarray:
    """Where ``mask`` (0 or 1 a byte, compared by numpy at SIMD speed) holds 1 (``count``
    times): what ``np.flatnonzero(mask)`` gives, in about a fifth of its time (numpy's
    ``nonzero`` takes ~1.5 ns a byte: 0.47 ms for a 300 kB test file, which a card's first
    read of it paid). Without a branch: each position is written, and kept by counting it
    (a branch on each byte mispredicted at every newline: twice this time)."""
    out = np.empty(count + 1, np.int32)
    n = 0
    for i in range(mask.size):
        out[n] = i
        n += mask[i]
        if n > count:  # (never past ``out``, whatever ``count`` says)
            break
    return out[:n]


_DOTTED = re.compile(rb"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_CONSTANTS = frozenset({"None", "True", "False"})


def _dotted(node: Node, source: bytes) -> tuple[str, ...] | None:
    """``a.b.c`` as ("a", "b", "c"); None when the chain contains anything but names."""
    raw = source[node.start_byte : node.end_byte]
    if _DOTTED.fullmatch(raw):  # the common case, without walking the chain node by node
        parts = tuple(raw.decode("ascii").split("."))
        if _CONSTANTS.isdisjoint(parts):
            return parts
    parts_rev: list[str] = []
    while node.type == "attribute":
        attr = node.child_by_field_name("attribute")
        obj = node.child_by_field_name("object")
        if attr is None or obj is None:
            return None
        parts_rev.append(_text(attr))
        node = obj
    if node.type != "identifier":
        return None
    parts_rev.append(_text(node))
    return tuple(reversed(parts_rev))


@numba.njit(cache=True)
def _nest(
    start_byte: np.ndarray, end_byte: np.ndarray, first: np.ndarray, last: np.ndarray, n_lines: int
) -> tuple[np.ndarray, np.ndarray]:
    """Parents and line owners of statement spans sorted by (start, -end): a node's parent is
    the nearest earlier span reaching at least as far; deeper nodes own their lines."""
    n = start_byte.size
    parents = np.full(n, -1, np.int32)
    owner = np.full(n_lines, -1, np.int32)
    stack = np.empty(n, np.int64)
    depth = 0
    for i in range(n):
        while depth > 0 and end_byte[stack[depth - 1]] < end_byte[i]:
            depth -= 1
        if depth > 0:
            parents[i] = stack[depth - 1]
        stack[depth] = i
        depth += 1
        for line in range(max(first[i], 0), min(last[i] + 1, n_lines)):
            owner[line] = i
    return parents, owner


class _Statements:
    """Statement spans of one file in pre-order, and the lookup of the statement a node
    belongs to: the statement with exactly its span, else the line owner of its first row."""

    def __init__(
        self, spans: np.ndarray, newlines: np.ndarray, size: int, n_lines: int, language: str
    ):
        """``spans``: the nodes' ``_spans``; ``newlines``: where the source (of ``size``
        bytes) holds its newlines (``newline_positions``)."""
        self._newlines = newlines
        self._width = np.int64(size + 1)
        sb, eb, kind = spans.T
        keep = ~_comment_mask(language)[kind]
        sb, eb, kind = sb[keep], eb[keep], kind[keep]
        # one node per (span, kind), the first seen; ordered by start, longest first
        by_key = np.lexsort((np.arange(sb.size), kind, eb, sb))
        s, e, k = sb[by_key], eb[by_key], kind[by_key]
        fresh = np.ones(sb.size, np.bool_)
        fresh[1:] = (s[1:] != s[:-1]) | (e[1:] != e[:-1]) | (k[1:] != k[:-1])
        first_seen = by_key[fresh]
        order = first_seen[np.lexsort((first_seen, -eb[first_seen], sb[first_seen]))]
        self.start_byte, self.end_byte = sb[order], eb[order]
        self.first = self.row(self.start_byte)
        self.last = self.row(np.maximum(self.end_byte - 1, self.start_byte))
        self.parents, self.owner = _nest(
            self.start_byte, self.end_byte, self.first, self.last, n_lines
        )
        self._keys = self.start_byte * self._width + self.end_byte

    def row(self, byte: np.ndarray) -> np.ndarray:
        return np.searchsorted(self._newlines, byte).astype(np.int32)

    def of(self, nodes: list[Node]) -> list[int]:
        sb, eb, _ = _spans(nodes).T
        rows = self.row(sb)
        found = np.full(rows.size, -1, np.int64)
        inside = rows < self.owner.size
        found[inside] = self.owner[rows[inside]]
        if self._keys.size:
            keys = sb * self._width + eb
            pos = np.minimum(np.searchsorted(self._keys, keys), self._keys.size - 1)
            exact = self._keys[pos] == keys
            found[exact] = pos[exact]
        return found.tolist()


# the kind id of an ERROR node (tree-sitter's ``ts_builtin_sym_error``, a uint16 -1)
_ERROR = 65535


@cache
def _comment_mask(language: str) -> np.ndarray:
    """``comment_kinds`` as a flag per kind id: read by kind, not matched by ``np.isin``
    (which sorted them for every file: ~1% of a build's parsing workers); and ERROR, which
    a container's named children hold where the grammar gave up (what is inside one is
    matched apart: the statements ``QUERIES`` finds in it)."""
    mask = np.zeros(1 << 16, np.bool_)  # every symbol id
    mask[comment_kinds(language)] = True
    mask[_ERROR] = True
    return mask


# a node's start byte, end byte and kind id, read at once: each is a memory access to a node
# object and its subtree, and three passes over a file's nodes missed the cache thrice
_SPAN = attrgetter("start_byte", "end_byte", "kind_id")
_SPAN_ROW = np.dtype((np.int64, 3))


def _spans(nodes: Iterable[Node]) -> np.ndarray:
    """Each node's ``_SPAN`` as a row (int64, (nodes, 3))."""
    return _span_rows(list(map(_SPAN, nodes)))


def _span_rows(spans: list[tuple[int, int, int]]) -> np.ndarray:
    return np.fromiter(spans, _SPAN_ROW, len(spans)).reshape(-1, 3)


#: languages whose grammar misreads a generic call signature ``<T>(x: T): T`` that starts a
#: line after a type member without ``;``: it takes the ``<`` for a comparison and the rest
#: of the file is lost in an ERROR node (tree-sitter-typescript 0.23.2, the newest release)
_SIGNATURE_REPAIR = frozenset({"typescript", "tsx"})
_SIGNATURE_LINE = re.compile(rb"(?m)^[ \t]*[ \t](?=<)")


@cache
def _errors_query(language: str) -> Query:
    return Query(grammar(language), "(ERROR) @e")


def _error_spans(language: str, root: Node) -> list[tuple[int, int]]:
    return [
        (n.start_byte, n.end_byte)
        for n in QueryCursor(_errors_query(language)).captures(root).get("e", [])
    ]


# the tokens that open or close a bracket, or hide brackets (comments, strings, a C
# preprocessor line), in each language's code; and in a template literal, what ends its text
# (`` ` ``, ``${``).
_BRACKETS = rb"[{}()\[\]]"
_C_STRINGS = rb"'(?:\\.|[^'\\\n])*'?|\"(?:\\.|[^\"\\\n])*\"?"
_COMMENTS = rb"//[^\n]*|/\*.*?(?:\*/|\Z)"
_TS_TOKEN = re.compile(rb"|".join((_COMMENTS, _C_STRINGS, rb"`", _BRACKETS)), re.DOTALL)
_C_TOKEN = re.compile(
    rb"|".join((_COMMENTS, rb"(?m:^)[ \t]*#(?:\\\r?\n|[^\n])*", _C_STRINGS, _BRACKETS)),
    re.DOTALL,
)
_CPP_TOKEN = re.compile(
    rb"|".join(
        (
            _COMMENTS,
            rb"(?m:^)[ \t]*#(?:\\\r?\n|[^\n])*",
            rb"R\"([^()\\\s]{0,16})\(.*?\)\1\"",  # a raw string R"x(...)x"
            _C_STRINGS,
            _BRACKETS,
        )
    ),
    re.DOTALL,
)
_RUST_TOKEN = re.compile(
    rb"|".join(
        (
            _COMMENTS,
            rb"r(#*)\".*?\"\1",  # a raw string r#"..."#
            rb"\"(?:\\.|[^\"\\])*\"?",  # a string, over lines too
            rb"'(?:\\[^'\n]{1,10}|[^'\\\n])'",  # a char literal (a lifetime ``'a`` is none)
            _BRACKETS,
        )
    ),
    re.DOTALL,
)
#: the languages whose grammar loses the open definitions of a buffer cut at the cursor in a
#: syntax error (Java and Go keep theirs), and how their code is read for brackets
_CODE_TOKEN: dict[str, re.Pattern[bytes]] = {
    "typescript": _TS_TOKEN,
    "tsx": _TS_TOKEN,
    "c": _C_TOKEN,
    "cpp": _CPP_TOKEN,
    "rust": _RUST_TOKEN,
}
#: languages repaired only where the whole file is lost in the error (its root is one) and the
#: cursor is inside an inline module (``mod state { impl .. { fn .. {``), which loses every
#: definition of the file: Rust's grammar loses the struct and the ``impl`` around a method at
#: the cursor too, but repairing those lost toml_edit's and serde_json's tasks (the repaired
#: ``impl``'s type and the file's calls then ranked ahead of the next line's definitions)
_WHOLE_ONLY = frozenset({"rust"})
_TEMPLATE_TOKEN = re.compile(rb"\\.|`|\$\{", re.DOTALL)
_CLOSER = {ord("{"): b"}", ord("("): b")", ord("["): b"]", ord("`"): b"`"}


def _closers(language: str, source: bytes) -> bytes:
    """What closes the brackets (and template literals) still open where ``source`` ends, the
    innermost first; empty where none is, or where it ends inside a comment, a string or a
    preprocessor line."""
    code_token = _CODE_TOKEN[language]
    stack: list[int] = []  # the opening bytes; ``$`` for a template's ``${``
    at = 0
    while at < len(source):
        if stack and stack[-1] == ord("`"):
            m = _TEMPLATE_TOKEN.search(source, at)
            if m is None:
                break
            token = m.group()
            if token == b"`":
                stack.pop()
            elif token == b"${":
                stack.append(ord("$"))
            at = m.end()
            continue
        m = code_token.search(source, at)
        if m is None:
            break
        token, at = m.group(), m.end()
        if token[0] in b"{([`":
            stack.append(token[0])
        elif token[0] in b"})]":
            if stack and stack[-1] == ord("$") and token == b"}":
                stack.pop()  # back in the template's text
            elif stack and stack[-1] in (ord("{"), ord("("), ord("[")):
                stack.pop()
        elif token.startswith(b"//") or token.lstrip(b" \t").startswith(b"#"):
            if at >= len(source):
                return b""  # closers written here would be commented out, or in a directive
        elif token.startswith(b"/*"):
            if len(token) < 4 or not token.endswith(b"*/"):
                return b""
        elif token[0] in b"'\"" and (len(token) < 2 or token[-1] != token[0]):
            return b""  # a string left open: where the code is, is not known
    return b"".join(b"}" if c == ord("$") else _CLOSER[c] for c in reversed(stack))


def parse_tree(language: str, source: bytes, old_tree: Tree | None = None) -> tuple[bytes, Tree]:
    """``source`` parsed, and the bytes the tree was parsed from. In TypeScript, a line
    inside a syntax error that starts with a generic call signature's ``<`` gets a ``;`` for
    the blank before it (the member separator the grammar wants there; offsets and rows stay
    those of the file), kept when the file then parses with fewer errors. A TypeScript, C or
    C++ file whose syntax error runs to its end, and that ends with brackets open (the buffer
    of a file being written, cut at the cursor), gets their closers on its last line (its rows
    stay the file's), kept when it then parses clean or its errors cover fewer of its bytes:
    the grammar would lose an unclosed class or function in an error, and with it every
    definition around the cursor. An error
    inside the file (a line being typed) costs no second parse."""
    tree = parser(language).parse(source, old_tree) if old_tree else parser(language).parse(source)
    if language not in _CODE_TOKEN or not tree.root_node.has_error:
        return source, tree
    if language in _WHOLE_ONLY and not tree.root_node.is_error:
        return source, tree
    if language in _SIGNATURE_REPAIR:
        errors = _error_spans(language, tree.root_node)
        fixed = bytearray(source)
        for m in _SIGNATURE_LINE.finditer(source):
            if any(start <= m.end() < end for start, end in errors):
                fixed[m.end() - 1] = ord(";")
        if fixed != source:
            repaired = parser(language).parse(bytes(fixed))
            repaired_errors = _error_spans(language, repaired.root_node)
            if len(repaired_errors) < len(errors):
                source, tree = bytes(fixed), repaired
                if not tree.root_node.has_error:
                    return source, tree
    if not _error_at_end(tree.root_node, source):
        return source, tree  # an error inside the file (a line being typed), not at its end
    end = len(source) - 1 if source.endswith(b"\n") else len(source)
    closers = _closers(language, source[:end])
    if not closers:
        return source, tree
    closed = source[:end] + closers + source[end:]
    repaired = parser(language).parse(closed)
    if language in _WHOLE_ONLY and not _in_module(repaired.root_node, source, end):
        return source, tree
    if not repaired.root_node.has_error or _covered(
        _error_spans(language, repaired.root_node)
    ) < _covered(_error_spans(language, tree.root_node)):
        return closed, repaired
    return source, tree


def _in_module(root: Node, source: bytes, end: int) -> bool:
    """Whether the buffer's last token lies inside an inline module (Rust's ``mod x {``) of
    the repaired tree."""
    last = len(source[:end].rstrip()) - 1
    node = root.descendant_for_byte_range(last, last + 1) if last >= 0 else None
    while node is not None and node.type != "mod_item":
        node = node.parent
    return node is not None


def _error_at_end(root: Node, source: bytes) -> bool:
    """Whether the file's last token is inside a syntax error: found from that token up, so a
    file with an error elsewhere (a line being typed) costs no walk of its tree."""
    last = len(source.rstrip()) - 1
    node = root.descendant_for_byte_range(last, last + 1) if last >= 0 else None
    while node is not None and not node.is_error:
        node = node.parent
    return node is not None


def _covered(spans: list[tuple[int, int]]) -> int:
    """How many bytes the (possibly nested) spans cover."""
    covered, reach = 0, 0
    for start, stop in sorted(spans):
        covered += max(0, stop - max(start, reach))
        reach = max(reach, stop)
    return covered


class TreeCache:
    """The syntax trees of the files parsed last, so that tree-sitter reuses what an edit
    left unchanged: an editor sends the file being typed in again and again, and an edit's
    re-parse costs a fraction of one from scratch (docs/MEASUREMENTS.md, "Editing a file").
    Edits that ``repomem.index.splice`` handles skip it. A tree that comes out with a syntax
    error is parsed again from scratch: that is where incremental parsing is known to differ
    from a fresh parse at times, and an index must equal a rebuild. So a tree with a syntax
    error is not kept either: an edit's parse from it comes out with an error, unless the edit
    fixes it, and was thrown away for a parse from scratch (most of the Linux kernel's files
    hold one: each of their edits parsed twice, and the tree of the file typed in, ~0.6 MB
    for a long header, held between edits for nothing). The trees not used since the last
    pause are dropped there (``drop_unused``)."""

    def __init__(self, size: int = 4) -> None:
        self.size = size
        self._trees: OrderedDict[str, tuple[str, bytes, Tree]] = OrderedDict()
        self._used: set[str] = set()  # the files parsed since the last ``drop_unused``

    def parse(self, path: str, language: str, source: bytes) -> tuple[bytes, Tree]:
        """``parse_tree``'s bytes and tree, incrementally from the file's last tree."""
        cached = self._trees.pop(path, None)
        parsed = None
        if cached is not None and cached[0] == language:
            _, old_source, old_tree = cached
            old_tree.edit(*_edit(old_source, source))
            tree = parser(language).parse(source, old_tree)
            if not tree.root_node.has_error:
                parsed = source, tree
        if parsed is None:
            parsed = parse_tree(language, source)
        self._used.add(path)
        if parsed[1].root_node.has_error:
            return parsed
        self._trees[path] = (language, *parsed)
        while len(self._trees) > self.size:
            self._trees.popitem(last=False)
        return parsed

    def forget(self, path: str) -> None:
        self._trees.pop(path, None)

    def drop_unused(self) -> None:
        """Drop the trees of the files not parsed since the last call (at an editor's
        pause): the file being typed in keeps its tree, and the files left for others do
        not hold theirs (a large C file's tree holds ~0.4 MB) until the cache is full."""
        for path in [p for p in self._trees if p not in self._used]:
            del self._trees[path]
        self._used = set()


def _edit(old: bytes, new: bytes) -> tuple[int, int, int, Point, Point, Point]:
    """The one edit (start, old end, new end, as bytes and points) turning ``old`` into
    ``new``: everything between their common prefix and common suffix."""
    start, old_end, new_end = splice.common_ends(old, new)

    def point(text: bytes, byte: int) -> Point:
        return Point(text.count(b"\n", 0, byte), byte - (text.rfind(b"\n", 0, byte) + 1))

    return start, old_end, new_end, point(old, start), point(old, old_end), point(new, new_end)


def parse_source(
    path: str,
    language: str,
    text: str,
    digest: str,
    trees: TreeCache | None = None,
    previous: tuple[str, ParsedFile] | None = None,
    utf8: tuple[bytes, np.ndarray] | None = None,
) -> ParsedFile:
    """``previous``: the file's last text and parse, so that an edit re-parses only the
    top-level statements it touched (``repomem.index.splice``); ``trees``: the last trees, to
    parse an edited file incrementally where splicing does not apply. Splicing comes first:
    an incremental parse still queries the whole tree, a splice only what it re-parsed
    (docs/MEASUREMENTS.md, "Editing a file"). ``utf8``: ``text.encode("utf-8")`` and its
    ``newline_positions`` where the caller has them (a build cuts its windows from them)."""
    encoded, newlines = utf8 or utf8_lines(text)
    line_len = text_line_lengths(text, encoded, newlines)
    source = _parser_view(language, encoded)
    if previous is not None and language in splice.LANGUAGES and previous[1].language == language:
        old_text, old = previous
        old_source = _parser_view(language, old_text.encode("utf-8"))
        region = splice.region(old_source, old, source, line_len.size)
        if region is not None:
            part_source = splice.part_text(region, source)
            root = parser(language).parse(part_source).root_node
            if not root.has_error and not splice.runs_on(root, region):
                part_len = line_len[region.row : region.row + region.new_rows]
                if region.opening:  # the rows of the namespace's braces around it
                    part_len = np.concatenate([[0], part_len, [0]]).astype(np.int32)
                part = _extract(path, language, digest, part_len, part_source, root)
                joined = splice.join(old, region, part, part_source, line_len)
                if joined is not None:
                    if trees is not None:
                        trees.forget(path)  # its tree is of an older text now
                    return _with_heads(joined, text)
    source, tree = (
        trees.parse(path, language, source) if trees is not None else parse_tree(language, source)
    )
    # (where the grammar was shown the file's own bytes, their newlines are known)
    known = newlines if source is encoded else None
    return _with_heads(
        _extract(path, language, digest, line_len, source, tree.root_node, known), text
    )


def utf8_lines(text: str) -> tuple[bytes, np.ndarray]:
    """``text`` in UTF-8 (strict, as a parse reads it) and where it holds its newlines."""
    encoded = text.encode("utf-8")
    return encoded, newline_positions(encoded)


def _parser_view(language: str, source: bytes) -> bytes:
    """What the grammar is shown of a file: in C and C++, with the macros it would misread
    blanked (``cmacros``); elsewhere its family's ``Language.parser_view`` (Rust: items a
    macro wraps unwrapped)."""
    if language in ("c", "cpp"):
        return cmacros.parser_view(source, language == "cpp")
    return langs.for_language(language).parser_view(source) if language in langs.MODULES else source


def _with_heads(parsed: ParsedFile, text: str) -> ParsedFile:
    """A Python parse with its definitions' card rows (``node_head``) and its classes' public
    methods (``class_methods``), found from the whole file whether it was spliced or not: an
    update gives what a build gives."""
    if parsed.language == "python":
        parsed.node_head = node_heads(split_lines(text), parsed)
        parsed.class_methods = class_methods(parsed)
    return parsed


def _extract(
    path: str,
    language: str,
    digest: str,
    line_len: np.ndarray,
    source: bytes,
    root: Node,
    newlines: np.ndarray | None = None,
) -> ParsedFile:
    """``newlines``: ``newline_positions(source)`` where the caller has them."""
    stmts: list[tuple[int, int, int]] = []  # their ``_SPAN``s, read as they are matched
    defs: list[tuple[Node, Node]] = []
    calls: list[tuple[Node, Node]] = []
    imports: list[Node] = []
    for _, caps in QueryCursor(file_query(language)).matches(root):
        if "in" in caps:
            stmts.extend(map(_SPAN, caps["in"][0].named_children))
        elif "s" in caps:
            stmts.append(_SPAN(caps["s"][0]))
        elif "def" in caps:
            defs.append((caps["def"][0], caps["name"][0]))
        elif "call" in caps:
            calls.append((caps["call"][0], caps["name"][0]))
        elif "imp" in caps:
            imports.append(caps["imp"][0])

    if newlines is None:
        newlines = newline_positions(source)
    st = _Statements(_span_rows(stmts), newlines, len(source), line_len.size, language)
    parsed = ParsedFile(
        path, language, digest, line_len, st.first, st.last, st.parents, st.owner, root.has_error
    )
    parsed.error_rows = _error_rows(root, st) if root.has_error else splice.NO_ERRORS
    def_nodes = st.of([d for d, _ in defs])
    call_nodes = st.of([c for c, _ in calls])
    if language == "python":
        _python_symbols(parsed, source, defs, def_nodes, calls, call_nodes)
        for node, i in zip(imports, st.of(imports), strict=True):
            bindings = _import_bindings(node)
            parsed.imports.extend(bindings)
            parsed.import_nodes.extend([i] * len(bindings))
        return parsed
    langs.for_language(language).extract(parsed, source, root, defs, def_nodes, calls, call_nodes)
    return parsed


def _error_rows(root: Node, st: _Statements) -> np.ndarray:
    """Rows of the top-level nodes holding an error, as ``_Statements`` counts them; the whole
    file when the root is one, or when none is (tree-sitter flags a Python module at times
    for an error it keeps in no node)."""
    nodes = [] if root.is_error else [c for c in root.children if c.has_error]
    nodes = nodes or [root]
    sb, eb, _ = _spans(nodes).T
    return np.stack([st.row(sb), st.row(np.maximum(eb - 1, sb))], axis=1).astype(np.int32)


def _text(node: Node) -> str:
    return node.text.decode("utf-8", "replace")


def _python_symbols(
    parsed: ParsedFile,
    source: bytes,
    defs: list[tuple[Node, Node]],
    def_nodes: list[int],
    calls: list[tuple[Node, Node]],
    call_nodes: list[int],
) -> None:
    # qualified names and class spans via a containment stack over pre-ordered definitions
    stack: list[tuple[int, str]] = []  # (end_byte, qualname)
    class_spans: list[tuple[int, int, str]] = []
    order = sorted(range(len(defs)), key=lambda k: (defs[k][0].start_byte, -defs[k][0].end_byte))
    for k in order:
        d, name_node = defs[k]
        while stack and stack[-1][0] < d.end_byte:
            stack.pop()
        name = _text(name_node)
        qual = f"{stack[-1][1]}.{name}" if stack else name
        is_class = d.type == "class_definition"
        stack.append((d.end_byte, qual))
        i = def_nodes[k]
        if i >= 0:
            parsed.definitions.append(Definition(qual, i, is_class))
        if is_class:
            class_spans.append((d.start_byte, d.end_byte, qual))
            supers = d.child_by_field_name("superclasses")
            if supers is not None:
                parsed.bases[qual] = [
                    p for c in supers.named_children if (p := _dotted(c, source)) is not None
                ]

    starts = [start for start, _, _ in class_spans]
    enclosing: list[int] = []  # per class span: the class span around it, -1 = none
    for k, (_, end, _) in enumerate(class_spans):
        outer = k - 1
        while outer >= 0 and class_spans[outer][1] < end:
            outer = enclosing[outer]
        enclosing.append(outer)

    def scope_of(byte: int) -> str | None:
        # spans are pre-ordered and nested: the innermost one holding ``byte`` is the last
        # one starting before it, or one of those around that one
        k = bisect.bisect_right(starts, byte) - 1
        while k >= 0 and byte >= class_spans[k][1]:
            k = enclosing[k]
        return class_spans[k][2] if k >= 0 else None

    for (call, fn), i in zip(calls, call_nodes, strict=True):
        if i < 0:
            continue
        parts = _dotted(fn, source)
        if parts is not None:
            scope = scope_of(call.start_byte) if parts[0] in ("self", "cls") else None
            parsed.calls.append(CallSite(i, parts, scope))


def _import_bindings(node: Node) -> list[ImportBinding]:
    def text(n: Node | None) -> str:
        return n.text.decode("utf-8", "replace") if n is not None else ""

    out: list[ImportBinding] = []
    if node.type == "import_statement":
        for child in node.named_children:
            if child.type == "dotted_name":  # import a.b  -> binds "a" to module a
                full = text(child)
                out.append(ImportBinding(full.split(".")[0], full.split(".")[0], None, 0))
            elif child.type == "aliased_import":  # import a.b as m -> binds m to a.b
                out.append(
                    ImportBinding(
                        text(child.child_by_field_name("alias")),
                        text(child.child_by_field_name("name")),
                        None,
                        0,
                    )
                )
    elif node.type == "import_from_statement":
        mod = node.child_by_field_name("module_name")
        level, module = 0, text(mod)
        if mod is not None and mod.type == "relative_import":
            prefix = next((c for c in mod.children if c.type == "import_prefix"), None)
            level = len(text(prefix))
            module = text(next((c for c in mod.named_children if c.type == "dotted_name"), None))
        if any(c.type == "wildcard_import" for c in node.named_children):
            # ``from m import *`` binds every public name of ``m``: the resolver looks names
            # up there after the file's own
            out.append(ImportBinding(STAR, module, None, level))
        for child in node.children_by_field_name("name"):
            if child.type == "dotted_name":
                sym = text(child)
                out.append(ImportBinding(sym, module, sym, level))
            elif child.type == "aliased_import":
                sym = text(child.child_by_field_name("name"))
                out.append(
                    ImportBinding(text(child.child_by_field_name("alias")), module, sym, level)
                )
    return out


def warm_up(languages: set[str]) -> None:
    """Compile the queries and load the compiled kernel now, so that processes forked from
    this one inherit them instead of each paying for it (docs/MEASUREMENTS.md, "Editing a
    file")."""
    for language in languages:
        file_query(language)
        if language in langs.MODULES:
            langs.for_language(language).warm_up(language)
    empty = np.empty(0, np.int64)
    _nest(empty, empty, empty.astype(np.int32), empty.astype(np.int32), 0)
    text_line_lengths("", b"", newline_positions(b""))


def line_lengths(lines: Sequence[str]) -> np.ndarray:
    """Each line's length without its trailing whitespace (int32): ``ParsedFile.line_len``,
    0 for a blank line."""
    return np.fromiter(map(len, map(str.rstrip, lines)), dtype=np.int32, count=len(lines))


def text_line_lengths(text: str, encoded: bytes, newlines: np.ndarray) -> np.ndarray:
    """``line_lengths(split_lines(text))``, ``encoded`` being ``text`` in UTF-8 and
    ``newlines`` where it holds them (``newline_positions``): of ASCII text (most code), read
    from its bytes back from each line's end, without a string for each line (~2% of a
    build's parsing workers on the Linux kernel)."""
    if text.isascii():
        return _ascii_line_lengths(np.frombuffer(encoded, np.uint8), newlines)
    return line_lengths(split_lines(text))


# the ASCII characters ``str.rstrip`` strips
_BLANK = np.zeros(256, np.bool_)
_BLANK[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = True


@numba.njit(cache=True, nogil=True)
def _ascii_line_lengths(text: np.ndarray, newlines: np.ndarray) -> np.ndarray:
    """``line_lengths`` of an ASCII text's ``split_lines``: a line per newline, but for a
    final newline, which ends the last line."""
    count = newlines.size + 1
    if text.size and text[-1] == 10:
        count -= 1
    out = np.empty(count, np.int32)
    for k in range(count):
        start = newlines[k - 1] + 1 if k else 0
        end = newlines[k] if k < newlines.size else text.size
        while end > start and _BLANK[text[end - 1]]:
            end -= 1
        out[k] = end - start
    return out


def supported(language: str) -> bool:
    return language in QUERIES

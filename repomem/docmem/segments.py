"""Docs split along their structure: sections, paragraphs, lists, code blocks, directives.

Markdown and reStructuredText are parsed with their tree-sitter grammars, plain text by blank
lines, and Python module docstrings are found with the Python grammar. The doc comments of
declarations in JavaScript/TypeScript (JSDoc), Java (Javadoc), Rust (rustdoc ``///``) and Go
(godoc: the ``//`` lines right above a top-level declaration) are documentation too (rxjs
documents ``switchMap`` in its JSDoc and nowhere else): each becomes a segment under the name it
documents (:func:`segment_doc_comments`). MDX (Markdown with
ESM and JSX, as Docusaurus and Hugging Face docs are written) is read as Markdown once its
``import``/``export`` blocks and JSX tag lines are blanked (see :func:`mdx_as_markdown`).
Each structural block becomes a segment under the path of headings it sits in; a block longer
than ``max_words`` is cut between list items or at blank lines, and blocks shorter than
``min_words`` join their neighbour under the same heading, so that a one-line lead-in ("Click
in three points:") travels with the list it introduces. Two reStructuredText directives never
join: each documents its own object (``.. py:data:: SECRET_KEY``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from tree_sitter import Node

from repomem.docmem.text import words
from repomem.index.languages import parser
from repomem.index.parsing import split_lines

DOC_LANGUAGES = ("markdown", "mdx", "rst", "text")
#: code languages whose doc comments are read as documentation
DOC_COMMENT_LANGUAGES = ("javascript", "typescript", "tsx", "java", "rust", "go")
#: a doc comment shorter than this says too little to answer a question ("Returns the id.")
MIN_DOC_COMMENT_WORDS = 8
#: at most this many doc comments of one file: a generated file's thousand must not crowd out
#: the docs
MAX_DOC_COMMENTS = 64

# Markdown block node -> segment kind; other block types (HTML, link definitions, rules,
# front matter) carry no prose and are left out.
_MD_KINDS = {
    "paragraph": "paragraph",
    "list": "list",
    "fenced_code_block": "code",
    "indented_code_block": "code",
    "pipe_table": "table",
    "block_quote": "quote",
}
_RST_KINDS = {
    "paragraph": "paragraph",
    "line_block": "paragraph",
    "bullet_list": "list",
    "enumerated_list": "list",
    "definition_list": "list",
    "field_list": "list",
    "literal_block": "code",
    "doctest_block": "code",
    "block_quote": "quote",
    "directive": "directive",
}
CODE_DIRECTIVES = frozenset(
    {"code-block", "code", "sourcecode", "doctest", "testcode", "testoutput", "ipython"}
)
# Directives that lay out the documentation site rather than say anything.
_RST_SKIPPED_DIRECTIVES = frozenset(
    {
        "toctree",
        "image",
        "figure",
        "include",
        "raw",
        "meta",
        "contents",
        "highlight",
        "index",
        "rst-class",
        "tabularcolumns",
        "only",
        "literalinclude",
    }
)
_LIST_ITEMS = frozenset({"list_item", "definition_list_item", "field"})


@dataclass(frozen=True)
class Segment:
    """A piece of one document: 0-based lines ``[start, end)`` under ``headings``."""

    path: str
    kind: str
    start: int
    end: int
    headings: tuple[str, ...]
    text: str

    @property
    def words(self) -> int:
        return words(self.text)

    @property
    def heading(self) -> str:
        return " > ".join(self.headings)

    @property
    def label(self) -> str:
        return f"{self.path}:{self.start + 1}"

    @property
    def index_text(self) -> str:
        """What retrieval matches: the headings say what a bare code block is about."""
        return f"{self.heading}\n{self.text}" if self.headings else self.text


@dataclass(frozen=True)
class _Block:
    kind: str
    start: int
    end: int
    headings: tuple[str, ...]
    cuts: tuple[int, ...] = ()  # lines where the block may be split (list items)


def segment_document(
    path: str, language: str, text: str, *, min_words: int = 40, max_words: int = 200
) -> list[Segment]:
    """Segments of a Markdown, MDX, reStructuredText or plain-text document."""
    if language == "mdx":
        language, text = "markdown", mdx_as_markdown(text)
    lines = split_lines(text)
    if language == "markdown":
        blocks = _markdown_blocks(parser("markdown").parse(text.encode("utf-8")).root_node, lines)
    elif language == "rst":
        blocks = _rst_blocks(parser("rst").parse(text.encode("utf-8")).root_node, lines)
    else:
        blocks = _paragraph_blocks(lines, 0, len(lines), "text", ())
    return _segments(path, blocks, lines, min_words, max_words)


_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_ESM = re.compile(r"^(import|export)\b")
# A line that opens with a JSX tag (``<Tabs>``, ``</TabItem>``, ``<Note type="tip">``, a
# fragment ``<>``) or is a JSX expression such as a ``{/* comment */}``.
_JSX_START = re.compile(r"^\s*(<[A-Za-z/>]|\{.*\}\s*$)")
_JSX_TAG = re.compile(r"</?[A-Za-z][\w.:-]*(\s[^<>]*)?/?>|</?>")
_JSX_UNCLOSED = re.compile(r"<[A-Za-z][\w.:-]*(\s[^<>]*)?$")


def mdx_as_markdown(text: str) -> str:
    """MDX's Markdown, line for line: ESM blocks (``import``/``export`` at the start of a line,
    up to the next blank line, as MDX reads them) and lines that are only JSX tags or
    expressions become blank; a line with text between tags keeps the text. Blank lines, not
    removed ones, keep every line number pointing at the source; without them a tag line
    would start an HTML block that swallows the Markdown after it. Fenced code is untouched."""
    lines = text.split("\n")
    out: list[str] = []
    fence = ""
    esm = False
    open_tag = False  # inside a tag that spans lines (``<Tabs\n  groupId="x"\n>``)
    for line in lines:
        if fence:
            out.append(line)
            if line.strip().startswith(fence):
                fence = ""
            continue
        if esm or open_tag:
            esm = esm and bool(line.strip())
            open_tag = open_tag and not line.rstrip().endswith(">")
            out.append("")
            continue
        opening = _FENCE.match(line)
        if opening:
            fence = opening.group(1)
            out.append(line)
        elif _ESM.match(line):
            esm = True
            out.append("")
        elif _JSX_START.match(line):
            rest = _JSX_TAG.sub("", line).strip()
            open_tag = bool(_JSX_UNCLOSED.search(rest))
            out.append("" if open_tag or rest.startswith("{") else rest)
        else:
            out.append(line)
    return "\n".join(out)


def segment_docstring(
    path: str, module: str, text: str, *, min_words: int = 40, max_words: int = 200
) -> list[Segment]:
    """Segments of a Python module's docstring (none when it has no docstring)."""
    span = module_docstring_lines(text)
    if span is None:
        return []
    lines = split_lines(text)
    start, end = span
    body = list(lines)
    body[start] = _strip_opening_quotes(body[start])
    body[end - 1] = _strip_closing_quotes(body[end - 1])
    blocks = _paragraph_blocks(body, start, end, "docstring", (module,))
    return _segments(path, blocks, body, min_words, max_words)


# the name a declaration line introduces: after a declaring keyword, else a Java/TS member's
# name before its parameter list; a Go method's receiver is skipped
_DECLARED = re.compile(
    r"\b(?:function\*?|class|interface|type|enum|const|let|var|fn|struct|trait|mod|union|"
    r"record|namespace|macro_rules!|func(?:\s*\([^)]*\))?)\s+([A-Za-z_$][\w$]*)"
    r"|^\s*(?:[\w$<>\[\],.?]+\s+)*([A-Za-z_$][\w$]*)\s*[(<]"
)
_NOT_A_DECLARATION = re.compile(r"^\s*(?:import|package|use|return|if|for|while|#include)\b")
_ANNOTATION = re.compile(r"^\s*(?:@[\w.]+(?:\(.*\))?|#\[.*\]|#!\[.*\])\s*$")
_GO_DECLARATION = re.compile(r"^(?:func|type|var|const)\b")


def segment_doc_comments(
    path: str, language: str, text: str, *, min_words: int = 40, max_words: int = 200
) -> list[Segment]:
    """Segments of the doc comments of a code file's declarations, each under the name it
    documents; comments that document nothing (a licence header, a comment above an import)
    and short ones are left out."""
    lines = split_lines(text)
    body = list(lines)
    blocks: list[_Block] = []
    for start, end in _doc_comment_spans(lines, language):
        name = _documented_name(lines, end)
        if name is None:
            continue
        for row in range(start, end):
            body[row] = _strip_comment_marks(lines[row])
        if sum(words(line) for line in body[start:end]) < MIN_DOC_COMMENT_WORDS:
            continue
        blocks += _paragraph_blocks(body, start, end, "doc-comment", (name,))
        if len({b.headings for b in blocks}) >= MAX_DOC_COMMENTS:
            break
    return _segments(path, blocks, body, min_words, max_words)


def _doc_comment_spans(lines: list[str], language: str) -> list[tuple[int, int]]:
    """``[start, end)`` rows of each doc comment: ``/** ... */`` blocks, runs of ``///``
    lines (Rust), runs of ``//`` lines at the left margin right above a declaration (Go)."""
    spans = []
    row = 0
    while row < len(lines):
        stripped = lines[row].lstrip()
        if stripped.startswith("/**") and not stripped.startswith("/**/"):
            end = row
            while end < len(lines) and "*/" not in lines[end][lines[end].find("/**") + 3 :]:
                end += 1
                if end < len(lines) and "*/" in lines[end]:
                    break
            spans.append((row, min(end, len(lines) - 1) + 1))
            row = min(end, len(lines) - 1) + 1
            continue
        marker = "///" if language == "rust" else "//" if language == "go" else None
        if marker is not None and stripped.startswith(marker):
            end = row
            while end < len(lines) and lines[end].lstrip().startswith(marker):
                end += 1
            go_ok = language != "go" or (
                not lines[row][:1].isspace()
                and end < len(lines)
                and _GO_DECLARATION.match(lines[end]) is not None
            )
            if go_ok:
                spans.append((row, end))
            row = end
            continue
        row += 1
    return spans


def _documented_name(lines: list[str], end: int) -> str | None:
    """The name declared on the first code line after a comment ending before row ``end``
    (annotations and attributes skipped), or None when no declaration follows."""
    row = end
    while row < len(lines) and (not lines[row].strip() or _ANNOTATION.match(lines[row])):
        if not lines[row].strip() and row > end:
            return None  # a blank line after the annotations: the comment is loose
        row += 1
    if row >= len(lines) or _NOT_A_DECLARATION.match(lines[row]):
        return None
    found = _DECLARED.search(lines[row])
    if found is None:
        return None
    return found.group(1) or found.group(2)


def _strip_comment_marks(line: str) -> str:
    """A doc comment's line as prose: without ``/**``, ``*/``, a leading ``*`` or ``///``."""
    text = line.strip()
    for opener in ("/**", "///", "//!", "//"):
        if text.startswith(opener):
            text = text[len(opener) :]
            break
    if text.endswith("*/"):
        text = text[:-2]
    text = text.strip()
    if text.startswith("*"):
        text = text[1:].strip()
    return text


def module_docstring_lines(text: str) -> tuple[int, int] | None:
    """0-based ``[start, end)`` lines of a Python module's docstring, if it has one."""
    root = parser("python").parse(text.encode("utf-8")).root_node
    for child in root.named_children:
        if child.type == "comment":
            continue
        if child.type == "expression_statement" and child.named_child_count == 1:
            string = child.named_children[0]
            if string.type in ("string", "concatenated_string"):
                return string.start_point.row, _last_row(string) + 1
        return None
    return None


def _strip_opening_quotes(line: str) -> str:
    stripped = line.lstrip()
    prefix = 0
    while prefix < len(stripped) and stripped[prefix] in "rRbBuUfF":
        prefix += 1
    rest = stripped[prefix:]
    for quote in ('"""', "'''", '"', "'"):
        if rest.startswith(quote):
            return rest[len(quote) :]
    return line


def _strip_closing_quotes(line: str) -> str:
    stripped = line.rstrip()
    for quote in ('"""', "'''", '"', "'"):
        if stripped.endswith(quote):
            return stripped[: -len(quote)]
    return line


def _last_row(node: Node) -> int:
    row, col = node.end_point
    return row - 1 if col == 0 and row > node.start_point.row else row


def _span(node: Node, lines: list[str]) -> tuple[int, int]:
    """The node's lines without trailing blank ones."""
    start, end = node.start_point.row, _last_row(node) + 1
    end = min(end, len(lines))
    while end > start and not lines[end - 1].strip():
        end -= 1
    return start, end


def _node_text(node: Node) -> str:
    return node.text.decode("utf-8", "replace") if node.text is not None else ""


def _markdown_blocks(root: Node, lines: list[str]) -> list[_Block]:
    out: list[_Block] = []
    stack: list[tuple[int, str]] = []

    def visit(node: Node) -> None:
        for child in node.named_children:
            kind = child.type
            if kind == "section":
                visit(child)
            elif kind in ("atx_heading", "setext_heading"):
                level, title = _markdown_heading(child)
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, title))
            elif kind in _MD_KINDS:
                start, end = _span(child, lines)
                if end > start:
                    cuts = tuple(
                        c.start_point.row for c in child.named_children if c.type in _LIST_ITEMS
                    )
                    headings = tuple(t for _, t in stack)
                    out.append(_Block(_MD_KINDS[kind], start, end, headings, cuts))

    visit(root)
    return out


def _markdown_heading(node: Node) -> tuple[int, str]:
    level = 1
    title = ""
    for child in node.named_children:
        if child.type.startswith("atx_h") and child.type.endswith("_marker"):
            level = int(child.type[5])
        elif child.type == "setext_h2_underline":
            level = 2
        elif child.type in ("inline", "paragraph"):
            title = _node_text(child)
    return level, " ".join(title.split()).strip("# ")


def _rst_blocks(root: Node, lines: list[str]) -> list[_Block]:
    out: list[_Block] = []
    styles: list[tuple[str, bool]] = []  # adornment styles in order of first use = levels
    stack: list[tuple[int, str]] = []
    for child in root.named_children:
        kind = child.type
        if kind == "section":
            title_node = next((c for c in child.named_children if c.type == "title"), None)
            if title_node is None:
                continue
            style = _rst_style(child, title_node, lines)
            if style not in styles:
                styles.append(style)
            level = styles.index(style) + 1
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, " ".join(_node_text(title_node).split())))
            continue
        if kind not in _RST_KINDS:
            continue
        block_kind = _RST_KINDS[kind]
        if kind == "directive":
            name = next((_node_text(c) for c in child.named_children if c.type == "type"), "")
            if name in _RST_SKIPPED_DIRECTIVES:
                continue
            if name in CODE_DIRECTIVES:
                block_kind = "code"
        start, end = _span(child, lines)
        if end > start:
            cuts = tuple(c.start_point.row for c in child.named_children if c.type in _LIST_ITEMS)
            out.append(_Block(block_kind, start, end, tuple(t for _, t in stack), cuts))
    return out


def _rst_style(section: Node, title: Node, lines: list[str]) -> tuple[str, bool]:
    """A section's adornment: the underline character and whether it has an overline."""
    title_row = title.start_point.row
    below = lines[title_row + 1].strip() if title_row + 1 < len(lines) else ""
    char = below[:1] or "="
    has_over = title_row > section.start_point.row
    return char, has_over


def _paragraph_blocks(
    lines: list[str], start: int, end: int, kind: str, headings: tuple[str, ...]
) -> list[_Block]:
    out = []
    i = start
    while i < end:
        while i < end and not lines[i].strip():
            i += 1
        j = i
        while j < end and lines[j].strip():
            j += 1
        if j > i:
            out.append(_Block(kind, i, j, headings))
        i = j
    return out


def _split(block: _Block, lines: list[str], max_words: int) -> list[_Block]:
    """Cut a long block into pieces of at most about ``max_words``, preferring list items and
    blank lines as cut points."""
    cuts = set(block.cuts) | {i for i in range(block.start + 1, block.end) if not lines[i].strip()}
    pieces: list[tuple[int, int]] = []
    start, count = block.start, 0
    for i in range(block.start, block.end):
        n = words(lines[i])
        if count + n > max_words and i > start:
            cut = max((c for c in cuts if start < c <= i), default=i)
            pieces.append((start, cut))
            start = cut
            count = sum(words(line) for line in lines[cut:i])
        count += n
    pieces.append((start, block.end))
    out = []
    for s, e in pieces:
        while s < e and not lines[s].strip():
            s += 1
        while e > s and not lines[e - 1].strip():
            e -= 1
        if e > s:
            out.append(replace(block, start=s, end=e, cuts=()))
    return out


def _segments(
    path: str, blocks: list[_Block], lines: list[str], min_words: int, max_words: int
) -> list[Segment]:
    pieces = [piece for block in blocks for piece in _split(block, lines, max_words)]
    merged: list[_Block] = []
    sizes: list[int] = []
    directives: list[bool] = []  # whether the merged block holds a directive already
    for piece in pieces:
        size = sum(words(line) for line in lines[piece.start : piece.end])
        is_directive = piece.kind == "directive"
        if merged:
            prev = merged[-1]
            small = sizes[-1] < min_words or size < min_words
            if (
                small
                and prev.headings == piece.headings
                and sizes[-1] + size <= max_words
                and piece.start >= prev.end
                and not (is_directive and directives[-1])
            ):
                kind = prev.kind if prev.kind == piece.kind else "mixed"
                merged[-1] = replace(prev, kind=kind, end=piece.end)
                sizes[-1] += size
                directives[-1] = directives[-1] or is_directive
                continue
        merged.append(piece)
        sizes.append(size)
        directives.append(is_directive)
    return [
        Segment(path, b.kind, b.start, b.end, b.headings, "\n".join(lines[b.start : b.end]))
        for b in merged
    ]

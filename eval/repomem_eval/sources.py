"""The code files of a repository snapshot, parsed once for benchmark construction.

Line numbers must mean the same thing to the benchmark, to RepoEval (``str.splitlines``) and to
tree-sitter (rows end at ``\\n``). They disagree only on rare separators (a lone ``\\r``, form
feeds, U+2028, ...), so files holding one are left out instead of guessing.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from tree_sitter import Node, Tree

from repomem.errors import RepomemError
from repomem.index.languages import language_for_path, parser

# Files the index skips (IndexConfig.max_file_bytes) cannot hold tasks either.
MAX_FILE_BYTES = 1_000_000
_SKIPPED_DIRS = frozenset({"__pycache__", "node_modules"})
_AMBIGUOUS_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
# node types of each grammar that hold text, not code (Python's are handled with docstrings)
_STRING_TYPES = frozenset(
    {
        "string",
        "template_string",
        "string_literal",
        "raw_string_literal",
        "interpreted_string_literal",
        "char_literal",
        "text_block",
    }
)


class BenchmarkError(RepomemError):
    """A benchmark cannot be built from the given repository or settings."""


@dataclass(frozen=True)
class SourceFile:
    """One parsed code file: ``parts`` is its path inside the repository, ``language`` its
    tree-sitter language."""

    parts: tuple[str, ...]
    lines: list[str]
    tree: Tree
    language: str = "python"

    @property
    def root(self) -> Node:
        return self.tree.root_node

    def indent_bytes(self, row: int) -> int:
        """The byte column of the line's first non-blank character (tree-sitter columns)."""
        line = self.lines[row]
        return len(line[: len(line) - len(line.lstrip())].encode("utf-8"))

    def is_code_line(self, row: int) -> bool:
        """Whether the line starts with code: not blank, not a comment, not part of a docstring,
        and not the inside of a string that began on an earlier line."""
        return bool(self.lines[row].strip()) and self._text_rows.get(row, True)

    @cached_property
    def _text_rows(self) -> dict[int, bool]:
        """The rows whose first character lies in a comment or a string, each with whether it
        still starts code (a string's first row, not a docstring's). One walk of the tree per
        file: looking each row's node up from the root scans a node's children in order, so a
        table of thousands of rows in one initializer took quadratic time. A node is visited
        before its children, so the innermost comment or string covering a row decides it."""
        python = self.language == "python"
        rows: dict[int, bool] = {}
        cursor = self.root.walk()
        while True:
            node = cursor.node
            assert node is not None
            comment = "comment" in node.type
            if comment or (node.type == "string" if python else node.type in _STRING_TYPES):
                start, end = tuple(node.start_point), tuple(node.end_point)
                code = not comment and not (python and _is_docstring(node))
                for row in range(start[0], min(end[0] + 1, len(self.lines))):
                    if start <= (row, self.indent_bytes(row)) < end:
                        rows[row] = code and row == start[0]
            if cursor.goto_first_child():
                continue
            while not cursor.goto_next_sibling():
                if not cursor.goto_parent():
                    return rows


def _is_docstring(string: Node) -> bool:
    """A string that is a whole statement on its own documents rather than computes."""
    node = string.parent
    if node is not None and node.type == "concatenated_string":
        node = node.parent
    return node is not None and node.type == "expression_statement" and node.named_child_count == 1


def _read_lines(path: Path) -> tuple[str, list[str]] | None:
    try:
        data = path.read_bytes()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    text = text.replace("\r\n", "\n")
    if _AMBIGUOUS_BREAKS.search(text):
        return None
    return text, text.splitlines()


def load_python_files(repo_dir: Path) -> list[SourceFile]:
    """Every usable ``*.py`` file under ``repo_dir``, in path order (see
    :func:`load_source_files`)."""
    return load_source_files(repo_dir, frozenset({"python"}))


def load_source_files(repo_dir: Path, languages: frozenset[str]) -> list[SourceFile]:
    """Every usable file of ``languages`` (tree-sitter language names) under ``repo_dir``, in
    path order.

    Empty files stay (an empty ``__init__.py`` still makes a package). Hidden directories,
    ``__pycache__`` and ``node_modules`` are skipped; so are files that are not UTF-8, larger
    than the index accepts, or use ambiguous line breaks, and Python files that do not parse
    (Python 2 fixtures are common in source distributions; other languages keep files with a
    parse error, since C's macros often make one the compiler would not).
    """
    repo_dir = Path(repo_dir)
    if not repo_dir.is_dir():
        raise BenchmarkError(f"repository {repo_dir} is not a directory")
    files: list[SourceFile] = []
    for dirpath, dirnames, filenames in os.walk(repo_dir):
        dirnames[:] = sorted(
            d for d in dirnames if not d.startswith(".") and d not in _SKIPPED_DIRS
        )
        for name in sorted(filenames):
            path = Path(dirpath, name)
            language = language_for_path(name)
            if language not in languages or path.is_symlink():
                continue
            if language == "python" and not name.endswith(".py"):
                continue
            if path.stat().st_size > MAX_FILE_BYTES:
                continue
            read = _read_lines(path)
            if read is None:
                continue
            text, lines = read
            tree = parser(language).parse(text.encode("utf-8"))
            if language == "python" and tree.root_node.has_error:
                continue
            files.append(SourceFile(path.relative_to(repo_dir).parts, lines, tree, language))
    files.sort(key=lambda f: f.parts)
    return files

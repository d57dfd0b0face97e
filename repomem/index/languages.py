"""Which languages repomem understands, and how to load their tree-sitter grammars offline.

Grammars come from the per-language ``tree-sitter-<lang>`` wheels: each bundles its compiled
parser, so nothing is downloaded at run time.
"""

from __future__ import annotations

import importlib
import re
from functools import cache
from pathlib import PurePosixPath

from tree_sitter import Language, Parser

# extension -> language name
CODE_EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".java": "java",
    ".go": "go",
    ".rs": "rust",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
}

DOC_EXTENSIONS: dict[str, str] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "mdx",
    ".rst": "rst",
    ".txt": "text",
}

DOC_FILENAMES: frozenset[str] = frozenset({"README", "CHANGELOG", "CONTRIBUTING", "LICENSE"})

LINE_COMMENT: dict[str, str] = {
    "python": "#",
    "javascript": "//",
    "typescript": "//",
    "tsx": "//",
    "java": "//",
    "go": "//",
    "rust": "//",
    "c": "//",
    "cpp": "//",
}

# language -> (module, attribute returning the grammar pointer)
_GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "java": ("tree_sitter_java", "language"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "markdown": ("tree_sitter_markdown", "language"),
    "rst": ("tree_sitter_rst", "language"),
}


def language_for_path(path: str) -> str | None:
    """The code or doc language of a repository-relative path, or None if unsupported."""
    p = PurePosixPath(path)
    suffix = p.suffix.lower()
    if suffix in CODE_EXTENSIONS:
        return CODE_EXTENSIONS[suffix]
    if suffix in DOC_EXTENSIONS:
        return DOC_EXTENSIONS[suffix]
    if not suffix and p.name.upper() in DOC_FILENAMES:
        return "text"
    return None


# a line that only C++ writes: a template, a namespace, a class with a body or a base, an
# access label, ``using namespace``, ``extern "C++"`` or a standard header without ``.h``;
# matched at the text's start, then searched for after a newline: a pattern that starts with
# a literal is searched for that byte first (``^`` under ``re.M`` was tried at every
# position: twice the time, ~1% of a build's parsing workers on the Linux kernel); a line
# whose first character no alternative starts with is left at once (a lookahead: a third
# less of the search over the kernel's headers, most of whose lines start otherwise)
_CPP_BODY = (
    r"[ \t]*(?=[tinucpe#])(?:template\s*<"
    r"|(?:inline\s+)?namespace(?:\s+\w+(?:\s*::\s*\w+)*)?\s*\{"
    r"|using\s+namespace\s"
    r"|class\s+\w+(?:\s+final)?\s*[:{]|(?:public|private|protected)\s*:"
    r'|extern\s+"C\+\+"|#\s*include\s*<[a-z_]+>)'
)
_CPP_FIRST_LINE = re.compile(_CPP_BODY)
_CPP_LINE = re.compile("\n" + _CPP_BODY)


def code_language(path: str, text: str) -> str | None:
    """The language of a file's code: by its extension, save that a ``.h`` header holding
    C++ (``class``, ``namespace``, ``template``...) is C++ (a C header's ``extern "C"``
    block for C++ readers is not)."""
    language = language_for_path(path)
    if language == "c" and path.lower().endswith(".h") and _cpp_line(text):
        return "cpp"
    return language


def _cpp_line(text: str) -> bool:
    """Whether a line of ``text`` starts as only C++ writes one (``_CPP_BODY``)."""
    return _CPP_FIRST_LINE.match(text) is not None or _CPP_LINE.search(text) is not None


def is_code(language: str | None) -> bool:
    return language in LINE_COMMENT


@cache
def grammar(language: str) -> Language:
    module_name, attr = _GRAMMARS[language]
    module = importlib.import_module(module_name)
    return Language(getattr(module, attr)())


def parser(language: str) -> Parser:
    return Parser(grammar(language))

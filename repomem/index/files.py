"""Which files of a repository get indexed, and why the others do not.

Listing follows git when the root is part of a work tree (tracked files plus untracked files
that are not ignored), so the index sees what the developer sees; otherwise a directory walk
applies every ``.gitignore`` the same way git would. Each candidate is then loaded with checks
that keep secrets, build output, binaries, huge or generated files and paths leaving the root
out of the index; every skip has a reason so that ``repomem index`` can report it.
"""

from __future__ import annotations

import codecs
import fnmatch
import hashlib
import os
import posixpath
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from types import ModuleType

import numpy as np
import pathspec

from repomem.config import IndexConfig
from repomem.errors import RepomemError
from repomem.index.jit import numba
from repomem.index.languages import code_language, is_code, language_for_path

try:
    import git as _git
except ImportError:  # GitPython refuses to import when no git executable is installed
    _git_module: ModuleType | None = None
else:
    _git_module = _git

SKIP_REASONS = (
    "unsupported",
    "ignored",
    "secret",
    "build_output",
    "symlink_outside_root",
    "too_large",
    "binary",
    "minified",
    "unreadable",
    "not_a_file",
)

MAX_SKIPPED_EXAMPLES = 5

# Binary detection looks at the start of the file only, like git and grep do.
_SAMPLE_BYTES = 8192
# Share of suspicious bytes in the sample above which the content is not text.
_MAX_NON_TEXT_SHARE = 0.30
# C0 controls that do not occur in source text; tab, newlines, form feed, backspace and escape
# (ANSI colours in logs and fixtures) do.
_CONTROL_BYTES = bytes(b for b in range(32) if b not in b"\t\n\r\f\b\x1b") + b"\x7f"
_HIGH_BYTES = bytes(range(128, 256))

# Minified or generated code carries little that a developer would write by hand, and its huge
# lines swamp fragments. These limits only apply to code; prose may keep a paragraph per line.
_MAX_LINE_CHARS = 5_000
_MAX_AVERAGE_LINE_CHARS = 300
# Below this size a file is too small for its average line length to mean anything.
_MIN_CHARS_FOR_AVERAGE = 2_000
# Markers are looked for in a leading comment only, so code that merely mentions them is kept.
# "DO NOT EDIT" also guards hand-written fixtures, so it needs the word "generated" nearby
# (Go's "Code generated ... DO NOT EDIT.", protoc, Thrift and most generators say so).
_MARKER_LINES = 10
_COMMENT_STARTS = ("#", "//", "/*", "*", '"""', "'''")
_GENERATED_NAMES = (
    "*.min.*",
    "*-min.js",
    "*.bundle.js",
    "*_pb2.py",
    "*_pb2_grpc.py",
    "*.pb.go",
    "*.pb.h",
    "*.pb.cc",
)

# Compiled TypeScript: JavaScript and declarations beside the .ts/.tsx they were emitted from.
_COMPILED_SUFFIXES = (".d.ts", ".d.mts", ".d.cts", ".js", ".mjs", ".cjs", ".jsx")
_TYPESCRIPT_SUFFIXES = (".ts", ".tsx", ".mts", ".cts")
# The last line a compiler or bundler writes when it emits a source map.
_SOURCE_MAP_TRAILERS = ("//# sourceMappingURL=", "//@ sourceMappingURL=", "/*# sourceMappingURL=")


@dataclass(frozen=True)
class SourceFile:
    """One indexed file; ``digest`` lets the index notice which files changed."""

    path: str
    language: str
    text: str
    digest: str
    size: int


@dataclass
class FileScan:
    """The files of one repository worth indexing, plus what was left out and why."""

    root: Path
    files: list[SourceFile]
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_examples: dict[str, list[str]] = field(default_factory=dict)

    def skip(self, path: str, reason: str) -> None:
        """Count the candidate ``path`` left out, and keep it as an example of the reason."""
        self.skipped[reason] = self.skipped.get(reason, 0) + 1
        examples = self.skipped_examples.setdefault(reason, [])
        if len(examples) < MAX_SKIPPED_EXAMPLES:
            examples.append(path)

    def note_empty(self, config: IndexConfig) -> None:
        """No candidate at all: say whether the root's own ``.gitignore`` is why."""
        ignored = _ignored_at_top(self.root, _index_dir_rel(self.root, config.index_dir))
        if ignored:
            self.skipped[IGNORED_AT_TOP] = len(ignored)
            self.skipped_examples[IGNORED_AT_TOP] = ignored[:MAX_SKIPPED_EXAMPLES]


class FileSkipped(Exception):
    """A candidate that is deliberately not indexed: an expected outcome, not an error."""

    def __init__(self, reason: str, path: str = "") -> None:
        if reason not in SKIP_REASONS:
            raise ValueError(f"unknown skip reason {reason!r}; expected one of {SKIP_REASONS}")
        super().__init__(f"{path}: skipped ({reason})" if path else reason)
        self.reason = reason
        self.path = path


class RepositoryRootError(RepomemError):
    """The path given as a repository root cannot be indexed."""


def list_candidates(root: Path, config: IndexConfig) -> list[str]:
    """Repository-relative posix paths that may be indexed, sorted.

    Uses git when ``root`` lies in a work tree (and is not itself ignored there), else a
    directory walk that honours nested ``.gitignore`` files. Directory symlinks are never
    followed; a symlink is listed like a file and judged by :func:`load_file`.
    """
    root = repository_root(root)
    index_rel = _index_dir_rel(root, config.index_dir)
    paths = _git_candidates(root)
    if paths is None:
        return _walk_candidates(root, index_rel)
    return sorted(
        {path for path in paths if not _is_under(path, index_rel) and os.path.lexists(root / path)}
    )


def load_file(root: Path, rel_path: str, config: IndexConfig) -> SourceFile:
    """Read one candidate, or raise :class:`FileSkipped` saying why it is not indexed.

    Path-only checks come first so that secrets and ignored files are never opened.
    """
    root = root if isinstance(root, Path) else Path(root)
    path = _normalized_rel_path(rel_path)
    _check_path(root, path, config)
    build_output = config.exclude_build_output
    if build_output and _in_build_output(root, path, tuple(config.build_output_patterns)):
        raise FileSkipped("build_output", path)
    language = language_for_path(path)
    if language is None:
        raise FileSkipped("unsupported", path)
    if _matches_any_name(path.rpartition("/")[2], _GENERATED_NAMES):
        raise FileSkipped("minified", path)
    code = is_code(language)
    if build_output and code and _compiled_beside_source(root, path):
        raise FileSkipped("build_output", path)

    real = _resolve_inside_root(root, path, config)
    try:
        info = os.stat(real)
    except OSError as err:
        raise FileSkipped("unreadable", path) from err
    if not stat.S_ISREG(info.st_mode):
        raise FileSkipped("not_a_file", path)
    if info.st_size > config.max_file_bytes:
        raise FileSkipped("too_large", path)
    data = _read_at_most(real, config.max_file_bytes + 1, path)
    _check_content(path, data, config)  # the size again: the file may have grown since stat
    # utf-8-sig drops a byte order mark, which editors hide from the document too.
    text = data.decode("utf-8-sig", errors="replace")
    if code and _looks_generated(text):
        raise FileSkipped("minified", path)
    if (
        build_output
        and code
        and text.rstrip().rpartition("\n")[2].lstrip().startswith(_SOURCE_MAP_TRAILERS)
    ):
        raise FileSkipped("build_output", path)
    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
    language = code_language(path, text) if code else language
    return SourceFile(path=path, language=language, text=text, digest=digest, size=len(data))


def check_prompt_text(root: Path, rel_path: str, config: IndexConfig, data: bytes) -> None:
    """Raise :class:`FileSkipped` when the text of ``rel_path`` (``data``: its bytes on disk or
    in the editor, at least ``max_file_bytes + 1`` of them if there are more) must not reach a
    prompt: the index leaves it out as ignored or secret (a symlink's target included), too
    large or binary. Unsupported and generated files are left out as not worth indexing, not as
    private, so they may still be completed."""
    path = _normalized_rel_path(rel_path)
    _check_path(root, path, config)
    try:
        _resolve_inside_root(root, path, config)
    except FileSkipped as skip:
        if skip.reason in ("ignored", "secret"):
            raise
    _check_content(path, data, config)


def skip_explanation(skip: FileSkipped, config: IndexConfig) -> str:
    """Why the file was left out, in words that follow its name (``.env is ...``)."""
    if isinstance(skip.__cause__, FileSkipped):  # a symlink, judged by its target
        return f"links to {skip.__cause__.path}, which {skip_explanation(skip.__cause__, config)}"
    path = skip.path
    if skip.reason == "secret":
        pattern = next((p for p in config.secret_patterns if _is_secret(path, (p,))), None)
        return "is excluded as a secret file" + (f" (pattern {pattern})" if pattern else "")
    if skip.reason == "ignored":
        index = _gitignore_spec(tuple(config.ignore_patterns)).check_file(path).index
        if index is not None:
            return f"is ignored by index.ignore_patterns (pattern {config.ignore_patterns[index]})"
        return "is ignored by the index"
    if skip.reason == "too_large":
        return f"is larger than index.max_file_bytes ({config.max_file_bytes} bytes)"
    if skip.reason == "binary":
        return "looks like a binary file"
    return f"is not indexed ({skip.reason})"


def scan_files(
    root: Path,
    config: IndexConfig,
    progress: Callable[[int, int], None] | None = None,
    *,
    texts: bool = True,
) -> FileScan:
    """Load every candidate of ``root``; ``progress(done, total)`` follows after each file.
    ``texts=False``: each file's text is dropped once it is hashed, so that a check of what
    changed does not hold the whole repository's text at once."""
    root = repository_root(root)
    candidates = list_candidates(root, config)
    scan = FileScan(root=root.resolve(), files=[])
    total = len(candidates)
    for done, path in enumerate(candidates, start=1):
        try:
            loaded = load_file(root, path, config)
        except FileSkipped as skip:
            scan.skip(path, skip.reason)
        else:
            scan.files.append(loaded if texts else replace(loaded, text=""))
        if progress is not None:
            progress(done, total)
    scan.files.sort(key=lambda source: source.path)
    if not candidates:
        scan.note_empty(config)
    return scan


IGNORED_AT_TOP = "ignored by the root's .gitignore"


def _ignored_at_top(root: Path, index_rel: str | None) -> list[str]:
    """The root's entries its own ``.gitignore`` ignores: when nothing is listed, this says
    why (a source package's ``.gitignore`` may ignore everything but its packaging)."""
    spec = _read_gitignore(root / ".gitignore")
    if spec is None:
        return []
    with os.scandir(root) as entries:
        return sorted(
            e.name + "/" * e.is_dir(follow_symlinks=False)
            for e in entries
            if e.name not in (".git", index_rel)
            and _gitignored((("", spec),), e.name, e.is_dir(follow_symlinks=False))
        )


def repository_root(root: Path) -> Path:
    """``root``, or ``RepositoryRootError`` where it is no existing directory."""
    root = Path(root)
    if not root.exists():
        raise RepositoryRootError(f"repository root {root} does not exist")
    if not root.is_dir():
        raise RepositoryRootError(f"repository root {root} is not a directory")
    return root


@cache
def _index_dir_rel(root: Path, index_dir: str) -> str | None:
    """The index directory relative to ``root``, or None when it lies elsewhere."""
    index_path = Path(index_dir)
    if index_path.is_absolute():
        try:
            index_path = index_path.resolve().relative_to(root.resolve())
        except ValueError:
            return None
    rel = posixpath.normpath(index_path.as_posix())
    return None if rel == "." else rel


def _is_under(path: str, directory: str | None) -> bool:
    return directory is not None and (path == directory or path.startswith(directory + "/"))


def _git_candidates(root: Path) -> list[str] | None:
    """Paths git reports for ``root``, or None when git cannot speak for this directory."""
    if _git_module is None:
        return None
    command = _git_module.Git(str(root))
    try:
        top = command.rev_parse("--show-toplevel")
        if os.path.realpath(top) != os.path.realpath(root):
            # A directory the enclosing repository ignores is not part of it.
            status, _, _ = command.execute(
                ["git", "check-ignore", "-q", "."],
                with_extended_output=True,
                with_exceptions=False,
            )
            if status == 0:
                return None
        raw = command.ls_files(
            "--cached", "--others", "--exclude-standard", "-z", stdout_as_string=False
        )
    except (_git_module.CommandError, OSError):
        return None
    # An untracked nested repository comes back as "name/"; git does not look inside it.
    return [os.fsdecode(item).rstrip("/") for item in raw.split(b"\0") if item]


def _walk_candidates(root: Path, index_rel: str | None) -> list[str]:
    """Files under ``root`` that git would not ignore, without a git repository."""
    found: list[str] = []
    pending: list[tuple[str, tuple[tuple[str, pathspec.GitIgnoreSpec], ...]]] = [("", ())]
    while pending:
        dir_rel, specs = pending.pop()
        directory = root / dir_rel
        own_spec = _read_gitignore(directory / ".gitignore")
        if own_spec is not None:
            specs = (*specs, (dir_rel, own_spec))
        try:
            with os.scandir(directory) as entries:
                children = list(entries)
        except OSError:
            continue
        for entry in children:
            rel = f"{dir_rel}/{entry.name}" if dir_rel else entry.name
            if entry.name == ".git" or rel == index_rel:
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if _gitignored(specs, rel, is_dir):
                continue
            if is_dir:
                pending.append((rel, specs))
            else:
                found.append(rel)
    return sorted(found)


def _read_gitignore(path: Path) -> pathspec.GitIgnoreSpec | None:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _gitignored(
    specs: tuple[tuple[str, pathspec.GitIgnoreSpec], ...], rel: str, is_dir: bool
) -> bool:
    """Git's rule: the deepest ``.gitignore`` with a matching pattern decides."""
    for base, spec in reversed(specs):
        local = rel[len(base) + 1 :] if base else rel
        include = spec.check_file(local + "/" if is_dir else local).include
        if include is not None:
            return include
    return False


def _normalized_rel_path(rel_path: str) -> str:
    # PurePosixPath's normalisation, by string operations (this runs once per listed file)
    parts = [p for p in rel_path.split("/") if p not in ("", ".")]
    if rel_path.startswith("/") or ".." in parts or not parts:
        raise RepomemError(
            f"file path {rel_path!r} must be relative to the repository root and stay inside it"
        )
    return "/".join(parts)


def _check_path(root: Path, path: str, config: IndexConfig) -> None:
    """Raise for paths the configuration keeps out, without touching the file."""
    if (
        ".git" in path.split("/")
        or _is_under(path, _index_dir_rel(root, config.index_dir))
        or _gitignore_spec(tuple(config.ignore_patterns)).match_file(path)
    ):
        raise FileSkipped("ignored", path)
    if config.exclude_secrets and _is_secret(path, tuple(config.secret_patterns)):
        raise FileSkipped("secret", path)


def _is_secret(path: str, patterns: tuple[str, ...]) -> bool:
    # The name match ignores case: ``ID_RSA`` or ``.ENV`` on a case-insensitive disk are
    # still secrets.
    return _matches_any_name(path.rpartition("/")[2], patterns) or bool(
        _gitignore_spec(patterns).match_file(path)
    )


def _matches_any_name(name: str, patterns: tuple[str, ...]) -> bool:
    return _name_regex(patterns).match(name) is not None


@cache
def _name_regex(patterns: tuple[str, ...]) -> re.Pattern[str]:
    if not patterns:
        return re.compile(r"(?!)")
    return re.compile("|".join(fnmatch.translate(p) for p in patterns), re.IGNORECASE)


@cache
def _gitignore_spec(patterns: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines(patterns)


def _in_build_output(root: Path, path: str, patterns: tuple[str, ...]) -> bool:
    """``path`` matches a build-output pattern, by its name or by a directory above it.

    The shallowest matching directory decides: one holding an ``__init__.py`` is a Python
    package that shares the name (``src/build/``), and nothing below it counts as output.
    """
    spec = _gitignore_spec(patterns)
    if not spec.match_file(path):
        return False
    parts = path.split("/")
    for depth in range(1, len(parts)):
        directory = "/".join(parts[:depth])
        if spec.match_file(directory + "/"):
            return not os.path.isfile(os.path.join(root, directory, "__init__.py"))
    return True


def _compiled_beside_source(root: Path, path: str) -> bool:
    """A file next to its own source map (``x.js`` beside ``x.js.map``), or JavaScript or a
    declaration next to the TypeScript of the same stem: what ``tsc`` and bundlers emit."""
    if os.path.isfile(os.path.join(root, path + ".map")):
        return True
    stem = next((path[: -len(s)] for s in _COMPILED_SUFFIXES if path.endswith(s)), None)
    return stem is not None and any(
        os.path.isfile(os.path.join(root, stem + suffix)) for suffix in _TYPESCRIPT_SUFFIXES
    )


def _resolve_inside_root(root: Path, path: str, config: IndexConfig) -> str:
    """The real path of ``path``; a symlink may only lead to an allowed file inside root."""
    root_real = os.path.realpath(root)
    try:
        real = os.path.realpath(os.path.join(root_real, path), strict=True)
    except OSError as err:  # missing, broken symlink, or symlink loop
        raise FileSkipped("unreadable", path) from err
    if real != root_real and not real.startswith(os.path.join(root_real, "")):
        raise FileSkipped("symlink_outside_root", path)
    target = os.path.relpath(real, root_real).replace(os.sep, "/")
    if target != path and target != ".":
        # A link must not smuggle in what the configuration keeps out.
        try:
            _check_path(root, target, config)
        except FileSkipped as skip:
            raise FileSkipped(skip.reason, path) from skip
    return real


def _read_at_most(real: str, limit: int, path: str) -> bytes:
    # Non-blocking open: a fifo swapped in after the stat must not hang the scan.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        with open(os.open(real, flags), "rb") as handle:
            return handle.read(limit)
    except OSError as err:
        raise FileSkipped("unreadable", path) from err


def _check_content(path: str, data: bytes, config: IndexConfig) -> None:
    if len(data) > config.max_file_bytes:
        raise FileSkipped("too_large", path)
    if _looks_binary(data):
        raise FileSkipped("binary", path)


def _looks_binary(data: bytes) -> bool:
    """NUL in the sample, or too many bytes that text lacks.

    Outside valid UTF-8, high bytes are suspicious too: mostly-ASCII Latin-1 text stays, while
    legacy multi-byte encodings (Big5, EUC-JP), which would decode to replacement characters
    anyway, do not.
    """
    sample = data[:_SAMPLE_BYTES]
    if not sample:
        return False
    if b"\0" in sample:
        return True
    suspicious = len(sample) - len(sample.translate(None, _CONTROL_BYTES))
    try:
        # Incremental: a multi-byte character cut at the sample's end is not an error.
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=False)
    except UnicodeDecodeError:
        suspicious += len(sample) - len(sample.translate(None, _HIGH_BYTES))
    return suspicious / len(sample) > _MAX_NON_TEXT_SHARE


def _looks_generated(text: str) -> bool:
    """Minified (huge or long-on-average lines) or marked generated in a leading comment."""
    if text.isascii():  # most code: its lines measured without a string for each
        count, longest, head_end = _line_stats(np.frombuffer(text.encode("ascii"), np.uint8))
        head = text[:head_end].splitlines()
    else:
        lines = text.splitlines()
        count, longest, head = len(lines), max(map(len, lines), default=0), lines[:_MARKER_LINES]
    if not count:
        return False
    if longest > _MAX_LINE_CHARS:
        return True
    if len(text) >= _MIN_CHARS_FOR_AVERAGE and len(text) / count > _MAX_AVERAGE_LINE_CHARS:
        return True
    comments = [s for s in (line.lstrip() for line in head) if s.startswith(_COMMENT_STARTS)]
    if any("@generated" in comment for comment in comments):
        return True
    return any("DO NOT EDIT" in c for c in comments) and "generated" in "\n".join(head).lower()


# the ASCII characters ``str.splitlines`` ends a line at (``\r\n`` is one end)
_LINE_ENDS = np.zeros(256, np.bool_)
_LINE_ENDS[[10, 11, 12, 13, 28, 29, 30]] = True


@numba.njit(cache=True, nogil=True)
def _line_stats(text: np.ndarray) -> tuple[int, int, int]:
    """Of an ASCII text, what ``_looks_generated`` reads of ``text.splitlines()``: how many
    lines, the longest one's length, and where the first ``_MARKER_LINES`` lines end (splitting
    every line of a file made a string of each: ~1% of a build's parsing workers)."""
    count, longest, start, head_end = 0, 0, 0, text.size
    i = 0
    while i < text.size:
        if _LINE_ENDS[text[i]]:
            longest = max(longest, i - start)
            count += 1
            if text[i] == 13 and i + 1 < text.size and text[i + 1] == 10:
                i += 1
            start = i + 1
            if count == _MARKER_LINES:
                head_end = start
        i += 1
    if start < text.size:
        count += 1
        longest = max(longest, text.size - start)
    return count, longest, head_end


def warm_up() -> None:
    """Load the compiled kernel now, so that processes forked from this one inherit it."""
    _line_stats(np.empty(0, np.uint8))

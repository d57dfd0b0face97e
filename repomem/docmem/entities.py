"""The doc-to-code entity graph (in the spirit of QRMeM's structured memory).

Entities are what a doc segment names that code can define: code symbols (backticked names,
reStructuredText roles such as ``:func:`flask.jsonify```), dotted paths, file paths,
configuration keys (``SECRET_KEY``) and command-line flags (``--debug``). Each entity links to
every segment mentioning it and to its definitions in the code: Python definitions by qualified
name (``module.Class.method``, matched on the longest unambiguous dotted suffix, so
``flask.Flask`` finds ``flask.app.Flask``), modules, files, quoted flags (``"--debug"``) and
configuration keys assigned or quoted in code. A name that matches too many definitions is
dropped, never guessed, as in call resolution.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from repomem.index.parsing import ParsedFile, split_lines
from repomem.index.resolve import module_name

if TYPE_CHECKING:
    from repomem.index.repo import RepoIndex

_FILE_EXT = r"(?:py|pyi|toml|cfg|ini|json|ya?ml|md|rst|txt|js|ts|go|rs|java|c|h|cpp|sh)"
_URL = re.compile(r"(?:https?|ftp)://\S+|www\.\S+")
_BACKTICKED = re.compile(r"(?::[\w:.-]+:)?``?([^`\n]+?)``?")
_FLAG = re.compile(r"(?<![\w-])--[A-Za-z][\w-]*[A-Za-z0-9]")
_CONFIG = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")
_PATH = re.compile(rf"(?<![\w/.-])(?:[\w.-]+/)+[\w.-]+\.{_FILE_EXT}\b|\b[\w-]+\.{_FILE_EXT}\b")
_DOTTED = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b")
_IDENT = re.compile(r"^[A-Za-z_]\w*$")
_CALL = re.compile(r"\b([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\(")

# Definitions in code of flags and configuration keys (what a doc mention of them refers to).
_CODE_FLAG = re.compile(r"""["'](--[A-Za-z][\w-]*)["']""")
_CODE_CONFIG = re.compile(
    r"""["']([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)["']|^\s*([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\s*[:=]""",
    re.MULTILINE,
)

# A bare (one-part) name must be at least this long and match at most this many definitions.
_MIN_BARE = 3
MAX_TARGETS = 3


@dataclass(frozen=True)
class Mention:
    name: str
    kind: str


def _classify(inner: str) -> list[Mention]:
    """What a backticked span names."""
    text = inner.strip().lstrip("~!").strip()
    if "<" in text and text.endswith(">"):  # `title <target>`
        text = text[text.index("<") + 1 : -1].strip()
    text = text.removesuffix("()")
    if not text:
        return []
    if text.startswith("--") and _FLAG.fullmatch(text.split("=", 1)[0]):
        return [Mention(text.split("=", 1)[0], "flag")]
    if _PATH.fullmatch(text):
        return [Mention(text, "path")]
    if _CONFIG.fullmatch(text):
        return [Mention(text, "config")]
    if _IDENT.match(text) or _DOTTED.fullmatch(text):
        return [Mention(text, "symbol")]
    # a code snippet: the names it calls or dots into
    found = [Mention(m.group(1), "symbol") for m in _CALL.finditer(text)]
    found += [Mention(m.group(), "symbol") for m in _DOTTED.finditer(text)]
    found += [Mention(m.group(), "flag") for m in _FLAG.finditer(text)]
    return found


def mentions(text: str) -> list[Mention]:
    """Entities ``text`` mentions, each once, in order of first mention."""
    text = _URL.sub(" ", text)
    found: list[Mention] = []
    for m in _BACKTICKED.finditer(text):
        found.extend(_classify(m.group(1)))
    plain = _BACKTICKED.sub(" ", text)
    found += [Mention(m.group(), "flag") for m in _FLAG.finditer(text)]
    found += [Mention(m.group(), "config") for m in _CONFIG.finditer(plain)]
    paths = [m.group() for m in _PATH.finditer(plain)]
    found += [Mention(p, "path") for p in paths]
    for m in _DOTTED.finditer(plain):
        name = m.group()
        if name in paths or any(name in p for p in paths):
            continue
        parts = name.split(".")
        if all(len(p) >= 2 for p in parts):  # not "e.g"
            found.append(Mention(name, "symbol"))
    found += [Mention(m.group(1), "symbol") for m in _CALL.finditer(plain)]
    unique: dict[str, Mention] = {}
    for mention in found:
        unique.setdefault(mention.name, mention)
    return list(unique.values())


def name_words(name: str) -> tuple[str, ...]:
    """The lower-case words of an entity's last component (``SECRET_KEY`` -> secret, key)."""
    leaf = name.strip("-").rsplit("/", 1)[-1].rsplit(".", 1)[-1]
    parts = re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+", leaf)
    return tuple(p.lower() for p in parts if p)


# ------------------------------------------------------------------------- code side


@dataclass
class _FileSymbols:
    digest: str
    names: list[tuple[str, str, int]]  # (kind, name, 0-based line)


@dataclass
class CodeSymbols:
    """Where the code defines what docs mention, kept per file so that an edit re-reads only
    the file it changed."""

    files: dict[str, _FileSymbols] = field(default_factory=dict)
    # the names lookups can ask (``lookup_keys``): a file keeps only the names that match
    # one, so the table grows with the docs' entities, not with the code; None: every name
    wanted: frozenset[str] | None = None
    _table: dict[tuple[str, str], list[tuple[str, int]]] | None = None
    _suffixes: dict[str, list[tuple[str, int]]] | None = None

    def update(self, index: RepoIndex) -> bool:
        """Bring the table up to date with the index's code files; True if anything changed.
        Only the files whose digest changed are read (their parse and text, on demand)."""
        digests = {path: digest for path, _, digest in index.indexed_files()}
        changed = False
        for path in list(self.files):
            if path not in digests:
                del self.files[path]
                changed = True
        for path, digest in digests.items():
            known = self.files.get(path)
            if known is not None and known.digest == digest:
                continue
            pf = index.parse(path, keep=False)
            if pf is None:
                continue
            names = _file_names(path, pf, index.file_text(path) or "")
            if self.wanted is not None:
                names = [n for n in names if _asked(n, self.wanted)]
            self.files[path] = _FileSymbols(digest, names)
            changed = True
        if changed:
            self._table = self._suffixes = None
        return changed

    def _build(self) -> None:
        table: dict[tuple[str, str], list[tuple[str, int]]] = defaultdict(list)
        suffixes: dict[str, list[tuple[str, int]]] = defaultdict(list)
        for path, fs in self.files.items():
            for kind, name, line in fs.names:
                table[(kind, name)].append((path, line))
                if kind == "symbol":
                    parts = name.split(".")
                    for i in range(len(parts)):
                        suffixes[".".join(parts[i:])].append((path, line))
        self._table, self._suffixes = dict(table), dict(suffixes)

    def lookup(self, mention: Mention) -> list[tuple[str, int]]:
        """Definition sites ``(path, 0-based line)`` of a mention; empty when unknown or
        ambiguous."""
        if self._table is None or self._suffixes is None:
            self._build()
        assert self._table is not None and self._suffixes is not None
        if mention.kind == "flag":
            return _unique(self._table.get(("flag", mention.name), []))
        if mention.kind == "config":
            found = self._table.get(("config", mention.name), [])
            found = found or self._suffixes.get(mention.name, [])
            return _unique(found)[: MAX_TARGETS * 4]
        if mention.kind == "path":
            exact = self._table.get(("path", mention.name))
            if exact:
                return exact
            tail = "/" + mention.name
            hits = [(p, 0) for p in self.files if p.endswith(tail)]
            return hits if len(hits) <= MAX_TARGETS else []
        exact = self._table.get(("symbol", mention.name))
        if exact:
            return _unique(exact)
        parts = mention.name.split(".")
        for i in range(len(parts)):
            suffix = ".".join(parts[i:])
            if i == len(parts) - 1 and len(suffix) < _MIN_BARE:
                break
            hits = _unique(self._suffixes.get(suffix, []))
            if hits:
                return hits if len(hits) <= MAX_TARGETS else []
        return []


def _suffixes(name: str) -> list[str]:
    """``name`` and its dotted suffixes (``a.b.c``: ``a.b.c``, ``b.c``, ``c``)."""
    parts = name.split(".")
    return [".".join(parts[i:]) for i in range(len(parts))]


def _asked(name: tuple[str, str, int], wanted: frozenset[str]) -> bool:
    """Whether a lookup can find the code name ``(kind, name, line)``: a path by itself, any
    other name by one of its dotted suffixes."""
    kind, text, _ = name
    return text in wanted if kind == "path" else not wanted.isdisjoint(_suffixes(text))


def lookup_keys(names: Iterable[str]) -> frozenset[str]:
    """Every name :meth:`CodeSymbols.lookup` can ask for mentions of ``names``: a code name
    matches one only where one of its dotted suffixes is among them."""
    return frozenset(key for name in names for key in _suffixes(name))


def _unique(sites: Iterable[tuple[str, int]]) -> list[tuple[str, int]]:
    return list(dict.fromkeys(sites))


def _file_names(path: str, pf: ParsedFile, text: str) -> list[tuple[str, str, int]]:
    names: list[tuple[str, str, int]] = [("path", path, 0)]
    if pf.language == "python":
        module = module_name(path)
        names.append(("symbol", module, 0))
        for d in pf.definitions:
            names.append(("symbol", f"{module}.{d.name}", int(pf.node_start[d.node])))
    else:
        names += [("symbol", d.name, int(pf.node_start[d.node])) for d in pf.definitions]
    if text:
        starts = _line_starts(text)
        for m in _CODE_FLAG.finditer(text):
            names.append(("flag", m.group(1), _line_of(starts, m.start())))
        for m in _CODE_CONFIG.finditer(text):
            names.append(("config", m.group(1) or m.group(2), _line_of(starts, m.start())))
    return names


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for line in split_lines(text)[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    return starts


def _line_of(starts: list[int], offset: int) -> int:
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo


# ---------------------------------------------------------------------------- the graph


@dataclass
class EntityGraph:
    """Entities, the segments that mention them and their code definitions.

    Two entities are adjacent when one segment mentions both, or when one is the other's
    dotted parent (``flask.Flask`` and ``flask.Flask.run``); navigation walks these edges.
    """

    segment_entities: list[list[str]]
    entity_segments: dict[str, list[int]]
    kinds: dict[str, str]
    definitions: dict[str, list[tuple[str, int]]]

    @classmethod
    def build(cls, segment_texts: list[str], code: CodeSymbols | None = None) -> EntityGraph:
        """The segments' entities, linked to ``code``'s definitions when given."""
        seg_ents: list[list[str]] = []
        ent_segs: dict[str, list[int]] = defaultdict(list)
        kinds: dict[str, str] = {}
        for i, text in enumerate(segment_texts):
            found = mentions(text)
            seg_ents.append([m.name for m in found])
            for m in found:
                ent_segs[m.name].append(i)
                kinds.setdefault(m.name, m.kind)
        graph = cls(seg_ents, dict(ent_segs), kinds, {})
        if code is not None:
            graph.link(code)
        return graph

    def link(self, code: CodeSymbols) -> None:
        """(Re)resolve every entity against the code's definitions."""
        self.definitions = {}
        for name, kind in self.kinds.items():
            sites = code.lookup(Mention(name, kind))
            if sites:
                self.definitions[name] = sites

    def neighbours(self, entity: str) -> dict[str, list[int]]:
        """Adjacent entities, each with the segments that connect them (empty for a dotted
        parent or child)."""
        out: dict[str, list[int]] = defaultdict(list)
        for seg in self.entity_segments.get(entity, []):
            for other in self.segment_entities[seg]:
                if other != entity:
                    out[other].append(seg)
        for other in self.kinds:
            if other != entity and (
                other.startswith(entity + ".") or entity.startswith(other + ".")
            ):
                out.setdefault(other, [])
        return dict(out)

    def specific(self, name: str) -> bool:
        """Whether an entity names something code-like: a flag, key, path, dotted or
        compound name, or a plain word the code defines (docs also backtick plain words)."""
        if self.kinds.get(name) in ("flag", "config", "path"):
            return True
        if "." in name or "_" in name or any(c.isupper() for c in name[1:]):
            return True
        return name in self.definitions

    def match_question(self, question: str) -> list[str]:
        """Known entities a question names, literally or by their words (``secret key``
        names ``SECRET_KEY``); longest names first. Matching by words only considers
        :meth:`specific` entities."""
        literal = [m.name for m in mentions(question) if m.name in self.kinds]
        words = set(re.findall(r"[a-z0-9]+", question.lower()))
        by_words = []
        for name in self.kinds:
            parts = name_words(name)
            if not parts or name in literal or not self.specific(name):
                continue
            if len(parts) == 1 and (len(parts[0]) < 4 or parts[0] not in words):
                continue
            if all(p in words for p in parts):
                by_words.append(name)
        by_words.sort(key=lambda n: (-len(name_words(n)), len(self.entity_segments.get(n, ())), n))
        return list(dict.fromkeys(literal + by_words))

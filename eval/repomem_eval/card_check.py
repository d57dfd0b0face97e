"""Is a card the prompt shows the definition the code refers to? Checked without the context
engine, whose resolution is what is measured.

Each card of a task's final prompt gets one verdict, by the first rule that decides:

1. **wrong** when the card's name (a Rust macro's without its ``!``) is nowhere in the code
   of the task's left context and ground truth (strings and comments left out: a card made
   from a word in a comment) and, for JavaScript and TypeScript, neither is a name its file
   exports it under (``export { stringType as string }``: the code writes ``z.string()``;
   a card the code names by such an alias alone is undecided: other definitions may have
   the alias's name, and the compiler leads from the alias to the export, no definition),
   or is
   a name the language or its standard library owns (``code_langs.RESERVED``: ``usize``,
   ``Object``, ``len``; this assumes the project does not shadow them, except in Rust where
   the code takes the name from its own crate: a ``use`` rooted at ``crate``, ``self``,
   ``super`` or the package's name that lists it, or a path through them, ``crate::Err``;
   nom's ``use crate::internal::Err;`` then ``Err::Error(e)`` is nom's ``Err``);
2. **wrong** when the card comes from a test file and the task's file is not a test;
3. TypeScript, with the compiler at hand (``devsuite fetch`` installs it): the compiler's
   language service ("go to definition", ``tsoracle.js``) at every place the file's code up to
   the end of the ground truth names the card's name. **Right** when one of them leads to the
   card's definition, **wrong** when they all lead elsewhere (another definition, the
   standard library), undecided when the compiler finds nothing at one of them (an import of a
   module it cannot find, a package's own name in its sources without their
   ``package.json``, leads to nothing; ``slice.reducer`` on a value of such a module too);
4. **right** when the card's definition is the only one of its name in the language family
   (test files left out for a task outside tests);
5. Go, Java and C, for functions, types and macros (not methods, whose receiver may be typed
   by any file): the definitions of the name in the files the task's file reaches by its
   imports (Go: its own package's folder and the folders of the packages it imports; Java: its
   package's folder and the classes or packages it imports; C: the headers it includes, by
   relative path or by name, transitively, with each header's own ``.c``). **Right** when the
   card is the only one reached, **wrong** when others are reached and it is not. C++ as C,
   its sources ``.cc``/``.cpp`` too; a prototype whose only definition the file reaches is in
   the task's own file (cut at the cursor when the index is shown the task) stands for it;
6. otherwise undecided (Rust and Python names with several definitions, methods, ...; a card
   listing declarations alone, ``cards.listing``, which names no definition).

The wrong-card rate is wrong / (right + wrong): among the cards that could be decided.
"""

from __future__ import annotations

import json
import posixpath
import re
import subprocess
import tomllib
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Literal

from repomem.context.cards import LISTING, Card
from repomem.index.langs import is_test
from repomem.index.repo import RepoIndex
from repomem_eval.code_langs import FAMILY_OF, RESERVED, code_only, identifiers

Verdict = Literal["right", "wrong", "undecided"]
ORACLE_SCRIPT = Path(__file__).with_name("tsoracle.js")
_GO_IMPORT = re.compile(r'^\s*(?:import\s+)?(?:[\w.]+\s+)?"([^"]+)"', re.MULTILINE)
_JAVA_IMPORT = re.compile(r"^\s*import\s+(?:static\s+)?([\w.]+?)(\.\*)?\s*;", re.MULTILINE)
_HEADERS = (".h", ".hh", ".hpp", ".hxx")
_SOURCES = (".c", ".cc", ".cpp", ".cxx")
_C_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)
_GO_MODULE = re.compile(r"^module\s+(\S+)", re.MULTILINE)
_RUST_USE = re.compile(r"\buse\s+([^;]+);")
# a JavaScript/TypeScript export list of the file's own names (no ``from`` after it), and
# each ``name as alias`` of it
_JS_EXPORT_LIST = re.compile(r"\bexport\s*(?:type\s*)?\{([^{}]*)\}(?!\s*from\b)")
_JS_ALIAS = re.compile(r"(?:^|,)\s*(?:type\s+)?([A-Za-z_$][\w$]*)\s+as\s+([A-Za-z_$][\w$]*)")
_RUST_RENAMED = re.compile(r"\w+\s+as\s+")  # ``a as b`` binds ``b`` alone
_RUST_LEAF = re.compile(r"\b(\w+)\b(?!\s*::)")


def _cargo_package(cargo: Path) -> str | None:
    """The ``[package]`` name a ``Cargo.toml`` gives; None without one (or unreadable)."""
    try:
        with cargo.open("rb") as fh:
            name = tomllib.load(fh).get("package", {}).get("name")
    except (OSError, tomllib.TOMLDecodeError, AttributeError):
        return None
    return name if isinstance(name, str) else None


class TypeScriptOracle:
    """A ``node`` process running the compiler's language service over one repository."""

    def __init__(self, typescript: Path, repo_dir: Path) -> None:
        self._proc = subprocess.Popen(
            ["node", str(ORACLE_SCRIPT), str(typescript), str(repo_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )

    def definitions(
        self, file: str, points: Sequence[tuple[int, int]]
    ) -> list[list[tuple[str | None, int]]]:
        """For each (line, UTF-16 character) point of ``file``, where its name is defined."""
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(json.dumps({"file": file, "points": list(points)}) + "\n")
        self._proc.stdin.flush()
        reply = json.loads(self._proc.stdout.readline() or "[]")
        if not isinstance(reply, list):
            return [[] for _ in points]
        return [[(f, int(line)) for f, line in found] for found in reply]

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        self._proc.wait(timeout=30)


def typescript_oracle(typescript: Path | None, repo_dir: Path) -> TypeScriptOracle | None:
    """The oracle for a TypeScript repository, or None without the compiler or node."""
    if typescript is None or not (typescript / "lib" / "typescript.js").is_file():
        return None
    try:
        return TypeScriptOracle(typescript, repo_dir)
    except OSError:
        return None


class CardChecker:
    """Verdicts on the cards of one repository's tasks (see the module doc)."""

    def __init__(
        self,
        index: RepoIndex,
        named: Mapping[tuple[str, str], list[tuple[str, int]]],
        oracle: TypeScriptOracle | None = None,
    ) -> None:
        self.index = index
        self.named = named
        self.oracle = oracle
        self._texts: dict[str, str] = {}
        self._aliases: dict[str, dict[str, set[str]]] = {}
        self._by_dir: dict[str, list[str]] = defaultdict(list)
        self._by_name: dict[str, list[str]] = defaultdict(list)
        for path, _, _ in index.indexed_files():
            self._by_dir[str(PurePosixPath(path).parent)].append(path)
            self._by_name[PurePosixPath(path).name].append(path)
        self._crate_roots = {"crate", "self", "super"}
        package = _cargo_package(index.root / "Cargo.toml")
        if package is not None:
            self._crate_roots.add(package.replace("-", "_"))
        go_mod = index.root / "go.mod"
        found = _GO_MODULE.search(go_mod.read_text(errors="replace")) if go_mod.is_file() else None
        self._go_module = found.group(1) if found else None

    def verdicts(
        self, path: str, buffer: str, ground_truth: str, cards: Sequence[Card]
    ) -> list[Verdict]:
        """One verdict per card for a task completed at the end of ``buffer`` in ``path``."""
        pf = self.index.parse(path)
        family = FAMILY_OF.get(pf.language) if pf is not None else None
        if family is None:
            return ["undecided"] * len(cards)
        # the ground truth on its own line, the line it has in the file (the compiler reads
        # the file: a blank line between them would send it to the line below)
        text = buffer + ("" if not buffer or buffer.endswith("\n") else "\n") + ground_truth
        named = identifiers(text, family)
        own = self._rust_own(code_only(text, family)) if family == "rust" else set()
        reached: set[str] | None = None
        out: list[Verdict] = []
        for card in cards:
            if card.kind == LISTING:  # declarations alone, named by none: no verdict
                out.append("undecided")
                continue
            name = card.name.rsplit(".", 1)[-1]
            written = name.removesuffix("!")  # a Rust macro ``m!`` is written ``m!(``
            reserved = written in RESERVED[family] or name in RESERVED[family]
            # a JavaScript/TypeScript definition its file exports under another name, which
            # the code writes instead (``export { stringType as string }``, ``z.string()``)
            aliases = (
                self._js_aliases(card.path).get(name, set()) & named
                if family == "js" and "." not in card.name
                else set()
            )
            if (
                (written not in named and not aliases)
                or (reserved and written not in own)
                or (is_test(card.path) and not is_test(path))
            ):
                out.append("wrong")
                continue
            if written not in named:  # named by an alias alone: other definitions may have it
                out.append("undecided")
                continue
            if family == "js" and self.oracle is not None:
                verdict = self._ask_oracle(path, text, card, name)
                if verdict != "undecided":
                    out.append(verdict)
                    continue
            places = [
                p for p in self.named.get((family, name), []) if is_test(path) or not is_test(p[0])
            ]
            if family == "c":
                # a header's prototype and its definition are one entity: the definition stands,
                # unless it is the task's own file's, which the index was shown cut at the
                # cursor: there the prototype is what the file sees of it
                # (of the definitions the file reaches: other platforms' may be elsewhere)
                bodies = [p for p in places if not p[0].endswith(_HEADERS)]
                if bodies and card.path.endswith(_HEADERS):
                    if reached is None:
                        reached = self._reached(path, buffer, family)
                    own = [p for p in bodies if p[0] in reached]
                    if own and all(p[0] == path for p in own):
                        bodies = [p for p in places if p not in bodies]
                places = bodies or places
            if places == [(card.path, card.line)]:
                out.append("right")
                continue
            if family in ("go", "java", "c") and "." not in card.name:
                if reached is None:
                    reached = self._reached(path, buffer, family)
                near = {p for p in places if p[0] in reached}
                if near == {(card.path, card.line)}:
                    out.append("right")
                    continue
                if near and (card.path, card.line) not in near:
                    out.append("wrong")
                    continue
            out.append("undecided")
        return out

    def _rust_own(self, code: str) -> set[str]:
        """The names Rust ``code`` takes from its own crate (rule 1 of the module doc)."""
        out: set[str] = set()
        roots = "|".join(sorted(self._crate_roots))
        for tree in _RUST_USE.findall(code):
            if tree.strip().lstrip(":").split("::")[0].strip() in self._crate_roots:
                out.update(_RUST_LEAF.findall(_RUST_RENAMED.sub("", tree)))
        for m in re.finditer(rf"\b(?:{roots})((?:\s*::\s*\w+)+)", _RUST_USE.sub(" ", code)):
            out.update(re.findall(r"\w+", m.group(1)))
        return out

    def _ask_oracle(self, path: str, text: str, card: Card, name: str) -> Verdict:
        assert self.oracle is not None
        # positions as the compiler counts them in the file: strings and comments blanked
        # in place (emptied, a string before a name would move it left, a template over
        # lines would move it up)
        code = code_only(text, "js", keep_positions=True)
        points = []
        for m in re.finditer(rf"(?<![\w$]){re.escape(name)}(?![\w$])", code):
            line = code.count("\n", 0, m.start())
            start = code.rfind("\n", 0, m.start()) + 1
            points.append((line, len(text[start : m.start()].encode("utf-16-le")) // 2))
        if not points:
            return "undecided"
        answers = self.oracle.definitions(path, points)
        found = [d for ds in answers for d in ds]
        if (card.path, card.line) in found:
            return "right"
        # a mention the compiler cannot resolve (a value of a package it cannot find) may be
        # the card's: only mentions that all lead elsewhere make it wrong
        return "wrong" if all(answers) else "undecided"

    def _reached(self, path: str, buffer: str, family: str) -> set[str]:
        """The files ``path`` reaches by its imports (rule 5 of the module doc)."""
        here = str(PurePosixPath(path).parent)
        if family == "c":
            return self._includes(path, buffer)
        reached = set(self._by_dir[here])
        if family == "go":
            for imported in _GO_IMPORT.findall(buffer):
                folder = imported
                if self._go_module and imported.startswith(self._go_module + "/"):
                    folder = imported[len(self._go_module) + 1 :]
                reached.update(
                    p
                    for d, ps in self._by_dir.items()
                    if d == folder or d.endswith("/" + folder)
                    for p in ps
                )
        else:
            for dotted, star in _JAVA_IMPORT.findall(buffer):
                tail = dotted.replace(".", "/")
                if star:
                    reached.update(
                        p for d, ps in self._by_dir.items() if d.endswith(tail) for p in ps
                    )
                else:
                    reached.update(
                        p
                        for p, _, _ in self.index.indexed_files()
                        if p.endswith(tail + ".java")
                        or p.endswith(tail.rsplit("/", 1)[0] + ".java")
                    )
        return reached

    def _includes(self, path: str, buffer: str) -> set[str]:
        seen = {path}
        todo = [(path, buffer)]
        while todo:
            file, text = todo.pop()
            folder = PurePosixPath(file).parent
            for included in _C_INCLUDE.findall(text):
                target = posixpath.normpath(str(folder / included))
                options = (
                    [target]
                    if target in self.index
                    else self._by_name.get(PurePosixPath(included).name, [])
                )
                for found in options:
                    if found not in seen:
                        seen.add(found)
                        todo.append((found, self._text(found)))
        # a header's functions are defined in the .c (.cc, .cpp) file of the same name, beside
        # it if one is
        for header in [p for p in seen if p.endswith(_HEADERS)]:
            stem = posixpath.splitext(header)[0]
            for source in (stem + suffix for suffix in _SOURCES):
                seen.update(
                    [source]
                    if source in self.index
                    else self._by_name.get(PurePosixPath(source).name, [])
                )
        return seen

    def _js_aliases(self, path: str) -> dict[str, set[str]]:
        """The other names a JavaScript/TypeScript file exports its own definitions under,
        by definition name: ``export { stringType as string }`` (not a re-export ``from``
        another module)."""
        if path not in self._aliases:
            found: dict[str, set[str]] = defaultdict(set)
            for m in _JS_EXPORT_LIST.finditer(code_only(self._text(path), "js")):
                for local, alias in _JS_ALIAS.findall(m.group(1)):
                    if local != alias and alias != "default" and alias not in RESERVED["js"]:
                        found[local].add(alias)
            self._aliases[path] = found
        return self._aliases[path]

    def _text(self, path: str) -> str:
        if path not in self._texts:
            self._texts[path] = "\n".join(self.index.file_lines(path))
        return self._texts[path]

"""Model-free measures of the context a prompt gives: does it show the definitions the answer
calls, and code that calls them?

A task's *targets* are the functions, classes and constants of the repository that its ground
truth calls and that are defined outside the task's file (the left context shows that file).

Outside Python the targets are found without the context engine's resolution, which is what
is measured: the callees are read with the language's own comment and string syntax
(``code_langs.read_callees``: ``f(``, ``obj.m(``, ``obj->m(``, ``pkg.F(``, ``Foo::new(``,
``new Foo(``, ``m!(``), and each counts every definition of the index with its last name in
the language family, in another file (a test file only from a test file): any of them shown
counts. ``Foo::new(``/``Foo.of(`` with ``Foo`` a repository class or type counts ``Foo`` and the
``new``/``of`` defined in ``Foo``'s files; a call on a receiver is skipped when its name is a
method of the language's everyday types (``code_langs.common_methods``), and a bare name the
task's file defines itself is local. A Rust macro call ``m!(`` counts the macros ``m!``, not
functions named ``m``; a Rust call of a name the prelude owns (``Ok(``, ``Some(``) or through
one (``Vec::new(``, ``usize::from_str(``) counts nothing (a card of a repository ``type Ok``
would be a wrong card, ``card_check``).

In Python the callees are the dotted names followed by ``(`` in the ground truth's code
(comments, docstrings and literals left out, ``repomem.context.lexer``); each resolves at the
cursor exactly as the context engine resolves the names it makes cards for
(:func:`repomem.context.definitions.resolve_names`). An ``obj.name(`` call that does not resolve
(a receiver whose type the left context does not show) counts every repository definition whose
last name is ``name`` (any of them shown counts), unless ``name`` is a dunder or a method of
common built-in types (``api_calls.COMMON_METHODS``) or ``obj`` is a module imported from
outside the repository (``np.zeros(``).

Per task and method (none for a task without targets):

- ``def_prompt``: the final prompt shows a target's definition: its card, its line in a class
  card's skeleton, or a fragment of the target's file whose shown lines include the target's
  ``def``/``class``/assignment line;
- ``use_prompt``: a fragment the final prompt shows calls a target (``name(`` on a line that
  does not define ``name``): RepoCoder's recall of API uses;
- ``def_at_k``/``use_at_k``: the same over the last iteration's top k fragments (and, for
  definitions, its top k cards) as ranked, before the prompt's budget cuts them.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from repomem.completion.prompt import Prompt
from repomem.context.cards import Card
from repomem.context.definitions import DefinitionHit, resolve_names
from repomem.context.lexer import code_only
from repomem.core import RetrievedFragment
from repomem.index.langs import is_test
from repomem.index.parsing import split_lines
from repomem.index.repo import RepoIndex
from repomem_eval.api_calls import COMMON_METHODS
from repomem_eval.code_langs import FAMILY_OF, RESERVED, common_methods, read_callees
from repomem_eval.metrics import AT_K, code_lines

_CALLEE = re.compile(r"(?P<dot>\.\s*)?(?<!\w)(?P<name>[A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*)\s*\(")
_DEFINES = re.compile(r"(?:\bdef|\bclass)\s+$")

# (language family, last name component) -> (file, 0-based definition line) of each definition
Named = Mapping[tuple[str, str], list[tuple[str, int]]]


@dataclass(frozen=True)
class Target:
    """A repository definition a task's ground truth calls: its file, the 0-based line of its
    ``def``/``class``/assignment, its bare ``name`` and that line stripped (``header``)."""

    path: str
    line: int
    name: str
    header: str


def definitions_by_name(index: RepoIndex) -> dict[tuple[str, str], list[tuple[str, int]]]:
    """Every definition of the index by language family (``code_langs.FAMILY_OF``) and last
    name component (``Cls.run`` is ``run``): what an unresolved ``obj.name(`` may call."""
    named: dict[tuple[str, str], list[tuple[str, int]]] = defaultdict(list)
    for path, pf in index.parses().items():
        family = FAMILY_OF.get(pf.language)
        if family is None:
            continue
        for d in pf.definitions:
            key = (family, d.name.rsplit(".", 1)[-1])
            named[key].append((path, int(pf.node_start[d.node])))
    return dict(named)


def type_names(index: RepoIndex) -> frozenset[tuple[str, str]]:
    """(language family, name) of every class or type the index defines: the owners a
    ``Foo::new(`` or ``Foo.of(`` call may name."""
    return frozenset(
        (FAMILY_OF[pf.language], d.name.rsplit(".", 1)[-1])
        for pf in index.parses().values()
        if pf.language in FAMILY_OF
        for d in pf.definitions
        if d.is_class
    )


def callees(ground_truth: str, language: str = "python") -> list[tuple[str, bool]]:
    """The dotted names the text calls, in order, each with whether it is an attribute of an
    expression that is not a name (``f().name(``, ``x[0].name(``)."""
    found = []
    for code in split_lines(code_only(ground_truth, language)):
        for m in _CALLEE.finditer(code):
            if not _DEFINES.search(code[: m.start("name")]):
                found.append((re.sub(r"\s+", "", m["name"]), m["dot"] is not None))
    return found


def task_targets(
    index: RepoIndex,
    path: str,
    left_context: str,
    ground_truth: str,
    named: Named,
    types: frozenset[tuple[str, str]] = frozenset(),
) -> tuple[Target, ...]:
    """The targets of a task completed at the end of ``left_context`` in ``path`` (the index
    holding the user's buffer), in the order the ground truth calls them; ``types`` are the
    index's :func:`type_names` (outside Python)."""
    pf = index.parse(path)
    if pf is None:
        return ()
    if pf.language != "python":
        return _code_targets(index, path, ground_truth, named, types)
    calls = callees(ground_truth, pf.language)
    names = list(dict.fromkeys(n for n, chained in calls if not chained))
    resolved = dict(zip(names, resolve_names(index, path, left_context, names), strict=True))
    # names the file binds to modules outside the repository: ``np.zeros(`` is numpy's
    external = {b.name for b in pf.imports if index.resolver.lookup(path, b.name) is None}
    found: dict[tuple[str, int], Target] = {}
    for name, chained in calls:
        hit = None if chained else resolved[name]
        if hit is not None:
            file, qualname, node = hit
            places = [(file, int(index.parses()[file].node_start[node]))]
            bare = qualname.rsplit(".", 1)[-1]
        else:
            parts = name.split(".")
            bare = parts[-1]
            if (
                (len(parts) == 1 and not chained)
                or (bare.startswith("__") and bare.endswith("__"))
                or bare in COMMON_METHODS
                or (not chained and parts[0] in external)
            ):
                continue
            places = named.get(("python", bare), [])
        for file, line in places:
            if file != path and (file, line) not in found:
                found[(file, line)] = Target(file, line, bare, index.file_lines(file)[line].strip())
    return tuple(found.values())


def _code_targets(
    index: RepoIndex,
    path: str,
    ground_truth: str,
    named: Named,
    types: frozenset[tuple[str, str]],
) -> tuple[Target, ...]:
    """The targets of a task outside Python (see the module doc)."""
    pf = index.parses()[path]
    family = FAMILY_OF[pf.language]
    local = {d.name.rsplit(".", 1)[-1] for d in pf.definitions}
    in_test = is_test(path)

    def places(name: str) -> list[tuple[str, int]]:
        return [
            (file, line)
            for file, line in named.get((family, name), [])
            if file != path and (in_test or not is_test(file))
        ]

    found: dict[tuple[str, int], Target] = {}
    for callee in read_callees(ground_truth, family):
        bare = callee.parts[-1]
        owner = callee.parts[-2] if len(callee.parts) > 1 and not callee.new else None
        if family == "rust" and (bare in RESERVED[family] or owner in RESERVED[family]):
            continue  # the prelude's: ``Ok(x)`` is no call of a ``type Ok``, nor ``Vec::new(``
        if owner is not None and (family, owner) in types:
            # ``Foo::new(``: the type, and the ``new`` its own files define
            files = {file for file, _ in named[(family, owner)]}
            chosen = [(owner, p) for p in places(owner)]
            chosen += [(bare, p) for p in places(bare) if p[0] in files]
        elif owner is not None or callee.chained:
            if bare in common_methods(pf.language):
                continue
            chosen = [(bare, p) for p in places(bare)]
        elif bare in local:
            continue
        else:
            chosen = [(bare, p) for p in places(bare)]
        for name, (file, line) in chosen:
            if (file, line) not in found:
                header = index.file_lines(file)[line].strip()
                found[(file, line)] = Target(file, line, name, header)
    return tuple(found.values())


def context_scores(
    targets: Sequence[Target],
    prompt: Prompt,
    retrieved: Sequence[RetrievedFragment],
    definitions: Sequence[DefinitionHit],
) -> dict[str, bool] | None:
    """The task's context measures (see the module doc); None for a task without targets.
    ``retrieved`` and ``definitions`` are the last iteration's, best first."""
    if not targets:
        return None
    scores = {
        "def_prompt": shows_definition(targets, prompt.fragments, prompt.cards),
        "use_prompt": shows_use(targets, prompt.fragments),
    }
    for k in AT_K:
        cards = [h.card for h in definitions[:k]]
        scores[f"def_at_{k}"] = shows_definition(targets, retrieved[:k], cards)
    for k in AT_K:
        scores[f"use_at_{k}"] = shows_use(targets, retrieved[:k])
    return scores


def _shown(fragment: RetrievedFragment) -> list[str]:
    return code_lines(fragment.shown or fragment.text)


def shows_definition(
    targets: Sequence[Target], fragments: Sequence[RetrievedFragment], cards: Sequence[Card]
) -> bool:
    """A card of a target (or a class card whose skeleton lists it, or a C type's card listing
    its declaration among the functions taking the type), or a fragment of a target's file
    showing its definition line."""
    carded = {(c.path, line) for c in cards for line in (c.line, *c.methods)}
    carded |= {listed for c in cards for listed in c.listed}
    for t in targets:
        if (t.path, t.line) in carded:
            return True
        for f in fragments:
            if any(loc.path == t.path for loc in f.locations) and t.header in _shown(f):
                return True
    return False


def shows_use(targets: Sequence[Target], fragments: Sequence[RetrievedFragment]) -> bool:
    """A fragment with a line that calls a target's name and does not define it (``def``,
    ``class``, ``function``, ``fn``, ``func`` lines; a Java or C definition's header, which
    names no such word, counts as a use)."""
    checks = [
        (
            re.compile(rf"\b{name}\s*\("),
            re.compile(rf"\b(?:def|class|function\*?|fn|func(?:\s*\([^)]*\))?)\s+{name}\b"),
        )
        for name in dict.fromkeys(t.name for t in targets)
    ]
    return any(
        call.search(line) and not define.search(line)
        for f in fragments
        for line in _shown(f)
        for call, define in checks
    )

"""The import layers, kept: arrows point down the pipeline and no two modules import each other.

Layers, bottom to top: the foundation (errors, settings, the core data types), ``index``,
``context``, ``completion``, ``docmem`` (doc memory: a context source that can also ask a
model), then the front ends, siblings that never import each other (the CLI's ``commands``,
the language server), and the eval on top. Every import counts, whether at the top of a
module, inside a function or for type checking only: each is an arrow a reader follows.

The lists of known exceptions are the debt this check has not yet seen paid; a fix must take
its entry out (a stale entry fails too), and a new exception must not be added lightly.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"repomem": ROOT, "lsp_server": ROOT, "repomem_eval": ROOT / "eval"}

#: bottom to top; a module belongs to the first layer one of whose prefixes it has
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "foundation",
        (
            "repomem.errors",
            "repomem.core",
            "repomem.fim",
            "repomem.config",
            "repomem.settings",
            "repomem.trust",
            "repomem.workspace",
        ),
    ),
    ("index", ("repomem.index",)),
    ("context", ("repomem.context",)),
    ("completion", ("repomem.completion",)),
    ("docmem", ("repomem.docmem",)),
    ("front ends", ("repomem.commands", "repomem.cli", "lsp_server")),
    ("eval", ("repomem_eval",)),
)

#: front ends of one layer that must not import each other
SIBLINGS: tuple[tuple[str, ...], ...] = (("repomem.commands", "repomem.cli"), ("lsp_server",))

#: upward imports and imports between sibling front ends that exist today: (importer, imported)
KNOWN_UPWARD: frozenset[tuple[str, str]] = frozenset()

#: import circles that exist today, each as the set of modules in it
KNOWN_CIRCLES: frozenset[frozenset[str]] = frozenset()


def _modules() -> dict[str, Path]:
    out = {}
    for package, base in PACKAGES.items():
        for path in (base / package).rglob("*.py"):
            parts = path.relative_to(base).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules ``name`` imports (``from pkg import mod`` names the module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([base] if base else [])])
            targets += [
                f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names
            ]
    found = set()
    for target in targets:
        while target and target not in modules:
            target = target.rpartition(".")[0]
        if target and target != name:
            found.add(target)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _layer(name: str) -> int | None:
    for rank, (_, prefixes) in enumerate(LAYERS):
        if any(name == p or name.startswith(p + ".") for p in prefixes):
            return rank
    return None


def _sibling(name: str) -> int | None:
    for rank, prefixes in enumerate(SIBLINGS):
        if any(name == p or name.startswith(p + ".") for p in prefixes):
            return rank
    return None


def _circles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: set[frozenset[str]] = set()

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                out.add(frozenset(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph)))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return out


def test_every_module_has_a_layer() -> None:
    graph = _graph()
    assert "repomem.index.repo" in graph and "lsp_server.server" in graph
    unplaced = sorted(m for m in graph if m != "repomem" and _layer(m) is None)
    assert unplaced == []


def test_imports_point_down_the_layers() -> None:
    upward = set()
    for importer, imported in _graph().items():
        for target in imported:
            if target == "repomem":  # the package itself: its version
                continue
            low, high = _layer(target), _layer(importer)
            across = _sibling(importer) is not None and _sibling(target) not in (
                None,
                _sibling(importer),
            )
            if low is not None and high is not None and (low > high or across):
                upward.add((importer, target))
    assert sorted(upward - KNOWN_UPWARD) == [], "imports that point up or across front ends"
    assert sorted(KNOWN_UPWARD - upward) == [], "fixed: take these out of KNOWN_UPWARD"


def test_no_import_circles() -> None:
    circles = _circles(_graph())
    new = [sorted(c) for c in circles - KNOWN_CIRCLES]
    assert new == [], "modules that import each other"
    assert [sorted(c) for c in KNOWN_CIRCLES - circles] == [], "changed: update KNOWN_CIRCLES"


def test_the_check_sees_an_upward_import_and_a_circle() -> None:
    graph = {"repomem.index.a": {"repomem.context.b"}, "repomem.context.b": {"repomem.index.a"}}
    assert _circles(graph) == {frozenset(graph)}
    assert _layer("repomem.index.a") < _layer("repomem.context.b")
    assert _sibling("lsp_server.server") != _sibling("repomem.commands.ask")

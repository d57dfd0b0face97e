"""Every module of the project has a test file that imports it: a module reached only through
others, or only as a subprocess, has no test of its own that says what it does.

The modules are read from the tree when the test runs, so a module added later is held to
the same rule. A package's ``__init__.py`` counts only when it holds code (more than its
docstring). Imports count wherever a test file makes them: ``import a.b``,
``from a.b import c`` (``a.b``, and ``a.b.c`` where that is a module).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("repomem", "lsp_server")


def _modules() -> dict[str, Path]:
    """Dotted name -> file, for every module holding code."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                body = ast.parse(path.read_text(encoding="utf-8")).body
                if all(isinstance(s, ast.Expr | ast.ImportFrom) for s in body):
                    continue  # a docstring (and ``from __future__``): nothing to test
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _imported_by_tests() -> set[str]:
    names: set[str] = set()
    for path in (ROOT / "tests").rglob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_the_check_sees_the_packages() -> None:
    modules = _modules()
    assert "repomem.index.graph" in modules and "lsp_server.server" in modules
    assert "repomem.completion" not in modules  # a docstring only
    assert "repomem.commands" in modules  # its __init__ holds code


def test_every_module_has_a_test_that_imports_it() -> None:
    imported = _imported_by_tests()
    untested = sorted(name for name in _modules() if name not in imported)
    assert not untested, f"modules no test file imports: {untested}"

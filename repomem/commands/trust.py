"""``repomem trust [PATH]``: let a repository's own settings choose the backend, server,
credential variable and model (see ``repomem.trust``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from repomem.errors import RepomemError
from repomem.settings import PROTECTED, repository_tables
from repomem.trust import is_trusted, load, revoke, trust

NAME = "trust"
HELP = (
    "trust a repository's .repomem.toml / pyproject.toml settings as they are now, so that "
    "they may choose where completions are sent (backend, url, api_key_env, model)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", nargs="?", default=".", help="repository root (default: .)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--list", action="store_true", help="list the trusted repositories")
    what.add_argument("--revoke", action="store_true", help="stop trusting PATH's settings")


def run(args: argparse.Namespace) -> int:
    if args.list:
        for root, files in sorted(load().items()):
            states = [f"{name} ({_state(Path(root), name)})" for name in sorted(files)]
            print(f"{root}: {', '.join(states)}")
        return 0
    root = Path(args.path)
    if not root.is_dir():
        raise RepomemError(f"no such directory: {root}")
    root = root.resolve()
    if args.revoke:
        print(f"{root}: {'no longer trusted' if revoke(root) else 'was not trusted'}")
        return 0
    tables = repository_tables(root)
    if not tables:
        raise RepomemError(f"{root} has no settings to trust (no .repomem.toml or [tool.repomem])")
    trust(root, {path.name: table for path, table, _ in tables})
    for path, table, _ in tables:
        keys = [
            f"{section}.{key} = {value!r}"
            for section, values in table.items()
            if isinstance(values, dict)
            for key, value in values.items()
            if (section, key) in PROTECTED
        ]
        chosen = "; ".join(keys) if keys else "no key that only you may set"
        print(f"trusted {path}: {chosen}")
    return 0


def _state(root: Path, name: str) -> str:
    """Whether a trusted file still holds the settings that were trusted."""
    for path, table, _ in repository_tables(root) if root.is_dir() else []:
        if path.name == name:
            return "trusted" if is_trusted(root, name, table) else "changed since trusted"
    return "gone"

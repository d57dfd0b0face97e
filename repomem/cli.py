"""The ``repomem`` command line: discovers sub-commands and turns errors into one clean line."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from importlib.metadata import entry_points
from types import ModuleType

import repomem.commands
from repomem import __version__
from repomem.errors import RepomemError


def _command_modules() -> list[ModuleType]:
    modules = [
        importlib.import_module(f"repomem.commands.{info.name}")
        for info in pkgutil.iter_modules(repomem.commands.__path__)
        if not info.name.startswith("_")  # helpers the commands share
    ]
    # by name: an environment that also holds this project under an older distribution name
    # lists each entry point twice
    found = {ep.name: ep for ep in entry_points(group="repomem.commands")}
    modules += [ep.load() for ep in found.values()]
    return sorted(modules, key=lambda m: m.NAME)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="repomem",
        description="Repository-aware code completion with relation-aware retrieval.",
    )
    parser.add_argument("--version", action="version", version=f"repomem {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in _command_modules():
        p = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args._run(args) or 0)
    except RepomemError as exc:
        print(f"repomem: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("repomem: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

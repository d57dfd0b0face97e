"""``repomem eval``: the evaluation harness's entry into the ``repomem`` CLI.

Each sub-command lives in its own module that defines ``NAME``, ``HELP``,
``add_arguments(parser)`` and ``run(args) -> int`` (the same protocol as ``repomem.commands``);
adding one means listing its module in ``SUBCOMMAND_MODULES``.
"""

from __future__ import annotations

import argparse
import importlib
from types import ModuleType

NAME = "eval"
HELP = "Evaluate retrieval-augmented completion on RepoEval-style benchmarks."

SUBCOMMAND_MODULES: tuple[str, ...] = (
    "repomem_eval.make_benchmark",
    "repomem_eval.devsuite",
    "repomem_eval.compare",
    "repomem_eval.repoeval",
)


def _subcommands() -> list[ModuleType]:
    return [importlib.import_module(name) for name in SUBCOMMAND_MODULES]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="eval_command", required=True, metavar="EVAL_COMMAND")
    for module in _subcommands():
        p = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_eval_run=module.run)


def run(args: argparse.Namespace) -> int:
    return int(args._eval_run(args) or 0)

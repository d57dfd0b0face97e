"""Sub-commands of the ``repomem`` CLI: each module defines ``NAME``, ``HELP``,
``add_arguments(parser)`` and ``run(args) -> int``. Packages outside ``repomem`` (the LSP
server, the evaluation harness) add theirs through the ``repomem.commands`` entry-point group,
so that ``repomem`` never imports them. The model-backend flags several commands take are
defined here, once."""

from __future__ import annotations

import argparse


def add_backend_arguments(parser: argparse.ArgumentParser) -> None:
    """``--backend``, ``--model`` and ``--url``: the ``[backend]`` settings for this run."""
    parser.add_argument(
        "--backend", help="builtin (default, no model), transformers, vllm or openai"
    )
    parser.add_argument(
        "--model", help="model directory, or the model name an OpenAI-compatible server serves"
    )
    parser.add_argument("--url", help="base URL of an OpenAI-compatible server")


def backend_overrides(args: argparse.Namespace) -> dict[str, str | None]:
    """The ``[backend]`` settings the flags of ``add_backend_arguments`` override."""
    return {"backend": args.backend, "model": args.model, "url": args.url}

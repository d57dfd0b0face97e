"""Sub-commands of the ``repomem`` CLI: each module defines ``NAME``, ``HELP``,
``add_arguments(parser)`` and ``run(args) -> int``. Packages outside ``repomem`` (the LSP
server, the evaluation harness) add theirs through the ``repomem.commands`` entry-point group,
so that ``repomem`` never imports them. The model-backend flags several commands take, and the
way a command opens a repository's index, are defined here, once."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from repomem.config import IndexConfig
    from repomem.index.repo import RepoIndex
    from repomem.settings import Settings


def repository_settings(
    root: Path, overrides: Mapping[str, Mapping[str, Any]] | None = None
) -> Settings:
    """The settings a command runs with in ``root``, saying once on stderr which of the
    repository's own settings were left out until the user trusts them."""
    from repomem.settings import load_settings, untrusted_notice

    settings = load_settings(root, overrides=overrides)
    notice = untrusted_notice(settings, root)
    if notice is not None:
        print(f"repomem: {notice}", file=sys.stderr)
    return settings


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


def open_index(root: Path, config: IndexConfig, *, build: bool) -> RepoIndex:
    """The saved index of ``root`` as the repository's ``[index]`` settings ask for
    (``repomem.index.opening``): built on first use or rebuilt with changed settings
    (``build``), or, for a read-only command, reported when built with other settings."""
    # Imported here: every command module is imported for `repomem --help`, which must stay fast.
    from repomem.index import opening

    def say(message: str) -> None:
        print(f"repomem: {message}", file=sys.stderr)

    opened = opening.open_index(root, config, build=build, say=say)
    if opened.changed:
        say(
            f"the index of {root} was built with other index settings"
            f" ({', '.join(opened.changed)}); run `repomem index` to apply them"
        )
    return opened.index

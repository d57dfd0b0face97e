"""``repomem serve``: run the language server over stdio (or TCP for debugging)."""

from __future__ import annotations

import argparse

from repomem.errors import RepomemError

NAME = "serve"
HELP = "run the repomem language server (stdio by default; --tcp HOST:PORT for debugging)"


def _host_port(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise RepomemError(f"--tcp expects HOST:PORT (e.g. 127.0.0.1:2087), got {value!r}")
    return host, int(port)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")
    parser.add_argument(
        "--log-level",
        default="INFO",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="stderr log level (default INFO)",
    )


def run(args: argparse.Namespace) -> int:
    from lsp_server.server import serve
    from repomem.index.trim import limit_arenas

    limit_arenas()  # the server updates its index from worker threads, each with an arena
    tcp = _host_port(args.tcp) if args.tcp else None
    serve(tcp=tcp, log_level=args.log_level)
    return 0

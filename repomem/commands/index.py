"""``repomem index [PATH]``: build or refresh a repository's index and say what it did."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from tqdm import tqdm

from repomem.commands import repository_settings
from repomem.errors import RepomemError
from repomem.index.build import IndexSummary
from repomem.index.files import IGNORED_AT_TOP
from repomem.index.jit import compile_notice
from repomem.index.repo import RepoIndex
from repomem.settings import Settings, with_default

NAME = "index"
HELP = "index a repository (tree-sitter graph, fragments, relations, BM25) into .repomem/"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", nargs="?", default=".", help="repository root (default: .)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument(
        "--index-dir", help="where to keep the index: index.index_dir (default: PATH/.repomem)"
    )
    parser.add_argument(
        "--epsilon",
        type=float,
        help="relation strength cutoff: " + with_default("index.relation_epsilon"),
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def index_settings(root: Path, args: argparse.Namespace) -> Settings:
    """The repository's settings, with this command's flags on top of its ``[index]``."""
    index_dir = str(Path(args.index_dir).resolve()) if args.index_dir else None
    overrides = {"index": {"index_dir": index_dir, "relation_epsilon": args.epsilon}}
    return repository_settings(root, overrides)


def run(args: argparse.Namespace) -> int:
    root = Path(args.path)
    if not root.exists():
        raise RepomemError(f"no such directory: {root}")
    if not root.is_dir():
        raise RepomemError(f"{root} is a file; give the repository's directory")
    root = root.resolve()
    settings = index_settings(root, args)
    config = settings.index
    tqdm.monitor_interval = 0  # no monitor thread: the index forks its parser processes
    bars: dict[str, tqdm] = {}

    def progress(stage: str, done: int, total: int) -> None:
        bar = bars.get(stage)
        if bar is None:
            bar = bars[stage] = tqdm(
                total=total,
                desc=f"{stage:>9}",
                unit=" items",
                file=sys.stderr,
                leave=False,
                disable=args.no_progress or None,
            )
        bar.update(done - bar.n)

    try:
        with compile_notice(lambda line: tqdm.write(line, file=sys.stderr)):
            _, summary = RepoIndex.build(root, config, progress=progress)
    finally:
        for bar in bars.values():
            bar.close()
    if args.json:
        untrusted = [{"key": u.key, "file": str(u.source)} for u in settings.untrusted]
        print(json.dumps({**asdict(summary), "untrusted_settings": untrusted}, indent=2))
    else:
        print(format_summary(root, summary))
    if not summary.files_by_language and IGNORED_AT_TOP in summary.skipped:
        print(
            f"repomem: nothing was indexed: {root / '.gitignore'} ignores "
            f"{summary.skipped[IGNORED_AT_TOP]:,} entries at the top of the tree; index a "
            "folder inside it, or take those patterns out",
            file=sys.stderr,
        )
    return 0


def _counts(d: dict[str, int]) -> str:
    return ", ".join(f"{k} {v:,}" for k, v in sorted(d.items(), key=lambda kv: -kv[1])) or "none"


def format_summary(root: Path, s: IndexSummary) -> str:
    secs = ", ".join(f"{k} {v:.2f} s" for k, v in s.seconds.items() if k != "total")
    return "\n".join(
        [
            f"Indexed {root} in {s.seconds['total']:.2f} s",
            f"  files       {sum(s.files_by_language.values()):,} ({_counts(s.files_by_language)})",
            f"  skipped     {sum(s.skipped.values()):,} ({_counts(s.skipped)})",
            f"  parsed      {s.reparsed:,} (unchanged, reused: {s.reused:,})",
            f"  fragments   {s.fragments:,}",
            f"  graph nodes {sum(s.nodes.values()):,} ({_counts(s.nodes)})",
            f"  graph edges {sum(s.edges.values()):,} ({_counts(s.edges)})",
            f"  relations   {s.relations:,} ({s.truncated_fragments:,} fragments at the cap)",
            f"  index size  {s.index_bytes / 1e6:.1f} MB",
            f"  time        {secs}",
            *(
                [f"  peak memory {', '.join(f'{k} {v:,.0f} MB' for k, v in s.peak_mb.items())}"]
                if s.peak_mb
                else []
            ),
        ]
    )

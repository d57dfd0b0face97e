"""``repomem retrieve FILE:LINE``: show which fragments the cursor's context retrieves, and why."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from repomem.commands import open_index
from repomem.commands.complete import explain_definitions
from repomem.context.definitions import DefinitionHit
from repomem.context.scorer import Exclusion
from repomem.index.parsing import split_lines
from repomem.settings import load_settings
from repomem.workspace import check_cursor_line, parse_position

NAME = "retrieve"
HELP = (
    "top-K fragments for the lines before FILE:LINE, with s_ind, s_env and s_rel, and the"
    " definitions the code before the cursor uses, and code calling the best of them"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("position", metavar="FILE:LINE", help="cursor position, 1-based line")
    parser.add_argument("--k", type=int, help="how many fragments: completion.k (default 10)")
    parser.add_argument(
        "--alpha", type=float, help="environment weight: completion.alpha (default 0)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    pos = parse_position(args.position)
    settings = load_settings(pos.root, overrides={"completion": {"k": args.k, "alpha": args.alpha}})
    index = open_index(pos.root, settings.index, build=False)
    text = (pos.root / pos.path).read_text(encoding="utf-8", errors="replace")
    index.apply_buffer(pos.path, text)  # the file as it is now, not as indexed
    check_cursor_line(text, pos.line + 1, pos.name)
    lines = split_lines(text)
    k, alpha, window = settings.completion.k, settings.completion.alpha, settings.completion.window
    query = "\n".join(lines[max(0, pos.line - window) : pos.line])
    exclusion = Exclusion(pos.path, max(0, pos.line - window), pos.line + window)
    hits = index.retrieve(query, k=k, alpha=alpha, exclusion=exclusion)
    left = "\n".join(lines[: pos.line]) + "\n" if pos.line else ""
    definitions = index.definitions(pos.path, left, window=window)
    usages = index.usages(
        query,
        pos.path,
        definitions,
        k=settings.completion.max_usages,
        exclusion=exclusion,
        retrieved=hits,
    )
    if args.json:
        fragments = [_hit_json(h) for h in hits]
        cards = [{**asdict(d.card), **_definition_json(d)} for d in definitions]
        calls = [_hit_json(u) for u in usages]
        print(json.dumps({"fragments": fragments, "definitions": cards, "usages": calls}, indent=2))
        return 0
    for rank, h in enumerate(hits, 1):
        where = ", ".join(f"{loc.path}:{loc.start + 1}-{loc.end}" for loc in h.locations)
        print(f"{rank:>2}. {where}  s_rel={h.s_rel:.3f}  s_ind={h.s_ind:.3f}  s_env={h.s_env:.3f}")
    if not hits:
        print("no fragment matches the context")
    if definitions:
        print("definitions the context uses:")
        explain_definitions(definitions, None, sys.stdout)
    if usages:
        print("code calling them:")
        for u in usages:
            where = ", ".join(f"{loc.path}:{loc.start + 1}-{loc.end}" for loc in u.locations)
            print(f"  u. {where}  calls {u.usage_of}  s_ind={u.s_ind:.3f}")
    return 0


def _definition_json(d: DefinitionHit) -> dict:
    return {"named_as": d.name, "how": d.how, "strength": d.strength, "distance": d.distance}


def _hit_json(h) -> dict:  # noqa: ANN001
    d = asdict(h)
    d["locations"] = [asdict(loc) for loc in h.locations]
    return d

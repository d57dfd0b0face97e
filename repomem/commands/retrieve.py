"""``repomem retrieve FILE:LINE``: show which fragments the cursor's context retrieves, and why."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from repomem.commands import open_index, repository_settings
from repomem.commands._explain import definition_line, fragment_line
from repomem.completion.prompt import unseen_cards
from repomem.context.definitions import DefinitionHit, find_definitions
from repomem.context.usages import find_usages
from repomem.core import Exclusion
from repomem.index.parsing import split_lines
from repomem.settings import Settings, with_default
from repomem.workspace import check_cursor_line, parse_position

NAME = "retrieve"
HELP = (
    "top-K fragments for the lines before FILE:LINE, with s_ind, s_env and s_rel, and the"
    " definitions the code before the cursor uses, and code calling the best of them"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("position", metavar="FILE:LINE", help="cursor position, 1-based line")
    parser.add_argument("--k", type=int, help="how many fragments: " + with_default("completion.k"))
    parser.add_argument(
        "--alpha", type=float, help="environment weight: " + with_default("completion.alpha")
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--all",
        action="store_true",
        help="list every definition the code before the cursor uses, not only those named in"
        " the query window or reached on the code graph",
    )


def run(args: argparse.Namespace) -> int:
    pos = parse_position(args.position)
    overrides = {"completion": {"k": args.k, "alpha": args.alpha}}
    settings = repository_settings(pos.root, overrides)
    index = open_index(pos.root, settings.index, build=False)
    text = (pos.root / pos.path).read_text(encoding="utf-8", errors="replace")
    index.apply_buffer(pos.path, text)  # the file as it is now, not as indexed
    check_cursor_line(text, pos.line + 1, pos.name)
    lines = split_lines(text)
    k, alpha = settings.completion.k, settings.completion.alpha
    query_window = settings.completion.query_lines  # also the radius hidden around the cursor
    query = "\n".join(lines[max(0, pos.line - query_window) : pos.line])
    exclusion = Exclusion.around(pos.path, pos.line, query_window)
    hits = index.retrieve(query, k=k, alpha=alpha, exclusion=exclusion)
    left = "\n".join(lines[: pos.line]) + "\n" if pos.line else ""
    definitions = find_definitions(index, pos.path, left, window=query_window)
    usages = find_usages(
        index,
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
    ranking = "BM25 (alpha 0)" if alpha == 0 else f"FragRel (alpha {alpha:g})"
    print(f"similar code for the {query_window} lines before line {pos.line + 1}, by {ranking}:")
    for rank, h in enumerate(hits, 1):
        print(f"  {rank:>2}. {fragment_line(h, alpha)}")
    if not hits:
        print("  no fragment matches the context")
    if usages:
        print("code calling the best definitions below:")
        for u in usages:
            print(f"      {fragment_line(u, alpha)}")
    if definitions:
        listed = definitions if args.all else _near(definitions, pos.path, left, settings)
        hidden = len(definitions) - len(listed)
        more = (
            f"; {hidden} more that a prompt leaves out (the file's own above the cursor, or"
            " beyond the query window and the code graph's reach; --all lists them)"
            if hidden
            else ""
        )
        print(f"definitions the code before the cursor uses, best first{more}:")
        for rank, d in enumerate(listed, 1):
            print(f"  d{rank:<2} {definition_line(d)}")
    return 0


def _near(
    definitions: list[DefinitionHit], path: str, left: str, settings: Settings
) -> list[DefinitionHit]:
    """The definitions a prompt can take: not the file's own above the cursor (the prompt
    leaves those out, ``unseen_cards``), named in the query window or reached on the code
    graph from it, at most ``completion.max_definitions``."""
    query_window = settings.completion.query_lines
    unseen = {id(c) for c in unseen_cards([d.card for d in definitions], path, left)}
    near = [
        d
        for d in definitions
        if (d.distance <= query_window or d.strength > 0) and id(d.card) in unseen
    ]
    return near[: settings.completion.max_definitions]


def _definition_json(d: DefinitionHit) -> dict:
    return {"named_as": d.name, "how": d.how, "strength": d.strength, "distance": d.distance}


def _hit_json(h) -> dict:  # noqa: ANN001
    d = asdict(h)
    d["locations"] = [asdict(loc) for loc in h.locations]
    return d

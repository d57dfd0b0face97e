"""What ``repomem complete --explain`` and ``repomem retrieve`` print about the context: one
line per piece, labelled by its channel (similar code, code calling a definition, a range
the user just edited or viewed, a definition card), and only the scores that mean something
at the alpha in use."""

from __future__ import annotations

from typing import TextIO

from repomem.completion.engine import CompletionResult, Iteration
from repomem.context.definitions import DefinitionHit
from repomem.core import RetrievedFragment


def fragment_line(fragment: RetrievedFragment, alpha: float) -> str:
    """Where a fragment is and its scores (BM25 alone at alpha 0, where s_rel = s_ind)."""
    where = ", ".join(f"{loc.path}:{loc.start + 1}-{loc.end}" for loc in fragment.locations)
    if alpha == 0:
        scores = f"BM25 {fragment.s_ind:.3f}"
    else:
        scores = f"s_rel={fragment.s_rel:.3f} s_ind={fragment.s_ind:.3f} s_env={fragment.s_env:.3f}"
    if fragment.usage_of:
        return f"{where}  calls {fragment.usage_of}  BM25 {fragment.s_ind:.3f}"
    if fragment.recent:
        return f"{where}  Jaccard {fragment.s_ind:.3f}"
    return f"{where}  {scores}"


def definition_line(hit: DefinitionHit) -> str:
    """Where a card's definition is, which name brought it and how it resolved, its Eq. 8
    strength from the cursor's window."""
    c = hit.card
    up = f"{hit.distance} line{'' if hit.distance == 1 else 's'} up"
    return (
        f"{c.path}:{c.line + 1} {c.kind} {c.name}  <- {hit.name} ({hit.how}; {up})"
        f"  strength={hit.strength:.3f}"
    )


def _labelled(fragment: RetrievedFragment, alpha: float) -> str:
    channel = "usage" if fragment.usage_of else "similar"
    if fragment.recent:
        channel = f"recent {fragment.recent}"
    return f"{channel:<11} {fragment_line(fragment, alpha)}"


def explain(
    result: CompletionResult, context_window: int, alpha: float, out: TextIO, *, every: bool
) -> None:
    """Per iteration: the prompt's pieces top to bottom as the model reads them (fragments
    most relevant last, then cards most relevant last, then the file), its token counts, the
    completion and the time spent; with ``every``, also what was found and left out."""
    for number, it in enumerate(result.iterations, start=1):
        query = f"{len(it.query.splitlines())} lines"
        ranking = "BM25" if alpha == 0 else f"FragRel, alpha {alpha:g}"
        print(f"iteration {number}: query = {query}, ranked by {ranking}", file=out)
        _prompt_pieces(it, alpha, out)
        left_out = _left_out(it, alpha)
        if every:
            for piece in left_out:
                print(f"  [left out] {piece}", file=out)
        elif left_out:
            found = len(it.retrieved) + len(it.definitions)
            print(
                f"  left out: {len(left_out)} of {found} pieces found (--explain-all lists them)",
                file=out,
            )
        p = it.prompt
        fim = f", fill-in-the-middle: {p.fim}" if p.fim else ""
        print(
            f"  prompt: {p.total_tokens} of {context_window} tokens (retrieved"
            f" {p.retrieved_tokens}, definitions {p.definitions_tokens}, left {p.left_tokens},"
            f" right {p.right_tokens}{fim})",
            file=out,
        )
        sure = "" if it.confidence is None else f" (confidence {it.confidence:.2f})"
        print(f"  completion: {it.completion!r}{sure}", file=out)
        print(
            f"  time: retrieval {it.retrieval_s * 1e3:.1f} ms, prompt {it.prompt_s * 1e3:.1f} ms,"
            f" generation {it.generation_s * 1e3:.1f} ms",
            file=out,
        )


def _prompt_pieces(it: Iteration, alpha: float, out: TextIO) -> None:
    shown = it.prompt.fragments
    cards = {h.card.key: h for h in it.definitions}
    if not shown and not it.prompt.cards:
        print("  the prompt holds the file alone (nothing retrieved fits)", file=out)
        return
    print("  the prompt, top to bottom:", file=out)
    for fragment in reversed(shown):
        print(f"    {_labelled(fragment, alpha)}", file=out)
    for card in reversed(it.prompt.cards):
        hit = cards.get(card.key)
        line = definition_line(hit) if hit else f"{card.path}:{card.line + 1}"
        print(f"    definition  {line}", file=out)
    print("    the file up to the cursor", file=out)


def _left_out(it: Iteration, alpha: float) -> list[str]:
    shown = {id(f) for f in it.prompt.fragments}
    cards = {c.key for c in it.prompt.cards}
    pieces = [_labelled(f, alpha) for f in it.retrieved if id(f) not in shown]
    pieces += [
        f"definition  {definition_line(h)}" for h in it.definitions if h.card.key not in cards
    ]
    return pieces

"""RepoCoder's prompt: retrieved code as a comment block above the in-file left context.

The layout is RepoCoder's (``build_prompt.py``), which FragRel reuses unchanged, so that
benchmark numbers are comparable with the papers::

    # Here are some relevant code fragments from other files of the repo:
    # --------------------------------------------------
    # the below code fragment can be found in:
    # pkg/module.py
    # --------------------------------------------------
    # <each shown line of the fragment>
    # --------------------------------------------------
    <more blocks, the most relevant last, nearest the cursor>

    <left context>

When definition cards are given (``repomem.context``), they follow the retrieved code, nearer
the cursor, in the same comment style, most relevant last, under their own share of the
retrieved-code budget::

    # Here are the definitions of names the code uses:
    # --------------------------------------------------
    # pkg/util.py:12
    # def helper(x: int, *, scale: float = 1.0) -> int:
    # --------------------------------------------------

A card of the completed file above the cursor is left out: the left context shows that code.

The comment marker is the completed file's (``//`` for JavaScript, ...). Blocks are chosen
greedily, best first, skipping any that would overflow the retrieved-code budget. Two small
departures: the two header lines are left out when no fragment is shown (in-file completion),
and a fragment stored at several locations lists each distinct path once.

Budgets are counted with the model's own tokenizer (``count_tokens``); the prompt plus the
tokens reserved for the answer never exceed the context window: whatever does not fit is
trimmed (left context from the top, whole lines first), never refused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from repomem.context.cards import Card
from repomem.core import RetrievedFragment
from repomem.fim import FIM_TEMPLATES
from repomem.index.languages import LINE_COMMENT

INTRO = "Here are some relevant code fragments from other files of the repo:"
DEFINITIONS_INTRO = "Here are the definitions of names the code uses:"
HEADER = "the below code fragment can be found in:"
SEPARATOR_WIDTH = 50

# Share of what retrieval leaves that the right context may take in a fill-in-the-middle
# prompt: the lines just before the cursor predict it best, so they get the larger part.
RIGHT_CONTEXT_SHARE = 0.25

Count = Callable[[str], int]
# a block's shown lines: (path, 0-based first line, the lines)
Span = tuple[str, int, list[str]]


class PromptModel(Protocol):
    """What the prompt builder needs from a backend."""

    context_window: int
    fim_style: str | None

    def count_tokens(self, text: str) -> int: ...


@dataclass(frozen=True)
class Prompt:
    """A prompt and what went into it.

    ``fragments`` are the retrieved fragments actually shown, best first (the text shows them
    in the reverse order), ``cards`` likewise the definition cards; ``left_context``/
    ``right_context`` are the trimmed parts shown. Token counts are the model's: the retrieved
    block (header and separating newline included), the definitions block, the left context,
    the right context (fill-in-the-middle only) and the whole text.
    """

    text: str
    fragments: tuple[RetrievedFragment, ...]
    left_context: str
    right_context: str
    fim: str | None
    retrieved_tokens: int
    left_tokens: int
    right_tokens: int
    total_tokens: int
    cards: tuple[Card, ...] = ()
    definitions_tokens: int = 0


def comment_marker(language: str | None) -> str:
    """The line-comment marker of ``language``; ``#`` where none is known (RepoCoder's)."""
    return LINE_COMMENT.get(language or "", "#")


def format_block(fragment: RetrievedFragment, marker: str) -> str:
    """One fragment as RepoCoder's comment block, ending with a newline."""
    separator = f"{marker} " + "-" * SEPARATOR_WIDTH
    paths = list(dict.fromkeys(loc.path for loc in fragment.locations))
    shown = fragment.shown or fragment.text
    lines = [f"{marker} {HEADER}", *(f"{marker} {p}" for p in paths), separator]
    lines += [f"{marker} {line}" for line in shown.splitlines()]
    lines.append(separator)
    return "\n".join(lines) + "\n"


def format_card(card: Card, marker: str) -> str:
    """One definition card as a comment block, ending with a newline."""
    separator = f"{marker} " + "-" * SEPARATOR_WIDTH
    lines = [f"{marker} {card.path}:{card.line + 1}"]
    lines += [f"{marker} {line}" for line in card.text.splitlines()]
    lines.append(separator)
    return "\n".join(lines) + "\n"


def format_retrieved(blocks: Sequence[str], marker: str, intro: str = INTRO) -> str:
    """The retrieved-code (or definitions) part of the prompt for blocks given best first,
    or "" if none."""
    if not blocks:
        return ""
    return _intro(marker, intro) + "".join(reversed(blocks)) + "\n"


def _intro(marker: str, intro: str = INTRO) -> str:
    return f"{marker} {intro}\n{marker} " + "-" * SEPARATOR_WIDTH + "\n"


def build_prompt(
    left_context: str,
    fragments: Sequence[RetrievedFragment],
    model: PromptModel,
    *,
    language: str | None,
    right_context: str = "",
    max_tokens: int = 64,
    retrieved_budget_fraction: float = 0.5,
    max_fragments: int = 10,
    cards: Sequence[Card] = (),
    definitions_share: float = 0.0,
    path: str | None = None,
    first_line: int = 0,
    merge_overlaps: bool = False,
) -> Prompt:
    """The prompt for completing at the end of ``left_context`` in the file at ``path``
    (``left_context`` starting at the file's line ``first_line``).

    ``fragments`` are retrieval results, best first; ``cards`` definition cards, best first,
    which take up to ``definitions_share`` of the retrieved-code budget (what they leave goes
    to fragments). With ``merge_overlaps``, fragments whose shown lines overlap in the same
    file share one block (RepoCoder's windows overlap by half: the lines they share are shown
    once). ``max_tokens`` are kept free for the answer (at most half the window, so
    that a huge request cannot leave no room for the prompt). A fill-in-the-middle template is
    used when ``model.fim_style`` names one and the right context has text.
    """
    count = model.count_tokens
    window = model.context_window
    available = window - min(max_tokens, window // 2)
    fim = model.fim_style if model.fim_style in FIM_TEMPLATES and right_context.strip() else None
    overhead = count("".join(FIM_TEMPLATES[fim])) if fim else 0
    budget = min(int(retrieved_budget_fraction * window), available - overhead)
    draft = _Draft(comment_marker(language), fim)
    kept = _surely_kept(left_context, available - overhead - budget, fim, count)
    kept_from = first_line + left_context.count("\n", 0, len(left_context) - len(kept))
    draft.set_cards(
        *_choose_cards(
            unseen_cards(cards, path, kept, kept_from),
            draft.marker,
            count,
            count(_intro(draft.marker, DEFINITIONS_INTRO) + "\n"),
            int(budget * definitions_share),
        )
    )
    definitions_tokens = _tokens(draft.definitions, count)
    draft.set_fragments(
        *_choose_fragments(
            fragments,
            draft.marker,
            count,
            count(_intro(draft.marker) + "\n"),  # the intro and the newline before the left context
            budget - definitions_tokens,
            max_fragments,
            merge=merge_overlaps,
        )
    )
    remaining = available - overhead - _tokens(draft.retrieved, count) - definitions_tokens
    draft.fit_contexts(left_context, right_context, max(remaining, 0), count)
    return draft.shrink_to(available, count)


def _surely_kept(left: str, floor: int, fim: str | None, count: Count) -> str:
    """The end of ``left`` the prompt keeps whatever retrieval takes (it takes at most its
    budget, leaving ``floor`` tokens to the contexts): a long file's top may be cut, and the
    cards of definitions up there are news again."""
    if fim:
        floor = int(floor * (1 - RIGHT_CONTEXT_SHARE))
    return left if count(left) <= floor else _keep_tail(left, max(floor, 0), count)


def _tokens(text: str, count: Count) -> int:
    return count(text) if text else 0


@dataclass
class _Draft:
    """A prompt's parts while they are chosen and fitted into the context window: the
    definition cards and fragments shown (best first) with their blocks, and the left and
    right context."""

    marker: str
    fim: str | None
    cards: list[Card] = field(default_factory=list)
    card_blocks: list[str] = field(default_factory=list)
    definitions: str = ""
    fragments: list[RetrievedFragment] = field(default_factory=list)
    blocks: list[str] = field(default_factory=list)
    retrieved: str = ""
    left: str = ""
    right: str = ""

    def set_cards(self, cards: list[Card], blocks: list[str]) -> None:
        self.cards, self.card_blocks = cards, blocks
        self.definitions = format_retrieved(blocks, self.marker, DEFINITIONS_INTRO)

    def set_fragments(self, fragments: list[RetrievedFragment], blocks: list[str]) -> None:
        self.fragments, self.blocks = fragments, blocks
        self.retrieved = format_retrieved(blocks, self.marker)

    def fit_contexts(self, left: str, right: str, remaining: int, count: Count) -> None:
        """The context around the cursor in what retrieval left: the right context's head
        (fill-in-the-middle only) takes its share, the left context's tail the rest."""
        self.right = (
            _keep_head(right, int(remaining * RIGHT_CONTEXT_SHARE), count) if self.fim else ""
        )
        self.left = _keep_tail(left, remaining - _tokens(self.right, count), count)

    def shrink_to(self, available: int, count: Count) -> Prompt:
        """The prompt, once its whole text fits ``available`` tokens. Per-piece counts can
        underestimate the joined text (merges across boundaries): the least valuable part
        shrinks and the text is counted again."""
        while True:
            text = _assemble(self.retrieved + self.definitions, self.left, self.right, self.fim)
            total = count(text)
            if total <= available or not text:
                return self._prompt(text, total, count)
            if "\n" in self.left:
                self.left = _drop_head_lines(self.left, total - available, count)
            elif self.fragments:
                self.set_fragments(self.fragments[:-1], self.blocks[:-1])
            elif self.cards:
                self.set_cards(self.cards[:-1], self.card_blocks[:-1])
            elif self.right:
                self.right = self.right[: self.right.rstrip("\n").rfind("\n") + 1]  # its last line
            elif self.left:
                excess = total - available
                self.left = _keep_tail(self.left, max(count(self.left) - excess, 0), count)
            else:
                self.fim = None

    def _prompt(self, text: str, total: int, count: Count) -> Prompt:
        return Prompt(
            text=text,
            fragments=tuple(self.fragments),
            left_context=self.left,
            right_context=self.right,
            fim=self.fim,
            retrieved_tokens=_tokens(self.retrieved, count),
            left_tokens=count(self.left),
            right_tokens=count(self.right) if self.fim else 0,
            total_tokens=total,
            cards=tuple(self.cards),
            definitions_tokens=_tokens(self.definitions, count),
        )


def _assemble(retrieved: str, left: str, right: str, fim: str | None) -> str:
    prefix = retrieved + left
    if fim is None:
        return prefix
    before, middle, after = FIM_TEMPLATES[fim]
    return f"{before}{prefix}{middle}{right}{after}"


def _choose_fragments(
    fragments: Sequence[RetrievedFragment],
    marker: str,
    count: Count,
    used: int,
    budget: int,
    cap: int,
    *,
    merge: bool,
) -> tuple[list[RetrievedFragment], list[str]]:
    """``_choose`` for fragments, a block each; with ``merge``, one whose shown lines overlap
    or touch those of a chosen block of the same file joins that block for the cost of its
    new lines, and a block stays where its best fragment put it. Fragments of several
    locations, or whose shown lines are not known, take blocks of their own."""
    chosen: list[RetrievedFragment] = []
    spans: list[Span | None] = []
    blocks: list[str] = []
    for fragment in fragments:
        if len(chosen) >= cap:
            break
        mine = _span(fragment) if merge else None
        at = next((i for i, span in enumerate(spans) if _joins(span, mine)), None)
        joined = spans[at] if at is not None else None
        if at is not None and joined is not None and mine is not None:
            span = _union(joined, mine)
            block = format_block(replace(fragment, shown="\n".join(span[2])), marker)
            tokens = count(block) - count(blocks[at])
            if used + tokens <= budget:
                chosen.append(fragment)
                spans[at], blocks[at] = span, block
                used += tokens
            continue
        block = format_block(fragment, marker)
        tokens = count(block)
        if used + tokens <= budget:
            chosen.append(fragment)
            spans.append(mine)
            blocks.append(block)
            used += tokens
    return chosen, blocks


def _span(fragment: RetrievedFragment) -> Span | None:
    if fragment.shown_start is None or len(fragment.locations) != 1:
        return None
    return fragment.path, fragment.shown_start, (fragment.shown or fragment.text).split("\n")


def _joins(span: Span | None, other: Span | None) -> bool:
    if span is None or other is None or span[0] != other[0]:
        return False
    return span[1] <= other[1] + len(other[2]) and other[1] <= span[1] + len(span[2])


def _union(span: Span, other: Span) -> Span:
    """Two touching line spans of one file as one (each line as one of them shows it)."""
    first = min(span[1], other[1])
    last = max(span[1] + len(span[2]), other[1] + len(other[2]))
    lines = [""] * (last - first)
    for start, part in ((other[1], other[2]), (span[1], span[2])):
        lines[start - first : start - first + len(part)] = part
    return span[0], first, lines


def _choose_cards(
    cards: Sequence[Card], marker: str, count: Count, used: int, budget: int
) -> tuple[list[Card], list[str]]:
    """The cards shown, best first. More cards cut short beat fewer whole ones (the
    definition the next line needs is often ranked below a large class): the best card
    whole unless it alone would take half the budget, the others in their brief form (a
    signature: what a call needs; a card with none whole) as many as fit, then, best
    first, each of those whole where that still fits. ``used``: the tokens the section's
    intro takes."""

    def block(card: Card) -> tuple[str, int]:
        text = format_card(card, marker)
        return text, count(text)

    # (card, the block shown, its tokens, whether it is the whole card)
    shown: list[tuple[Card, str, int, bool]] = []
    for i, card in enumerate(cards):
        text, tokens = block(card) if i == 0 or not card.brief else ("", 0)
        whole = bool(text) and not (card.brief and 2 * tokens > budget)
        if not whole:
            text, tokens = block(card.briefed())
        if used + tokens <= budget:
            shown.append((card, text, tokens, whole))
            used += tokens
    chosen: list[Card] = []
    blocks: list[str] = []
    for card, text, tokens, whole in shown:
        if not whole:
            full, size = block(card)
            if used - tokens + size <= budget:
                text, used = full, used - tokens + size
            else:
                card = card.briefed()
        chosen.append(card)
        blocks.append(text)
    return chosen, blocks


def unseen_cards(
    cards: Sequence[Card], path: str | None, left_context: str, first_line: int = 0
) -> list[Card]:
    """``cards`` less those of the completed file that ``left_context`` (from the file's line
    ``first_line`` to the cursor) shows: a card of a definition above it is still news."""
    cursor = first_line + left_context.count("\n")
    return [c for c in cards if not (c.path == path and first_line <= c.line < cursor)]


def _keep_tail(text: str, budget: int, count: Count) -> str:
    """The longest end of ``text`` within ``budget`` tokens, in whole lines where possible."""
    start = len(text)
    used = 0
    kept_a_line = False
    while start > 0:
        # The first piece is the cursor's (unterminated) line; later ones end with "\n".
        new = (text.rfind("\n", 0, start - 1) if kept_a_line else text.rfind("\n")) + 1
        tokens = count(text[new:start])
        if used + tokens > budget:
            break
        used += tokens
        start = new
        kept_a_line = True
    if not kept_a_line and text:
        # Not even the cursor's line fits: keep as much of its end as fits.
        lo, hi = text.rfind("\n") + 1, len(text)
        while lo < hi:
            mid = (lo + hi) // 2
            if count(text[mid:]) <= budget:
                hi = mid
            else:
                lo = mid + 1
        start = lo
    return text[start:]


def _keep_head(text: str, budget: int, count: Count) -> str:
    """The longest start of ``text`` within ``budget`` tokens, in whole lines."""
    end = 0
    used = 0
    while end < len(text):
        nl = text.find("\n", end)
        new = len(text) if nl < 0 else nl + 1
        tokens = count(text[end:new])
        if used + tokens > budget:
            break
        used += tokens
        end = new
    return text[:end]


def _drop_head_lines(text: str, excess: int, count: Count) -> str:
    """``text`` without enough of its first lines to save about ``excess`` tokens (at least
    one line, never the last)."""
    start = 0
    saved = 0
    last_line = text.rfind("\n") + 1
    while start < last_line and (saved < excess or start == 0):
        new = text.find("\n", start) + 1
        saved += max(count(text[start:new]), 1)
        start = new
    return text[start:]

"""ReadAgent's interactive look-up over the gist memory.

The gist memory is every page's gist tagged with its page number. A repository's docs exceed
any context window, so the model is shown at most ``SHOWN_PAGES`` gists, in reading order
and fitted to the window: those of the pages that match the question best, then others in
order. It then picks pages to read
again: all at once (ReadAgent-P, "I want to look up Page [..]") or one at a time, seeing the
pages already expanded in place of their gists, until it says STOP (ReadAgent-S). The answer is
prompted from the gists with the chosen pages expanded.

Without a model the look-up is extractive: the parallel variant takes the pages whose gists
score at least half the best BM25 score; the sequential variant reads the best-matching page,
then looks for the question terms the pages read so far lack, until none is missing or no gist
matches them. The sources are the looked-up pages' segments that match the question best.
"""

from __future__ import annotations

import numpy as np

from repomem.docmem import prompts
from repomem.docmem.answer import NO_MODEL_NOTE, AskResult, Context, Step
from repomem.docmem.memory import Source

SHOWN_PAGES = 20
MAX_LOOKUPS = 3
_LOOKUP_TOKENS = 48
_ANSWER_TOKENS = 200
# Parallel extractive look-up: pages scoring at least this share of the best gist score.
_RELATIVE_SCORE = 0.5


class _Memory:
    """The pages and gists one question works with."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        builder = ctx.builder
        self.pages = ctx.memory.pages(builder)
        self.by_segments = {p.segments: p for p in self.pages}
        self.space = ctx.memory.space("gist", builder, code=False)
        self.gist = {
            self.by_segments[e.segments].number: e.text
            for e in self.space.entries
            if e.segments in self.by_segments
        }
        self.entry_page = [
            self.by_segments[e.segments].number if e.segments in self.by_segments else 0
            for e in self.space.entries
        ]
        self.page = {p.number: p for p in self.pages}

    def ranked(
        self, query: str, limit: int, exclude: set[int] = frozenset()
    ) -> list[tuple[int, float]]:
        """Pages by their gist's score for ``query``: ``(number, score)``, best first."""
        visible = np.array([n not in exclude for n in self.entry_page], bool)
        hits = self.space.search(
            query, limit, alpha=self.ctx.alpha, doc_visible=visible, with_code=False
        )
        return [(self.entry_page[h.entry], h.s_rel) for h in hits if h.entry is not None]

    def page_text(self, number: int) -> str:
        segs = self.ctx.memory.segments
        return "\n\n".join(segs[s].text for s in self.page[number].segments)

    def render(self, shown: list[int], expanded: set[int]) -> str:
        """Gists in reading order, expanded pages in full in their place."""
        parts = []
        for n in sorted(shown):
            body = self.page_text(n) if n in expanded else self.gist.get(n, "")
            parts.append(f"Page {n}:\n{body}")
        return "\n\n".join(parts)


async def read_agent(ctx: Context, result: AskResult, lookup: str) -> None:
    question = result.question
    memory = _Memory(ctx)
    ranked = memory.ranked(question, SHOWN_PAGES)
    shown = [n for n, _ in ranked]
    if ctx.model.available:  # the model reads gists the question's words did not find too
        shown += [p.number for p in memory.pages if p.number not in shown][
            : SHOWN_PAGES - len(shown)
        ]
    result.steps.append(
        Step("gist memory", f"{len(memory.pages)} pages; gists shown: {sorted(shown)}")
    )
    if not shown:
        result.notes.append("no gist matches the question")
        if not ctx.model.available:
            result.notes.append(NO_MODEL_NOTE)
        return
    if lookup == "parallel":
        read = await _parallel(ctx, memory, question, ranked, shown, result)
    else:
        read = await _sequential(ctx, memory, question, shown, result)
    result.sources = _page_sources(ctx, memory, question, read)
    if ctx.model.available:
        reply = await ctx.model.complete(
            "",
            memory.render(shown, set(read)),
            prompts.RESPONSE_TAIL.format(question=question),
            max_tokens=_ANSWER_TOKENS,
        )
        result.answer = reply.strip()
        pages = {i + 1 for i in prompts.parse_citations(result.answer, max(memory.page))}
        result.cited = [
            i for i, s in enumerate(result.sources) if _page_of(memory, s.segment) in pages
        ]
        result.steps.append(Step("answer", f"model answered from gists and pages {read}"))
    else:
        result.notes.append(NO_MODEL_NOTE)


async def _parallel(
    ctx: Context,
    memory: _Memory,
    question: str,
    ranked: list[tuple[int, float]],
    shown: list[int],
    result: AskResult,
) -> list[int]:
    if not ctx.model.available:
        best = ranked[0][1]
        read = [n for n, s in ranked if s >= _RELATIVE_SCORE * best][:MAX_LOOKUPS]
        result.steps.append(
            Step("look up", f"extractive: pages {read} (gist score >= {_RELATIVE_SCORE} x best)")
        )
        return read
    reply = await ctx.model.complete(
        prompts.PARALLEL_LOOKUP_HEAD.format(max_pages=MAX_LOOKUPS),
        memory.render(shown, set()),
        prompts.PARALLEL_LOOKUP_TAIL.format(question=question),
        max_tokens=_LOOKUP_TOKENS,
    )
    read = prompts.parse_pages(reply, shown, MAX_LOOKUPS)
    if read:
        result.steps.append(Step("look up", f"model asked for pages {read}: {reply.strip()!r}"))
        return read
    result.steps.append(
        Step("look up", f"model named no shown page ({reply.strip()!r}); read the first shown")
    )
    return shown[:1]


async def _sequential(
    ctx: Context, memory: _Memory, question: str, shown: list[int], result: AskResult
) -> list[int]:
    read: list[int] = []
    if not ctx.model.available:
        query = question
        while len(read) < MAX_LOOKUPS:
            found = memory.ranked(query, 1, exclude=set(read))
            found = [(n, s) for n, s in found if n in shown and s > 0]
            if not found:
                result.steps.append(Step("stop", f"no unread gist matches {query!r}"))
                break
            read.append(found[0][0])
            lacking = ctx.missing(question, " ".join(memory.page_text(n) for n in read))
            result.steps.append(
                Step("look up", f"extractive: page {found[0][0]}; still missing {lacking}")
            )
            if not lacking:
                break
            query = " ".join(lacking)
        return read
    while len(read) < MAX_LOOKUPS:
        reply = await ctx.model.complete(
            prompts.SEQUENTIAL_LOOKUP_HEAD,
            memory.render(shown, set(read)),
            prompts.SEQUENTIAL_LOOKUP_TAIL.format(
                read=", ".join(map(str, read)) or "none", question=question
            ),
            max_tokens=_LOOKUP_TOKENS,
        )
        page = prompts.parse_sequential(reply, [n for n in shown if n not in read])
        if page is None:
            said = "STOP" if reply.strip().upper().startswith("STOP") else "no unread page"
            result.steps.append(Step("stop", f"model said {said}: {reply.strip()!r}"))
            break
        read.append(page)
        result.steps.append(Step("look up", f"model asked for page {page}"))
    if not read:
        read = shown[:1]
        result.steps.append(Step("look up", "no page chosen; read the first shown"))
    return read


def _page_sources(ctx: Context, memory: _Memory, question: str, read: list[int]) -> list[Source]:
    """The read pages' segments that match the question best."""
    segments = sorted({s for n in read for s in memory.page[n].segments})
    space = ctx.memory.space("chunk", ctx.builder, code=False)
    visible = np.zeros(len(space.entries), bool)
    visible[segments] = True
    hits = space.search(question, ctx.k, alpha=ctx.alpha, doc_visible=visible, with_code=False)
    chosen = [h.entry for h in hits if h.entry is not None]
    chosen += [s for s in segments if s not in chosen]  # pages read but matching nothing
    scores = {h.entry: h.s_rel for h in hits}
    return [ctx.memory.segment_source(s, scores.get(s, 0.0), "chunk") for s in chosen[: ctx.k]]


def _page_of(memory: _Memory, segment: int | None) -> int | None:
    for page in memory.pages:
        if segment in page.segments:
            return page.number
    return None

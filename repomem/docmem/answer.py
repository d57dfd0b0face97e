"""What a question gets back, and the shared pieces of every retrieval loop.

An :class:`AskResult` holds the answer (None without a language model), the sources it rests on
(``path:line``, best first, the cited ones marked), the steps the loop took (what it asked the
model and what it made of the reply) and notes that say what was extractive.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from repomem.docmem import prompts
from repomem.docmem.memory import DocMemory, Source
from repomem.docmem.model import TextModel
from repomem.docmem.space import JointSpace
from repomem.docmem.text import content_terms, terms

_ANSWER_TOKENS = 200
NO_MODEL_NOTE = (
    "no language model is configured (built-in backend): these are the best-matching sources,"
    " not an answer"
)


@dataclass
class Step:
    action: str
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"action": self.action, "detail": self.detail}


@dataclass
class AskResult:
    question: str
    strategy: str
    form: str
    mode: str  # "model" or "extractive"
    answer: str | None
    sources: list[Source]
    cited: list[int] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "question": self.question,
            "strategy": self.strategy,
            "form": self.form,
            "mode": self.mode,
            "answer": self.answer,
            "sources": [
                {**s.to_dict(), "cited": i in self.cited} for i, s in enumerate(self.sources)
            ],
            "steps": [s.to_dict() for s in self.steps],
            "notes": self.notes,
        }


@dataclass
class Context:
    """One question's retrieval setting: the memory, the model, the memory form, how many
    sources, the environment weight and whether code fragments take part."""

    memory: DocMemory
    model: TextModel
    form: str
    k: int
    alpha: float
    code: bool = True

    @property
    def builder(self) -> str:
        return self.memory.builder(self.model)

    def space(self, form: str | None = None) -> JointSpace:
        return self.memory.space(form or self.form, self.builder, code=self.code)

    def search(self, query: str, k: int, *, form: str | None = None) -> list[Source]:
        """The ``k`` best distinct sources for ``query`` (one per segment or code window)."""
        space = self.space(form)
        hits = space.search(query, max(3 * k, k + 10), alpha=self.alpha)
        sources = [self.memory.source(space, hit, query) for hit in hits]
        return distinct(sources)[:k]

    def weight(self, term: str) -> float:
        """A term's idf over the doc segments; terms the docs never use weigh as the rarest."""
        return self.memory.term_idf.get(term, math.log(len(self.memory.segments) + 1.5))

    def coverage(self, question: str, text: str) -> float:
        """Share of the question's (idf-weighted) terms that ``text`` contains."""
        wanted = content_terms(question)
        if not wanted:
            return 0.0
        present = set(terms(text))
        total = sum(self.weight(t) for t in wanted)
        return sum(self.weight(t) for t in wanted if t in present) / total

    def missing(self, question: str, text: str) -> list[str]:
        """The question's terms ``text`` lacks, rarest first."""
        present = set(terms(text))
        absent = [t for t in content_terms(question) if t not in present]
        return sorted(absent, key=lambda t: -self.weight(t))


def distinct(sources: list[Source]) -> list[Source]:
    """``sources`` without repeats of the same lines (the first, best one is kept)."""
    seen: set[tuple[str, str, int]] = set()
    out = []
    for source in sources:
        if source.key not in seen:
            seen.add(source.key)
            out.append(source)
    return out


def numbered(sources: list[Source]) -> str:
    return "\n\n".join(
        f"[{i}] {s.label}" + (f" ({s.heading})" if s.heading else "") + f"\n{s.text}"
        for i, s in enumerate(sources, start=1)
    )


async def compose(ctx: Context, question: str, sources: list[Source]) -> tuple[str, list[int]]:
    """Answer from numbered sources (structural memory's Memory-Only answer generation);
    returns the answer and the 0-based indices of the sources it cites."""
    reply = await ctx.model.complete(
        prompts.ANSWER_HEAD,
        numbered(sources),
        prompts.ANSWER_TAIL.format(question=question),
        max_tokens=_ANSWER_TOKENS,
        stop=("\nQuestion:",),
    )
    answer = reply.strip()
    return answer, prompts.parse_citations(answer, len(sources))


async def finish(ctx: Context, result: AskResult) -> AskResult:
    """Answer with the model when there is one; otherwise say that the sources are the
    result."""
    if ctx.model.available and result.sources:
        answer, cited = await compose(ctx, result.question, result.sources)
        result.answer = answer
        result.cited = cited
        result.steps.append(Step("answer", f"model answered from {len(result.sources)} sources"))
        if not cited:
            result.notes.append("the answer cites no source by number; all sources were shown")
    elif not ctx.model.available:
        result.notes.append(NO_MODEL_NOTE)
    return result


# lines of each source's text a report shows
_SHOWN_LINES = 4


def render(result: AskResult) -> str:
    """The plain-text report: the answer (or why there is none), then the sources."""
    lines = []
    if result.answer is not None:
        lines += ["Answer:", result.answer or "(the model returned nothing)", ""]
    elif result.mode == "extractive":
        lines += [f"No answer: {NO_MODEL_NOTE}.", ""]
    else:
        lines += ["No answer: no source matches the question.", ""]
    if result.sources:
        lines.append("Sources:")
    for i, source in enumerate(result.sources, start=1):
        mark = "*" if i - 1 in result.cited else " "
        where = f" ({source.heading})" if source.heading else ""
        lines.append(f"[{i}]{mark} {source.label}{where}  [{source.kind}, {source.form}]")
        shown = [ln for ln in source.text.splitlines() if ln.strip()][:_SHOWN_LINES]
        lines += [f"      {ln.strip()[:120]}" for ln in shown]
    if not result.sources:
        lines.append("No source matches the question.")
    lines += ["", f"strategy: {result.strategy}, mode: {result.mode}"]
    lines += [f"note: {n}" for n in result.notes if n != NO_MODEL_NOTE]
    return "\n".join(lines)

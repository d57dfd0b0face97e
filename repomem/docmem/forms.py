"""Memory forms of the structural-memory study: chunks, gists, summaries, knowledge triples,
atomic facts (and mixed, their union).

* chunk: a segment as written;
* gist: a ReadAgent page "shortened";
* summary: a section (the segments under one second-level heading) summarised;
* triple: ``<head; relation; tail>`` statements of a segment;
* fact: a segment's atomic facts, pronouns replaced by what they stand for.

With a language model each is built by prompting it with the papers' prompts. Without one,
extractive forms stand in: a gist keeps each paragraph's first sentence under its heading, a
summary the heading path, the lead sentence, the sub-headings and the names it mentions, a
fact is a sentence (split at semicolons, a leading pronoun replaced by the segment's subject),
and a triple is a subject-verb-object split of such a sentence around its first verb. An entry
records which way it was made (``origin``): ``model``, ``extractive``, or ``fallback`` where the
model's reply held nothing usable.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from repomem.docmem import prompts
from repomem.docmem.entities import mentions
from repomem.docmem.model import TextModel
from repomem.docmem.segments import CODE_DIRECTIVES, Segment
from repomem.docmem.text import STOPWORDS, clean_inline, first_sentence, sentences, word_set

MODEL, EXTRACTIVE, FALLBACK = "model", "extractive", "fallback"

# Sections for summaries: segments sharing their first two headings.
SECTION_DEPTH = 2
_MAX_FACTS = 12
_MAX_TAIL_WORDS = 12
_ANSWER_TOKENS = {"gist": 256, "summary": 256, "triple": 200, "fact": 256}
_STOPS = {
    "gist": ("\nPassage:",),
    "summary": ("\n\n\n",),
    "triple": ("\n\n",),
    "fact": ("\n\n",),
}

_DIRECTIVE = re.compile(r"^\s*\.\.\s+([\w:-]+)::\s*(.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
# Directives whose argument names the thing the text documents (Sphinx's domain directives
# such as ``py:data`` carry a colon and are recognised by it).
_NAMING_DIRECTIVES = word_set(
    """function class method attribute data module exception option envvar confval
    autofunction autoclass automodule automethod autodata autoattribute autoexception"""
)
_ITEM = re.compile(r"^(?:[-*+]|\d+[.)]|#\.)\s+")
_PRONOUN = re.compile(r"^(It|This|They|These|That)\b(?!')", re.IGNORECASE)
_CONTRACTION = re.compile(r"^It's\b")
_DETERMINER = re.compile(r"^(the|a|an|this|that|these|those)\s+", re.IGNORECASE)
_MODALS = word_set("can could must should will would may might shall")
_AUXILIARY = word_set("is are was were be been has have had does do")
_VERBS = word_set(
    """accepts adds allows applies becomes builds calls changes checks contains controls
    converts creates defaults defines describes disables displays enables ensures executes
    expects exposes gives handles holds ignores implements includes installs keeps lets lists
    loads makes means needs opens overrides parses passes prints provides raises reads receives
    registers removes renders replaces represents requires resolves returns runs saves sends
    sets shows specifies starts stops stores supports takes tells tracks uses validates works
    wraps writes yields accept add allow apply build call change check contain create define
    disable enable handle include install load make need provide raise read register remove
    render replace require return run save send set show start stop store support take use
    write"""
)
# "can be used", "must set": a modal or auxiliary takes the verb after it into the relation
_VERB_FORMS = _VERBS | {v[:-1] for v in _VERBS if v.endswith("s")} | {"used", "set", "called"}


@dataclass(frozen=True)
class Entry:
    """One memory item: its text, the document-local indices of the segments it comes from,
    how it was made, and the 0-based source line when it is known more precisely than the
    segment's."""

    form: str
    text: str
    segments: tuple[int, ...]
    origin: str
    line: int | None = None


# ------------------------------------------------------------------------------ units


def units(
    form: str, segments: Sequence[Segment], pages: Sequence[tuple[int, int]]
) -> list[tuple[int, ...]]:
    """The segment groups one entry (or one prompt) of ``form`` is made from."""
    if form == "gist":
        return [tuple(range(s, e)) for s, e in pages]
    if form == "summary":
        groups: list[list[int]] = []
        for i, seg in enumerate(segments):
            key = seg.headings[:SECTION_DEPTH]
            if groups and segments[groups[-1][0]].headings[:SECTION_DEPTH] == key:
                groups[-1].append(i)
            else:
                groups.append([i])
        return [tuple(g) for g in groups]
    return [(i,) for i in range(len(segments))]


def chunk_entries(segments: Sequence[Segment]) -> list[Entry]:
    return [Entry("chunk", seg.index_text, (i,), EXTRACTIVE) for i, seg in enumerate(segments)]


# ------------------------------------------------------------------------- extractive


def prose_lines(seg: Segment) -> list[tuple[int, str, bool]]:
    """``(line, cleaned text, starts a block)`` of a segment's prose: code blocks, literal
    blocks, doctests and directive headers left out. A line starts a block after a blank line
    and where a list item begins, so that sentences never run across items."""
    if seg.kind == "code":
        return []
    out = []
    fenced = False
    fresh = True
    literal: int | None = None  # indentation of the line that opened a literal/code block
    for offset, raw in enumerate(seg.text.split("\n")):
        if _FENCE.match(raw):
            fenced = not fenced
            continue
        stripped = raw.strip()
        indent = len(raw) - len(raw.lstrip())
        if fenced:
            continue
        if not stripped:
            fresh = True
        if literal is not None:
            if not stripped or indent > literal:
                continue
            literal = None
        directive = _DIRECTIVE.match(raw)
        if directive:
            if directive.group(1) in CODE_DIRECTIVES:
                literal = indent
            continue
        if stripped.startswith(">>>"):
            continue
        if stripped.endswith("::"):
            literal = indent
            stripped = stripped[:-1]
        item = _ITEM.match(stripped) is not None
        line = clean_inline(_ITEM.sub("", stripped).lstrip("#>|").strip())
        if line and not set(line) <= set("=-~^\"'`#*+:._|"):
            out.append((seg.start + offset, line, fresh or item))
            fresh = False
    return out


def directive_subject(seg: Segment) -> str | None:
    """The argument of a directive that opens the segment (``.. py:data:: SECRET_KEY``)."""
    for raw in seg.text.split("\n", 3)[:3]:
        m = _DIRECTIVE.match(raw)
        if m and m.group(2).strip() and (":" in m.group(1) or m.group(1) in _NAMING_DIRECTIVES):
            return clean_inline(m.group(2).strip())
    return None


def subject(seg: Segment) -> str:
    """What the segment is about: a directive's argument, else its innermost heading."""
    found = directive_subject(seg)
    if found:
        return found
    return seg.headings[-1] if seg.headings else seg.path.rsplit("/", 1)[-1]


def _symbols(seg: Segment, limit: int = 8) -> list[str]:
    return [m.name for m in mentions(seg.text)][:limit]


def _lead(seg: Segment) -> str:
    lines = prose_lines(seg)
    if not lines:
        names = _symbols(seg, 6)
        return f"Example using {', '.join(names)}." if names else ""
    lead = first_sentence(" ".join(text for _, text, _ in lines), 30)
    named = directive_subject(seg)
    return f"{named}: {lead}" if named else lead


def extractive_gist(segments: Sequence[Segment]) -> str:
    parts: list[str] = []
    heading = None
    for seg in segments:
        if seg.headings and seg.heading != heading:
            parts.append(f"[{seg.headings[-1]}]")
            heading = seg.heading
        lead = _lead(seg)
        if lead:
            parts.append(lead)
    return " ".join(parts)


def extractive_summary(segments: Sequence[Segment]) -> str:
    first = segments[0]
    parts = [first.heading or first.path]
    lead = next((text for seg in segments if (text := _lead(seg))), "")
    if lead:
        parts.append(lead)
    subs = list(dict.fromkeys(s.headings[-1] for s in segments if len(s.headings) > SECTION_DEPTH))
    if subs:
        parts.append("Covers: " + "; ".join(subs[:12]) + ".")
    names = list(dict.fromkeys(n for seg in segments for n in _symbols(seg)))
    if names:
        parts.append("Names: " + ", ".join(names[:12]) + ".")
    return " ".join(parts)


def _sentence_lines(seg: Segment) -> list[tuple[int, str]]:
    """Sentences of the segment's prose with the line each starts on."""
    blocks: list[list[tuple[int, str]]] = []
    for line, text, fresh in prose_lines(seg):
        if fresh or not blocks:
            blocks.append([])
        blocks[-1].append((line, text))
    out = []
    for block in blocks:
        text = " ".join(t for _, t in block)
        starts = []
        pos = 0
        for line_no, t in block:
            starts.append((pos, line_no))
            pos += len(t) + 1
        cursor = 0
        for sentence in sentences(text):
            at = text.find(sentence[:20], cursor)
            at = cursor if at < 0 else at
            cursor = at + len(sentence)
            out.append((max(ln for p, ln in starts if p <= at or p == 0), sentence))
    return out


def extractive_facts(seg: Segment) -> list[tuple[int, str]]:
    subj = subject(seg)
    out = []
    for line, sentence in _sentence_lines(seg):
        for clause in sentence.split(";"):
            clause = clause.strip().rstrip(".:") + "."
            if len(clause.split()) < 4:
                continue
            clause = _CONTRACTION.sub(subj + " is", clause, count=1)
            clause = _PRONOUN.sub(subj, clause, count=1)
            out.append((line, clause))
    if seg.kind == "code" or not out:
        names = _symbols(seg)
        if names:
            out.append((seg.start, f"The {subj} example uses {', '.join(names)}."))
    return out[:_MAX_FACTS]


def _is_verb(tokens: list[str], i: int) -> bool:
    """A modal, an auxiliary, a listed verb, or a lower-case word in ``-s`` that follows a
    content word ("the key *caps* the retries"), never the sentence's first word."""
    word = tokens[i].lower().strip(",;:()")
    if word in _MODALS or word in _AUXILIARY:
        return True
    if i == 0:
        return False
    if word in _VERBS:
        return True
    previous = tokens[i - 1].lower().strip("`")
    return (
        tokens[i].isalpha()
        and tokens[i].islower()
        and len(word) > 3
        and word.endswith("s")
        and not word.endswith(("ss", "us", "is"))
        and previous.isalpha()
        and previous not in STOPWORDS
        and not tokens[i - 1].endswith(",")
    )


def svo(sentence: str, subj: str) -> tuple[str, str, str]:
    """A subject-verb-object split around the sentence's first verb (see module doc)."""
    tokens = sentence.rstrip(".").split()
    for i, token in enumerate(tokens):
        word = token.lower().strip(",;:()")
        if _is_verb(tokens, i):
            j = i + 1
            while j < len(tokens) and (
                tokens[j].lower() in _AUXILIARY or tokens[j].lower() in ("not", "to", "be")
            ):
                j += 1
            if (
                (word in _MODALS or word in _AUXILIARY)
                and j < len(tokens)
                and tokens[j].lower().strip(",") in _VERB_FORMS
            ):
                j += 1
            head = _DETERMINER.sub("", " ".join(tokens[:i])).strip(" ,") or subj
            if _PRONOUN.fullmatch(head):
                head = subj
            relation = " ".join(tokens[i:j]).strip(" ,")
            tail = " ".join(tokens[j : j + _MAX_TAIL_WORDS]).strip(" ,;:")
            if tail:
                return head, relation, tail
    return subj, "is described as", " ".join(tokens[:_MAX_TAIL_WORDS])


def extractive_triples(seg: Segment) -> list[tuple[int, str]]:
    subj = subject(seg)
    return [(line, "<{}; {}; {}>".format(*svo(fact, subj))) for line, fact in extractive_facts(seg)]


def extractive_entries(
    form: str, segments: Sequence[Segment], pages: Sequence[tuple[int, int]]
) -> list[Entry]:
    """Every entry of ``form`` for one document, without a model."""
    if form == "chunk":
        return chunk_entries(segments)
    out: list[Entry] = []
    for unit in units(form, segments, pages):
        out.extend(_extractive_unit(form, segments, unit, EXTRACTIVE))
    return out


def _extractive_unit(
    form: str, segments: Sequence[Segment], unit: tuple[int, ...], origin: str
) -> list[Entry]:
    members = [segments[i] for i in unit]
    if form == "gist":
        text = extractive_gist(members)
        return [Entry(form, text, unit, origin)] if text else []
    if form == "summary":
        return [Entry(form, extractive_summary(members), unit, origin)]
    make = extractive_facts if form == "fact" else extractive_triples
    return [Entry(form, text, unit, origin, line) for line, text in make(members[0])]


# ------------------------------------------------------------------------------ model


def _prompt(form: str, members: Sequence[Segment], model: TextModel) -> str:
    max_tokens = _ANSWER_TOKENS[form]
    text = "\n\n".join(seg.text for seg in members)
    if form == "gist":
        return model.fit(prompts.GIST_HEAD, text, prompts.GIST_TAIL, max_tokens=max_tokens)
    if form == "summary":
        head = prompts.SUMMARY_HEAD + (members[0].heading + "\n" if members[0].headings else "")
        return model.fit(head, text, prompts.SUMMARY_TAIL, max_tokens=max_tokens)
    if form == "triple":
        head = prompts.TRIPLES_HEAD + f"Title: {subject(members[0])}\nText: "
        return model.fit(head, text, prompts.TRIPLES_TAIL, max_tokens=max_tokens)
    return model.fit(
        prompts.FACTS_HEAD + '"', text, '"' + prompts.FACTS_TAIL, max_tokens=max_tokens
    )


def _parse(form: str, reply: str, unit: tuple[int, ...]) -> list[Entry]:
    if form in ("gist", "summary"):
        text = prompts.parse_text(reply)
        return [Entry(form, text, unit, MODEL)] if text else []
    if form == "triple":
        return [
            Entry(form, f"<{h}; {r}; {t}>", unit, MODEL) for h, r, t in prompts.parse_triples(reply)
        ]
    return [Entry(form, fact, unit, MODEL) for fact in prompts.parse_facts("1." + reply)]


async def model_entries(
    form: str,
    documents: Sequence[tuple[Sequence[Segment], Sequence[tuple[int, int]]]],
    model: TextModel,
) -> list[list[Entry]]:
    """Entries of ``form`` for each ``(segments, pages)`` document, built by prompting the
    model (one prompt per unit, batched); units whose reply is unusable fall back to the
    extractive form."""
    if form == "chunk":
        return [chunk_entries(segs) for segs, _ in documents]
    work = [
        (d, unit) for d, (segs, pages) in enumerate(documents) for unit in units(form, segs, pages)
    ]
    texts = [_prompt(form, [documents[d][0][i] for i in unit], model) for d, unit in work]
    replies = await model.generate(texts, max_tokens=_ANSWER_TOKENS[form], stop=_STOPS[form])
    out: list[list[Entry]] = [[] for _ in documents]
    for (d, unit), reply in zip(work, replies, strict=True):
        entries = _parse(form, reply, unit)
        if not entries:
            entries = _extractive_unit(form, documents[d][0], unit, FALLBACK)
        out[d].extend(entries)
    return out

"""Prompts of the memory papers, adapted to repository docs, and lenient parsers for replies.

Templates follow the papers' appendices: ReadAgent (pagination, "shorten" gisting, parallel
and sequential look-up, response), the structural-memory study (knowledge triples, summaries,
atomic facts, reranking, iterative query refinement), QRMeM (entity recognition, the
"can the question be answered" reflection) and iterative QA with fact extraction (planning,
fact extraction). Each ends with the cue a completion model continues from.

Parsers never trust a reply: they pull out what they can (numbers that name a shown page, a
well-formed triple) and report nothing when nothing is usable, so the caller can fall back.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# ----------------------------------------------------------------------------- ReadAgent

PAGINATION_HEAD = """\
You are given a passage that is taken from a larger text (a project's documentation) and some \
numbered labels between the paragraphs in the passage.
Numbered labels are in angle brackets. For example, if the label number is 19, it shows as <19> \
in text.
Please choose a label where it is natural to break reading.
The label can be the end of a section, the end of an example, a change of topic, etc.
Please answer with the break point label and explain.
For example, if <57> is a good point to break, answer with "Break point: <57>
Because ..."

Passage:

"""
PAGINATION_TAIL = "\n\nBreak point: <"

GIST_HEAD = """\
Please shorten the following passage.
Just give me a shortened version. DO NOT explain your reason.

Passage:
"""
GIST_TAIL = "\n\nShortened passage:\n"

PARALLEL_LOOKUP_HEAD = """\
The following text is what you remember from reading a project's documentation and a question \
related to it.
You may read 1 to {max_pages} page(s) of the documentation again to refresh your memory to \
prepare yourself for the question.
Please respond with which page(s) you would like to read.
For example, if you only need to read Page 8, respond with "I want to look up Page [8] to ..."; \
if you would like to read Page 7 and 12, respond with "I want to look up Page [7, 12] to ...".
DO NOT select more pages if you don't need to.
You don't need to answer the question yet.

Text:
"""
PARALLEL_LOOKUP_TAIL = "\n\nQuestion:\n{question}\n\nI want to look up Page ["

SEQUENTIAL_LOOKUP_HEAD = """\
The following text is what you remember from reading a project's documentation, followed by a \
question about it.
You may read multiple pages of the documentation again to refresh your memory and prepare to \
answer the question. Each page that you re-read can significantly improve your chance of \
answering the question correctly.
Please specify a SINGLE page you would like to read again or say "STOP".
To read a page again, respond with "Page $PAGE_NUM", replacing $PAGE_NUM with the target page \
number.
You can only specify a SINGLE page in your response at this time.
To stop, simply say "STOP". DO NOT answer the question in your response.

Text:
"""
SEQUENTIAL_LOOKUP_TAIL = """

Pages re-read already (DO NOT ask to read them again): {read}

Question:
{question}

Specify a SINGLE page to read again, or say STOP:
"""

RESPONSE_TAIL = """

Question: {question}

Answer the question based on the above passage and retrieved pages. Your answer should be \
short and concise. Cite the pages or sources you use as [n].
Answer:"""

# ------------------------------------------------------------------- structural memory

TRIPLES_HEAD = """\
You are a knowledge graph constructor tasked with extracting knowledge triples in the form of \
<head entity; relation; tail entity> from a document. Each triple denotes a specific \
relationship between entities or an event. The head entity and tail entity can be the provided \
title or phrases in the text. If multiple tail entities share the same relation with a head \
entity, aggregate these tail entities using commas.
Format your output in the form of <head entity; relation; tail entity>.

Demonstrations:
Title: Configuration
Text: The SECRET_KEY setting signs the session cookie. It defaults to None and must be set \
before sessions are used.
Knowledge Triples:
<SECRET_KEY; signs; the session cookie>
<SECRET_KEY; defaults to; None>
<SECRET_KEY; must be set before; sessions are used>

Please strictly follow the above format. Let's begin.
"""
TRIPLES_TAIL = "\nKnowledge Triples:\n"

SUMMARY_HEAD = """\
You are a helpful assistant responsible for generating a comprehensive summary of the data \
provided below.
Make sure to include information collected from all the documents. If the provided documents \
are contradictory, please resolve the contradictions and provide a single, coherent summary. \
Make sure it is written in third person, and include the names so we have the full context.

"""
SUMMARY_TAIL = "\n\nSummary:\n"

FACTS_HEAD = """\
You are now an intelligent assistant tasked with meticulously extracting both key elements and \
atomic facts from a context.
1. Key Elements: The essential nouns (e.g., names, options, settings, numbers), verbs (e.g., \
actions), and adjectives (e.g., states) that are pivotal to the text.
2. Atomic Fact: The smallest, indivisible facts, presented as concise sentences.
Requirements:
1. Ensure that all the atomic facts contain full and complete information.
2. Ensure that all identified key elements are reflected within the corresponding atomic facts.
3. Whenever applicable, replace pronouns with their specific noun counterparts.
4. Your answer format for each line should be: [Serial Number], [Atomic Fact], [List of Key \
Elements, separated with '|']

Demonstrations:
"The SECRET_KEY setting signs the session cookie. It defaults to None."
Atomic Fact and Key Elements:
1. The SECRET_KEY setting signs the session cookie. | SECRET_KEY | signs | session cookie
2. SECRET_KEY defaults to None. | SECRET_KEY | None

Please strictly follow the above format. Let's begin.
"""
FACTS_TAIL = "\n\nAtomic Fact and Key Elements:\n1."

RERANK_HEAD = """\
A list of documents is shown below. Each document has a number next to it along with a summary \
of the document. A question is also provided.
Respond with the numbers of the documents you should consult to answer the question, in order \
of relevance, as well as the relevance score. The relevance score is a number from 1-10 based \
on how relevant you think the document is to the question.
Respond with the numbers of **all** the documents along with a relevance score.

Demonstrations:
Document 1:
<summary of document 1>
Document 2:
<summary of document 2>
Document 3:
<summary of document 3>
Question: <question>
Answer:
Doc: 2, Relevance Score: 7
Doc: 1, Relevance Score: 4
Doc: 3, Relevance Score: 3

Let's try this now:

"""
RERANK_TAIL = "\n\nQuestion: {question}\nAnswer:\nDoc:"

REFINE_HEAD = """\
Follow the examples to answer the input question by reasoning step-by-step. Output both \
reasoning steps and the answer.

Demonstrations:
Question: Which setting must be set before the session cookie can be signed?
Thought: The session cookie is signed with the secret key. The secret key is the SECRET_KEY \
setting. So the answer is: SECRET_KEY.

Question: Which command-line flag turns on the debugger of the development server?
Thought: The development server is started with flask run. flask run enables the debugger with \
the --debug flag. So the answer is: --debug.

Input:
Context:
"""
REFINE_TAIL = "\n\nQuestion: {question}\nThought:"

# --------------------------------------------------------------------------------- QRMeM

ENTITIES_HEAD = """\
# Task Definition
This project aims to extract key entities from the given text to help answer related \
questions. Focus on the important entities: names of functions, classes, modules, settings, \
command-line options, files and concepts. Only name entities that appear in the text.

# Requirement
Extract the key entities of the question below, one per line.

\"\"\"
"""
ENTITIES_TAIL = '\n"""\n\nEntities:\n'

ANSWERABLE_HEAD = 'Read the text in triple quotes and answer a question:\n"""\n'
ANSWERABLE_TAIL = """
\"\"\"
Question: {question}
If the answer CANNOT be inferred from the text above, reply with action -1 and say what is \
missing.
If the answer CAN be inferred from the text above, reply with action -2, and provide your \
reasoning and the final answer.
You are ONLY allowed to reply with action -2 or -1.
#####
Reasoning: ...
Action: -2/-1, ...
#####
Reasoning:"""

# ------------------------------------------------------------ iterative QA, fact extraction

PLAN_HEAD = """\
Break the question into sub-questions. Ask one sub-question at a time; a fact retrieved from \
the documentation follows each. When the facts answer the question, write "Final answer:" \
and the answer.

Question: Which flag enables the reloader of the server that the documented run command starts?
Subquestion: Which command starts the development server?
Retrieved fact: The flask run command starts the development server.
Subquestion: Which flag of flask run enables the reloader?
Retrieved fact: flask run --debug enables the debugger and the reloader.
Final answer: --debug

"""
PLAN_TAIL = "\nSubquestion:"

FACT_HEAD = "Reference: "
FACT_TAIL = """. Based on the reference, present the fact to answer the following question.
Be concise, better one sentence.

Question: {question}. Fact:"""

FINAL_TAIL = "\nFinal answer:"

ANSWER_HEAD = """\
Answer the question about this repository using only the numbered sources below. Cite the \
sources you use as [n]. If the sources do not contain the answer, say so.

"""
ANSWER_TAIL = "\n\nQuestion: {question}\nAnswer:"


# --------------------------------------------------------------------------------- parsers

_INT = re.compile(r"-?\d+")
_TRIPLE = re.compile(r"<\s*([^;<>\n]+?)\s*;\s*([^;<>\n]+?)\s*;\s*([^<>\n]+?)\s*>")
_NUMBERED = re.compile(r"^\s*\[?\d+\]?\s*[.,):]?\s*")
_BULLET = re.compile(r"^\s*[-*•]\s+")
_CITATION = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
_RERANK = re.compile(r"(\d+)\s*,?\s*Relevance\s*Score\s*:?\s*(\d+)", re.IGNORECASE)
_ACTION = re.compile(r"Action\s*:?\s*(-[12])\b|(?<![\w-])(-[12])(?![\d])")


def parse_choice(reply: str, allowed: Sequence[int]) -> int | None:
    """The first number in ``reply`` that is one of ``allowed``."""
    ok = set(allowed)
    for m in _INT.finditer(reply):
        value = int(m.group())
        if value in ok:
            return value
    return None


def parse_pages(reply: str, allowed: Sequence[int], limit: int) -> list[int]:
    """Page numbers asked for (ReadAgent-P): the bracketed list if there is one, else every
    number; only shown pages, at most ``limit``, in order of mention."""
    ok = set(allowed)
    head = reply.split("]", 1)[0] if "]" in reply else reply
    out: list[int] = []
    for m in _INT.finditer(head):
        value = int(m.group())
        if value in ok and value not in out:
            out.append(value)
    return out[:limit]


def parse_sequential(reply: str, allowed: Sequence[int]) -> int | None:
    """ReadAgent-S: a page number, or None for STOP (or nothing usable)."""
    text = reply.strip()
    if text.upper().startswith("STOP"):
        return None
    match = re.search(r"page\s*(\d+)", text, re.IGNORECASE)
    if match and int(match.group(1)) in set(allowed):
        return int(match.group(1))
    return parse_choice(text.split("\n", 1)[0], allowed)


def parse_triples(reply: str) -> list[tuple[str, str, str]]:
    return [(h.strip(), r.strip(), t.strip()) for h, r, t in _TRIPLE.findall(reply)]


def parse_facts(reply: str) -> list[str]:
    """Atomic facts: one per numbered line, key elements after ``|`` dropped."""
    out = []
    for line in reply.splitlines():
        fact = _NUMBERED.sub("", line).split("|", 1)[0].strip()
        if len(fact.split()) >= 3 and any(c.isalpha() for c in fact):
            out.append(fact)
    return out


def parse_text(reply: str, min_words: int = 3) -> str:
    """A free-text reply up to the point where the model starts a new prompt section."""
    text = re.split(r"\n\s*\n\s*(?:Passage|Question|Text|Document)\s*:", reply, maxsplit=1)[0]
    text = text.strip()
    return text if len(text.split()) >= min_words else ""


def parse_rerank(reply: str, count: int) -> dict[int, float]:
    """Relevance scores by 1-based document number (only numbers that were shown)."""
    scores: dict[int, float] = {}
    for doc, score in _RERANK.findall("Doc: " + reply):
        d = int(doc)
        if 1 <= d <= count and d not in scores:
            scores[d] = float(min(int(score), 10))
    return scores


def parse_lines(reply: str, limit: int = 10) -> list[str]:
    """Short items, one per line or comma-separated (entity names)."""
    items = []
    for line in reply.splitlines():
        for part in line.split(","):
            item = _BULLET.sub("", _NUMBERED.sub("", part)).strip(" \t\"'`")
            if item and len(item) <= 80:
                items.append(item)
    return list(dict.fromkeys(items))[:limit]


def parse_citations(answer: str, count: int) -> list[int]:
    """0-based indices of the sources an answer cites as ``[n]``."""
    out: list[int] = []
    for group in _CITATION.findall(answer):
        for part in group.split(","):
            n = int(part)
            if 1 <= n <= count and n - 1 not in out:
                out.append(n - 1)
    return out


@dataclass(frozen=True)
class Verdict:
    """QRMeM's reflection: can the gathered text answer, and if not, why not."""

    answerable: bool
    reason: str
    answer: str


def parse_verdict(reply: str) -> Verdict:
    match = _ACTION.search(reply)
    if match is None:
        return Verdict(False, reply.strip(), "")
    action = match.group(1) or match.group(2)
    reason = reply[: match.start()].strip()
    rest = reply[match.end() :].strip(" ,:.\n")
    if action == "-2":
        return Verdict(True, reason, rest or reason)
    return Verdict(False, rest or reason, "")


def parse_plan(reply: str) -> tuple[str, str]:
    """Iterative QA planning: ``("question", text)`` for the next sub-question or
    ``("final", answer)``; ``("final", "")`` when the reply holds neither."""
    final = re.search(r"Final answer\s*:\s*(.*)", reply, re.IGNORECASE)
    first = reply.strip().split("\n", 1)[0].strip()
    if final and (not first or reply.strip().lower().startswith("final answer")):
        return "final", final.group(1).strip()
    if first and not first.lower().startswith("retrieved fact"):
        return "question", first
    return "final", final.group(1).strip() if final else ""

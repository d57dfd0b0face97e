"""The doc memory of one repository: its docs' segments, pages, memory forms and relations.

Docs are the repository's Markdown (``.md``, ``.markdown``, ``.mdx``) and reStructuredText
files, its plain-text READMEs (licence texts aside) and the docstrings of its Python modules.
:meth:`DocMemory.open` segments them (reusing what the store holds for documents whose digest
has not changed), builds the entity graph and the segment relations, and links the segments
to the code index. Memory forms are made
on demand by :meth:`DocMemory.prepare`, with the model when one is configured. Retrieval goes
through :class:`~repomem.docmem.space.JointSpace`, which scores doc entries and code
fragments together.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from repomem.config import DocMemoryConfig
from repomem.core import Exclusion, Location, RetrievedFragment
from repomem.docmem import forms, prompts
from repomem.docmem import store as doc_store
from repomem.docmem.entities import CodeSymbols, EntityGraph, lookup_keys
from repomem.docmem.forms import Entry
from repomem.docmem.model import EXTRACTIVE, TextModel
from repomem.docmem.names import BUILT_FORMS, FORMS
from repomem.docmem.pagination import PauseChoice, next_choice, paginate, structural_break
from repomem.docmem.relations import (
    code_links,
    combine,
    context_relations,
    entity_relations,
    semantic_relations,
)
from repomem.docmem.segments import (
    DOC_COMMENT_LANGUAGES,
    DOC_LANGUAGES,
    Segment,
    segment_doc_comments,
    segment_docstring,
    segment_document,
)
from repomem.docmem.space import Hit, JointSpace, Terms
from repomem.docmem.text import terms
from repomem.errors import RepomemError
from repomem.index import store as index_store
from repomem.index.bm25 import tokenize
from repomem.index.files import FileSkipped, list_candidates, load_file
from repomem.index.languages import language_for_path
from repomem.index.resolve import module_name

if TYPE_CHECKING:
    from repomem.index.repo import RepoIndex

DOCSTRING = "python-docstring"
DOC_COMMENTS = "doc-comments"  # of a code file whose language is one of DOC_COMMENT_LANGUAGES
# Legal texts are long, alike across projects, and answer no question about the code.
_SKIPPED_NAMES = re.compile(r"^(LICEN[CS]E|COPYING|NOTICE|AUTHORS)([.-].*)?$", re.IGNORECASE)
# Most ``.txt`` files are data (requirements lists, test fixtures, egg-info): a text file is
# a doc when it is named like one (README.txt, CHANGELOG) or lies in a doc folder.
_TEXT_DOC_NAMES = re.compile(
    r"^(README|CHANGELOG|CHANGES|CONTRIBUTING|HISTORY|NEWS|INSTALL)\b", re.IGNORECASE
)
_DOC_FOLDERS = frozenset({"doc", "docs", "documentation"})


class NoDocs(RepomemError):
    """The repository has no documentation to remember."""


@dataclass(frozen=True)
class Page:
    """A ReadAgent page: 1-based ``number`` over the whole repository, global segment ids."""

    number: int
    path: str
    segments: tuple[int, ...]


@dataclass(frozen=True)
class Source:
    """Something an answer rests on: a doc entry (at its best-matching segment) or a code
    fragment, with 0-based lines ``[start, end)``."""

    path: str
    start: int
    end: int
    text: str
    kind: str  # "doc" or "code"
    form: str  # the memory form, or "code"
    origin: str  # model | extractive | fallback | code
    heading: str
    score: float
    segment: int | None = None

    @property
    def label(self) -> str:
        return f"{self.path}:{self.start + 1}"

    @property
    def key(self) -> tuple[str, str, int]:
        """Where the source is: two sources with one key cite the same lines."""
        return self.kind, self.path, self.segment if self.segment is not None else self.start

    def to_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "line": self.start + 1,
            "end_line": self.end,
            "kind": self.kind,
            "form": self.form,
            "origin": self.origin,
            "heading": self.heading,
            "score": self.score,
            "text": self.text,
        }


class DocMemory:
    def __init__(
        self, index: RepoIndex, config: DocMemoryConfig, docs: dict[str, doc_store.StoredDoc]
    ) -> None:
        self.index = index
        self.config = config
        self.docs = docs
        self.paths = [p for p in sorted(docs) if docs[p].segments]
        self.segments: list[Segment] = []
        self.doc_first: dict[str, int] = {}
        doc_of = []
        for number, path in enumerate(self.paths):
            self.doc_first[path] = len(self.segments)
            self.segments.extend(docs[path].segments)
            doc_of += [number] * len(docs[path].segments)
        self.doc_of = np.array(doc_of, np.int64)
        self.graph = EntityGraph.build([s.text for s in self.segments])
        self.code = CodeSymbols(wanted=lookup_keys(self.graph.kinds))
        self.code.update(index)
        self._code_revision = index.revision
        self.graph.link(self.code)
        self.links = code_links(self.graph, len(self.segments), index)
        self.segment_relations = self._segment_relations()
        self._spaces: dict[tuple[str, str, str, bool], JointSpace] = {}
        self.follow_code = True  # re-read code changes at each query (else: sync_code)

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(
        cls, index: RepoIndex, config: DocMemoryConfig | None = None, *, save: bool = True
    ) -> DocMemory:
        """The doc memory of ``index``'s repository, re-segmenting only changed documents.

        Raises :class:`NoDocs` when the repository has no documentation.
        """
        config = config or DocMemoryConfig()
        directory = index_store.index_dir(index.root, index.config)
        stored = doc_store.load(directory, config.segmenting())
        docs: dict[str, doc_store.StoredDoc] = {}
        changed = False
        for path, language, text, digest in _documents(index):
            old = stored.get(path)
            if old is not None and old.digest == digest and old.language == language:
                docs[path] = old
                continue
            segments = _segment(path, language, text, config)
            docs[path] = doc_store.StoredDoc(digest, language, segments)
            changed = True
        changed = changed or set(stored) != set(docs)
        memory = cls(index, config, docs)
        if not memory.segments:
            raise NoDocs(
                f"no documentation found in {index.root}: repomem reads README and other"
                " Markdown (.md, .markdown, .mdx), reStructuredText or text READMEs, Python"
                " module docstrings and the doc comments of JavaScript, TypeScript, Java, Rust"
                " and Go declarations"
            )
        if save and changed:
            memory.save()
        return memory

    def save(self) -> None:
        directory = index_store.index_dir(self.index.root, self.index.config)
        doc_store.save(directory, self.config.segmenting(), self.docs)

    def _segment_relations(self) -> sp.csr_matrix:
        cfg = self.config
        n = len(self.segments)
        parts = [
            context_relations(self.doc_of, cfg.w_rel, cfg.epsilon),
            entity_relations(self.graph, n, cfg.max_entity_segments),
        ]
        if cfg.embedding_model and n:
            parts.append(semantic_relations(self.embeddings(), cfg.epsilon, cfg.neighbours))
        return combine(parts, cfg.neighbours, cfg.epsilon)

    def embeddings(self) -> np.ndarray:
        """Unit embeddings of every segment (cached in the store by segment text)."""
        from repomem.docmem.embeddings import Embedder

        assert self.config.embedding_model is not None
        embedder = Embedder(self.config.embedding_model)
        directory = index_store.index_dir(self.index.root, self.index.config)
        cache = doc_store.load_embeddings(directory, embedder.name)
        keys = [doc_store.text_key(s.index_text) for s in self.segments]
        missing = [i for i, key in enumerate(keys) if key not in cache]
        if missing:
            vectors = embedder.embed([self.segments[i].index_text for i in missing])
            cache.update({keys[i]: v for i, v in zip(missing, vectors, strict=True)})
            doc_store.save_embeddings(directory, embedder.name, {k: cache[k] for k in keys})
        return np.stack([cache[k] for k in keys]).astype(np.float64)

    def refresh_code(self) -> None:
        """Follow changes of the code index: re-read the definitions of changed files and
        re-link the entities (nothing while the index is unchanged)."""
        if self._code_revision == self.index.revision:
            return
        self._code_revision = self.index.revision
        if self.code.update(self.index):
            self.graph.link(self.code)
            self.links = code_links(self.graph, len(self.segments), self.index)

    def sync_code(self) -> None:
        """Bring every scoring space up to date with the code index (see ``follow_code``)."""
        for space in self._spaces.values():
            space.sync(force=True)

    # ------------------------------------------------------------------ forms and pages
    def builder(self, model: TextModel) -> str:
        return model.name if model.available else EXTRACTIVE

    async def prepare(
        self, wanted: Iterable[str], model: TextModel, *, pages: bool = False
    ) -> None:
        """Make sure the forms in ``wanted`` (and the pages, when asked or needed for gists)
        exist for every document, built by ``model`` when it is a language model."""
        builder = self.builder(model)
        needed = {f for w in wanted for f in (BUILT_FORMS if w == "mixed" else (w,))}
        needed.discard("chunk")
        built = {
            p: self.docs[p].builders.setdefault(builder, doc_store.Built()) for p in self.paths
        }
        changed = False
        if pages or "gist" in needed:
            todo = [p for p in self.paths if built[p].pages is None]
            if todo:
                found = await self._paginate([self.docs[p].segments for p in todo], model)
                for path, result in zip(todo, found, strict=True):
                    built[path].pages = result
                changed = True
        for form in BUILT_FORMS:
            if form not in needed:
                continue
            todo = [p for p in self.paths if form not in built[p].forms]
            if not todo:
                continue
            changed = True
            documents = [(self.docs[p].segments, built[p].pages or []) for p in todo]
            if model.available:
                made = await forms.model_entries(form, documents, model)
            else:
                made = [forms.extractive_entries(form, s, pg) for s, pg in documents]
            for path, entries in zip(todo, made, strict=True):
                built[path].forms[form] = entries
        if changed:
            self.save()
            self._spaces = {k: v for k, v in self._spaces.items() if k[1] != builder}

    async def _paginate(
        self, documents: list[list[Segment]], model: TextModel
    ) -> list[list[tuple[int, int]]]:
        cfg = self.config
        if not model.available:
            return [paginate(s, cfg.min_page_words, cfg.max_page_words) for s in documents]
        pages: list[list[tuple[int, int]]] = [[] for _ in documents]
        starts = [0] * len(documents)
        while True:
            asks = []
            for d, segs in enumerate(documents):
                if starts[d] >= len(segs):
                    continue
                choice = next_choice(segs, starts[d], cfg.min_page_words, cfg.max_page_words)
                if choice is None:
                    pages[d].append((starts[d], len(segs)))
                    starts[d] = len(segs)
                else:
                    asks.append((d, choice))
            if not asks:
                return pages
            texts = [_pagination_prompt(documents[d], c, model) for d, c in asks]
            replies = await model.generate(texts, max_tokens=16, stop=("\n",))
            for (d, choice), reply in zip(asks, replies, strict=True):
                end = prompts.parse_choice(reply, choice.candidates)
                if end is None:
                    end = structural_break(documents[d], choice)
                pages[d].append((starts[d], end))
                starts[d] = end

    def pages(self, builder: str) -> list[Page]:
        out = []
        for path in self.paths:
            first = self.doc_first[path]
            for start, end in self.docs[path].builders[builder].pages or []:
                out.append(Page(len(out) + 1, path, tuple(range(first + start, first + end))))
        return out

    def entries(self, form: str, builder: str) -> list[Entry]:
        """Entries of ``form`` (``mixed``: all forms) with global segment ids; built forms
        must have been prepared for ``builder``."""
        if form == "mixed":
            return [e for f in FORMS for e in self.entries(f, builder)]
        out = []
        for path in self.paths:
            first = self.doc_first[path]
            doc = self.docs[path]
            local = (
                forms.chunk_entries(doc.segments)
                if form == "chunk"
                else doc.builders[builder].forms[form]
            )
            for e in local:
                out.append(
                    Entry(e.form, e.text, tuple(first + s for s in e.segments), e.origin, e.line)
                )
        return out

    def space(
        self, form: str, builder: str, *, code: bool = True, code_terms: bool = False
    ) -> JointSpace:
        """The scoring space of one form (cached). ``code_terms`` scores with the code
        tokenizer (completion queries are code); otherwise with doc terms (questions)."""
        key = (form, builder, "code" if code_terms else "doc", code)
        if key not in self._spaces:
            tokenizer: Terms = tokenize if code_terms else terms
            self._spaces[key] = JointSpace(self, self.entries(form, builder), tokenizer, code=code)
        return self._spaces[key]

    # ------------------------------------------------------------------ results
    @cached_property
    def term_idf(self) -> dict[str, float]:
        """Inverse document frequency of doc terms over the segments (BM25's, kept positive)."""
        df: Counter[str] = Counter()
        for seg in self.segments:
            df.update(set(terms(seg.index_text)))
        n = len(self.segments)
        return {t: math.log((n - c + 0.5) / (c + 0.5) + 1.0) for t, c in df.items()}

    def best_segment(self, query: str, segments: tuple[int, ...]) -> int:
        """The member segment that matches ``query`` best (where a gist or summary points)."""
        if len(segments) == 1:
            return segments[0]
        scores = self.space("chunk", EXTRACTIVE, code=False).bm25.scores(terms(query))
        return max(segments, key=lambda s: (scores[s] if s < scores.size else 0.0, -s))

    def source(self, space: JointSpace, hit: Hit, query: str) -> Source:
        if hit.entry is None:
            assert hit.fragment is not None
            loc = min(self.index.fragment_locations(hit.fragment), key=lambda x: (x.path, x.start))
            return Source(
                loc.path,
                loc.start,
                loc.end,
                self.index.fragment_text(hit.fragment),
                "code",
                "code",
                "code",
                "",
                hit.s_rel,
            )
        entry = space.entries[hit.entry]
        seg_id = self.best_segment(query, entry.segments)
        seg = self.segments[seg_id]
        start = (
            entry.line
            if entry.line is not None and seg.start <= entry.line < seg.end
            else (seg.start)
        )
        text = seg.text if entry.form == "chunk" else entry.text
        return Source(
            seg.path,
            start,
            seg.end,
            text,
            "doc",
            entry.form,
            entry.origin,
            seg.heading,
            hit.s_rel,
            seg_id,
        )

    def segment_source(self, seg_id: int, score: float, form: str = "chunk") -> Source:
        seg = self.segments[seg_id]
        return Source(
            seg.path,
            seg.start,
            seg.end,
            seg.text,
            "doc",
            form,
            EXTRACTIVE,
            seg.heading,
            score,
            seg_id,
        )

    # ------------------------------------------------------------------ completion
    def retrieve_for_code(
        self,
        query: str,
        k: int = 10,
        *,
        alpha: float | None = None,
        exclusion: Exclusion | None = None,
        retrieved: list[RetrievedFragment] | None = None,
    ) -> list[RetrievedFragment]:
        """Doc segments that rank among the ``k`` best items for a code query when doc
        segments and code fragments are scored together, as completion fragments (path: the
        doc; ``shown``: the segment's text). Their ``s_rel`` is on the scale of code
        fragments' scores, so a caller can merge both lists by it.

        ``exclusion`` hides code as for code retrieval, and also the docstring segments of the
        excluded file that overlap the hidden lines: they are that file's text.
        ``retrieved``: the index's own ``retrieve(query, k, alpha, exclusion)``, where the
        caller has it (a completion's code fragments), so that it is not searched twice.
        """
        space = self.space("chunk", EXTRACTIVE, code_terms=True)
        visible = None
        if exclusion is not None and exclusion.path in self.doc_first:
            visible = np.ones(space.n_doc, bool)
            first = self.doc_first[exclusion.path]
            for i in range(first, first + len(self.docs[exclusion.path].segments)):
                seg = self.segments[i]
                visible[i] = not exclusion.hides(Location(seg.path, seg.start, seg.end))
        hits = space.search(
            query,
            k,
            alpha=self.config.alpha if alpha is None else alpha,
            exclusion=exclusion,
            doc_visible=visible,
            retrieved=retrieved,
        )
        out = []
        for hit in hits:
            if hit.entry is None:
                continue
            seg = self.segments[space.entries[hit.entry].segments[0]]
            out.append(
                RetrievedFragment(
                    fragment_id=-1 - hit.entry,
                    locations=(Location(seg.path, seg.start, seg.end),),
                    text=seg.text,
                    shown=seg.text,
                    s_ind=hit.s_ind,
                    s_env=hit.s_env,
                    s_rel=hit.s_rel,
                )
            )
        return out


def _pagination_prompt(segments: list[Segment], choice: PauseChoice, model: TextModel) -> str:
    parts = []
    for j in range(choice.start, choice.stop):
        parts.append(segments[j].text)
        if j + 1 in choice.candidates:
            parts.append(f"<{j + 1}>")
    passage = "\n\n".join(parts)
    return model.fit(prompts.PAGINATION_HEAD, passage, prompts.PAGINATION_TAIL, max_tokens=16)


def _documents(index: RepoIndex) -> list[tuple[str, str, str, str]]:
    """``(path, language, text, digest)`` of every doc file, every Python module (for its
    docstring) and every code file whose language has doc comments (for those)."""
    out = []
    for path in list_candidates(index.root, index.config):
        if not is_doc(path):
            continue
        language = language_for_path(path)
        try:
            f = load_file(index.root, path, index.config)
        except FileSkipped:
            continue
        out.append((path, language, f.text, f.digest))
    for path, language, digest in index.indexed_files():
        if language == "python":
            out.append((path, DOCSTRING, index.file_text(path) or "", digest))
        elif language in DOC_COMMENT_LANGUAGES:
            out.append((path, DOC_COMMENTS, index.file_text(path) or "", digest))
    return out


def is_doc(path: str) -> bool:
    """Whether the doc memory reads the file at ``path`` (docstrings aside)."""
    language = language_for_path(path)
    name = Path(path).name
    if language not in DOC_LANGUAGES or _SKIPPED_NAMES.match(name):
        return False
    if language == "text":
        folders = {part.lower() for part in Path(path).parts[:-1]}
        return bool(_TEXT_DOC_NAMES.match(name) or folders & _DOC_FOLDERS)
    return True


def _segment(path: str, language: str, text: str, config: DocMemoryConfig) -> list[Segment]:
    sizes = {"min_words": config.min_segment_words, "max_words": config.max_segment_words}
    if language == DOCSTRING:
        return segment_docstring(path, module_name(path), text, **sizes)
    if language == DOC_COMMENTS:
        return segment_doc_comments(path, language_for_path(path) or "", text, **sizes)
    return segment_document(path, language, text, **sizes)

"""The repository index: a handle over its tables (``tables.IndexTables``).

``RepoIndex.build`` indexes a repository (re-parsing only files whose content changed since
the last index; ``build``), ``update_file`` applies one file's new text exactly as a rebuild
would (``update``), and ``retrieve`` ranks fragments by FragRel's relation-aware score
(``search``); ``store`` saves and loads the tables. The context engine reads the index
through the handle's methods, never its tables.
"""

from __future__ import annotations

import contextlib
import tempfile
from dataclasses import asdict
from pathlib import Path

import numpy as np

from repomem.config import IndexConfig
from repomem.core import Exclusion, RetrievedFragment
from repomem.index import store
from repomem.index.build import IndexSummary, Progress, build_tables
from repomem.index.files import FileSkipped, load_file
from repomem.index.gcpause import paused_gc
from repomem.index.parsing import TreeCache
from repomem.index.resolve import Resolver
from repomem.index.search import Searcher
from repomem.index.tables import IndexTables
from repomem.index.update import update_file


class RepoIndex:
    """The index of one repository: its tables, and the state a session keeps over them."""

    def __init__(self, root: Path, tables: IndexTables) -> None:
        self.root = root
        self.tables = tables
        # bumped by every change a file's update makes: what is derived from the whole
        # index (a class card's most-called methods) is cached against it
        self.revision = 0
        self._trees = TreeCache()  # the files updated last, for incremental parsing
        self._search = Searcher(tables)

    @property
    def config(self) -> IndexConfig:
        return self.tables.config

    # ------------------------------------------------------------------ building
    @classmethod
    def build(
        cls,
        root: Path,
        config: IndexConfig | None = None,
        *,
        progress: Progress | None = None,
        save: bool = True,
    ) -> tuple[RepoIndex, IndexSummary]:
        """Index ``root`` and (by default) persist it atomically.

        Files whose content is unchanged since the saved index are not parsed again.
        """
        config = config or IndexConfig()
        previous = None
        with paused_gc(freeze=True):
            with contextlib.suppress(store.IndexNotFound, store.IndexUnreadable):
                manifest = store.read_manifest(root, config)
                if store.config_from(manifest["config"]) == config:
                    previous = store.load(root, config)
            if save:
                # the texts go straight to the new generation, which goes live once complete
                with store.writing(root, config) as out:
                    tables, summary = build_tables(root, config, previous, progress, out / "arrays")
                    store.write_generation(tables, out, asdict(summary))
                summary.index_bytes = store.index_bytes(root, config)
            else:
                # mapped back, the spooled texts outlive their files
                with tempfile.TemporaryDirectory(prefix="repomem-") as spool:
                    tables, summary = build_tables(root, config, previous, progress, Path(spool))
        return cls(root, tables), summary

    @classmethod
    def load(
        cls, root: Path, config: IndexConfig | None = None, *, mapped: bool = True
    ) -> RepoIndex:
        """The saved index of ``root`` (``RepomemError`` if there is none or it is unreadable);
        ``mapped``: see ``store.load``."""
        return cls(root, store.load(root, config, mapped=mapped))

    def save(self) -> None:
        store.save(self.root, self.tables)

    def warm(self) -> None:
        """Derive now what an opened index builds on first use (the resolver from every
        file's definitions and imports, the graph, node rows and calls by target from their
        saved arrays, relations by target): a long-lived process does it before serving, so
        that neither its first edit nor its first definition cards pay for it; a one-shot
        command leaves it to first use."""
        t = self.tables
        _ = (t.graph, t.resolver, t.node_frags, t.calls_into, t.inverse_relations)

    def tidy(self) -> None:
        """Reorganise what updates left behind, at a moment nothing waits for the index (an
        editor's pause): BM25 compacts its delta here, long before an update or a query
        would have to."""
        self.tables.bm25.tidy()

    # ------------------------------------------------------------------ incremental update
    def update_file(self, path: str, text: str | None) -> None:
        """Apply one file's new content (``None``: the file is gone), exactly as a full
        rebuild over the new set of files would (``update.update_file``)."""
        if update_file(self.tables, self._trees, path, text):
            self.revision += 1

    def apply_buffer(self, path: str, text: str) -> None:
        """Show retrieval a file as the user has it now. Only files the index holds are
        updated: one it skipped (ignored, secret, unsupported) stays out of every prompt."""
        if path in self.tables.files:
            self.update_file(path, text)

    def reload_file(self, path: str) -> None:
        """Re-read one file from disk (or drop it if it is gone or no longer indexable)."""
        try:
            f = load_file(self.root, path, self.config)
        except FileSkipped:
            self.update_file(path, None)
            return
        self.update_file(path, f.text)

    # ------------------------------------------------------------------ retrieval
    def visible(self, exclusion: Exclusion | None) -> np.ndarray:
        """Per fragment id, whether a search may return it: live, and not hidden whole by
        ``exclusion``."""
        return self._search.visible(exclusion)

    def retrieve(
        self,
        query: str,
        *,
        k: int = 10,
        alpha: float = 0.5,
        exclusion: Exclusion | None = None,
    ) -> list[RetrievedFragment]:
        """The top-k fragments for a query window by ``s_rel = s_ind + alpha * s_env``."""
        return self._search.retrieve(
            query, k=k, alpha=alpha, exclusion=exclusion, revision=self.revision
        )

    def query_scores(self, query: str) -> np.ndarray:
        """Every fragment's BM25 score for ``query`` (shared with the caller: read only)."""
        return self._search.query_scores(query, self.revision)

    # ------------------------------------------------------------------ what the context reads
    @property
    def resolver(self) -> Resolver:
        """Call resolution over the indexed files (definitions, imports, what a name means)."""
        return self.tables.resolver

    def file_lines(self, path: str) -> list[str]:
        """The lines of an indexed file as the index holds it now (do not modify)."""
        return self._search.lines(path)

    def file_text(self, path: str) -> str | None:
        entry = self.tables.files.get(path)
        return entry.text if entry is not None else None

"""Opening a repository's index: the saved one while it is current, else a new build.

One rule for the command line, the language server and the benchmark runner: a saved index
keeps the settings it was built with, so one built with other ``[index]`` settings (or, where
the caller checks, over other files) is built again; files whose content is unchanged are
not parsed again. Without ``build`` the saved index is taken as it is, and what differs is
returned for the caller to say.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from repomem.config import IndexConfig
from repomem.index import langs
from repomem.index.files import FileScan
from repomem.index.parsing import supported
from repomem.index.repo import RepoIndex
from repomem.index.store import IndexNotFound


@dataclass(frozen=True)
class Opened:
    """An opened index; ``built``: built now; ``changed``: the index settings it was built
    with other than those asked for (without ``build``, it is kept anyway)."""

    index: RepoIndex
    built: bool
    changed: tuple[str, ...] = ()


def changed_settings(saved: IndexConfig, wanted: IndexConfig) -> tuple[str, ...]:
    """The settings ``saved`` (an index's) holds other than ``wanted``; ``index_dir`` only says
    where the index is, and it was found there."""
    have, want = dataclasses.asdict(saved), dataclasses.asdict(wanted)
    return tuple(key for key in want if key != "index_dir" and have[key] != want[key])


def unchanged(index: RepoIndex, scan: FileScan) -> bool:
    """Whether ``scan`` (of the index's root, now) finds the code files ``index`` holds with
    the same content and the languages' project settings it was built with (tsconfig.json's
    paths, go.mod's module): a build would make the same index."""
    code = {f.path: f for f in scan.files if supported(f.language)}
    if {p: f.digest for p, f in code.items()} != {p: d for p, _, d in index.indexed_files()}:
        return False
    settings = langs.read_settings(index.root, {p: f.language for p, f in code.items()})
    # as the manifest holds them (JSON: tuples come back as lists)
    return json.loads(json.dumps(settings)) == json.loads(json.dumps(index.tables.settings))


def open_index(
    root: Path,
    config: IndexConfig,
    *,
    build: bool,
    say: Callable[[str], None] = lambda message: None,
    current: Callable[[RepoIndex], bool] | None = None,
) -> Opened:
    """The saved index of ``root`` when it is current for ``config`` (and ``current``, when
    given, accepts it), else, with ``build``, a new build (persisted; ``say`` is told first).
    Without ``build`` a missing index raises ``IndexNotFound``; an unreadable one raises
    ``IndexUnreadable`` in any case."""
    try:
        index = RepoIndex.load(root, config)
    except IndexNotFound:
        if not build:
            raise
        say(f"indexing {root} (first use)")
        return Opened(RepoIndex.build(root, config)[0], built=True)
    changed = changed_settings(index.config, config)
    if not build or (not changed and (current is None or current(index))):
        return Opened(index, built=False, changed=changed)
    say(f"indexing {root} again (changed: {', '.join(changed or ('files',))})")
    return Opened(RepoIndex.build(root, config)[0], built=True)

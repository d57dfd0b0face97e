"""Which files the workspace index holds, as the language server sees them change.

The index's own rules (:mod:`repomem.index.files`) decide what a repository's index holds; an
edit arrives as a path and maybe the buffer's text, so these are the cheap checks applied to it
before the index is touched.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path, PurePosixPath

from repomem.config import IndexConfig
from repomem.errors import RepomemError
from repomem.index.files import FileSkipped, check_prompt_text, list_candidates, skip_explanation
from repomem.index.languages import language_for_path
from repomem.index.parsing import supported

logger = logging.getLogger(__name__)


def is_code(path: str) -> bool:
    """Whether the code index holds files like ``path`` (docs and others it does not)."""
    language = language_for_path(path)
    return language is not None and supported(language)


def kept_out(root: Path, config: IndexConfig, path: str, text: str) -> bool:
    """Whether an open document's text must stay out of the index (and so out of every
    prompt): a secret or ignored file the index left out, or a buffer too large or binary."""
    try:
        check_prompt_text(root, path, config, text.encode("utf-8", "replace"))
    except FileSkipped as skip:
        logger.debug("not indexing the open %s: it %s", path, skip_explanation(skip, config))
        return True
    return False


def candidates(root: Path, config: IndexConfig) -> set[str]:
    """The files the index may hold now (none where they cannot be listed: logged)."""
    try:
        return set(list_candidates(root, config))
    except (RepomemError, OSError) as exc:
        logger.warning("cannot list the files of %s: %s", root, exc)
        return set()


def outside(root: Path | None, config: IndexConfig, path: str) -> bool:
    """Paths no index may hold (git's and the index's own files), to skip cheaply."""
    parts = PurePosixPath(path).parts
    index_dir = PurePosixPath(config.index_dir)
    if index_dir.is_absolute() and root is not None:
        with contextlib.suppress(ValueError):
            index_dir = PurePosixPath(Path(index_dir).relative_to(root).as_posix())
    return ".git" in parts or parts[: len(index_dir.parts)] == index_dir.parts

"""numba for repomem's kernels, with the compiled kernels cached in the user's cache directory.

numba caches a ``cache=True`` kernel in the ``__pycache__`` beside its source, which for an
installed package is site-packages: a read-only install cannot cache at all, and files pip does
not know of outlive ``pip uninstall``, leaving a ``repomem/__pycache__`` that then imports as a
namespace package ahead of an editable install. So every module with kernels imports numba from
here, and this module first points ``NUMBA_CACHE_DIR`` at ``$XDG_CACHE_HOME/repomem/numba``
(else ``~/.cache/repomem/numba``), unless the user has set it; in the environment, so that the
processes repomem starts inherit it. Installs and checkouts share that directory safely: numba
gives each source directory a subdirectory of its own (so each installation compiles once) and
checks each kernel against its source file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


def cache_home() -> Path:
    """repomem's directory in the user's cache directory (XDG's, else ``~/.cache``)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "repomem"


os.environ.setdefault("NUMBA_CACHE_DIR", str(cache_home() / "numba"))

import numba  # noqa: E402  (numba reads NUMBA_CACHE_DIR when it is imported)
from numba.core import event  # noqa: E402

# A program that imported numba before repomem: numba reads its variables again here.
numba.config.reload_config()

COMPILE_NOTICE = (
    "repomem: compiling the index kernels, once per installation (~15 s); they are cached in {}"
)


class _CompileNotice(event.Listener):
    """Writes one line when the first kernel compiles: numba compiles only on a cache miss."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self._write = write
        self._said = False

    def on_start(self, ev: event.Event) -> None:
        if not self._said:
            self._said = True
            self._write(COMPILE_NOTICE.format(numba.config.CACHE_DIR))

    def on_end(self, ev: event.Event) -> None:
        pass


@contextmanager
def compile_notice(write: Callable[[str], None]) -> Iterator[None]:
    """Within it, a kernel compiled rather than loaded from the cache says so, once, through
    ``write``: a cold cache otherwise looks like a hang of ~15 s."""
    with event.install_listener("numba:compile", _CompileNotice(write)):
        yield

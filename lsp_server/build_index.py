"""A full index build in a process of its own, for the language server.

The server is multi-threaded, and ``RepoIndex.build`` parses a large repository in forked worker
processes; forking a multi-threaded process can leave a child waiting forever on a lock some
other thread held at the time. A build also holds the interpreter for seconds. So the server
runs builds here: it writes ``{"root": ..., "config": {...}}`` to stdin, reads JSON lines from
stdout (``{"progress": [stage, done, total]}``, then ``{"summary": {...}}`` or
``{"error": "..."}``), and loads the persisted index when the build is done.

    python -m lsp_server.build_index < request.json
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, TextIO

from repomem.errors import RepomemError
from repomem.index.repo import RepoIndex
from repomem.index.store import config_from

PROGRESS_INTERVAL_S = 0.1


def _emit(out: TextIO, message: dict[str, Any]) -> None:
    out.write(json.dumps(message) + "\n")
    out.flush()


def main(stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout) -> int:
    request = json.loads(stdin.read())
    root = Path(request["root"])
    config = config_from(request["config"])
    last = 0.0

    def progress(stage: str, done: int, total: int) -> None:
        nonlocal last
        now = time.monotonic()
        if done >= total or now - last >= PROGRESS_INTERVAL_S:
            last = now
            _emit(stdout, {"progress": [stage, done, total]})

    try:
        _, summary = RepoIndex.build(root, config, progress=progress, save=True)
    except (RepomemError, OSError) as exc:
        _emit(stdout, {"error": str(exc)})
        return 2
    _emit(stdout, {"summary": asdict(summary)})
    return 0


if __name__ == "__main__":
    sys.exit(main())

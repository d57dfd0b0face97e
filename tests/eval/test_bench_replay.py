"""The commit-replay benchmark (``eval/bench_replay.py``) on a small history: a commit that
adds a function in one file and calls it in another gives a task, which the recent edits
channel answers from the edit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import git
from repos import make_repo

BENCH = Path(__file__).resolve().parents[2] / "eval" / "bench_replay.py"

LIB = """\
def first_helper(value):
    return value + 1
"""
LIB_ADDED = """

def normalise_weights(weights, total):
    scale = total / sum(weights)
    return [w * scale for w in weights]
"""
APP = "from pkg.lib import first_helper\n\n\ndef run(x):\n    return first_helper(x)\n"
APP_ADDED = (
    "\n\ndef balance(weights, total):\n"
    "    fixed = normalise_weights(weights, total)\n"
    "    return fixed\n"
)


def test_a_commit_is_replayed_with_and_without_the_recent_channel(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "history", {"pkg/lib.py": LIB, "pkg/zapp.py": APP})
    (repo / "pkg/lib.py").write_text(LIB + LIB_ADDED)
    (repo / "pkg/zapp.py").write_text(
        APP.replace("import first_helper", "import first_helper, normalise_weights") + APP_ADDED
    )
    handle = git.Repo(repo)
    handle.git.add(all=True)
    handle.index.commit("normalise weights")
    out = tmp_path / "replay.json"
    proc = subprocess.run(
        [sys.executable, str(BENCH), str(repo), "--commits", "1", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    (report,) = json.loads(out.read_text()).values()
    assert report["commits"] == 1
    off, on = report["without"], report["with_recent"]
    # the import, the def (weights, total) and the call name what lib.py added
    assert off["tasks"] == on["tasks"] == 3
    # the import, on the file's first line, has no code before it to search with
    assert on["hit@10"] == 66.7 and on["hit@10"] >= off["hit@10"]
    assert on["def@prompt"] >= off["def@prompt"]
    assert "| history | 1 | on | 3 | 66.7 |" in proc.stdout

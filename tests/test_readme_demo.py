"""The README's main command completes a line of this repository's own code, and the text
under it says which line and what the cursor follows: both must move with that code, and the
built-in backend must still be confident there (any change to the repository's code changes
the places it copies from, so the command itself is run on a copy of the tracked files)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from repos import run_repomem

ROOT = Path(__file__).resolve().parent.parent


def _cursor() -> tuple[str, int, int, str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = next(line for line in readme.splitlines() if line.startswith("python3 -m venv"))
    path, line, column = re.search(r"repomem complete (\S+):(\d+):(\d+) --typing", command).groups()
    said = re.search(r"cursor just after `([^`]+)` on line (\d+)", readme)
    assert said is not None and said.group(2) == line
    return path, int(line), int(column), said.group(1)


def test_the_main_commands_cursor_is_where_the_readme_says():
    path, line, column, after = _cursor()
    text = (ROOT / path).read_text(encoding="utf-8").splitlines()[line - 1]
    assert text[: column - 1].lstrip() == after


def test_the_main_command_completes_the_rest_of_its_line(tmp_path: Path):
    path, line, column, _ = _cursor()
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\0")
    copy = tmp_path / "repo"
    (copy / ".git").mkdir(parents=True)
    for rel in filter(None, tracked):
        if (ROOT / rel).is_file():
            (copy / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / rel, copy / rel)
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOMEM_")}
    assert run_repomem("index", ".", cwd=copy, env=env).returncode == 0
    done = run_repomem("complete", f"{path}:{line}:{column}", "--typing", cwd=copy, env=env)
    assert done.returncode == 0, done.stderr
    rest = (ROOT / path).read_text(encoding="utf-8").splitlines()[line - 1][column - 1 :]
    assert done.stdout.strip() == rest.strip()

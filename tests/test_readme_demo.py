"""The README's main command completes a line of this repository's own code, and the text
under it says which line and what the cursor follows: both must move with that code."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_main_commands_cursor_is_where_the_readme_says():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = next(line for line in readme.splitlines() if line.startswith("python3 -m venv"))
    path, line, column = re.search(r"repomem complete (\S+):(\d+):(\d+) --typing", command).groups()
    said = re.search(r"cursor just after `([^`]+)` on line (\d+)", readme)
    assert said is not None and said.group(2) == line
    text = (ROOT / path).read_text(encoding="utf-8").splitlines()[int(line) - 1]
    assert text[: int(column) - 1].lstrip() == said.group(1)

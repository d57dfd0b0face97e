"""Every install instruction names what installs this project. PyPI's package named
``repomem`` is an unrelated project, so no doc, message or script may tell users to install a
requirement of that name; this project's distribution is ``repomem-code``."""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUFFIXES = {".md", ".py", ".ts", ".js", ".lua", ".json", ".sh", ".toml", ".txt", ".cfg"}
SKIP = {".git", "node_modules", "out", ".repomem", "__pycache__", "data"}
# `pip install [options] repomem`, quoted or not, with or without extras or a version
WRONG = re.compile(r"pip3?\s+install\s+(?:-\S+\s+)*[\"']?repomem(?![\w.-])")


def texts() -> list[Path]:
    found = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIP and not d.startswith(".venv")]
        found += [Path(folder, f) for f in files if Path(f).suffix in SUFFIXES]
    return [path for path in found if path != Path(__file__).resolve()]  # its own examples


def test_no_doc_or_message_installs_the_unrelated_pypi_package():
    paths = texts()
    assert ROOT / "editors/vscode/src/serverCommand.ts" in paths
    assert ROOT / "editors/nvim/lua/repomem/health.lua" in paths
    wrong = [
        f"{path.relative_to(ROOT)}:{text[: m.start()].count(chr(10)) + 1}: {m.group()}"
        for path in paths
        for text in [path.read_text(encoding="utf-8", errors="replace")]
        for m in WRONG.finditer(text)
    ]
    assert not wrong, wrong


def test_the_pattern_catches_every_spelling():
    for said in ("pip install repomem", "pip install -U 'repomem[vllm]'", 'pip3 install "repomem"'):
        assert WRONG.search(said), said
    for said in ("pip install repomem-code", "pip install .", "pip install -e '.[test]'"):
        assert not WRONG.search(said), said


def test_the_distribution_is_named_apart_and_keeps_the_command():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == "repomem-code"
    assert project["scripts"] == {"repomem": "repomem.cli:main"}

"""``repomem index`` and ``repomem retrieve`` driven as subprocesses."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from repos import (
    BUILD_OUTPUT_SKIPPED,
    BUILD_OUTPUT_TREE,
    OTHER_LANG_FILES,
    make_repo,
    write_files,
)
from repos import run_repomem as repomem


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_repo(tmp_path_factory.mktemp("cli") / "repo", OTHER_LANG_FILES)
    (root / ".env").write_text("API_KEY=secret\n")
    (root / "README.md").write_text("# fixture\n")
    return root


def test_index_reports_what_it_did(root: Path) -> None:
    out = repomem("index", str(root), "--json", "--no-progress")
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["files_by_language"]["python"] == 6
    assert summary["files_by_language"]["markdown"] == 1
    assert summary["skipped"]["secret"] == 1
    assert summary["fragments"] > 0 and summary["relations"] > 0
    assert set(summary["edges"]) == {"syntax", "directory", "file_root", "call"}
    assert summary["edges"]["call"] >= 10
    assert summary["index_bytes"] > 0
    text = repomem("index", str(root), "--no-progress")
    assert text.returncode == 0
    assert "unchanged, reused: 13" in text.stdout
    assert "graph edges" in text.stdout and "index size" in text.stdout


def test_retrieve_explains_scores(root: Path) -> None:
    repomem("index", str(root), "--no-progress")
    out = repomem("retrieve", f"{root}/pkg/sub/mod.py:9", "--json", "--k", "3")
    assert out.returncode == 0, out.stderr
    hits = json.loads(out.stdout)
    assert 0 < len(hits) <= 3
    for h in hits:
        assert h["s_rel"] == pytest.approx(h["s_ind"] + 0.5 * h["s_env"])
        # the cursor's own neighbourhood is never retrieved
        for loc in h["locations"]:
            assert not (loc["path"] == "pkg/sub/mod.py" and loc["end"] > 0 and loc["start"] < 28)
    plain = repomem("retrieve", "pkg/core.py:9", "--alpha", "0", cwd=root)
    assert plain.returncode == 0, plain.stderr
    assert "s_env=0.000" in plain.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("index", "/definitely/not/here"), "no such directory"),
        (("retrieve", "nofile.py:3"), "no such file"),
        (("retrieve", "pkg/core.py"), "FILE:LINE"),
        (("retrieve", "pkg/core.py:999"), "past the end"),
        (("retrieve", "pkg/core.py:3", "--k", "0"), "completion.k must be at least 1"),
        (("index", ".", "--epsilon", "1.5"), "index.relation_epsilon must be in [0, 1)"),
    ],
)
def test_bad_input_is_one_clean_line(root: Path, args: tuple[str, ...], message: str) -> None:
    repomem("index", str(root), "--no-progress")
    out = repomem(*args, cwd=root)
    assert out.returncode == 2
    assert message in out.stderr
    assert "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_file_instead_of_directory_and_outside_file(root: Path, tmp_path: Path) -> None:
    out = repomem("index", str(root / "pkg/core.py"))
    assert out.returncode == 2 and "is a file" in out.stderr
    stray = tmp_path / "stray.py"
    stray.write_text("x = 1\n")
    out = repomem("retrieve", f"{stray}:1", cwd=root)
    assert out.returncode == 2 and "Traceback" not in out.stderr


def test_unindexed_and_damaged_index(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    out = repomem("retrieve", "pkg/core.py:5", cwd=root)
    assert out.returncode == 2 and "repomem index" in out.stderr
    assert repomem("index", str(root), "--no-progress").returncode == 0
    gen = next((root / ".repomem").glob("gen-*"))
    (gen / "arrays.npz").write_bytes(b"garbage")
    out = repomem("retrieve", "pkg/core.py:5", cwd=root)
    assert out.returncode == 2 and "unreadable" in out.stderr and "Traceback" not in out.stderr


SETTINGS_SOURCES = {
    ".repomem.toml": ('[index]\nignore_patterns = ["web/"]\n', {}),
    "pyproject.toml": ('[tool.repomem.index]\nignore_patterns = ["web/"]\n', {}),
    "environment": ("", {"REPOMEM_INDEX_IGNORE_PATTERNS": "web/"}),
}


@pytest.mark.parametrize("source", SETTINGS_SOURCES)
def test_index_follows_the_repository_settings(tmp_path: Path, source: str) -> None:
    root = make_repo(tmp_path / "r", OTHER_LANG_FILES)
    text, variables = SETTINGS_SOURCES[source]
    if text:
        (root / source).write_text(text)
    out = repomem("index", root, "--json", "--no-progress", env={**os.environ, **variables})
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["skipped"]["ignored"] == 2  # web/app.js, web/types.ts
    assert "javascript" not in summary["files_by_language"]
    assert summary["files_by_language"]["python"] == 6


def test_a_bad_environment_value_is_one_clean_line(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    env = {**os.environ, "REPOMEM_INDEX_MAX_FILE_BYTES": "abc"}
    out = repomem("index", root, "--no-progress", env=env)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert "REPOMEM_INDEX_MAX_FILE_BYTES" in out.stderr and "'abc'" in out.stderr
    assert not (root / ".repomem").exists()


def test_retrieve_follows_the_repository_settings(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    (root / ".repomem.toml").write_text('[index]\nindex_dir = "cache/idx"\n[completion]\nk = 2\n')
    assert repomem("index", root, "--no-progress").returncode == 0
    assert (root / "cache/idx/CURRENT").is_file() and not (root / ".repomem").exists()
    out = repomem("retrieve", "pkg/sub/mod.py:9", "--json", cwd=root)
    assert out.returncode == 0, out.stderr
    assert len(json.loads(out.stdout)) == 2
    flag = repomem("retrieve", "pkg/sub/mod.py:9", "--json", "--k", "3", cwd=root)
    assert len(json.loads(flag.stdout)) == 3


def test_an_index_built_with_other_settings_is_reported_or_rebuilt(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    assert repomem("index", root, "--no-progress").returncode == 0
    (root / ".repomem.toml").write_text('[index]\nignore_patterns = ["pkg/sub/"]\n')
    out = repomem("retrieve", "pkg/core.py:9", cwd=root)
    assert out.returncode == 0, out.stderr
    assert "other index settings (ignore_patterns)" in out.stderr and "pkg/sub/" in out.stdout
    out = repomem("complete", "pkg/core.py:9", cwd=root)
    assert out.returncode == 0, out.stderr
    assert "indexing" in out.stderr and "ignore_patterns" in out.stderr
    again = repomem("retrieve", "pkg/core.py:9", cwd=root)
    assert again.stderr == "" and "pkg/sub/" not in again.stdout


def test_retrieval_in_a_package_with_build_output(tmp_path: Path) -> None:
    root = write_files(tmp_path / "package", BUILD_OUTPUT_TREE)
    index = repomem("index", root, "--json", "--no-progress")
    assert index.returncode == 0, index.stderr
    assert json.loads(index.stdout)["skipped"]["build_output"] == len(BUILD_OUTPUT_SKIPPED)
    cursor = "src/internal/Subject.ts:45"  # in subscribe(), after error() and complete()
    hits = json.loads(repomem("retrieve", cursor, "--json", "--k", "3", cwd=root).stdout)
    assert hits and all(loc["path"].startswith("src/") for h in hits for loc in h["locations"])
    # with the setting off the compiled copy comes back, and outranks the sources
    (root / ".repomem.toml").write_text("[index]\nexclude_build_output = false\n")
    assert repomem("index", root, "--no-progress").returncode == 0
    hits = json.loads(repomem("retrieve", cursor, "--json", "--k", "3", cwd=root).stdout)
    assert hits[0]["locations"][0]["path"] == "dist/esm/internal/Subject.js"

"""``repomem index`` and ``repomem retrieve`` driven as subprocesses."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
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

PACKAGE = Path(importlib.util.find_spec("repomem").origin).parent  # type: ignore[union-attr, arg-type]
COMPILING = "repomem: compiling the index kernels"


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
    out = repomem("retrieve", f"{root}/pkg/sub/mod.py:9", "--json", "--k", "3", "--alpha", "0.5")
    assert out.returncode == 0, out.stderr
    account = json.loads(out.stdout)
    hits = account["fragments"]
    assert 0 < len(hits) <= 3
    # mod.py calls helper, imported from pkg.util: its card comes with the fragments
    cards = {(d["path"], d["name"]): d for d in account["definitions"]}
    assert cards[("pkg/util.py", "helper")]["text"] == "def helper(x):"
    assert cards[("pkg/util.py", "helper")]["named_as"] == "helper"
    # and code elsewhere calling it, shown as the window around the call, never a fragment
    # retrieval already shows (here each file is one window: with k 3 every caller is shown)
    assert account["usages"] == []
    one = json.loads(repomem("retrieve", f"{root}/pkg/sub/mod.py:9", "--json", "--k", "1").stdout)
    usages = one["usages"]
    assert usages and {u["usage_of"] for u in usages} <= {name for _, name in cards}
    assert not {u["fragment_id"] for u in usages} & {h["fragment_id"] for h in one["fragments"]}
    assert any("helper(" in u["shown"] for u in usages)
    for h in hits:
        assert h["s_rel"] == pytest.approx(h["s_ind"] + 0.5 * h["s_env"])
        # the cursor's own neighbourhood is never retrieved
        for loc in h["locations"]:
            assert not (loc["path"] == "pkg/sub/mod.py" and loc["end"] > 0 and loc["start"] < 28)
    plain = repomem("retrieve", "pkg/core.py:9", "--alpha", "0", cwd=root)
    assert plain.returncode == 0, plain.stderr
    assert "by BM25 (alpha 0)" in plain.stdout and "s_env" not in plain.stdout


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
    (gen / "arrays" / "frag_text_off.npy").write_bytes(b"garbage")
    out = repomem("retrieve", "pkg/core.py:5", cwd=root)
    assert out.returncode == 2 and "unreadable" in out.stderr and "Traceback" not in out.stderr


def test_a_root_gitignore_that_ignores_everything_is_named(tmp_path: Path) -> None:
    """A source package's ``.gitignore`` may ignore all but its packaging (Debian's kernel
    source does): a tree outside git then indexes nothing, and the command says why."""
    root = tmp_path / "linux-source"
    write_files(root, {"kernel/fork.c": "int fork(void) { return 0; }\n", "README": "hi\n"})
    (root / ".gitignore").write_text("/*\n!/debian/\n")
    out = repomem("index", str(root), "--no-progress")
    assert out.returncode == 0
    assert "ignored by the root's .gitignore 3" in out.stdout  # README, kernel/, .gitignore
    assert f"{root / '.gitignore'} ignores 3 entries" in out.stderr
    (root / ".gitignore").write_text("")
    out = repomem("index", str(root), "--no-progress")
    assert "files       2 (c 1, " in out.stdout and "nothing was indexed" not in out.stderr


def _kernel_files(directory: Path) -> dict[Path, int]:
    """numba's cached kernels under ``directory``, with their modification times."""
    return {p: p.stat().st_mtime_ns for p in directory.rglob("*.nb[ic]")}


def test_kernels_are_cached_in_the_user_cache_directory(root: Path, tmp_path: Path) -> None:
    """Never beside repomem's sources (site-packages, once installed), and a cold cache says
    that the kernels are being compiled, once."""
    beside_sources = _kernel_files(PACKAGE)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    cache = tmp_path / "xdg" / "repomem" / "numba"
    cold = repomem("index", root, "--no-progress", "--index-dir", tmp_path / "cold", env=env)
    assert cold.returncode == 0, cold.stderr
    assert cold.stderr.count(COMPILING) == 1
    assert f"cached in {cache}\n" in cold.stderr
    compiled = _kernel_files(cache)
    # one subdirectory per source folder of repomem's (saving also relates by target)
    assert {p.parent.name.rsplit("_", 1)[0] for p in compiled} <= {"index", "context"}
    assert {p.name.split(".")[0] for p in compiled} >= {"parsing", "relations", "bm25"}
    assert _kernel_files(PACKAGE) == beside_sources

    warm = repomem("index", root, "--no-progress", "--index-dir", tmp_path / "warm", env=env)
    assert warm.returncode == 0, warm.stderr
    assert COMPILING not in warm.stderr
    assert _kernel_files(cache) == compiled  # loaded, not compiled again
    assert _kernel_files(PACKAGE) == beside_sources


def test_the_kernel_cache_location_follows_the_environment(tmp_path: Path) -> None:
    """NUMBA_CACHE_DIR if set, else XDG_CACHE_HOME's, else ~/.cache's; also when the program
    imported numba before repomem."""
    script = "import numba, repomem.index.relations; print(numba.config.CACHE_DIR)"
    base = {k: v for k, v in os.environ.items() if k not in {"NUMBA_CACHE_DIR", "XDG_CACHE_HOME"}}
    cases = [
        ({"HOME": str(tmp_path)}, tmp_path / ".cache" / "repomem" / "numba"),
        ({"XDG_CACHE_HOME": str(tmp_path / "xdg")}, tmp_path / "xdg" / "repomem" / "numba"),
        (
            {"XDG_CACHE_HOME": str(tmp_path / "xdg"), "NUMBA_CACHE_DIR": str(tmp_path / "mine")},
            tmp_path / "mine",
        ),
    ]
    for variables, expected in cases:
        out = subprocess.run(
            [sys.executable, "-c", script],
            env={**base, **variables},
            capture_output=True,
            text=True,
            check=True,
        )
        assert out.stdout.strip() == str(expected), variables


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
    assert len(json.loads(out.stdout)["fragments"]) == 2
    flag = repomem("retrieve", "pkg/sub/mod.py:9", "--json", "--k", "3", cwd=root)
    assert len(json.loads(flag.stdout)["fragments"]) == 3


def test_an_index_built_with_other_settings_is_reported_or_rebuilt(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    assert repomem("index", root, "--no-progress").returncode == 0
    (root / ".repomem.toml").write_text('[index]\nignore_patterns = ["pkg/sub/"]\n')
    out = repomem("retrieve", "pkg/core.py:9", cwd=root)
    assert out.returncode == 0, out.stderr
    assert "other index settings (ignore_patterns)" in out.stderr and "pkg/sub/" in out.stdout
    out = repomem("complete", "pkg/core.py:9", cwd=root)
    assert out.returncode in (0, 1), out.stderr  # 1: a completion, but not a confident one
    assert "indexing" in out.stderr and "ignore_patterns" in out.stderr
    again = repomem("retrieve", "pkg/core.py:9", cwd=root)
    assert again.stderr == "" and "pkg/sub/" not in again.stdout


def test_retrieval_in_a_package_with_build_output(tmp_path: Path) -> None:
    root = write_files(tmp_path / "package", BUILD_OUTPUT_TREE)
    index = repomem("index", root, "--json", "--no-progress")
    assert index.returncode == 0, index.stderr
    assert json.loads(index.stdout)["skipped"]["build_output"] == len(BUILD_OUTPUT_SKIPPED)
    cursor = "src/internal/Subject.ts:45"  # in subscribe(), after error() and complete()
    hits = json.loads(repomem("retrieve", cursor, "--json", "--k", "3", cwd=root).stdout)[
        "fragments"
    ]
    assert hits and all(loc["path"].startswith("src/") for h in hits for loc in h["locations"])
    # with the setting off the compiled copy comes back, and outranks the sources
    (root / ".repomem.toml").write_text("[index]\nexclude_build_output = false\n")
    assert repomem("index", root, "--no-progress").returncode == 0
    hits = json.loads(repomem("retrieve", cursor, "--json", "--k", "3", cwd=root).stdout)[
        "fragments"
    ]
    assert hits[0]["locations"][0]["path"] == "dist/esm/internal/Subject.js"

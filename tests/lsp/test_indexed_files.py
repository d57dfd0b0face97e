"""Which files the language server lets into the index (lsp_server.indexed_files): code of
supported languages, and not a git-ignored or secret file, nor git's or the index's own."""

from __future__ import annotations

from pathlib import Path

from repos import make_repo, write_files

from lsp_server.indexed_files import candidates, is_code, kept_out, outside
from repomem.config import IndexConfig


def test_code_is_code_and_docs_are_not() -> None:
    assert is_code("pkg/util.py") and is_code("web/app.ts") and is_code("go/main.go")
    assert not is_code("README.md") and not is_code("data.csv") and not is_code("Makefile")


def test_an_ignored_or_secret_file_stays_out(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    (root / ".gitignore").write_text(".repomem/\ngenerated/\n")
    write_files(root, {"generated/out.py": "x = 1\n"})  # untracked, and ignored
    config = IndexConfig(ignore_patterns=("pkg/vendored/",))
    assert not kept_out(root, config, "pkg/util.py", "def helper(x):\n    return x\n")
    assert kept_out(root, config, "pkg/vendored/lib.py", "x = 1\n")  # index.ignore_patterns
    assert kept_out(root, config, ".env", "API_KEY=abc\n")  # a secret by its name
    assert kept_out(root, config, "deploy/.ENV.production", "TOKEN=1\n")  # any case
    assert kept_out(root, config, "pkg/blob.py", "x = 1\0\0\0\n")  # binary
    # a git-ignored file is no candidate: the index never holds it, so no buffer reaches it
    found = candidates(root, config)
    assert "pkg/util.py" in found and "generated/out.py" not in found


def test_the_files_no_index_may_hold(tmp_path: Path) -> None:
    config = IndexConfig()
    assert outside(tmp_path, config, ".git/config")
    assert outside(tmp_path, config, f"{config.index_dir}/manifest.json")
    assert not outside(tmp_path, config, "pkg/util.py")
    own = IndexConfig(index_dir=str(tmp_path / "idx"))  # an index kept inside the folder
    assert outside(tmp_path, own, "idx/arrays/x.npy") and not outside(tmp_path, own, "pkg/a.py")


def test_a_folder_that_cannot_be_listed_has_no_candidates(tmp_path: Path) -> None:
    assert candidates(tmp_path / "absent", IndexConfig()) == set()

"""Which files get indexed: real fixture repositories (git and plain) built in tmp dirs."""

from __future__ import annotations

import hashlib
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import git
import pytest
from repos import BUILD_OUTPUT_SKIPPED, BUILD_OUTPUT_TREE

from repomem.config import IndexConfig
from repomem.errors import RepomemError
from repomem.index.files import (
    _COMMENT_STARTS,
    SKIP_REASONS,
    FileSkipped,
    SourceFile,
    _looks_generated,
    check_prompt_text,
    list_candidates,
    load_file,
    scan_files,
    skip_explanation,
)

CONFIG = IndexConfig()

IGNORE_TREE = {
    ".gitignore": "build/\n*.gen.py\n/only_root.py\n!keep.gen.py\n",
    "main.py": "print('main')\n",
    "only_root.py": "x = 1\n",
    "keep.gen.py": "y = 2\n",
    "drop.gen.py": "z = 3\n",
    "build/out.py": "built = True\n",
    "docs/guide.md": "# Guide\n",
    "pkg/.gitignore": "local_*.py\n!local_keep.py\ncache/\n!special.gen.py\n",
    "pkg/special.gen.py": "s = 1\n",
    "pkg/mod.py": "def f():\n    return 1\n",
    "pkg/only_root.py": "nested = True\n",
    "pkg/local_a.py": "a = 1\n",
    "pkg/local_keep.py": "k = 1\n",
    "pkg/cache/c.py": "c = 1\n",
    "pkg/sub/local_b.py": "b = 1\n",
    "pkg/sub/deep.py": "d = 1\n",
    ".repomem/state.py": "index = 1\n",
}

EXPECTED_LISTED = [
    ".gitignore",
    "docs/guide.md",
    "keep.gen.py",
    "main.py",
    "pkg/.gitignore",
    "pkg/local_keep.py",
    "pkg/mod.py",
    "pkg/only_root.py",
    "pkg/special.gen.py",
    "pkg/sub/deep.py",
]

SECRETS = [".env", ".env.local", "id_rsa", "server.pem", "aws/credentials"]


def write_tree(root: Path, tree: dict[str, str | bytes]) -> None:
    for rel, content in tree.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


@pytest.fixture(autouse=True)
def isolated_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Keep the user's global git config and excludes out of the fixtures."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def init_repo(root: Path) -> git.Repo:
    repo = git.Repo.init(root)
    with repo.config_writer() as writer:
        writer.set_value("user", "name", "Fixture Author")
        writer.set_value("user", "email", "fixture@example.com")
    return repo


def skip_reason(root: Path, rel: str, config: IndexConfig = CONFIG) -> str:
    with pytest.raises(FileSkipped) as caught:
        load_file(root, rel, config)
    return caught.value.reason


# --- listing -------------------------------------------------------------------------------


def test_walk_honours_root_and_nested_gitignore(tmp_path: Path) -> None:
    write_tree(tmp_path, IGNORE_TREE)
    assert list_candidates(tmp_path, CONFIG) == EXPECTED_LISTED


def test_walk_agrees_with_git_on_the_same_tree(tmp_path: Path) -> None:
    write_tree(tmp_path, IGNORE_TREE)
    walked = list_candidates(tmp_path, CONFIG)
    init_repo(tmp_path)
    assert (tmp_path / ".git").is_dir()
    assert list_candidates(tmp_path, CONFIG) == walked


def test_git_lists_tracked_and_untracked_but_not_ignored(tmp_path: Path) -> None:
    repo = init_repo(tmp_path)
    write_tree(tmp_path, {"tracked.py": "a = 1\n", "gone.py": "b = 2\n", "old.log.py": "c\n"})
    repo.index.add(["tracked.py", "gone.py", "old.log.py"])
    repo.index.commit("initial")
    write_tree(
        tmp_path,
        {
            ".gitignore": "*.log.py\nscratch/\n",
            "untracked.py": "u = 1\n",
            "new.log.py": "ignored\n",
            "scratch/tmp.py": "t = 1\n",
            "pkg/.gitignore": "secret_*.py\n",
            "pkg/secret_x.py": "x = 1\n",
            "pkg/ok.py": "ok = 1\n",
            ".repomem/state.py": "index = 1\n",
        },
    )
    (tmp_path / "gone.py").unlink()
    init_repo(tmp_path / "clone")
    write_tree(tmp_path / "clone", {"inner.py": "i = 1\n"})

    listed = list_candidates(tmp_path, CONFIG)

    # Tracked files stay listed even when a later .gitignore matches them, and a nested
    # repository stays opaque, as in git.
    assert listed == [
        ".gitignore",
        "clone",
        "old.log.py",
        "pkg/.gitignore",
        "pkg/ok.py",
        "tracked.py",
        "untracked.py",
    ]


def test_without_git_executable_the_walk_takes_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = init_repo(tmp_path)
    write_tree(tmp_path, {"kept.py": "k\n", "old.gen.py": "o\n"})
    repo.index.add(["kept.py", "old.gen.py"])
    repo.index.commit("initial")
    write_tree(tmp_path, {".gitignore": "*.gen.py\n"})
    assert "old.gen.py" in list_candidates(tmp_path, CONFIG)

    monkeypatch.setattr(git.Git, "GIT_PYTHON_GIT_EXECUTABLE", str(tmp_path / "no-such-git"))

    assert list_candidates(tmp_path, CONFIG) == [".gitignore", "kept.py"]


def test_git_subdirectory_root_lists_paths_relative_to_it(tmp_path: Path) -> None:
    init_repo(tmp_path)
    write_tree(tmp_path, {"top.py": "t = 1\n", "svc/app.py": "a = 1\n", "svc/lib/u.py": "u\n"})
    assert list_candidates(tmp_path / "svc", CONFIG) == ["app.py", "lib/u.py"]


def test_directory_ignored_by_enclosing_repo_is_walked(tmp_path: Path) -> None:
    init_repo(tmp_path)
    write_tree(tmp_path, {".gitignore": "vendored/\n", "vendored/lib.py": "v = 1\n"})
    write_tree(tmp_path / "vendored", {".gitignore": "*.tmp.py\n", "skip.tmp.py": "s\n"})
    assert list_candidates(tmp_path / "vendored", CONFIG) == [".gitignore", "lib.py"]


def test_walk_never_follows_directory_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write_tree(root, {"a.py": "a = 1\n", "sub/b.py": "b = 1\n"})
    write_tree(tmp_path / "outside", {"x.py": "x = 1\n"})
    (root / "loop").symlink_to(root, target_is_directory=True)
    (root / "sub" / "up").symlink_to("..", target_is_directory=True)
    (root / "ext").symlink_to(tmp_path / "outside", target_is_directory=True)

    assert list_candidates(root, CONFIG) == ["a.py", "ext", "loop", "sub/b.py", "sub/up"]
    scan = scan_files(root, CONFIG)
    assert [f.path for f in scan.files] == ["a.py", "sub/b.py"]
    assert skip_reason(root, "ext/x.py") == "symlink_outside_root"
    assert load_file(root, "loop/sub/b.py", CONFIG).text == "b = 1\n"


def test_index_dir_is_never_listed_and_rejected_when_loaded(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": "a\n", ".repomem/state.py": "s\n", "out/idx/x.py": "x\n"})
    assert list_candidates(tmp_path, CONFIG) == ["a.py", "out/idx/x.py"]
    assert skip_reason(tmp_path, ".repomem/state.py") == "ignored"
    nested = replace(CONFIG, index_dir="out/idx")
    assert list_candidates(tmp_path, nested) == [".repomem/state.py", "a.py"]


# --- skip reasons --------------------------------------------------------------------------


def test_secrets_are_excluded_counted_and_never_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    init_repo(tmp_path)
    write_tree(tmp_path, {rel: "TOKEN=hunter2\n" for rel in SECRETS})
    write_tree(tmp_path, {"secrets.py": "KEY = 'x'\n", "app.py": "import os\n"})
    opened: list[str] = []
    real_open = os.open

    def recording_open(path: str, flags: int, *args: Any, **kwargs: Any) -> int:
        opened.append(os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", recording_open)
    scan = scan_files(tmp_path, CONFIG)
    monkeypatch.undo()

    assert [f.path for f in scan.files] == ["app.py"]
    assert scan.skipped["secret"] == len(SECRETS) + 1
    assert len(scan.skipped_examples["secret"]) == 5
    assert set(scan.skipped_examples["secret"]) <= {*SECRETS, "secrets.py"}
    assert all("hunter2" not in f.text for f in scan.files)
    inside = [p for p in opened if Path(p).is_relative_to(tmp_path)]
    assert [Path(p).name for p in inside] == ["app.py"]


def test_secret_names_match_case_insensitively(tmp_path: Path) -> None:
    write_tree(tmp_path, {"ID_RSA.txt": "key\n", "Secrets.Md": "key\n", "notes.txt": "n\n"})
    scan = scan_files(tmp_path, CONFIG)
    assert [f.path for f in scan.files] == ["notes.txt"]
    assert scan.skipped == {"secret": 2}


def test_a_scan_without_texts_keeps_the_digests_and_what_was_left_out(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": "a = 1\n", "b.py": "b = 2\n", "secrets.py": "KEY = 'x'\n"})
    full, bare = scan_files(tmp_path, CONFIG), scan_files(tmp_path, CONFIG, texts=False)
    assert [f.text for f in bare.files] == ["", ""]
    assert [replace(f, text="") for f in full.files] == bare.files
    assert bare.skipped == full.skipped == {"secret": 1}


def test_exclude_secrets_false_follows_language_support(tmp_path: Path) -> None:
    write_tree(tmp_path, {".env": "A=1\n", "secrets.py": "KEY = 'x'\n", "id_rsa": "k\n"})
    lenient = replace(CONFIG, exclude_secrets=False)

    scan = scan_files(tmp_path, lenient)

    assert [f.path for f in scan.files] == ["secrets.py"]
    assert scan.files[0].text == "KEY = 'x'\n"
    assert scan.skipped == {"unsupported": 2}
    assert skip_reason(tmp_path, "secrets.py") == "secret"


def test_custom_secret_pattern_with_a_directory(tmp_path: Path) -> None:
    write_tree(tmp_path, {"deploy/keys/prod.py": "K = 1\n", "deploy/run.py": "r = 1\n"})
    config = replace(CONFIG, secret_patterns=("deploy/keys/",))
    scan = scan_files(tmp_path, config)
    assert [f.path for f in scan.files] == ["deploy/run.py"]
    assert scan.skipped == {"secret": 1}


def test_ignore_patterns_are_counted_as_ignored(tmp_path: Path) -> None:
    write_tree(tmp_path, {"vendor/lib.py": "v\n", "a_test.py": "t\n", "src/b_test.py": "t\n"})
    write_tree(tmp_path, {"src/main.py": "m\n"})
    config = replace(CONFIG, ignore_patterns=("vendor/", "*_test.py"))
    scan = scan_files(tmp_path, config)
    assert [f.path for f in scan.files] == ["src/main.py"]
    assert scan.skipped == {"ignored": 3}
    assert scan.skipped_examples["ignored"] == ["a_test.py", "src/b_test.py", "vendor/lib.py"]


def test_unsupported_binary_and_invalid_utf8(tmp_path: Path) -> None:
    invalid = b"name = 'caf\xe9'\nbad = b'\xff\xfe'\n"
    control_heavy = bytes(b for b in range(1, 32) if b not in b"\t\n\r\f\b\x1b") * 200
    write_tree(
        tmp_path,
        {
            "logo.png": b"\x89PNG\r\n\x1a\n\0\0\0",
            "blob.py": b"x = 1\n\0\0\0\x01\x02",
            "noise.py": control_heavy,
            "latin.txt": "Gr\xfc\xdfe aus K\xf6ln, d\xe9j\xe0 vu.\n".encode("latin-1") * 20,
            "invalid.py": invalid,
            "bom.py": b"\xef\xbb\xbfx = 1\n",
        },
    )

    scan = scan_files(tmp_path, CONFIG)

    assert scan.skipped == {"unsupported": 1, "binary": 2}
    assert sorted(scan.skipped_examples["binary"]) == ["blob.py", "noise.py"]
    by_path = {f.path: f for f in scan.files}
    assert sorted(by_path) == ["bom.py", "invalid.py", "latin.txt"]
    assert by_path["invalid.py"].text.count("\ufffd") == 3
    assert by_path["invalid.py"].digest == hashlib.blake2b(invalid, digest_size=16).hexdigest()
    assert by_path["invalid.py"].size == len(invalid)
    assert by_path["latin.txt"].language == "text"
    assert by_path["bom.py"].text == "x = 1\n"
    assert by_path["bom.py"].size == 9


def test_size_limit_and_five_megabyte_single_line(tmp_path: Path) -> None:
    line = "x = [" + "1," * 2_500_000 + "]\n"
    write_tree(tmp_path, {"huge.py": line, "small.py": "s = 1\n"})

    assert skip_reason(tmp_path, "huge.py") == "too_large"
    roomy = replace(CONFIG, max_file_bytes=10_000_000)
    assert skip_reason(tmp_path, "huge.py", roomy) == "minified"
    tight = replace(CONFIG, max_file_bytes=5)
    assert skip_reason(tmp_path, "small.py", tight) == "too_large"
    exact = replace(CONFIG, max_file_bytes=6)
    assert load_file(tmp_path, "small.py", exact).size == 6


def test_minified_and_generated_code(tmp_path: Path) -> None:
    normal = "".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(200))
    write_tree(
        tmp_path,
        {
            "app.min.js": "var a=1;\n",
            "long_line.js": "var a = '" + "z" * 6_000 + "';\n",
            "dense.js": ("var q = '" + "y" * 400 + "';\n") * 20,
            "api.pb.go": "package api\n",
            "gen.go": "// Code generated by protoc-gen-go. DO NOT EDIT.\npackage gen\n",
            "schema.py": "# @generated by tool\nX = 1\n",
            "mapping.py": "# Automatically generated by gen.py.\n# DO NOT EDIT BY HAND.\nM = {}\n",
            "fixture.py": '"""Error script. DO NOT EDIT FURTHER! Doctests rely on it."""\nX = 1\n',
            "normal.py": normal,
            "mentions.py": "MARKER = 'DO NOT EDIT'\n",
            "late.py": "x = 1\n" * 20 + "# DO NOT EDIT below\n",
            "short_long.py": "s = '" + "w" * 400 + "'\n",
            "prose.md": ("word " * 1_500 + "\n\n") * 3,
        },
    )

    scan = scan_files(tmp_path, CONFIG)

    assert sorted(scan.skipped_examples["minified"]) == [
        "api.pb.go",
        "app.min.js",
        "dense.js",
        "gen.go",
        "long_line.js",
    ]
    assert scan.skipped["minified"] == 7
    assert skip_reason(tmp_path, "schema.py") == "minified"
    assert skip_reason(tmp_path, "mapping.py") == "minified"
    kept = [f.path for f in scan.files]
    assert kept == [
        "fixture.py",
        "late.py",
        "mentions.py",
        "normal.py",
        "prose.md",
        "short_long.py",
    ]


def test_symlinks(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    root = tmp_path / "repo"
    write_tree(outside, {"leak.py": "LEAK = 1\n"})
    write_tree(root, {"real.py": "r = 1\n", ".env": "TOKEN=hunter2\n"})
    (root / "alias.py").symlink_to("real.py")
    (root / "escape.py").symlink_to(outside / "leak.py")
    (root / "relative_escape.py").symlink_to("../outside/leak.py")
    (root / "broken.py").symlink_to("missing.py")
    (root / "loop_a.py").symlink_to("loop_b.py")
    (root / "loop_b.py").symlink_to("loop_a.py")
    (root / "notes.md").symlink_to(".env")
    (root / "here.py").symlink_to(".", target_is_directory=True)

    scan = scan_files(root, CONFIG)

    by_path = {f.path: f for f in scan.files}
    assert sorted(by_path) == ["alias.py", "real.py"]
    assert by_path["alias.py"].text == by_path["real.py"].text == "r = 1\n"
    assert scan.skipped == {
        "symlink_outside_root": 2,
        "unreadable": 3,
        "secret": 2,
        "not_a_file": 1,
    }
    assert sorted(scan.skipped_examples["unreadable"]) == ["broken.py", "loop_a.py", "loop_b.py"]
    assert sorted(scan.skipped_examples["secret"]) == [".env", "notes.md"]


def test_not_a_file(tmp_path: Path) -> None:
    (tmp_path / "pkg.py").mkdir()
    os.mkfifo(tmp_path / "pipe.py")
    assert skip_reason(tmp_path, "pkg.py") == "not_a_file"
    assert skip_reason(tmp_path, "pipe.py") == "not_a_file"
    assert scan_files(tmp_path, CONFIG).skipped == {"not_a_file": 1}


def test_file_removed_between_listing_and_reading(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": "a\n", "b.py": "b\n", "z.py": "z\n"})
    calls: list[tuple[int, int]] = []

    def remove_last(done: int, total: int) -> None:
        calls.append((done, total))
        if done == 1:
            (tmp_path / "z.py").unlink()

    scan = scan_files(tmp_path, CONFIG, progress=remove_last)

    assert [f.path for f in scan.files] == ["a.py", "b.py"]
    assert scan.skipped == {"unreadable": 1}
    assert calls == [(1, 3), (2, 3), (3, 3)]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_permission_denied_file(tmp_path: Path) -> None:
    write_tree(tmp_path, {"locked.py": "l = 1\n", "open.py": "o = 1\n"})
    (tmp_path / "locked.py").chmod(0)
    try:
        scan = scan_files(tmp_path, CONFIG)
    finally:
        (tmp_path / "locked.py").chmod(0o644)
    assert [f.path for f in scan.files] == ["open.py"]
    assert scan.skipped == {"unreadable": 1}


def test_read_errors_become_unreadable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_tree(tmp_path, {"locked.py": "l = 1\n", "open.py": "o = 1\n"})
    real_open = os.open

    def denying_open(path: str, flags: int, *args: Any, **kwargs: Any) -> int:
        if os.fspath(path).endswith("locked.py"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", denying_open)
    scan = scan_files(tmp_path, CONFIG)
    assert [f.path for f in scan.files] == ["open.py"]
    assert scan.skipped == {"unreadable": 1}


# --- results -------------------------------------------------------------------------------


def test_digest_follows_content(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": "x = 1\n", "b.py": "x = 1\n"})
    first = load_file(tmp_path, "a.py", CONFIG)
    assert load_file(tmp_path, "b.py", CONFIG).digest == first.digest
    (tmp_path / "a.py").write_text("x = 2\n")
    second = load_file(tmp_path, "a.py", CONFIG)
    assert second.digest != first.digest
    assert len(second.digest) == 32
    assert second == SourceFile("a.py", "python", "x = 2\n", second.digest, 6)


def test_scan_output_is_sorted_with_languages(tmp_path: Path) -> None:
    tree = {"zeta.py": "z\n", "Alpha.java": "class Alpha {}\n", "m/b.go": "package m\n"}
    write_tree(tmp_path, tree | {"README": "Read me\n", "a/c.rs": "fn main() {}\n"})
    scan = scan_files(tmp_path, CONFIG)
    assert [(f.path, f.language) for f in scan.files] == [
        ("Alpha.java", "java"),
        ("README", "text"),
        ("a/c.rs", "rust"),
        ("m/b.go", "go"),
        ("zeta.py", "python"),
    ]
    assert scan.root == tmp_path.resolve()


def test_skip_examples_are_capped_and_reasons_known(tmp_path: Path) -> None:
    write_tree(tmp_path, {f"img{i}.png": b"\x89PNG" for i in range(8)})
    scan = scan_files(tmp_path, CONFIG)
    assert scan.skipped == {"unsupported": 8}
    assert scan.skipped_examples["unsupported"] == [f"img{i}.png" for i in range(5)]
    assert set(scan.skipped) <= set(SKIP_REASONS)
    with pytest.raises(ValueError, match="unknown skip reason"):
        FileSkipped("misspelt")


# --- bad input -----------------------------------------------------------------------------


def test_missing_root_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(RepomemError, match="does not exist") as caught:
        scan_files(missing, CONFIG)
    assert str(missing) in str(caught.value)
    with pytest.raises(RepomemError, match="does not exist"):
        list_candidates(missing, CONFIG)


def test_file_as_root_is_a_clear_error(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": "a\n"})
    with pytest.raises(RepomemError, match="is not a directory") as caught:
        scan_files(tmp_path / "a.py", CONFIG)
    assert "a.py" in str(caught.value)


@pytest.mark.parametrize("rel", ["../escape.py", "/etc/passwd.txt", "a/../../b.py", ""])
def test_paths_leaving_the_root_are_rejected(tmp_path: Path, rel: str) -> None:
    with pytest.raises(RepomemError, match="relative to the repository root"):
        load_file(tmp_path, rel, CONFIG)


def test_text_the_index_keeps_out_for_privacy_or_size_reaches_no_prompt(tmp_path: Path) -> None:
    config = replace(CONFIG, max_file_bytes=100, ignore_patterns=("vendor/",))
    files = {".env": "KEY=1\n", "vendor/lib.py": "x = 1\n", "app.py": "y = 2\n"}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    (tmp_path / "settings.py").symlink_to(tmp_path / ".env")

    def reason(rel: str, data: bytes = b"x = 1\n") -> str | None:
        try:
            check_prompt_text(tmp_path, rel, config, data)
        except FileSkipped as skip:
            return skip_explanation(skip, config)
        return None

    assert reason(".env") == "is excluded as a secret file (pattern .env)"
    assert reason("deploy/.env.production") == "is excluded as a secret file (pattern .env.*)"
    assert (
        reason("settings.py") == "links to .env, which is excluded as a secret file (pattern .env)"
    )
    assert reason("vendor/lib.py") == "is ignored by index.ignore_patterns (pattern vendor/)"
    assert reason(".git/config") == "is ignored by the index"
    assert reason("app.py", b"x" * 101) == "is larger than index.max_file_bytes (100 bytes)"
    assert reason("app.py", b"x = 1\n\0\0") == "looks like a binary file"
    # what is merely not worth indexing may be completed, and so may a file not saved yet
    for rel in ("app.py", "notes.txt", "bundle.min.js", "new_module.py"):
        assert reason(rel) is None, rel
    assert reason(".env", b"") is not None
    unsecret = replace(config, exclude_secrets=False)
    check_prompt_text(tmp_path, ".env", unsecret, b"KEY=1\n")


@pytest.mark.parametrize("tracked", [False, True], ids=["tarball", "committed"])
def test_build_output_is_skipped_and_counted(tmp_path: Path, tracked: bool) -> None:
    write_tree(tmp_path, BUILD_OUTPUT_TREE)
    if tracked:  # a committed dist/ duplicates src/ just the same
        repo = init_repo(tmp_path)
        repo.git.add(all=True)
        repo.index.commit("with dist")

    scan = scan_files(tmp_path, CONFIG)

    assert scan.skipped == {"build_output": len(BUILD_OUTPUT_SKIPPED), "minified": 1}
    kept = [f.path for f in scan.files]
    assert kept == [
        "src/build/__init__.py",
        "src/build/env.py",
        "src/internal/ReplaySubject.ts",
        "src/internal/Subject.ts",
        "web/plain.d.ts",
        "web/plain.js",
        "web/widget.ts",
    ]
    for path in BUILD_OUTPUT_SKIPPED:
        assert skip_reason(tmp_path, path) == "build_output"


def test_build_output_settings(tmp_path: Path) -> None:
    write_tree(tmp_path, BUILD_OUTPUT_TREE)
    everything = scan_files(tmp_path, replace(CONFIG, exclude_build_output=False))
    assert everything.skipped == {"unsupported": 2, "minified": 1}  # the two .map files
    assert {f.path for f in everything.files} >= set(BUILD_OUTPUT_SKIPPED) - {
        "dist/esm/internal/Subject.js.map",
        "lib/legacy.js.map",
    }
    # other directories (gitignore syntax): dist/ and build/ are indexed, /lib/ is not;
    # compiled files are still recognised as such
    own = scan_files(tmp_path, replace(CONFIG, build_output_patterns=("/lib/",)))
    paths = {f.path for f in own.files}
    assert {"dist/types/internal/Subject.d.ts", "build/lib/build/env.py"} <= paths
    assert not paths & {"lib/bundle.js", "lib/legacy.js", "web/widget.js"}
    assert "dist/esm/internal/Subject.js" not in paths  # beside its map, and says so


@pytest.mark.parametrize("seed", range(3))
def test_generated_code_is_judged_alike_by_its_lines_bytes(seed: int) -> None:
    """An ASCII text's lines are measured from its bytes (``_line_stats``): the same verdict as
    ``str.splitlines`` gives, whatever ends its lines (``\\r\\n``, ``\\r``, vertical tab, form
    feed, the separators) and wherever its first ten lines end."""
    import random

    rng = random.Random(seed)
    ends = ["\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1e", "\x1f"]
    heads = ["// @generated\n", "# DO NOT EDIT\n", "generated\n", "x = 1\n", "/* ok */\n"]

    def reference(text: str) -> bool:  # the verdict as it was read from ``splitlines``
        lines = text.splitlines()
        if not lines:
            return False
        if max(map(len, lines)) > 5_000:
            return True
        if len(text) >= 2_000 and len(text) / len(lines) > 300:
            return True
        head = lines[:10]
        comments = [s for s in (line.lstrip() for line in head) if s.startswith(_COMMENT_STARTS)]
        if any("@generated" in comment for comment in comments):
            return True
        return any("DO NOT EDIT" in c for c in comments) and "generated" in "\n".join(head).lower()

    for _ in range(300):
        parts = [rng.choice(heads) for _ in range(rng.randrange(0, 14))]
        for _ in range(rng.randrange(0, 6)):
            parts.append("y" * rng.choice([0, 3, 400, 5_001]) + rng.choice(ends))
        rng.shuffle(parts)
        text = "".join(parts)
        assert _looks_generated(text) == reference(text), repr(text[:80])

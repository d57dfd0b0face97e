"""The windows calling a definition (repomem.index.calling), kept per definition between
requests: always those of the index as it is now, the asking file's own calls left out."""

from __future__ import annotations

from pathlib import Path

import pytest
from repos import PY_FILES, make_repo

from repomem.index import calling
from repomem.index.repo import RepoIndex

# two files of the same text: their windows are one fragment, at two places
TWIN = "from pkg.util import helper\n\n\ndef twin():\n    return helper(9)\n"
FILES = {**PY_FILES, "pkg/twin_a.py": TWIN, "pkg/twin_b.py": TWIN}
ASKING = ("pkg/util.py", "pkg/core.py", "pkg/sub/mod.py", "pkg/twin_a.py", "elsewhere.py")


def _by_scan(index: RepoIndex, path: str, node: int, outside: str) -> list[int]:
    """The calling windows read off the tables: every window of a file other than
    ``outside`` holding a statement whose resolved call reaches ``path``'s ``node``."""
    out = set()
    for caller, entries in index.tables.calls.items():
        parse = index.parse(caller)
        if caller == outside or parse is None:
            continue
        rows = {
            int(parse.node_start[s]) for s, t, n in entries if (t, n) == (path, node) and s >= 0
        }
        entry = index.tables.files[caller]
        for row in rows:
            out.update(entry.win_frag[(entry.win_start <= row) & (row < entry.win_end)].tolist())
    return sorted(out)


def _check(index: RepoIndex, node: int) -> None:
    for outside in ASKING:
        got = index.calling_fragments("pkg/util.py", node, outside=outside).tolist()
        assert got == _by_scan(index, "pkg/util.py", node, outside), outside


def test_calling_windows_follow_edits_and_leave_out_only_the_asking_files_own(
    tmp_path: Path,
) -> None:
    """A window both twins hold stays when one of them asks; a call added, a calling file
    gone: the windows of the index as it is now, also where they were kept before."""
    root = make_repo(tmp_path / "r", FILES, use_git=False)
    index, _ = RepoIndex.build(root)
    helper = next(d.node for d in index.parse("pkg/util.py").definitions if d.name == "helper")
    _check(index, helper)
    shared = [
        f
        for f in index.calling_fragments("pkg/util.py", helper, outside="pkg/twin_a.py").tolist()
        if {loc.path for loc in index.fragment_locations(f)} == {"pkg/twin_a.py", "pkg/twin_b.py"}
    ]
    assert shared  # one window of both twins, held by twin_b's calls too
    before = index.calling_fragments("pkg/util.py", helper, outside="pkg/util.py").tolist()
    extra = "\n\ndef again():\n    return helper(5)\n"
    index.update_file("pkg/sub/mod.py", PY_FILES["pkg/sub/mod.py"] + extra)
    _check(index, helper)
    after = index.calling_fragments("pkg/util.py", helper, outside="pkg/util.py").tolist()
    assert after != before and any("helper(5)" in index.fragment_text(f) for f in after)
    index.update_file("pkg/core.py", None)
    index.update_file("pkg/twin_b.py", None)
    _check(index, helper)
    loaded = RepoIndex.load(root)  # the saved index, before the edits
    assert loaded.calling_fragments("pkg/util.py", helper, outside="pkg/util.py").tolist() == before


def test_what_is_kept_stays_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the bound the kept windows are dropped, and gathered again the same."""
    root = make_repo(tmp_path / "r", FILES, use_git=False)
    index, _ = RepoIndex.build(root, save=False)
    nodes = {d.name: d.node for d in index.parse("pkg/util.py").definitions}
    windows = calling.CallingWindows(index.tables)
    first = windows.fragments("pkg/util.py", nodes["helper"], outside="x.py", revision=0)
    assert first.size and windows._held == first.size
    monkeypatch.setattr(calling, "_WINDOWS_KEPT", first.size)
    windows.fragments("pkg/util.py", nodes["Base.run"], outside="x.py", revision=0)
    assert ("pkg/util.py", nodes["helper"]) not in windows._windows
    assert windows._held <= first.size
    again = windows.fragments("pkg/util.py", nodes["helper"], outside="x.py", revision=0)
    assert again.tolist() == first.tolist()


def test_a_call_no_window_lists_as_its_statement_gives_no_windows(tmp_path: Path) -> None:
    """A Rust macro invoked in an ``impl`` body is a call site but no window's statement: the
    macro's callers are then no windows, not an error (itertools' ``clone_fields!``)."""
    files = {
        "Cargo.toml": '[package]\nname = "m"\nversion = "0.1.0"\n',
        "src/lib.rs": "#[macro_use]\nmod macros;\nmod pair;\n",
        "src/macros.rs": "macro_rules! clone_fields {\n    ($($f:ident),*) => { 1 };\n}\n",
        "src/pair.rs": (
            "pub struct Pair { a: u8 }\n\nimpl Clone for Pair {\n    clone_fields!(a);\n}\n"
        ),
    }
    root = make_repo(tmp_path / "r", files, use_git=False)
    index, _ = RepoIndex.build(root, save=False)
    macro = next(d.node for d in index.parse("src/macros.rs").definitions)
    assert "src/pair.rs" in index.tables.calls_into.get("src/macros.rs", {})
    found = index.calling_fragments("src/macros.rs", macro, outside="src/lib.rs")
    assert set(found.tolist()) <= set(_by_scan(index, "src/macros.rs", macro, "src/lib.rs"))

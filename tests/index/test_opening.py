"""Opening an index: the saved one while current, else a build (the CLI, the language server
and the benchmark runner share this rule)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from repos import make_repo

from repomem.config import IndexConfig
from repomem.index.files import scan_files
from repomem.index.opening import open_index, unchanged
from repomem.index.store import IndexNotFound


def test_first_use_builds_and_then_the_saved_index_is_opened(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    config = IndexConfig()
    with pytest.raises(IndexNotFound):
        open_index(root, config, build=False)
    said: list[str] = []
    first = open_index(root, config, build=True, say=said.append)
    assert first.built and said == [f"indexing {root} (first use)"]
    again = open_index(root, config, build=True, say=said.append)
    assert not again.built and again.changed == () and len(said) == 1
    assert again.index.tables.files.keys() == first.index.tables.files.keys()


def test_other_settings_are_kept_when_reading_and_rebuilt_when_building(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    open_index(root, IndexConfig(), build=True)
    wider = dataclasses.replace(IndexConfig(), fragment_lines=30, index_dir=".repomem")
    kept = open_index(root, wider, build=False)
    assert (
        not kept.built
        and kept.changed == ("fragment_lines",)
        and kept.index.config.fragment_lines == 20
    )
    said: list[str] = []
    rebuilt = open_index(root, wider, build=True, say=said.append)
    assert rebuilt.built and rebuilt.index.config.fragment_lines == 30
    assert said == [f"indexing {root} again (changed: fragment_lines)"]


def test_a_caller_may_ask_for_a_rebuild_when_the_files_changed(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    open_index(root, IndexConfig(), build=True)
    said: list[str] = []
    opened = open_index(
        root, IndexConfig(), build=True, say=said.append, current=lambda index: False
    )
    assert opened.built and said == [f"indexing {root} again (changed: files)"]


def test_unchanged_holds_while_the_files_and_their_settings_are_those_indexed(
    tmp_path: Path,
) -> None:
    files = {
        "tsconfig.json": '{"compilerOptions": {"baseUrl": "src", "paths": {"@a/*": ["a/*"]}}}',
        "src/a/util.ts": "export function helper(x: number) { return x; }\n",
        "src/main.ts": "import { helper } from '@a/util';\nexport const y = helper(1);\n",
        "README.md": "# r\n",
    }
    root = make_repo(tmp_path / "r", files)
    config = IndexConfig()
    index = open_index(root, config, build=True).index

    def now() -> bool:
        return unchanged(index, scan_files(root, config, texts=False))

    assert now()
    (root / "README.md").write_text("# other docs\n")  # not code: the index is the same
    assert now()
    (root / "src/main.ts").write_text(files["src/main.ts"] + "export const z = 2;\n")
    assert not now()
    (root / "src/main.ts").write_text(files["src/main.ts"])
    assert now()
    (root / "src/b.ts").write_text("export const b = 1;\n")  # a new file
    assert not now()
    (root / "src/b.ts").unlink()
    (root / "src/a/util.ts").unlink()  # a file gone
    assert not now()
    (root / "src/a/util.ts").write_text(files["src/a/util.ts"])
    # the same code, resolved through other paths
    (root / "tsconfig.json").write_text(files["tsconfig.json"].replace("a/*", "lib/*"))
    assert not now()
    # as saved and read again
    (root / "tsconfig.json").write_text(files["tsconfig.json"])
    assert unchanged(open_index(root, config, build=False).index, scan_files(root, config))

"""Memory an index's updates freed goes back to the system when the index is tidied."""

from __future__ import annotations

import platform
from pathlib import Path

import pytest
from repos import make_repo

from repomem.index import trim
from repomem.index.repo import RepoIndex

GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not GLIBC, reason="malloc_trim and mallopt are glibc's")
def test_glibc_is_asked_to_trim_and_to_share_arenas() -> None:
    assert trim.release_memory()
    assert trim.limit_arenas(8)  # (a bound the tests' few threads do not reach)


def test_tidying_the_index_releases_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    idx, _ = RepoIndex.build(make_repo(tmp_path / "r", use_git=False), save=False)
    released: list[bool] = []
    monkeypatch.setattr("repomem.index.repo.release_memory", lambda: released.append(True))
    idx.update_file("pkg/new.py", "def made():\n    return 1\n")
    assert not released  # an update itself does not pay for it
    idx.tidy()
    assert released == [True]

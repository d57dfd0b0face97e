"""The index's runtime helpers: garbage collection paused around a bulk load, and the numba
kernels' cache directory and the one-line notice a cold cache gives."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import numba
import pytest

from repomem.index.gcpause import paused_gc
from repomem.index.jit import COMPILE_NOTICE, cache_home, compile_notice


def test_paused_gc_restores_what_it_found() -> None:
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():  # nested: the inner one must not re-enable it
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()  # it was off before: it stays off
    finally:
        gc.enable()


def test_paused_gc_freezes_what_was_loaded() -> None:
    before = gc.get_freeze_count()
    try:
        with paused_gc(freeze=True):
            kept = [[i] for i in range(1000)]
        assert gc.get_freeze_count() >= before + len(kept)
    finally:
        gc.unfreeze()
    with pytest.raises(ValueError), paused_gc():
        raise ValueError("still restored")
    assert gc.isenabled()


def test_cache_home_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_home() == tmp_path / "repomem"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_home() == Path.home() / ".cache" / "repomem"


def test_the_kernels_cache_in_the_users_cache_directory(tmp_path: Path) -> None:
    """A fresh process: the directory is set when the module is imported, unless the user
    has set one."""
    code = "import repomem.index.jit, numba; print(numba.config.CACHE_DIR)"
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == str(tmp_path / "repomem" / "numba")
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "mine")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == str(tmp_path / "mine")


def test_a_compile_says_so_once() -> None:
    said: list[str] = []
    with compile_notice(said.append):
        numba.njit(lambda x: x + 1)(1)
        numba.njit(lambda x: x * 2)(2)
    assert said == [COMPILE_NOTICE.format(numba.config.CACHE_DIR)]
    numba.njit(lambda x: x - 1)(3)  # outside: nothing more
    assert len(said) == 1

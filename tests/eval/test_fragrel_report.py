"""The FragRel report: where relations go, by place and by the kinds of edge that carry them."""

from __future__ import annotations

from pathlib import Path

import pytest
from repos import make_repo

from repomem.index.repo import RepoIndex
from repomem_eval.fragrel_report import main, report


def test_report_accounts_for_every_relation(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", use_git=False)
    idx, _ = RepoIndex.build(root, save=False)
    out = report(idx, sample=10_000)
    assert out["sampled"] == out["fragments"] == idx.tables.live_ids().size
    stored = int((idx.tables.rel_idx[idx.tables.live_ids()] >= 0).sum())
    assert out["relations_per_fragment"] * out["fragments"] == pytest.approx(stored)
    for shares in (out["place_pairs"], out["place_mass"], out["path_pairs"], out["path_mass"]):
        assert sum(shares.values()) == pytest.approx(1.0)
    # the fixture's calls cross files (core.py calls util.helper), and windows overlap
    assert out["place_pairs"]["same directory"] > 0
    assert any("call" in label for label in out["path_pairs"])
    assert out["path_pairs"]["shared node"] > 0


def test_report_command_prints_a_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path / "r", use_git=False)
    assert main([str(root), "--sample", "5", "--json", str(tmp_path / "out.json")]) == 0
    table = capsys.readouterr().out
    assert "| same file: % pairs / % mass |" in table and "% reaching the node cap" in table
    assert (tmp_path / "out.json").is_file()

"""Fragments: S_w-line windows with S_s-line stride (RepoCoder, FragRel B.1), and the graph
nodes each window covers with their text lengths (the ``len_k`` of FragRel Eq. 8)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from repomem.parsing import ParsedFile


@dataclass(frozen=True)
class Window:
    start: int  # 0-based first line
    end: int  # exclusive
    text: str


def windows(lines: list[str], window: int, stride: int) -> list[Window]:
    """Windows starting every ``stride`` lines until one reaches the end of the file.

    All-blank windows are dropped: they can match nothing and carry no structure.
    """
    out = []
    n = len(lines)
    for start in range(0, n, stride):
        end = min(start + window, n)
        text = "\n".join(lines[start:end])
        if text.strip():
            out.append(Window(start, end, text))
        if end == n:
            break
    return out


def shown_lines(lines: list[str], start: int, end: int, stride: int) -> str:
    """What a prompt shows for a retrieved window: the window moved forward by the stride
    (what follows similar code is what helps); the window itself when nothing follows."""
    size = end - start
    shifted = lines[start + stride : start + stride + size]
    return "\n".join(shifted) if any(s.strip() for s in shifted) else "\n".join(lines[start:end])


def window_nodes(pf: ParsedFile, start: int, end: int) -> tuple[np.ndarray, np.ndarray]:
    """Local statement nodes owning the window's lines, with normalised text lengths.

    Each line belongs to its deepest statement node, so the nodes do not overlap; blank and
    comment-only lines belong to none. Weights sum to 1 (Eq. 8's normaliser), or the arrays
    are empty when the window has no code.
    """
    owner = pf.line_owner[start:end]
    length = pf.line_len[start:end]
    mask = (owner >= 0) & (length > 0)
    if not mask.any():
        return np.empty(0, np.int64), np.empty(0, np.float64)
    nodes, inverse = np.unique(owner[mask], return_inverse=True)
    weights = np.bincount(inverse, weights=length[mask].astype(np.float64))
    return nodes.astype(np.int64), weights / weights.sum()

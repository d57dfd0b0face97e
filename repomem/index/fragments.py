"""Fragments: S_w-line windows with S_s-line stride (RepoCoder, FragRel B.1), and the graph
nodes each window covers with their text lengths (the ``len_k`` of FragRel Eq. 8)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from repomem.index.jit import numba
from repomem.index.parsing import ParsedFile, line_lengths
from repomem.index.rowpool import grouped_sums


@dataclass(frozen=True)
class Window:
    start: int  # 0-based first line
    end: int  # exclusive
    text: str


def windows(lines: list[str], size: int, stride: int) -> list[Window]:
    """Fragment windows of ``size`` lines starting every ``stride`` lines until one reaches
    the end of the file (``window_bounds``), with their text."""
    starts, ends = window_bounds(line_lengths(lines), size, stride)
    return [
        Window(start, end, "\n".join(lines[start:end]))
        for start, end in zip(starts.tolist(), ends.tolist(), strict=True)
    ]


def window_bounds(line_len: np.ndarray, size: int, stride: int) -> tuple[np.ndarray, np.ndarray]:
    """The first lines and ends (exclusive, int32) of the windows of ``size`` lines starting
    every ``stride`` lines until one reaches the end of a file of ``line_len.size`` lines,
    ``line_len`` being each line's length without its trailing blanks (``ParsedFile``'s).

    All-blank windows are dropped: they can match nothing and carry no structure. (In one
    compiled loop: its dozen array operations took ~30 us a file, ~1% of a build's parsing
    workers on the Linux kernel.)"""
    return _window_bounds(line_len, size, stride)


@numba.njit(cache=True, nogil=True)
def _window_bounds(line_len: np.ndarray, size: int, stride: int) -> tuple[np.ndarray, np.ndarray]:
    n = line_len.size
    filled = np.zeros(n + 1, np.int64)  # the lines with code before each line
    for i in range(n):
        filled[i + 1] = filled[i] + (line_len[i] > 0)
    starts = np.empty((n + stride - 1) // stride, np.int32)
    ends = np.empty_like(starts)
    k = 0
    for start in range(0, n, stride):
        end = min(start + size, n)
        if filled[end] > filled[start]:
            starts[k], ends[k] = start, end
            k += 1
        if end == n:  # the first window to reach the end is the last
            break
    return starts[:k].copy(), ends[:k].copy()


def shown_span(lines: list[str], start: int, end: int, stride: int) -> tuple[int, int]:
    """The lines ``[first, last)`` a prompt shows for a retrieved window: the window moved
    forward by the stride (what follows similar code is what helps); the window itself when
    nothing follows."""
    first = start + stride
    last = min(first + end - start, len(lines))
    if any(line.strip() for line in lines[first:last]):
        return first, last
    return start, end


def shown_lines(lines: list[str], start: int, end: int, stride: int) -> str:
    """The text of :func:`shown_span`."""
    first, last = shown_span(lines, start, end, stride)
    return "\n".join(lines[first:last])


def window_nodes(
    pf: ParsedFile, starts: np.ndarray, ends: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For all windows ``[starts[i], ends[i])`` of a file at once: (window index, local node,
    weight) triples.

    Each line belongs to its deepest statement node, so a window's nodes do not overlap; a
    node's weight is its share of the window's code characters (Eq. 8's ``len_k`` over their
    sum). Blank and comment-only lines belong to none; a window without code has no entries.
    """
    if not starts.size or pf.line_owner.size == 0:
        empty = np.empty(0, np.int64)
        return empty, empty, np.empty(0, np.float64)
    # each window's nodes and their code characters (whole numbers: their float sums are exact)
    code_owner = np.where(pf.line_len > 0, pf.line_owner, -1)
    ptr, node, chars = grouped_sums(
        code_owner, pf.line_len, starts.astype(np.int64), ends.astype(np.int64), pf.n_nodes
    )
    win = np.repeat(np.arange(starts.size), np.diff(ptr))
    weight = chars.astype(np.float64)
    return win, node.astype(np.int64), weight / np.bincount(win, weights=weight)[win]


def load_window_kernel() -> None:
    """Load ``window_bounds``'s and ``window_nodes``'s compiled kernels now, so that the
    parsing workers forked from this process inherit them rather than each load them (or, the
    first time, compile them)."""
    empty = np.empty(0, np.int32)
    grouped_sums(empty, empty, empty.astype(np.int64), empty.astype(np.int64), 0)
    window_bounds(empty, 1, 1)


def one_window_nodes(pf: ParsedFile, start: int, end: int) -> dict[int, float]:
    """``window_nodes`` of the one window ``[start, end)``, as local node -> weight in node
    order, the same weights: a query's window is twenty lines, for which the arrays'
    dozen numpy calls took longer than a loop over the lines (the sums are of whole
    numbers, exact in either order)."""
    chars: dict[int, int] = {}
    owners = pf.line_owner[start:end].tolist()
    for node, length in zip(owners, pf.line_len[start:end].tolist(), strict=True):
        if node >= 0 and length > 0:
            chars[node] = chars.get(node, 0) + length
    total = float(sum(chars.values()))
    return {node: chars[node] / total for node in sorted(chars)}

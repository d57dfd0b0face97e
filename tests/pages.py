"""Which pages of an array or a mapping are in the process's resident set (Linux's
``/proc/self/pagemap``): the tests of what the index hands back to the system read them."""

from __future__ import annotations

import mmap
from collections.abc import Iterable

import numpy as np

# a pagemap entry's top bits: present, swapped, a file's page (not the process's own copy)
_TOP = np.uint64(61)
_PRESENT, _FILE_PRESENT = 0b100, 0b101


def _entries(buffer: np.ndarray | mmap.mmap) -> np.ndarray:
    """The pagemap entries of the pages ``buffer`` spans."""
    a = np.frombuffer(buffer, np.uint8) if isinstance(buffer, mmap.mmap) else buffer
    if a.nbytes == 0:
        return np.zeros(0, np.uint64)
    page = mmap.PAGESIZE
    address = a.__array_interface__["data"][0]
    first, last = address // page, (address + a.nbytes - 1) // page
    with open("/proc/self/pagemap", "rb") as fh:
        fh.seek(first * 8)
        return np.frombuffer(fh.read((last - first + 1) * 8), np.uint64)


def resident_pages(buffers: Iterable[np.ndarray | mmap.mmap]) -> int:
    """Pages of ``buffers`` present in the process, its own copies included."""
    return sum(int(np.count_nonzero(_entries(b) >> _TOP >= _PRESENT)) for b in buffers)


def resident_file_pages(maps: Iterable[mmap.mmap]) -> int:
    """Pages of the mappings ``maps`` present and still the file's (not written since)."""
    return sum(int(np.count_nonzero(_entries(m) >> _TOP == _FILE_PRESENT)) for m in maps)


def written_pages(maps: Iterable[np.ndarray | mmap.mmap]) -> int:
    """Pages of ``maps`` present and the process's own (written since they were mapped)."""
    return sum(int(np.count_nonzero(_entries(m) >> _TOP == _PRESENT)) for m in maps)

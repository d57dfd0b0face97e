"""Giving the memory an update freed back to the system.

An update allocates and frees many small objects and arrays; glibc's allocator keeps what is
freed in its arenas for the next allocation rather than returning it, so a long editing
session's resident memory climbed ~150 MB per 100 edits on the Linux kernel's kernel/ mm/ fs/
include/ while what Python and numpy held stayed flat. ``malloc_trim`` returns the free
pages at a moment nothing waits (``RepoIndex.tidy``), and a long-lived process can have its
threads share fewer arenas (``limit_arenas``). Elsewhere than glibc both do nothing.

A loaded index's arrays are mapped from its files, and every page a query or an edit reads
stays in the process's resident set (the kernel maps 64 KB around each page read, so a few
thousand graph searches make a whole table resident): on the kernel subset ~490 MB after 40
retrievals, growing while the user edits. ``release_mapped`` hands back the pages that are
still the file's (clean: read again from the page cache when next used); pages an update
wrote are the process's own copies, which ``WrittenPages`` moves into files of their own.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import os
import sys
import tempfile
import weakref
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np


@cache
def _libc() -> Any:
    """The C library on Linux (None elsewhere, or where it cannot be loaded), with ``errno``
    kept for each call."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None


@cache
def _glibc() -> Any:
    """glibc's ``malloc_trim`` (None for musl and others, which have none)."""
    trim = getattr(_libc(), "malloc_trim", None)
    if trim is None:
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


# mallopt's parameter for the number of arenas
_M_ARENA_MAX = -8


def limit_arenas(arenas: int = 1) -> bool:
    """Let the process's threads share ``arenas`` allocator arenas (glibc gives each thread
    its own, up to eight per core, each holding what it freed): for a long-lived process
    that updates the index from worker threads (the language server). One by default:
    ``malloc_trim`` gives back the free top of the main arena alone, so a second arena kept
    resident the most its threads' kernels ever took at once (the relation searches' work
    arrays: ~7 MB from the one large edit of an editing session on the Linux kernel's
    subset, every page free). Whether it applied."""
    if _glibc() is None:
        return False
    mallopt = _libc().mallopt
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_ARENA_MAX, arenas))


def release_memory() -> bool:
    """Return the allocator's free memory to the system; whether it could be asked to."""
    trim = _glibc()
    if trim is None:
        return False
    trim(0)
    return True


# /proc/self/pagemap: one 64-bit entry per page; bit 63: present, bit 61: a file's page
# (a copy-on-write mapping's page that was written is anonymous)
_PRESENT, _FILE_PAGE = np.uint64(1 << 63), np.uint64(1 << 61)


def mappings_of(arrays: Iterable[np.ndarray]) -> list[mmap.mmap]:
    """The file mappings under ``arrays`` (those ``np.load`` mapped), once each."""
    out: dict[int, mmap.mmap] = {}
    for a in arrays:
        base = a
        while base is not None and not isinstance(base, np.memmap):
            base = base.base if isinstance(base, np.ndarray) else None
        m = getattr(base, "_mmap", None)
        if isinstance(m, mmap.mmap):
            out[id(m)] = m
    return list(out.values())


def resident_file_bytes() -> int:
    """The process's resident pages that are files' (``/proc/self/statm``'s third field):
    read in microseconds, it tells how much of the mapped index was read since a
    ``release_mapped``, whose look at every page of the index costs more (~4 ms twice per
    update on the standard library's). 0 where there is no ``/proc``."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[2]) * mmap.PAGESIZE
    except (OSError, IndexError, ValueError):
        return 0


def release_mapped(mappings: Iterable[mmap.mmap]) -> int:
    """Drop the resident pages of ``mappings`` (private file mappings) that are still the
    file's, keeping those written since they were mapped; returns the bytes dropped. Nothing
    may write to the mappings meanwhile (a write between the look and the drop is lost): the
    index is tidied while no update runs. A read-only mapping's pages are all the file's, and
    all go. Only on Linux (``/proc/self/pagemap``)."""
    if not sys.platform.startswith("linux"):
        return 0
    page = mmap.PAGESIZE
    dropped = 0
    try:
        pagemap = open("/proc/self/pagemap", "rb")  # noqa: SIM115 - closed below
    except OSError:
        return 0
    with pagemap:
        for m in mappings:
            if m.closed or len(m) == 0:
                continue
            found = _page_runs(pagemap, m, _PRESENT | _FILE_PAGE)
            if found is None:  # read-only
                m.madvise(mmap.MADV_DONTNEED)
                dropped += len(m)
                continue
            for lo, hi in found[1].tolist():
                m.madvise(mmap.MADV_DONTNEED, lo * page, min(hi * page, len(m)) - lo * page)
                dropped += (hi - lo) * page
    return dropped


def _page_runs(pagemap: BinaryIO, m: mmap.mmap, state: np.uint64) -> tuple[int, np.ndarray] | None:
    """The address of a writable map ``m`` (None: read-only) and its runs of pages whose
    present and file bits in ``/proc/self/pagemap`` are ``state`` (resident and the file's:
    clean; resident and not the file's: written), as rows ``[first, end)`` of page numbers
    in the map."""
    page = mmap.PAGESIZE
    try:
        view = (ctypes.c_char * len(m)).from_buffer(m)
    except TypeError:
        return None
    address = ctypes.addressof(view)
    del view
    pagemap.seek(address // page * 8)
    entries = np.frombuffer(pagemap.read((len(m) + page - 1) // page * 8), np.uint64)
    hit = (entries & (_PRESENT | _FILE_PAGE)) == state
    edges = np.flatnonzero(np.diff(np.r_[False, hit, False].astype(np.int8)))
    return address, edges.reshape(-1, 2)


def fresh_zeros(shape: int | tuple[int, ...], dtype: type | np.dtype = np.float64) -> np.ndarray:
    """Zeros in pages the system has not handed out yet (a private anonymous map of their
    own): a page becomes resident when first written, so room kept for later costs nothing
    until used. ``np.zeros`` may take its memory from the allocator's heap, which clears it
    by writing every page."""
    dt = np.dtype(dtype)
    count = int(np.prod(shape))
    buffer = mmap.mmap(-1, max(count * dt.itemsize, 1), flags=mmap.MAP_PRIVATE)
    return np.frombuffer(buffer, dt, count).reshape(shape)


def fresh_grown(a: np.ndarray, n: int, fill: float = 0) -> np.ndarray:
    """``a`` copied into ``n`` of ``fresh_zeros``' pages, ``fill`` after it: an array grown
    this way can be moved to a file and handed back at a pause, as the saved one it copies
    was; ``np.concatenate`` leaves the copy on the allocator's heap for good."""
    grown = fresh_zeros(n, a.dtype)
    grown[: a.size] = a
    if fill:
        grown[a.size :] = fill
    return grown


def map_under(a: np.ndarray) -> mmap.mmap | None:
    """The map an array is a view of (``fresh_zeros``, ``np.load``'s), if any and open."""
    base: object = a
    while isinstance(base, np.ndarray | memoryview):
        base = base.base if isinstance(base, np.ndarray) else base.obj
    return base if isinstance(base, mmap.mmap) and not base.closed else None


def release_zeros(arrays: Iterable[np.ndarray]) -> int:
    """Hand back the pages of ``fresh_zeros`` arrays that hold zeros again (work arrays a
    search leaves as it found them): the next write maps a fresh zero page, so such arrays
    cost the pages used since, not every page ever written. Returns the bytes handed back;
    an array not made by ``fresh_zeros`` is left as it is."""
    dropped = 0
    for a in arrays:
        base = map_under(a)
        if base is not None and len(base):
            base.madvise(mmap.MADV_DONTNEED)
            dropped += len(base)
    return dropped


def release_read_only(mappings: Iterable[mmap.mmap]) -> None:
    """Drop the resident pages of read-only file mappings (``spool.mapped(...,
    writeable=False)``): every page is still the file's, read again when next touched."""
    if not hasattr(mmap, "MADV_DONTNEED"):
        return
    for m in mappings:
        if not m.closed and len(m):
            m.madvise(mmap.MADV_DONTNEED)


# mmap(2)'s flag for a map that replaces whatever the process had at that address
_MAP_FIXED = 0x10


@cache
def _mmap_call() -> Any:
    """libc's ``mmap`` (the ``mmap`` module cannot map at a given address); None elsewhere
    than Linux."""
    call = getattr(_libc(), "mmap", None)
    if call is None:
        return None
    call.argtypes = [
        ctypes.c_void_p,
        ctypes.c_size_t,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_long,
    ]
    call.restype = ctypes.c_void_p
    return call


def _maps_allowed() -> int:
    """Half the maps the system lets a process hold (``vm.max_map_count``): a page moved to
    a file in the middle of a map splits the map, and mapping past the limit fails."""
    try:
        with open("/proc/sys/vm/max_map_count", "rb") as fh:
            return int(fh.read()) // 2
    except (OSError, ValueError):
        return 0


def _maps_held() -> int:
    """The maps the process holds now."""
    with open("/proc/self/maps", "rb") as fh:
        return sum(1 for _ in fh)


class WrittenPages:
    """Where the pages an update wrote in a loaded index's private file maps go at a pause.

    Written, such a page is the process's own copy for as long as the map lives, and an
    editing session writes rows scattered over the relations, the relations by target, the
    graph and the BM25 rows: on the Linux kernel's kernel/ mm/ fs/ include/, ~1.4 MB per
    100 edits of resident memory that no tidy could hand back. ``spill`` copies them into a
    file of ``directory`` with no name (one per map, the page at its offset in the map) and
    maps that file, shared, over the very same addresses: the arrays read and write what
    they did, and the pages are now the file's, which ``release_mapped`` hands back like
    any page read (a later write dirties the file's page, written back by the system, not
    a copy of the process's own). While the process holds half the maps the system allows,
    the pages stay where they are, and so they do when the folder takes no more."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self._maps_left = 0  # more maps the process may make (``spill``)
        # per map, its file (closed with the map: ``_forget_closed``, or when it is freed)
        self._files: weakref.WeakKeyDictionary[mmap.mmap, BinaryIO] = weakref.WeakKeyDictionary()

    def spill(self, mappings: Iterable[mmap.mmap]) -> int:
        """Move the written pages of ``mappings`` into their files; returns the bytes moved.
        Nothing may write to the mappings meanwhile, as for ``release_mapped``."""
        call = _mmap_call()
        if self.directory is None or call is None:
            return 0
        self._forget_closed()
        self._maps_left = _maps_allowed() - _maps_held()
        moved = 0
        with open("/proc/self/pagemap", "rb") as pagemap:
            for m in mappings:
                if not m.closed and len(m):
                    try:
                        moved += self._spill_one(call, pagemap, m)
                    except OSError:  # no room on disk, say: the pages stay where they are
                        break
        return moved

    def _spill_one(self, call: Any, pagemap: BinaryIO, m: mmap.mmap) -> int:
        """``spill`` of one map: its written runs of pages, each mapped from its file while
        the maps that splitting ``m`` makes stay within ``_maps_left``."""
        found = _page_runs(pagemap, m, _PRESENT)
        if found is None or found[1].size == 0:  # read-only or nothing written
            return 0
        address, runs = found
        fh = self._file(m)
        moved = 0
        for lo, hi in (runs * mmap.PAGESIZE).tolist():
            if self._maps_left < 2:
                break
            self._maps_left -= 2  # a run inside a map splits it in three
            os.pwrite(fh.fileno(), m[lo:hi], lo)
            if os.fstat(fh.fileno()).st_size < hi:  # the page past the map's end, whole
                os.ftruncate(fh.fileno(), hi)
            flags = mmap.MAP_SHARED | _MAP_FIXED
            prot = mmap.PROT_READ | mmap.PROT_WRITE
            if call(address + lo, hi - lo, prot, flags, fh.fileno(), lo) != address + lo:
                raise OSError(ctypes.get_errno(), "cannot map a spilled page back")
            moved += hi - lo
        return moved

    def _file(self, m: mmap.mmap) -> BinaryIO:
        fh = self._files.get(m)
        if fh is None:
            fh = tempfile.TemporaryFile(dir=self.directory)  # noqa: SIM115 - closed with m
            weakref.finalize(m, fh.close)
            self._files[m] = fh
        return fh

    def _forget_closed(self) -> None:
        """Close the files of maps closed since: their pages went with the maps."""
        for m, fh in list(self._files.items()):
            if m.closed:
                fh.close()
                del self._files[m]

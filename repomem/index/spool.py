"""Arrays written to ``.npy`` files piece by piece, so that neither a build nor a save holds
a whole table of the index in memory at once: a piece goes to disk as soon as it is made,
and what is needed again is mapped back from there (read on demand, never written back).
Nothing here syncs to disk: most of these files are scratch (a build that is not saved, a
compaction's spool), and a save syncs the files of its generation once, before the
generation goes live (``store.write_generation``).
"""

from __future__ import annotations

import itertools
import math
import os
import struct
import tempfile
from array import array
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType

import numpy as np

# The header is written once with a placeholder length and again, same size, at the end:
# the length of a streamed array is known only then. 128 bytes keeps the data aligned.
_HEADER = 128
_MAGIC = b"\x93NUMPY\x01\x00"


def _header(dtype: np.dtype, shape: tuple[int, ...]) -> bytes:
    descr = np.lib.format.dtype_to_descr(dtype)
    text = f"{{'descr': {descr!r}, 'fortran_order': False, 'shape': {shape!r}, }}"
    body = text.ljust(_HEADER - len(_MAGIC) - 3) + "\n"
    return _MAGIC + struct.pack("<H", len(body)) + body.encode("latin1")


class ArrayWriter:
    """One ``.npy`` file whose rows (``row_shape`` each) are appended; ``close`` writes the
    final shape."""

    def __init__(self, path: Path, dtype: type | np.dtype, row_shape: tuple[int, ...] = ()):
        self.path = path
        self.dtype = np.dtype(dtype)
        self.row_shape = row_shape
        self.rows = 0
        self._fh = open(path, "wb")  # noqa: SIM115 - closed by close(), which callers reach
        self._fh.write(_header(self.dtype, (1 << 62, *row_shape)))

    def write(self, values: np.ndarray) -> None:
        values = np.ascontiguousarray(values, self.dtype)
        if values.shape[1:] != self.row_shape:
            raise ValueError(f"rows of shape {values.shape[1:]}, expected {self.row_shape}")
        if values.size:  # an empty view of rows cannot be cast to bytes
            self._fh.write(memoryview(values).cast("B"))
        self.rows += values.shape[0]

    def write_bytes(self, data: bytes) -> None:
        """Rows given as their bytes: a text appended to a uint8 file without the array
        around it (``write``'s checks cost a build's main process more than the writing)."""
        self._fh.write(data)
        self.rows += len(data) // (self.dtype.itemsize * math.prod(self.row_shape))

    def flush(self) -> None:
        self._fh.flush()

    def close(self) -> None:
        self._fh.seek(0)
        self._fh.write(_header(self.dtype, (self.rows, *self.row_shape)))
        self._fh.close()

    def __enter__(self) -> ArrayWriter:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if kind is None:
            self.close()
        else:
            self._fh.close()


class ScratchWriter:
    """An array written piece by piece, as ``ArrayWriter`` writes one, into a file of
    ``directory`` that has no name (``tempfile.TemporaryFile``): it is this process's alone
    and goes with its last map. ``mapped`` maps it back copy-on-write, so that what is made
    in memory once and then mostly read (a BM25 compaction's rows and postings) is file
    pages the system can drop, read again when next touched, rather than anonymous memory
    for as long as the process lives."""

    def __init__(self, directory: Path, dtype: type | np.dtype) -> None:
        self.dtype = np.dtype(dtype)
        self.rows = 0
        self._fh = tempfile.TemporaryFile(dir=directory)  # noqa: SIM115 - closed by mapped()

    def write(self, values: np.ndarray) -> None:
        values = np.ascontiguousarray(values, self.dtype)
        if values.size:
            self._fh.write(memoryview(values).cast("B"))
        self.rows += values.size

    def mapped(self, room: int = 0) -> np.ndarray:
        """What was written and ``room`` zeros after it (pages of the file that were never
        written: they cost nothing until written through the map); read-only without room."""
        size = self.rows + room
        self._fh.truncate(size * self.dtype.itemsize)
        self._fh.flush()
        try:
            if size == 0:
                return np.zeros(0, self.dtype)
            mode = "c" if room else "r"
            return np.memmap(self._fh, self.dtype, mode=mode, shape=(size,)).view(np.ndarray)
        finally:
            self._fh.close()


def write_array(path: Path, values: np.ndarray) -> None:
    with open(path, "wb") as fh:
        np.save(fh, values, allow_pickle=False)


def extend_array(path: Path, room: int) -> None:
    """Append ``room`` zeros to the one-dimensional array saved at ``path``, in place: the
    pages of what it holds are not read (a map of it, made before, still reads them)."""
    values = np.load(path, mmap_mode="r")
    dtype, size = values.dtype, values.size
    del values
    with open(path, "r+b") as fh:
        fh.seek(0, os.SEEK_END)
        zeros = np.zeros(min(room, 1 << 20), dtype)
        for lo in range(0, room, zeros.size):
            fh.write(memoryview(zeros[: min(zeros.size, room - lo)]).cast("B"))
        fh.seek(0)
        fh.write(_header(dtype, (size + room,)))


def mapped(path: Path, *, writeable: bool = True) -> np.ndarray:
    """A saved array mapped copy-on-write: pages are read when touched, never written back
    (``writeable=False``: mapped read-only, so that it stays what the file holds)."""
    values = np.load(path, mmap_mode="c" if writeable else "r")
    values.file_id = file_id(path)
    return values.view(np.ndarray)


def file_id(path: Path) -> tuple[int, int]:
    """Which file ``path`` is: it stays the same when its folder is renamed (a generation
    going live), so what was spooled is recognised where it is saved."""
    st = os.stat(path)
    return st.st_dev, st.st_ino


def spooled(directory: Path, arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``arrays`` written to ``<directory>/<name>.npy`` and mapped back read-only: a table
    built in memory and kept only to be read leaves memory for a file. One mapped from
    that very file already is not written again, but mapped anew all the same: the pages
    read through the old map leave the process's resident set with it."""
    out = {}
    for name, values in arrays.items():
        path = directory / f"{name}.npy"
        if not is_file(values, path):
            write_array(path, values)
        out[name] = mapped(path, writeable=False)
    return out


def is_file(values: np.ndarray, path: Path) -> bool:
    """Whether ``values`` is the whole array of ``path`` mapped read-only (from ``spooled``):
    what it holds is then what the file holds."""
    return not values.flags.writeable and maps_file(values, path, read_only=True)


def maps_file(values: np.ndarray, path: Path, *, read_only: bool = False) -> bool:
    """Whether ``values`` is the whole array mapped from ``path`` (``mapped``); a map
    copy-on-write too unless ``read_only``, which holds what the file holds so long as
    nothing was written to it (a build's table spooled where it is saved)."""
    base = values
    while base is not None and not isinstance(base, np.memmap):
        base = getattr(base, "base", None)
    if base is None or (read_only and base.mode != "r") or not path.exists():
        return False
    return (
        getattr(base, "file_id", None) == file_id(path)
        and values.shape == base.shape
        and values.dtype == base.dtype
        and values.__array_interface__["data"][0] == base.__array_interface__["data"][0]
    )


def spooled_parts(parts: Sequence[np.ndarray], path: Path) -> bool:
    """Whether ``parts``, end to end, are the whole array mapped read-only from ``path``
    (``mapped``): what they hold is what the file holds, and it need not be written again."""
    base = parts[0] if parts else None
    while base is not None and not isinstance(base, np.memmap):
        base = getattr(base, "base", None)
    if base is None or base.mode != "r" or not path.exists():
        return False
    if getattr(base, "file_id", None) != file_id(path):
        return False
    at, size = base.__array_interface__["data"][0], 0
    for part in parts:
        if part.dtype != base.dtype or part.ndim != 1:
            return False
        # an empty slice points at the start of what it was sliced from
        if part.size and part.__array_interface__["data"][0] != at + size * base.itemsize:
            return False
        size += part.size
    return size == base.size


class TextWriter:
    """Strings as one UTF-8 blob (``<name>.npy``) plus their offsets (``<name>_off.npy``),
    the layout ``repomem.index.mapped.Texts`` reads."""

    def __init__(self, directory: Path, name: str) -> None:
        self._dir, self._name = directory, name
        self._data = ArrayWriter(directory / f"{name}.npy", np.uint8)
        # 8 bytes an end: a list's int objects took the whole kernel's fragments ~0.1 GB
        self._ends = array("q")
        self._size = 0

    def __len__(self) -> int:
        return len(self._ends)

    def append(self, encoded: bytes) -> None:
        self._data.write_bytes(encoded)
        self._size += len(encoded)
        self._ends.append(self._size)

    def extend(self, encoded: list[bytes]) -> None:
        """``append`` of each, written in one call."""
        self._data.write_bytes(b"".join(encoded))
        ends = list(itertools.accumulate(map(len, encoded), initial=self._size))
        self._ends.extend(ends[1:])
        self._size = ends[-1]

    def read(self, i: int) -> bytes:
        """Text ``i`` as written (what the writer has buffered is flushed first)."""
        start = self._ends[i - 1] if i else 0
        self._data.flush()
        with open(self._data.path, "rb") as fh:
            fh.seek(_HEADER + start)
            return fh.read(self._ends[i] - start)

    def close(self) -> tuple[Path, Path]:
        """The blob's and the offsets' files, complete."""
        self._data.close()
        offsets = np.zeros(len(self._ends) + 1, np.int64)
        offsets[1:] = np.frombuffer(self._ends, np.int64)
        off_path = self._dir / f"{self._name}_off.npy"
        write_array(off_path, offsets)
        return self._data.path, off_path

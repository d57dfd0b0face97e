"""Each stage of a build timed, with the most memory the process held during it.

A build's peak is what decides whether it fits a machine, and it is one stage's: the peak of
the whole run says nothing about which. Linux lets a process reset its high-water mark
(``/proc/self/clear_refs``), so each stage's peak is its own; elsewhere no peak is reported.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from repomem.index.trim import release_memory

_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")


def _status_mb(field: str) -> float | None:
    try:
        with open(_STATUS) as fh:
            for line in fh:
                if line.startswith(field):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _reset_peak() -> bool:
    """Set the high-water mark to what the process holds now; whether it could."""
    try:
        _CLEAR_REFS.write_text("5")
    except OSError:
        return False
    return True


def _cpu_s() -> float:
    """CPU seconds of this process and of the children it waited for (a build's parsing
    workers and its resolution's processes), user and system."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class StageMeter:
    """``end(name)`` closes a stage begun where the last one ended (or at creation): its
    seconds, its CPU seconds (``_cpu_s``: a stage's seconds against its CPU tell whether it
    kept both cores busy), and its peak resident memory in MB where the system can tell;
    what the stage freed goes back to the system then (``release_memory``), so that the
    allocator does not keep it through the stages after (the kernel subset's graph stage:
    ~0.1 GB)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.cpu_s: dict[str, float] = {}
        self.peak_mb: dict[str, float] = {}
        self._start = self._t = time.perf_counter()
        self._cpu = _cpu_s()
        self._peaks = _reset_peak()

    def end(self, name: str) -> None:
        now, cpu = time.perf_counter(), _cpu_s()
        self.seconds[name] = self.seconds.get(name, 0.0) + now - self._t
        self.cpu_s[name] = self.cpu_s.get(name, 0.0) + cpu - self._cpu
        self._t, self._cpu = now, cpu
        if self._peaks:
            peak = _status_mb("VmHWM:")
            if peak is not None:
                self.peak_mb[name] = max(self.peak_mb.get(name, 0.0), peak)
        release_memory()
        if self._peaks:
            _reset_peak()

    @property
    def total(self) -> float:
        return time.perf_counter() - self._start

"""When the language server indexes a changed file (lsp_server.update_schedule): typing is
debounced, non-stop typing is indexed anyway, files changed on disk go at once, and an update
yields to completions in progress."""

from __future__ import annotations

import threading
import time

import pytest

from lsp_server import update_schedule
from lsp_server.update_schedule import MAX_STALE_S, SETTLE_S, UpdateSchedule


def test_typing_is_due_once_it_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]
    monkeypatch.setattr(update_schedule.time, "monotonic", lambda: clock[0])
    schedule = UpdateSchedule(threading.Condition())
    schedule.delay_s = 0.2
    schedule.typed("a.py")
    assert schedule.ready(100.1) == ([], pytest.approx(100.2), False)
    clock[0] = 100.15
    schedule.typed("a.py")  # typing goes on: due 0.2 s after this keystroke
    assert schedule.ready(100.3) == ([], pytest.approx(100.35), False)
    assert schedule.ready(100.36) == (["a.py"], None, False)
    schedule.take(["a.py"])
    assert len(schedule) == 0


def test_non_stop_typing_is_indexed_every_max_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [0.0]
    monkeypatch.setattr(update_schedule.time, "monotonic", lambda: clock[0])
    schedule = UpdateSchedule(threading.Condition())
    while clock[0] < MAX_STALE_S:
        schedule.typed("a.py")
        clock[0] += 0.05
    ready, _, stale = schedule.ready(clock[0])
    assert ready == ["a.py"] and stale  # due although the user is still typing


def test_typing_lasts_until_a_pause_of_the_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]
    monkeypatch.setattr(update_schedule.time, "monotonic", lambda: clock[0])
    schedule = UpdateSchedule(threading.Condition())
    schedule.delay_s = 0.2
    assert not schedule.typing(100.0)
    schedule.typed("a.py")
    schedule.take(["a.py"])  # being indexed: the user is typing still
    assert schedule.typing(100.19)
    assert not schedule.typing(100.2)
    schedule.now("b.py")  # a change on disk is no keystroke
    assert not schedule.typing(100.2)


def test_a_file_changed_on_disk_is_due_at_once() -> None:
    schedule = UpdateSchedule(threading.Condition())
    schedule.delay_s = 0.0  # still at least SETTLE_S for typing, but not for disk changes
    schedule.typed("typed.py")
    schedule.now("disk.py")
    ready, next_due, _ = schedule.ready(time.monotonic())
    assert ready == ["disk.py"] and next_due is not None
    assert next_due - time.monotonic() <= SETTLE_S


def test_an_update_waits_for_the_completion_in_progress() -> None:
    cond = threading.Condition()
    schedule = UpdateSchedule(cond)
    done = threading.Event()

    def complete() -> None:
        with schedule.priority():
            time.sleep(0.1)
        done.set()

    worker = threading.Thread(target=complete)
    with schedule.priority():  # held before the thread starts, so the update sees a reader
        worker.start()
        time.sleep(0.02)
    schedule.yield_to_completions(False, lambda: False)
    assert done.is_set()
    worker.join()


def test_stopping_ends_the_wait() -> None:
    schedule = UpdateSchedule(threading.Condition())
    with schedule.priority():
        started = time.monotonic()
        schedule.yield_to_completions(True, lambda: True)
    assert time.monotonic() - started < 0.05

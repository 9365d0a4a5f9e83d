"""Ctrl-C or SIGTERM while a bot is being started: what was started is killed as it completes."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time

import pytest

from arena.sandbox.spawner import spawner

WAIT_S = 30
"""A bound on each wait for the other thread, far past what it takes: only a hung test reaches it."""


def _waiting_for_the_spawner(thread_id: int) -> bool:
    """Is that thread inside spawner.run's wait for its job (where Ctrl-C is to be handled)?"""
    frame = sys._current_frames().get(thread_id)
    while frame is not None:
        if frame.f_code.co_name == "result" and "concurrent" in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False


def test_a_start_interrupted_while_waiting_is_killed_when_it_completes(marker: str) -> None:
    started: list[subprocess.Popen[bytes]] = []
    killed: list[subprocess.Popen[bytes]] = []
    starting, interrupted = threading.Event(), threading.Event()
    main = threading.get_ident()

    def slow_start() -> subprocess.Popen[bytes]:
        """A start that completes only after the caller was interrupted while it waited."""
        starting.set()
        assert interrupted.wait(WAIT_S)
        process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", marker])
        started.append(process)
        return process

    def kill_late(process: subprocess.Popen[bytes]) -> None:
        process.kill()
        process.wait(10)
        killed.append(process)

    def ctrl_c() -> None:
        """SIGINT to the main thread once it waits for the start, as a Ctrl-C would arrive."""
        deadline = time.monotonic() + WAIT_S
        if not starting.wait(WAIT_S):
            return
        while not _waiting_for_the_spawner(main):
            if time.monotonic() > deadline:
                return  # no SIGINT: the test fails on the KeyboardInterrupt it expects
            time.sleep(0.001)
        signal.pthread_kill(main, signal.SIGINT)
        # A signal that lands just before the wait enters the kernel is handled only when the wait ends (30 s):
        # a main thread still waiting a while later has missed it, and gets another, as a user presses again.
        while not interrupted.wait(0.2) and _waiting_for_the_spawner(main):
            signal.pthread_kill(main, signal.SIGINT)

    sender = threading.Thread(target=ctrl_c)
    sender.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            spawner.run(slow_start, on_late=kill_late)
    finally:
        interrupted.set()
        sender.join(WAIT_S)
    spawner.drain(10)
    assert len(started) == 1
    assert killed == started
    assert started[0].returncode is not None

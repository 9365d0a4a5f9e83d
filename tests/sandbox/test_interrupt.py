"""Ctrl-C or SIGTERM while a bot is being started: what was started is killed as it completes."""

from __future__ import annotations

import _thread
import subprocess
import sys
import threading
import time

import pytest

from arena.sandbox.spawner import spawner


def test_a_start_interrupted_while_waiting_is_killed_when_it_completes(marker: str) -> None:
    started: list[subprocess.Popen[bytes]] = []
    killed: list[subprocess.Popen[bytes]] = []

    def slow_start() -> subprocess.Popen[bytes]:
        time.sleep(0.3)
        process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", marker])
        started.append(process)
        return process

    def kill_late(process: subprocess.Popen[bytes]) -> None:
        process.kill()
        process.wait(10)
        killed.append(process)

    threading.Timer(0.1, _thread.interrupt_main).start()
    with pytest.raises(KeyboardInterrupt):
        spawner.run(slow_start, on_late=kill_late)
    spawner.drain(10)
    assert len(started) == 1
    assert killed == started
    assert started[0].returncode is not None

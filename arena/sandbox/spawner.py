"""Forking every bot from one long-lived thread.

The parent-death signal (PR_SET_PDEATHSIG, and bwrap's --die-with-parent) fires when the *thread* that
forked a process exits, not the process: a bot launched from a short-lived worker thread would die with
that thread. The spawner thread lives as long as the process, so bots die with the arena and only then.
"""

from __future__ import annotations

import concurrent.futures
import os
import queue
import threading
from collections.abc import Callable
from typing import TypeVar

from arena.sandbox.errors import SandboxError

SPAWN_TIMEOUT_S = 30.0
T = TypeVar("T")

_Job = tuple[Callable[[], object], "concurrent.futures.Future[object]"]


class Spawner:
    """A daemon thread that runs the Popen calls handed to it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._thread: threading.Thread | None = None
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._pending = 0
        self._idle = threading.Condition()

    def _loop(self, jobs: queue.SimpleQueue[_Job]) -> None:
        while True:
            job, future = jobs.get()
            try:
                if not future.set_running_or_notify_cancel():
                    continue
                try:
                    future.set_result(job())  # runs the callbacks too: a late start is killed here
                except Exception as error:  # handed to the waiting caller, who re-raises it
                    future.set_exception(error)
            finally:
                with self._idle:
                    self._pending -= 1
                    self._idle.notify_all()

    def drain(self, timeout: float) -> None:
        """Wait until no start is under way, so that whatever it started can be killed."""
        with self._idle:
            self._idle.wait_for(lambda: self._pending <= 0, timeout)

    def _ensure_thread(self) -> threading.Thread:
        with self._lock:
            if self._pid != os.getpid() or self._thread is None or not self._thread.is_alive():
                self._pid = os.getpid()  # a forked child inherits no thread: it starts its own
                self._jobs = queue.SimpleQueue()
                self._pending = 0
                self._thread = threading.Thread(
                    target=self._loop, args=(self._jobs,), name="arena-sandbox-spawner", daemon=True
                )
                self._thread.start()
            return self._thread

    def run(self, job: Callable[[], T], on_late: Callable[[T], None]) -> T:
        """Run job on the spawner thread; on_late receives a result that arrives after the timeout."""
        if threading.current_thread() is self._ensure_thread():
            return job()
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        with self._idle:
            self._pending += 1
        self._jobs.put((job, future))  # type: ignore[arg-type]
        try:
            return future.result(timeout=SPAWN_TIMEOUT_S)
        except BaseException as error:  # a time-out, or Ctrl-C / SIGTERM while waiting: nobody takes the result

            def late(done: concurrent.futures.Future[T]) -> None:
                if not done.cancelled() and done.exception() is None:
                    on_late(done.result())

            future.add_done_callback(late)
            if isinstance(error, concurrent.futures.TimeoutError):
                raise SandboxError(f"starting a bot process took more than {SPAWN_TIMEOUT_S:.0f} s") from None
            raise


spawner = Spawner()

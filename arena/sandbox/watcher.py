"""What the memory and disk watches share: one daemon thread per arena process, looking at every bot
registered with it until none is left, and none of its parent's bots after a fork."""

from __future__ import annotations

import os
import threading
import time
from typing import Generic, TypeVar

T = TypeVar("T")


class Watcher(Generic[T]):
    """Subclasses say what one pass does (look_all), and how long to sleep after it."""

    thread_name = "arena-sandbox-watch"

    def __init__(self) -> None:
        self._forget()
        os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        """At start, and after a fork: the child watches none of its parent's bots, and has no thread yet."""
        self._lock = threading.Lock()
        self._watched: dict[int, T] = {}
        self._thread: threading.Thread | None = None

    def add(self, key: int, watched: T) -> None:
        with self._lock:
            self._watched[key] = watched
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name=self.thread_name, daemon=True)
                self._thread.start()

    def remove(self, key: int) -> None:
        with self._lock:
            self._watched.pop(key, None)

    def look_all(self, watched: list[T]) -> float:
        """One pass over the bots watched now: the seconds to sleep before the next."""
        raise NotImplementedError

    def _loop(self) -> None:
        while True:
            with self._lock:
                watched = list(self._watched.values())
                if not watched:
                    self._thread = None
                    return
            time.sleep(self.look_all(watched))

"""Draining a bot's stderr continuously into a bounded log.

A daemon thread reads the pipe as fast as the bot writes, so a chatty bot never blocks on a full pipe.
The log keeps the first ``head_limit`` bytes and a rolling tail of the last TAIL_BYTES; what lies between
is counted and dropped, so a bot writing 100 MB costs the arena a few hundred KiB at most.
"""

from __future__ import annotations

import logging
import os
import select
import threading

log = logging.getLogger(__name__)

TAIL_BYTES = 16 * 1024
READ_BYTES = 64 * 1024


class StderrCapture:
    """The bounded stderr log of one bot, filled by its own reader thread."""

    def __init__(self, fd: int, head_limit: int, name: str) -> None:
        self._fd = fd
        self._head_limit = head_limit
        self._head = bytearray()
        self._tail = bytearray()
        self._dropped = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._eof = threading.Event()
        self._thread = threading.Thread(target=self._drain, name=f"arena-sandbox-stderr-{name}", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        """Read until end of file, or until asked to stop (a process the arena could not kill holds the pipe)."""
        poller = select.poll()
        poller.register(self._fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        try:
            while not self._stop.is_set():
                if not poller.poll(200):
                    continue
                chunk = os.read(self._fd, READ_BYTES)
                if not chunk:
                    break
                self._add(chunk)
        except OSError:
            log.exception("reading a bot's stderr failed")
        finally:
            os.close(self._fd)
            self._eof.set()

    def _add(self, chunk: bytes) -> None:
        with self._lock:
            room = self._head_limit - len(self._head)
            if room > 0:
                self._head += chunk[:room]
                chunk = chunk[room:]
            if not chunk:
                return
            if len(chunk) >= TAIL_BYTES:
                self._dropped += len(self._tail) + len(chunk) - TAIL_BYTES
                self._tail = bytearray(chunk[-TAIL_BYTES:])
                return
            self._tail += chunk
            excess = len(self._tail) - TAIL_BYTES
            if excess > 0:
                del self._tail[:excess]
                self._dropped += excess

    def finish(self, timeout: float) -> bool:
        """Wait for end of file (every writer gone), then stop reading regardless; True if EOF was seen."""
        if self._eof.wait(timeout):
            return True
        self._stop.set()
        self._eof.wait(1.0)
        return False

    def wait_eof(self, timeout: float) -> bool:
        """Wait up to timeout for everything the bot wrote to be read."""
        return self._eof.wait(timeout)

    @property
    def dropped(self) -> int:
        """Bytes of stderr that were dropped (neither in the head nor in the tail)."""
        with self._lock:
            return self._dropped

    def log(self) -> bytes:
        """What was kept: the head, then, if anything was dropped, a marker line and the tail."""
        with self._lock:
            if not self._dropped:
                return bytes(self._head + self._tail)
            marker = f"\n[arena: {self._dropped} bytes of stderr dropped here]\n".encode()
            return bytes(self._head) + marker + bytes(self._tail)

    def tail(self, max_bytes: int) -> bytes:
        """The last max_bytes bytes written (as far as they were kept)."""
        if max_bytes <= 0:
            return b""
        with self._lock:
            recent = self._tail if self._dropped else self._head + self._tail
            return bytes(recent[-max_bytes:])

    def contains(self, needles: tuple[bytes, ...]) -> bool:
        """Whether any needle appears in what was kept."""
        with self._lock:
            return any(needle in self._head or needle in self._tail for needle in needles)

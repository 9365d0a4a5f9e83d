"""Draining a bot's stderr continuously into bounded logs.

A daemon thread reads the pipe as fast as the bot writes, so a chatty bot never blocks on a full pipe.
Two logs are kept, each the first ``head_limit`` bytes and a rolling tail of the last TAIL_BYTES, what lies
between counted and dropped: the whole process's, and the part since the last take_segment() (a match's,
OUTPUT/logs/BOT/MATCH.log). A bot writing 100 MB costs the arena a few hundred KiB at most.
"""

from __future__ import annotations

import logging
import os
import select
import threading
import time
from collections.abc import Callable

from arena.sandbox.readiness import readable

log = logging.getLogger(__name__)

TAIL_BYTES = 16 * 1024
READ_BYTES = 64 * 1024
SETTLE_S = 0.05
"""How long take_segment waits for what is still in the pipe to be read."""
TAIL_LINES = 50
"""A fault's stderr tail, in lines: enough for the whole of a typical traceback ("File ..., line N" and all)."""
TAIL_LINE_BYTES = 8 * 1024
"""...and at most this many bytes of them."""


class _Bounded:
    """The head of a byte stream up to a limit, then its rolling tail; the rest counted and dropped."""

    def __init__(self, head_limit: int) -> None:
        self.head_limit = head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        if len(chunk) >= TAIL_BYTES:
            self.dropped += len(self.tail) + len(chunk) - TAIL_BYTES
            self.tail = bytearray(chunk[-TAIL_BYTES:])
            return
        self.tail += chunk
        excess = len(self.tail) - TAIL_BYTES
        if excess > 0:
            del self.tail[:excess]
            self.dropped += excess

    def contents(self) -> bytes:
        """The head, then, if anything was dropped, a marker line and the tail."""
        if not self.dropped:
            return bytes(self.head + self.tail)
        marker = f"\n[arena: {self.dropped} bytes of stderr dropped here]\n".encode()
        return bytes(self.head) + marker + bytes(self.tail)

    def recent(self) -> bytes:
        """The latest bytes kept, in order."""
        return bytes(self.tail if self.dropped else self.head + self.tail)


class StderrCapture:
    """The bounded stderr logs of one bot process, filled by its own reader thread; `echo`, when given, is
    handed every chunk as it is read (arena check-bot --stderr)."""

    def __init__(self, fd: int, head_limit: int, name: str, echo: Callable[[bytes], None] | None = None) -> None:
        self._fd = fd
        self._echo = echo
        self._whole = _Bounded(head_limit)
        self._segment = _Bounded(head_limit)
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
                with self._lock:
                    self._whole.add(chunk)
                    self._segment.add(chunk)
                if self._echo is not None:
                    self._echo(chunk)
        except OSError:
            log.exception("reading a bot's stderr failed")
        finally:
            with self._lock:  # take_segment looks at the descriptor under it: never at a closed (or reused) one
                os.close(self._fd)
                self._eof.set()

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
            return self._whole.dropped

    def log(self) -> bytes:
        """What was kept of everything: the head, then, if anything was dropped, a marker line and the tail."""
        with self._lock:
            return self._whole.contents()

    def take_segment(self, settle_s: float = SETTLE_S) -> bytes:
        """What was kept of what came since the last take (or the start), the same way; a new segment begins.
        What the bot wrote before this moment and is still in the pipe is read first (within settle_s)."""
        deadline = time.monotonic() + settle_s
        while time.monotonic() < deadline:
            with self._lock:
                if self._eof.is_set() or not readable(self._fd, 0):
                    break
            time.sleep(0.001)
        with self._lock:
            taken = self._segment.contents()
            self._segment = _Bounded(self._segment.head_limit)
        return taken

    def tail(self, max_bytes: int) -> bytes:
        """The last max_bytes bytes written (as far as they were kept)."""
        if max_bytes <= 0:
            return b""
        with self._lock:
            return self._whole.recent()[-max_bytes:]

    def tail_lines(self, lines: int = TAIL_LINES, max_bytes: int = TAIL_LINE_BYTES) -> bytes:
        """The last `lines` whole lines written, at most max_bytes of them (a longer last line is cut at its start)."""
        recent = self.tail(max_bytes + 1)
        kept = recent.splitlines(keepends=True)[-lines:]
        if len(recent) > max_bytes and len(kept) == len(recent.splitlines()):
            kept = kept[1:] or [recent[-max_bytes:]]  # the first line was cut by the byte window: not whole
        return b"".join(kept)

    def contains(self, needles: tuple[bytes, ...]) -> bool:
        """Whether any needle appears in what was kept."""
        with self._lock:
            return any(needle in self._whole.head or needle in self._whole.tail for needle in needles)

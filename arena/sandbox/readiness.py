"""Waiting for one descriptor to become readable, whatever its number: select() refuses those from 1024 on, which
an arena keeping many bots (each a pidfd and pipes) reaches."""

from __future__ import annotations

import select


def readable(fd: int, timeout_s: float) -> bool:
    """Whether `fd` is readable (or at its end) within timeout_s; False for a descriptor closed meanwhile."""
    waiting = select.poll()
    waiting.register(fd, select.POLLIN)
    events = waiting.poll(max(0, int(timeout_s * 1000)))
    return any(not event & select.POLLNVAL for _, event in events)

"""A watch on what bots have written: the peak for check-bot, and a stop for a bot past what disk.py allows.

One thread per arena process looks at every watched bot every WATCH_INTERVAL_S (less often when looks are
slow: never more than ~5% of a core). A tmpfs is read with one statvfs; a measured workdir is walked. A bot is
stopped with a limit fault when
- what it wrote is over the limit: measured, nothing refused its writes (or, under basic as root, its tmpfs
  and what its UID wrote in /tmp and the like are over it together);
- it has more files than max_files (a tmpfs under bwrap has no inode limit of its own);
- its tmpfs is full and it keeps writing: more than KEEP_WRITING_CALLS write calls in a second while full.
  One ENOSPC, or a few, is the bot's own affair; a loop that retries forever is stopped.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from arena.sandbox.disk import SHARED_DIRS, DiskKind, DiskSpace, Usage, filesystem_usage, tree_usage

log = logging.getLogger(__name__)

WATCH_INTERVAL_S = 0.25
COST_SHARE = 20
KEEP_WRITING_CALLS = 2000
"""Write calls in one second, while the bot's space is full, that make it a bot that keeps writing."""
FULL_MARGIN_BYTES = 64 * 1024
"""A tmpfs with less free than this counts as full."""


@dataclass(slots=True)
class Watched:
    """One bot, as the watch follows it."""

    space: DiskSpace
    where: Callable[[], str | None]
    """The path of the bot's workdir as the arena can read it now (None: not yet, its sandbox is starting)."""
    pids: Callable[[], list[int]]
    """The bot's live processes, for counting its write calls."""
    stop: Callable[[str], bool]
    """Kills the bot for this reason (a limit fault's detail); False when it could not be done now."""
    peak_bytes: int = 0
    stopped: bool = False
    full_since: tuple[float, int] | None = field(default=None)  # (when, write calls then) the space was full


def write_calls(pids: list[int]) -> int | None:
    """The write calls these processes have made (syscw of /proc/PID/io), or None if it cannot be read."""
    total, read = 0, False
    for pid in pids:
        try:
            with open(f"/proc/{pid}/io", "rb") as stream:
                for line in stream:
                    if line.startswith(b"syscw:"):
                        total += int(line.split()[1])
                        read = True
        except (OSError, ValueError):
            continue
    return total if read else None


def measure(bot: Watched) -> Usage | None:
    """What the bot has written now, or None when its space cannot be seen (gone, or not yet there)."""
    path = bot.where()
    if path is None:
        return None
    found = filesystem_usage(path) if bot.space.kind is DiskKind.TMPFS else tree_usage([Path(path)])
    if found is None or bot.space.owner is None:
        return found
    shared = tree_usage(list(SHARED_DIRS), bot.space.owner)  # basic as root: what its UID left in /tmp and the like
    return Usage(found.bytes + shared.bytes, found.files + shared.files)


def judge(bot: Watched, usage: Usage, now: float) -> str | None:
    """Why the bot must be stopped after this look, or None."""
    space = bot.space
    megabytes = space.limit_bytes // (1024 * 1024)
    if usage.files > space.max_files:
        return f"disk: wrote more than {space.max_files} files (each counts as 4 KB of its {megabytes} MB)"
    if usage.counted() > space.limit_bytes:  # measured, or a tmpfs and what its UID wrote outside it
        return f"disk: wrote more than its {megabytes} MB (its workdir and temporary files together)"
    if space.kind is DiskKind.MEASURED:
        return None
    full = usage.counted() >= space.limit_bytes - FULL_MARGIN_BYTES
    if not full:
        bot.full_since = None
        return None
    calls = write_calls(bot.pids())
    if calls is None:
        return None
    if bot.full_since is None:
        bot.full_since = (now, calls)
        return None
    since, calls_then = bot.full_since
    if calls - calls_then > KEEP_WRITING_CALLS and now - since <= 1.0 + WATCH_INTERVAL_S:
        return f"disk: kept writing after its {megabytes} MB were full ({calls - calls_then} write calls)"
    if now - since > 1.0:
        bot.full_since = (now, calls)  # a new second of being full
    return None


class DiskWatch:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._watched: dict[int, Watched] = {}
        self._thread: threading.Thread | None = None
        os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        """After a fork: the child watches none of its parent's bots, and has no watch thread yet."""
        self._lock = threading.Lock()
        self._watched = {}
        self._thread = None

    def add(self, key: int, watched: Watched) -> None:
        with self._lock:
            self._watched[key] = watched
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="arena-sandbox-disk", daemon=True)
                self._thread.start()

    def remove(self, key: int) -> None:
        with self._lock:
            self._watched.pop(key, None)

    def _loop(self) -> None:
        while True:
            with self._lock:
                watched = list(self._watched.values())
                if not watched:
                    self._thread = None
                    return
            started = time.monotonic()
            for bot in watched:
                try:
                    look(bot)
                except Exception:  # one failed look must not end the watch of every bot
                    log.exception("sandbox: the disk watch failed to look at a bot")
            cost = time.monotonic() - started
            time.sleep(max(WATCH_INTERVAL_S, COST_SHARE * cost))


def look(bot: Watched, *, stop: bool = True) -> None:
    """Measure one bot, keep its peak, and (if stop) stop it if it must be."""
    if bot.stopped:
        return
    usage = measure(bot)
    if usage is None:
        return
    bot.peak_bytes = max(bot.peak_bytes, usage.counted())
    if not stop:
        return
    reason = judge(bot, usage, time.monotonic())
    if reason is not None:
        bot.stopped = bot.stop(reason)
        if bot.stopped:
            log.info("sandbox: bot stopped: %s", reason)


watch = DiskWatch()

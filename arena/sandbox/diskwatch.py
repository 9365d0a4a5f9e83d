"""A watch on what bots have written: the peak for check-bot, and a stop for a bot past what disk.py allows.

One thread per arena process looks at each watched bot every WATCH_INTERVAL_S, or less often where its looks
are slow (a measured workdir of many files): each bot's own looks take at most ~5% of a core, and one bot's
slow looks never delay another's. A bot is stopped with a limit fault when
- what it wrote is over the limit: measured, nothing refused its writes;
- it has more files than max_files (a tmpfs under bwrap has no inode limit of its own);
- its tmpfs is full and it keeps trying to write: more than KEEP_WRITING_RATE write calls a second that
  wrote next to nothing (ENOSPC). One ENOSPC, or a few, is the bot's own affair, and so is logging on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from arena.sandbox.disk import FILE_BYTES, DiskKind, DiskSpace, Usage
from arena.sandbox.limits import MIB
from arena.sandbox.watcher import Watcher

log = logging.getLogger(__name__)

WATCH_INTERVAL_S = 0.25
COST_SHARE = 20
MAX_INTERVAL_S = 2.0
"""However much a look costs (a folder of many files), the next is no later than this."""
KEEP_WRITING_RATE = 2000
"""Failing write calls a second, while the bot's space is full, that make it a bot that keeps writing."""
FULL_MARGIN_BYTES = 64 * 1024
"""A space with less free than this counts as full."""

WriteCalls = tuple[float, int, int]  # (when, write calls, bytes written) of the bot's processes


@dataclass(slots=True)
class Watched:
    """One bot, as the watch follows it."""

    space: DiskSpace
    measure: Callable[[], Usage | None]
    """What the bot has written now; None when it cannot be seen (its sandbox starting, or it is busy)."""
    pids: Callable[[], list[int]]
    """The bot's live processes, for counting their write calls."""
    stop: Callable[[str], bool]
    """Kills the bot for this reason (a limit fault's detail); False when it could not be done now."""
    peak_bytes: int = 0
    stopped: bool = False
    full_since: WriteCalls | None = None  # the bot's write calls when its space was last seen full
    due: float = 0.0  # time.monotonic() of its next look


def write_calls(pids: list[int]) -> WriteCalls | None:
    """The write calls these processes have made and the bytes they wrote (syscw and wchar of /proc/PID/io,
    which counts a call that failed too), or None if it cannot be read."""
    calls = written = 0
    read = False
    for pid in pids:
        try:
            with open(f"/proc/{pid}/io", "rb") as stream:
                for line in stream:
                    if line.startswith(b"syscw:"):
                        calls += int(line.split()[1])
                        read = True
                    elif line.startswith(b"wchar:"):
                        written += int(line.split()[1])
        except (OSError, ValueError):
            continue
    return (time.monotonic(), calls, written) if read else None


def judge(bot: Watched, usage: Usage) -> str | None:
    """Why the bot must be stopped after this look, or None."""
    space = bot.space
    megabytes = space.limit_bytes // MIB
    if usage.files > space.max_files:
        each = FILE_BYTES // 1024
        return f"disk: wrote more than {space.max_files} files (each counts as {each} KB of its {megabytes} MB)"
    if usage.counted() > space.limit_bytes:
        return f"disk: wrote more than its {megabytes} MB (its workdir and temporary files together)"
    if space.kind is DiskKind.MEASURED or usage.counted() < space.limit_bytes - FULL_MARGIN_BYTES:
        bot.full_since = None
        return None
    now = write_calls(bot.pids())
    then, bot.full_since = bot.full_since, now
    if now is None or then is None or now[0] - then[0] < WATCH_INTERVAL_S / 2:
        return None
    calls, written = now[1] - then[1], now[2] - then[2]
    rate = calls / (now[0] - then[0])
    if rate > KEEP_WRITING_RATE and written < calls:  # less than a byte a call: calls that wrote nothing
        return f"disk: kept writing after its {megabytes} MB were full ({rate:.0f} failed write calls a second)"
    return None


def look(bot: Watched, *, stop: bool = True) -> None:
    """Measure one bot, keep its peak, and (if stop) stop it if it must be."""
    if bot.stopped:
        return
    usage = bot.measure()
    if usage is None:
        return
    bot.peak_bytes = max(bot.peak_bytes, usage.counted())
    if not stop:
        return
    reason = judge(bot, usage)
    if reason is not None:
        bot.stopped = bot.stop(reason)
        if bot.stopped:
            log.info("sandbox: bot stopped: %s", reason)


class DiskWatch(Watcher[Watched]):
    thread_name = "arena-sandbox-disk"

    def look_all(self, watched: list[Watched]) -> float:
        for bot in watched:
            if time.monotonic() < bot.due:
                continue
            started = time.thread_time()
            try:
                look(bot)
            except Exception:  # one failed look must not end the watch of every bot
                log.exception("sandbox: the disk watch failed to look at a bot")
            cost = time.thread_time() - started  # the CPU, not the time: see memwatch.COST_SHARE
            bot.due = time.monotonic() + min(MAX_INTERVAL_S, max(WATCH_INTERVAL_S, COST_SHARE * cost))
        return max(0.01, min(bot.due for bot in watched) - time.monotonic())


watch = DiskWatch()

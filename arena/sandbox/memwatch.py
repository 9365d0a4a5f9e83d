"""A watch on the resident memory of bot process trees: the memory limit where no cgroup holds it, and the peak.

Without a cgroup, RLIMIT_DATA caps each process's private writable memory; a tree of processes, or memory
that is shared or file-backed, gets past it. So one thread per arena process reads the whole process table
every WATCH_INTERVAL_S, adds up the resident memory of each watched bot's processes, and stops a bot whose
sum is over its limit. Between two looks a bot can overshoot; RLIMIT_DATA bounds how far one process can.

A bot's processes are those descended from its first process, those of its session, and orphans that
re-parented to the arena (a child subreaper) and carry the bot's marker or UID.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass

from arena.sandbox import procfs
from arena.sandbox.watcher import Watcher

log = logging.getLogger(__name__)

WATCH_INTERVAL_S = 0.1
COST_SHARE = 20
"""The thread waits at least this many times the CPU a look took: it never takes more than ~5% of a core. The CPU, not
the time: on a machine busy with other work a look waits its turn for a core, and waiting twenty times that would
leave a bot over its limit for seconds."""
MAX_INTERVAL_S = 1.0
"""However much a look costs (a process table of thousands), the next is no later than this."""

Member = tuple[int, int]  # (pid, start time): tells a process from a later one with the same pid


@dataclass(slots=True)
class Watched:
    """One bot, as the watch follows it."""

    root: int  # the bot's first process (bwrap, under strict): its session leader
    marker: str
    uid: int | None  # the bot's own UID, when it has one
    limit_bytes: int | None  # None: measured, never stopped
    stop: Callable[[Collection[Member]], bool]
    """Kills these processes as a memory fault; False when it could not be done now (it is asked again)."""
    peak_bytes: int = 0
    stopped: bool = False


def _tree(roots: list[int], children: dict[int, list[int]], table: dict[int, procfs.ProcStat]) -> set[int]:
    found: set[int] = set()
    todo = list(roots)
    while todo:
        pid = todo.pop()
        if pid in found or pid not in table:
            continue
        found.add(pid)
        todo.extend(children.get(pid, ()))
    return found


class MemoryWatch(Watcher[Watched]):
    thread_name = "arena-sandbox-memory"

    def _forget(self) -> None:
        super()._forget()
        self._orphans: dict[Member, int] = {}  # an orphan, by pid and start time -> the root of its bot (0: none)

    def look_all(self, watched: list[Watched]) -> float:
        started = time.thread_time()
        try:
            self.look(watched)
        except Exception:  # a look that fails must not end the watch: memory limits would silently stop
            log.exception("sandbox: the memory watch failed to look at its bots")
        return min(MAX_INTERVAL_S, max(WATCH_INTERVAL_S, COST_SHARE * (time.thread_time() - started)))

    def look(self, watched: list[Watched]) -> None:
        """One pass: measure every watched bot, stop those over their limit."""
        table = procfs.table()
        children: dict[int, list[int]] = {}
        sessions: dict[int, list[int]] = {}
        for entry in table.values():
            children.setdefault(entry.ppid, []).append(entry.pid)
            sessions.setdefault(entry.sid, []).append(entry.pid)
        orphans = self._attribute_orphans(watched, children.get(os.getpid(), []), table)
        for bot in watched:
            members = _tree([bot.root, *sessions.get(bot.root, ()), *orphans.get(bot.root, ())], children, table)
            used = sum(table[pid].rss_pages for pid in members) * procfs.PAGE_BYTES
            bot.peak_bytes = max(bot.peak_bytes, used)
            if bot.limit_bytes is not None and used > bot.limit_bytes and not bot.stopped:
                bot.stopped = bot.stop([(pid, table[pid].start) for pid in members])

    def _attribute_orphans(
        self, watched: list[Watched], ours: list[int], table: dict[int, procfs.ProcStat]
    ) -> dict[int, list[int]]:
        """The arena's children that are not bots' first processes: orphans of bots, by the root of their bot."""
        roots = {bot.root for bot in watched}
        found: dict[int, list[int]] = {}
        seen = set()
        for pid in ours:
            if pid in roots:
                continue
            key = (pid, table[pid].start)
            seen.add(key)
            root = self._orphans.get(key)
            if root is None:
                root = self._orphans[key] = next((bot.root for bot in watched if self._belongs(pid, bot)), 0)
            if root:
                found.setdefault(root, []).append(pid)
        self._orphans = {key: root for key, root in self._orphans.items() if key in seen}
        return found

    @staticmethod
    def _belongs(pid: int, bot: Watched) -> bool:
        if bot.uid is not None and procfs.owner(pid) == bot.uid:
            return True
        return procfs.carries_marker(pid, bot.marker)


watch = MemoryWatch()

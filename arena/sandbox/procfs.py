"""Reading the process table from /proc: who is whose child, which user runs it, which bot it came from.

Every reader returns None (or False) for a process that vanished or cannot be read: the table changes
under our feet, and a missing process is the normal end of the story, not an error.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

MARKER_VARIABLE = "ARENA_SANDBOX_ID"
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True, slots=True)
class ProcStat:
    """The fields of /proc/<pid>/stat the reaper needs."""

    pid: int
    state: str
    ppid: int
    pgid: int
    sid: int
    start: int  # start time in clock ticks since boot: tells a process from a later one with the same pid
    cpu_ticks: int = 0  # user + system time so far, in clock ticks
    rss_pages: int = 0  # resident set: anonymous, file-backed and shared memory pages (0 for a zombie)

    @property
    def zombie(self) -> bool:
        return self.state in ("Z", "X")


def pids() -> list[int]:
    """Every process id currently in the table."""
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _read(path: str, limit: int = 1 << 20) -> bytes | None:
    try:
        with open(path, "rb") as stream:
            return stream.read(limit)
    except OSError:
        return None


def stat(pid: int) -> ProcStat | None:
    """State, parent, process group, session, CPU time and resident memory of pid."""
    raw = _read(f"/proc/{pid}/stat")
    if not raw:
        return None
    # The command name is in parentheses and may itself hold spaces or parentheses: split after the last one.
    fields = raw[raw.rfind(b")") + 2 :].split()
    try:
        return ProcStat(
            pid,
            fields[0].decode(),
            int(fields[1]),
            int(fields[2]),
            int(fields[3]),
            int(fields[19]),
            int(fields[11]) + int(fields[12]),
            int(fields[21]),
        )
    except (IndexError, ValueError):
        return None


def uids(pid: int) -> tuple[int, ...] | None:
    """Real, effective, saved and file-system uid of pid."""
    raw = _read(f"/proc/{pid}/status")
    if raw is None:
        return None
    for line in raw.splitlines():
        if line.startswith(b"Uid:"):
            return tuple(int(value) for value in line.split()[1:])
    return None


def threads(pid: int) -> int:
    """How many threads (tasks, as RLIMIT_NPROC counts them) pid has; 0 if it is gone."""
    raw = _read(f"/proc/{pid}/status")
    for line in (raw or b"").splitlines():
        if line.startswith(b"Threads:"):
            return int(line.split()[1])
    return 0


def carries_marker(pid: int, marker: str) -> bool:
    """Whether pid was started with MARKER_VARIABLE=marker in its environment (it inherits it across fork)."""
    raw = _read(f"/proc/{pid}/environ")
    if not raw:
        return False
    return f"{MARKER_VARIABLE}={marker}".encode() in raw.split(b"\0")


def processes_of_user(uid: int) -> list[int]:
    """Every process whose real, effective or saved uid is uid."""
    found = []
    for pid in pids():
        ids = uids(pid)
        if ids is not None and uid in ids[:3]:
            found.append(pid)
    return found


def tasks_of_user(uid: int) -> int:
    """How many tasks the kernel counts against uid's RLIMIT_NPROC (threads included)."""
    total = 0
    for pid in pids():
        ids = uids(pid)
        if ids is not None and ids[0] == uid:
            total += threads(pid)
    return total


def tree(root: int) -> list[ProcStat]:
    """root and its live descendants."""
    entries = table()
    children: dict[int, list[ProcStat]] = {}
    for entry in entries.values():
        children.setdefault(entry.ppid, []).append(entry)
    found, todo = [], [entries[root]] if root in entries else []
    while todo:
        entry = todo.pop()
        found.append(entry)
        todo.extend(children.get(entry.pid, ()))
    return found


def tree_cpu_seconds(root: int) -> float:
    """CPU time used so far by root and its live descendants."""
    return sum(entry.cpu_ticks for entry in tree(root)) / os.sysconf("SC_CLK_TCK")


def table() -> dict[int, ProcStat]:
    """Every process that could be read, by pid: one pass over the whole process table."""
    return {pid: entry for pid in pids() if (entry := stat(pid)) is not None}


def owner(pid: int) -> int | None:
    """The effective uid of pid (the owner of its /proc directory), or None if it is gone."""
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None

"""Where a bot may write, how much, and how to measure it: Limits.disk_mb, its workdir and /tmp together.

Two ways to hold the limit:
- TMPFS, wherever the bot gets a mount namespace: its writable space is a tmpfs of disk_mb, so a write past
  the limit fails with ENOSPC, as on a full disk. Under strict, bwrap's /tmp is that tmpfs and the workdir a
  directory in it. Under basic as root the child mounts it on the workdir (with an inode limit too) and shows
  the bot every other directory anyone may write in (/tmp, /var/tmp, /run/lock, ...) read-only, so the
  workdir is all it can write. In both, /dev/shm is a small tmpfs of its own (SHM_BYTES at most), which the
  watch counts with the rest.
- MEASURED, under basic without root: nothing can refuse the write, so the watch (diskwatch.py) adds up the
  workdir, and the files the bot's processes hold open after deleting them, and stops a bot over the limit.
  What it writes elsewhere, as the arena's own user, cannot be told from the arena's own files.

Every file counts as at least one page (FILE_BYTES), as on a disk: an empty file still costs an inode, and a
flood of them is bounded too (max_files). A tmpfs's pages are memory: under a memory cgroup they count against
memory_mb as well.
"""

from __future__ import annotations

import functools
import os
import stat
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from arena.sandbox.limits import MIB

FILE_BYTES = 4096
"""What one file costs at least, against the limit."""
SHM_BYTES = 64 * MIB
"""The most a bot's /dev/shm holds (POSIX shared memory, semaphores of Python's multiprocessing)."""
SHM = Path("/dev/shm")
MAX_WALK = 200_000
"""Entries one measurement looks at; past that a bot is over any limit it could have (max_files)."""
SCAN_DEPTH = 3
"""How deep below / the directories anyone may write in are looked for (/var/lib/x is 3)."""
_MOUNT_FLAGS = {os.ST_NOSUID: 0x2, os.ST_NODEV: 0x4, os.ST_NOEXEC: 0x8}  # statvfs flag -> mount flag


class DiskKind(Enum):
    TMPFS = "tmpfs"  # a tmpfs of the limit's size: a write past it fails with ENOSPC
    MEASURED = "measured"  # the watch measures the workdir and stops the bot over the limit


@dataclass(frozen=True, slots=True)
class DiskSpace:
    """One bot's writable space, as the watch follows it."""

    kind: DiskKind
    workdir: Path  # at the path its bot sees (inside its mount namespace)
    mounts: tuple[tuple[Path, int], ...]  # TMPFS: each tmpfs of the bot (its path inside, its size in bytes)
    limit_bytes: int
    max_files: int

    @classmethod
    def tmpfs(cls, workdir: Path, space: Path, disk_mb: int) -> DiskSpace:
        limit = disk_mb * MIB
        return cls(DiskKind.TMPFS, workdir, ((space, limit), (SHM, shm_bytes(limit))), limit, limit // FILE_BYTES)

    @classmethod
    def measured(cls, workdir: Path, disk_mb: int) -> DiskSpace:
        limit = disk_mb * MIB
        return cls(DiskKind.MEASURED, workdir, (), limit, limit // FILE_BYTES)


@dataclass(frozen=True, slots=True)
class Usage:
    bytes: int
    files: int

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.bytes + other.bytes, self.files + other.files)

    def counted(self) -> int:
        """The bytes the limit counts: a file costs at least FILE_BYTES."""
        return max(self.bytes, self.files * FILE_BYTES)


def shm_bytes(limit_bytes: int) -> int:
    return min(limit_bytes, SHM_BYTES)


def inner_workdir(base: Path) -> Path:
    """A strict bot's workdir: a directory of its private /tmp (the host's path, when the base lies in /tmp)."""
    return Path("/tmp") / base.name / "work"


def tmpfs_options(size: int, files: int, uid: int, gid: int, mode: int = 0o700) -> bytes:
    """Mount options of a tmpfs of the bot's: its size, its inodes (its root is one more), its owner."""
    return b"size=%d,nr_inodes=%d,mode=%o,uid=%d,gid=%d" % (size, files + 1, mode, uid, gid)


@functools.cache
def writable_by_anyone() -> tuple[tuple[bytes, int], ...]:
    """The directories any user may write in, down to SCAN_DEPTH below / (not /proc, /sys, /dev/shm), each with
    the mount flags a read-only remount of it must keep: what a basic bot as root is shown read-only."""
    found: list[tuple[bytes, int]] = []
    todo = [(Path("/"), 0)]
    while todo:
        directory, depth = todo.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            path = Path(entry.path)
            if path in (Path("/proc"), Path("/sys"), SHM):
                continue
            try:
                if not entry.is_dir(follow_symlinks=False):
                    continue
                mode = entry.stat(follow_symlinks=False).st_mode
                if mode & stat.S_IWOTH:
                    flags = os.statvfs(path).f_flag
                    found.append((os.fsencode(path), sum(m for f, m in _MOUNT_FLAGS.items() if flags & f)))
            except OSError:
                continue
            if depth + 1 < SCAN_DEPTH:
                todo.append((path, depth + 1))
    return tuple(sorted(found))


def filesystem_usage(fd: int) -> Usage:
    """What is written on the filesystem of fd (a bot's tmpfs, held open)."""
    found = os.fstatvfs(fd)
    return Usage((found.f_blocks - found.f_bfree) * found.f_frsize, max(found.f_files - found.f_ffree - 1, 0))


def open_tmpfs(path: str, size: int) -> int | None:
    """A descriptor of the bot's own tmpfs at path (through /proc/PID/root), or None while path does not lead
    to it yet: before the sandbox is set up the host has a directory of its own there. A tmpfs of exactly
    that size is the bot's: the last component is never followed, the mount point cannot be renamed."""
    try:
        fd = os.open(path, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        found = os.fstatvfs(fd)
        if found.f_blocks * found.f_frsize == -(-size // found.f_frsize) * found.f_frsize:
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _entries(directory: str) -> list[os.DirEntry[str]]:
    """The entries of directory; one the arena's user owns but may not list (a bot can leave it so) is opened
    up first. None that cannot be read. Never as root, who needs it not: chmod follows a link that a bot could
    swap in for the directory meanwhile."""
    try:
        return list(os.scandir(directory))
    except PermissionError:
        if os.geteuid() == 0:
            return []
        try:
            os.chmod(directory, 0o700)
            return list(os.scandir(directory))
        except OSError:
            return []
    except OSError:
        return []


def tree_usage(roots: list[Path]) -> Usage:
    """What the files under roots take, each counted once however many links it has; links are not followed,
    and a directory a bot closed to its own user is opened up (_entries)."""
    seen: set[tuple[int, int]] = set()
    total = files = looked = 0
    todo = [str(root) for root in roots]
    while todo and looked < MAX_WALK:
        directory = todo.pop()
        entries = _entries(directory)
        for entry in entries:
            looked += 1
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if (info.st_dev, info.st_ino) in seen:
                continue
            seen.add((info.st_dev, info.st_ino))
            files += 1
            total += info.st_blocks * 512
            if stat.S_ISDIR(info.st_mode):
                todo.append(entry.path)
    if looked >= MAX_WALK:
        files = max(files, MAX_WALK)
    return Usage(total, files)


def deleted_open_files(pids: list[int]) -> Usage:
    """What the processes hold open of files they deleted: still on the disk, seen in no directory."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for pid in pids:
        try:
            names = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for name in names:
            link = f"/proc/{pid}/fd/{name}"
            try:
                if not os.readlink(link).endswith(" (deleted)"):
                    continue
                info = os.stat(link)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                total += info.st_blocks * 512
    return Usage(total, len(seen))


def make_removable(root: Path) -> None:
    """Open up every directory under root that a bot closed to its own user (_entries), so that it can be
    removed."""
    todo = [str(root)]
    while todo:
        directory = todo.pop()
        entries = _entries(directory)
        todo += [entry.path for entry in entries if entry.is_dir(follow_symlinks=False)]

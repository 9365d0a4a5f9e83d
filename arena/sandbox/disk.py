"""Where a bot may write, how much, and how to measure it: Limits.disk_mb, its workdir and /tmp together.

Two ways to hold the limit:
- TMPFS, wherever the bot gets a mount namespace: its writable space is a tmpfs of disk_mb, so a write past
  the limit fails with ENOSPC, as on a full disk. Under strict, bwrap's /tmp is that tmpfs and the workdir a
  directory in it; under basic as root, the child mounts it on the workdir (with an inode limit too), and the
  bot's UID is the owner of anything else it writes (in /tmp, /var/tmp, /dev/shm), which is measured.
- MEASURED, under basic without root: nothing can refuse the write, so the watch (diskwatch.py) adds up the
  workdir and stops a bot over the limit.

Every file counts as at least one page (FILE_BYTES), as on a disk: an empty file still costs an inode, and a
flood of them is bounded too (max_files). A tmpfs's pages are memory: under a memory cgroup they count against
memory_mb as well.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from arena.sandbox.limits import MIB

FILE_BYTES = 4096
"""What one file costs at least, against the limit."""
SHARED_DIRS = (Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"))
"""Where a basic bot may write outside its workdir: what its own UID owns there is its own."""
MAX_WALK = 200_000
"""Entries one measurement looks at; past that a bot is over any limit it could have (max_files)."""


class DiskKind(Enum):
    TMPFS = "tmpfs"  # a tmpfs of the limit's size: a write past it fails with ENOSPC
    MEASURED = "measured"  # the watch measures the workdir and stops the bot over the limit


@dataclass(frozen=True, slots=True)
class DiskSpace:
    """One bot's writable space, as the watch follows it."""

    kind: DiskKind
    path: Path  # the workdir, at the path its bot sees (inside its mount namespace)
    limit_bytes: int
    max_files: int
    owner: int | None = None  # the bot's own UID: what it owns in SHARED_DIRS is measured too

    @classmethod
    def of(cls, kind: DiskKind, path: Path, disk_mb: int, owner: int | None = None) -> DiskSpace:
        limit = disk_mb * MIB
        return cls(kind, path, limit, limit // FILE_BYTES, owner)


@dataclass(frozen=True, slots=True)
class Usage:
    bytes: int
    files: int

    def counted(self) -> int:
        """The bytes the limit counts: a file costs at least FILE_BYTES."""
        return max(self.bytes, self.files * FILE_BYTES)


def inner_workdir(base: Path) -> Path:
    """A strict bot's workdir: a directory of its private /tmp (the host's path, when the base lies in /tmp)."""
    return Path("/tmp") / base.name / "work"


def tmpfs_options(space: DiskSpace, uid: int, gid: int) -> bytes:
    """The mount options of a basic bot's workdir tmpfs: its size, its inodes, and its owner."""
    inodes = space.max_files + 1  # its root directory is one
    return b"size=%d,nr_inodes=%d,mode=0700,uid=%d,gid=%d" % (space.limit_bytes, inodes, uid, gid)


def filesystem_usage(path: str) -> Usage | None:
    """What is written on the filesystem holding path (a bot's tmpfs, seen through /proc/PID/root)."""
    try:
        found = os.statvfs(path)
    except OSError:
        return None
    return Usage((found.f_blocks - found.f_bfree) * found.f_frsize, max(found.f_files - found.f_ffree - 1, 0))


def tree_usage(roots: list[Path], owner: int | None = None) -> Usage:
    """What the files under roots take, each counted once however many links it has; links are not followed.

    With owner, only what that UID owns is counted, at the top of each root (a basic bot's in /tmp).
    """
    seen: set[tuple[int, int]] = set()
    total = files = looked = 0
    todo: list[tuple[str, bool]] = [(str(root), owner is not None) for root in roots]
    while todo and looked < MAX_WALK:
        directory, only_owned = todo.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            looked += 1
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if only_owned and info.st_uid != owner:
                continue
            if (info.st_dev, info.st_ino) in seen:
                continue
            seen.add((info.st_dev, info.st_ino))
            files += 1
            total += info.st_blocks * 512
            if stat.S_ISDIR(info.st_mode):
                todo.append((entry.path, False))
    if looked >= MAX_WALK:
        files = max(files, MAX_WALK)
    return Usage(total, files)


def remove_owned(owner: int) -> None:
    """Remove what a basic bot's own UID left in SHARED_DIRS, before the UID goes to another bot."""
    for directory in SHARED_DIRS:
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            with contextlib.suppress(OSError):
                if entry.stat(follow_symlinks=False).st_uid != owner:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)

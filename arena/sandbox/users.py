"""Unprivileged user ids for bots, one per live bot process, unique across every arena on the machine.

When the arena runs as root each bot gets a UID/GID of its own from a high range, so that RLIMIT_NPROC
counts only that bot's processes, file permissions keep it out of other bots' files, and every process it
leaves behind can be found by its UID. A UID is held by an flock on a lock file in a root-only directory:
another arena process skips it, and the kernel releases it if the arena dies.
"""

from __future__ import annotations

import contextlib
import fcntl
import grp
import logging
import os
import pwd
import stat
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from arena.sandbox.errors import SandboxError

log = logging.getLogger(__name__)

UID_BASE = 200_000
UID_COUNT = 65_536
LOCK_DIRS = (Path("/run/arena-sandbox/uids"), Path(tempfile.gettempdir()) / "arena-sandbox-uids")


@dataclass(slots=True)
class BotUser:
    """A UID (and the GID of the same number) held for one bot until release()."""

    uid: int
    lock_path: Path = field(repr=False)
    lock_fd: int = field(repr=False)

    @property
    def gid(self) -> int:
        return self.uid

    def release(self) -> None:
        """Give the UID back (call only once every process of the UID is gone).

        The lock file is removed while still locked, so lock files do not pile up; allocate() checks that the
        file it locked is still the one at the path, so a racing arena never holds a removed file's lock.
        """
        if self.lock_fd >= 0:
            with contextlib.suppress(FileNotFoundError):
                self.lock_path.unlink()
            os.close(self.lock_fd)
            self.lock_fd = -1


def _subordinate_ranges() -> list[range]:
    """Ranges in /etc/subuid and /etc/subgid: they belong to users' containers, never to bots."""
    ranges = []
    for path in ("/etc/subuid", "/etc/subgid"):
        try:
            lines = Path(path).read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            parts = line.split(":")
            if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
                ranges.append(range(int(parts[1]), int(parts[1]) + int(parts[2])))
    return ranges


def _taken_by_system(uid: int, subordinate: list[range]) -> bool:
    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        pass
    try:
        grp.getgrgid(uid)
        return True
    except KeyError:
        pass
    return any(uid in r for r in subordinate)


def _secure_dir(path: Path) -> bool:
    """Create path (root-only) if needed; True if it is a directory only root can write to."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == 0 and not info.st_mode & 0o022


def _try_lock(path: Path) -> int | None:
    """An fd holding an exclusive flock on path, or None if another holder has it."""
    for _ in range(3):  # a holder may remove the file between our open and our lock: then try afresh
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        try:
            same = os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)
    return None


class UserPool:
    """Hands out UIDs from [UID_BASE, UID_BASE + UID_COUNT), starting at a rotating cursor."""

    def __init__(self, base: int = UID_BASE, count: int = UID_COUNT) -> None:
        self._base = base
        self._count = count
        self._cursor = os.getpid() * 7919 % count  # spread concurrent arenas; rotate so UIDs are reused late
        self._lock = threading.Lock()
        self._dir: Path | None = None

    def _lock_dir(self) -> Path:
        if self._dir is None:
            for candidate in LOCK_DIRS:
                if _secure_dir(candidate):
                    self._dir = candidate
                    break
            else:
                raise SandboxError(f"no root-only directory for bot UID locks (tried {', '.join(map(str, LOCK_DIRS))})")
        return self._dir

    def allocate(self) -> BotUser:
        """A UID no other live bot on this machine holds."""
        with self._lock:
            directory = self._lock_dir()
            subordinate = _subordinate_ranges()
            for _ in range(self._count):
                uid = self._base + self._cursor
                self._cursor = (self._cursor + 1) % self._count
                if _taken_by_system(uid, subordinate):
                    continue
                held = _try_lock(directory / str(uid))
                if held is not None:
                    return BotUser(uid, directory / str(uid), held)
        raise SandboxError(f"all {self._count} bot UIDs from {self._base} are in use")


_pool = UserPool()


def allocate() -> BotUser:
    """A UID of its own for one bot (the arena must run as root)."""
    return _pool.allocate()

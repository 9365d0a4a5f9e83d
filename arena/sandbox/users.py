"""Unprivileged user ids for bots, one per live bot process, unique across every arena on the machine.

When the arena runs as root each bot gets a UID/GID of its own from a high range, so that RLIMIT_NPROC
counts only that bot's processes, file permissions keep it out of other bots' files, and every process it
leaves behind can be found by its UID. A UID is held by an flock on a lock file in a root-only directory:
another arena process skips it, and the kernel releases it if the arena dies.

The range is the lowest of UID_COUNT ids from SEARCH_FROM on that no user, group or subordinate range holds
(/etc/passwd, /etc/group, /etc/subuid, /etc/subgid: useradd gives each new user 65,536 subordinate ids from
100000 on, so a fixed range is soon taken) and that the arena's user namespace maps; or the one a tournament's
bot_uids or $ARENA_BOT_UIDS names, if nobody holds it.
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

from arena.sandbox.errors import SetupError

log = logging.getLogger(__name__)

SEARCH_FROM = 200_000
UID_COUNT = 65_536
MAX_ID = 2**32 - 1  # (uid_t)-1 means "no change" to the kernel
ID_FILES = ("/etc/passwd", "/etc/group")
SUBORDINATE_FILES = ("/etc/subuid", "/etc/subgid")
RANGE_VARIABLE = "ARENA_BOT_UIDS"
"""FIRST-LAST: the bot ids to use, instead of the lowest free range."""
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


@dataclass(frozen=True, slots=True)
class Reservation:
    """Ids the machine gives to someone: a user or group, or a user's subordinate range (for its containers)."""

    holder: str  # "/etc/subuid: walker", "/etc/passwd: alice"
    ids: range

    def __str__(self) -> str:
        last = self.ids.stop - 1
        return f"{self.holder} {self.ids.start}" + (f"\u2013{last}" if last != self.ids.start else "")


def _lines(path: str, separator: str | None = ":") -> list[list[str]]:
    try:
        return [line.split(separator) for line in Path(path).read_text().splitlines()]
    except OSError:
        return []


def reservations() -> list[Reservation]:
    """Every id /etc/passwd, /etc/group, /etc/subuid and /etc/subgid hand out: a bot must hold none of them."""
    found = []
    for path in ID_FILES:
        for parts in _lines(path):
            if len(parts) > 2 and parts[2].isdigit():
                found.append(Reservation(f"{path}: {parts[0]}", range(int(parts[2]), int(parts[2]) + 1)))
    for path in SUBORDINATE_FILES:
        for parts in _lines(path):
            if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
                first = int(parts[1])
                found.append(Reservation(f"{path}: {parts[0]}", range(first, first + int(parts[2]))))
    return found


def usable() -> list[range]:
    """The ids this process may switch to: those both its user namespace's uid_map and gid_map map (in a
    container, a part of the machine's ids)."""
    maps = []
    for name in ("uid_map", "gid_map"):
        mapped = []
        for parts in _lines(f"/proc/self/{name}", separator=None):  # inside, outside, count
            if len(parts) == 3 and all(part.isdigit() for part in parts):
                mapped.append(range(int(parts[0]), int(parts[0]) + int(parts[2])))
        maps.append(mapped or [range(0, MAX_ID)])
    return [
        range(max(a.start, b.start), min(a.stop, b.stop))
        for a in maps[0]
        for b in maps[1]
        if max(a.start, b.start) < min(a.stop, b.stop)
    ]


def parse_range(text: str) -> range:
    """A range of ids written FIRST-LAST (both included): ValueError naming what is wrong."""
    first, sep, last = text.strip().partition("-")
    if not sep or not first.strip().isdigit() or not last.strip().isdigit():
        raise ValueError(f"{text!r} is not a range of ids written FIRST-LAST, such as 300000-365535")
    ids = range(int(first), int(last) + 1)
    if not ids or ids.stop > MAX_ID or ids.start < 1:
        raise ValueError(f"{text!r}: the first id must be at least 1 and at most the last, the last below {MAX_ID}")
    return ids


def _overlapping(ids: range, taken: list[Reservation]) -> list[Reservation]:
    return [held for held in taken if held.ids.start < ids.stop and ids.start < held.ids.stop]


def choose(wanted: range | None = None, count: int = UID_COUNT) -> range:
    """The bot ids to use: wanted (ARENA_BOT_UIDS, a tournament's bot_uids) if it is free, else the lowest free
    range of count ids from SEARCH_FROM on. SandboxError naming what holds the ids where there is none."""
    taken = reservations()
    spans = usable()
    how = (
        f"choose a range that no user, group or subordinate range holds with {RANGE_VARIABLE}=FIRST-LAST or a"
        " tournament's bot_uids: FIRST-LAST (`arena docs configuration`, Bot user ids)"
    )
    if wanted is not None:
        if not any(wanted.start >= span.start and wanted.stop <= span.stop for span in spans):
            shown = ", ".join(f"{span.start}\u2013{span.stop - 1}" for span in spans)
            raise SetupError(f"bot user ids {wanted.start}\u2013{wanted.stop - 1} are not all mapped here ({shown})")
        held = _overlapping(wanted, taken)
        if held:
            shown = f"{wanted.start}\u2013{wanted.stop - 1}"
            raise SetupError(f"bot user ids {shown} are reserved by {_listed(held)}; {how}")
        return wanted
    for span in spans:
        start = max(span.start, SEARCH_FROM)
        while start + count <= span.stop:
            ids = range(start, start + count)
            held = _overlapping(ids, taken)
            if not held:
                return ids
            start = max(reservation.ids.stop for reservation in held)
    near = _overlapping(range(SEARCH_FROM, MAX_ID), taken)
    raise SetupError(f"no {count} free bot user ids from {SEARCH_FROM} on: reserved by {_listed(near)}; {how}")


def _listed(held: list[Reservation], most: int = 4) -> str:
    shown = sorted(held, key=lambda r: r.ids.start)
    text = ", ".join(map(str, shown[:most]))
    return text + (f" and {len(shown) - most} more" if len(shown) > most else "")


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


def _named_elsewhere(uid: int) -> bool:
    """Whether the name service (LDAP, say, beyond /etc/passwd and /etc/group) knows this id."""
    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        pass
    try:
        grp.getgrgid(uid)
        return True
    except KeyError:
        return False


class UserPool:
    """Hands out the ids of its range (choose() picks it at the first start: the machine's users may change
    between runs), starting at a rotating cursor."""

    def __init__(self, ids: range | None = None) -> None:
        self._asked = ids
        self._ids = ids
        self._cursor = os.getpid() * 7919  # spread concurrent arenas; rotate so UIDs are reused late
        self._lock = threading.Lock()
        self._dir: Path | None = None

    def use(self, ids: range | None) -> None:
        """Take bot ids from ids (checked when first used), or, with None, from the lowest free range."""
        with self._lock:
            if ids != self._asked:
                self._asked, self._ids = ids, None

    def ids(self) -> range:
        """The range ids come from, chosen now if it was not yet."""
        if self._ids is None:
            asked = self._asked
            wanted = os.environ.get(RANGE_VARIABLE)
            if asked is None and wanted:
                try:
                    asked = parse_range(wanted)
                except ValueError as error:
                    raise SetupError(f"{RANGE_VARIABLE}: {error}") from None
            self._ids = choose(asked)
            log.debug("sandbox: bot user ids %d-%d", self._ids.start, self._ids.stop - 1)
        return self._ids

    def chosen(self) -> range:
        """The range in use, or an empty one before any bot started."""
        return self._ids or range(0)

    def _lock_dir(self) -> Path:
        if self._dir is None:
            for candidate in LOCK_DIRS:
                if _secure_dir(candidate):
                    self._dir = candidate
                    break
            else:
                raise SetupError(f"no root-only directory for bot UID locks (tried {', '.join(map(str, LOCK_DIRS))})")
        return self._dir

    def allocate(self) -> BotUser:
        """A UID no other live bot on this machine holds."""
        with self._lock:
            ids = self.ids()
            directory = self._lock_dir()
            for _ in range(len(ids)):
                uid = ids[self._cursor % len(ids)]
                self._cursor += 1
                if _named_elsewhere(uid):
                    continue
                held = _try_lock(directory / str(uid))
                if held is not None:
                    return BotUser(uid, directory / str(uid), held)
        last = ids.stop - 1
        raise SetupError(
            f"all {len(ids)} bot user ids {ids.start}\u2013{last} are held by other bots running now; choose a larger"
            f" range with {RANGE_VARIABLE}=FIRST-LAST or a tournament's bot_uids (`arena docs configuration`, Bot"
            " user ids)"
        )


_pool = UserPool()


def use(ids: range | None) -> None:
    """Take this process's bot ids from ids (a tournament's bot_uids), or from the lowest free range."""
    _pool.use(ids)


def chosen() -> range:
    """The bot ids this process uses (empty before its first bot)."""
    return _pool.chosen()


def ids() -> range:
    """The bot ids this process uses, chosen now if not yet: SetupError, naming what holds them, if none is free."""
    return _pool.ids()


def allocate() -> BotUser:
    """A UID of its own for one bot (the arena must run as root)."""
    return _pool.allocate()

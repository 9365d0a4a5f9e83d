"""A full output disk told apart from every other write error, so that a run stops cleanly and resumes.

Every write of the arena's own output (the results database, replays, the report, exports, logs) goes
through `writing`: a full disk (or quota) becomes one OutputDiskFull naming the file, and nothing else
is caught. What was committed before stays committed; a rerun after freeing space plays the rest.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from arena.errors import OutputDiskFull

FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
SQLITE_FULL, SQLITE_IOERR = 13, 10


def is_disk_full(error: BaseException, path: Path) -> bool:
    """SQLite says SQLITE_FULL where it can, but a -shm or -wal file it cannot create or grow is an I/O
    error without its errno: then the disk under `path` is asked whether it has room left."""
    if isinstance(error, sqlite3.Error):
        code = getattr(error, "sqlite_errorcode", 0)
        return code == SQLITE_FULL or (code & 0xFF == SQLITE_IOERR and short_of_room(path))
    return isinstance(error, OSError) and error.errno in FULL_ERRNOS


def short_of_room(path: Path) -> bool:
    """The disk under `path` has less than ROOM_BYTES free, or no free inode."""
    for place in (path, *path.parents):
        try:
            stats = os.statvfs(place)
        except OSError:
            continue
        return stats.f_bavail * stats.f_frsize < ROOM_BYTES or (stats.f_files > 0 and stats.f_favail == 0)
    return False


ROOM_BYTES = 1024 * 1024
"""Less free space than this on the output disk counts as full: SQLite needs room for its -shm and -wal."""


@contextlib.contextmanager
def writing(path: Path) -> Iterator[None]:
    """Writes to `path` inside; a full disk there raises OutputDiskFull."""
    try:
        yield
    except (OSError, sqlite3.Error) as error:
        if is_disk_full(error, path):
            raise OutputDiskFull(path) from error
        raise


def remove_partials(folder: Path) -> None:
    """A writer killed between its write and its rename (a worker stopped with the run) leaves a partial file."""
    for partial in folder.rglob("*.partial"):
        if partial.is_file():
            partial.unlink(missing_ok=True)


def write_atomically(path: Path, text: str) -> None:
    """Write to a partial file, then rename: a reader never meets half a file, a full disk leaves none."""
    partial = path.with_name(path.name + ".partial")
    with writing(path):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial.write_text(text, encoding="utf-8")
            partial.replace(path)
        finally:
            partial.unlink(missing_ok=True)

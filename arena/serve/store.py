"""The ladder's own records: its entrants and their sign-in links, and every bot version uploaded with its check.

The matches are not here: the ladder records them in a tournament store (arena.store), as `arena run` does. One
SQLite file in the ladder's data folder, opened per use: the web server's handlers, the check and the ladder's
scheduler each hold their own connection (SQLite's WAL lets them read while one writes)."""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

DATABASE = "ladder.sqlite"

SCHEMA = """
CREATE TABLE IF NOT EXISTS entrants (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    email TEXT NOT NULL UNIQUE COLLATE NOCASE,
    role TEXT NOT NULL CHECK (role IN ('organiser', 'entrant')),
    link TEXT NOT NULL UNIQUE,      -- sha256 of the personal sign-in token: the token itself is never kept
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS versions (
    entrant INTEGER NOT NULL REFERENCES entrants(id),
    digest TEXT NOT NULL,           -- the upload's content hash (arena.serve.uploads): the version's name
    uploaded_at REAL NOT NULL,
    filename TEXT NOT NULL,
    preset TEXT NOT NULL,
    command TEXT NOT NULL,          -- JSON list, as a tournament file's `command:`
    protocol TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('checking', 'passed', 'failed')),
    report TEXT,                    -- JSON: the check's findings (arena.serve.checks)
    checked_at REAL,
    PRIMARY KEY (entrant, digest)
);
CREATE TABLE IF NOT EXISTS active (
    entrant INTEGER PRIMARY KEY REFERENCES entrants(id),
    digest TEXT NOT NULL            -- the entrant's newest version that passed its check
);
"""


class Role(StrEnum):
    ORGANISER = "organiser"
    """Sees and does everything."""
    ENTRANT = "entrant"
    """Sees the leaderboard and every replay, and only its own bots' code, logs and checks."""


class Status(StrEnum):
    CHECKING = "checking"
    PASSED = "passed"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class Entrant:
    id: int
    name: str
    email: str
    role: Role
    link: str = field(default="", repr=False, compare=False)
    """The hash of its sign-in token: a session remembers it, so that a new link ends the sessions of the old."""


@dataclass(frozen=True, slots=True)
class Version:
    entrant: int
    digest: str
    uploaded_at: float
    filename: str
    preset: str
    command: tuple[str, ...]
    protocol: str
    status: Status
    report: dict[str, Any] | None
    checked_at: float | None

    @property
    def label(self) -> str:
        """The short name a page shows: the hash's first 12 digits, as a commit's."""
        return self.digest[:12]


def link_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class LadderStore:
    def __init__(self, data: Path) -> None:
        self.path = data / DATABASE
        with self._connect() as db:
            db.executescript(SCHEMA)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=30)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA foreign_keys=ON")
            with db:  # one transaction: committed whole, or rolled back on any error
                yield db
        finally:
            db.close()

    # -- entrants --------------------------------------------------------------------------------------------------

    def add_entrants(self, people: Sequence[tuple[str, str]], role: Role = Role.ENTRANT) -> list[tuple[Entrant, str]]:
        """Each (name, email) as a new entrant, all or none, with its personal sign-in token (returned once: only
        its hash is kept)."""
        added = []
        with self._connect() as db:
            for name, email in people:
                token = secrets.token_urlsafe(32)
                cursor = db.execute(
                    "INSERT INTO entrants (name, email, role, link, created_at) VALUES (?, ?, ?, ?, ?)",
                    (name, email, role.value, link_hash(token), time.time()),
                )
                assert cursor.lastrowid is not None
                added.append((Entrant(cursor.lastrowid, name, email, role, link_hash(token)), token))
        return added

    def new_link(self, entrant: int) -> str:
        """A new sign-in token for the entrant; the old link stops working."""
        token = secrets.token_urlsafe(32)
        with self._connect() as db:
            db.execute("UPDATE entrants SET link = ? WHERE id = ?", (link_hash(token), entrant))
        return token

    def signed_in(self, token: str) -> Entrant | None:
        with self._connect() as db:
            row = db.execute(f"SELECT {_ENTRANT} FROM entrants WHERE link = ?", (link_hash(token),)).fetchone()
        return None if row is None else _entrant(row)

    def entrant(self, entrant: int) -> Entrant | None:
        with self._connect() as db:
            row = db.execute(f"SELECT {_ENTRANT} FROM entrants WHERE id = ?", (entrant,)).fetchone()
        return None if row is None else _entrant(row)

    def entrant_named(self, name: str) -> Entrant | None:
        with self._connect() as db:
            row = db.execute(f"SELECT {_ENTRANT} FROM entrants WHERE name = ?", (name,)).fetchone()
        return None if row is None else _entrant(row)

    def entrants(self) -> list[Entrant]:
        with self._connect() as db:
            return [_entrant(row) for row in db.execute(f"SELECT {_ENTRANT} FROM entrants ORDER BY id")]

    # -- versions --------------------------------------------------------------------------------------------------

    def add_version(
        self, entrant: int, digest: str, filename: str, preset: str, command: Sequence[str], protocol: str
    ) -> tuple[Version, bool]:
        """The version, and whether it is new (the same content uploaded again is the same version)."""
        with self._connect() as db:
            cursor = db.execute(
                "INSERT OR IGNORE INTO versions (entrant, digest, uploaded_at, filename, preset, command, protocol,"
                " status) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (entrant, digest, time.time(), filename, preset, json.dumps(list(command)), protocol, Status.CHECKING),
            )
            new = cursor.rowcount == 1
        found = self.version(entrant, digest)
        assert found is not None
        return found, new

    def checked(self, entrant: int, digest: str, passed: bool, report: dict[str, Any]) -> None:
        """The check's verdict; a version that passed becomes the entrant's active bot unless a newer one already
        did."""
        status = Status.PASSED if passed else Status.FAILED
        with self._connect() as db:
            db.execute(
                "UPDATE versions SET status = ?, report = ?, checked_at = ? WHERE entrant = ? AND digest = ?",
                (status.value, json.dumps(report), time.time(), entrant, digest),
            )
            if passed:
                newer = "(SELECT uploaded_at FROM versions WHERE entrant = ? AND digest = {})"
                db.execute(
                    "INSERT INTO active (entrant, digest) VALUES (?, ?) ON CONFLICT (entrant) DO UPDATE SET"
                    f" digest = excluded.digest WHERE {newer.format('active.digest')} <= {newer.format('?')}",
                    (entrant, digest, entrant, entrant, digest),
                )

    def version(self, entrant: int, digest: str) -> Version | None:
        with self._connect() as db:
            row = db.execute(
                f"SELECT {_VERSION} FROM versions WHERE entrant = ? AND digest = ?", (entrant, digest)
            ).fetchone()
        return None if row is None else _version(row)

    def versions(self, entrant: int | None = None) -> list[Version]:
        """Newest first: one entrant's, or everyone's."""
        query = f"SELECT {_VERSION} FROM versions"
        arguments: tuple[Any, ...] = ()
        if entrant is not None:
            query, arguments = query + " WHERE entrant = ?", (entrant,)
        with self._connect() as db:
            return [_version(row) for row in db.execute(query + " ORDER BY uploaded_at DESC, rowid DESC", arguments)]

    def unchecked(self) -> list[Version]:
        """Versions whose check never finished (the server stopped during it): checked again at start."""
        with self._connect() as db:
            rows = db.execute(f"SELECT {_VERSION} FROM versions WHERE status = 'checking' ORDER BY uploaded_at")
            return [_version(row) for row in rows]

    def active(self) -> dict[int, str]:
        """Per entrant with one, the digest of its active version."""
        with self._connect() as db:
            return dict(db.execute("SELECT entrant, digest FROM active"))

    def uploads_since(self, entrant: int, since: float) -> int:
        with self._connect() as db:
            (count,) = db.execute(
                "SELECT COUNT(*) FROM versions WHERE entrant = ? AND uploaded_at >= ?", (entrant, since)
            ).fetchone()
        return int(count)


_ENTRANT = "id, name, email, role, link"
_VERSION = "entrant, digest, uploaded_at, filename, preset, command, protocol, status, report, checked_at"


def _entrant(row: Sequence[Any]) -> Entrant:
    return Entrant(row[0], row[1], row[2], Role(row[3]), row[4])


def _version(row: Sequence[Any]) -> Version:
    entrant, digest, uploaded_at, filename, preset, command, protocol, status, report, checked_at = row
    return Version(
        entrant,
        digest,
        uploaded_at,
        filename,
        preset,
        tuple(json.loads(command)),
        protocol,
        Status(status),
        None if report is None else json.loads(report),
        checked_at,
    )

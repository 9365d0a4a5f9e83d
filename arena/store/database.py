"""The tournament's results in SQLite (WAL), written match by match, and its replays beside them.

One output folder holds one tournament. Opening it with a configuration whose hash differs from the
stored one is refused (unless restarting), so results of two different tournaments never mix; opening
it with the same configuration resumes: finished matches are kept and only the others are played.

Inside `batched()`, recorded matches are committed together: a match recorded when no commit was made in
the last BATCH_SECONDS at once, the others when BATCH_MATCHES are waiting, or when the oldest has waited
BATCH_SECONDS (a timer thread commits it even if no other match comes), and whatever waits
when the batch ends, however it ends; on a disk short of room, every match at once. Only a process killed
outright loses the matches of the batch it had not committed yet: their rows are absent, and resuming plays
them again.

The layout has a version (STORE_VERSION, in meta as store_version). A folder of an older layout is brought
up to date when it is opened, keeping its results; one of a newer layout is refused.

The tournament's seed is the folder's own (meta, as decimal text: SQLite's integers hold 64 bits, a seed up to
256): the one written in the configuration, else one drawn from the system's entropy when the folder is
created. A rerun or a resume of the folder reads it, and so deals every match as before.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from arena.config.changes import changed_fields
from arena.engine import FaultReason
from arena.errors import OutputDiskFull, StoreError
from arena.matches import FaultRow, MatchDone, MatchJob, SeatStats, draw_tournament_seed
from arena.store.disk import is_disk_full, short_of_room, write_atomically, writing
from arena.store.logs import LOGS, write_log
from arena.tournament import MatchRecord

DATABASE = "results.sqlite"
REPLAYS = "replays"
BATCH_MATCHES = 500
"""Matches committed in one transaction at most, inside `batched()`."""
BATCH_SECONDS = 1.0
"""Inside `batched()`, how long a recorded match waits for its commit at most (give or take a commit's time)."""
STORE_VERSION = 3
"""1: the first layout (no store_version in meta); 2: matches.peak_memory; 3: the tournament's seed in meta
(TOURNAMENT_SEED), which an older arena would not read: resuming a folder whose seed was drawn, it would deal
with seed 0 instead."""
TOURNAMENT_SEED = "tournament_seed"
"""The meta key of the tournament's seed."""
LEGACY_SEED = 0
"""The seed of a folder begun before the seed was kept in meta, from a file without one: the default then."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS matches (
    match_id TEXT PRIMARY KEY,
    round INTEGER NOT NULL,
    seats TEXT NOT NULL,          -- JSON list of bot names, seat order
    deal_key TEXT NOT NULL,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL,         -- "done": played to the end and recorded
    winners TEXT NOT NULL,        -- JSON list of seats
    ranking TEXT NOT NULL,        -- JSON list of places, each a list of seats
    tokens TEXT NOT NULL,         -- JSON list, per seat
    duration_s REAL NOT NULL,
    replay TEXT NOT NULL,         -- path relative to the output folder
    finished_at REAL NOT NULL,    -- Unix time
    peak_memory TEXT NOT NULL DEFAULT '[]'  -- JSON list, per seat: bytes, or null for an in-process bot
);
CREATE TABLE IF NOT EXISTS faults (
    match_id TEXT NOT NULL REFERENCES matches(match_id),
    seat INTEGER NOT NULL,
    bot TEXT NOT NULL,
    reason TEXT NOT NULL,
    detail TEXT NOT NULL,
    stderr_tail TEXT NOT NULL,
    after_match INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS faults_by_match ON faults(match_id);
CREATE TABLE IF NOT EXISTS seat_stats (
    match_id TEXT NOT NULL REFERENCES matches(match_id),
    seat INTEGER NOT NULL,
    bot TEXT NOT NULL,
    decisions INTEGER NOT NULL,
    mistakes TEXT NOT NULL,       -- JSON list of [replay line, category]
    reply_ms TEXT NOT NULL,       -- JSON list: CPU ms charged to each act reply (empty: played in-process)
    reply_wall_ms TEXT NOT NULL   -- JSON list: wall ms of each
);
CREATE INDEX IF NOT EXISTS seat_stats_by_match ON seat_stats(match_id);
CREATE TABLE IF NOT EXISTS fair_play (
    match_id TEXT PRIMARY KEY REFERENCES matches(match_id),
    notes TEXT NOT NULL           -- JSON: arena.analysis.fairplay.notes_json
);
"""
"""seat_stats and fair_play came without a new layout version: an older arena resuming such a folder just leaves
them out for the matches it plays, and those are judged again from their replays."""


@dataclass(frozen=True, slots=True)
class StoredMatch:
    job: MatchJob
    winners: tuple[int, ...]
    ranking: tuple[tuple[int, ...], ...]
    tokens: tuple[int, ...]
    faults: tuple[FaultRow, ...]
    duration_s: float
    replay: Path | None
    """Absolute; None for a bye."""
    finished_at: float
    peak_memory: tuple[int | None, ...] = ()
    """As in MatchDone: per seat, bytes or None; empty for a match recorded before the figure was kept."""

    def record(self) -> MatchRecord:
        """As the standings take it: the ranking decides the scores, every fault (after the match too) counts."""
        job = self.job
        faults = tuple((f.seat, f.reason) for f in self.faults)
        return MatchRecord(job.match_id, job.round, job.seats, self.ranking, self.winners, faults)


class ResultStore:
    def __init__(self, output: Path, connection: sqlite3.Connection) -> None:
        self.output = output
        self._db = connection
        self._lock = threading.RLock()
        """Held around every use of the connection: the commit timer shares it."""
        self._due = threading.Condition(self._lock)
        self._pending: list[_Rows] = []
        """Recorded matches not committed yet, oldest first."""
        self._pending_since = 0.0
        self._committed_at = 0.0
        """When the last commit ended (time.monotonic())."""
        self._batching = False
        self._timer_error: BaseException | None = None
        """What a commit made by the timer thread raised, raised again in the caller's thread."""

    @classmethod
    def create_or_resume(
        cls, output: Path, config_hash: str, meta: dict[str, str], restart: bool, seed: int | None = None
    ) -> ResultStore:
        """The store of `output` for this configuration: new, resumed, or (restart) emptied first.

        `seed`: the tournament's seed as written; None draws one for a new folder (restart: a new one), and
        takes the one kept in a folder begun before."""
        path = output / DATABASE
        if restart and output.exists():
            path.unlink(missing_ok=True)
            for suffix in ("-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
            shutil.rmtree(output / REPLAYS, ignore_errors=True)
            shutil.rmtree(output / LOGS, ignore_errors=True)
        with writing(output):
            output.mkdir(parents=True, exist_ok=True)
            (output / REPLAYS).mkdir(exist_ok=True)
        store = cls(output, _connect(path))
        stored = store.meta().get("config_hash")
        if stored is None:
            drawn = draw_tournament_seed() if seed is None else seed
            store._write_meta(
                {**meta, "config_hash": config_hash, TOURNAMENT_SEED: str(drawn), "created_at": str(time.time())}
            )
        elif stored != config_hash:
            text = store.meta().get("config_text", "")
            store.close()
            raise another_configuration(output, text, meta.get("config_text", ""))
        else:
            store._resume_seed(seed)
        return store

    def _resume_seed(self, written: int | None) -> None:
        """Check the written seed against the folder's (config_hash counts a file without one as seed 0, so
        only this tells `seed: 0` from a drawn seed); keep it in a folder begun before seeds were kept."""
        kept = self.tournament_seed
        if kept is None:
            self.set_meta(TOURNAMENT_SEED, str(LEGACY_SEED if written is None else written))
        elif written is not None and written != kept:
            self.close()
            raise another_seed(self.output, written)

    @property
    def tournament_seed(self) -> int | None:
        """The seed every match's seed derives from; None in a folder begun before it was kept and not resumed
        since."""
        kept = self.meta().get(TOURNAMENT_SEED)
        return None if kept is None else int(kept)

    @classmethod
    def open_existing(cls, output: Path) -> ResultStore:
        path = output / DATABASE
        if not path.exists():
            raise StoreError(f"{output}: no tournament results here (no {DATABASE})")
        return cls(output, _connect(path))

    def meta(self) -> dict[str, str]:
        with self._lock:
            return dict(self._db.execute("SELECT key, value FROM meta").fetchall())

    def _write_meta(self, values: dict[str, str]) -> None:
        with self._lock, writing(self.output / DATABASE), self._db:
            self._db.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", values.items())

    def set_meta(self, key: str, value: str) -> None:
        self._write_meta({key: value})

    def finished_ids(self) -> set[str]:
        with self._lock:
            return {row[0] for row in self._db.execute("SELECT match_id FROM matches WHERE status = 'done'")}

    def record(self, done: MatchDone) -> Path:
        """Write the replay (unless the worker wrote it), then the match and its faults in one transaction; the
        replay's path. Inside `batched()` the transaction may hold other matches too, and may come later.

        A match counts as recorded once its row is committed: a replay without its row is written again
        when a rerun plays the match."""
        job = done.job
        replay = replay_path(self.output, job.match_id)
        if done.replay is not None or done.logs:
            try:
                if done.replay is not None:
                    write_atomically(replay, done.replay)
                for bot, log in done.logs:
                    write_log(self.output, bot, job.match_id, log)
            except OutputDiskFull:
                with contextlib.suppress(OutputDiskFull), self._lock:
                    self._commit_pending()  # what the full disk still takes is kept: the replays are written
                raise
        rows = _Rows(
            job.match_id,
            (
                job.match_id,
                job.round,
                json.dumps(list(job.seats)),
                job.deal_key,
                job.seed,
                json.dumps(list(done.winners)),
                json.dumps([list(place) for place in done.ranking]),
                json.dumps(list(done.tokens)),
                done.duration_s,
                str(replay.relative_to(self.output)),
                time.time(),
                json.dumps(list(done.peak_memory)),
            ),
            [(f.match_id, f.seat, f.bot, f.reason, f.detail, f.stderr_tail, int(f.after_match)) for f in done.faults],
            [
                (
                    job.match_id,
                    seat,
                    job.seats[seat],
                    stats.decisions,
                    json.dumps([list(mistake) for mistake in stats.mistakes]),
                    json.dumps(stats.reply_ms),
                    json.dumps(stats.reply_wall_ms),
                )
                for seat, stats in enumerate(done.seat_stats)
            ],
            done.fair_play,
        )
        with self._lock:
            self._raise_timer_error()
            self._pending.append(rows)
            if (
                not self._batching
                or len(self._pending) >= BATCH_MATCHES
                or time.monotonic() - self._committed_at >= BATCH_SECONDS  # the first after a quiet second
                or short_of_room(self.output)  # near a full disk at once: what room is left goes to results first
            ):
                self._commit_pending()
            elif len(self._pending) == 1:
                self._pending_since = time.monotonic()
                self._due.notify()
        return replay

    @contextlib.contextmanager
    def batched(self) -> Iterator[None]:
        """Inside, recorded matches are committed in batches (see the module docstring); at the end, however
        it comes (Ctrl-C, a full disk, an error), whatever is recorded and not committed yet is."""
        with self._lock:
            self._batching = True
        timer = threading.Thread(target=self._commit_when_due, name="arena-store-commits", daemon=True)
        timer.start()
        try:
            yield
        finally:
            with self._lock:
                self._batching = False
                self._due.notify()
            timer.join()
            self.commit()

    def commit(self) -> None:
        """Commit every recorded match not committed yet."""
        with self._lock:
            self._raise_timer_error()
            self._commit_pending()

    def _commit_when_due(self) -> None:
        with self._lock:
            while self._batching and self._timer_error is None:
                if not self._pending:
                    self._due.wait()
                    continue
                wait = self._pending_since + BATCH_SECONDS - time.monotonic()
                if wait > 0:
                    self._due.wait(wait)
                    continue
                try:
                    self._commit_pending()
                except BaseException as error:  # handed to the thread that records or ends the batch
                    self._timer_error = error

    def _raise_timer_error(self) -> None:
        error, self._timer_error = self._timer_error, None
        if error is not None:
            raise error

    def _commit_pending(self) -> None:
        """One transaction for every pending match. Should it fail, they are committed one by one up to the
        failing match, which raises; it and those after it are dropped (a rerun plays them)."""
        pending, self._pending = self._pending, []
        if not pending:
            return
        try:
            self._write(pending)
            self._committed_at = time.monotonic()
        except Exception:
            if len(pending) == 1:
                raise
            for rows in pending:
                self._write([rows])
        except BaseException:  # Ctrl-C: the transaction is rolled back, and the batch's end commits them
            self._pending[:0] = pending
            raise

    def _write(self, pending: list[_Rows]) -> None:
        with writing(self.output / DATABASE), self._db:
            for rows in pending:
                self._db.execute(
                    f"INSERT OR REPLACE INTO matches ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, 'done', ?, ?, ?, ?, ?, ?, ?)",
                    rows.match,
                )
                self._db.execute("DELETE FROM faults WHERE match_id = ?", (rows.match_id,))
                self._db.executemany("INSERT INTO faults VALUES (?, ?, ?, ?, ?, ?, ?)", rows.faults)
                self._db.execute("DELETE FROM seat_stats WHERE match_id = ?", (rows.match_id,))
                self._db.executemany("INSERT INTO seat_stats VALUES (?, ?, ?, ?, ?, ?, ?)", rows.seat_stats)
                self._db.execute("DELETE FROM fair_play WHERE match_id = ?", (rows.match_id,))
                if rows.fair_play:
                    self._db.execute("INSERT INTO fair_play VALUES (?, ?)", (rows.match_id, rows.fair_play))

    def seat_stats(self) -> dict[str, list[SeatStats | None]]:
        """Per finished match, each seat's stats; None for a seat of a match recorded without them."""
        with self._lock:
            rows = self._db.execute(
                "SELECT s.match_id, s.seat, s.decisions, s.mistakes, s.reply_ms, s.reply_wall_ms FROM seat_stats s"
                " JOIN matches m ON m.match_id = s.match_id WHERE m.status = 'done'"
            ).fetchall()
        found: dict[str, list[SeatStats | None]] = {}
        for match_id, seat, decisions, mistakes, reply_ms, wall_ms in rows:
            seats = found.setdefault(match_id, [])
            seats.extend([None] * (seat + 1 - len(seats)))
            seats[seat] = SeatStats(
                decisions,
                tuple((int(line), str(category)) for line, category in orjson.loads(mistakes)),
                tuple(orjson.loads(reply_ms)),
                tuple(orjson.loads(wall_ms)),
            )
        return found

    def fair_play_notes(self) -> dict[str, str]:
        """Per finished match recorded with them, its fair-play notes (JSON text)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT f.match_id, f.notes FROM fair_play f JOIN matches m ON m.match_id = f.match_id"
                " WHERE m.status = 'done'"
            ).fetchall()
        return dict(rows)

    def record_bye(self, job: MatchJob) -> None:
        """A bye: a one-seat table that is not played; standings score it."""
        with self._lock, writing(self.output / DATABASE), self._db:
            self._db.execute(
                f"INSERT OR REPLACE INTO matches ({_COLUMNS})"
                " VALUES (?, ?, ?, ?, ?, 'done', '[]', '[[0]]', '[0]', 0, '', ?, '[null]')",
                (job.match_id, job.round, json.dumps(list(job.seats)), job.deal_key, job.seed, time.time()),
            )

    def matches(self) -> Iterator[StoredMatch]:
        """Every finished match, in the order they were scheduled (round, then id)."""
        with self._lock:
            fault_rows = self._db.execute(
                "SELECT match_id, seat, bot, reason, detail, stderr_tail, after_match FROM faults ORDER BY rowid"
            ).fetchall()
            rows = self._db.execute(
                "SELECT match_id, round, seats, deal_key, seed, winners, ranking, tokens, duration_s, replay,"
                " finished_at, peak_memory FROM matches WHERE status = 'done' ORDER BY round, match_id"
            ).fetchall()
        faults: dict[str, list[FaultRow]] = {}
        for match_id, seat, bot, reason, detail, tail, after in fault_rows:
            fault = FaultRow(match_id, seat, bot, FaultReason(reason), detail, tail, bool(after))
            faults.setdefault(match_id, []).append(fault)
        for match_id, round_, seats, deal_key, seed, winners, ranking, tokens, duration, replay, finished, peak in rows:
            yield StoredMatch(
                job=MatchJob(match_id, round_, tuple(orjson.loads(seats)), deal_key, seed),
                winners=tuple(orjson.loads(winners)),
                ranking=tuple(tuple(place) for place in orjson.loads(ranking)),
                tokens=tuple(orjson.loads(tokens)),
                faults=tuple(faults.get(match_id, ())),
                duration_s=duration,
                replay=self.output / replay if replay else None,
                finished_at=finished,
                peak_memory=tuple(orjson.loads(peak)),
            )

    def outcomes_between(self, first: str, last: str) -> dict[str, MatchRecord]:
        """The finished matches whose ids lie between first and last (as text), as the standings take them but
        without their faults: a format that reads its results back as it goes, a slice at a time."""
        with self._lock:
            rows = self._db.execute(
                "SELECT match_id, round, seats, winners, ranking FROM matches"
                " WHERE status = 'done' AND match_id BETWEEN ? AND ?",
                (first, last),
            ).fetchall()
        return {
            match_id: MatchRecord(
                match_id,
                round_,
                tuple(orjson.loads(seats)),
                tuple(tuple(place) for place in orjson.loads(ranking)),
                tuple(orjson.loads(winners)),
            )
            for match_id, round_, seats, winners, ranking in rows
        }

    def close(self) -> None:
        with self._lock:
            self._db.close()


@dataclass(frozen=True, slots=True)
class _Rows:
    """A recorded match as the database takes it: its row in matches, its faults and its seats' stats."""

    match_id: str
    match: tuple[object, ...]
    faults: list[tuple[object, ...]]
    seat_stats: list[tuple[object, ...]]
    fair_play: str


def replay_path(output: Path, match_id: str) -> Path:
    """Where a match's replay file is in its output folder (a local worker writes it there itself)."""
    return output / REPLAYS / f"{match_id}.jsonl"


_COLUMNS = (
    "match_id, round, seats, deal_key, seed, status, winners, ranking, tokens, duration_s, replay, finished_at,"
    " peak_memory"
)


def another_configuration(output: Path, stored_text: str, current_text: str) -> StoreError:
    """Why results of this configuration cannot go to `output`: the fields that changed, and what to do."""
    changes = changed_fields(stored_text, current_text)
    what = (
        "; ".join(changes)
        if changes
        else "no field of the file changed: a path in it now leads elsewhere, or the results were kept by another"
        " version of the arena"
    )
    return StoreError(
        f"{output} holds the results of a different configuration ({what}); to keep both, give this file another"
        f" `output:` folder; to discard those results, run with --restart"
    )


def another_seed(output: Path, written: int) -> StoreError:
    """Why a file whose seed is `written` cannot resume `output`, whose seed was drawn (or is another)."""
    return StoreError(
        f"{output} holds the results of the same configuration with another seed than {written} (a drawn one,"
        " when the file had no seed then); use another output folder, or --restart to discard those results"
    )


def recorded_seed(output: Path) -> int | None:
    """The tournament seed kept in `output`, if any (read only, as recorded_config_hash)."""
    rows = _read_only(output, f"SELECT value FROM meta WHERE key = '{TOURNAMENT_SEED}'")
    return int(rows[0][0]) if rows else None


def recorded_durations(output: Path) -> list[float]:
    """How long each match recorded in `output` took to play; empty where nothing is recorded or the results
    cannot be read."""
    return [float(row[0]) for row in _read_only(output, "SELECT duration_s FROM matches WHERE status = 'done'")]


def recorded_config_hash(output: Path) -> str | None:
    """The hash of the configuration whose results `output` holds, if any."""
    return _recorded_meta(output, "config_hash")


def recorded_config_text(output: Path) -> str:
    """The text of the file whose results `output` holds (empty if unknown)."""
    return _recorded_meta(output, "config_text") or ""


def _recorded_meta(output: Path, key: str) -> str | None:
    rows = _read_only(output, f"SELECT value FROM meta WHERE key = '{key}'")
    return str(rows[0][0]) if rows else None


def _read_only(output: Path, query: str) -> list[Any]:
    """The rows of a query on `output`'s results, read without changing anything there (no upgrade, no write);
    none where there is no database or it cannot be read."""
    path = output / DATABASE
    if not path.exists():
        return []
    try:
        connection = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True, timeout=5)
        try:
            return connection.execute(query).fetchall()
        finally:
            connection.close()
    except sqlite3.Error:
        return []


def _connect(path: Path) -> sqlite3.Connection:
    try:
        connection = sqlite3.connect(path, timeout=30, check_same_thread=False)  # see ResultStore._lock
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")  # WAL keeps the database consistent across a crash
        connection.executescript(SCHEMA)
        _upgrade(connection, path)
    except sqlite3.DatabaseError as error:
        if is_disk_full(error, path):
            raise OutputDiskFull(path) from error
        raise StoreError(f"{path}: not a results database this arena can use ({error})") from None
    return connection


def _upgrade(connection: sqlite3.Connection, path: Path) -> None:
    """Bring an older layout up to STORE_VERSION, keeping every result; refuse a newer one."""
    row = connection.execute("SELECT value FROM meta WHERE key = 'store_version'").fetchone()
    try:
        version = 1 if row is None else int(row[0])
    except ValueError:
        connection.close()
        raise StoreError(f"{path}: unknown store_version {row[0]!r} in its meta table") from None
    if version > STORE_VERSION:
        connection.close()
        raise StoreError(
            f"{path}: written by a newer arena (store version {version}; this one reads up to {STORE_VERSION});"
            " upgrade loveletter-arena to read or resume it"
        )
    if version == STORE_VERSION:
        return
    columns = {info[1] for info in connection.execute("PRAGMA table_info(matches)")}
    with connection:
        if "peak_memory" not in columns:
            connection.execute("ALTER TABLE matches ADD COLUMN peak_memory TEXT NOT NULL DEFAULT '[]'")
        connection.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('store_version', ?)", (str(STORE_VERSION),)
        )

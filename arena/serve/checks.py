"""Each new bot version's automatic check: `arena check-bot` in the ladder's sandbox and limits, one version at a
time, in a thread of the server's own; the verdict goes to the ladder's store, and a version that passes becomes
its entrant's active bot."""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.process
import os
import queue
import signal
import sys
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import arena
from arena.checkbot import CheckReport, check_bot, describe
from arena.config import TournamentConfig
from arena.engine import get_ruleset
from arena.players.values import BotCommand
from arena.sandbox import kill_all, users
from arena.serve.ladder import LadderConfig
from arena.serve.store import LadderStore, Version

log = logging.getLogger(__name__)

MATCHES = 3
"""Matches at the ladder's table size: enough to start the bot, answer every kind of decision and end a match,
within seconds for a bot that answers at once."""


def version_command(name: str, version: Version, versions: Path) -> BotCommand:
    """How the ladder starts a version: its command in its own folder."""
    return BotCommand.in_directory(name, version.command, version.protocol, versions / version.digest)


def findings(report: CheckReport, seconds: float) -> dict[str, Any]:
    """What the entrant's page shows of a check (kept as JSON)."""
    diagnosis = report.diagnosis
    return {
        "passed": report.clean,
        "summary": [line for line in describe(report) if "--replays" not in line],  # a command line's hint
        "played": sum(report.played.values()),
        "won": sum(report.won.values()),
        "faults": [
            {
                "match_id": f.match_id,
                "reason": f.fault.reason.value,
                "detail": f.fault.detail,
                "stderr": f.fault.stderr_tail,
            }
            for f in report.faults
        ],
        "peak_memory_bytes": report.peak_memory,
        "cpu_ms": round(sum(diagnosis.cpu_ms), 1) if diagnosis is not None else None,
        "seconds": round(seconds, 1),
    }


def _without_server_paths(found: Any, folder: Path) -> Any:
    """What a check shows its entrant, without where the server keeps things: the version's folder, the ladder's
    data, the arena and its Python, as they appear in tracebacks and messages."""
    places = [
        (f"{folder}/", ""),
        (str(folder.parent), "versions"),
        (str(Path(arena.__file__).resolve().parent), "arena"),
    ]
    if sys.prefix != sys.base_prefix:  # a virtual environment's folder (a system Python's, /usr, is no secret)
        places.append((sys.prefix, "python"))
    if isinstance(found, str):
        for place, shown in places:
            found = found.replace(place, shown)
        return found
    if isinstance(found, dict):
        return {key: _without_server_paths(value, folder) for key, value in found.items()}
    if isinstance(found, list):
        return [_without_server_paths(value, folder) for value in found]
    return found


class Checker:
    """Checks the versions handed to it, oldest first, one at a time, in a process of its own: the server's own
    process keeps the event loop and the ladder, and whatever the ladder's workers do to their bots (ending a
    batch kills every bot its process started) never touches a check's."""

    def __init__(self, store: LadderStore, versions: Path, ladder: LadderConfig) -> None:
        """The ladder's tournament part gives the ruleset, sandbox, limits and move time."""
        self._store = store
        self._versions = versions
        self._ladder = ladder
        self._queue: queue.Queue[Version | None] = queue.Queue()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="arena-serve-checks", daemon=True)
        self._context = multiprocessing.get_context("spawn")  # no inherited sockets, threads or locks
        self._process: multiprocessing.process.BaseProcess | None = None
        self._connection: Connection | None = None
        self.current: Version | None = None
        """The version being checked now."""

    def start(self) -> None:
        for version in self._store.unchecked():  # the server stopped during their check
            self._queue.put(version)
        self._thread.start()

    def submit(self, version: Version) -> None:
        self._queue.put(version)

    def waiting(self) -> int:
        return self._queue.qsize()

    def stop(self, timeout: float = 60.0) -> None:
        """Stop now: the check under way is cut short (its version is checked again at the next start), and the
        waiting ones wait for it too."""
        self._stopping.set()
        self._queue.put(None)
        if self._thread.is_alive():
            self._thread.join(timeout)
        self._end_process()

    def _run(self) -> None:
        while not self._stopping.is_set() and (version := self._queue.get()) is not None:
            self.current = version
            try:
                self.check(version)
            except Exception:  # the arena's own failure: the version stays unchecked, to be checked at the next start
                log.exception("checking %s of entrant %d failed", version.label, version.entrant)
            finally:
                self.current = None

    def check(self, version: Version) -> dict[str, Any] | None:
        """The version's check, its verdict recorded; None when the server stopped first."""
        entrant = self._store.entrant(version.entrant)
        assert entrant is not None
        command = version_command(entrant.name, version, self._versions)
        connection = self._checking_process()
        connection.send(command)
        while not connection.poll(0.2):
            if self._stopping.is_set():
                return None
            if self._process is None or not self._process.is_alive():
                self._end_process()
                raise RuntimeError("the check's process ended without an answer")
        passed, found = connection.recv()
        found = _without_server_paths(found, self._versions / version.digest)
        self._store.checked(version.entrant, version.digest, passed, found)
        return found

    def _checking_process(self) -> Connection:
        if self._process is None or not self._process.is_alive() or self._connection is None:
            self._end_process()
            self._connection, theirs = self._context.Pipe()
            self._process = self._context.Process(
                target=_check_bots, args=(self._ladder.tournament, theirs), name="arena-serve-check", daemon=True
            )
            self._process.start()
            theirs.close()
        return self._connection

    def _end_process(self) -> None:
        if self._process is not None:
            if self._process.is_alive():
                self._process.terminate()  # it kills the bots of the check under way (arena.sandbox's handlers)
            self._process.join(10)
            if self._process.is_alive():
                self._process.kill()
        if self._connection is not None:
            self._connection.close()
        self._process = self._connection = None


def _ended(*_: object) -> None:
    """SIGTERM: the server stops, or cuts a check short; the check's bots go with it."""
    kill_all()
    os._exit(0)


def _check_bots(tournament: TournamentConfig, connection: Connection) -> None:
    """The check process: each bot command received is checked, and (passed, findings) sent back."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's to handle: it ends this process
    signal.signal(signal.SIGTERM, _ended)
    users.use(tournament.bot_uids)  # as root, the ids its bots run as, as a ladder worker's
    ruleset = get_ruleset(tournament.ruleset)
    while True:
        try:
            command = connection.recv()
        except EOFError:
            return
        started = time.monotonic()
        report = check_bot(
            command,
            ruleset,
            matches=MATCHES,
            timing=tournament.timing,
            sandbox=tournament.sandbox,
            limits=tournament.limits,
            sizes=[tournament.players_per_match],  # the table the ladder plays, no other
        )
        connection.send((report.clean, findings(report, time.monotonic() - started)))

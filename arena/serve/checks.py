"""Each new bot version's automatic check: `arena check-bot` in the ladder's sandbox and limits, one version at a
time, in a thread of the server's own; the verdict goes to the ladder's store, and a version that passes becomes
its entrant's active bot."""

from __future__ import annotations

import logging
import queue
import threading
import time
from pathlib import Path
from typing import Any

from arena.checkbot import CheckReport, check_bot, describe
from arena.engine import get_ruleset
from arena.players.values import BotCommand
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
        "summary": describe(report),
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


class Checker:
    """Checks the versions handed to it, oldest first, one at a time."""

    def __init__(self, store: LadderStore, versions: Path, ladder: LadderConfig) -> None:
        """The ladder's tournament part gives the ruleset, sandbox, limits and move time."""
        self._store = store
        self._versions = versions
        self._ladder = ladder
        self._queue: queue.Queue[Version | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="arena-serve-checks", daemon=True)
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
        self._queue.put(None)
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        while (version := self._queue.get()) is not None:
            self.current = version
            try:
                self.check(version)
            except Exception:  # the arena's own failure: the version stays unchecked, to be checked at the next start
                log.exception("checking %s of entrant %d failed", version.label, version.entrant)
            finally:
                self.current = None

    def check(self, version: Version) -> dict[str, Any]:
        entrant = self._store.entrant(version.entrant)
        assert entrant is not None
        tournament = self._ladder.tournament
        started = time.monotonic()
        report = check_bot(
            version_command(entrant.name, version, self._versions),
            get_ruleset(tournament.ruleset),
            matches=MATCHES,
            timing=tournament.timing,
            sandbox=tournament.sandbox,
            limits=tournament.limits,
            sizes=[tournament.players_per_match],  # the table the ladder plays, no other
        )
        found = findings(report, time.monotonic() - started)
        self._store.checked(version.entrant, version.digest, report.clean, found)
        return found

"""The ladder's matches, day and night: tables chosen by matchmaking, played in batches through the runner's
executors (the workers and sandboxes of `arena run`), each recorded in a tournament store as `arena run` records
it. A server killed and started again loses no finished match: the store is read back and the ladder goes on.

Each batch plays with the bots of its moment: the reference bots and every entrant's active version, and the
versions still settling; a version is named ENTRANT.HASH (its hash's first 8 digits) in the matches, so a new
version starts a rating of its own."""

from __future__ import annotations

import dataclasses
import json
import logging
import random
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena.config import BotEntry, TournamentConfig, config_hash
from arena.matches import FaultRow, MatchFailed, MatchJob, match_seed
from arena.runner.executor import Executor, executor_for
from arena.runner.tournament import ERRORS_LOG, for_workers, log_failure
from arena.serve.checks import version_command
from arena.serve.ladder import LadderConfig
from arena.serve.matchmaking import Contender, Rules, next_table
from arena.serve.store import LadderStore
from arena.store import ResultStore
from arena.tournament.ratings import default_model
from arena.tournament.scoring import places

log = logging.getLogger(__name__)

MATCHES = "matches"
"""The data folder's tournament store of the ladder's matches (results.sqlite, replays/, logs/)."""
PAUSED = "paused"
"""In the data folder while the organiser has the ladder paused."""
BATCH_PER_WORKER = 4
"""Matches handed to each worker before the ladder picks tables again (with the ratings they made)."""


def version_name(entrant: str, digest: str) -> str:
    return f"{entrant}.{digest[:8]}"


class Ladder:
    """Plays the ladder's matches in a thread of its own until stopped; pausable by the organiser."""

    def __init__(
        self,
        ladder: LadderConfig,
        store: LadderStore,
        versions: Path,
        executor: Callable[[TournamentConfig, int], Executor] = executor_for,
    ) -> None:
        self._ladder = ladder
        self._store = store
        self._versions = versions
        self._executor = executor
        self.output = ladder.data / MATCHES
        self._running = threading.Event()
        self._paused_flag = ladder.data / PAUSED
        if not self._paused_flag.exists():  # paused by the organiser stays paused across a restart
            self._running.set()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="arena-serve-ladder", daemon=True)
        self._lock = threading.Lock()
        self._model = default_model()
        self._ratings: dict[str, Any] = {}
        self._matches: dict[str, int] = {}
        self._references_met: dict[str, int] = {}
        """Per bot, its matches against a reference bot."""
        self._history: dict[str, list[tuple[str, float, int]]] = {}
        """Per bot, after each of its matches: (match id, its rating then, its place in the match from 1)."""
        self._next = 0
        self.results = self._open()
        self._rng = random.Random(f"ladder/{self.results.tournament_seed}/{self._next}")
        self.last_error: str | None = None
        self.playing: tuple[tuple[str, tuple[str, ...]], ...] = ()
        """The batch in play: (match id, seats) of each match not finished yet."""
        self.workers = max(1, ladder.tournament.concurrency)

    # -- the organiser's controls ---------------------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def pause(self) -> None:
        self._paused_flag.touch()
        self._running.clear()

    def resume(self) -> None:
        self._paused_flag.unlink(missing_ok=True)
        self._running.set()

    @property
    def paused(self) -> bool:
        return not self._running.is_set()

    def stop(self, timeout: float = 30.0) -> None:
        self._stopping.set()
        self._running.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
        self.results.close()

    # -- what the pages read --------------------------------------------------------------------------------------

    def ratings(self) -> dict[str, tuple[float, float, int]]:
        """Per bot that played: (ordinal, sigma, matches)."""
        with self._lock:
            return {
                name: (float(rating.ordinal()), float(rating.sigma), self._matches.get(name, 0))
                for name, rating in self._ratings.items()
            }

    def history(self, name: str) -> list[tuple[str, float, int]]:
        """The bot's matches in order: (match id, its rating after it, its place in it)."""
        with self._lock:
            return list(self._history.get(name, ()))

    def seats_of(self, match_id: str) -> tuple[str, ...] | None:
        """The bots of a recorded ladder match, in seat order; None for an id the ladder never recorded."""
        found = self.results.outcomes_between(match_id, match_id).get(match_id)
        return None if found is None else found.seats

    def recent_faults(self, limit: int = 50) -> list[FaultRow]:
        """The newest faults across the ladder, newest first."""
        found = [fault for match in self.results.matches() for fault in match.faults]
        return found[::-1][:limit]

    # -- the matches ----------------------------------------------------------------------------------------------

    def _open(self) -> ResultStore:
        """The ladder's tournament store, created or resumed; its recorded matches rated again, in order."""
        tournament = self._ladder.tournament
        meta = {"name": tournament.name, "format": "ladder", "ruleset": tournament.ruleset, "bots": "[]"}
        store = ResultStore.create_or_resume(self.output, "ladder/" + config_hash(tournament), meta, False)
        for match in sorted(store.matches(), key=lambda m: m.job.match_id):
            self._rate(match.job.match_id, match.job.seats, match.ranking)
            self._next = max(self._next, int(match.job.match_id.rsplit("-", 1)[1]) + 1)
        return store

    def _name_bots(self, seated: set[str]) -> None:
        """Keep in the store's meta every bot that ever sat at a table, as a tournament names its bots, so that
        `arena report` and `arena diagnose` read the ladder's folder as any other."""
        known = json.loads(self.results.meta().get("bots", "[]"))
        new = sorted(seated.difference(known))
        if new:
            self.results.set_meta("bots", json.dumps(known + new))

    def _rate(self, match_id: str, seats: tuple[str, ...], ranking: tuple[tuple[int, ...], ...]) -> None:
        ranks = places(ranking, len(seats))
        with self._lock:
            teams = [[self._ratings.get(name) or self._model.rating(name=name)] for name in seats]
            rated = self._model.rate(teams, ranks=[float(r) for r in ranks])
            references = {bot.name for bot in self._ladder.tournament.bots}
            for name, (rating,), rank in zip(seats, rated, ranks, strict=True):
                self._ratings[name] = rating
                self._matches[name] = self._matches.get(name, 0) + 1
                if any(other in references for other in seats if other != name):
                    self._references_met[name] = self._references_met.get(name, 0) + 1
                self._history.setdefault(name, []).append((match_id, float(rating.ordinal()), rank + 1))

    def _run(self) -> None:
        while not self._stopping.is_set():
            self._running.wait()
            if self._stopping.is_set():
                break
            try:
                played = self.play_batch()
                self.last_error = None
            except Exception as error:  # the arena's own failure: said on the organiser's page, tried again
                log.exception("the ladder's batch failed")
                self.last_error = f"{type(error).__name__}: {error}"
                played = 0
            if not played:
                self._stopping.wait(5.0)  # nothing to play (no entrant yet): look again soon

    def contenders(self) -> tuple[list[Contender], dict[str, BotEntry]]:
        """Every bot the next batch may seat, with its rating, and how each is started."""
        tournament = self._ladder.tournament
        entries = {entry.name: entry for entry in tournament.bots}
        owners: dict[str, int | None] = dict.fromkeys(entries)
        active = self._store.active()
        for entrant in self._store.entrants():
            digest = active.get(entrant.id)
            if digest is None:
                continue
            version = self._store.version(entrant.id, digest)
            assert version is not None
            name = version_name(entrant.name, digest)
            entries[name] = BotEntry(name, command=version_command(name, version, self._versions))
            owners[name] = entrant.id
        ratings = self.ratings()
        model = self._model
        found = []
        for name, owner in owners.items():
            rating = self._ratings.get(name) or model.rating(name=name)
            matches, references = ratings.get(name, (0, 0, 0))[2], self._references_met.get(name, 0)
            found.append(Contender(name, owner, float(rating.mu), float(rating.sigma), matches, references))
        return found, entries

    def play_batch(self) -> int:
        """Choose tables for every worker, play them, record and rate each as it ends; the matches played."""
        tournament = self._ladder.tournament
        schedule = self._ladder.schedule
        contenders, entries = self.contenders()
        rules = Rules(
            tournament.players_per_match, schedule.new_version_matches, schedule.reference_every, schedule.sigma_target
        )
        workers = self.workers
        jobs: list[MatchJob] = []
        seed = self.results.tournament_seed
        assert seed is not None
        counted = {c.name: c.matches for c in contenders}
        for _ in range(workers * BATCH_PER_WORKER):
            seats = next_table([dataclasses.replace(c, matches=counted[c.name]) for c in contenders], rules, self._rng)
            if seats is None:
                break
            for name in seats:
                counted[name] += 1  # the batch spreads itself: a new version is not seated in every match
            match_id = f"ladder-{self._next:07d}"
            self._next += 1
            jobs.append(MatchJob(match_id, 1, seats, match_id, match_seed(seed, match_id)))
        if not jobs:
            return 0
        seated = {name for job in jobs for name in job.seats}
        self._name_bots(seated)
        config = dataclasses.replace(
            tournament,
            bots=tuple(entry for name, entry in entries.items() if name in seated),
            output=self.output,
        )
        pool = self._executor(for_workers(config), min(workers, len(jobs)))
        played = 0
        self.playing = tuple((job.match_id, job.seats) for job in jobs)
        try:
            for done in pool.run(jobs):
                self.playing = tuple(match for match in self.playing if match[0] != done.job.match_id)
                if isinstance(done, MatchFailed):  # not the bots' fault: not recorded, and not rated
                    log_failure(self.output / ERRORS_LOG, done)
                    continue
                self.results.record(done)  # committed at once: a server killed now keeps this match
                self._rate(done.job.match_id, done.job.seats, done.ranking)
                played += 1
                if self._stopping.is_set():
                    break
        finally:
            self.playing = ()
            pool.close()
        return played

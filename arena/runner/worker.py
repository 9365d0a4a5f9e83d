"""Plays matches one after another in one process, keeping each bot's process from match to match."""

from __future__ import annotations

import contextlib
import gc
import time
import traceback
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from arena.analysis import Watch
from arena.config import BotEntry, TournamentConfig
from arena.engine import Match, get_ruleset
from arena.errors import OutputDiskFull
from arena.matches import FaultRow, MatchDone, MatchFailed, MatchJob, SeatStats
from arena.players import Player
from arena.players.host import BotHost
from arena.players.remote import RemotePlayer
from arena.players.values import BotCommand
from arena.plugins import load_registry
from arena.replay.lines import dump_line, replay_lines
from arena.report import matches_folder, write_match_data
from arena.runner.referee import play_match
from arena.sandbox import SetupError, users
from arena.store.database import replay_path
from arena.store.disk import write_atomically
from arena.store.logs import write_log

GC_YOUNG_THRESHOLD = 20_000
"""Allocations between young-generation collections, against Python's default of 700."""


def settle_heap() -> None:
    """Tune the garbage collector of a process that will play many matches, once its set-up is done.

    A move allocates hundreds of short-lived objects and next to no reference cycles, so the default
    collector ran every few moves and took about 5% of the arena's time per move. What was built at
    start-up is frozen out of every later collection, and young objects are collected less often.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, 20, 20)


KEPT_BOTS = 24
"""Bot processes a worker keeps between matches, the most recently seated: a swiss of 150 programs would otherwise
keep 150 per worker, their memory and their descriptors (past 1023, where select() ends)."""


class MatchWorker:
    """Built-in bots with an in-process player play in-process (trusted, fastest); every other bot is a
    sandboxed subprocess, started on first use and kept until `close`, or until KEPT_BOTS others have been seated
    since."""

    def __init__(self, config: TournamentConfig, cpu: int | None = None, output: Path | None = None) -> None:
        self.config = config
        users.use(config.bot_uids)  # as root, the ids its bots run as
        self.cpu = cpu
        self.output = output
        """The output folder, when this worker shares it with the arena: it writes each replay there itself."""
        self.ruleset = get_ruleset(config.ruleset)
        self.entries = {bot.name: bot for bot in config.bots}
        self.hosts: dict[str, BotHost] = {}
        self.registry = load_registry()
        self.viewer_data = matches_folder(config.output) if config.output.is_dir() else None
        """Where this worker writes each match's viewer data as it finishes it; None on a machine without
        the output folder (a cluster's worker), where the report writes it from the replay instead."""

    def attempt(self, job: MatchJob) -> MatchDone | MatchFailed:
        """Play the match; an error on the arena's side (every bot's fault is a fault, not an error) fails
        this match alone. Its bots' processes are stopped, as the match left them in the middle of it."""
        try:
            return self.play(job)
        except Exception as error:
            for name in job.seats:
                host = self.hosts.get(name)
                if host is not None:
                    host.kill()
                    host.take_log()  # the match is played again, and its log and times taken then
                    host.take_reply_times()
            return MatchFailed(job, traceback.format_exc(), str(error) if isinstance(error, SetupError) else "")

    def play(self, job: MatchJob) -> MatchDone:
        started = time.monotonic()
        match = Match(self.ruleset, list(job.seats), job.seed)
        self._make_room(job.seats)
        players = [self._player(name) for name in job.seats]
        noted = [seat for seat, name in enumerate(job.seats) if not self._arenas_own(name, seat, players)]
        watch = Watch(match, noted=noted)
        outcome = play_match(match, watch.wrap(players), job.match_id)
        faults = tuple(
            FaultRow(job.match_id, f.seat, job.seats[f.seat], f.reason, f.detail, f.stderr_tail, f.after_match)
            for f in outcome.faults
        )
        result = outcome.result
        self._write_viewer_data(match, job.match_id)
        replay = self._replay("".join(dump_line(line) for line in replay_lines(match, job.match_id)), job)
        logs = self._logs(job, keep=replay is None)
        return MatchDone(
            job=job,
            winners=tuple(result.winners),
            ranking=tuple(tuple(place) for place in result.ranking),
            tokens=tuple(result.tokens),
            faults=faults,
            duration_s=time.monotonic() - started,
            replay=replay,
            peak_memory=tuple(host.peak_memory() if (host := self.hosts.get(name)) else None for name in job.seats),
            seat_stats=seat_stats(watch, [self.hosts.get(name) for name in job.seats]),
            logs=logs,
            fair_play=_fair_play(watch),
        )

    def _write_viewer_data(self, match: Match, match_id: str) -> None:
        """The match's file for the report's viewer, written here, as the match ends, rather than all at the
        end of the run. It is derived from the replay: if it cannot be written (a full disk), the report
        writes it from the replay later, and the match itself is not lost for it."""
        if self.viewer_data is None:
            return
        with contextlib.suppress(OSError, OutputDiskFull):
            write_match_data(self.viewer_data, match, match_id)

    def _replay(self, text: str, job: MatchJob) -> str | None:
        """None once the replay is written here; otherwise its text, for the arena to write. On a full disk the
        text goes to the arena too: it stops the run cleanly there (OutputDiskFull), keeping what it recorded."""
        if self.output is None:
            return text
        try:
            write_atomically(replay_path(self.output, job.match_id), text)
        except OutputDiskFull:
            return text
        return None

    def _logs(self, job: MatchJob, *, keep: bool) -> tuple[tuple[str, bytes], ...]:
        """Each subprocess bot's stderr of the match: kept here (`keep`, as the replay was), else handed to the
        arena with the replay. A log that cannot be written here goes to the arena too."""
        logs = [
            (name, log)
            for name in dict.fromkeys(job.seats)
            if (host := self.hosts.get(name)) and (log := host.take_log())
        ]
        if not keep:
            return tuple(logs)
        assert self.output is not None  # the replay was written there
        unwritten = []
        for name, log in logs:
            try:
                write_log(self.output, name, job.match_id, log)
            except OutputDiskFull:
                unwritten.append((name, log))
        return tuple(unwritten)

    def _player(self, name: str) -> Player:
        entry = self.entries[name]
        if entry.builtin is not None and not entry.subprocess:
            spec = self.registry.lookup(entry.builtin).spec
            if spec.player is not None:
                return spec.player(self.config.timing.move_ms, **dict(entry.options))
        host = self.hosts.pop(name, None)  # kept last: the most recently seated
        if host is None:
            host = BotHost(
                self._command(entry), self.config.timing, self.config.sandbox, self.config.limits, cpu=self.cpu
            )
        self.hosts[name] = host
        return RemotePlayer(host)

    def _make_room(self, seats: Sequence[str]) -> None:
        """Shut down the bots seated longest ago, but this match's, so that its bots leave at most KEPT_BOTS."""
        coming = sum(1 for name in set(seats) if name not in self.hosts)
        for name in [name for name in self.hosts if name not in seats]:
            if len(self.hosts) + coming <= KEPT_BOTS:
                break
            self.hosts.pop(name).shutdown()

    def _arenas_own(self, name: str, seat: int, players: Sequence[Player]) -> bool:
        """A built-in of this project played in-process: the arena's own code, whose fair play is not noted (a
        third-party plugin's in-process player, and every bot in its sandbox, are)."""
        entry = self.entries[name]
        in_process = not isinstance(players[seat], RemotePlayer)
        return in_process and entry.builtin is not None and self.registry.lookup(entry.builtin).arenas_own

    def _command(self, entry: BotEntry) -> BotCommand:
        if entry.command is not None:
            return entry.command
        return replace(self.registry.lookup(entry.builtin or "").bot_command(dict(entry.options)), name=entry.name)

    def close(self) -> None:
        """Ask every kept bot to shut down; kill what does not."""
        for host in self.hosts.values():
            host.shutdown()
        self.hosts.clear()


def seat_stats(watch: Watch, hosts: Sequence[BotHost | None]) -> tuple[SeatStats, ...]:
    """Each seat's decisions, provable mistakes and reply times in the match just played (a host per seat, None
    for a bot played in-process)."""
    stats = []
    for diagnosis, host in zip(watch.diagnoses(), hosts, strict=True):
        times = host.take_reply_times() if host is not None else []
        stats.append(
            SeatStats(
                diagnosis.decisions,
                tuple((line, category.value) for line, category in diagnosis.mistakes),
                tuple(round(cpu, 3) for cpu, _ in times),
                tuple(round(wall, 3) for _, wall in times),
            )
        )
    return tuple(stats)


def _fair_play(watch: Watch) -> str:
    notes = watch.fair_play_json()
    return "" if notes is None else notes.decode()

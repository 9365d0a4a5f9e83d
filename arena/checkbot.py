"""`arena check-bot`: play a bot against random players at every table size, as a tournament would."""

from __future__ import annotations

from dataclasses import dataclass, field

from arena.engine import Match, Ruleset
from arena.players import Player, PlayerFault, RandomPlayer
from arena.players.host import START_ATTEMPTS, BotCommand, BotHost, Timing
from arena.players.remote import RemotePlayer
from arena.runner import FaultReport, play_match
from arena.sandbox import Limits, SandboxLevel


@dataclass(frozen=True, slots=True)
class CheckedFault:
    match_id: str
    fault: FaultReport


@dataclass(slots=True)
class CheckReport:
    bot: str
    move_ms: int
    played: dict[int, int] = field(default_factory=dict)
    """Matches played by table size."""
    won: dict[int, int] = field(default_factory=dict)
    faults: list[CheckedFault] = field(default_factory=list)
    slowest_ms: float = 0.0
    slowest_cpu_ms: float = 0.0
    starts: int = 0
    speaks_stdio: bool = False
    """Checked over ZeroMQ, the bot wrote its hello to its standard output."""
    gave_up: bool = False
    """The bot failed to start START_ATTEMPTS times in a row and was not started again."""
    peak_memory: int = 0
    """In bytes: the most memory the bot's processes used (all of them together, in its cgroup or as watched)."""
    memory_mb: int = Limits().memory_mb
    peak_disk: int = 0
    """In bytes: the most the bot had written at once, its workdir and /tmp together."""
    disk_mb: int = Limits().disk_mb
    sandbox: SandboxLevel = SandboxLevel.STRICT

    @property
    def clean(self) -> bool:
        return not self.faults and sum(self.played.values()) > 0


def check_bot(
    bot: BotCommand,
    ruleset: Ruleset,
    *,
    matches: int = 2,
    timing: Timing = Timing(),
    sandbox: SandboxLevel = SandboxLevel.STRICT,
    limits: Limits = Limits(),
    seed: int = 1,
) -> CheckReport:
    """Play `matches` matches at each table size, the bot's seat rotating; every fault is kept."""
    report = CheckReport(bot.name, timing.move_ms, memory_mb=limits.memory_mb, disk_mb=limits.disk_mb, sandbox=sandbox)
    host = BotHost(bot, timing, sandbox, limits)
    try:
        for players in range(ruleset.min_players, ruleset.max_players + 1):
            for number in range(matches):
                seat = number % players
                match_id = f"check-{players}p-{number + 1}"
                names = [f"random-{s}" for s in range(players)]
                names[seat] = bot.name
                table: list[Player] = [RandomPlayer(f"{seed}/{match_id}/{s}") for s in range(players)]
                table[seat] = RemotePlayer(host)
                outcome = play_match(Match(ruleset, names, seed + 1000 * players + number), table, match_id)
                report.played[players] = report.played.get(players, 0) + 1
                report.won[players] = report.won.get(players, 0) + (seat in outcome.result.winners)
                report.faults += [CheckedFault(match_id, f) for f in outcome.faults if f.seat == seat]
        fault = host.shutdown()
        if fault is not None:
            report.faults.append(CheckedFault("shutdown", _report(fault)))
    finally:
        report.slowest_ms = host.stats.slowest_ms
        report.slowest_cpu_ms = host.stats.slowest_cpu_ms
        report.starts = host.stats.starts
        report.speaks_stdio = host.stats.hello_on_stdout
        report.gave_up = host.stats.failed_starts >= START_ATTEMPTS
        host.kill()
        report.peak_memory = host.peak_memory()
        report.peak_disk = host.peak_disk()
    return report


def _report(fault: PlayerFault) -> FaultReport:
    return FaultReport(-1, fault.reason, fault.detail, fault.stderr_tail, after_match=True)


__all__ = ["CheckReport", "CheckedFault", "check_bot"]

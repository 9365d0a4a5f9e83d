"""`arena check-bot`: play a bot against random players at every table size, as a tournament would."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arena.analysis import SeatDiagnosis, Watch
from arena.analysis.diagnose import BotDiagnosis, MistakeStep
from arena.analysis.report import mistake_lines, replies
from arena.engine import Match, Ruleset
from arena.errors import PlayerFault
from arena.matches import FaultRow
from arena.players import Player, RandomPlayer
from arena.players.host import START_ATTEMPTS, BotHost
from arena.players.remote import RemotePlayer
from arena.players.values import BotCommand, Timing
from arena.replay import write_replay
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
    replies: int = 0
    starts: int = 0
    speaks_stdio: bool = False
    """Checked over ZeroMQ, the bot wrote its hello to its standard output."""
    gave_up: bool = False
    """The bot failed to start START_ATTEMPTS times in a row and was not started again: the check stopped there."""
    scheduled: int = 0
    """Matches the check would play in all."""
    peak_memory: int = 0
    """In bytes: the most memory the bot's processes used (all of them together, in its cgroup or as watched)."""
    memory_mb: int = Limits().memory_mb
    peak_disk: int = 0
    """In bytes: the most the bot had written at once, its workdir and /tmp together."""
    disk_mb: int = Limits().disk_mb
    sandbox: SandboxLevel = SandboxLevel.STRICT
    diagnosis: BotDiagnosis | None = None
    """Its decisions, provable mistakes and reply times over the check's matches."""
    replays: Path | None = None
    """Where each match's replay was written, if anywhere."""

    @property
    def clean(self) -> bool:
        return not self.faults and sum(self.played.values()) > 0


def check_bot(
    bot: BotCommand,
    ruleset: Ruleset,
    *,
    matches: int = 3,
    timing: Timing = Timing(),
    sandbox: SandboxLevel = SandboxLevel.STRICT,
    limits: Limits = Limits(),
    seed: int = 1,
    stderr_echo: Callable[[bytes], None] | None = None,
    replays: Path | None = None,
    sizes: Sequence[int] | None = None,
) -> CheckReport:
    """Play `matches` matches at each table size (`sizes`, else every size the ruleset allows), the bot's seat
    rotating; every fault is kept, and every decision
    judged (arena.analysis). A bot that fails to start START_ATTEMPTS times in a row is not started again, and the
    check ends there (gave_up). `replays`: a folder to write each match's replay to, MATCH.jsonl."""
    report = CheckReport(bot.name, timing.move_ms, memory_mb=limits.memory_mb, disk_mb=limits.disk_mb, sandbox=sandbox)
    report.diagnosis = BotDiagnosis(bot.name, timing.move_ms)
    report.replays = replays
    sizes = list(range(ruleset.min_players, ruleset.max_players + 1)) if sizes is None else list(sizes)
    report.scheduled = matches * len(sizes)
    host = BotHost(bot, timing, sandbox, limits, stderr_echo=stderr_echo)
    try:
        for players in sizes:
            for number in range(matches):
                if host.stats.failed_starts >= START_ATTEMPTS:
                    break
                seat = number % players
                match_id = f"check-{players}p-{number + 1}"
                names = [f"random-{s}" for s in range(players)]
                names[seat] = bot.name
                table: list[Player] = [RandomPlayer(f"{seed}/{match_id}/{s}") for s in range(players)]
                table[seat] = RemotePlayer(host)
                match = Match(ruleset, names, seed + 1000 * players + number)
                watch = Watch(match, fair_play=False)  # its mistakes alone: nobody reads the notes here
                outcome = play_match(match, watch.wrap(table), match_id)
                _add(report.diagnosis, match_id, watch.diagnoses()[seat], host.take_reply_times())
                if replays is not None:
                    write_replay(replays / f"{match_id}.jsonl", match, match_id)
                report.played[players] = report.played.get(players, 0) + 1
                report.won[players] = report.won.get(players, 0) + (seat in outcome.result.winners)
                report.faults += [CheckedFault(match_id, f) for f in outcome.faults if f.seat == seat]
                report.diagnosis.faults += [
                    FaultRow(match_id, f.seat, bot.name, f.reason, f.detail, f.stderr_tail, f.after_match)
                    for f in outcome.faults
                    if f.seat == seat
                ]
        fault = host.shutdown()
        if fault is not None:
            report.faults.append(CheckedFault("shutdown", _report(fault)))
    finally:
        report.replies = host.stats.replies
        report.starts = host.stats.starts
        report.speaks_stdio = host.stats.hello_on_stdout
        report.gave_up = host.stats.failed_starts >= START_ATTEMPTS
        host.kill()
        report.peak_memory = host.peak_memory()
        report.peak_disk = host.peak_disk()
    return report


SHOWN_IDS = 6
"""Matches named at most for a repeated fault; the rest are counted."""


def describe(report: CheckReport) -> list[str]:
    """What check-bot prints: the matches, each fault once with how often it came and the bot's stderr the first
    time, what stopped the check early, the reply times (the ones too late among them), peak memory and disk, and the
    verdict."""
    lines = [
        f"  {players} players: {_count(played, 'match', 'matches')}, {report.won[players]} won"
        for players, played in report.played.items()
    ]
    played = sum(report.played.values())
    for group in same_faults(report.faults):
        first = group[0].fault
        lines.append(f"FAULT in {group[0].match_id}: {first.reason.value}: {first.detail}")
        if len(group) > 1:
            lines.append("  " + _repeated(first.reason.value, [checked.match_id for checked in group[1:]], played))
        if first.stderr_tail.strip():
            lines.append("  the bot's stderr, last lines:" if len(group) == 1 else "  the bot's stderr the first time:")
            lines += [f"  | {line}" for line in first.stderr_tail.rstrip().splitlines()]
    if report.speaks_stdio:
        lines.append("this bot speaks over its standard streams: use --protocol stdio")
    if report.gave_up:
        lines.append(
            f"the bot failed to start {START_ATTEMPTS} times in a row, so it is not started again (a tournament"
            f" does the same): the check stopped after {_count(played, 'match', 'matches')} of {report.scheduled}"
        )
    diagnosis = report.diagnosis
    if diagnosis is not None and diagnosis.decisions:
        lines += mistake_lines(diagnosis)
        if report.replays is None and any(diagnosis.mistakes.values()):
            lines.append("  (a mistake's line is one of its match's replay: --replays DIR writes them)")
    if diagnosis is not None and (diagnosis.decisions or diagnosis.cpu_ms):  # moves answered, if only too late
        lines.append(f"  {replies(diagnosis)}")
    starts = "once" if report.starts == 1 else f"{report.starts} times"
    lines.append(("" if report.replies else "no reply from the bot; ") + f"process started {starts}")
    limit = "no limit at sandbox none" if report.sandbox is SandboxLevel.NONE else f"limit {report.memory_mb} MB"
    lines.append(f"peak memory: {_megabytes(report.peak_memory)} MB ({limit})")
    if report.sandbox is not SandboxLevel.NONE:
        lines.append(f"disk: {_megabytes(report.peak_disk)} MB of {report.disk_mb}")
    if report.clean:
        lines.append("PASS: no faults")
        return lines
    kinds = Counter(checked.fault.reason.value for checked in report.faults)
    summary = ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items()))
    lines.append(f"FAIL: {_count(len(report.faults), 'fault', 'faults')} ({summary})")
    return lines


def _repeated(reason: str, others: list[str], played: int) -> str:
    if len(others) + 1 == played > 1:
        return f"the same {reason} in all {played} matches"
    named = ", ".join(others[:SHOWN_IDS]) + (f" and {len(others) - SHOWN_IDS} more" if len(others) > SHOWN_IDS else "")
    return f"the same {reason} in {_count(len(others), 'more match', 'more matches')}: {named}"


def _count(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _megabytes(size: int) -> str:
    """Bytes in MB (MiB, as memory_mb counts them), whole."""
    return f"{size / (1024 * 1024):.0f}"


def same_faults(faults: list[CheckedFault]) -> list[list[CheckedFault]]:
    """The faults grouped by what they say, in the order each first happened: the same reason and the same detail
    but for its numbers (a time, an index), so that a fault repeated in every match is printed once, with its
    count."""
    groups: dict[tuple[str, str], list[CheckedFault]] = {}
    for checked in faults:
        key = (checked.fault.reason.value, _DIGITS.sub("#", checked.fault.detail))
        groups.setdefault(key, []).append(checked)
    return list(groups.values())


_DIGITS = re.compile(r"\d+")


def _add(diagnosis: BotDiagnosis, match_id: str, seat: SeatDiagnosis, times: list[tuple[float, float]]) -> None:
    diagnosis.decisions += seat.decisions
    for line, category in seat.mistakes:
        diagnosis.mistakes[category] += 1
        diagnosis.steps.append(MistakeStep(match_id, line, category))
    diagnosis.cpu_ms += [cpu for cpu, _ in times]
    diagnosis.wall_ms += [wall for _, wall in times]


def _report(fault: PlayerFault) -> FaultReport:
    return FaultReport(-1, fault.reason, fault.detail, fault.stderr_tail, after_match=True)


__all__ = ["CheckReport", "CheckedFault", "check_bot", "describe", "same_faults"]

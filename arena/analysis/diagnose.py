"""Each bot's diagnostics over a tournament: its provable mistakes, its reply times against the limit, its faults
and its fair play, gathered from the store (judged as each match was played) and, for matches recorded before
there were diagnostics, from their replays."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from arena.analysis.fairplay import Criteria, FairPlay, MatchFairPlay, notes_columns, read_columns, tally, tally_columns
from arena.analysis.mistakes import Category
from arena.analysis.watch import diagnose_replay, fair_play_of_replay
from arena.errors import ReplayError
from arena.matches import FaultRow, SeatStats
from arena.players.values import Timing
from arena.replay import read_replay
from arena.replay.lines import ReplayLine
from arena.store import ResultStore


@dataclass(frozen=True, slots=True)
class Spread:
    """Reply times in ms: the median, the 95th percentile (nearest rank) and the most."""

    p50: float
    p95: float
    max: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread | None:
        if not values:
            return None
        ordered = sorted(values)

        def rank(share: float) -> float:
            return ordered[max(0, math.ceil(share * len(ordered)) - 1)]

        return cls(round(rank(0.5), 3), round(rank(0.95), 3), round(ordered[-1], 3))


@dataclass(frozen=True, slots=True)
class MistakeStep:
    match_id: str
    line: int
    """The decision's line in the match's replay (the viewer opens the match at it)."""
    category: Category


@dataclass(slots=True)
class BotDiagnosis:
    bot: str
    move_ms: int
    decisions: int = 0
    mistakes: Counter[Category] = field(default_factory=Counter)
    steps: list[MistakeStep] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    """The CPU time charged to each `act` reply (none for a bot played in-process)."""
    wall_ms: list[float] = field(default_factory=list)
    faults: list[FaultRow] = field(default_factory=list)

    @property
    def reply_ms(self) -> Spread | None:
        return Spread.of(self.cpu_ms)

    @property
    def reply_wall_ms(self) -> Spread | None:
        return Spread.of(self.wall_ms)

    @property
    def closest_to_limit(self) -> float | None:
        """The most CPU time a reply used, as a share of move_ms."""
        return round(max(self.cpu_ms) / self.move_ms, 4) if self.cpu_ms else None

    def per_hundred(self, category: Category) -> float:
        """Mistakes of `category` per 100 decisions."""
        return round(100 * self.mistakes[category] / self.decisions, 2) if self.decisions else 0.0

    def json(self) -> dict[str, Any]:
        spread = self.reply_ms
        wall = self.reply_wall_ms
        return {
            "bot": self.bot,
            "decisions": self.decisions,
            "mistakes": {category.value: self.mistakes[category] for category in Category},
            "mistake_steps": [
                {"match_id": step.match_id, "line": step.line, "category": step.category.value} for step in self.steps
            ],
            "reply_ms": None if spread is None else {"p50": spread.p50, "p95": spread.p95, "max": spread.max},
            "reply_wall_ms": None if wall is None else {"p50": wall.p50, "p95": wall.p95, "max": wall.max},
            "closest_to_limit": self.closest_to_limit,
            "move_ms": self.move_ms,
            "faults": dict(sorted(Counter(fault.reason.value for fault in self.faults).items())),
        }


def diagnose(store: ResultStore, bots: Iterable[str] | None = None) -> list[BotDiagnosis]:
    """Every bot's diagnosis (or those named), in the tournament's order of bots."""
    meta = store.meta()
    names = list(bots) if bots is not None else json.loads(meta.get("bots", "[]"))
    move_ms = _move_ms(meta)
    found = {name: BotDiagnosis(name, move_ms) for name in names}
    stats = store.seat_stats()
    for match in store.matches():
        seats = match.job.seats
        if len(seats) < 2 or not any(name in found for name in seats):
            continue  # a bye, or none of ours
        recorded = stats.get(match.job.match_id, [])
        judged = recorded if len(recorded) == len(seats) and None not in recorded else _from_replay(match.replay)
        for seat, name in enumerate(seats):
            diagnosis = found.get(name)
            if diagnosis is None or seat >= len(judged) or (stats_of := judged[seat]) is None:
                continue
            diagnosis.decisions += stats_of.decisions
            for line, category in stats_of.mistakes:
                step = MistakeStep(match.job.match_id, line, _CATEGORIES[category])
                diagnosis.mistakes[step.category] += 1
                diagnosis.steps.append(step)
            diagnosis.cpu_ms += stats_of.reply_ms
            diagnosis.wall_ms += stats_of.reply_wall_ms
        for fault in match.faults:
            if fault.bot in found:
                found[fault.bot].faults.append(fault)
    return list(found.values())


_CATEGORIES = {category.value: category for category in Category}
"""A category by its name, faster than Category(name) for the thousands a tournament's random bots make."""


def _from_replay(replay: Path | None) -> list[SeatStats | None]:
    """A match recorded without stats, judged again from its replay (no reply times: they were not kept)."""
    if replay is None:
        return []
    try:
        lines = read_replay(replay)
    except ReplayError:
        return []
    return [
        SeatStats(seat.decisions, tuple((line, category.value) for line, category in seat.mistakes))
        for seat in diagnose_replay(lines)
    ]


def fair_play(store: ResultStore, bots: Sequence[str] | None = None, criteria: Criteria = Criteria()) -> FairPlay:
    """Both fair-play tests for every bot (or those named) over the tournament: each match's notes as its worker
    kept them, or noted again from the replay for a match recorded without them."""
    kept = store.fair_play_notes()
    trusted: set[str] | None = None  # read at the first replay noted again (it loads the plugins)
    notes: list[tuple[str, Sequence[str], dict[str, Any]]] = []
    for match in store.matches():
        seats, match_id = match.job.seats, match.job.match_id
        if len(seats) < 2:
            continue  # a bye
        text = kept.get(match_id)
        found = read_columns(text, len(seats)) if text is not None else None
        if found is None:  # recorded before notes were kept, or in another layout
            trusted = _trusted(store.meta()) if trusted is None else trusted
            again = _noted_again(match.replay, trusted)
            found = None if again is None else notes_columns(again)
        if found is not None:
            notes.append((match_id, seats, found))
    return tally_columns(notes, bots, criteria)


def fair_play_from_replays(
    replays: Iterable[Sequence[ReplayLine]], bots: Sequence[str] | None = None, criteria: Criteria = Criteria()
) -> FairPlay:
    """Both tests from replays' lines (as arena.replay reads them)."""
    found = (fair_play_of_replay(lines) for lines in replays)
    return tally((notes for notes in found if notes is not None), bots, criteria)


def _noted_again(replay: Path | None, trusted: Collection[str]) -> MatchFairPlay | None:
    if replay is None:
        return None
    try:
        return fair_play_of_replay(read_replay(replay), trusted)
    except ReplayError:
        return None


def _trusted(meta: dict[str, str]) -> set[str]:
    """The bots the worker did not note: the arena's own built-ins played in-process, as the configuration text
    the run kept names them (none where it cannot be read)."""
    from arena.plugins import load_registry  # imports every installed plugin: only when a replay is read again

    try:
        bots = (yaml.safe_load(meta.get("config_text", "")) or {}).get("bots") or []
        registry = load_registry()
        return {
            str(bot["name"])
            for bot in bots
            if isinstance(bot, dict)
            and not bot.get("subprocess")
            and bot.get("builtin") in registry
            and registry[bot["builtin"]].arenas_own
        }
    except (yaml.YAMLError, AttributeError, TypeError, KeyError):
        return set()


def _move_ms(meta: dict[str, str]) -> int:
    """The tournament's move_ms, as the run noted it, else as its configuration text says, else the default."""
    if "move_ms" in meta:
        return int(meta["move_ms"])
    try:
        limits = (yaml.safe_load(meta.get("config_text", "")) or {}).get("limits") or {}
        return int(limits.get("move_ms", Timing().move_ms))
    except (yaml.YAMLError, AttributeError, TypeError, ValueError):
        return Timing().move_ms

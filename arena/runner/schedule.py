"""What a tournament plays: its tables round by round as the format gives them, and, before any is played, how
many matches, tables and rounds that makes (arena validate)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from arena.config import Format, TournamentConfig
from arena.store import ResultStore
from arena.tournament import Table, gauntlet, round_robin, scores, swiss_round


@dataclass(frozen=True, slots=True)
class Preview:
    matches: int
    """Scheduled in all (Swiss: as many rounds as the first, byes included)."""
    tables: int
    """Distinct groups of bots brought to a table (Swiss: in the first round); a group played again, seats
    rotated or deals duplicated, counts once."""
    rounds: int
    """Swiss rounds; 1 for the other formats."""


def preview(config: TournamentConfig) -> Preview:
    """The tournament's size, from its configuration alone."""
    bots, k = list(config.bot_names), config.players_per_match
    if config.format is Format.SWISS:
        first = swiss_round(bots, k, 1, [], scores(bots, []), duplicate=config.duplicate)
        return Preview(len(first) * config.rounds, _groups(first), config.rounds)
    tables = _whole(config)
    return Preview(len(tables), _groups(tables), 1)


def _groups(tables: Sequence[Table]) -> int:
    return len({frozenset(table.seats) for table in tables})


def _whole(config: TournamentConfig) -> list[Table]:
    """Every table of a round-robin or a gauntlet."""
    bots, k = list(config.bot_names), config.players_per_match
    if config.format is Format.ROUND_ROBIN:
        return round_robin(bots, k, config.repeats, config.duplicate)
    assert config.gauntlet is not None
    candidates = list(config.gauntlet.candidates)
    field = [name for name in bots if name not in candidates]
    return gauntlet(candidates, field, k, config.gauntlet.repeats, config.duplicate)


def scheduled_rounds(config: TournamentConfig, store: ResultStore) -> Iterator[tuple[Sequence[Table], int]]:
    """Each batch of tables the format gives, with the number of matches the whole tournament will hold. Swiss
    rounds are paired from the results stored so far."""
    if config.format is not Format.SWISS:
        tables = _whole(config)
        yield tables, len(tables)
        return
    bots, k = list(config.bot_names), config.players_per_match
    for number in range(1, config.rounds + 1):
        records = [stored.record() for stored in store.matches() if stored.job.round < number]
        tables = swiss_round(bots, k, number, records, scores(bots, records), duplicate=config.duplicate)
        yield tables, len(tables) * config.rounds

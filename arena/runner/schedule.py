"""What a tournament plays: its tables batch by batch as the format gives them (Swiss rounds and a sequential
test's pairs from the results so far), and, before any is played, how many matches, tables and rounds that makes
(arena validate)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from arena.analysis import sprt
from arena.config import Format, TournamentConfig
from arena.store import ResultStore
from arena.tournament import Table, gauntlet, round_robin, scores, swiss_round
from arena.tournament.sprt import pair_key, pair_scores, pair_tables


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
    """The tournament's size, from its configuration alone (a sequential test: at the most)."""
    bots, k = list(config.bot_names), config.players_per_match
    if config.sprt is not None:
        return Preview(2 * config.sprt.max_pairs, 1, 1)
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


class Schedule(Protocol):
    def __iter__(self) -> Iterator[tuple[Sequence[Table], int]]:
        """Each batch of tables to play, with the number of matches the whole tournament will hold (0: unknown)."""
        ...

    def status(self) -> dict[str, str]:
        """What the progress bar shows besides the matches, after the batches played."""
        ...


def schedule_of(config: TournamentConfig, store: ResultStore) -> Schedule:
    return SprtSchedule(config, store) if config.sprt is not None else _Rounds(config, store)


class _Rounds:
    """Round-robin and gauntlet: every table at once; Swiss: a round at a time, paired from the stored results."""

    def __init__(self, config: TournamentConfig, store: ResultStore) -> None:
        self._config = config
        self._store = store

    def __iter__(self) -> Iterator[tuple[Sequence[Table], int]]:
        config = self._config
        if config.format is not Format.SWISS:
            tables = _whole(config)
            yield tables, len(tables)
            return
        bots, k = list(config.bot_names), config.players_per_match
        for number in range(1, config.rounds + 1):
            records = [stored.record() for stored in self._store.matches() if stored.job.round < number]
            tables = swiss_round(bots, k, number, records, scores(bots, records), duplicate=config.duplicate)
            yield tables, len(tables) * config.rounds

    def status(self) -> dict[str, str]:
        return {}


BATCH_PAIRS = 8
"""Pairs handed out at a time per worker: the test looks at the results between batches."""


class SprtSchedule:
    """Pairs in batches until the test decides or max_pairs are played; `state` is the test so far."""

    def __init__(self, config: TournamentConfig, store: ResultStore) -> None:
        assert config.sprt is not None
        self.sprt = config.sprt
        self.settings = sprt.Settings(
            self.sprt.elo0, self.sprt.elo1, self.sprt.alpha, self.sprt.beta, self.sprt.max_pairs
        )
        self.state = sprt.start(self.settings)
        self._store = store
        self._batch = BATCH_PAIRS * config.concurrency

    def __iter__(self) -> Iterator[tuple[Sequence[Table], int]]:
        scheduled = 0
        while True:
            self._count(scheduled)
            if self.state.decision is not sprt.Decision.NONE or scheduled >= self.sprt.max_pairs:
                return
            count = min(self._batch, self.sprt.max_pairs - scheduled)
            candidate, baseline, field = self.sprt.candidate, self.sprt.baseline, self.sprt.field
            yield pair_tables(candidate, baseline, field, scheduled + 1, count), 0
            scheduled += count

    def _count(self, scheduled: int) -> None:
        """Carry the test on over the pairs scheduled so far and not counted yet."""
        first = self.state.pairs + 1
        if scheduled < first:
            return
        records = self._store.outcomes_between(f"{pair_key(first)}-a", f"{pair_key(scheduled)}-b")
        scores = pair_scores(self.sprt.candidate, self.sprt.baseline, first, scheduled, records)
        self.state = sprt.advance(self.settings, self.state, scores)

    def status(self) -> dict[str, str]:
        state = self.state
        shown = {"pairs": str(state.pairs), "LLR": f"{state.llr:.2f} ({state.lower:.2f}, {state.upper:.2f})"}
        estimate = state.elo
        if estimate is not None:
            shown["Elo"] = f"{estimate[0]:+.1f}"
        if state.decision is not sprt.Decision.NONE:
            shown["decision"] = state.decision.value
        return shown

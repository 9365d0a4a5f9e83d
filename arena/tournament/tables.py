"""What the formats hand the runner (`Table`) and what the store hands back (`MatchRecord`).

A format is a pure function from bot names (and, for Swiss, the standings so far) to tables. It
never deals with seeds: the runner derives each match's seed from the tournament seed and the
table's `deal_key`, so the matches of one duplicate group, which share a key, are dealt the same
cards. A table of one seat is a *bye*: the runner does not play it; `bye_record` records it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from arena.engine.match import MatchResult
from arena.engine.records import FaultReason
from arena.errors import FormatError


@dataclass(frozen=True, slots=True)
class Table:
    """One scheduled match: who sits where, in which round, and which deals it shares."""

    match_id: str
    """Stable, unique, human-readable identity: `rr-0007`, `swiss-r2-t3`, `gauntlet-alice-0004`, `...-d2`."""
    seats: tuple[str, ...]
    """Bot names in seat order; seat 0 starts round 1."""
    round: int
    """1-based scheduling round: the Swiss round; 1 for round-robin and gauntlet."""
    deal_key: str
    """Shared by the rotations of one duplicate group (same deals); otherwise equal to `match_id`."""

    def __post_init__(self) -> None:
        if not self.seats:
            raise ValueError(f"table {self.match_id} has no seats")
        if len(set(self.seats)) != len(self.seats):
            raise ValueError(f"table {self.match_id} seats a bot twice: {self.seats}")

    @property
    def is_bye(self) -> bool:
        """A one-seat table is a bye: not played, scored as `scoring.BYE_SCORE`."""
        return len(self.seats) == 1


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """A finished match as standings need it, with seats by bot name; the store produces these."""

    match_id: str
    round: int
    seats: tuple[str, ...]
    ranking: tuple[tuple[int, ...], ...]
    """Places, best first, each a tuple of seats sharing it (disqualified seats share last place)."""
    winners: tuple[int, ...]
    faults: tuple[tuple[int, str], ...] = ()
    """(seat, reason) for each fault, e.g. (2, "timeout")."""

    def __post_init__(self) -> None:
        n = len(self.seats)
        if n == 0:
            raise ValueError(f"match {self.match_id} has no seats")
        if len(set(self.seats)) != n:
            raise ValueError(f"match {self.match_id} seats a bot twice: {self.seats}")
        placed = sorted(seat for place in self.ranking for seat in place)
        if placed != list(range(n)) or any(not place for place in self.ranking):
            raise ValueError(f"match {self.match_id}: ranking {self.ranking} does not place each of {n} seats once")
        if any(not 0 <= seat < n for seat in self.winners):
            raise ValueError(f"match {self.match_id}: winners {self.winners} are not seats of {n}")
        if any(not 0 <= seat < n for seat, _ in self.faults):
            raise ValueError(f"match {self.match_id}: faults {self.faults} name seats not in {n}")

    @property
    def is_bye(self) -> bool:
        return len(self.seats) == 1

    @classmethod
    def from_result(
        cls, table: Table, result: MatchResult, faults: Iterable[tuple[int, FaultReason | str]] = ()
    ) -> MatchRecord:
        """The record of `table` played to `result`; `faults` as (seat, reason), a FaultReason or its value."""
        return cls(
            match_id=table.match_id,
            round=table.round,
            seats=table.seats,
            ranking=tuple(tuple(place) for place in result.ranking),
            winners=tuple(result.winners),
            faults=tuple((int(seat), _reason(reason)) for seat, reason in faults),
        )


def _reason(reason: FaultReason | str) -> str:
    return reason.value if isinstance(reason, FaultReason) else str(reason)


def bye_record(table: Table) -> MatchRecord:
    """The record of a bye: one seat, alone in first place, not a win (standings score it `BYE_SCORE`)."""
    if not table.is_bye:
        raise ValueError(f"table {table.match_id} seats {len(table.seats)} bots: it is not a bye")
    return MatchRecord(table.match_id, table.round, table.seats, ((0,),), ())


def check_field(bots: Sequence[str], per_table: int, *, what: str = "bots") -> tuple[str, ...]:
    """Names unique and non-empty, a table size of at least 2 that the bots can fill."""
    names = tuple(bots)
    if any(not isinstance(name, str) or not name for name in names):
        raise FormatError(f"{what} must be non-empty names: {names!r}")
    if len(set(names)) != len(names):
        twice = sorted({name for name in names if names.count(name) > 1})
        raise FormatError(f"{what} are named more than once: {', '.join(twice)}")
    if per_table < 2:
        raise FormatError(f"a table seats at least 2 players, not {per_table}")
    return names


def rotate(seats: Sequence[str], by: int) -> tuple[str, ...]:
    """Seats shifted left by `by`: the bot in seat `by` moves to seat 0."""
    seats = tuple(seats)
    if not seats:
        return seats
    by %= len(seats)
    return seats[by:] + seats[:by]


def played(match_id: str, seats: tuple[str, ...], round_: int, duplicate: bool) -> list[Table]:
    """One table, or with `duplicate` the k rotations of its seating `-d1..-dk` that share its deals."""
    if not duplicate:
        return [Table(match_id, seats, round_, match_id)]
    return [Table(f"{match_id}-d{d + 1}", rotate(seats, d), round_, match_id) for d in range(len(seats))]


def id_width(count: int) -> int:
    """Zero-padding for sequential ids: at least 4 digits, so ids sort as numbers."""
    return max(4, len(str(count)))

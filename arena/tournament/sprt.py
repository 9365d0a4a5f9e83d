"""The pairs of a sequential test: one deal played twice, the candidate in a seat, then the baseline in it.

At a table of two the pair is the deal with the seats swapped: candidate against baseline, then baseline
against candidate. At a larger table the field (the same bots, in the same seats) fills the other seats, and the
tested seat moves round the table from pair to pair. Both matches of a pair share their deal_key, so they are
dealt the same cards round by round.

A pair scores 0 to 2 for the candidate, in halves. At two: each match scores 1 when only the candidate is among
the winners, 0 when only the baseline is, 1/2 otherwise (both, or neither). At more: 1, plus 1 if the candidate
was among the winners of its match, minus 1 if the baseline was among the winners of its.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from arena.tournament.tables import MatchRecord, Table

PREFIX = "sprt"


def pair_key(number: int) -> str:
    """Pair `number` (from 1): its deal_key; its matches are KEY-a and KEY-b."""
    return f"{PREFIX}-{number:06d}"


def pair_tables(candidate: str, baseline: str, field: Sequence[str], first: int, count: int) -> list[Table]:
    """The tables of pairs first … first+count-1: pair by pair, its candidate's match, then its baseline's."""
    size = len(field) + 2 if field else 2
    tables = []
    for number in range(first, first + count):
        key = pair_key(number)
        seatings: tuple[tuple[str, ...], tuple[str, ...]]
        if not field:
            seatings = ((candidate, baseline), (baseline, candidate))
        else:
            seat = (number - 1) % size
            seatings = (
                (*field[:seat], candidate, *field[seat:]),
                (*field[:seat], baseline, *field[seat:]),
            )
        tables += [Table(f"{key}-{side}", seats, 1, key) for side, seats in zip("ab", seatings, strict=True)]
    return tables


def pair_scores(
    candidate: str, baseline: str, first: int, last: int, records: Mapping[str, MatchRecord]
) -> list[float | None]:
    """The candidate's score in each of pairs first … last (0 to 2), or None where a match of it is not recorded."""
    scores: list[float | None] = []
    for number in range(first, last + 1):
        key = pair_key(number)
        one, other = records.get(f"{key}-a"), records.get(f"{key}-b")
        scores.append(None if one is None or other is None else _score(candidate, baseline, one, other))
    return scores


def _score(candidate: str, baseline: str, first: MatchRecord, second: MatchRecord) -> float:
    def among_winners(record: MatchRecord, name: str) -> bool:
        return name in record.seats and record.seats.index(name) in record.winners

    if len(first.seats) == 2:
        return sum(
            0.5 + (among_winners(record, candidate) - among_winners(record, baseline)) / 2 for record in (first, second)
        )
    return 1.0 + among_winners(first, candidate) - among_winners(second, baseline)

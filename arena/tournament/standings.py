"""Standings, tie-breaks and head-to-head tables from finished matches.

- `score`: the sum of a bot's place points (`scoring`) over its matches, plus `BYE_SCORE` per bye.
  Round-robin and gauntlet candidates play equally many matches, and a Swiss bot one per round
  (a bye counting as one), so sums compare fairly.
- `opponents_score` (a Buchholz-like tie-break): the mean, over the bot's matches, of the mean
  final score of the opponents at that table. A mean rather than chess's sum, so that byes (no
  opponents; left out) and tables of different sizes do not weigh on it.
- `rating`: openskill Plackett-Luce ordinal (mu - 3·sigma) after all matches, in `ratings`' order;
  `rating_mu` and `rating_sigma` beside it.
- `wins` / `win_rate`: matches among whose `winners` the bot is; `win_low`..`win_high` is the 95%
  Wilson interval of the win rate (from the games, not from sigma). Byes are not matches.
- `faults`: counts by reason, from the matches' fault lists.

Rank by score, then opponents' score, then rating (all descending), then name; bots equal on the
first three share a rank (1, 1, 3, ...), listed by name. Values are compared rounded to 9 places,
so floating-point noise never splits a tie.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from arena.tournament.ratings import RatingModel, in_order, rate_all
from arena.tournament.scoring import BYE_SCORE, place_points, places
from arena.tournament.stats import wilson_interval
from arena.tournament.tables import MatchRecord

_DIGITS = 9


@dataclass(frozen=True, slots=True)
class Standing:
    """One bot's line in the table."""

    rank: int
    bot: str
    matches: int
    wins: int
    win_rate: float
    win_low: float
    win_high: float
    score: float
    opponents_score: float
    rating: float
    """openskill ordinal, mu - 3·sigma."""
    rating_mu: float
    rating_sigma: float
    faults: dict[str, int]
    """Fault counts by reason (e.g. {"timeout": 2})."""
    byes: int = 0


@dataclass(frozen=True, slots=True)
class PairRecord:
    """How bot a fared against bot b at the tables they shared."""

    matches: int
    ahead: int
    """Times a finished in a better place than b."""
    behind: int
    level: int
    """Times they shared a place."""


def _checked(bots: Sequence[str], results: Iterable[MatchRecord]) -> list[MatchRecord]:
    known = set(bots)
    if len(known) != len(bots):
        raise ValueError(f"bots are named more than once: {list(bots)}")
    records = in_order(results)
    ids = Counter(record.match_id for record in records)
    twice = sorted(match_id for match_id, count in ids.items() if count > 1)
    if twice:
        raise ValueError(f"matches recorded more than once: {', '.join(twice)}")
    for record in records:
        unknown = [name for name in record.seats if name not in known]
        if unknown:
            raise ValueError(f"match {record.match_id} seats bots not in the tournament: {', '.join(unknown)}")
    return records


def scores(bots: Sequence[str], results: Iterable[MatchRecord]) -> dict[str, float]:
    """Each bot's score: place points summed over its matches, plus `BYE_SCORE` per bye."""
    total = dict.fromkeys(bots, 0.0)
    for record in _checked(bots, results):
        if record.is_bye:
            total[record.seats[0]] += BYE_SCORE
            continue
        for name, points in zip(record.seats, place_points(record.ranking, len(record.seats)), strict=True):
            total[name] += points
    return total


def standings(
    bots: Sequence[str], results: Iterable[MatchRecord], rating_model: RatingModel | None = None
) -> list[Standing]:
    """The table: one `Standing` per bot, best first (see the module docstring for the order)."""
    records = _checked(bots, results)
    score = scores(bots, records)
    matches = dict.fromkeys(bots, 0)
    wins = dict.fromkeys(bots, 0)
    byes = dict.fromkeys(bots, 0)
    opposition: dict[str, list[float]] = {name: [] for name in bots}
    faults: dict[str, Counter[str]] = {name: Counter() for name in bots}
    for record in records:
        for seat, reason in record.faults:
            faults[record.seats[seat]][reason] += 1
        if record.is_bye:
            byes[record.seats[0]] += 1
            continue
        for seat, name in enumerate(record.seats):
            matches[name] += 1
            wins[name] += seat in record.winners
            others = [score[other] for other in record.seats if other != name]
            opposition[name].append(sum(others) / len(others))
    ratings = rate_all(bots, records, rating_model)
    rows = []
    for name in bots:
        played = matches[name]
        low, high = wilson_interval(wins[name], played)
        met = opposition[name]
        rating = ratings[name]
        rows.append(
            Standing(
                rank=0,
                bot=name,
                matches=played,
                wins=wins[name],
                win_rate=wins[name] / played if played else 0.0,
                win_low=low,
                win_high=high,
                score=score[name],
                opponents_score=sum(met) / len(met) if met else 0.0,
                rating=float(rating.ordinal()),
                rating_mu=float(rating.mu),
                rating_sigma=float(rating.sigma),
                faults=dict(sorted(faults[name].items())),
                byes=byes[name],
            )
        )

    def key(row: Standing) -> tuple[float, float, float]:
        return (-round(row.score, _DIGITS), -round(row.opponents_score, _DIGITS), -round(row.rating, _DIGITS))

    rows.sort(key=lambda row: (key(row), row.bot))
    ranked: list[Standing] = []
    for index, row in enumerate(rows):
        rank = ranked[-1].rank if ranked and key(rows[index - 1]) == key(row) else index + 1
        ranked.append(replace(row, rank=rank))
    return ranked


def pair_records(bots: Sequence[str], results: Iterable[MatchRecord]) -> dict[tuple[str, str], PairRecord]:
    """For each ordered pair (a, b) of bots that shared a table: matches together, a ahead, behind, level."""
    tally: dict[tuple[str, str], list[int]] = {}
    for record in _checked(bots, results):
        if record.is_bye:
            continue
        place = places(record.ranking, len(record.seats))
        for i, a in enumerate(record.seats):
            for j, b in enumerate(record.seats):
                if i != j:
                    row = tally.setdefault((a, b), [0, 0, 0, 0])
                    row[0] += 1
                    row[1 if place[i] < place[j] else 2 if place[i] > place[j] else 3] += 1
    order = {name: index for index, name in enumerate(bots)}
    return {
        pair: PairRecord(*row) for pair, row in sorted(tally.items(), key=lambda item: tuple(order[n] for n in item[0]))
    }


def cross_table(bots: Sequence[str], results: Iterable[MatchRecord]) -> dict[str, dict[str, tuple[int, int, int]]]:
    """For 2-player events: (wins, losses, draws) of each row bot against each column bot.

    Only two-seat matches count (byes and larger tables are left out; see `pair_records` for
    those); a win is finishing ahead, a draw sharing the place. Every pair of distinct bots has
    an entry, (0, 0, 0) if they never met.
    """
    table = {a: {b: (0, 0, 0) for b in bots if b != a} for a in bots}
    two_player = [record for record in _checked(bots, results) if len(record.seats) == 2]
    for (a, b), record in pair_records(bots, two_player).items():
        table[a][b] = (record.ahead, record.behind, record.level)
    return table

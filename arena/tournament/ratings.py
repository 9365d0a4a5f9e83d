"""Ratings with openskill's Plackett-Luce model, one-player teams, matches in a fixed order.

Matches are rated one at a time in the order (round, match_id), whatever order the results came
in, so the same results always give the same ratings. A match's ranks are its places (tied seats
share a rank). Byes are not rated. The headline `rating` is openskill's ordinal, mu - 3·sigma: a
conservative estimate that a bot with few matches cannot top the table by luck; mu and sigma are
reported beside it. Confidence intervals on results come from the games (Wilson intervals on win
rates, `stats`), not from sigma.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol

from openskill.models import PlackettLuce

from arena.tournament.scoring import places
from arena.tournament.tables import MatchRecord


class RatingModel(Protocol):
    """What is needed of an openskill model (PlackettLuce, BradleyTerryFull, ...)."""

    def rating(self, mu: float | None = None, sigma: float | None = None, name: str | None = None) -> Any: ...

    def rate(self, teams: list[list[Any]], ranks: list[float] | None = None) -> list[list[Any]]: ...


def default_model() -> RatingModel:
    """Plackett-Luce with openskill's defaults (mu 25, sigma 25/3)."""
    return PlackettLuce()


def in_order(results: Iterable[MatchRecord]) -> list[MatchRecord]:
    """The order ratings are computed in: by round, then match id."""
    return sorted(results, key=lambda record: (record.round, record.match_id))


def _check_known(bots: Sequence[str], record: MatchRecord) -> None:
    unknown = [name for name in record.seats if name not in bots]
    if unknown:
        raise ValueError(f"match {record.match_id} seats bots not in the tournament: {', '.join(unknown)}")


def rate_all(bots: Sequence[str], results: Iterable[MatchRecord], model: RatingModel | None = None) -> dict[str, Any]:
    """Each bot's openskill rating after all `results` (a fresh rating for a bot that never played)."""
    history = _replay(bots, results, model)
    return history[-1][1] if history else {name: (model or default_model()).rating(name=name) for name in bots}


def rating_history(
    bots: Sequence[str], results: Iterable[MatchRecord], rating_model: RatingModel | None = None
) -> dict[str, list[tuple[int, float]]]:
    """For charts: each bot's rating (ordinal) after each round that has results, as (round, rating)."""
    out: dict[str, list[tuple[int, float]]] = {name: [] for name in bots}
    for round_, ratings in _replay(bots, results, rating_model):
        for name in bots:
            out[name].append((round_, float(ratings[name].ordinal())))
    return out


def rating_by_match(
    bots: Sequence[str], results: Iterable[MatchRecord], rating_model: RatingModel | None = None
) -> list[tuple[str, dict[str, float]]]:
    """For charts of one-round formats (round-robin, gauntlet), where a per-round history is one point:
    every bot's rating (ordinal) after each rated match, as (match_id, {bot: rating}), in rating order."""
    return [
        (record.match_id, {name: float(rating.ordinal()) for name, rating in ratings.items()})
        for record, ratings in _rated(bots, results, rating_model)
        if not record.is_bye
    ]


def _rated(
    bots: Sequence[str], results: Iterable[MatchRecord], model: RatingModel | None
) -> Iterator[tuple[MatchRecord, dict[str, Any]]]:
    """Rate the matches in order; each record with every bot's rating just after it."""
    model = model or default_model()
    ratings = {name: model.rating(name=name) for name in bots}
    known = set(bots)
    for record in in_order(results):
        if not known.issuperset(record.seats):
            _check_known(bots, record)
        if not record.is_bye:
            ranks = places(record.ranking, len(record.seats))
            rated = model.rate([[ratings[name]] for name in record.seats], ranks=[float(r) for r in ranks])
            for name, (rating,) in zip(record.seats, rated, strict=True):
                ratings[name] = rating
        yield record, dict(ratings)


def _replay(
    bots: Sequence[str], results: Iterable[MatchRecord], model: RatingModel | None
) -> list[tuple[int, dict[str, Any]]]:
    """Rate the matches in order; the ratings after each round, as (round, {bot: rating})."""
    after: list[tuple[int, dict[str, Any]]] = []
    for record, ratings in _rated(bots, results, model):
        if after and after[-1][0] == record.round:
            after[-1] = (record.round, ratings)
        else:
            after.append((record.round, ratings))
    return after

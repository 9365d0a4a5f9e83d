"""Everything the tournament report shows, gathered from the stored results alone (no rendering here).

Reading only the output folder (results.sqlite and the replays), the report works for any tournament,
finished or interrupted, on any machine, without the bots or the configuration file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.matches import FaultRow
from arena.store import ResultStore
from arena.store.export import bots_of, standing_rows
from arena.tournament import MatchRecord, cross_table, pair_records, rating_by_match, rating_history
from arena.tournament.ratings import default_model
from arena.tournament.stats import wilson_interval

CHART_POINTS = 400
"""At most this many points per line in the rating chart: a batch of thousands of matches stays a small page."""


@dataclass(frozen=True, slots=True)
class MatchEntry:
    match_id: str
    round: int
    seats: tuple[str, ...]
    ranking: tuple[tuple[str, ...], ...]
    winners: tuple[str, ...]
    tokens: tuple[int, ...]
    faults: tuple[FaultRow, ...]
    replay: Path | None
    """The replay file; None for a bye."""

    @property
    def bye(self) -> bool:
        return len(self.seats) == 1


@dataclass(frozen=True, slots=True)
class RatingChart:
    """Each bot's rating (openskill ordinal) at successive points, and what the points are."""

    by: str
    """"round" (after each round) or "match" (after each rated match, for one-round formats)."""
    labels: tuple[str, ...]
    """One per point: "start", then the round number or the match id."""
    positions: tuple[int, ...]
    """Each point's x: 0 for the start, then the round number or the match's position in rating order."""
    series: dict[str, tuple[float, ...]]
    note: str


@dataclass(frozen=True, slots=True)
class HeadToHead:
    """Row bot against column bot: (ahead, behind, level) where they shared a table; None where they never did."""

    bots: tuple[str, ...]
    cells: dict[str, dict[str, tuple[int, int, int] | None]]
    two_player: bool


@dataclass(frozen=True, slots=True)
class TournamentData:
    name: str
    format: str
    ruleset: str
    players_per_match: int
    complete: bool
    """The run reached its end; otherwise the report shows an interrupted (or running) tournament."""
    bots: tuple[str, ...]
    candidates: tuple[str, ...]
    standings: list[dict[str, Any]]
    """The rows of `arena standings --format json`."""
    win_rates: dict[str, tuple[float, float, float]]
    """Each bot's win rate and the ends of its 95% interval, unrounded (the rows hold them to 4 decimals): written
    as percentages from these, they round as `arena standings` rounds them."""
    head_to_head: HeadToHead
    chart: RatingChart
    matches: tuple[MatchEntry, ...]

    @property
    def faults(self) -> list[FaultRow]:
        return [fault for match in self.matches for fault in match.faults]


def gather(store: ResultStore) -> TournamentData:
    meta = store.meta()
    stored = list(store.matches())
    records = [match.record() for match in stored]
    rows = standing_rows(store)
    win_rates = {row["bot"]: win_rate(row["wins"], row["matches"]) for row in rows}
    order = tuple(row["bot"] for row in rows)
    players = int(meta.get("players_per_match", "0") or 0)
    matches = tuple(
        MatchEntry(
            match_id=match.job.match_id,
            round=match.job.round,
            seats=match.job.seats,
            ranking=tuple(tuple(match.job.seats[s] for s in place) for place in match.ranking),
            winners=tuple(match.job.seats[s] for s in match.winners),
            tokens=match.tokens,
            faults=match.faults,
            replay=match.replay,
        )
        for match in stored
    )
    return TournamentData(
        name=meta.get("name", "?"),
        format=meta.get("format", "?"),
        ruleset=meta.get("ruleset", "?"),
        players_per_match=players,
        complete="completed_at" in meta,
        bots=tuple(bots_of(store)),
        candidates=tuple(json.loads(meta.get("candidates", "[]"))),
        standings=rows,
        win_rates=win_rates,
        head_to_head=head_to_head(order, records, players == 2),
        chart=rating_chart(bots_of(store), records, meta.get("format", ""), "completed_at" in meta),
        matches=matches,
    )


def win_rate(wins: int, matches: int) -> tuple[float, float, float]:
    """The win rate and its 95% interval as the standings compute them, unrounded (from the row's whole counts)."""
    low, high = wilson_interval(wins, matches)
    return (wins / matches if matches else 0.0), low, high


def head_to_head(bots: tuple[str, ...], records: list[MatchRecord], two_player: bool) -> HeadToHead:
    cells: dict[str, dict[str, tuple[int, int, int] | None]] = {a: dict.fromkeys(bots) for a in bots}
    if two_player:
        for a, row in cross_table(bots, records).items():
            for b, (won, lost, drawn) in row.items():
                cells[a][b] = (won, lost, drawn) if won + lost + drawn else None
    else:
        for (a, b), pair in pair_records(bots, records).items():
            cells[a][b] = (pair.ahead, pair.behind, pair.level)
    return HeadToHead(bots, cells, two_player)


ONE_ROUND = {
    "round-robin": "A round-robin is played as one round",
    "gauntlet": "A gauntlet is played as one round",
    "sprt": "A sequential test is played as one round",
}
"""Why a format's chart is drawn match by match: it has a single round, whatever its progress."""


def rating_chart(bots: list[str], records: list[MatchRecord], fmt: str, complete: bool = False) -> RatingChart:
    """By round where there are several rounds (Swiss); after each match for a one-round format, or a tournament
    with one round played (`complete`: it ended so, and no later round is to come)."""
    start = float(default_model().rating().ordinal())
    rounds = {record.round for record in records if not record.is_bye}
    if len(rounds) > 1:
        history = rating_history(bots, records)
        points = [round_ for round_, _ in next(iter(history.values()), [])]
        return RatingChart(
            by="round",
            labels=("start", *(f"round {r}" for r in points)),
            positions=(0, *points),
            series={name: (start, *(value for _, value in history[name])) for name in bots},
            note=(
                "Each bot's rating (openskill ordinal, mu - 3 sigma) at the start and after each round;"
                " the last point is the rating in the standings."
            ),
        )
    steps = rating_by_match(bots, records)
    keep = _sample(len(steps), CHART_POINTS)
    why = ONE_ROUND.get(fmt) or ("It was played in one round" if complete else "Only one round has results so far")
    note = (
        f"{why}, so a per-round chart would hold one point: this one shows each bot's rating (openskill"
        " ordinal, mu - 3 sigma) after every match instead, in the order the ratings are computed (the"
        " schedule's order: round, then match id). The last point is the rating in the standings."
    )
    if len(keep) < len(steps):
        note += f" {len(keep)} of the {len(steps)} matches are drawn, evenly spaced."
    return RatingChart(
        by="match",
        labels=("start", *(steps[i][0] for i in keep)),
        positions=(0, *(i + 1 for i in keep)),
        series={name: (start, *(steps[i][1][name] for i in keep)) for name in bots},
        note=note,
    )


def _sample(count: int, most: int) -> list[int]:
    """Up to `most` indices of range(count), evenly spread, always with the last."""
    if count <= most:
        return list(range(count))
    return sorted({round(i * (count - 1) / (most - 1)) for i in range(most)})

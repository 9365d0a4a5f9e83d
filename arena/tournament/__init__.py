"""Tournament formats as pure functions, and scoring, tie-breaks, ratings and standings.

Formats (`round_robin`, `swiss_round`, `gauntlet`) turn bot names into `Table`s; they never run a
match or touch a seed. `standings` and friends turn `MatchRecord`s back into a table. See
docs/tournaments.md for what each format guarantees.
"""

from arena.tournament.designs import ALL_SUBSETS_LIMIT
from arena.tournament.gauntlet import gauntlet
from arena.tournament.ratings import RatingModel, rating_by_match, rating_history
from arena.tournament.round_robin import round_robin
from arena.tournament.scoring import BYE_SCORE, place_points, places
from arena.tournament.standings import PairRecord, Standing, cross_table, pair_records, scores, standings
from arena.tournament.stats import wilson_interval
from arena.tournament.swiss import swiss_round, table_sizes
from arena.tournament.tables import MatchRecord, Table, bye_record

__all__ = [
    "ALL_SUBSETS_LIMIT",
    "BYE_SCORE",
    "MatchRecord",
    "PairRecord",
    "RatingModel",
    "Standing",
    "Table",
    "bye_record",
    "cross_table",
    "gauntlet",
    "pair_records",
    "place_points",
    "places",
    "rating_by_match",
    "rating_history",
    "round_robin",
    "scores",
    "standings",
    "swiss_round",
    "table_sizes",
    "wilson_interval",
]

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.engine.match import MatchResult
from arena.engine.records import FaultReason
from arena.tournament import (
    MatchRecord,
    Table,
    bye_record,
    cross_table,
    pair_records,
    rating_history,
    round_robin,
    standings,
    wilson_interval,
)


def rec(match_id: str, seats: tuple[str, ...], ranking, winners=None, round_=1, faults=()) -> MatchRecord:
    ranking = tuple(tuple(place) for place in ranking)
    return MatchRecord(match_id, round_, seats, ranking, ranking[0] if winners is None else winners, faults)


def test_the_winner_of_every_match_tops_the_table_and_its_rating_rises() -> None:
    bots = ["a", "b", "c"]
    results = [rec("m1", ("a", "b", "c"), [[0], [1], [2]]), rec("m2", ("c", "a", "b"), [[1], [2], [0]])]
    table = standings(bots, results)
    assert [row.bot for row in table] == ["a", "b", "c"]
    assert [row.rank for row in table] == [1, 2, 3]
    top = table[0]
    assert top.matches == 2 and top.wins == 2 and top.win_rate == 1.0
    assert top.score == pytest.approx(2.0)
    assert top.rating_mu > 25 > table[-1].rating_mu
    assert top.rating == pytest.approx(top.rating_mu - 3 * top.rating_sigma)
    assert (top.win_low, top.win_high) == wilson_interval(2, 2)


def test_opponents_score_breaks_a_tie_on_score() -> None:
    bots = ["a", "b", "c", "d"]
    results = [
        rec("m1", ("a", "c"), [[0], [1]]),  # a beat c, who then beats d: a's opponent is stronger
        rec("m2", ("b", "d"), [[0], [1]]),
        rec("m3", ("c", "d"), [[0], [1]]),
    ]
    table = standings(bots, results)
    a, b = (next(row for row in table if row.bot == name) for name in "ab")
    assert a.score == b.score == 1.0
    assert a.opponents_score == 1.0 and b.opponents_score == 0.0
    assert a.rank < b.rank


def test_bots_equal_on_everything_share_a_rank_and_are_listed_by_name() -> None:
    bots = ["zed", "amy", "bob"]
    results = [rec("m1", ("zed", "amy"), [[0, 1]], winners=())]
    table = standings(bots, results)
    assert [(row.rank, row.bot) for row in table] == [(1, "amy"), (1, "zed"), (3, "bob")]


def test_rating_breaks_a_tie_on_score_and_opponents_score() -> None:
    bots = ["a", "b", "c", "d"]
    # a and b both win once and lose once against c and d, but a beat the bot who went on to win.
    results = [
        rec("m1", ("a", "c"), [[0], [1]], round_=1),
        rec("m2", ("b", "d"), [[0], [1]], round_=1),
        rec("m3", ("a", "d"), [[1], [0]], round_=2),
        rec("m4", ("b", "c"), [[1], [0]], round_=2),
    ]
    table = standings(bots, results)
    assert len({row.score for row in table}) == 1
    assert len({row.rank for row in table}) > 1
    ratings = [row.rating for row in table]
    assert ratings == sorted(ratings, reverse=True)


def test_ratings_do_not_depend_on_the_order_results_arrive_in() -> None:
    rng = random.Random(4)
    bots = [f"b{i}" for i in range(6)]
    results = []
    for table in round_robin(bots, 3, repeats=2):
        order = list(range(3))
        rng.shuffle(order)
        results.append(rec(table.match_id, table.seats, [[s] for s in order]))
    shuffled = list(results)
    rng.shuffle(shuffled)
    assert standings(bots, results) == standings(bots, shuffled)


def test_byes_score_but_are_not_matches_nor_rated() -> None:
    bots = ["a", "b", "c"]
    bye = bye_record(Table("swiss-r1-bye", ("c",), 1, "swiss-r1-bye"))
    table = {row.bot: row for row in standings(bots, [rec("swiss-r1-t1", ("a", "b"), [[0], [1]]), bye])}
    assert table["c"].score == 1.0 and table["c"].matches == 0 and table["c"].byes == 1
    assert table["c"].rating_mu == 25.0
    assert table["c"].opponents_score == 0.0


def test_faults_are_counted_by_reason() -> None:
    results = [
        rec("m1", ("a", "b"), [[0], [1]], faults=((1, "timeout"),)),
        rec("m2", ("b", "a"), [[1], [0]], faults=((0, "timeout"),)),
        rec("m3", ("a", "b"), [[1], [0]], faults=((0, "crash"),)),
    ]
    table = {row.bot: row for row in standings(["a", "b"], results)}
    assert table["b"].faults == {"timeout": 2}
    assert table["a"].faults == {"crash": 1}


def test_unknown_bots_and_repeated_matches_are_refused() -> None:
    with pytest.raises(ValueError, match="not in the tournament"):
        standings(["a"], [rec("m1", ("a", "x"), [[0], [1]])])
    with pytest.raises(ValueError, match="more than once"):
        standings(["a", "b"], [rec("m1", ("a", "b"), [[0], [1]])] * 2)


def test_rating_history_has_one_point_per_round_for_every_bot() -> None:
    results = [rec("r1", ("a", "b"), [[0], [1]], round_=1), rec("r2", ("b", "c"), [[0], [1]], round_=2)]
    history = rating_history(["a", "b", "c"], results)
    assert [r for r, _ in history["c"]] == [1, 2]
    assert history["a"][0][1] > history["b"][0][1]
    assert history["c"][0][1] == pytest.approx(0.0)  # untouched: 25 - 3 * 25/3
    assert history["c"][1][1] < 0.0
    assert history["a"][1][1] == history["a"][0][1]


def test_cross_table_counts_wins_losses_and_draws_of_row_against_column() -> None:
    results = [
        rec("m1", ("a", "b"), [[0], [1]]),
        rec("m2", ("b", "a"), [[0], [1]]),
        rec("m3", ("a", "b"), [[1], [0]]),
        rec("m4", ("a", "b"), [[0, 1]], winners=()),
        rec("m5", ("a", "b", "c"), [[0], [1], [2]]),  # not a 2-player match: left out
    ]
    table = cross_table(["a", "b", "c"], results)
    assert table["a"]["b"] == (1, 2, 1)
    assert table["b"]["a"] == (2, 1, 1)
    assert table["a"]["c"] == (0, 0, 0)
    assert "a" not in table["a"]


def test_pair_records_count_finishing_ahead_behind_and_level() -> None:
    results = [rec("m1", ("a", "b", "c"), [[2], [0, 1]]), rec("m2", ("a", "b", "c"), [[0], [1], [2]])]
    pairs = pair_records(["a", "b", "c"], results)
    assert pairs[("a", "b")].matches == 2
    assert (pairs[("a", "b")].ahead, pairs[("a", "b")].behind, pairs[("a", "b")].level) == (1, 0, 1)
    assert (pairs[("c", "a")].ahead, pairs[("c", "a")].behind) == (1, 1)


def test_a_record_is_made_from_a_table_and_the_engines_result() -> None:
    table = Table("rr-0001", ("a", "b", "c"), 1, "rr-0001")
    result = MatchResult(winners=(1,), tokens=(2, 5, 0), ranking=((1,), (0,), (2,)), disqualified=(2,))
    record = MatchRecord.from_result(table, result, faults=[(2, FaultReason.TIMEOUT)])
    assert record == MatchRecord("rr-0001", 1, ("a", "b", "c"), ((1,), (0,), (2,)), (1,), ((2, "timeout"),))


def test_malformed_records_are_refused() -> None:
    with pytest.raises(ValueError):
        MatchRecord("m", 1, ("a", "b"), ((0,),), (0,))
    with pytest.raises(ValueError):
        MatchRecord("m", 1, ("a", "b"), ((0,), (1,)), (2,))


def test_wilson_interval_is_sound_at_the_ends_and_narrows_with_trials() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert wilson_interval(0, 10)[0] == 0.0
    assert wilson_interval(10, 10)[1] == 1.0
    low, high = wilson_interval(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-3) and high == pytest.approx(0.5962, abs=1e-3)
    assert wilson_interval(500, 1000)[1] - wilson_interval(500, 1000)[0] < high - low


@settings(max_examples=30, deadline=None)
@given(st.lists(st.permutations(range(4)), min_size=1, max_size=12))
def test_ranks_follow_the_documented_order(orders: list[list[int]]) -> None:
    bots = ["a", "b", "c", "d"]
    results = [rec(f"m{i:02d}", tuple(bots), [[s] for s in order]) for i, order in enumerate(orders)]
    table = standings(bots, results)
    keys = [(-round(row.score, 9), -round(row.opponents_score, 9), -round(row.rating, 9), row.bot) for row in table]
    assert keys == sorted(keys)
    assert table[0].rank == 1
    assert sum(row.score for row in table) == pytest.approx(2.0 * len(orders))

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations, permutations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.errors import FormatError
from arena.tournament import MatchRecord, Table, bye_record, scores, swiss_round, table_sizes

from .helpers import names


def _play(tables: list[Table], rng: random.Random) -> list[MatchRecord]:
    """Random results: a random finishing order, no ties."""
    records = []
    for table in tables:
        if table.is_bye:
            records.append(bye_record(table))
            continue
        order = list(range(len(table.seats)))
        rng.shuffle(order)
        records.append(MatchRecord(table.match_id, table.round, table.seats, tuple((s,) for s in order), (order[0],)))
    return records


def _run(bots: list[str], k: int, rounds: int, seed: int) -> list[list[Table]]:
    rng = random.Random(seed)
    history: list[Table] = []
    records: list[MatchRecord] = []
    out = []
    for r in range(1, rounds + 1):
        tables = swiss_round(bots, k, r, history, scores(bots, records))
        out.append(tables)
        history += tables
        records += _play(tables, rng)
    return out


def _meetings(rounds: list[list[Table]]) -> Counter[frozenset[str]]:
    return Counter(frozenset(p) for tables in rounds for t in tables for p in combinations(t.seats, 2))


def test_first_round_is_by_seed_order() -> None:
    bots = names(8)
    tables = swiss_round(bots, 2, 1)
    assert [set(t.seats) for t in tables] == [set(bots[i : i + 2]) for i in range(0, 8, 2)]
    assert [t.match_id for t in tables] == [f"swiss-r1-t{i}" for i in range(1, 5)]
    assert all(t.round == 1 and t.deal_key == t.match_id for t in tables)


def test_later_rounds_group_bots_by_score() -> None:
    bots = names(8)
    first = swiss_round(bots, 2, 1)
    # bot01, bot03, bot05, bot07 won; they meet among themselves, best seed first.
    winners = {"bot01", "bot03", "bot05", "bot07"}
    score = {name: 1.0 if name in winners else 0.0 for name in bots}
    second = swiss_round(bots, 2, 2, first, score)
    assert [set(t.seats) for t in second] == [
        {"bot01", "bot03"},
        {"bot05", "bot07"},
        {"bot00", "bot02"},
        {"bot04", "bot06"},
    ]


def test_rating_orders_bots_within_a_score_group() -> None:
    bots = names(4)
    tables = swiss_round(bots, 2, 1, rating={"bot03": 30.0, "bot02": 20.0, "bot01": 10.0})
    assert [set(t.seats) for t in tables] == [{"bot03", "bot02"}, {"bot01", "bot00"}]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_eight_bots_two_a_table_three_rounds_never_meet_twice(seed: int) -> None:
    rounds = _run(names(8), 2, 3, seed)
    assert max(_meetings(rounds).values()) == 1


def _partitions(items: list[str], sizes: list[int]):
    """Every way to seat `items` at tables of `sizes` (as sets)."""
    if not sizes:
        yield []
        return
    first, rest = items[0], items[1:]
    for others in combinations(rest, sizes[0] - 1):
        left = [x for x in rest if x not in others]
        for plan in _partitions(left, sizes[1:]):
            yield [(first, *others), *plan]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), shape=st.sampled_from([(9, 3, 4), (8, 2, 6), (10, 4, 3), (7, 3, 3)]))
def test_no_rematch_whenever_one_can_be_avoided(seed: int, shape: tuple[int, int, int]) -> None:
    n, k, rounds = shape
    bots = names(n)
    rng = random.Random(seed)
    history: list[Table] = []
    records: list[MatchRecord] = []
    for r in range(1, rounds + 1):
        met = _meetings([history])
        tables = swiss_round(bots, k, r, history, scores(bots, records))
        rematches = sum(met[frozenset(p)] for t in tables for p in combinations(t.seats, 2))
        if rematches:
            assert not any(
                all(met[frozenset(p)] == 0 for t in plan for p in combinations(t, 2))
                for sizes in set(permutations(table_sizes(n, k)))
                for plan in _partitions(bots, list(sizes))
            ), f"round {r} has a rematch that could be avoided"
        history += tables
        records += _play(tables, rng)


def test_rematches_when_unavoidable_are_spread() -> None:
    rounds = _run(names(4), 2, 5, seed=3)  # only 3 rounds are rematch-free
    counts = _meetings(rounds)
    assert max(counts.values()) - min(counts.values()) <= 1


@pytest.mark.parametrize(
    ("n", "k", "sizes"),
    [(12, 4, [4, 4, 4]), (10, 4, [4, 4, 2]), (9, 4, [4, 3, 2]), (7, 3, [3, 2, 2]), (5, 6, [5]), (6, 2, [2, 2, 2])],
)
def test_remainder_tables_sit_at_the_bottom(n: int, k: int, sizes: list[int]) -> None:
    assert table_sizes(n, k) == sizes
    tables = swiss_round(names(n), k, 1)
    assert [len(t.seats) for t in tables] == sizes
    assert tables[-1].seats[0] in names(n)[n - sizes[-1] :] or len(sizes) == 1


def test_an_odd_two_player_field_gives_the_lowest_bot_without_a_bye_a_bye() -> None:
    bots = names(5)
    first = swiss_round(bots, 2, 1)
    assert first[-1].is_bye and first[-1].seats == ("bot04",) and first[-1].match_id == "swiss-r1-bye"
    score = {"bot00": 1.0, "bot02": 1.0, "bot04": 1.0}
    second = swiss_round(bots, 2, 2, first, score)
    # bot04 is now among the leaders and has had a bye; the lowest without one is bot03.
    assert second[-1].is_bye and second[-1].seats == ("bot03",)
    assert sum(t.is_bye for t in second) == 1


def test_a_bye_scores_a_win_but_is_not_a_match() -> None:
    table = swiss_round(names(3), 2, 1)[-1]
    record = bye_record(table)
    assert record.seats == ("bot02",)
    assert scores(names(3), [record])["bot02"] == 1.0


def test_seat_zero_goes_to_who_has_had_it_least() -> None:
    bots = names(8)
    rounds = _run(bots, 2, 4, seed=11)
    firsts = Counter(t.seats[0] for tables in rounds for t in tables)
    assert all(abs(firsts[name] - 2) <= 1 for name in bots)


def test_same_inputs_same_tables() -> None:
    assert _run(names(10), 3, 4, seed=5) == _run(names(10), 3, 4, seed=5)


def test_duplicate_swiss_tables_rotate_and_share_deals() -> None:
    tables = swiss_round(names(4), 2, 1, duplicate=True)
    assert [t.match_id for t in tables] == ["swiss-r1-t1-d1", "swiss-r1-t1-d2", "swiss-r1-t2-d1", "swiss-r1-t2-d2"]
    assert tables[0].deal_key == tables[1].deal_key == "swiss-r1-t1"
    assert tables[1].seats == tables[0].seats[::-1]


@pytest.mark.parametrize(("bots", "k", "round_number"), [(["a"], 2, 1), (["a", "b"], 1, 1), (["a", "b"], 2, 0)])
def test_impossible_rounds_are_format_errors(bots: list[str], k: int, round_number: int) -> None:
    with pytest.raises(FormatError):
        swiss_round(bots, k, round_number)


def test_match_ids_are_unique_across_a_whole_event() -> None:
    rounds = _run(names(9), 2, 5, seed=2)
    ids = [t.match_id for tables in rounds for t in tables]
    assert len(set(ids)) == len(ids)
    assert sum(t.is_bye for tables in rounds for t in tables) == 5
    assert len({t.seats[0] for tables in rounds for t in tables if t.is_bye}) == 5  # no second bye yet


@pytest.mark.parametrize(("n", "k", "rounds"), [(13, 4, 3), (7, 2, 6)])
def test_awkward_fields_play_every_bot_each_round_without_a_rematch(n: int, k: int, rounds: int) -> None:
    """13 bots at tables of 4 (tables of 4, 4, 3, 2) and 7 at tables of 2 (a bye each round)."""
    bots = names(n)
    played = _run(bots, k, rounds, seed=5)
    sizes = [1] + [2] * (n // 2) if k == 2 else table_sizes(n, k)
    for tables in played:
        assert sorted(name for t in tables for name in t.seats) == bots
        assert sorted(len(t.seats) for t in tables) == sorted(sizes)
    assert max(_meetings(played).values()) == 1
    if k == 2:
        byes = [name for tables in played for t in tables if t.is_bye for name in t.seats]
        assert len(byes) == rounds == len(set(byes))  # one bye a round, never twice to the same bot

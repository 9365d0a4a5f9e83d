from __future__ import annotations

import math
from itertools import combinations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from arena.errors import FormatError
from arena.tournament import round_robin

from .helpers import match_counts, names, pair_counts, seat_counts, seat_spread


def test_small_fields_play_every_subset_once_per_repeat() -> None:
    bots = names(6)
    tables = round_robin(bots, 3, repeats=2)
    assert len(tables) == 2 * math.comb(6, 3)
    once = sorted(tuple(sorted(t.seats)) for t in tables[:20])
    assert once == sorted(tuple(sorted(c)) for c in combinations(bots, 3))
    assert set(pair_counts(tables, bots).values()) == {2 * math.comb(4, 1)}
    assert set(match_counts(tables).values()) == {2 * math.comb(5, 2)}


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 9), k=st.integers(2, 5), repeats=st.integers(1, 4))
def test_every_pair_meets_equally_often_and_seats_stay_within_one(n: int, k: int, repeats: int) -> None:
    assume(k <= n)
    bots = names(n)
    tables = round_robin(bots, k, repeats)
    assert len(set(pair_counts(tables, bots).values())) == 1
    assert len(set(match_counts(tables).values())) == 1
    assert all(seat_spread(tables, bot, k) <= 1 for bot in bots)


@pytest.mark.parametrize(("n", "k"), [(5, 3), (6, 4), (7, 3), (8, 3)])
def test_repeats_a_multiple_of_the_table_size_give_each_bot_each_seat_equally(n: int, k: int) -> None:
    tables = round_robin(names(n), k, repeats=k)
    counts = seat_counts(tables)
    assert all(len({row[seat] for seat in range(k)}) == 1 for row in counts.values())


def test_repeat_r_rotates_each_tables_seating_by_r() -> None:
    tables = round_robin(names(5), 3, repeats=3)
    per_repeat = len(tables) // 3
    for i in range(per_repeat):
        base = tables[i].seats
        assert {tables[i + r * per_repeat].seats for r in range(3)} == {base[r:] + base[:r] for r in range(3)}


@pytest.mark.parametrize(("n", "k"), [(9, 3), (12, 4), (13, 4), (10, 5), (14, 6)])
def test_large_field_schedule_is_balanced(n: int, k: int) -> None:
    bots = names(n)
    tables = round_robin(bots, k, max_tables=0)  # force the balanced schedule
    assert len(tables) < math.comb(n, k)
    pairs = pair_counts(tables, bots).values()
    assert max(pairs) - min(pairs) <= 1
    assert min(pairs) >= 1
    assert len(set(match_counts(tables).values())) == 1
    assert all(seat_spread(tables, bot, k) == 0 for bot in bots)


def test_beyond_the_subset_limit_the_balanced_schedule_is_used() -> None:
    bots = names(24)
    tables = round_robin(bots, 3)
    assert len(tables) <= 2000 < math.comb(24, 3)
    pairs = pair_counts(tables, bots).values()
    assert max(pairs) - min(pairs) <= 1


def test_duplicate_groups_share_a_deal_key_and_rotate_seats() -> None:
    tables = round_robin(names(5), 3, duplicate=True)
    assert len(tables) == 3 * math.comb(5, 3)
    groups: dict[str, list] = {}
    for table in tables:
        groups.setdefault(table.deal_key, []).append(table)
    assert len(groups) == math.comb(5, 3)
    for key, group in groups.items():
        assert [t.match_id for t in group] == [f"{key}-d1", f"{key}-d2", f"{key}-d3"]
        base = group[0].seats
        assert [t.seats for t in group] == [base, base[1:] + base[:1], base[2:] + base[:2]]
        for seat in range(3):
            assert len({t.seats[seat] for t in group}) == 3


def test_ids_are_unique_stable_and_deal_keys_default_to_ids() -> None:
    tables = round_robin(names(7), 3, repeats=2)
    ids = [t.match_id for t in tables]
    assert len(set(ids)) == len(ids)
    assert ids[0] == "rr-0001" and ids[-1] == f"rr-{len(ids):04d}"
    assert all(t.deal_key == t.match_id and t.round == 1 for t in tables)
    assert round_robin(names(7), 3, repeats=2) == tables


@pytest.mark.parametrize(
    ("bots", "k", "repeats"), [(["a", "b"], 3, 1), (["a", "a", "b"], 2, 1), (["a", "b"], 1, 1), (["a", "b"], 2, 0)]
)
def test_impossible_parameters_are_format_errors(bots: list[str], k: int, repeats: int) -> None:
    with pytest.raises(FormatError):
        round_robin(bots, k, repeats)


@settings(max_examples=10, deadline=None)
@given(n=st.integers(6, 16), k=st.integers(3, 5), repeats=st.integers(1, 3))
def test_balanced_schedule_with_repeats_stays_within_one_over_the_whole_schedule(n: int, k: int, repeats: int) -> None:
    assume(k < n)
    bots = names(n)
    tables = round_robin(bots, k, repeats, max_tables=0)
    pairs = pair_counts(tables, bots).values()
    assert max(pairs) - min(pairs) <= 1
    assert len(set(match_counts(tables).values())) == 1
    assert all(seat_spread(tables, bot, k) == 0 for bot in bots)
    ids = [t.match_id for t in tables]
    assert len(set(ids)) == len(ids)

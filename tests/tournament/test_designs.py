from __future__ import annotations

import math
from collections import Counter
from itertools import combinations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from arena.tournament.designs import balance_seats, cyclic_blocks, min_base_blocks, orient, seated_blocks


def _pairs(blocks: list[tuple[int, ...]], n: int) -> list[int]:
    counts = Counter(frozenset(p) for block in blocks for p in combinations(block, 2))
    return [counts[frozenset(p)] for p in combinations(range(n), 2)]


def _seat_rows(blocks: list[tuple[int, ...]], n: int, k: int) -> list[list[int]]:
    rows = [[0] * k for _ in range(n)]
    for block in blocks:
        for seat, bot in enumerate(block):
            rows[bot][seat] += 1
    return rows


def test_small_fields_use_every_subset_once() -> None:
    blocks = seated_blocks(7, 3)
    assert sorted(tuple(sorted(b)) for b in blocks) == list(combinations(range(7), 3))


def test_two_player_tables_always_use_all_pairs() -> None:
    blocks = seated_blocks(80, 2)  # C(80, 2) = 3160 > the subset limit
    assert len(blocks) == math.comb(80, 2)
    assert set(_pairs(blocks, 80)) == {1}


@pytest.mark.parametrize(("n", "k"), [(n, k) for k in range(3, 7) for n in range(k + 2, 41, 3)])
def test_cyclic_design_levels_matches_seats_and_pairs(n: int, k: int) -> None:
    blocks = cyclic_blocks(n, k, min_base_blocks(n, k))
    assert blocks is not None
    assert all(len(set(block)) == k for block in blocks)
    pairs = _pairs(blocks, n)
    assert max(pairs) - min(pairs) <= 1
    assert min(pairs) >= 1
    rows = _seat_rows(blocks, n, k)
    assert len({value for row in rows for value in row}) == 1  # every bot in every seat equally often


@pytest.mark.parametrize(("n", "k"), [(24, 3), (17, 4), (14, 5), (14, 6), (100, 4)])
def test_large_fields_get_about_the_subset_limit_of_tables(n: int, k: int) -> None:
    blocks = seated_blocks(n, k)
    assert math.comb(n, k) > 2000
    assert 2000 - n < len(blocks) <= 2000
    pairs = _pairs(blocks, n)
    assert max(pairs) - min(pairs) <= 1


def test_repeats_of_a_large_field_make_one_design_balanced_over_all_of_them() -> None:
    blocks = seated_blocks(20, 4, max_tables=0, copies=3)
    once = seated_blocks(20, 4, max_tables=0)
    assert len(blocks) >= 3 * len(once)
    pairs = _pairs(blocks, 20)
    assert max(pairs) - min(pairs) <= 1


def test_the_same_call_gives_the_same_design() -> None:
    assert seated_blocks(30, 4, max_tables=0) == seated_blocks(30, 4, max_tables=0)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 11), k=st.integers(2, 5))
def test_orienting_all_subsets_levels_each_bots_seats_within_one(n: int, k: int) -> None:
    assume(k <= n)
    blocks = orient(list(combinations(range(n), k)))
    assert sorted(tuple(sorted(b)) for b in blocks) == list(combinations(range(n), k))
    for row in _seat_rows(blocks, n, k):
        assert max(row) - min(row) <= 1


@settings(max_examples=40, deadline=None)
@given(st.lists(st.permutations(range(6)).map(lambda p: tuple(p[:3])), min_size=1, max_size=60))
def test_balancing_seats_keeps_each_block_and_levels_counts(blocks: list[tuple[int, ...]]) -> None:
    balanced = balance_seats(blocks)
    assert [sorted(b) for b in balanced] == [sorted(b) for b in blocks]
    for row in _seat_rows(balanced, 6, 3):
        if any(row):
            assert max(row) - min(row) <= 1

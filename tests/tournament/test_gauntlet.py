from __future__ import annotations

import math
from collections import Counter

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from arena.errors import FormatError
from arena.tournament import gauntlet

from .helpers import seat_counts

CANDIDATES = ["alice", "bob", "carol"]
FIELD = ["ref1", "ref2", "ref3", "ref4", "ref5"]


def _field_view(table_seats: tuple[str, ...], candidate: str) -> tuple[str, ...]:
    return tuple("*" if name == candidate else name for name in table_seats)


def test_candidates_never_share_a_table() -> None:
    for table in gauntlet(CANDIDATES, FIELD, 4, repeats=2):
        assert sum(name in CANDIDATES for name in table.seats) == 1
        assert len(table.seats) == 4


def test_every_candidate_faces_the_same_field_tables_in_the_same_seats() -> None:
    tables = gauntlet(CANDIDATES, FIELD, 3, repeats=3)
    views = {c: [_field_view(t.seats, c) for t in tables if c in t.seats] for c in CANDIDATES}
    assert views["alice"] == views["bob"] == views["carol"]
    groups = Counter(frozenset(name for name in view if name != "*") for view in views["alice"])
    assert len(groups) == math.comb(5, 2)
    assert set(groups.values()) == {3}


def test_candidate_seats_are_balanced() -> None:
    tables = gauntlet(CANDIDATES, FIELD, 3)  # 10 field pairs: 4, 3, 3 per seat
    counts = seat_counts(tables)
    for candidate in CANDIDATES:
        values = [counts[candidate][seat] for seat in range(3)]
        assert max(values) - min(values) <= 1
    exact = seat_counts(gauntlet(CANDIDATES, FIELD, 3, repeats=3))
    assert all(len({exact[c][seat] for seat in range(3)}) == 1 for c in CANDIDATES)


def test_two_player_gauntlet_plays_each_field_bot_in_each_seat() -> None:
    tables = gauntlet(["cand"], ["r1", "r2"], 2, repeats=2)
    assert [t.seats for t in tables] == [("cand", "r1"), ("r2", "cand"), ("r1", "cand"), ("cand", "r2")]


@settings(max_examples=40, deadline=None)
@given(field=st.integers(1, 6), k=st.integers(2, 4), repeats=st.integers(1, 8))
def test_candidate_seat_counts_within_one_and_each_group_from_every_seat(field: int, k: int, repeats: int) -> None:
    assume(field >= k - 1)
    reference = [f"ref{i}" for i in range(field)]
    tables = gauntlet(["cand"], reference, k, repeats)
    counts = seat_counts(tables)["cand"]
    values = [counts[seat] for seat in range(k)]
    assert max(values) - min(values) <= 1
    if repeats % k == 0:
        by_group: dict[frozenset[str], Counter[int]] = {}
        for table in tables:
            group = frozenset(table.seats) - {"cand"}
            by_group.setdefault(group, Counter())[table.seats.index("cand")] += 1
        for seats in by_group.values():
            assert len({seats[seat] for seat in range(k)}) == 1


def test_large_field_is_sampled_evenly() -> None:
    field = [f"ref{i:02d}" for i in range(30)]
    tables = gauntlet(["cand"], field, 4)  # C(30, 3) = 4060 > the subset limit
    assert len(tables) <= 2000
    appearances = Counter(name for t in tables for name in t.seats if name != "cand")
    assert len(set(appearances.values())) == 1


def test_duplicate_ids_and_deal_keys() -> None:
    tables = gauntlet(["alice", "bob"], FIELD[:3], 3, duplicate=True)
    assert tables[0].match_id == "gauntlet-alice-0001-d1"
    assert {t.deal_key for t in tables[:3]} == {"gauntlet-alice-0001"}
    ids = [t.match_id for t in tables]
    assert len(ids) == len(set(ids)) == 2 * 3 * 3
    for i in range(0, len(tables), 3):
        group = tables[i : i + 3]
        assert {t.seats.index(t.seats[0]) for t in group} == {0}
        candidate = next(name for name in group[0].seats if name in ("alice", "bob"))
        assert sorted(t.seats.index(candidate) for t in group) == [0, 1, 2]


@pytest.mark.parametrize(
    ("candidates", "field", "k"),
    [([], FIELD, 3), (["alice"], ["alice", "ref1"], 2), (["alice"], ["ref1"], 3), (["alice", "alice"], FIELD, 2)],
)
def test_impossible_gauntlets_are_format_errors(candidates: list[str], field: list[str], k: int) -> None:
    with pytest.raises(FormatError):
        gauntlet(candidates, field, k)

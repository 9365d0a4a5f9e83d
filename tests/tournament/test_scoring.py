from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.tournament import place_points, places


def test_places_score_from_one_down_to_zero() -> None:
    assert place_points(((2,), (0,), (3,), (1,)), 4) == pytest.approx((2 / 3, 0.0, 1.0, 1 / 3))
    assert place_points(((1,), (0,)), 2) == (0.0, 1.0)


def test_tied_seats_share_the_positions_they_span() -> None:
    assert place_points(((0, 1), (2,), (3,)), 4) == pytest.approx((5 / 6, 5 / 6, 1 / 3, 0.0))
    assert place_points(((0,), (1, 2, 3)), 4) == pytest.approx((1.0, 1 / 3, 1 / 3, 1 / 3))
    assert place_points(((0, 1),), 2) == (0.5, 0.5)


@st.composite
def rankings(draw: st.DrawFn) -> tuple[int, tuple[tuple[int, ...], ...]]:
    k = draw(st.integers(2, 6))
    order = draw(st.permutations(range(k)))
    cuts = sorted(draw(st.sets(st.integers(1, k - 1))))
    bounds = [0, *cuts, k]
    return k, tuple(tuple(order[a:b]) for a, b in pairwise(bounds))


@given(rankings())
def test_every_match_hands_out_the_same_total(case: tuple[int, tuple[tuple[int, ...], ...]]) -> None:
    k, ranking = case
    points = place_points(ranking, k)
    assert sum(points) == pytest.approx(k / 2)
    assert all(0.0 <= p <= 1.0 for p in points)
    place = places(ranking, k)
    for a in range(k):
        for b in range(k):
            if place[a] < place[b]:
                assert points[a] > points[b]


@pytest.mark.parametrize("ranking", [((0,), (0, 1)), ((0,),), ((0,), (2,))])
def test_a_ranking_must_place_each_seat_once(ranking: tuple[tuple[int, ...], ...]) -> None:
    with pytest.raises(ValueError, match="seat"):
        place_points(ranking, 2)

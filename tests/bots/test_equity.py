"""The search's worth of a round's outcome: each player's chance to win the match from a count of tokens."""

from __future__ import annotations

import math

import pytest

from arena.bots.equity import match_chances


@pytest.mark.parametrize(("players", "target"), [(2, 6), (3, 5), (4, 4), (5, 3), (6, 3)])
def test_even_tokens_give_even_chances_that_sum_to_one(players: int, target: int) -> None:
    chances = match_chances((1,) * players, target)
    assert all(math.isclose(chance, 1 / players) for chance in chances)
    assert math.isclose(sum(match_chances(tuple(range(players)), target)), 1.0)


def test_worked_by_hand_for_two_players_to_two_tokens() -> None:
    # From 1-0: the leader wins the next round (1/2) or it is 1-1, an even race (1/2 * 1/2).
    assert match_chances((1, 0), 2) == pytest.approx((0.75, 0.25))


def test_a_round_lost_to_the_leader_costs_more_than_one_lost_to_the_last() -> None:
    # Seat 1, with none, loses a round either way: to the leader at 3 (the match is over) or to a player with none.
    leader_wins = match_chances((4, 0, 0, 0), 4)[1]
    last_wins = match_chances((3, 0, 1, 0), 4)[1]
    assert leader_wins == 0.0 < last_wins < match_chances((3, 0, 0, 0), 4)[1]


def test_tokens_past_the_target_count_as_the_target_and_those_who_reach_it_together_share() -> None:
    assert match_chances((7, 2), 6) == (1.0, 0.0)
    assert match_chances((3, 3, 0), 3) == (0.5, 0.5, 0.0)

"""The search's playout policy: who it aims at."""

from __future__ import annotations

import random

from arena.bots.simulator import GUARD, PRIEST, Playout, Rules, Standing, World


def table(rules: Rules) -> World:
    """A 4-player round's start: every seat holds a Guard, nobody knows anybody's card."""
    return World(
        hands=[GUARD] * 4,
        deck=[PRIEST] * 2,
        set_aside=PRIEST,
        protected=[False] * 4,
        spies=[False] * 4,
        discard_sums=[0] * 4,
        unseen=list(rules.counts),
        knows={},
    )


def test_the_playouts_aim_a_blind_card_at_the_leader_as_a_table_of_card_counters_does() -> None:
    rules = Rules.of("2019")
    aimed = set()
    for seed in range(40):
        playout = Playout(rules, 0, random.Random(seed), Standing((0, 1, 3, 1), 4))
        aimed.add(playout._choose(table(rules), 0, GUARD, GUARD)[2])
    assert aimed == {2}


def test_among_equal_leaders_and_without_a_standing_they_aim_at_any() -> None:
    rules = Rules.of("2019")
    tied = {
        Playout(rules, 0, random.Random(s), Standing((2, 1, 3, 3), 4))._choose(table(rules), 0, GUARD, GUARD)[2]
        for s in range(40)
    }
    anyone = {Playout(rules, 0, random.Random(s))._choose(table(rules), 0, GUARD, GUARD)[2] for s in range(40)}
    assert tied == {2, 3}
    assert anyone == {1, 2, 3}

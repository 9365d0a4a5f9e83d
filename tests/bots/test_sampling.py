"""The search's sampled states: every one consistent with what its seat knows."""

from __future__ import annotations

import random
from collections import Counter

from arena.bots.sampling import Opponent, Sampler, Table
from arena.bots.simulator import BARON, GUARD, HANDMAID, OUT, PRIEST, PRINCE, PRINCESS, Playout, Rules

POOL = [GUARD] * 4 + [PRIEST, PRIEST, BARON, HANDMAID, PRINCE, PRINCESS]


def sampler(
    opponents: list[Opponent],
    seed: int = 0,
    mine_known: list[tuple[int, int]] | None = None,
    watchers: list[tuple[int, tuple[int, ...]]] | None = None,
    under: list[int] | None = None,
    pool: list[int] | None = None,
) -> Sampler:
    table = Table(
        seat=0,
        pool=[card for card in POOL if all(card != o.known for o in opponents)] if pool is None else pool,
        opponents=opponents,
        deck=7,
        under=under or [],
        protected=[False] * 3,
        spies=[False] * 3,
        discard_sums=[0] * 3,
        public=list(Rules.of("2019").counts),
        mine_known=mine_known or [],
        watchers=[(2, (1,))] if watchers is None else watchers,
    )
    rng = random.Random(seed)
    return Sampler(table, [], Playout(Rules.of("2019"), 0, rng), rng)


def test_a_sampled_state_deals_every_unseen_card_once_and_what_i_know_as_i_know_it() -> None:
    opponents = [Opponent(1, PRINCE, frozenset(), None), Opponent(2, OUT, frozenset({GUARD}), None)]
    for seed in range(50):
        world = sampler(opponents, seed, mine_known=[(1, PRINCE)]).sample()
        assert world.hands[0] == OUT and world.hands[1] == PRINCE
        assert world.hands[2] != GUARD  # a missed Guard named it
        dealt = [world.hands[2], *world.deck, world.set_aside]
        assert Counter(dealt) == Counter(card for card in POOL if card != PRINCE)
        assert world.knows == {(0, 1): PRINCE, (1, 2): world.hands[2]}


def test_an_opponents_card_is_drawn_by_how_likely_its_play_makes_it_and_never_one_it_cannot_hold() -> None:
    weights = [0.0] * 10
    weights[GUARD], weights[PRIEST], weights[PRINCESS] = 1.0, 0.1, 1.0
    opponents = [Opponent(1, OUT, frozenset({PRINCESS}), tuple(weights)), Opponent(2, OUT, frozenset(), None)]
    held = Counter(sampler(opponents, seed).sample().hands[1] for seed in range(2000))
    assert set(held) == {GUARD, PRIEST}
    assert 0.03 < held[PRIEST] / held[GUARD] < 0.08  # 2 Priests at 0.1 against 4 Guards at 1: 0.05


def test_the_shuffle_deals_every_order_alike() -> None:
    """Every one of the 24 orders of 4 cards, each about 1/24 of the time: a shuffle that never leaves a card in
    place, or never moves the last, fails."""
    shuffler = sampler([])
    orders = Counter()
    for _ in range(24_000):
        cards = [0, 1, 2, 3]
        shuffler._shuffle(cards)
        orders[tuple(cards)] += 1
    assert len(orders) == 24
    assert all(800 < count < 1200 for count in orders.values())  # 1000 expected; 6 standard deviations either way


def test_an_opponent_no_weighted_card_fits_still_gets_a_card() -> None:
    weights = [0.0] * 10  # its plays contradict every card left: I was fooled, and it gets the first one
    world = sampler([Opponent(1, OUT, frozenset(), tuple(weights)), Opponent(2, OUT, frozenset(), None)]).sample()
    assert world.hands[1] in POOL and world.hands[2] in POOL


def test_what_i_saw_of_a_hand_is_kept_while_my_own_hand_is_left_for_the_candidates() -> None:
    """My own seat's hand is OUT in a sampled state until a candidate sets it: my knowledge of others stays."""
    opponents = [Opponent(1, OUT, frozenset(), None), Opponent(2, OUT, frozenset(), None)]
    world = sampler(opponents, watchers=[(2, (0, 1))]).sample()
    assert world.hands[0] == OUT
    assert world.knows == {(0, 2): world.hands[2], (1, 2): world.hands[2]}


def test_an_opponent_after_its_chancellor_holds_the_best_of_what_it_held_and_drew() -> None:
    """It held a Priest I had seen and drew two: it keeps the best of the three, the other two lie where it put
    them (the stronger at the very bottom), and the deck's other cards come from the rest."""
    rank = Rules.of("2019").values.__getitem__
    opponents = [
        Opponent(1, OUT, frozenset(), None),
        Opponent(2, OUT, frozenset(), None, drew=2, held=PRIEST, slots=(0, 1)),
    ]
    kept = Counter()
    for seed in range(200):
        world = sampler(opponents, seed, watchers=[], under=[OUT, OUT]).sample()
        assert rank(world.hands[2]) >= rank(world.deck[0]) >= rank(world.deck[1])
        assert PRIEST in (world.hands[2], world.deck[0], world.deck[1])
        assert len(world.deck) == 7
        kept[world.hands[2]] += 1
    assert kept[PRINCESS] > kept[GUARD]  # one Princess in ten cards, four Guards: the best of three favours her


def test_what_an_opponents_chancellor_kept_is_never_a_card_a_guard_ruled_out_since() -> None:
    opponents = [Opponent(1, OUT, frozenset({PRINCESS, PRINCE}), None, drew=2, slots=(0, 1))]
    kept = Counter()
    for seed in range(200):
        world = sampler(opponents, seed, watchers=[], under=[OUT, OUT]).sample()
        kept[world.hands[1]] += 1
        assert Counter([world.hands[1], *world.deck, world.set_aside]) <= Counter(POOL) and len(world.deck) == 7
    assert kept[PRINCESS] == kept[PRINCE] == 0 and kept[HANDMAID] > kept[GUARD]


def test_an_opponents_chancellor_whose_every_draw_contradicts_a_missed_guard_still_holds_a_card_it_may() -> None:
    """It held the Princess, so it kept her; a Guard naming her missed since (a bluff I cannot see through): no draw
    fits, and after its tries it holds the best of its three that the Guard left possible."""
    opponents = [Opponent(1, OUT, frozenset({PRINCESS}), None, drew=2, held=PRINCESS, slots=(0, 1))]
    pool = [card for card in POOL if card != PRINCESS]
    for seed in range(20):
        world = sampler(opponents, seed, watchers=[], under=[OUT, OUT], pool=pool).sample()
        assert world.hands[1] != PRINCESS and PRINCESS in world.deck[:2]

"""The search bot's inner loop: hidden states sampled from what its seat knows, every candidate answer played out in
each.

It is the hot path of `search` beside the simulator, and is compiled with it (setup.py). It speaks only in card
indices and seats; bots/search.py turns the protocol's messages into a `Table` and answers into `Move`s. Its shuffle
and weighted pick are its own, drawing from `random()`: the standard library's are Python code that compiling this
module would not speed up (a shuffle of 15 cards: 2.2 µs, against 0.5 compiled).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .simulator import GUARD, OUT, Playout, World

BEST_OF_TRIES = 16
"""Draws of an opponent's Chancellor's cards at most, while their best is one it cannot hold (a Guard missed since)."""


@dataclass(frozen=True, slots=True)
class Move:
    """A candidate answer in the simulator's terms, worked out once for all its playouts."""

    kept: int
    """The card I keep (after a Chancellor: the one I keep of the three)."""
    card: int = OUT
    target: int | None = None
    guess: int | None = None
    watchers: tuple[int, ...] = ()
    """Those who knew my card and still do, since I keep it."""
    bottom: tuple[int, ...] | None = None
    """After a Chancellor, the cards put back, in order; None for a card played."""


@dataclass(frozen=True, slots=True)
class Opponent:
    """An opponent still in the round, as I see it."""

    seat: int
    known: int
    """The card I know it holds; OUT when I do not."""
    ruled_out: frozenset[int]
    """The cards it cannot hold."""
    weights: tuple[float, ...] | None
    """How likely it holds each card, from what it chose to play (None: as the counts say)."""
    drew: int = 0
    """The cards its Chancellor drew, when that was its last play: it kept the best of them and the one it held."""
    held: int = OUT
    """The card it held beside that Chancellor, when I knew it."""
    slots: tuple[int, ...] = ()
    """Where in `Table.under` the cards it put back are, the very bottom first (those still in the deck)."""


@dataclass(frozen=True, slots=True)
class Table:
    """What every sampled state shares: the cards to hand out, and everything public."""

    seat: int
    pool: list[int]
    """The cards I have not seen: opponents' unknown hands, the deck, the set-aside card; not those I know are under
    the deck."""
    opponents: list[Opponent]
    deck: int
    under: list[int]
    """The deck's bottom cards, the very bottom first, as Chancellors put them: those I put there, OUT for those I did
    not see (drawn from the pool)."""
    protected: list[bool]
    spies: list[bool]
    discard_sums: list[int]
    public: list[int]
    mine_known: list[tuple[int, int]]
    """(seat, card) of each hand I know."""
    watchers: list[tuple[int, tuple[int, ...]]]
    """(seat, viewers) of each opponent's hand others know (a Priest's look, a Baron tie, a King trade)."""


class Sampler:
    """Samples states for one decision and plays every candidate in each; `played` counts the playouts."""

    def __init__(self, table: Table, moves: list[Move], playout: Playout, rng: random.Random) -> None:
        self.table = table
        self.moves = moves
        self.playout = playout
        self.random = rng.random
        self.values = playout.rules.values
        self.played = 0

    def play(self, active: list[int], totals: list[float], squares: list[float], tries: list[int]) -> None:
        """One sampled state: each active candidate's worth in it added to its sums."""
        world = self.sample()
        last = active[-1]
        for i in active:
            worth = self._try(world if i == last else world.copy(), self.moves[i])  # the last one may spoil it
            totals[i] += worth
            squares[i] += worth * worth
            tries[i] += 1
        self.played += len(active)

    def _try(self, world: World, move: Move) -> float:
        seat, playout = self.table.seat, self.playout
        bottom = move.bottom
        if bottom is not None:
            return playout.after_chancellor(world, seat, move.kept, bottom)
        for viewer in move.watchers:  # those who knew my card still do
            world.knows[viewer, seat] = move.kept
        return playout.finish(world, seat, move.card, move.kept, move.target, move.guess)

    def sample(self) -> World:
        """One hidden state consistent with what this seat knows."""
        table = self.table
        pool = table.pool[:]
        self._shuffle(pool)
        under = table.under[:]
        hands = [OUT] * len(table.protected)  # my own hand stays OUT here: each candidate sets the card it keeps
        for opponent in table.opponents:
            if opponent.known != OUT:
                hands[opponent.seat] = opponent.known
            elif opponent.drew and pool:
                hands[opponent.seat] = self._best_of(pool, opponent, under)
            elif pool:
                hands[opponent.seat] = pool.pop(self._pick(pool, opponent))
            else:
                hands[opponent.seat] = GUARD  # I was fooled
        deck = []
        for card in under:
            if card != OUT:
                deck.append(card)
            elif pool:
                deck.append(pool.pop())
        on_top = max(table.deck - len(deck), 0)
        deck += pool[:on_top]
        return World(
            hands=hands,
            deck=deck,
            set_aside=pool[on_top] if len(pool) > on_top else OUT,
            protected=table.protected[:],
            spies=table.spies[:],
            discard_sums=table.discard_sums[:],
            unseen=table.public[:],
            knows=self._knowledge(hands),
        )

    def _best_of(self, pool: list[int], opponent: Opponent, under: list[int]) -> int:
        """The card an opponent kept after its Chancellor: the best of those it drew and held, drawn again while it
        is one a missed Guard ruled out since (BEST_OF_TRIES times at most); the others go where it put them under the
        deck, the stronger at the very bottom (as every bot here puts them)."""
        values, held = self.values, opponent.held
        tries = 0
        while True:
            drawn = [pool.pop() for _ in range(min(len(pool), opponent.drew + (held == OUT)))]
            cards = sorted(drawn if held == OUT else [held, *drawn], key=values.__getitem__)
            tries += 1
            if cards[-1] not in opponent.ruled_out or tries == BEST_OF_TRIES:
                break
            for card in drawn:
                self._put_back(pool, card)
        allowed = [i for i, card in enumerate(cards) if card not in opponent.ruled_out]
        if allowed:  # out of tries: the best it may hold, and none if my deductions contradict each other
            cards.append(cards.pop(allowed[-1]))
        best = cards.pop()
        for slot in opponent.slots:
            if cards:
                under[slot] = cards.pop()
        for card in cards:  # drawn from under the deck since: back among the unseen
            self._put_back(pool, card)
        return best

    def _put_back(self, pool: list[int], card: int) -> None:
        """A card back among the shuffled unseen ones, anywhere."""
        pool.insert(int(self.random() * (len(pool) + 1)), card)

    def _shuffle(self, cards: list[int]) -> None:
        """Fisher-Yates, one random() a card."""
        random = self.random
        for i in range(len(cards) - 1, 0, -1):
            j = int(random() * (i + 1))
            cards[i], cards[j] = cards[j], cards[i]

    def _pick(self, pool: list[int], opponent: Opponent) -> int:
        """Where in the shuffled pool an opponent's card is: the first it may hold, or one drawn by how likely its
        own play makes each card."""
        ruled_out, weights = opponent.ruled_out, opponent.weights
        if weights is None:
            if ruled_out:
                for i, card in enumerate(pool):
                    if card not in ruled_out:
                        return i
            return 0
        odds = [0.0 if card in ruled_out else weights[card] for card in pool]
        total = sum(odds)
        if total <= 0.0:
            return 0
        point = self.random() * total
        for i, odd in enumerate(odds):
            point -= odd
            if point < 0.0:
                return i
        return max(i for i, odd in enumerate(odds) if odd > 0.0)  # rounding left the point at the very end

    def _knowledge(self, hands: list[int]) -> dict[tuple[int, int], int]:
        """Who knows whose card in a sampled state: mine from what I saw, the others' from what they saw."""
        me = self.table.seat
        knows = {(me, seat): card for seat, card in self.table.mine_known if hands[seat] != OUT}
        for seat, viewers in self.table.watchers:
            if hands[seat] != OUT:
                for viewer in viewers:
                    if hands[viewer] != OUT or viewer == me:
                        knows[viewer, seat] = hands[seat]
        return knows

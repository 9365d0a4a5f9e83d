"""A small, fast model of the rest of a Love Letter round, for the search bot's playouts.

It is the bot's own model of the game, built from the rules alone (the bot sees only messages): cards
are ints (the arena's card indices), a hand is one card between turns, the deck's top is the end of a
list. A playout plays every seat with a quick policy that uses only what that seat could know publicly
(it never peeks at the hidden cards it is simulating), and returns the tokens the searching seat
gained: one for a round win, one for the Spy bonus.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from arena.engine.cards import Card, ShowdownTie, get_ruleset

SPY, GUARD, PRIEST, BARON, HANDMAID, PRINCE, CHANCELLOR, KING, COUNTESS, PRINCESS = range(10)
OUT = -1
TARGETED = frozenset((GUARD, PRIEST, BARON, PRINCE, KING))


@dataclass(frozen=True, slots=True)
class Rules:
    values: tuple[int, ...]
    """Value of each card index; -1 for cards not in the ruleset."""
    counts: tuple[int, ...]
    guesses: tuple[int, ...]
    discard_sum_tie: bool
    cards: tuple[int, ...]
    """The card indices of the ruleset."""

    @classmethod
    def of(cls, name: str) -> Rules:
        ruleset = get_ruleset(name)
        values = tuple(ruleset.values.get(card, -1) for card in Card)
        counts = tuple(ruleset.counts.get(card, 0) for card in Card)
        guesses = tuple(int(card) for card in ruleset.guard_guesses)
        cards = tuple(int(card) for card in ruleset.cards)
        return cls(values, counts, guesses, ruleset.showdown_tie is ShowdownTie.DISCARD_SUM, cards)


@dataclass(slots=True)
class World:
    """One complete guess of the hidden state, mid-round, between turns or within the searcher's turn."""

    hands: list[int]
    """Each seat's card between turns; OUT for a seat out of the round."""
    deck: list[int]
    """Top card last."""
    set_aside: int
    """OUT once a Prince took it."""
    protected: list[bool]
    spies: list[bool]
    discard_sums: list[int]
    unseen: list[int]
    """Per card index, how many are not publicly visible: what a guessing policy may reason from."""
    knows: dict[tuple[int, int], int]
    """(viewer, seat) -> the card of seat that viewer knows (a Priest's look, a Baron tie, a King trade)."""

    def copy(self) -> World:
        return World(
            self.hands[:],
            self.deck[:],
            self.set_aside,
            self.protected[:],
            self.spies[:],
            self.discard_sums[:],
            self.unseen[:],
            dict(self.knows),
        )

    def forget(self, seat: int) -> None:
        """Seat's hand changed: what others knew of it is stale."""
        for key in [key for key in self.knows if key[1] == seat]:
            del self.knows[key]


class Playout:
    def __init__(self, rules: Rules, me: int, rng: random.Random) -> None:
        self.rules = rules
        self.me = me
        self.rng = rng

    def finish(self, world: World, seat: int, card: int, kept: int, target: int | None, guess: int | None) -> float:
        """Play `card` for `seat` (keeping `kept`), then the rest of the round; the tokens `me` gains."""
        world.hands[seat] = kept
        self._resolve(world, seat, card, target, guess)
        return self._continue(world, seat)

    def after_chancellor(self, world: World, seat: int, keep: int, bottom: list[int]) -> float:
        world.hands[seat] = keep
        world.forget(seat)
        for card in bottom:
            world.deck.insert(0, card)
        return self._continue(world, seat)

    def _continue(self, world: World, seat: int) -> float:
        hands, n = world.hands, len(world.hands)
        while True:
            if n - hands.count(OUT) <= 1 or not world.deck:
                return self._score(world, [s for s in range(n) if hands[s] != OUT])
            seat = (seat + 1) % n
            while hands[seat] == OUT:
                seat = (seat + 1) % n
            self._turn(world, seat)

    def _turn(self, world: World, seat: int) -> None:
        world.protected[seat] = False
        drawn = world.deck.pop()
        held = world.hands[seat]
        card, kept, target, guess = self._choose(world, seat, held, drawn)
        world.hands[seat] = kept
        if kept != held and world.knows:
            world.forget(seat)  # the card the others knew of was the one played
        if card != CHANCELLOR:
            self._resolve(world, seat, card, target, guess)
            return
        world.forget(seat)
        drawn_cards = [world.deck.pop() for _ in range(min(2, len(world.deck)))]
        if drawn_cards:
            options = sorted([kept, *drawn_cards], key=self.rules.values.__getitem__)
            world.hands[seat] = options.pop()
            for other in options:
                world.deck.insert(0, other)
        self._discarded(world, seat, CHANCELLOR)

    def choose_card(self, world: World, seat: int, held: int, drawn: int) -> int:
        """The card this policy plays holding `held` after drawing `drawn` (what an opponent's play says of the
        card it kept)."""
        return self._choose(world, seat, held, drawn)[0]

    def _choose(self, world: World, seat: int, held: int, drawn: int) -> tuple[int, int, int | None, int | None]:
        """The heuristic bot's scoring, on public counts only: (card to play, card kept, target, guess)."""
        if PRINCESS in (held, drawn):
            kept = PRINCESS
            card = drawn if held == PRINCESS else held
        elif COUNTESS in (held, drawn) and (KING in (held, drawn) or PRINCE in (held, drawn)):
            card = COUNTESS
            kept = drawn if held == COUNTESS else held
        else:
            first = self._value(world, seat, held, drawn)
            second = self._value(world, seat, drawn, held) if drawn != held else first
            card, kept = (held, drawn) if first[0] >= second[0] else (drawn, held)
            _, target, guess = first if card == held else second
            return card, kept, target, guess
        _, target, guess = self._value(world, seat, card, kept)
        return card, kept, target, guess

    def _value(self, world: World, seat: int, card: int, kept: int) -> tuple[float, int | None, int | None]:
        """The score of playing `card` and its best target and guess, as the heuristic bot would judge them."""
        mine = self.rules.values[kept]
        base = 0.02 * mine
        if card not in TARGETED:
            if card == HANDMAID:
                return base + 0.2 + 0.03 * mine, None, None
            if card == CHANCELLOR:
                return base + (0.15 if len(world.deck) >= 2 else 0.0), None, None
            if card == SPY:
                hands = world.hands
                others = any(world.spies[s] for s in range(len(hands)) if s != seat and hands[s] != OUT)
                return base + (0.05 if others else 0.25), None, None
            if card == PRINCESS:
                return -10.0, None, None
            return base + (0.05 if card == COUNTESS else 0.0), None, None
        hands, protected, knows = world.hands, world.protected, world.knows
        targets = [s for s in range(len(hands)) if s != seat and hands[s] != OUT and not protected[s]]
        if not targets:
            if card == PRINCE:
                return (-10.0 if kept == PRINCESS else base - 0.1 + 0.02 * (5 - mine)), seat, None
            return base, None, None
        unseen = world.unseen
        unseen[kept] -= 1  # a seat knows its own card; restored below
        best: tuple[float, int | None, int | None] = (-100.0, None, None)
        blind = [s for s in targets if (seat, s) not in knows]
        if blind:
            value, guess = self._blind(card, unseen, mine)
            best = (value, blind[int(self.rng.random() * len(blind))], guess)
        if len(blind) < len(targets):
            for target in targets:
                known = knows.get((seat, target))
                if known is not None:
                    value, guess = self._aimed(card, known, unseen, mine)
                    if value > best[0]:
                        best = (value, target, guess)
        unseen[kept] += 1
        return base + best[0], best[1], best[2]

    def _blind(self, card: int, unseen: list[int], mine: int) -> tuple[float, int | None]:
        """A targeted card's worth against a hand known only by the public counts."""
        if card == PRIEST:
            return 0.3, None
        total = max(1, sum(unseen))
        if card == GUARD:
            guess = max(self.rules.guesses, key=unseen.__getitem__)
            return unseen[guess] / total, guess
        values = self.rules.values
        if card == BARON:
            win = lose = 0
            for c in self.rules.cards:
                n = unseen[c]
                if n:
                    if values[c] < mine:
                        win += n
                    elif values[c] > mine:
                        lose += n
            return (win - 1.2 * lose) / total, None
        expected = sum(unseen[c] * values[c] for c in self.rules.cards) / total
        if card == PRINCE:
            return unseen[PRINCESS] / total + 0.02 * expected, None
        return 0.03 * (expected - mine) - 0.05, None  # king

    def _aimed(self, card: int, known: int, unseen: list[int], mine: int) -> tuple[float, int | None]:
        """A targeted card's worth against a hand this seat knows."""
        values = self.rules.values
        if card == GUARD:
            return (1.0, known) if known != GUARD else self._blind(card, unseen, mine)
        if card == PRIEST:
            return 0.05, None
        if card == BARON:
            theirs = values[known]
            return (1.0 if mine > theirs else -1.2 if theirs > mine else 0.0), None
        if card == PRINCE:
            return (1.0 if known == PRINCESS else 0.02 * values[known]), None
        return 0.03 * (values[known] - mine) - 0.05, None  # king

    def _resolve(self, world: World, seat: int, card: int, target: int | None, guess: int | None) -> None:
        hands = world.hands
        self._discarded(world, seat, card)
        if card == HANDMAID:
            world.protected[seat] = True
        elif card == PRINCESS:
            self._out(world, seat)
        elif target is None:
            return
        elif card == GUARD:
            if hands[target] == guess:
                self._out(world, target)
        elif card == PRIEST:
            world.knows[seat, target] = hands[target]
        elif card == BARON:
            values = self.rules.values
            mine, theirs = values[hands[seat]], values[hands[target]]
            if mine > theirs:
                self._out(world, target)
            elif theirs > mine:
                self._out(world, seat)
            else:
                world.knows[seat, target] = hands[target]
                world.knows[target, seat] = hands[seat]
        elif card == KING:
            hands[seat], hands[target] = hands[target], hands[seat]
            knows = world.knows
            if knows:
                moved = {(v, target if s == seat else seat): c for (v, s), c in knows.items() if s in (seat, target)}
                for key in [key for key in knows if key[1] in (seat, target)]:
                    del knows[key]
                knows.update(moved)
            knows[seat, target] = hands[target]
            knows[target, seat] = hands[seat]
        elif card == PRINCE:
            world.forget(target)
            dropped = hands[target]
            self._discarded(world, target, dropped)
            if dropped == PRINCESS:
                hands[target] = OUT
            elif world.deck:
                hands[target] = world.deck.pop()
            else:
                hands[target], world.set_aside = world.set_aside, OUT

    def _discarded(self, world: World, seat: int, card: int) -> None:
        world.unseen[card] -= 1
        world.discard_sums[seat] += self.rules.values[card]
        if card == SPY:
            world.spies[seat] = True

    def _out(self, world: World, seat: int) -> None:
        card = world.hands[seat]
        if card != OUT:
            world.unseen[card] -= 1
            world.discard_sums[seat] += self.rules.values[card]
        world.hands[seat] = OUT

    def _score(self, world: World, alive: list[int]) -> float:
        me, hands = self.me, world.hands
        gained = 0.0
        if me in alive:
            if len(alive) == 1:
                gained = 1.0
            else:
                values = self.rules.values
                best = max(values[hands[s]] for s in alive)
                tied = [s for s in alive if values[hands[s]] == best]
                if len(tied) > 1 and self.rules.discard_sum_tie:
                    top = max(world.discard_sums[s] for s in tied)
                    tied = [s for s in tied if world.discard_sums[s] == top]
                gained = 1.0 if me in tied else 0.0
            spies = [s for s in alive if world.spies[s]]
            if spies == [me]:
                gained += 1.0
        return gained

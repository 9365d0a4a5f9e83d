"""A small, fast model of the rest of a Love Letter round, for the search bot's playouts.

It is the bot's own model of the game, built from the rules alone (the bot sees only messages): cards
are ints (the arena's card indices), a hand is one card between turns, the deck's top is the end of a
list. A playout plays every seat with a quick policy that uses only what that seat could know publicly
(it never peeks at the hidden cards it is simulating), and returns the searching seat's chance to win the match
once the round's tokens are given (bots/equity.py): a round won is worth more near the target, and one lost costs
more to the leader than to the last.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import itemgetter, mul

from arena.engine.cards import Card, ShowdownTie, get_ruleset

from .equity import match_chances

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
    worth: tuple[int, ...] = field(init=False)
    """Value of each card index, 0 for cards not in the ruleset: multiplied by the unseen counts in one pass."""
    below: tuple[tuple[int, ...], ...] = field(init=False)
    """Per card index, the ruleset's cards worth less: what a Baron beside that card beats."""
    above: tuple[tuple[int, ...], ...] = field(init=False)
    """Per card index, the ruleset's cards worth more: what a Baron beside that card loses to."""
    guess_counts: Callable[[list[int]], tuple[int, ...]] = field(init=False)
    """The unseen counts of the guesses, in their order."""

    def __post_init__(self) -> None:
        """The tables the playouts read instead of looping over the cards at every turn."""
        values, cards = self.values, self.cards
        object.__setattr__(self, "worth", tuple(value if c in cards else 0 for c, value in enumerate(values)))
        object.__setattr__(self, "below", tuple(tuple(c for c in cards if values[c] < value) for value in values))
        object.__setattr__(self, "above", tuple(tuple(c for c in cards if values[c] > value) for value in values))
        object.__setattr__(self, "guess_counts", itemgetter(*self.guesses))

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
    unseen_total: int = field(init=False)
    """sum(unseen), kept up to date with it: the guessing policy's denominator, without summing at every turn."""

    def __post_init__(self) -> None:
        self.unseen_total = sum(self.unseen)

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
        knows = self.knows
        if knows:
            for key in [key for key in knows if key[1] == seat]:
                del knows[key]


Aim = tuple[list[int], Sequence[tuple[int, int]]]
"""Where a seat may aim a targeted card this turn: the seats whose card it does not know, and (seat, card) for those
it knows. Both empty: nobody can be targeted."""
NOWHERE: Aim = ([], ())
"""The aim of a turn without a targeted card (never read)."""


@dataclass(frozen=True, slots=True)
class Standing:
    """The match's favour tokens before this round, and the number that wins it."""

    tokens: tuple[int, ...]
    target: int


class Playout:
    def __init__(self, rules: Rules, me: int, rng: random.Random, standing: Standing | None = None) -> None:
        """`standing`: the match's, by which a playout's end is worth `me`'s chance to win it; without it, the
        tokens `me` gains (the search of 2026-12-06, benchmarks/old_search.py)."""
        self.rules = rules
        self.me = me
        self.rng = rng
        self.standing = standing
        self._chances: dict[tuple[tuple[int, ...], int], float] = {}
        """`me`'s chance to win the match after each outcome of the round seen so far: (winners, Spy bonus's seat)."""
        self.values = rules.values
        self.guesses = rules.guesses
        self.guess_counts = rules.guess_counts
        self.random = rng.random
        self.others: tuple[tuple[int, ...], ...] = ()
        """Per seat, the other seats in order (filled in for the world's number of seats)."""
        self.turns = 0
        """The turns the playouts have played so far, each one's first (the answer tried) with the rest: what they
        cost."""

    def finish(self, world: World, seat: int, card: int, kept: int, target: int | None, guess: int | None) -> float:
        """Play `card` for `seat` (keeping `kept`), then the rest of the round; `me`'s chance to win the match."""
        world.hands[seat] = kept
        self._resolve(world, seat, card, target, guess)
        return self._continue(world, seat)

    def after_chancellor(self, world: World, seat: int, keep: int, bottom: Sequence[int]) -> float:
        world.hands[seat] = keep
        world.forget(seat)
        for card in bottom:
            world.deck.insert(0, card)
        return self._continue(world, seat)

    def _continue(self, world: World, seat: int) -> float:
        """Play the turns after `seat`'s to the end of the round; `me`'s chance to win the match."""
        hands, deck, protected, n = world.hands, world.deck, world.protected, len(world.hands)
        choose, resolve = self._choose, self._resolve
        turns = 1  # the turn played before: the answer tried
        while deck and n - hands.count(OUT) > 1:
            turns += 1
            seat = (seat + 1) % n
            while hands[seat] == OUT:
                seat = (seat + 1) % n
            protected[seat] = False  # a turn: the seat's Handmaid wears off, it draws, chooses and plays
            held = hands[seat]
            card, kept, target, guess = choose(world, seat, held, deck.pop())
            hands[seat] = kept
            if kept != held and world.knows:
                world.forget(seat)  # the card the others knew of was the one played
            if card == CHANCELLOR:
                self._chancellor(world, seat, kept)
            else:
                resolve(world, seat, card, target, guess)
        self.turns += turns
        return self._score(world, [s for s in range(n) if hands[s] != OUT])

    def _chancellor(self, world: World, seat: int, kept: int) -> None:
        """`seat` played a Chancellor beside `kept`: it keeps the best of three, the others go under the deck."""
        world.forget(seat)
        drawn_cards = [world.deck.pop() for _ in range(min(2, len(world.deck)))]
        if drawn_cards:
            options = sorted([kept, *drawn_cards], key=self.rules.values.__getitem__)
            world.hands[seat] = options.pop()
            for other in options:
                world.deck.insert(0, other)
        self._discarded(world, seat, CHANCELLOR)

    def choose(self, world: World, seat: int, held: int, drawn: int) -> tuple[int, int | None]:
        """The card this policy plays holding `held` after drawing `drawn`, and the card it names if a Guard (what
        an opponent's play says of the card it kept)."""
        card, _, _, guess = self._choose(world, seat, held, drawn)
        return card, guess

    def _choose(self, world: World, seat: int, held: int, drawn: int) -> tuple[int, int, int | None, int | None]:
        """The heuristic bot's scoring, on public counts only: (card to play, card kept, target, guess)."""
        if held == PRINCESS or drawn == PRINCESS:
            kept = PRINCESS
            card = drawn if held == PRINCESS else held
        elif (held == COUNTESS or drawn == COUNTESS) and (KING in (held, drawn) or PRINCE in (held, drawn)):
            return COUNTESS, drawn if held == COUNTESS else held, None, None  # she takes no target
        else:  # both cards are scored, on the same aim: the seats and what is known of them do not change between
            aim = self._aim(world, seat) if held in TARGETED or drawn in TARGETED else NOWHERE
            first, target, guess = self._value(world, seat, held, drawn, aim)
            if drawn == held:
                return held, drawn, target, guess
            second, second_target, second_guess = self._value(world, seat, drawn, held, aim)
            if first >= second:
                return held, drawn, target, guess
            return drawn, held, second_target, second_guess
        target, guess = self._forced(world, seat, card, kept)
        return card, kept, target, guess

    def _forced(self, world: World, seat: int, card: int, kept: int) -> tuple[int | None, int | None]:
        """The target and guess of a card that has to be played (beside the Princess), as `_value` picks them: only
        a choice among known hands needs the scores, a blind one only the same draw."""
        if card not in TARGETED:
            return None, None
        blind, known = aim = self._aim(world, seat)
        if known:
            _, target, guess = self._value(world, seat, card, kept, aim)
            return target, guess
        if not blind:
            return (seat if card == PRINCE else None), None
        target = self._blind_target(blind)
        if card != GUARD:
            return target, None
        unseen = world.unseen
        unseen[kept] -= 1  # a seat knows its own card; restored below
        counts = self.guess_counts(unseen)
        guess = self.guesses[counts.index(max(counts))]
        unseen[kept] += 1
        return target, guess

    def _aim(self, world: World, seat: int) -> Aim:
        """Who `seat` may target this turn (in seat order), split by whether it knows their card."""
        hands, protected, knows = world.hands, world.protected, world.knows
        if len(self.others) != len(hands):
            self.others = tuple(tuple(s for s in range(len(hands)) if s != one) for one in range(len(hands)))
        targets = [s for s in self.others[seat] if hands[s] != OUT and not protected[s]]
        if not knows:
            return targets, ()
        blind: list[int] = []
        known: list[tuple[int, int]] = []
        for target in targets:
            card = knows.get((seat, target))
            if card is None:
                blind.append(target)
            else:
                known.append((target, card))
        return blind, known

    def _blind_target(self, blind: list[int]) -> int:
        """Of the seats whose card is unknown, the one with the most tokens (ties at random), as heuristic aims: a
        table of card counters gangs up on its leader."""
        pick = self.random()
        if len(blind) > 1 and self.standing is not None:
            tokens = self.standing.tokens
            most = max([tokens[seat] for seat in blind])
            blind = [seat for seat in blind if tokens[seat] == most]
        return blind[int(pick * len(blind))]

    def _value(self, world: World, seat: int, card: int, kept: int, aim: Aim) -> tuple[float, int | None, int | None]:
        """The score of playing `card` and its best target and guess, as the heuristic bot would judge them."""
        mine = self.values[kept]
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
        blind, known = aim
        if not blind and not known:
            if card == PRINCE:
                return (-10.0 if kept == PRINCESS else base - 0.1 + 0.02 * (5 - mine)), seat, None
            return base, None, None
        unseen = world.unseen
        unseen[kept] -= 1  # a seat knows its own card; restored below
        total = world.unseen_total - 1
        if total < 1:
            total = 1
        best, best_target, best_guess = -100.0, None, None
        if blind:
            best, best_guess = self._blind(card, unseen, total, kept)
            best_target = self._blind_target(blind)
        if known:
            for target, theirs in known:
                value, guess = self._aimed(card, theirs, unseen, total, kept)
                if value > best:
                    best, best_target, best_guess = value, target, guess
        unseen[kept] += 1
        return base + best, best_target, best_guess

    def _blind(self, card: int, unseen: list[int], total: int, kept: int) -> tuple[float, int | None]:
        """A targeted card's worth against a hand known only by the public counts (`total` of them, at least 1)."""
        if card == GUARD:
            return self._guard(unseen, total)
        if card == PRIEST:
            return 0.3, None
        rules = self.rules
        if card == BARON:
            win = sum(map(unseen.__getitem__, rules.below[kept]))
            lose = sum(map(unseen.__getitem__, rules.above[kept]))
            return (win - 1.2 * lose) / total, None
        expected = sum(map(mul, unseen, rules.worth)) / total
        if card == PRINCE:
            return unseen[PRINCESS] / total + 0.02 * expected, None
        return 0.03 * (expected - rules.values[kept]) - 0.05, None  # king

    def _guard(self, unseen: list[int], total: int) -> tuple[float, int]:
        """A Guard's worth against a hand known only by the public counts, naming the first of the likeliest cards."""
        counts = self.guess_counts(unseen)
        most = max(counts)
        return most / total, self.guesses[counts.index(most)]

    def _aimed(self, card: int, known: int, unseen: list[int], total: int, kept: int) -> tuple[float, int | None]:
        """A targeted card's worth against a hand this seat knows."""
        values = self.rules.values
        mine = values[kept]
        if card == GUARD:
            return (1.0, known) if known != GUARD else self._blind(card, unseen, total, kept)
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
        world.unseen[card] -= 1  # self._discarded(world, seat, card), inline: it is every turn's
        world.unseen_total -= 1
        world.discard_sums[seat] += self.values[card]
        if card == GUARD:  # the commonest first
            if target is not None and hands[target] == guess:
                self._out(world, target)
        elif card == HANDMAID:
            world.protected[seat] = True
        elif card == PRINCESS:
            self._out(world, seat)
        elif card == SPY:
            world.spies[seat] = True
        elif target is None:
            return
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
        world.unseen_total -= 1
        world.discard_sums[seat] += self.rules.values[card]
        if card == SPY:
            world.spies[seat] = True

    def _out(self, world: World, seat: int) -> None:
        card = world.hands[seat]
        if card != OUT:
            world.unseen[card] -= 1
            world.unseen_total -= 1
            world.discard_sums[seat] += self.rules.values[card]
        world.hands[seat] = OUT

    def _score(self, world: World, alive: list[int]) -> float:
        """`me`'s chance to win the match once the round's tokens are given (bots/equity.py), worked out once per
        outcome (a decision's playouts end in a handful); without a standing, the tokens `me` gains."""
        outcome = self._outcome(world, alive)
        standing = self.standing
        if standing is None:
            winners, spy = outcome
            return float(self.me in winners) + float(spy == self.me)
        chance = self._chances.get(outcome)
        if chance is None:
            tokens = list(standing.tokens)
            for seat in (*outcome[0], outcome[1]):
                if seat != OUT:
                    tokens[seat] += 1
            chance = self._chances[outcome] = match_chances(tuple(tokens), standing.target)[self.me]
        return chance

    def _outcome(self, world: World, alive: list[int]) -> tuple[tuple[int, ...], int]:
        """Who takes a token at the round's end, `alive` the seats still in: the winners of the showdown (a tie broken
        by the discards' sums where the rules say so), and the Spy bonus's seat (OUT: nobody's)."""
        hands, values, sums = world.hands, self.values, world.discard_sums
        if len(alive) == 1:
            winners = alive
        else:
            best = max(values[hands[seat]] for seat in alive)
            winners = [seat for seat in alive if values[hands[seat]] == best]
            if len(winners) > 1 and self.rules.discard_sum_tie:
                top = max(sums[seat] for seat in winners)
                winners = [seat for seat in winners if sums[seat] == top]
        spies = [seat for seat in alive if world.spies[seat]]
        return tuple(winners), spies[0] if len(spies) == 1 else OUT

"""Answers to decisions, and the complete lists of legal answers.

Every answer a match can accept is built once per ruleset and reused, so building the legal list at
each decision is a few lookups rather than dozens of allocations.
"""

from __future__ import annotations

from dataclasses import field
from enum import Enum
from functools import lru_cache
from itertools import permutations

from arena.engine.cards import Card, Ruleset
from arena.engine.frozen import frozen


class DecisionKind(Enum):
    PLAY = "play"
    CHANCELLOR = "chancellor"


@frozen
class Play:
    """Play `card`; `target` and `guess` only where the card takes them."""

    card: Card
    target: int | None = None
    guess: Card | None = None


@frozen
class Keep:
    """After a chancellor: keep one card, put `bottom` under the deck in order (last one lowest)."""

    keep: Card
    bottom: tuple[Card, ...]


Action = Play | Keep


@frozen
class Decision:
    seat: int
    kind: DecisionKind
    legal: tuple[Action, ...]
    allowed: frozenset[Action] = field(default=frozenset(), repr=False, compare=False)
    """The same answers as a set, for a fast membership test."""

    def accepts(self, action: object) -> bool:
        try:
            return action in (self.allowed or self.legal)
        except TypeError:  # unhashable, e.g. a Keep built with a list
            return False


TARGETED = frozenset({Card.PRIEST, Card.BARON, Card.KING})
"""Cards that choose another player and do nothing when nobody can be chosen."""


class ActionTable:
    """All play answers of one ruleset at one table size, and the legal list for a hand."""

    def __init__(self, ruleset: Ruleset, players: int) -> None:
        seats = range(players)
        self._guesses = ruleset.guard_guesses
        self._plain = {card: (Play(card),) for card in ruleset.cards}
        self._guard = {t: tuple(Play(Card.GUARD, t, g) for g in self._guesses) for t in seats}
        self._aimed = {card: {t: Play(card, t) for t in seats} for card in TARGETED | {Card.PRINCE}}
        self.plays = frozenset(
            [a for group in self._plain.values() for a in group]
            + [a for group in self._guard.values() for a in group]
            + [a for by_seat in self._aimed.values() for a in by_seat.values()]
        )
        self.card_actions = lru_cache(maxsize=None)(self._card_actions)
        # Bounded by the table: card pairs x seats x subsets of targets (at most ~10k at 6 players).
        self.play_legal = lru_cache(maxsize=None)(self._play_legal)
        self.play_decision = lru_cache(maxsize=None)(self._play_decision)

    def _play_decision(self, first: Card, second: Card, seat: int, targets: tuple[int, ...]) -> Decision:
        legal = self.play_legal(first, second, seat, targets)
        return Decision(seat, DecisionKind.PLAY, legal, frozenset(legal))

    def _card_actions(self, card: Card, seat: int, targets: tuple[int, ...]) -> tuple[Play, ...]:
        if card is Card.GUARD:
            if not targets:
                return self._plain[card]
            return tuple(a for t in targets for a in self._guard[t])
        if card in TARGETED:
            if not targets:
                return self._plain[card]
            return tuple(self._aimed[card][t] for t in targets)
        if card is Card.PRINCE:
            return tuple(self._aimed[card][t] for t in sorted((*targets, seat)))
        return self._plain[card]

    def _play_legal(self, first: Card, second: Card, seat: int, targets: tuple[int, ...]) -> tuple[Play, ...]:
        """Legal plays for a hand of two cards (lower card first), `targets` being who may be chosen."""
        hand = (first, second)
        if Card.COUNTESS in hand and (Card.KING in hand or Card.PRINCE in hand):
            return self._plain[Card.COUNTESS]
        if first is second:
            return self.card_actions(first, seat, targets)
        return self.card_actions(first, seat, targets) + self.card_actions(second, seat, targets)


@lru_cache(maxsize=1024)
def keep_decision(seat: int, hand: tuple[Card, ...]) -> Decision:
    legal = keep_legal(hand)
    return Decision(seat, DecisionKind.CHANCELLOR, legal, frozenset(legal))


@lru_cache(maxsize=1024)
def keep_legal(hand: tuple[Card, ...]) -> tuple[Keep, ...]:
    """Every distinct way to keep one card of `hand` and order the rest under the deck."""
    answers: dict[Keep, None] = {}
    for i, kept in enumerate(hand):
        rest = hand[:i] + hand[i + 1 :]
        for order in permutations(rest):
            answers.setdefault(Keep(kept, order))
    return tuple(answers)

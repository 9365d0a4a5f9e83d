"""What one seat knows of the hidden cards of its round, and the exact chance of each card in each hand from it."""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from arena.engine import (
    Action,
    Card,
    ChancellorEvent,
    DiscardEvent,
    Event,
    Faulted,
    Keep,
    OutCause,
    OutEvent,
    PlayEvent,
    RoundEnded,
    RoundStartEvent,
    Ruleset,
    View,
)
from arena.engine.memo import IdentityMemo

ENUMERATED = 5000
"""The most joint hands of constrained opponents enumerated for one decision; beyond it only the target's own
constraints are kept (a handful of opponents each with most cards ruled out: it never happens in practice)."""

GUARD, PRIEST, BARON, PRINCE, KING, COUNTESS, PRINCESS = (
    Card.GUARD,
    Card.PRIEST,
    Card.BARON,
    Card.PRINCE,
    Card.KING,
    Card.COUNTESS,
    Card.PRINCESS,
)
AIMED = frozenset({GUARD, PRIEST, BARON, PRINCE, KING})
"""The cards that choose another player."""

Odds = dict[Card, float]
"""The chance of each card being one player's."""

T = TypeVar("T")


class Kind(StrEnum):
    """A play whose success the replay shows."""

    GUARD = "guard"
    """A Guard that named the target's card."""
    BARON = "baron"
    """A Baron that put the target out."""
    PRINCE = "prince"
    """A Prince that made the target discard the Princess."""


_KINDS = {GUARD: Kind.GUARD, BARON: Kind.BARON, PRINCE: Kind.PRINCE}
_ONLY = {card: frozenset({card}) for card in Card}


@dataclass(slots=True)
class Bet:
    """A play whose success turns on the target's card: the cards that make it succeed, and the chance of each of
    them from the seat's own information (a card with no chance left out)."""

    kind: Kind
    wins: frozenset[Card]
    odds: tuple[tuple[Card, float], ...]

    @property
    def probability(self) -> float:
        return sum(p for _, p in self.odds)


@dataclass(frozen=True, slots=True)
class _Rules:
    """What a Sight reads of its ruleset at every round and every Baron, worked out once per ruleset (a Ruleset works
    its cards out again each time it is asked: at each round's start, that was a tenth of following a seat)."""

    deck: int
    below: dict[Card, frozenset[Card]]
    """Per card, the cards of lower value (those a Baron kept beside it beats)."""
    at_most: dict[Card, frozenset[Card]]
    """Per card, the cards of no higher value (those a Baron's winner cannot hold, the loser's card shown)."""

    @classmethod
    def of(cls, ruleset: Ruleset) -> _Rules:
        values, cards = ruleset.values, ruleset.cards
        return cls(
            sum(ruleset.counts.values()),
            {card: frozenset(c for c in cards if values[c] < values[card]) for card in cards},
            {card: frozenset(c for c in cards if values[c] <= values[card]) for card in cards},
        )


_RULES: IdentityMemo[Ruleset, _Rules] = IdentityMemo(_Rules.of, size=64)


class Sight:
    """What one seat knows of the hidden cards of its round, kept up to date from its own events and views.

    It knows another seat's card from its own Priest, a level Baron or a King trade it took part in, and a card
    it put under the deck with a Chancellor once another seat draws it; that lasts while the holder provably keeps
    the card. It knows what another seat does not hold from a Guard that missed, the Countess rule (a King or a
    Prince played: the card kept is no Countess) and a Baron between two others (the winner's card beats the
    loser's, shown as it goes out), until the holder may have changed its card. Every other card it has not seen
    is equally likely anywhere: in a hand, set aside or in the deck."""

    def __init__(self, seat: int, ruleset: Ruleset) -> None:
        self.seat = seat
        self.ruleset = ruleset
        self.known: dict[int, Card] = {}
        """Other seats' cards this seat knows now."""
        self.excluded: dict[int, frozenset[Card]] = {}
        """Cards another seat provably does not hold now (for seats whose card is not known)."""
        self.under: list[Card | None] = []
        """The deck's lowest cards, lowest first, as far as this seat put them there (None: another's)."""
        self.deck: int | None = None
        """Cards in the deck, as counted from the events; None when a fault left the count unsure."""
        self.own: Card | None = None
        """This seat's card between its turns, while it knows it (what it gives away to a King)."""
        self._baron: tuple[int, int] | None = None
        """The two players of a Baron just played, for the winner of one between two others."""
        self._counts = dict(ruleset.counts)
        self._rules = _RULES(ruleset)

    # -- feeding -------------------------------------------------------------------------------------------------

    def observe(self, events: Iterable[Event]) -> None:
        for event in events:  # by type, the commonest first (an isinstance chain took a third of following them)
            kind = type(event)
            if kind is PlayEvent:
                self._played(event)  # type: ignore[arg-type]
            elif kind is OutEvent:
                self._out(event)  # type: ignore[arg-type]
            elif kind is DiscardEvent:
                self._discarded(event)  # type: ignore[arg-type]
            elif kind is ChancellorEvent:
                self._chancellor(event)  # type: ignore[arg-type]
            elif kind is RoundStartEvent:
                self._round_start(event)  # type: ignore[arg-type]
            elif kind is RoundEnded:
                self._reset(None)
            elif kind is Faulted:
                self._faulted()

    def _faulted(self) -> None:
        self.deck = None  # a seat out on its own turn had drawn: the count is lost till the next view
        self.under.clear()

    def _reset(self, deck: int | None) -> None:
        self.known.clear()
        self.excluded.clear()
        self.under.clear()
        self.deck = deck
        self.own = None
        self._baron = None

    def _round_start(self, event: RoundStartEvent) -> None:
        dealt = 1 + len(event.removed_face_up) + len(event.players_in)  # the set-aside card, face up, hands
        self._reset(self._rules.deck - dealt)
        self.own = event.hand[0] if event.hand else None

    def _played(self, event: PlayEvent) -> None:
        player, card, target = event.seat, event.card, event.target
        self._baron = None
        if player != self.seat:  # this seat's own draws are read from its views
            deck = self.deck
            if deck is not None and len(self.under) < deck:  # nothing it put there is drawn: _draw, most often
                self.deck = deck - 1
                old = self.known.get(player)
                if old is None or old is card:
                    self._forget(player)  # it may hold the card it drew (_kept)
            else:
                self._kept(player, card, self._draw())
            if card is KING or card is PRINCE:
                self._exclude(player, _ONLY[COUNTESS])  # with the Countess it would have had to play her
        if target is None:
            return
        if card is GUARD and event.hit is False and event.guess is not None:
            self._exclude(target, _ONLY[event.guess])
        elif card is PRIEST and event.seen is not None:
            self._know(target, event.seen)
        elif card is BARON:
            self._baron = (player, target)
            if event.cards is not None:
                (first, first_card), (second, second_card) = event.cards.items()
                if first_card is second_card:  # level: each now knows the other's card
                    self._know(second if first == self.seat else first, first_card)
        elif card is KING:
            self._king(player, target, event.received)

    def _kept(self, player: int, played: Card, drawn: Card | None) -> None:
        """What another seat holds after playing `played` from its old card and the one it drew."""
        if drawn is not None:
            if drawn is not played:
                self._know(player, drawn)
            return  # it played the card drawn (or an old one of the same type): what was known of it holds
        old = self.known.get(player)
        if old is None or old is played:
            self._forget(player)  # it may hold the card it drew

    def _king(self, player: int, target: int, received: Card | None) -> None:
        me = self.seat
        if me in (player, target):
            other = target if player == me else player
            self._forget(other)
            if self.own is not None:
                self._know(other, self.own)
            self.own = received
            return
        _swap(self.known, player, target)  # the hands changed places: so does what was known of them
        _swap(self.excluded, player, target)

    def _discarded(self, event: DiscardEvent) -> None:
        drawn = None if event.drew_set_aside else self._draw()
        if event.seat == self.seat:
            self.own = drawn
            return
        self._forget(event.seat)
        if drawn is not None:
            self._know(event.seat, drawn)

    def _chancellor(self, event: ChancellorEvent) -> None:
        if event.seat == self.seat:
            return  # this seat's own: read from its view and its answer
        for _ in range(event.drew):
            self._draw()
        self._forget(event.seat)
        self._bury([None] * event.returned)

    def _out(self, event: OutEvent) -> None:
        self._forget(event.seat)
        if event.cause is OutCause.BARON and self._baron is not None and event.seat in self._baron:
            first, second = self._baron
            winner = second if event.seat == first else first
            self._exclude(winner, self._rules.at_most[event.card])

    def _know(self, seat: int, card: Card) -> None:
        if seat != self.seat:
            self.known[seat] = card
            self.excluded.pop(seat, None)

    def _forget(self, seat: int) -> None:
        self.known.pop(seat, None)
        self.excluded.pop(seat, None)

    def _exclude(self, seat: int, cards: frozenset[Card]) -> None:
        if seat != self.seat and seat not in self.known:
            ruled_out = self.excluded.get(seat)
            self.excluded[seat] = cards if ruled_out is None else ruled_out | cards

    def _draw(self) -> Card | None:
        """A card drawn from the deck: the one this seat put there, if it did."""
        if self.deck is None:
            return None
        if self.deck <= 0:
            self.deck = None
            self.under.clear()
            return None
        self.deck -= 1
        return self.under.pop() if len(self.under) > self.deck else None

    def _bury(self, lowest_first: list[Card | None]) -> None:
        if self.deck is None:
            return
        self.deck += len(lowest_first)
        self.under[:0] = lowest_first
        while self.under and self.under[-1] is None:
            self.under.pop()  # nothing known above the last card this seat put there

    # -- judging -------------------------------------------------------------------------------------------------

    def judge(self, view: View, action: Action) -> tuple[Bet | None, dict[int, Odds]]:
        """What this answer to `view` bets on the target's card, where the replay shows whether it won, and with a bet
        the odds of every opponent the seat could aim at (else none: working them out is most of the cost); then the
        seat holds what it keeps."""
        self._sync(view.deck)
        if isinstance(action, Keep):
            self.own = action.keep
            self._bury(list(reversed(action.bottom)))
            return None, {}
        rest = list(view.hand)
        rest.remove(action.card)
        kept = rest[0] if rest else None
        self.own = kept
        target = action.target
        if target is None or target == self.seat:
            return None, {}
        if action.card is GUARD and action.guess is not None:
            wins = frozenset({action.guess})
        elif action.card is PRINCE:
            wins = frozenset({PRINCESS})
        elif action.card is BARON and kept is not None:
            wins = self._rules.below[kept]
        else:
            return None, {}
        odds = self.chances(view)
        against = odds.get(target) or self.odds(view, target)
        return Bet(_KINDS[action.card], wins, tuple(sorted((c, p) for c, p in against.items() if c in wins))), odds

    def _sync(self, deck: int) -> None:
        """The seat's own draws, from its view: the cards it put under the deck that are left are the lowest."""
        if self.deck is None or deck > self.deck:
            self.under.clear()
        else:
            del self.under[deck:]
        self.deck = deck

    def odds(self, view: View, target: int) -> Odds:
        """The chance of each card being `target`'s now, over every deal consistent with what this seat knows (at a
        play decision, once `judge` has read the view: the view's hand holds what the seat drew)."""
        return self._odds(view, [target])[target]

    def chances(self, view: View) -> dict[int, Odds]:
        """The odds of every opponent the seat could aim at now (as `odds`)."""
        players = view.players
        return self._odds(view, [t for t, p in enumerate(players) if t != self.seat and p.in_round and not p.protected])

    def _odds(self, view: View, targets: list[int]) -> dict[int, Odds]:
        known, excluded = self.known, self.excluded
        found: dict[int, Odds] = {t: {known[t]: 1.0} for t in targets if t in known}
        unknown = [t for t in targets if t not in found]
        if unknown:
            players = view.players
            bound = {s: cards for s, cards in excluded.items() if players[s].in_round and s not in known}
            found.update(posteriors(self.unseen(view), bound, unknown))
        return found

    def unseen(self, view: View) -> dict[Card, int]:
        """The cards whose place this seat does not know: in an unknown hand, set aside, or in the deck (a plain
        dict counted by hand: a Counter's arithmetic was most of a decision's cost)."""
        pool = self._counts.copy()
        for card in view.hand:
            pool[card] -= 1
        for card in view.removed_face_up:
            pool[card] -= 1
        for card in self.known.values():
            pool[card] -= 1
        for player in view.players:
            for card in player.discards:
                pool[card] -= 1
        for buried in self.under:
            if buried is not None:
                pool[buried] -= 1
        return {card: count for card, count in pool.items() if count > 0}


def _swap(table: dict[int, T], first: int, second: int) -> None:
    a, b = table.pop(first, None), table.pop(second, None)
    if a is not None:
        table[second] = a
    if b is not None:
        table[first] = b


def posterior(pool: Mapping[Card, int], excluded: dict[int, frozenset[Card]], target: int) -> Odds:
    """The chance of each card being `target`'s, the unseen cards `pool` dealt uniformly over the hidden places
    (hands, the set-aside card, the deck), given the cards each constrained seat is known not to hold."""
    return posteriors(pool, excluded, [target])[target]


def posteriors(
    pool: Mapping[Card, int], excluded: dict[int, frozenset[Card]], targets: Sequence[int]
) -> dict[int, dict[Card, float]]:
    """`posterior` for several targets at once.

    The seats without constraints are exchangeable with the deck, so only the constrained ones are enumerated,
    once for all targets: each joint hand weighs the number of ways to deal its cards from the pool."""
    total = sum(pool.values())
    if total <= 0:
        return {target: {} for target in targets}
    if not excluded:
        odds = {card: count / total for card, count in pool.items()}
        return dict.fromkeys(targets, odds)
    if len(excluded) == 1:
        return _one_constrained(pool, excluded, targets, total)
    seats = list(excluded)
    choices = [[card for card in pool if card not in excluded[seat]] for seat in seats]
    if _product(len(cards) for cards in choices) > ENUMERATED:
        return {target: posterior(pool, _only(excluded, target), target) for target in targets}
    held: dict[int, defaultdict[Card, float]] = {seat: defaultdict(float) for seat in seats}
    mass = 0
    for hands in itertools.product(*choices):
        weight = _ways(pool, hands)
        if weight:
            mass += weight
            for seat, card in zip(seats, hands, strict=True):
                held[seat][card] += weight
    free: dict[Card, float] = {}
    rest = total - len(seats)
    if rest > 0 and any(target not in excluded for target in targets):
        # An unconstrained place holds each card the constrained hands left: its count times every joint hand's
        # weight, less the weight of the hands that hold it, over the places left.
        for card, count in pool.items():
            free[card] = (count * mass - sum((held[seat].get(card, 0.0) for seat in seats), 0.0)) / rest
    return {target: _normal(held.get(target, free), pool, total) for target in targets}


def _one_constrained(
    pool: Mapping[Card, int], excluded: dict[int, frozenset[Card]], targets: Sequence[int], total: int
) -> dict[int, Odds]:
    """`posteriors` with one constrained seat, in closed form (the most common case by far): that seat holds each
    card it may hold as often as the pool has it; every other place, each card as often as the pool has it, less
    the share of the constrained seat holding it."""
    ((seat, ruled_out),) = excluded.items()
    allowed = {card: count for card, count in pool.items() if card not in ruled_out}
    mass = sum(allowed.values())
    if mass <= 0:
        odds = _normal({}, pool, total)
        return dict.fromkeys(targets, odds)
    found: dict[int, Odds] = {}
    if seat in targets:
        found[seat] = {card: count / mass for card, count in allowed.items()}
    if any(target != seat for target in targets):
        # Each card's weight is its count times every hand of that seat, less the hands that hold it; the weights
        # sum to the hands times the places left.
        places = mass * (total - 1)
        free = (
            {
                card: weight / places
                for card, count in pool.items()
                if (weight := count * mass - allowed.get(card, 0)) > 0
            }
            if places > 0
            else {}
        )
        free = free or _normal({}, pool, total)
        found.update((target, free) for target in targets if target != seat)
    return {target: found[target] for target in targets}


def _only(excluded: dict[int, frozenset[Card]], target: int) -> dict[int, frozenset[Card]]:
    return {target: excluded[target]} if target in excluded else {}


def _normal(weights: dict[Card, float], pool: Mapping[Card, int], total: int) -> Odds:
    """The weights as chances; constraints that contradict each other (none should) leave the counts alone."""
    mass = sum(weights.values())
    if mass <= 0:
        return {card: count / total for card, count in pool.items()}
    return {card: weight / mass for card, weight in weights.items() if weight > 0}


def _ways(pool: Mapping[Card, int], hands: Sequence[Card]) -> int:
    """The ways to deal `hands` from the pool (its cards told apart)."""
    weight, used = 1, dict[Card, int]()
    for card in hands:
        taken = used.get(card, 0)
        weight *= pool[card] - taken
        if weight <= 0:
            return 0
        used[card] = taken + 1
    return weight


def _product(sizes: Iterable[int]) -> int:
    result = 1
    for size in sizes:
        result *= size
    return result

"""Provable mistakes: moves that were wrong whatever the hidden cards were, judged from one seat's own information.

A `Seat` is fed exactly what the bot was told, in order: the events it received and, at each of its decisions,
its view (the content of its `act` message) and the answer it gave. Nothing of the full-information record ever
reaches it, so a move is judged only by what the bot could know. docs/diagnostics.md defines each category.

What a seat provably knows of another seat's card comes from its own Priest, a King trade it took part in, and a
Baron it took part in that ended level. It lasts while the holder provably keeps the card: playing a card of
another type keeps it (the card played was the one drawn); playing one of the same type, a Prince's discard, a
Chancellor, a King trade with someone else, going out or the round's end loses it.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from arena.engine import (
    Action,
    Card,
    DiscardEvent,
    Event,
    OutEvent,
    Play,
    PlayEvent,
    RoundEnded,
    RoundStartEvent,
    Ruleset,
    View,
)

GUARD, PRIEST, BARON, PRINCE, CHANCELLOR, KING, PRINCESS = (
    Card.GUARD,
    Card.PRIEST,
    Card.BARON,
    Card.PRINCE,
    Card.CHANCELLOR,
    Card.KING,
    Card.PRINCESS,
)
"""An enum member looked up on its class costs more than a name: the judge reads these at every event."""
_CAN_BE_MISTAKES = frozenset({GUARD, BARON, PRINCE, PRINCESS})
"""The only cards whose play can be a mistake of any category: the others are judged no further."""


class Category(StrEnum):
    SELF_ELIMINATION = "self-elimination"
    """Playing the Princess, or a Prince on oneself while holding her, when another legal play keeps one in."""
    IMPOSSIBLE_GUESS = "impossible-guess"
    """A Guard naming a card type every copy of which the guesser can see, when another guess names a card it
    cannot see every copy of."""
    MISSED_KNOWN_GUESS = "missed-known-guess"
    """A Guard on a player whose card the guesser provably knows, naming another card."""
    KNOWN_LOSING_BARON = "known-losing-baron"
    """A Baron on a player whose card the player provably knows to be higher than the one it keeps, when another
    legal play is no sure loss."""


class Seat:
    """One seat's knowledge through a match, and the judge of its moves."""

    def __init__(self, seat: int, ruleset: Ruleset) -> None:
        self.seat = seat
        self.ruleset = ruleset
        self.known: dict[int, Card] = {}
        """Other seats' cards this seat provably knows now."""
        self._own: Card | None = None
        """This seat's card between its turns, while it knows it (a Prince's discard makes it draw unseen)."""

    def observe(self, events: Iterable[Event]) -> None:
        for event in events:
            kind = type(event)
            if kind is PlayEvent:
                self._played(event)  # type: ignore[arg-type]
            elif kind is DiscardEvent or kind is OutEvent:
                seat = event.seat  # type: ignore[union-attr]
                self.known.pop(seat, None)
                if seat == self.seat and kind is DiscardEvent:
                    self._own = None
            elif kind is RoundStartEvent:
                self.known.clear()
                self._own = event.hand[0] if event.hand else None  # type: ignore[union-attr]
            elif kind is RoundEnded:
                self.known.clear()
                self._own = None

    def _played(self, event: PlayEvent) -> None:
        me, player, target = self.seat, event.seat, event.target
        if player != me and (event.card is CHANCELLOR or self.known.get(player) is event.card):
            self.known.pop(player, None)  # it may have played the card known, or kept another it drew
        if event.card is PRIEST and player == me and target is not None and event.seen is not None:
            self.known[target] = event.seen
        elif event.card is BARON and event.cards is not None:
            (first, first_card), (second, second_card) = event.cards.items()
            if first_card is second_card:  # level: each now knows the other's card
                self.known[second if first == me else first] = first_card
        elif event.card is KING and target is not None:
            self._king(player, target, event.received)

    def _king(self, player: int, target: int, received: Card | None) -> None:
        me = self.seat
        if me not in (player, target):
            self.known.pop(player, None)
            self.known.pop(target, None)
            return
        other = target if player == me else player
        given = self._own  # what this seat held besides the King (player) or all it held (target)
        self.known.pop(other, None)
        if given is not None:
            self.known[other] = given
        self._own = received

    def judge(self, view: View, action: Action) -> Category | None:
        """The mistake this answer to `view` provably is, if any; then the seat's own card is the one it keeps."""
        if type(action) is not Play:
            self._own = action.keep  # type: ignore[union-attr]
            return None
        hand = view.hand
        self._own = hand[1] if hand[0] is action.card and len(hand) > 1 else hand[0]
        return self._mistake(view, action) if action.card in _CAN_BE_MISTAKES else None

    def _mistake(self, view: View, play: Play) -> Category | None:
        """A sure loss counts only where another legal play is none: the Princess beside a Baron on a known
        higher card is no mistake of either kind."""
        if self._eliminates(view, play) and self._escape(view):
            return Category.SELF_ELIMINATION
        known = self.known.get(play.target) if play.target is not None else None
        if play.card is GUARD and play.guess is not None:
            if self._all_seen(view, play.guess) and self._some_guess(view, play.target):
                return Category.IMPOSSIBLE_GUESS
            if known is not None and known is not GUARD and known is not play.guess:
                return Category.MISSED_KNOWN_GUESS
        if self._loses_baron(view, play) and self._escape(view):
            return Category.KNOWN_LOSING_BARON
        return None

    def _escape(self, view: View) -> bool:
        """Whether some legal play neither puts this seat out nor loses a Baron for sure."""
        return any(
            isinstance(other, Play) and not self._eliminates(view, other) and not self._loses_baron(view, other)
            for other in view.legal
        )

    def _loses_baron(self, view: View, play: Play) -> bool:
        """A Baron on a player whose card this seat knows to be higher than the one it keeps."""
        known = self.known.get(play.target) if play.card is BARON and play.target is not None else None
        if known is None:
            return False
        kept = list(view.hand)
        kept.remove(BARON)
        return bool(kept) and self.ruleset.values[known] > self.ruleset.values[kept[0]]

    def _eliminates(self, view: View, play: Play) -> bool:
        """Whether the play surely puts this seat out: the Princess, or a Prince on itself beside her."""
        if play.card is PRINCESS:
            return True
        if play.card is PRINCE and play.target == self.seat:
            rest = list(view.hand)
            rest.remove(PRINCE)
            return PRINCESS in rest
        return False

    def _some_guess(self, view: View, target: int | None) -> bool:
        """Whether some Guard guess on `target` names a card not all of whose copies are in sight: where none does,
        the Guard can hit nothing, and naming one card or another is no mistake."""
        return any(
            type(other) is Play
            and other.card is GUARD
            and other.target == target
            and other.guess is not None
            and not self._all_seen(view, other.guess)
            for other in view.legal
        )

    def _all_seen(self, view: View, card: Card) -> bool:
        """Every copy of `card` is face up this round (a discard, a 2-player face-up card) or in this seat's hand."""
        seen = sum(player.discards.count(card) for player in view.players)
        seen += view.removed_face_up.count(card) + view.hand.count(card)
        return seen >= self.ruleset.counts.get(card, 0)

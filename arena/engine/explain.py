"""Why an answer is not legal, in words a bot author can act on."""

from __future__ import annotations

from collections.abc import Sequence

from arena.engine.actions import TARGETED, Decision, DecisionKind, Keep, Play
from arena.engine.cards import Card
from arena.engine.views import View


def explain_illegal(action: object, decision: Decision, hand: Sequence[Card], view: View) -> str:
    """The rule that `action` breaks (called only once an answer was found not legal)."""
    names = ", ".join(card.label for card in hand)
    if decision.kind is DecisionKind.PLAY:
        if not isinstance(action, Play):
            return "a card must be played now, not a chancellor choice"
        return _explain_play(action, decision, hand, view, names)
    if not isinstance(action, Keep):
        return "the chancellor's choice is due: keep one card and put the others under the deck"
    if action.keep not in hand:
        return f"{_label(action.keep)} is not among your cards ({names})"
    rest = list(hand)
    rest.remove(action.keep)
    if sorted(action.bottom) != sorted(rest):
        expected = ", ".join(card.label for card in rest)
        return f"bottom must hold the cards you do not keep ({expected}), each once"
    return "not one of the legal answers"


def _label(card: object) -> str:
    return card.label if isinstance(card, Card) else repr(card)


def _explain_play(action: Play, decision: Decision, hand: Sequence[Card], view: View, names: str) -> str:
    card, target, guess = action.card, action.target, action.guess
    seat = decision.seat
    if card not in hand:
        return f"{_label(card)} is not in your hand ({names})"
    if Card.COUNTESS in hand and (Card.KING in hand or Card.PRINCE in hand) and card is not Card.COUNTESS:
        return "you hold the countess with a king or a prince: you must play the countess"
    if guess is not None and card is not Card.GUARD:
        return f"only a guard names a card; {card.label} does not"
    takes_target = card in TARGETED or card in (Card.GUARD, Card.PRINCE)
    if target is not None and not takes_target:
        return f"{card.label} chooses no player"
    choosable = [p for p, player in enumerate(view.players) if p != seat and player.in_round and not player.protected]
    if target is None and takes_target:
        if card is Card.PRINCE:
            return "a prince must choose a player (yourself, when nobody else can be chosen)"
        if choosable:
            return f"{card.label} must choose a player while someone can be chosen"
    if target is not None:
        if not (isinstance(target, int) and 0 <= target < len(view.players)):
            return f"there is no seat {target!r}"
        if target == seat and card is not Card.PRINCE:
            return f"{card.label} must choose another player"
        if target != seat:
            player = view.players[target]
            if not player.in_round:
                return f"seat {target} is out of the round and cannot be chosen"
            if player.protected:
                return f"seat {target} is protected by the handmaid and cannot be chosen"
    if card is Card.GUARD:
        if target is not None and guess is None:
            return "a guard must name a card"
        if target is None and guess is not None:
            return "a guard with nobody to choose names no card"
        if guess is Card.GUARD:
            return "a guard may not name guard"
        if guess is not None and not any(a.guess is guess for a in decision.legal if isinstance(a, Play)):
            return f"{_label(guess)} is not a card of this ruleset"
    return "not one of the legal answers"

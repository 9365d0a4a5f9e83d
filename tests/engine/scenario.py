"""Build rounds with chosen cards and play them out, for scenario tests of the rules."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from arena.engine import (
    RULESETS,
    Card,
    Deal,
    DecisionKind,
    Keep,
    Match,
    Phase,
    Play,
    Record,
)

C = Card.from_label


def make_deal(
    ruleset: str,
    hands: Sequence[str | None],
    top: Sequence[str] = (),
    *,
    set_aside: str | None = None,
    face_up: Sequence[str] | None = None,
    bottom: Sequence[str] = (),
    first: int = 0,
) -> Deal:
    """A legal deal: the given cards where asked, every other card of the deck in between.

    `hands[s]` None means seat s is not dealt in (disqualified). Cards not placed go to the
    set-aside slot and the face-up cards first (highest cards first), then into the deck
    between `top` and `bottom`, lowest first.
    """
    pool = Counter(RULESETS[ruleset].deck)

    def take(label: str) -> Card:
        card = C(label)
        assert pool[card] > 0, f"no {label} left in the {ruleset} deck"
        pool[card] -= 1
        return card

    dealt = tuple(() if hand is None else (take(hand),) for hand in hands)
    top_cards = [take(label) for label in top]
    bottom_cards = [take(label) for label in bottom]
    aside = take(set_aside) if set_aside else None
    shown = [take(label) for label in face_up] if face_up is not None else None
    rest = sorted(pool.elements())
    if aside is None:
        aside = rest.pop()
    players_in = sum(hand is not None for hand in hands)
    if shown is None:
        shown = [rest.pop() for _ in range(3)] if players_in == 2 else []
    return Deal(first, aside, tuple(shown), dealt, tuple(top_cards + rest + bottom_cards))


def start(ruleset: str, hands: Sequence[str], top: Sequence[str] = (), seed: int = 1, **deal: object) -> Match:
    """A match whose first round is dealt as asked."""
    match = Match(RULESETS[ruleset], [f"p{seat}" for seat in range(len(hands))], seed)
    match.deal_round(make_deal(ruleset, hands, top, **deal))  # type: ignore[arg-type]
    return match


def play(match: Match, card: str, target: int | None = None, guess: str | None = None) -> None:
    match.apply(Play(C(card), target, None if guess is None else C(guess)))


def keep(match: Match, card: str, bottom: Sequence[str]) -> None:
    match.apply(Keep(C(card), tuple(C(label) for label in bottom)))


def hand(match: Match, seat: int) -> list[str]:
    return [card.label for card in match.state().hands[seat]]


def records_of(match: Match, kind: type, since: int = 0) -> list[Record]:
    return [record for record in match.records[since:] if isinstance(record, kind)]


def tie_deal_2019(spies: tuple[int, int]) -> dict[str, object]:
    """Both seats hold a guard to the end; spies at the given deck positions."""
    deck = ["guard"] * 4 + ["priest"] * 2 + ["baron"] * 2 + ["handmaid"] * 2 + ["countess", "king"]
    for position in sorted(spies):
        deck.insert(position, "spy")
    return {
        "top": [*deck, "chancellor"],
        "set_aside": "princess",
        "face_up": ["prince", "prince", "chancellor"],
    }


def quick_two_player_round(match: Match, winner: int) -> None:
    """Deal and play a one-turn round of a 2-player 2019 match that `winner` wins."""
    starter = match.first_choices()[0]
    other = 1 - starter
    hands = ["guard", "guard"]
    hands[other] = "priest"
    top = ["handmaid"] if starter == winner else ["princess"]
    match.deal_round(make_deal(match.ruleset.name, hands, top, first=starter))
    if starter == winner:
        play(match, "guard", other, "priest")
    else:
        play(match, "princess")


def quiet_action(match: Match) -> Play | Keep:
    """A move that puts nobody out and keeps the hands as they are, preferring the drawn card.

    Uses full information. Raises AssertionError where the deal leaves no such move.
    """
    decision = match.decision
    assert decision is not None
    state = match.state()
    seat = decision.seat
    held, drawn = state.hands[seat][0], state.hands[seat][-1]
    if decision.kind is DecisionKind.CHANCELLOR:
        return decision.legal[0]

    def harmless(action: Play | Keep) -> bool:
        assert isinstance(action, Play)
        card, target = action.card, action.target
        kept = drawn if card is held else held
        theirs = None if target is None else state.hands[target][0]
        if card is Card.PRINCESS or card is Card.PRINCE:
            return False
        if card is Card.CHANCELLOR:
            return not state.deck
        if target is None:
            return True
        if card is Card.GUARD:
            return theirs is not action.guess
        if card in (Card.BARON, Card.KING):
            return match.ruleset.values[kept] == match.ruleset.values[theirs]  # type: ignore[index]
        return True

    quiet = [action for action in decision.legal if harmless(action)]
    assert quiet, f"no quiet move for seat {seat} holding {state.hands[seat]}"
    preferred = [action for action in quiet if isinstance(action, Play) and action.card is drawn]
    return (preferred or quiet)[0]


def drain(match: Match, deck: int) -> None:
    """Play quiet moves until a decision is due with `deck` cards left to draw."""
    while len(match.state().deck) > deck:
        assert match.phase is Phase.DECIDE, "the round ended before the deck ran down"
        match.apply(quiet_action(match))
    assert match.phase is Phase.DECIDE


def finish_round(match: Match) -> None:
    """Play quiet moves until the round is over."""
    round_number = match.round
    while match.phase is Phase.DECIDE and match.round == round_number:
        match.apply(quiet_action(match))

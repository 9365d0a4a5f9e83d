"""Each card's effect, as RULES.md rules it, in both rulesets where the card exists."""

from __future__ import annotations

import pytest

from arena.engine import (
    Card,
    ChancellorResolved,
    DecisionKind,
    Discarded,
    IllegalAction,
    Keep,
    OutCause,
    Play,
    Played,
    RoundEnded,
    WentOut,
    project,
)
from tests.engine.scenario import C, drain, hand, keep, play, records_of, start

BOTH = pytest.mark.parametrize("ruleset", ["2019", "classic"])


@BOTH
def test_guard_naming_the_card_puts_the_target_out(ruleset: str) -> None:
    match = start(ruleset, ["guard", "priest", "baron"], ["handmaid"])
    play(match, "guard", 1, "priest")
    state = match.state()
    assert state.in_round == (True, False, True)
    assert state.discards[1] == (Card.PRIEST,)
    assert records_of(match, WentOut) == [WentOut(1, (Card.PRIEST,), OutCause.GUARD)]
    assert records_of(match, Played)[-1].hit is True
    assert match.decision is not None and match.decision.seat == 2


@BOTH
def test_guard_naming_another_card_does_nothing(ruleset: str) -> None:
    match = start(ruleset, ["guard", "priest", "baron"], ["handmaid"])
    play(match, "guard", 1, "baron")
    assert match.state().in_round == (True, True, True)
    assert records_of(match, Played)[-1].hit is False


@BOTH
def test_guard_may_not_name_guard(ruleset: str) -> None:
    match = start(ruleset, ["guard", "guard", "baron"], ["handmaid"])
    assert match.decision is not None
    assert not [a for a in match.decision.legal if isinstance(a, Play) and a.guess is Card.GUARD]
    with pytest.raises(IllegalAction, match="a guard may not name guard"):
        play(match, "guard", 1, "guard")


def test_guard_may_name_spy_in_2019() -> None:
    match = start("2019", ["guard", "spy", "baron"], ["handmaid"])
    assert match.decision is not None
    guesses = [a.guess for a in match.decision.legal if isinstance(a, Play) and a.target == 1]
    assert guesses == [
        C(c) for c in ["spy", "priest", "baron", "handmaid", "prince", "chancellor", "king", "countess", "princess"]
    ]
    play(match, "guard", 1, "spy")
    assert match.state().in_round == (True, False, True)


def test_classic_guard_names_only_classic_cards() -> None:
    match = start("classic", ["guard", "priest", "baron"], ["handmaid"])
    assert match.decision is not None
    guesses = [a.guess for a in match.decision.legal if isinstance(a, Play) and a.target == 1]
    assert guesses == [C(c) for c in ["priest", "baron", "handmaid", "prince", "king", "countess", "princess"]]
    with pytest.raises(IllegalAction, match="spy is not a card of this ruleset"):
        play(match, "guard", 1, "spy")


@BOTH
def test_priest_shows_the_card_to_its_player_alone(ruleset: str) -> None:
    match = start(ruleset, ["priest", "king", "guard"], ["guard"])
    play(match, "priest", 1)
    played = records_of(match, Played)[-1]
    assert played.seen is Card.KING
    assert project(played, 0).seen is Card.KING
    assert project(played, 1).seen is None
    assert project(played, 2).seen is None


@BOTH
def test_baron_puts_the_lower_hand_out(ruleset: str) -> None:
    match = start(ruleset, ["baron", "guard", "priest"], ["king"])
    play(match, "baron", 1)
    assert records_of(match, WentOut) == [WentOut(1, (Card.GUARD,), OutCause.BARON)]
    played = records_of(match, Played)[-1]
    assert dict(played.compared) == {0: Card.KING, 1: Card.GUARD}
    assert project(played, 0).cards == {0: Card.KING, 1: Card.GUARD}
    assert project(played, 1).cards == {0: Card.KING, 1: Card.GUARD}
    assert project(played, 2).cards is None


@BOTH
def test_baron_player_with_the_lower_hand_goes_out(ruleset: str) -> None:
    match = start(ruleset, ["baron", "priest", "guard"], ["guard"])
    play(match, "baron", 1)
    assert records_of(match, WentOut) == [WentOut(0, (Card.GUARD,), OutCause.BARON)]
    assert match.decision is not None and match.decision.seat == 1


@BOTH
def test_baron_tie_puts_nobody_out(ruleset: str) -> None:
    match = start(ruleset, ["baron", "guard", "priest"], ["guard"])
    play(match, "baron", 1)
    assert match.state().in_round == (True, True, True)
    assert records_of(match, WentOut) == []


@BOTH
def test_handmaid_protects_until_her_players_next_turn(ruleset: str) -> None:
    match = start(ruleset, ["handmaid", "guard", "guard"], ["priest", "priest", "guard", "guard"])
    play(match, "handmaid")
    assert match.state().protected == (True, False, False)
    assert match.decision is not None
    assert {a.target for a in match.decision.legal} == {2}
    with pytest.raises(IllegalAction, match="seat 0 is protected by the handmaid"):
        play(match, "priest", 0)
    play(match, "priest", 2)
    play(match, "guard", 1, "baron")
    assert match.decision is not None and match.decision.seat == 0
    assert match.state().protected == (False, False, False)


@BOTH
def test_when_everyone_else_is_protected_cards_have_no_effect_and_prince_takes_yourself(ruleset: str) -> None:
    match = start(ruleset, ["handmaid", "guard"], ["baron", "prince"])
    play(match, "handmaid")
    assert match.decision is not None
    assert set(match.decision.legal) == {Play(Card.GUARD), Play(Card.PRINCE, 1)}
    with pytest.raises(IllegalAction, match="a prince must choose a player"):
        play(match, "prince")
    play(match, "guard")
    assert records_of(match, Played)[-1] == Played(1, Card.GUARD)
    assert match.state().in_round == (True, True)


@BOTH
@pytest.mark.parametrize(("held", "drawn"), [("king", "priest"), ("priest", "baron"), ("baron", "king")])
def test_no_effect_plays_of_priest_baron_and_king(ruleset: str, held: str, drawn: str) -> None:
    match = start(ruleset, ["handmaid", held], ["guard", drawn])
    play(match, "handmaid")
    assert match.decision is not None
    assert set(match.decision.legal) == {Play(C(held)), Play(C(drawn))}
    play(match, drawn)
    assert records_of(match, Played)[-1] == Played(1, C(drawn))
    assert hand(match, 1) == [held]
    assert match.state().in_round == (True, True)


@BOTH
def test_prince_makes_the_target_discard_and_draw(ruleset: str) -> None:
    match = start(ruleset, ["prince", "guard", "priest"], ["baron", "handmaid"])
    play(match, "prince", 1)
    assert records_of(match, Discarded) == [Discarded(1, Card.GUARD, Card.HANDMAID, False)]
    assert hand(match, 1)[0] == "handmaid"  # then seat 1 draws for its turn
    assert match.state().discards[1] == (Card.GUARD,)


@BOTH
def test_prince_on_yourself(ruleset: str) -> None:
    match = start(ruleset, ["prince", "guard", "priest"], ["baron", "handmaid"])
    play(match, "prince", 0)
    assert records_of(match, Discarded) == [Discarded(0, Card.BARON, Card.HANDMAID, False)]
    assert match.state().discards[0] == (Card.PRINCE, Card.BARON)


@BOTH
def test_prince_discarding_the_princess_puts_her_holder_out_without_a_draw(ruleset: str) -> None:
    match = start(ruleset, ["prince", "princess", "guard"], ["guard", "priest"])
    deck_before = len(match.state().deck)
    play(match, "prince", 1)
    assert records_of(match, WentOut) == [WentOut(1, (Card.PRINCESS,), OutCause.PRINCESS)]
    assert records_of(match, Discarded) == []
    assert match.state().discards[1] == (Card.PRINCESS,)
    assert len(match.state().deck) == deck_before - 1  # only seat 2's turn draw


@BOTH
def test_prince_on_yourself_holding_the_princess(ruleset: str) -> None:
    match = start(ruleset, ["prince", "guard", "guard"], ["princess"])
    play(match, "prince", 0)
    assert records_of(match, WentOut) == [WentOut(0, (Card.PRINCESS,), OutCause.PRINCESS)]


def _empty_deck_deal(ruleset: str) -> dict[str, object]:
    """Two princes in hand, every card that would break a quiet round out of the deck."""
    if ruleset == "2019":
        return {"set_aside": "princess", "face_up": ["countess", "king", "chancellor"]}
    return {"set_aside": "baron", "face_up": ["princess", "king", "countess"]}


@BOTH
def test_prince_on_an_empty_deck_takes_the_set_aside_card(ruleset: str) -> None:
    deal = _empty_deck_deal(ruleset)
    match = start(ruleset, ["prince", "prince"], **deal)
    drain(match, deck=0)
    assert match.decision is not None
    seat = match.decision.seat
    target = 1 - seat if not match.state().protected[1 - seat] else seat
    play(match, "prince", target)
    discarded = records_of(match, Discarded)[-1]
    assert discarded.seat == target and discarded.drew_set_aside
    assert discarded.drew is C(deal["set_aside"])
    assert match.state().set_aside is None
    [ended] = records_of(match, RoundEnded)
    assert ended.set_aside is None
    assert ended.revealed[target] is C(deal["set_aside"])


def test_chancellor_with_two_or_more_cards_in_the_deck() -> None:
    match = start("2019", ["chancellor", "guard", "guard"], ["priest", "baron", "handmaid", "king"])
    play(match, "chancellor")
    decision = match.decision
    assert decision is not None and decision.kind is DecisionKind.CHANCELLOR and decision.seat == 0
    assert hand(match, 0) == ["priest", "baron", "handmaid"]
    assert len(decision.legal) == 6
    assert Keep(Card.BARON, (Card.PRIEST, Card.HANDMAID)) in decision.legal
    deck_before = match.state().deck
    keep(match, "baron", ["priest", "handmaid"])
    assert hand(match, 0) == ["baron"]
    deck = match.state().deck
    assert deck[-2:] == (Card.PRIEST, Card.HANDMAID)  # handmaid ends at the very bottom
    assert len(deck) == len(deck_before) + 2 - 1  # seat 1 has drawn since
    assert records_of(match, ChancellorResolved) == [
        ChancellorResolved(0, (Card.BARON, Card.HANDMAID), Card.BARON, (Card.PRIEST, Card.HANDMAID))
    ]


def _chancellor_deal() -> dict[str, object]:
    return {"set_aside": "princess", "face_up": ["countess", "king", "prince"]}


def test_chancellor_with_one_card_in_the_deck_and_the_round_goes_on() -> None:
    match = start("2019", ["chancellor", "chancellor"], **_chancellor_deal())
    drain(match, deck=1)
    decision = match.decision
    assert decision is not None
    seat = decision.seat
    assert Card.CHANCELLOR in match.state().hands[seat]
    play(match, "chancellor")
    decision = match.decision
    assert decision is not None and decision.kind is DecisionKind.CHANCELLOR
    cards = match.state().hands[seat]
    assert len(cards) == 2 and len(match.state().deck) == 0
    keep(match, cards[0].label, [cards[1].label])
    assert records_of(match, ChancellorResolved)[-1].drawn == (cards[1],)
    # the card put back is drawn by the next player: the round goes on
    assert match.decision is not None and match.decision.seat == 1 - seat
    assert len(match.state().deck) == 0
    assert match.state().hands[1 - seat][-1] is cards[1]


def test_chancellor_with_an_empty_deck_has_no_effect() -> None:
    match = start("2019", ["chancellor", "chancellor"], **_chancellor_deal())
    drain(match, deck=1)
    play(match, "chancellor")
    cards = match.state().hands[match.decision.seat]  # type: ignore[union-attr]
    keep(match, cards[0].label, [cards[1].label])
    seat = match.decision.seat  # type: ignore[union-attr]
    assert Card.CHANCELLOR in match.state().hands[seat] and not match.state().deck
    play(match, "chancellor")
    assert records_of(match, ChancellorResolved)[-1] == ChancellorResolved(seat, (), None, ())
    assert len(records_of(match, RoundEnded)) == 1  # that turn ended with the deck empty


@BOTH
def test_king_trades_hands_and_each_trader_learns_what_it_got(ruleset: str) -> None:
    match = start(ruleset, ["king", "guard", "priest"], ["baron"])
    play(match, "king", 1)
    assert hand(match, 0) == ["guard"]
    assert hand(match, 1)[0] == "baron"  # then seat 1 draws for its turn
    played = records_of(match, Played)[-1]
    assert project(played, 0).received is Card.GUARD
    assert project(played, 1).received is Card.BARON
    assert project(played, 2).received is None


@BOTH
@pytest.mark.parametrize("royal", ["king", "prince"])
def test_countess_must_be_played_beside_a_king_or_a_prince(ruleset: str, royal: str) -> None:
    match = start(ruleset, ["countess", "guard", "priest"], [royal])
    assert match.decision is not None
    assert match.decision.legal == (Play(Card.COUNTESS),)
    with pytest.raises(IllegalAction, match="you must play the countess"):
        play(match, royal, 1)
    play(match, "countess")
    assert hand(match, 0) == [royal]


@BOTH
def test_countess_may_be_played_at_any_time(ruleset: str) -> None:
    match = start(ruleset, ["countess", "guard", "priest"], ["guard"])
    assert match.decision is not None
    assert Play(Card.COUNTESS) in match.decision.legal
    assert Play(Card.GUARD, 1, Card.PRIEST) in match.decision.legal


def test_cards_taken_with_the_chancellor_never_force_the_countess() -> None:
    match = start("2019", ["chancellor", "guard", "guard"], ["countess", "king", "prince"])
    assert match.decision is not None
    assert Play(Card.CHANCELLOR) in match.decision.legal
    play(match, "chancellor")
    decision = match.decision
    assert decision is not None and decision.kind is DecisionKind.CHANCELLOR
    assert len(decision.legal) == 6
    keep(match, "king", ["countess", "prince"])
    assert hand(match, 0) == ["king"]


@BOTH
def test_playing_the_princess_is_legal_and_puts_you_out(ruleset: str) -> None:
    match = start(ruleset, ["princess", "guard", "guard"], ["priest"])
    assert match.decision is not None
    assert Play(Card.PRINCESS) in match.decision.legal
    play(match, "princess")
    assert records_of(match, WentOut) == [WentOut(0, (Card.PRIEST,), OutCause.PRINCESS)]
    assert match.state().discards[0] == (Card.PRINCESS, Card.PRIEST)


def test_spy_has_no_effect_when_played() -> None:
    match = start("2019", ["spy", "guard", "guard"], ["priest"])
    play(match, "spy")
    assert records_of(match, Played)[-1] == Played(0, Card.SPY)
    assert match.state().in_round == (True, True, True)


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (Play(Card.KING, 1), "king is not in your hand"),
        (Play(Card.GUARD), "guard must choose a player while someone can be chosen"),
        (Play(Card.GUARD, 3), "a guard must name a card"),
        (Play(Card.GUARD, 0, Card.PRIEST), "guard must choose another player"),
        (Play(Card.GUARD, 7, Card.PRIEST), "there is no seat 7"),
        (Play(Card.SPY, None, Card.BARON), "only a guard names a card"),
        (Play(Card.SPY, 1), "spy chooses no player"),
        (Play(Card.GUARD, 2, Card.PRIEST), "seat 2 is out of the round"),
        (Keep(Card.PRIEST, ()), "a card must be played now"),
    ],
)
def test_illegal_answers_name_the_rule_they_break(action: Play | Keep, message: str) -> None:
    match = start("2019", ["guard", "baron", "priest", "guard"], ["guard", "guard", "priest"])
    play(match, "guard", 1, "baron")  # seat 1 out
    play(match, "guard", 3, "priest")  # seat 2 plays: miss; seat 3 holds a guard
    play(match, "guard", 2, "priest")  # seat 3 puts seat 2 out
    assert match.decision is not None and match.decision.seat == 0
    with pytest.raises(IllegalAction, match=message):
        match.apply(action)


def test_illegal_chancellor_choices_name_the_rule() -> None:
    match = start("2019", ["chancellor", "guard", "guard"], ["priest", "baron", "handmaid"])
    play(match, "chancellor")
    with pytest.raises(IllegalAction, match="king is not among your cards"):
        keep(match, "king", ["priest", "baron"])
    with pytest.raises(IllegalAction, match="bottom must hold the cards you do not keep"):
        keep(match, "baron", ["priest"])
    with pytest.raises(IllegalAction, match="chancellor's choice is due"):
        play(match, "guard", 1, "priest")

"""Setting up a round, ending it, the showdown and the Spy bonus."""

from __future__ import annotations

import pytest

from arena.engine import RULESETS, Card, Match, Phase, RoundEnded, RoundStarted
from tests.engine.scenario import drain, finish_round, keep, play, records_of, start, tie_deal_2019


@pytest.mark.parametrize(("ruleset", "deck"), [("2019", 15), ("classic", 10)])
def test_two_players_set_three_cards_aside_face_up_for_everyone_to_see(ruleset: str, deck: int) -> None:
    match = Match(RULESETS[ruleset], ["a", "b"], seed=5)
    match.deal_round()
    [started] = records_of(match, RoundStarted)
    assert len(started.removed_face_up) == 3
    assert len(started.deck) == deck
    for seat in (0, 1):
        assert match.view(seat).removed_face_up == started.removed_face_up
    assert match.view(0).deck == deck - 1  # seat 0 has drawn


@pytest.mark.parametrize(("ruleset", "players"), [("2019", 3), ("2019", 6), ("classic", 4)])
def test_more_players_set_nothing_aside_face_up(ruleset: str, players: int) -> None:
    match = Match(RULESETS[ruleset], ["p"] * players, seed=5)
    match.deal_round()
    [started] = records_of(match, RoundStarted)
    assert started.removed_face_up == ()
    assert len(started.deck) == len(RULESETS[ruleset].deck) - 1 - players


def test_the_round_ends_after_the_turn_of_the_player_who_drew_the_last_card() -> None:
    match = start("2019", ["guard", "guard"], **tie_deal_2019((0, 1)))
    drain(match, deck=0)
    assert match.phase is Phase.DECIDE and records_of(match, RoundEnded) == []
    seat = match.decision.seat  # type: ignore[union-attr]
    play(match, "chancellor")  # the last card: drawn, played, no effect
    [ended] = records_of(match, RoundEnded)
    assert ended.revealed == {0: Card.GUARD, 1: Card.GUARD}
    assert seat == 0


def test_2019_showdown_tie_all_tied_players_win() -> None:
    match = start("2019", ["guard", "guard"], **tie_deal_2019((0, 1)))
    finish_round(match)
    [ended] = records_of(match, RoundEnded)
    assert ended.winners == (0, 1)
    assert ended.tokens == (1, 1)


def _classic_tie_deal(p0_draws: list[str], p1_draws: list[str]) -> dict[str, object]:
    """Both seats keep their guard until each draws a prince last, then hold the prince."""
    top = [card for pair in zip(p0_draws, p1_draws, strict=True) for card in pair]
    return {"top": top, "set_aside": "princess", "face_up": ["guard", "king", "countess"]}


def test_classic_showdown_tie_goes_to_the_highest_discards() -> None:
    deal = _classic_tie_deal(
        ["guard", "baron", "baron", "handmaid", "prince"], ["guard", "priest", "priest", "handmaid", "prince"]
    )
    match = start("classic", ["guard", "guard"], **deal)
    finish_round(match)
    [ended] = records_of(match, RoundEnded)
    assert ended.revealed == {0: Card.PRINCE, 1: Card.PRINCE}
    assert ended.winners == (0,)  # discards 1+3+3+4+1 against 1+2+2+4+1


def test_classic_showdown_tie_with_equal_discards_all_win() -> None:
    deal = _classic_tie_deal(
        ["guard", "priest", "baron", "handmaid", "prince"], ["guard", "priest", "baron", "handmaid", "prince"]
    )
    match = start("classic", ["guard", "guard"], **deal)
    finish_round(match)
    [ended] = records_of(match, RoundEnded)
    assert ended.revealed == {0: Card.PRINCE, 1: Card.PRINCE}
    assert ended.winners == (0, 1)


def _spy_showdown_deal(spies: tuple[int, int]) -> dict[str, object]:
    """Both seats hold a priest; seat 0 draws the princess last and wins the showdown."""
    deck = ["guard"] * 6 + ["baron"] * 2 + ["handmaid"] * 2 + ["countess", "king"]
    for position in sorted(spies):
        deck.insert(position, "spy")
    return {
        "top": [*deck, "princess"],
        "set_aside": "chancellor",
        "face_up": ["prince", "prince", "chancellor"],
    }


def test_spy_bonus_alone_goes_to_a_player_who_did_not_win_and_two_spies_give_one_token() -> None:
    match = start("2019", ["priest", "priest"], **_spy_showdown_deal((1, 3)))  # seat 1 draws both
    finish_round(match)
    [ended] = records_of(match, RoundEnded)
    assert ended.revealed == {0: Card.PRINCESS, 1: Card.PRIEST}
    assert ended.winners == (0,)
    assert ended.spy_bonus == 1
    assert ended.tokens == (1, 1)


def test_spy_bonus_contested_by_two_players_in_the_round_goes_to_nobody() -> None:
    match = start("2019", ["priest", "priest"], **_spy_showdown_deal((1, 2)))
    finish_round(match)
    [ended] = records_of(match, RoundEnded)
    assert ended.spy_bonus is None
    assert ended.tokens == (1, 0)


def test_spy_bonus_on_top_of_a_round_win_in_a_tied_showdown() -> None:
    match = start("2019", ["guard", "guard"], **tie_deal_2019((0, 2)))  # seat 0 draws both
    finish_round(match)
    [ended] = records_of(match, RoundEnded)
    assert ended.winners == (0, 1)
    assert ended.spy_bonus == 0
    assert ended.tokens == (2, 1)


def test_spy_bonus_contested_by_a_player_who_went_out_and_on_a_last_player_standing_round() -> None:
    match = start("2019", ["spy", "spy", "guard"], ["guard", "priest", "baron", "handmaid"])
    play(match, "spy")
    play(match, "spy")
    play(match, "guard", 1, "priest")  # seat 1, who played a spy, is out
    play(match, "guard", 2, "baron")  # seat 0 is the last in the round
    [ended] = records_of(match, RoundEnded)
    assert ended.winners == (0,)
    assert ended.revealed == {}
    assert ended.spy_bonus == 0
    assert ended.tokens == (2, 0, 0)


def test_spy_bonus_from_a_spy_discarded_by_a_prince() -> None:
    match = start("2019", ["prince", "spy", "baron"], ["guard", "handmaid", "guard", "priest", "guard"])
    play(match, "prince", 1)  # seat 1 discards the spy, draws the handmaid
    play(match, "guard", 2, "baron")  # seat 2 out
    play(match, "guard", 1, "spy")  # seat 0 misses
    play(match, "guard", 0, "priest")  # seat 0 out: seat 1 is the last in the round
    [ended] = records_of(match, RoundEnded)
    assert ended.winners == (1,)
    assert ended.spy_bonus == 1
    assert ended.tokens == (0, 2, 0)


def test_a_spy_put_back_by_the_chancellor_does_not_count() -> None:
    match = start("2019", ["chancellor", "guard", "baron"], ["priest", "spy", "guard", "guard", "baron"])
    play(match, "chancellor")  # draws spy and guard
    assert match.state().hands[0] == (Card.PRIEST, Card.SPY, Card.GUARD)
    keep(match, "priest", ["spy", "guard"])
    play(match, "guard", 2, "baron")  # seat 1 puts seat 2 out
    play(match, "baron", 1)  # seat 0's priest beats seat 1's guard
    [ended] = records_of(match, RoundEnded)
    assert ended.winners == (0,)
    assert ended.spy_bonus is None
    assert ended.tokens == (1, 0, 0)


def test_no_spy_bonus_in_classic() -> None:
    deal = _classic_tie_deal(
        ["guard", "baron", "baron", "handmaid", "prince"], ["guard", "priest", "priest", "handmaid", "prince"]
    )
    match = start("classic", ["guard", "guard"], **deal)
    finish_round(match)
    assert records_of(match, RoundEnded)[0].spy_bonus is None
    assert Card.SPY not in RULESETS["classic"].counts

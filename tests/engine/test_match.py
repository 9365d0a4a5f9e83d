"""Rounds in a match: who starts, when it ends, who wins, and what a fault does."""

from __future__ import annotations

import random

import pytest

from arena.engine import (
    RULESETS,
    Card,
    Faulted,
    FaultReason,
    IllegalDeal,
    Match,
    MatchEnded,
    OutCause,
    Phase,
    Play,
    RoundEnded,
    RoundStarted,
    RulesError,
    WentOut,
    WrongPhase,
)
from tests.engine.scenario import (
    drain,
    finish_round,
    make_deal,
    play,
    quick_two_player_round,
    records_of,
    start,
    tie_deal_2019,
)

CRASH = FaultReason.CRASH


def _seat_two_wins_round_one(ruleset: str = "2019") -> Match:
    match = start(ruleset, ["guard", "priest", "guard"], ["handmaid", "baron"])
    play(match, "guard", 1, "priest")
    play(match, "guard", 0, "handmaid")
    assert match.phase is Phase.DEAL
    return match


def _play_randomly(match: Match, seed: int = 0) -> None:
    rng = random.Random(seed)
    while match.phase is not Phase.OVER:
        if match.phase is Phase.DEAL:
            match.deal_round()
        else:
            match.apply(rng.choice(match.decision.legal))  # type: ignore[union-attr]


def test_round_one_starts_with_seat_zero() -> None:
    match = Match(RULESETS["2019"], ["a", "b", "c"], seed=3)
    match.deal_round()
    assert records_of(match, RoundStarted)[0].first == 0
    assert match.decision is not None and match.decision.seat == 0


@pytest.mark.parametrize("ruleset", ["2019", "classic"])
def test_the_next_round_starts_with_the_winner(ruleset: str) -> None:
    match = _seat_two_wins_round_one(ruleset)
    with pytest.raises(IllegalDeal, match="round 2 starts with round 1's winner"):
        match.deal_round(make_deal(ruleset, ["guard", "guard", "guard"], first=0))
    match.deal_round()
    assert records_of(match, RoundStarted)[-1].first == 2


def test_the_next_round_starts_with_a_tied_winner_chosen_by_the_seed() -> None:
    firsts = {}
    for seed in range(24):
        choices = []
        for _ in range(2):
            match = start("2019", ["guard", "guard"], seed=seed, **tie_deal_2019((0, 1)))
            finish_round(match)
            assert records_of(match, RoundEnded)[0].winners == (0, 1)
            match.deal_round()
            choices.append(records_of(match, RoundStarted)[-1].first)
        assert choices[0] == choices[1], "the same seed chooses the same first player"
        firsts[seed] = choices[0]
    assert set(firsts.values()) == {0, 1}


def test_a_disqualified_winner_hands_the_start_to_the_next_seat_up() -> None:
    match = _seat_two_wins_round_one()
    match.disqualify(2, CRASH, "gone")
    with pytest.raises(IllegalDeal, match="next seat up"):
        match.deal_round(make_deal("2019", ["guard", "guard", None], first=1))
    match.deal_round()
    started = records_of(match, RoundStarted)[-1]
    assert started.first == 0
    assert started.hands[2] == ()


def test_a_match_ends_when_a_player_reaches_the_target() -> None:
    match = Match(RULESETS["2019"], ["a", "b"], seed=1)
    for _ in range(6):
        quick_two_player_round(match, 1)
    assert match.phase is Phase.OVER
    assert match.result is not None
    assert match.result.winners == (1,)
    assert match.result.tokens == (0, 6)
    assert match.result.ranking == ((1,), (0,))


def test_a_match_can_have_several_winners() -> None:
    match = Match(RULESETS["2019"], ["a", "b"], seed=1)
    for round_number in range(10):
        quick_two_player_round(match, round_number % 2)
    assert match.tokens == (5, 5)
    starter = match.first_choices()[0]
    match.deal_round(make_deal("2019", ["guard", "guard"], first=starter, **tie_deal_2019((0, 1))))
    finish_round(match)
    assert match.phase is Phase.OVER
    assert match.result is not None
    assert match.result.winners == (0, 1)
    assert match.result.ranking == ((0, 1),)
    assert records_of(match, MatchEnded) == [MatchEnded((0, 1), (6, 6), ((0, 1),))]


@pytest.mark.parametrize(("ruleset", "players", "target"), [("2019", 2, 6), ("2019", 5, 3), ("classic", 2, 7)])
def test_token_targets(ruleset: str, players: int, target: int) -> None:
    assert Match(RULESETS[ruleset], ["p"] * players, seed=0).target == target


def test_same_seed_and_decisions_give_the_identical_match() -> None:
    def run(seed: int) -> list[object]:
        match = Match(RULESETS["2019"], ["a", "b", "c", "d"], seed)
        _play_randomly(match)
        return list(match.records)

    assert run(11) == run(11)
    assert run(11) != run(12)


# -- faults -------------------------------------------------------------------------------


def test_a_fault_on_your_own_turn_reveals_both_cards_and_ends_the_turn() -> None:
    match = start("2019", ["guard", "priest", "baron"], ["handmaid"])
    match.disqualify(0, CRASH, "exited with status 1")
    assert records_of(match, Faulted) == [Faulted(0, CRASH, "exited with status 1")]
    assert records_of(match, WentOut) == [WentOut(0, (Card.GUARD, Card.HANDMAID), OutCause.FAULT)]
    assert match.decision is not None and match.decision.seat == 1
    seat_zero = match.view(1).players[0]
    assert (seat_zero.in_round, seat_zero.disqualified) == (False, True)
    assert seat_zero.discards == (Card.GUARD, Card.HANDMAID)


def test_a_fault_during_the_chancellor_choice_reveals_all_three_cards() -> None:
    match = start("2019", ["chancellor", "priest", "baron"], ["guard", "spy", "king"])
    play(match, "chancellor")
    match.disqualify(0, FaultReason.TIMEOUT, "no reply in 1000 ms")
    assert records_of(match, WentOut)[-1].cards == (Card.GUARD, Card.SPY, Card.KING)
    assert match.decision is not None and match.decision.seat == 1


def test_a_fault_of_another_seat_removes_it_from_the_legal_targets() -> None:
    match = start("2019", ["guard", "priest", "baron"], ["handmaid"])
    assert match.decision is not None
    assert {a.target for a in match.decision.legal} == {1, 2, None}
    match.disqualify(2, FaultReason.MALFORMED, "not JSON")
    assert records_of(match, WentOut) == [WentOut(2, (Card.BARON,), OutCause.FAULT)]
    assert match.decision is not None and match.decision.seat == 0
    assert {a.target for a in match.decision.legal} == {1, None}


def test_a_fault_that_leaves_one_player_ends_the_round_and_then_the_match() -> None:
    match = start("2019", ["spy", "guard"], ["handmaid"])
    play(match, "spy")
    match.disqualify(0, CRASH, "killed")
    [ended] = records_of(match, RoundEnded)
    assert ended.winners == (1,)
    assert ended.spy_bonus is None  # the spy's player is out
    assert match.phase is Phase.OVER
    assert match.result is not None
    assert match.result.winners == (1,)
    assert match.result.ranking == ((1,), (0,))


def test_a_fault_that_leaves_one_player_in_the_round_gives_a_token_and_the_match_goes_on() -> None:
    match = start("2019", ["guard", "priest", "baron"], ["handmaid", "guard"])
    play(match, "guard", 1, "priest")  # seat 1 out of the round
    match.disqualify(2, CRASH, "killed")  # on its own turn
    [ended] = records_of(match, RoundEnded)
    assert ended.winners == (0,)
    assert ended.tokens == (1, 0, 0)
    assert match.phase is Phase.DEAL
    match.deal_round()
    started = records_of(match, RoundStarted)[-1]
    assert started.players_in == (0, 1)
    assert started.hands[2] == ()
    assert len(started.removed_face_up) == 3  # two left: the 2-player setup
    assert match.target == 5  # the target of the match's starting size


def test_a_fault_on_your_own_turn_with_the_deck_empty_leads_to_the_showdown() -> None:
    match = start(
        "classic",
        ["guard", "guard", "guard"],
        ["guard", "guard", "priest", "priest", "baron", "baron", "handmaid", "handmaid", "king", "countess"],
        set_aside="princess",
        bottom=["prince", "prince"],
    )
    drain(match, deck=0)
    seat = match.decision.seat  # type: ignore[union-attr]
    match.disqualify(seat, FaultReason.ILLEGAL, "not in legal")
    [ended] = records_of(match, RoundEnded)
    assert set(ended.revealed) == {0, 1, 2} - {seat}
    assert ended.winners == tuple(s for s, card in ended.revealed.items() if card is Card.PRINCE)


def test_a_fault_between_rounds_leaves_the_seat_out_of_later_deals() -> None:
    match = _seat_two_wins_round_one()
    match.disqualify(1, FaultReason.HANDSHAKE, "no hello")
    match.deal_round()
    started = records_of(match, RoundStarted)[-1]
    assert started.players_in == (0, 2)
    assert started.hands[1] == ()


def test_the_last_player_left_in_the_match_wins_it() -> None:
    match = Match(RULESETS["2019"], ["a", "b", "c"], seed=2)
    match.disqualify(1, FaultReason.HANDSHAKE, "no hello")
    assert match.phase is Phase.DEAL
    match.disqualify(2, FaultReason.HANDSHAKE, "wrong token")
    assert match.phase is Phase.OVER
    assert match.result is not None
    assert match.result.winners == (0,)
    assert match.result.ranking == ((0,), (1, 2))


def test_a_disqualified_seat_is_ranked_last_whatever_its_tokens() -> None:
    match = _seat_two_wins_round_one()
    assert match.tokens == (0, 0, 1)
    match.disqualify(2, CRASH, "gone")
    _play_randomly(match, seed=4)
    assert match.result is not None
    assert match.result.ranking[-1] == (2,)
    assert 2 not in match.result.winners
    assert all(2 not in place for place in match.result.ranking[:-1])


def test_faults_that_the_match_cannot_take() -> None:
    match = start("2019", ["guard", "priest"], ["handmaid"])
    with pytest.raises(RulesError, match="there is no seat 5"):
        match.disqualify(5, CRASH, "x")
    match.disqualify(1, CRASH, "x")
    with pytest.raises(WrongPhase, match="the match is over"):
        match.disqualify(0, CRASH, "x")


def test_calls_out_of_phase_are_refused() -> None:
    match = Match(RULESETS["2019"], ["a", "b", "c"], seed=2)
    with pytest.raises(WrongPhase, match="no decision is awaited"):
        match.apply(Play(Card.GUARD))
    match.deal_round()
    with pytest.raises(WrongPhase, match="no round can be dealt now"):
        match.deal_round()


@pytest.mark.parametrize(
    ("hands", "kwargs", "message"),
    [
        (["guard", "guard"], {"face_up": []}, "3 cards are set aside face up, not 0"),
        (["guard", "guard", "guard"], {"face_up": ["king", "prince", "prince"]}, "0 cards are set aside"),
    ],
)
def test_deals_against_the_rules_are_refused(hands: list[str], kwargs: dict[str, object], message: str) -> None:
    match = Match(RULESETS["2019"], ["p"] * len(hands), seed=0)
    with pytest.raises(IllegalDeal, match=message):
        match.deal_round(make_deal("2019", hands, **kwargs))  # type: ignore[arg-type]


def test_a_deal_with_the_wrong_cards_is_refused() -> None:
    match = Match(RULESETS["2019"], ["a", "b", "c"], seed=0)
    deal = make_deal("2019", ["guard", "guard", "guard"])
    assert deal.set_aside is Card.PRINCESS
    wrong = deal.__class__(deal.first, Card.GUARD, (), deal.hands, deal.deck)
    with pytest.raises(IllegalDeal, match="not the 2019 deck; extra: guard x1; missing: princess x1"):
        match.deal_round(wrong)
    one_short = deal.__class__(deal.first, deal.set_aside, (), (deal.hands[0], (), deal.hands[2]), deal.deck)
    with pytest.raises(IllegalDeal, match="seat 1 must be dealt exactly one card"):
        match.deal_round(one_short)


def test_each_round_deals_the_same_cards_to_the_same_seats_for_a_seed_whoever_plays() -> None:
    """Duplicate play rests on this: the deal of round r depends on the seed and r, not on earlier play."""

    def deals(names: list[str], choose: int) -> list[tuple[object, ...]]:
        match, rng, dealt = Match(RULESETS["2019"], names, seed=11), random.Random(choose), []
        while match.phase is not Phase.OVER and len(dealt) < 4:
            if match.phase is Phase.DEAL:
                match.deal_round()
                started = match.records[-1]
                assert isinstance(started, RoundStarted)
                dealt.append((started.hands, started.deck, started.set_aside))
            else:
                match.apply(rng.choice(match.decision.legal))
        return dealt

    assert deals(["a", "b", "c"], choose=1) == deals(["c", "a", "b"], choose=2)

"""Fair play, on hand-made rounds with known answers and on matches of bots that cheat in known ways: a play's
chance is what the seat's own information gives (exactly, where it can be counted), an honest bot is not flagged,
a bot that reads the hidden hands is, and so are two bots that never aim at each other."""

from __future__ import annotations

import base64
import itertools
import json
import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from fractions import Fraction
from pathlib import Path

import pytest

from arena.analysis.diagnose import fair_play_from_replays
from arena.analysis.fairplay import (
    ALPHA,
    Criteria,
    Flag,
    Kind,
    MatchFairPlay,
    Sight,
    Step,
    Strike,
    Verdict,
    Witness,
    lower_tail,
    notes_from_json,
    notes_json,
    posteriors,
    read_columns,
    tally,
    upper_tail,
)
from arena.analysis.fairplay.tally import SHORTFALL
from arena.analysis.watch import fair_play_of_replay
from arena.engine import (
    RULESETS,
    Action,
    Card,
    Decision,
    EventFeed,
    FaultReason,
    Keep,
    Match,
    Observer,
    Phase,
    Play,
    get_ruleset,
)
from arena.replay import read_replay, write_replay
from arena.replay.lines import ReplayLine, replay_lines
from tests.engine.scenario import C, drain, start

Move = tuple[str, int | None, str | None]
Policy = Callable[[Match, Decision, random.Random], Action]


def noted(match: Match, moves: Sequence[Move], tmp_path: Path) -> MatchFairPlay:
    """Play the moves, noting each as it is played, then again from the written replay: both must agree."""
    witness = Witness(match)
    for card, target, guess in moves:
        decision = match.decision
        assert decision is not None
        action = Play(C(card), target, None if guess is None else C(guess))
        witness.judge(decision.seat, action)
        match.apply(action)
    live = witness.findings("hand-made")
    path = tmp_path / "hand-made.jsonl"
    write_replay(path, match, "hand-made")
    again = fair_play_of_replay(read_replay(path))
    assert again == live
    return live


# -- a play's chance, from the seat's own information ----------------------------------------------------------------


def test_a_guard_on_a_card_seen_with_a_priest_is_sure(tmp_path: Path) -> None:
    # seat 0's Priest sees seat 1's Baron; seat 1 plays the Spy it drew, so it still holds the Baron
    match = start("2019", ["priest", "baron"], ["guard", "spy", "countess"])
    found = noted(match, [("priest", 1, None), ("spy", None, None), ("guard", 1, "baron")], tmp_path)
    (chance,) = found.chances
    assert (chance.seat, chance.target, chance.bet.kind, chance.probability, chance.success) == (
        0,
        1,
        Kind.GUARD,
        1.0,
        True,
    )


def test_a_guard_after_the_seen_card_may_have_been_played_is_no_longer_sure(tmp_path: Path) -> None:
    # seat 1 drew the other Baron and played a Baron: which one it kept, seat 0 cannot tell
    match = start("2019", ["priest", "baron", "guard"], ["guard", "baron", "spy"])
    found = noted(match, [("priest", 1, None), ("baron", 2, None), ("guard", 1, "king")], tmp_path)
    guard = next(chance for chance in found.chances if chance.bet.kind is Kind.GUARD)
    assert 0 < guard.probability < 1


def test_a_guard_in_a_two_player_round_has_the_chance_the_unseen_cards_give(tmp_path: Path) -> None:
    # Seat 0 sees its Guard and the Spy it draws, the Priests and a Baron face up: 16 cards unseen, one Baron among
    # them, both Princes, no Priest.
    face_up = ["priest", "priest", "baron"]
    for guess, expected in (("baron", Fraction(1, 16)), ("prince", Fraction(2, 16)), ("priest", Fraction(0))):
        match = start("2019", ["guard", "king"], ["spy"], face_up=face_up)
        (chance,) = noted(match, [("guard", 1, guess)], tmp_path).chances
        assert chance.probability == pytest.approx(float(expected), abs=1e-12)
    # Two turns on: seat 1 played the Countess beside its King, seat 0 its Spy and then holds two Guards: 14 unseen.
    match = start("2019", ["guard", "king"], ["spy", "countess", "guard"], face_up=face_up)
    moves: list[Move] = [("spy", None, None), ("countess", None, None), ("guard", 1, "king")]
    (chance,) = noted(match, moves, tmp_path).chances
    assert chance.probability == pytest.approx(1 / 14) and chance.success


def test_a_missed_guard_rules_its_card_out_and_a_baron_counts_the_lower_cards(tmp_path: Path) -> None:
    # 3 players. Seat 0 plays its Spy and keeps the Countess; seat 1 plays a Priest and keeps its King; seat 2 names
    # the Prince on seat 1 and misses. Seat 0's Baron, keeping the Countess (8): 16 cards unseen to it (21 less its
    # Countess and Baron, the Spy, Priest and Guard played), 14 once seat 1's Princes are ruled out, and all of
    # those but the Princess are lower than the Countess.
    match = start("2019", ["countess", "king", "guard"], ["spy", "priest", "guard", "baron"])
    moves: list[Move] = [("spy", None, None), ("priest", 2, None), ("guard", 1, "prince"), ("baron", 1, None)]
    found = noted(match, moves, tmp_path)
    guard, baron = found.chances
    assert (guard.seat, guard.probability, guard.success) == (2, pytest.approx(2 / 17), False)  # 17 unseen to it
    assert (baron.seat, baron.bet.kind, baron.probability, baron.success) == (
        0,
        Kind.BARON,
        pytest.approx(13 / 14),
        True,
    )


def test_the_chances_are_those_of_every_deal_consistent_with_the_constraints() -> None:
    """Against a count of every deal of the cards told apart: three hidden hands and two cards in the deck, seat 1
    holding no Guard, seat 2 neither a Guard nor a Priest, seat 3 free."""
    pool = Counter({Card.GUARD: 2, Card.PRIEST: 1, Card.BARON: 2, Card.KING: 1})
    excluded = {1: frozenset({Card.GUARD}), 2: frozenset({Card.GUARD, Card.PRIEST})}
    cards = list(pool.elements())
    counts: dict[int, Counter[Card]] = {seat: Counter() for seat in (1, 2, 3)}
    for deal in itertools.permutations(cards):
        hands = dict(zip((1, 2, 3), deal, strict=False))
        if all(hands[seat] not in ruled_out for seat, ruled_out in excluded.items()):
            for seat, card in hands.items():
                counts[seat][card] += 1
    found = posteriors(pool, excluded, [1, 2, 3])
    for seat in (1, 2, 3):
        total = sum(counts[seat].values())
        assert found[seat] == pytest.approx({card: n / total for card, n in counts[seat].items()}), seat


def test_a_card_the_seat_put_under_the_deck_is_known_once_another_draws_it(tmp_path: Path) -> None:
    # Seat 0 keeps its Chancellor while both play the cards they draw, and plays it with 2 cards left: it keeps a
    # Prince and puts the Princess on the other one. Seat 1 draws the Princess and plays its Priest: seat 0's Prince
    # is a sure hit.
    quiet = ["guard", "handmaid", "guard", "spy", "guard", "priest", "guard", "handmaid", "guard", "spy", "guard"]
    top = [*quiet, "countess", "prince", "prince", "princess"]
    match = start("2019", ["chancellor", "priest"], top, set_aside="chancellor", face_up=["baron", "baron", "king"])
    drain(match, 2)
    assert match.decision is not None and match.decision.seat == 0
    assert sorted(card.label for card in match.hand(0)) == ["chancellor", "prince"]
    assert [card.label for card in match.hand(1)] == ["priest"]
    witness = Witness(match)
    moves: list[Action] = [
        Play(Card.CHANCELLOR),
        Keep(Card.PRINCE, (Card.PRINCESS, Card.PRINCE)),
        Play(Card.PRIEST, 0),
        Play(Card.PRINCE, 1),
    ]
    for action in moves:
        assert match.decision is not None
        witness.judge(match.decision.seat, action)
        match.apply(action)
    (chance,) = witness.findings("hand-made").chances
    assert (chance.bet.kind, chance.probability, chance.success) == (Kind.PRINCE, 1.0, True)
    path = tmp_path / "chancellor.jsonl"
    write_replay(path, match, "hand-made")
    found = fair_play_of_replay(read_replay(path))  # every decision of the round noted, this one last
    assert found is not None and found.chances[-1] == chance


def test_each_seat_s_chances_never_rule_out_the_card_its_opponent_really_holds() -> None:
    """Over random matches of every size and both rulesets, with faults: every opponent's real card has a chance
    above 0 in what each seat knows, and the deck's count kept from the events is the deck's."""
    checked = 0
    for ruleset, players, seed in itertools.product(("2019", "classic"), (2, 3, 4, 6), range(10)):
        if players > RULESETS[ruleset].max_players:
            continue
        match = Match(RULESETS[ruleset], [f"b{seat}" for seat in range(players)], seed)
        feed = EventFeed(match)
        observers = [Observer(match, seat, feed) for seat in range(players)]
        sights = [Sight(seat, match.ruleset) for seat in range(players)]
        rng = random.Random(seed)
        while match.phase is not Phase.OVER:
            decision = match.decision
            if decision is None:
                match.deal_round()
                continue
            if rng.random() < 0.005 and len(match.disqualified) < players - 2:
                match.disqualify(decision.seat, FaultReason.TIMEOUT, "a test's fault")
                continue
            sight, observer = sights[decision.seat], observers[decision.seat]
            sight.observe(observer.take_events())
            view = observer.view()
            action = rng.choice(decision.legal)
            sight.judge(view, action)
            if isinstance(action, Keep):
                assert sight.deck == view.deck + len(action.bottom)  # the cards put back
                match.apply(action)
                continue
            assert sight.deck == view.deck
            for target, player in enumerate(view.players):
                if target != decision.seat and player.in_round:
                    assert sight.odds(view, target).get(match.hand(target)[0], 0.0) > 0, (ruleset, players, seed)
                    checked += 1
            match.apply(action)
    assert checked > 5000


# -- the Poisson-binomial tails --------------------------------------------------------------------------------------


def test_the_tails_are_exact() -> None:
    chances = [0.1, 0.5, 0.9, 0.3, 1.0, 0.0, 0.25]
    for observed in range(-1, len(chances) + 2):
        upper = lower = 0.0
        for outcome in itertools.product((0, 1), repeat=len(chances)):
            p = math.prod(c if hit else 1 - c for c, hit in zip(chances, outcome, strict=True))
            upper += p if sum(outcome) >= observed else 0.0
            lower += p if sum(outcome) <= observed else 0.0
        assert upper_tail(chances, observed) == pytest.approx(upper, abs=1e-15)
        assert lower_tail(chances, observed) == pytest.approx(lower, abs=1e-15)
    # a binomial far in its tail: 2000 trials at 0.2, 520 successes or more
    exact = sum(math.comb(2000, k) * Fraction(1, 5) ** k * Fraction(4, 5) ** (2000 - k) for k in range(520, 2001))
    assert upper_tail([0.2] * 2000, 520) == pytest.approx(float(exact), rel=1e-9)


def test_a_verdict_weighs_only_what_passes_its_tolerance_against_chance() -> None:
    steps = [Step("m", line, 0.5, line < 540) for line in range(1000)]  # 540 successes where 500 were expected
    strict = Verdict.of(steps, 0.01, upper=True)
    assert strict.p_value == pytest.approx(upper_tail([0.5] * 1000, 540)) and strict.flagged
    tolerant = Verdict.of(steps, 0.01, upper=True, tolerance=0.1)  # as if 550 were expected
    assert tolerant.p_value == pytest.approx(upper_tail([0.55] * 1000, 540)) and not tolerant.flagged
    assert tolerant.expected == strict.expected == 500
    spared = [Step("m", line, 0.5, line < 380) for line in range(1000)]  # 380 choices where 500 were expected
    assert Verdict.of(spared, 0.01, upper=False, tolerance=0.2).p_value == pytest.approx(lower_tail([0.4] * 1000, 380))


# -- whole matches ---------------------------------------------------------------------------------------------------


def at_random(match: Match, decision: Decision, rng: random.Random) -> Action:
    return rng.choice(decision.legal)


def foresight(match: Match, decision: Decision, rng: random.Random) -> Action:
    """Plays at random, but a Guard names the target's real card (read from the match: the cheat)."""
    action = rng.choice(decision.legal)
    if isinstance(action, Play) and action.card is Card.GUARD and action.target is not None:
        held = match.hand(action.target)[0]
        if held is not Card.GUARD:
            return Play(Card.GUARD, action.target, held)
    return action


def spares(partner: str) -> Policy:
    """Plays at random, but never aims at a seat of `partner` while it could aim the same card at another."""

    def policy(match: Match, decision: Decision, rng: random.Random) -> Action:
        friends = {seat for seat, name in enumerate(match.players) if name == partner}
        action = rng.choice(decision.legal)
        if not isinstance(action, Play) or action.target not in friends:
            return action
        others = [
            other
            for other in decision.legal
            if isinstance(other, Play)
            and other.card is action.card
            and other.target not in friends
            and other.target != decision.seat
        ]
        return rng.choice(others) if others else action

    return policy


def replays(bots: dict[str, Policy], seats: Sequence[str], matches: int, seed: int) -> list[list[ReplayLine]]:
    """The replays of `matches` matches of these bots, their seats turned round one step from each to the next."""
    found = []
    for number in range(matches):
        shift = number % len(seats)
        names = [*seats[shift:], *seats[:shift]]
        match = Match(get_ruleset("2019"), names, seed + number)
        rng = random.Random(seed + number)
        while match.phase is not Phase.OVER:
            decision = match.decision
            if decision is None:
                match.deal_round()
                continue
            match.apply(bots[names[decision.seat]](match, decision, rng))
        found.append([ReplayLine(n, line) for n, line in enumerate(replay_lines(match, f"m{number}"), start=1)])
    return found


def test_noting_as_played_and_from_the_replay_agree() -> None:
    for number, players in enumerate((2, 3, 4, 5, 6)):
        match = Match(get_ruleset("2019"), [f"b{seat}" for seat in range(players)], number)
        witness, rng = Witness(match), random.Random(number)
        while match.phase is not Phase.OVER:
            decision = match.decision
            if decision is None:
                match.deal_round()
                continue
            action = rng.choice(decision.legal)
            witness.judge(decision.seat, action)
            match.apply(action)
        lines = [ReplayLine(n, line) for n, line in enumerate(replay_lines(match, f"m{number}"), start=1)]
        live = witness.findings(f"m{number}")
        assert fair_play_of_replay(lines) == live
        assert notes_from_json(f"m{number}", match.players, notes_json(witness.columns())) == live
        assert live.chances and live.holdings and (live.aims or players == 2)
        for chance in live.chances:
            assert (
                lines[chance.line - 1].data["type"] == "decision" and lines[chance.line - 1].data["seat"] == chance.seat
            )


def test_stored_notes_that_do_not_fit_their_match_are_not_read() -> None:
    match = Match(get_ruleset("2019"), ["a", "b", "c", "d"], 5)
    witness, rng = Witness(match), random.Random(5)
    while match.phase is not Phase.OVER:
        if match.decision is None:
            match.deal_round()
            continue
        action = rng.choice(match.decision.legal)
        witness.judge(match.decision.seat, action)
        match.apply(action)
    columns = witness.columns()
    assert read_columns(notes_json(columns), 4) is not None
    assert read_columns(notes_json(columns), 3) is None  # a seat beyond the table

    def spoilt(part: str, column: str, value: object) -> bytes:
        changed = {**columns, part: {**columns[part], column: list(columns[part][column])}}
        changed[part][column][0] = value
        return notes_json(changed)

    assert read_columns(spoilt("chances", "cards", 99), 4) is None  # no such card
    assert read_columns(spoilt("holdings", "bin", -1), 4) is None
    assert read_columns(spoilt("aims", "choices", 1000), 4) is None  # more choices than its seats
    assert read_columns(spoilt("chances", "kind", 7), 4) is None
    text = json.loads(notes_json(columns))
    short = base64.b64encode(base64.b64decode(text["<f8"])[:-8]).decode()  # one value short
    for broken in ("%%%", text["<f8"][:-4], short, ""):  # not base64, short by a part of a value
        assert read_columns(json.dumps({**text, "<f8": broken}), 4) is None
    assert read_columns(json.dumps({**text, "rows": {**text["rows"], "seats": -1}}), 4) is None
    assert read_columns(json.dumps({**text, "version": 2}), 4) is None  # another layout: taken from the replay


@pytest.mark.parametrize("calibrate", [True, False])
def test_honest_random_bots_are_not_flagged(calibrate: bool) -> None:
    bots = {"random": at_random, "other": at_random}
    for seats in (["random", "other"], ["random", "other", "random", "other"], ["random", "other", "random"]):
        result = fair_play_from_replays(replays(bots, seats, 40, 100), criteria=Criteria(calibrate=calibrate))
        for bot in result.bots:
            assert bot.flags == [], bot.json()
            assert bot.knows_more is not None and bot.knows_more.decisions > 50
            assert all(sparing.test.decisions > 50 for sparing in bot.spares)
            if len(seats) == 4:
                assert len(bot.spares) == 2  # the other bot and its own copy


@pytest.mark.parametrize("calibrate", [True, False])
def test_a_bot_that_names_the_targets_real_card_is_flagged_within_20_matches(calibrate: bool) -> None:
    lines = replays({"seer": foresight, "random": at_random}, ["seer", "random"], 20, 7)
    result = fair_play_from_replays(lines, criteria=Criteria(calibrate=calibrate))
    seer = result.bot("seer")
    assert seer.knows_more is not None and seer.knows_more.flagged
    assert [flag["flag"] for flag in seer.flags] == [Flag.KNOWS_MORE.value]
    assert seer.knows_more.observed > 2 * seer.knows_more.expected
    assert result.bot("random").flags == []
    # the decisions behind it: successes at that line of that match's replay, the least likely first
    shown = seer.json()["knows_more"]["steps"]
    assert shown and shown == sorted(shown, key=lambda step: step["probability"])
    by_id = {replay[0].data["match_id"]: replay for replay in lines}
    for step in shown:
        line = by_id[step["match_id"]][step["line"] - 1].data
        assert line["type"] == "decision" and line["action"]["card"] in (kind.value for kind in Kind)


@pytest.mark.parametrize("calibrate", [True, False])
def test_two_bots_that_never_aim_at_each_other_are_flagged_for_mutual_sparing(calibrate: bool) -> None:
    bots = {"ally": spares("friend"), "friend": spares("ally"), "random": at_random}
    result = fair_play_from_replays(
        replays(bots, ["ally", "friend", "random", "random"], 20, 11), criteria=Criteria(calibrate=calibrate)
    )
    for bot, partner in (("ally", "friend"), ("friend", "ally")):
        flags = result.bot(bot).flags
        assert [(flag["flag"], flag["partner"], flag["mutual"]) for flag in flags] == [
            (Flag.SPARES.value, partner, True)
        ], flags
        assert flags[0]["observed"] == 0 and flags[0]["p_value"] < flags[0]["threshold"]
    assert result.bot("random").flags == []


def test_the_json_of_a_bot_with_no_flag_has_an_empty_list_and_each_statistic() -> None:
    result = tally([], bots=["nobody"])
    assert result.bot("nobody").json() == {"tested": False, "flags": [], "knows_more": None, "spares": []}
    lines = replays({"random": at_random, "other": at_random}, ["random", "other", "random"], 3, 5)
    shown = fair_play_from_replays(lines).bot("random").json()
    assert shown["flags"] == []
    assert set(shown["knows_more"]) == {
        "decisions",
        "expected",
        "observed",
        "p_value",
        "threshold",
        "tolerance",
        "flagged",
        "steps",
    }
    assert {sparing["partner"] for sparing in shown["spares"]} == {"other", "random"}  # its own copy too


# -- sure plays withheld ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("aimed", "used"), [((2, "king"), False), ((1, "baron"), True)])
def test_a_guard_the_seat_knew_would_put_an_opponent_out_is_a_sure_play_against_it(
    tmp_path: Path, aimed: tuple[int, str], used: bool
) -> None:
    # Seat 0's Priest sees seat 1's Baron; seat 1 plays the Spy it drew, seat 2 the Countess beside its King; seat 0
    # draws a second Guard: naming the Baron on seat 1 was sure. It names the King on seat 2 instead, or the Baron.
    match = start("2019", ["priest", "baron", "king"], ["guard", "spy", "countess", "guard"])
    target, guess = aimed
    moves: list[Move] = [("priest", 1, None), ("spy", None, None), ("countess", None, None), ("guard", target, guess)]
    found = noted(match, moves, tmp_path)
    assert [(s.seat, s.target, s.used) for s in found.strikes] == [(0, 1, used)]
    assert found.strikes[0].line == found.chances[-1].line


def _strikes(used_against: dict[str, tuple[int, int]]) -> MatchFairPlay:
    """One match's notes of `ally` holding sure plays: against each bot, (held, made)."""
    players = ("ally", *used_against)
    strikes = [
        Strike(0, line, players.index(bot), made > n)
        for bot, (held, made) in used_against.items()
        for n, line in enumerate(range(10 + 100 * players.index(bot), 10 + 100 * players.index(bot) + held))
    ]
    return MatchFairPlay("m", players, (), (), (), tuple(strikes))


def test_a_bot_that_makes_its_sure_plays_against_everyone_but_its_partner_is_flagged() -> None:
    result = tally([_strikes({"friend": (12, 0), "other": (12, 12)})])
    ally = result.bot("ally")
    (flag,) = ally.flags
    rate = (12 + 1) / (12 + 2)  # its own rate against the others, pulled towards a half
    shown = (flag["flag"], flag["partner"], flag["measure"], flag["observed"])
    assert shown == (Flag.SPARES.value, "friend", "sure-plays", 0)
    assert flag["p_value"] == pytest.approx(lower_tail([rate * (1 - SHORTFALL)] * 12, 0))
    assert flag["threshold"] == pytest.approx(ALPHA / 2)  # two pairs tested
    assert len(flag["steps"]) == 12 and {step["line"] for step in flag["steps"]} == set(range(110, 122))
    # the same rate against everyone is no flag; nor are too few chances to tell
    assert tally([_strikes({"friend": (12, 11), "other": (12, 12)})]).bot("ally").flags == []
    assert tally([_strikes({"friend": (3, 0), "other": (12, 12)})]).bot("ally").flags == []

"""Provable mistakes, on hand-made replays: rounds dealt as asked and played move by move, written as replays and
judged again from them; each category found where the seat's own information proves it, and nowhere else."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from arena.analysis import Category, Seat, Watch, diagnose_replay
from arena.bots.search import SearchBot
from arena.engine import Match, Play, get_ruleset
from arena.players.local import MessagePlayer
from arena.plugins import load_registry
from arena.replay import read_replay, write_replay
from arena.replay.lines import ReplayLine, replay_lines
from arena.runner import play_match
from tests.engine.scenario import C, start

Move = tuple[str, int | None, str | None]


def judged(match: Match, moves: list[Move], tmp_path: Path) -> list[list[tuple[int, Category]]]:
    """Play the moves, judging each as it is played, then again from the replay: both must agree."""
    watch = Watch(match)
    for card, target, guess in moves:
        decision = match.decision
        assert decision is not None
        action = Play(C(card), target, None if guess is None else C(guess))
        watch.judge(decision.seat, action)
        match.apply(action)
    live = [diagnosis.mistakes for diagnosis in watch.diagnoses()]
    path = tmp_path / "hand-made.jsonl"
    write_replay(path, match, "hand-made")
    again = [diagnosis.mistakes for diagnosis in diagnose_replay(read_replay(path))]
    assert again == live
    return live


def decision_line(match: Match, number: int) -> int:
    """The replay line of the match's `number`th decision (from 1)."""
    lines = [i for i, line in enumerate(replay_lines(match, "hand-made"), start=1) if line["type"] == "decision"]
    return lines[number - 1]


def test_playing_the_princess_when_the_other_card_would_do_is_self_elimination(tmp_path: Path) -> None:
    match = start("2019", ["princess", "guard"], ["priest"])  # seat 0 holds the Princess, draws a Priest
    found = judged(match, [("princess", None, None)], tmp_path)
    assert found[0] == [(decision_line(match, 1), Category.SELF_ELIMINATION)]


def test_a_prince_on_oneself_beside_the_princess_is_self_elimination_unless_it_is_forced(tmp_path: Path) -> None:
    match = start("2019", ["princess", "guard"], ["prince"])
    assert judged(match, [("prince", 0, None)], tmp_path)[0] == [(decision_line(match, 1), Category.SELF_ELIMINATION)]
    # seat 0 shielded by its Handmaid: seat 1's Prince can only choose itself, and the Princess puts it out too
    forced = start("2019", ["handmaid", "princess"], ["guard", "prince"])
    assert judged(forced, [("handmaid", None, None), ("prince", 1, None)], tmp_path) == [[], []]


def test_naming_a_card_whose_every_copy_is_face_up_is_an_impossible_guess(tmp_path: Path) -> None:
    # both Priests set aside face up (2 players); a Baron face up too, but one is still unseen
    match = start("2019", ["guard", "king"], ["spy"], face_up=["priest", "priest", "baron"])
    found = judged(match, [("guard", 1, "priest")], tmp_path)
    assert found[0] == [(decision_line(match, 1), Category.IMPOSSIBLE_GUESS)]
    other = start("2019", ["guard", "king"], ["spy"], face_up=["priest", "priest", "baron"])
    assert judged(other, [("guard", 1, "baron")], tmp_path)[0] == []


def test_a_guard_that_can_hit_nothing_names_no_impossible_guess() -> None:
    """Late in a classic 4-player round every card but the Guards is in sight: the Guard can only be a discard,
    whatever it names (the other legal play, the Baron, is no reason to call the guess a mistake)."""
    from arena.engine import DecisionKind, PlayerView, View

    discards = [
        ("prince", "guard", "priest"),
        ("baron", "guard", "countess", "priest"),
        ("handmaid", "king", "princess"),
        ("prince", "handmaid"),
    ]
    players = tuple(
        PlayerView(f"p{seat}", 0, True, False, False, tuple(C(card) for card in cards))
        for seat, cards in enumerate(discards)
    )
    guesses = ("priest", "baron", "handmaid", "prince", "king", "countess", "princess")
    legal = (*(Play(C("guard"), 1, C(guess)) for guess in guesses), Play(C("baron"), 1))
    view = View(0, 1, DecisionKind.PLAY, (C("guard"), C("baron")), players, 2, (), legal)
    judge = Seat(0, get_ruleset("classic"))
    assert [judge.judge(view, play) for play in legal[:-1]] == [None] * len(guesses)
    # with one Priest still out of sight, naming a card all in sight is the mistake again
    fewer = tuple(
        PlayerView(p.name, 0, True, False, False, tuple(c for c in p.discards if seat != 1 or c is not C("priest")))
        for seat, p in enumerate(players)
    )
    view = View(0, 1, DecisionKind.PLAY, (C("guard"), C("baron")), fewer, 2, (), legal)
    assert judge.judge(view, Play(C("guard"), 1, C("king"))) is Category.IMPOSSIBLE_GUESS
    assert judge.judge(view, Play(C("guard"), 1, C("priest"))) is None


def test_a_copy_in_ones_own_hand_or_played_this_round_counts_as_seen(tmp_path: Path) -> None:
    # 4 players: seat 0 holds the King (the only one) and names it; seat 1 played the Countess, seat 2 names her
    match = start("2019", ["guard", "countess", "guard", "spy"], ["king", "handmaid", "priest"])
    found = judged(match, [("guard", 1, "king"), ("countess", None, None), ("guard", 3, "countess")], tmp_path)
    assert found[0] == [(decision_line(match, 1), Category.IMPOSSIBLE_GUESS)]
    assert found[2] == [(decision_line(match, 3), Category.IMPOSSIBLE_GUESS)]


def test_a_guard_on_a_card_known_from_ones_priest_names_it_or_misses_a_known_guess(tmp_path: Path) -> None:
    # seat 0's Priest sees seat 1's Baron; seat 1 plays the Spy it drew, so it still holds the Baron
    deal = (["priest", "baron"], ["guard", "spy", "countess"])
    match = start("2019", *deal)
    moves: list[Move] = [("priest", 1, None), ("spy", None, None), ("guard", 1, "prince")]
    assert judged(match, moves, tmp_path)[0] == [(decision_line(match, 3), Category.MISSED_KNOWN_GUESS)]
    right = start("2019", *deal)
    assert judged(right, [*moves[:2], ("guard", 1, "baron")], tmp_path)[0] == []


def test_the_knowledge_goes_when_the_known_card_may_have_been_played(tmp_path: Path) -> None:
    # seat 1 drew the other Baron and played a Baron (on seat 2): which one it kept, seat 0 cannot tell
    match = start("2019", ["priest", "baron", "guard"], ["guard", "baron", "spy"])
    moves: list[Move] = [("priest", 1, None), ("baron", 2, None), ("guard", 1, "king")]
    assert judged(match, moves, tmp_path)[0] == []


def test_a_king_trade_tells_each_trader_the_others_new_card(tmp_path: Path) -> None:
    # seat 0 gives its Guard for seat 1's card; seat 1 then plays the Spy it draws and keeps the Guard
    match = start("2019", ["king", "countess"], ["guard", "spy", "guard"])
    moves: list[Move] = [("king", 1, None), ("spy", None, None), ("guard", 1, "priest")]
    found = judged(match, moves, tmp_path)
    assert found[0] == []  # the Guard it gave away cannot be named: no known guess to miss
    match = start("2019", ["king", "countess"], ["priest", "spy", "guard"])
    moves = [("king", 1, None), ("spy", None, None), ("guard", 1, "baron")]
    assert judged(match, moves, tmp_path)[0] == [(decision_line(match, 3), Category.MISSED_KNOWN_GUESS)]


def test_a_level_baron_tells_both_players_the_others_card(tmp_path: Path) -> None:
    # seat 0's Baron against seat 1: both hold a Handmaid; seat 1 plays a Spy, seat 0 names the wrong card
    match = start("2019", ["baron", "handmaid"], ["handmaid", "spy", "guard"])
    moves: list[Move] = [("baron", 1, None), ("spy", None, None), ("guard", 1, "prince")]
    assert judged(match, moves, tmp_path)[0] == [(decision_line(match, 3), Category.MISSED_KNOWN_GUESS)]


def test_a_baron_against_a_known_higher_card_is_a_known_losing_baron(tmp_path: Path) -> None:
    # seat 0's Priest sees seat 1's King; seat 1 plays its Spy; seat 0 keeps a Guard and plays the Baron
    deal = (["priest", "king"], ["guard", "spy", "baron"])
    match = start("2019", *deal)
    moves: list[Move] = [("priest", 1, None), ("spy", None, None), ("baron", 1, None)]
    assert judged(match, moves, tmp_path)[0] == [(decision_line(match, 3), Category.KNOWN_LOSING_BARON)]
    lower = start("2019", ["priest", "spy"], ["guard", "guard", "baron"])  # a known lower card: a sure win
    assert judged(lower, [("priest", 1, None), ("guard", 0, "king"), ("baron", 1, None)], tmp_path)[0] == []


@pytest.mark.parametrize("ruleset", ["2019", "classic"])
def test_judging_as_played_and_from_the_replay_agree_and_the_built_in_bots_make_no_blunders(
    ruleset: str, tmp_path: Path
) -> None:
    registry = load_registry()
    found: dict[str, Counter[Category]] = {}
    for number in range(40):
        names = ["heuristic", "random", "search", "random"][: 2 + number % 3]
        match = Match(get_ruleset(ruleset), names, number)
        watch = Watch(match)
        players = [
            MessagePlayer(SearchBot(playouts=32)) if name == "search" else registry.lookup(name).spec.player(1000)
            for name in names
        ]
        play_match(match, watch.wrap(players), f"m{number}")
        live = watch.diagnoses()
        lines = [ReplayLine(n, line) for n, line in enumerate(replay_lines(match, f"m{number}"), start=1)]
        assert [(d.decisions, d.mistakes) for d in diagnose_replay(lines)] == [(d.decisions, d.mistakes) for d in live]
        for name, diagnosis in zip(names, live, strict=True):
            found.setdefault(name, Counter()).update(category for _, category in diagnosis.mistakes)
    for bot in ("heuristic", "search"):
        assert sum(found[bot].values()) == 0, found[bot]  # none of the four
    assert sum(found["random"].values()) > 0  # the judge does find mistakes: the random bot makes them

"""Every built-in bot answers only with legal actions, at every table size of both rulesets."""

from __future__ import annotations

import pytest

from arena.bots.heuristic import HeuristicBot
from arena.bots.random_bot import RandomBot
from arena.bots.search import SearchBot
from arena.engine import RULESETS, Match
from arena.players.local import MessagePlayer
from arena.runner import play_match

TABLES = [
    (ruleset, players) for ruleset in ("2019", "classic") for players in range(2, RULESETS[ruleset].max_players + 1)
]


def lineup(players: int, match: int) -> list[object]:
    """Each kind of bot at each table, in turning seats."""
    kinds = [HeuristicBot, lambda: SearchBot(playouts=16), RandomBot]
    return [kinds[(seat + match) % len(kinds)]() for seat in range(players)]


@pytest.mark.parametrize(("ruleset", "players"), TABLES)
def test_the_built_in_bots_only_answer_legally(ruleset: str, players: int) -> None:
    for number in range(6):
        bots = lineup(players, number)
        match = Match(RULESETS[ruleset], [f"bot{seat}" for seat in range(players)], seed=100 * players + number)
        outcome = play_match(match, [MessagePlayer(bot) for bot in bots], f"legal-{ruleset}-{players}-{number}")
        assert outcome.faults == (), [(type(bots[f.seat]).__name__, f.detail) for f in outcome.faults]
        assert outcome.result.winners


def test_the_random_bot_plays_the_same_moves_for_the_same_match() -> None:
    def moves() -> list[object]:
        match = Match(RULESETS["2019"], ["a", "b", "c"], seed=5)
        play_match(match, [MessagePlayer(RandomBot()) for _ in range(3)], "same-match")
        return list(match.records)

    assert moves() == moves()

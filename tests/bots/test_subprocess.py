"""The built-in bots as sandboxed subprocesses over the protocol: the same moves as in-process."""

from __future__ import annotations

import dataclasses

import pytest

from arena.engine import RULESETS, Match
from arena.players.host import BotHost
from arena.players.remote import RemotePlayer
from arena.players.values import Timing
from arena.plugins import load_registry
from arena.runner import play_match
from arena.sandbox import SandboxLevel


@pytest.mark.parametrize("name", ["random", "heuristic"])
def test_a_built_in_bot_plays_the_same_match_in_its_sandbox_as_in_process(name: str, marker: str) -> None:
    registry = load_registry()
    bot, rival = registry[name], registry["random"]

    def match() -> Match:
        return Match(RULESETS["2019"], [name, "rival"], 21)

    in_process = play_match(match(), [bot.spec.player(1000), rival.spec.player(1000)], "builtin")
    command = bot.bot_command()
    command = dataclasses.replace(command, command=(*command.command, marker))
    with BotHost(command, Timing(move_ms=5000, startup_ms=20000), SandboxLevel.STRICT) as host:
        remote = play_match(match(), [RemotePlayer(host), rival.spec.player(1000)], "builtin")
        assert host.shutdown() is None
    assert remote.faults == ()
    assert remote.result == in_process.result


def test_the_search_bot_plays_legally_in_its_sandbox(marker: str) -> None:
    search = load_registry()["search"]
    command = dataclasses.replace(search.bot_command(), command=(*search.bot_command().command, marker))
    with BotHost(command, Timing(move_ms=100, startup_ms=20000), SandboxLevel.STRICT) as host:
        outcome = play_match(
            Match(RULESETS["classic"], ["search", "rival"], 3),
            [RemotePlayer(host), load_registry()["random"].spec.player(100)],
            "search-sandboxed",
        )
        assert host.shutdown() is None
    assert outcome.faults == ()

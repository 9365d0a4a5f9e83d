"""The registry on its own: who registered what, and the names it refuses."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from arena.errors import PluginError
from arena.plugins import BotRegistry, BotSpec


def spec(name: str = "ok", **changes: object) -> BotSpec:
    fields: dict = {"name": name, "description": "d", "command": (sys.executable, "-c", "pass"), "directory": Path()}
    return BotSpec(**(fields | changes))


def test_each_bot_is_recorded_with_the_distribution_whose_registrar_added_it() -> None:
    registry = BotRegistry()
    registry.registrar("loveletter-arena", "0.1.0").add(spec("random"))
    registry.registrar("my-bots", "1.2").add(spec("clever"))
    assert list(registry) == ["random", "clever"]
    assert (registry["clever"].distribution, registry["clever"].version) == ("my-bots", "1.2")
    assert registry.lookup("random").name == "random"


def test_a_second_bot_of_the_same_name_names_both_distributions() -> None:
    registry = BotRegistry()
    registry.registrar("loveletter-arena", "0.1.0").add(spec("random"))
    with pytest.raises(PluginError) as raised:
        registry.registrar("my-bots", "1.2").add(spec("random"))
    assert str(raised.value) == "bot name 'random' is registered by both loveletter-arena 0.1.0 and my-bots 1.2"
    assert registry["random"].distribution == "loveletter-arena"


def test_an_unknown_name_lists_the_installed_ones() -> None:
    registry = BotRegistry()
    registry.registrar("my-bots", "1.2").add(spec("b"))
    registry.registrar("my-bots", "1.2").add(spec("a"))
    with pytest.raises(PluginError, match=r"no bot named 'c' is installed \(installed: a, b\)"):
        registry.lookup("c")


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"name": "two words"}, "a name is letters, digits"),
        ({"name": ""}, "a name is letters, digits"),
        ({"protocol": "http"}, "protocol must be zmq or stdio, not 'http'"),
        ({"command": ()}, "command must be a non-empty tuple of strings"),
        ({"player": "not callable"}, "player must be a callable"),
    ],
)
def test_a_spec_the_arena_could_not_list_or_start_is_refused(changes: dict, problem: str) -> None:
    with pytest.raises(PluginError, match=f"^my-bots 1.2: bot .*: {problem}"):
        BotRegistry().registrar("my-bots", "1.2").add(spec(**changes))


def test_only_a_bot_spec_can_be_added() -> None:
    with pytest.raises(PluginError, match=r"registry\.add\(\) takes a BotSpec, not dict"):
        BotRegistry().registrar("my-bots", "1.2").add({"name": "x"})  # type: ignore[arg-type]

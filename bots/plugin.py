"""Registers the built-in bots: this module is the target of this project's own entry point."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.players import Player
from arena.players.local import MessagePlayer
from arena.plugins import BotOption, BotRegistrar, BotSpec, hookimpl

from .heuristic import HeuristicBot
from .random_bot import RandomBot
from .search import PLAYOUTS, SearchBot

MAX_PLAYOUTS = 100_000
"""A few seconds a move at most (their turns capped too: search.TURNS_A_PLAYOUT): more would hold an in-process run
up, which no clock stops."""

BOTS_DIR = Path(__file__).resolve().parent


def _search_options(playouts: int) -> tuple[BotOption, ...]:
    return (
        BotOption(
            "playouts",
            int,
            playouts,
            1,
            MAX_PLAYOUTS,
            "playouts a decision (fewer where each is long): its strength and its time",
        ),
        BotOption("seed", int, 0, 0, 2**63 - 1, "varies its sampling: another bot of the same strength"),
        BotOption(
            "share", float, None, 0.001, 0.5, "search for this share of each deadline instead (NOT reproducible)"
        ),
    )


@dataclass(frozen=True, slots=True)
class _BuiltIn:
    name: str
    module: str
    """Under bots/, installed as `arena.bots`."""
    make: Callable[..., Any]
    description: str
    arguments: tuple[str, ...] = ()
    """Given its program before the options a file sets (which come after, and win)."""
    options: tuple[BotOption, ...] = ()


BUILT_IN = (
    _BuiltIn("random", "random_bot", RandomBot, "uniform over the legal answers"),
    _BuiltIn(
        "heuristic",
        "heuristic",
        HeuristicBot,
        "counts cards; scores each answer by its odds (Guard, Baron, Prince, King, Handmaid)",
    ),
    _BuiltIn(
        "search",
        "search",
        SearchBot,
        f"samples hidden states consistent with what it saw, plays out each answer ({PLAYOUTS} playouts a move,"
        " fewer at a round's start)",
        options=_search_options(PLAYOUTS),
    ),
)
"""The ladder, weakest first (docs/bots.md gives each one's rating against the others)."""


def _in_process(make: Callable[..., Any]) -> Callable[..., Player]:
    return lambda move_ms, **options: MessagePlayer(make(**options), move_ms)


@hookimpl
def arena_register_bots(registry: BotRegistrar) -> None:
    for bot in BUILT_IN:
        registry.add(
            BotSpec(
                name=bot.name,
                description=bot.description,
                command=(sys.executable, "-m", f"arena.bots.{bot.module}", *bot.arguments),
                directory=BOTS_DIR,
                player=_in_process(bot.make),
                options=bot.options,
            )
        )

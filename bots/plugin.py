"""Registers the built-in bots: this module is the target of this project's own entry point."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena.players import Player
from arena.players.local import MessagePlayer
from arena.plugins import BotRegistrar, BotSpec, hookimpl

from .heuristic import HeuristicBot
from .random_bot import RandomBot
from .search import SearchBot

BOTS_DIR = Path(__file__).resolve().parent

BUILT_IN: tuple[tuple[str, str, Callable[[], Any], str], ...] = (
    ("random", "random_bot", RandomBot, "uniform over the legal answers"),
    (
        "heuristic",
        "heuristic",
        HeuristicBot,
        "counts cards; scores each answer by its odds (Guard, Baron, Prince, King, Handmaid)",
    ),
    (
        "search",
        "search",
        SearchBot,
        "samples hidden states consistent with what it saw, plays out each answer (10% of move_ms)",
    ),
)
"""Name, module under bots/ (installed as `arena.bots`), the bot's class, description."""


def _in_process(make: Callable[[], Any]) -> Callable[[int], Player]:
    return lambda move_ms: MessagePlayer(make(), move_ms)


@hookimpl
def arena_register_bots(registry: BotRegistrar) -> None:
    for name, module, make, description in BUILT_IN:
        registry.add(
            BotSpec(
                name=name,
                description=description,
                command=(sys.executable, "-m", f"arena.bots.{module}"),
                directory=BOTS_DIR,
                player=_in_process(make),
            )
        )

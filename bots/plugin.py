"""Registers the built-in bots: this module is the target of this project's own entry point."""

from __future__ import annotations

import sys
from pathlib import Path

from arena.players.local import MessagePlayer
from arena.plugins import BotRegistrar, BotSpec, hookimpl
from bots.heuristic import HeuristicBot
from bots.random_bot import RandomBot
from bots.search import SearchBot

BOTS_DIR = Path(__file__).resolve().parent


def _subprocess(module: str) -> tuple[str, ...]:
    return (sys.executable, "-m", f"bots.{module}")


@hookimpl
def arena_register_bots(registry: BotRegistrar) -> None:
    registry.add(
        BotSpec(
            name="random",
            description="uniform over the legal answers",
            command=_subprocess("random_bot"),
            directory=BOTS_DIR,
            player=lambda move_ms: MessagePlayer(RandomBot(), move_ms),
        )
    )
    registry.add(
        BotSpec(
            name="heuristic",
            description="counts cards; scores each answer by its odds (Guard, Baron, Prince, King, Handmaid)",
            command=_subprocess("heuristic"),
            directory=BOTS_DIR,
            player=lambda move_ms: MessagePlayer(HeuristicBot(), move_ms),
        )
    )
    registry.add(
        BotSpec(
            name="search",
            description="samples hidden states consistent with what it saw, plays out each answer (10% of move_ms)",
            command=_subprocess("search"),
            directory=BOTS_DIR,
            player=lambda move_ms: MessagePlayer(SearchBot(), move_ms),
        )
    )

"""The target of this package's `loveletter_arena` entry point: tells the arena about first-legal."""

from __future__ import annotations

import sys
from pathlib import Path

from arena.players.local import MessagePlayer
from arena.plugins import BotRegistrar, BotSpec, hookimpl
from firstbot.bot import FirstLegal

PACKAGE_DIR = Path(__file__).resolve().parent


@hookimpl
def arena_register_bots(registry: BotRegistrar) -> None:
    registry.add(
        BotSpec(
            name="first-legal",
            description="always the first legal answer",
            command=(sys.executable, "-m", "firstbot.bot"),
            directory=PACKAGE_DIR,
            player=lambda move_ms: MessagePlayer(FirstLegal(), move_ms),
        )
    )

"""What a plugin says about a bot: enough to list it, start it as a subprocess, or play it in-process."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arena.players.base import Player
from arena.players.values import BotCommand, Transport


@dataclass(frozen=True, slots=True)
class BotSpec:
    name: str
    description: str
    command: tuple[str, ...]
    """The argv that starts the bot as a subprocess speaking PROTOCOL.md."""
    directory: Path
    """The bot's own files: shown read-only to it in the strict sandbox, and its working files' origin."""
    protocol: str = Transport.ZMQ.value
    """How the subprocess talks: "zmq" or "stdio" (a Transport's name: plugins need not import it)."""
    player: Callable[[int], Player] | None = None
    """Makes a trusted in-process player of the same bot for a move time limit in ms: fast runs, no process,
    no sandbox."""


@dataclass(frozen=True, slots=True)
class RegisteredBot:
    """A bot as the registry knows it: its spec and the distribution that registered it."""

    spec: BotSpec
    distribution: str
    version: str

    @property
    def name(self) -> str:
        return self.spec.name

    def bot_command(self) -> BotCommand:
        """How a BotHost starts this bot as a subprocess."""
        return BotCommand(self.spec.name, self.spec.command, Transport(self.spec.protocol), self.spec.directory)

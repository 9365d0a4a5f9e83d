"""What a plugin says about a bot: enough to list it, start it as a subprocess, or play it in-process."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from arena.players.base import Player
from arena.players.values import BotCommand, Transport

OptionValue = int | float
"""What a tournament file may set a bot's option to."""


@dataclass(frozen=True, slots=True)
class BotOption:
    """A parameter a bot takes from the tournament file (`options:` of its entry): passed to its in-process
    player as a keyword, and to its program as `--NAME VALUE`."""

    name: str
    kind: type[int] | type[float]
    default: OptionValue | None
    """None: not set unless the file sets it."""
    minimum: OptionValue
    maximum: OptionValue
    """Bounds that keep a bot from hanging a run: an in-process player has no clock over it."""
    help: str

    def check(self, value: object) -> str | None:
        """What is wrong with `value` for this option, if anything."""
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            return f"{self.name} is a number, not {value!r}"
        if self.kind is int and not isinstance(value, int):
            return f"{self.name} is a whole number, not {value!r}"
        if not self.minimum <= value <= self.maximum:
            return f"{self.name} is from {self.minimum} to {self.maximum}, not {value!r}"
        return None


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
    player: Callable[..., Player] | None = None
    """Makes a trusted in-process player of the same bot for a move time limit in ms (and each option the file
    sets, as a keyword): fast runs, no process, no sandbox."""
    options: tuple[BotOption, ...] = ()
    """The parameters the bot takes (`arena bots` lists them)."""


@dataclass(frozen=True, slots=True)
class RegisteredBot:
    """A bot as the registry knows it: its spec and the distribution that registered it."""

    spec: BotSpec
    distribution: str
    version: str

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def arenas_own(self) -> bool:
        """Registered by this project itself: its in-process player is the arena's own code."""
        return re.sub(r"[-_.]+", "-", self.distribution).lower() == "loveletter-arena"

    def bot_command(self, options: Mapping[str, OptionValue] | None = None) -> BotCommand:
        """How a BotHost starts this bot as a subprocess, with the options set as `--NAME VALUE`."""
        arguments = tuple(part for name, value in (options or {}).items() for part in (f"--{name}", str(value)))
        command = (*self.spec.command, *arguments)
        return BotCommand(self.spec.name, command, Transport(self.spec.protocol), self.spec.directory)

    def option_problems(self, options: Mapping[str, object]) -> list[str]:
        """What is wrong with options a file sets for this bot: unknown names, wrong kinds, values too small."""
        known = {option.name: option for option in self.spec.options}
        problems = []
        for name, value in options.items():
            option = known.get(name)
            if option is None:
                takes = ", ".join(known) or "none"
                problems.append(f"bot {self.name!r} takes no option {name!r} (its options: {takes})")
            elif (problem := option.check(value)) is not None:
                problems.append(problem)
        return problems

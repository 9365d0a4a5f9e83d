"""How a bot is started and timed: plain values, which the configuration, the plugins' bot specs, the runner
and check-bot use without loading the transports."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path


class Transport(StrEnum):
    """How a bot's messages travel (PROTOCOL.md, Transports); arena.players.channels has a channel for each."""

    ZMQ = "zmq"
    STDIO = "stdio"


@dataclass(frozen=True, slots=True)
class BotCommand:
    """How to start a bot: a command, its protocol, and the directory of its files."""

    name: str
    command: tuple[str, ...]
    protocol: Transport = Transport.ZMQ
    directory: Path = field(default_factory=Path.cwd)

    def __post_init__(self) -> None:
        if not isinstance(self.protocol, Transport):  # a name, as a caller without types may give it
            if self.protocol not in tuple(Transport):
                names = " or ".join(transport.value for transport in Transport)
                raise ValueError(f"bot {self.name}: protocol must be {names}, not {self.protocol!r}")
            object.__setattr__(self, "protocol", Transport(self.protocol))
        if not self.command:
            raise ValueError(f"bot {self.name}: the command is empty")

    @classmethod
    def in_directory(
        cls, name: str, command: tuple[str, ...], protocol: Transport | str, directory: Path
    ) -> BotCommand:
        """A command as its author wrote it in `directory`: arguments naming its files become absolute paths,
        since a sandboxed bot starts in a private working directory."""
        directory = directory.resolve()
        program, *arguments = command
        if os.sep in program:  # a bare name is looked up on the bot's PATH, as a shell would: never a file here
            program = _in(directory, program)
        return cls(name, (program, *(_in(directory, part) for part in arguments)), Transport(protocol), directory)


def _in(directory: Path, part: str) -> str:
    """part as an absolute path if it names a file from directory, with neither `..` nor symbolic links (a
    sandbox shows the bot's directory where it really is, not the folders and links a path passes through on its
    way there); else part as it is."""
    if Path(part).is_absolute() or not (directory / part).exists():
        return part
    return os.path.realpath(directory / part)


@dataclass(frozen=True, slots=True)
class Timing:
    """A bot's time per reply is CPU time: what all its processes used since the request, at most move_ms. The
    wall clock only caps it, at wall_factor times move_ms, so that a bot which waits (sleeps, blocks) cannot hold a
    match up. Off its turn a bot is frozen, unless ponder allows it to think on the others' time."""

    move_ms: int = 1000
    startup_ms: int = 10000
    wall_factor: int = 10
    ponder: bool = False

    def __post_init__(self) -> None:
        for name in ("move_ms", "startup_ms", "wall_factor"):
            if getattr(self, name) < 1:
                raise ValueError(f"Timing.{name} must be at least 1, not {getattr(self, name)}")

    @property
    def wall_ms(self) -> int:
        return self.move_ms * self.wall_factor

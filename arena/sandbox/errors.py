"""The sandbox's one error: a bot that cannot be started or watched at all."""

from __future__ import annotations

from arena.errors import ArenaError


class SandboxError(ArenaError):
    """A bot process that cannot be started (command not found, not reachable, bad spec).

    A subclass of ArenaError so the command line turns it into one clear line, like every other error.
    """

"""The project's errors, in one place.

    ArenaError               anything the arena reports to its user
      UsageError             bad command-line usage or configuration (exit status 2)
      ReplayError            a replay file that cannot be read
        ReplayMismatch       a replay line that disagrees with the rules
      SandboxError           a bot process that cannot be started (arena.sandbox)
      PluginError            a bot plugin that cannot be loaded, or registers its bots wrongly (exit status 2)
    RulesError (engine)      a request the rules do not allow
      IllegalAction          an answer not among the legal answers
      IllegalDeal            a round set up against the rules
      WrongPhase             a call that does not fit the match's phase

The engine defines its own errors because it imports nothing of the project.
"""

from __future__ import annotations

from arena.engine.errors import IllegalAction, IllegalDeal, RulesError, WrongPhase


class ArenaError(Exception):
    """An error the command line turns into one clear line."""

    exit_status = 1


class UsageError(ArenaError):
    exit_status = 2


class PluginError(ArenaError):
    """A plugin that fails to import, raises in its hook, or clashes with another: names its distribution."""

    exit_status = 2  # the installation is misconfigured, as a bad configuration file is


class ReplayError(ArenaError):
    """A replay that cannot be read: missing, not JSON lines, no match_start."""


class ReplayMismatch(ReplayError):
    """A replay line that disagrees with the rules."""

    def __init__(self, line: int | None, message: str) -> None:
        self.line = line
        self.message = message
        where = "end of file" if line is None else f"line {line}"
        super().__init__(f"{where}: {message}")


__all__ = [
    "ArenaError",
    "IllegalAction",
    "IllegalDeal",
    "PluginError",
    "ReplayError",
    "ReplayMismatch",
    "RulesError",
    "UsageError",
    "WrongPhase",
]

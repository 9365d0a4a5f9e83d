"""The project's errors, in one place.

    ArenaError               anything the arena reports to its user
      UsageError             bad command-line usage or configuration (exit status 2)
        ConfigError          a tournament file with problems: every one, each as FILE:LINE: field: problem
        FormatError          tournament-format parameters no schedule can meet (arena.tournament)
      ReplayError            a replay file that cannot be read
        ReplayMismatch       a replay line that disagrees with the rules
      SandboxError           a bot process that cannot be started (arena.sandbox)
      PluginError            a bot plugin that cannot be loaded, or registers its bots wrongly (exit status 2)
      StoreError             an output folder that holds other results, or none (exit status 2)
      OutputDiskFull         the disk under the output folder is full: a clean stop, resumed by a rerun
      WorkerFailed           a worker process that failed outside any bot's fault (arena.runner)
    PlayerFault              a seat's player failed (a bot's fault, of a PROTOCOL.md reason): the referee
                             disqualifies that seat, and the match goes on
    RulesError (engine)      a request the rules do not allow
      IllegalAction          an answer not among the legal answers
      IllegalDeal            a round set up against the rules
      WrongPhase             a call that does not fit the match's phase

The engine defines its own errors because it imports nothing of the project.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.engine import FaultReason
from arena.engine.errors import IllegalAction, IllegalDeal, RulesError, WrongPhase


class PlayerFault(Exception):
    """A player failed; the referee disqualifies its seat with this reason and detail. Not an ArenaError: a bot's
    fault ends its seat, never the run."""

    def __init__(self, reason: FaultReason, detail: str, stderr_tail: str = "") -> None:
        super().__init__(f"{reason.value}: {detail}")
        self.reason = reason
        self.detail = detail
        self.stderr_tail = stderr_tail


class ArenaError(Exception):
    """An error the command line turns into one clear line."""

    exit_status = 1


class UsageError(ArenaError):
    exit_status = 2


class ConfigError(UsageError):
    """A configuration file that cannot be used. All its problems at once, so that one edit fixes them all;
    each line reads FILE:LINE: field: problem, as compilers write, so that editors jump to it."""

    def __init__(self, source: str, problems: Sequence[str]) -> None:
        self.source = source
        self.problems = tuple(problems)
        if len(self.problems) == 1:
            message = self.problems[0]
        else:
            message = "\n".join((f"{source}: {len(self.problems)} problems", *self.problems))
        super().__init__(message)


class FormatError(UsageError):
    """A tournament format asked for something impossible: too few bots for a table, a candidate in its own field."""


class PluginError(ArenaError):
    """A plugin that fails to import, raises in its hook, or clashes with another: names its distribution."""

    exit_status = 2  # the installation is misconfigured, as a bad configuration file is


class StoreError(ArenaError):
    """An output folder that cannot be used: another configuration's results, or no results at all."""

    exit_status = 2


class OutputDiskFull(ArenaError):
    """The arena's own output could not be written for want of space. Everything recorded before stays."""

    def __init__(self, path: object) -> None:
        self.path = path
        super().__init__(f"the output disk is full: {path} could not be written; free space and rerun to resume")


class WorkerFailed(ArenaError):
    """A worker could not play a match because of the arena's own failure, not a bot's."""


class RunStopped(ArenaError):
    """The same failure on the arena's side in match after match: the run stops rather than spend the night on it.
    What was played is kept; a rerun after the fix resumes."""


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) during a run: what it kept, for the message that says how to resume."""

    def __init__(self, output: object, kept: int, scheduled: int) -> None:
        super().__init__()
        self.output, self.kept, self.scheduled = output, kept, scheduled

    def __str__(self) -> str:
        of = f" of {self.scheduled}" if self.scheduled else ""
        return (
            f"interrupted: {self.kept}{of} matches are kept in {self.output}; run the same command again to"
            " resume (the matches kept are not played again)"
        )


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
    "ConfigError",
    "FormatError",
    "IllegalAction",
    "IllegalDeal",
    "OutputDiskFull",
    "PlayerFault",
    "PluginError",
    "ReplayError",
    "ReplayMismatch",
    "RulesError",
    "StoreError",
    "UsageError",
    "WorkerFailed",
    "WrongPhase",
]

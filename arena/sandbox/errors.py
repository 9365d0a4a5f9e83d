"""The sandbox's one error: a bot that cannot be started or watched at all."""

from __future__ import annotations

from arena.errors import ArenaError


class SandboxError(ArenaError):
    """A bot process that cannot be started (command not found, not reachable, bad spec).

    A subclass of ArenaError so the command line turns it into one clear line, like every other error.
    """


class SetupError(SandboxError):
    """The machine or the arena could not make a bot's place: no free user id; a cgroup, namespace, mount,
    Landlock or seccomp set-up that failed; bwrap failing before the bot's program ran; the arena's own
    descriptors, disk or memory running out. Never the bot's fault: its match is left unplayed, for a rerun."""

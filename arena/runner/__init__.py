"""Executes matches.

Its names are looked up when first asked for: the arena's own process imports the runner's schedule and
executor, and needs nothing of the referee's (bot hosts, ZeroMQ), which only the match workers load."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arena.runner.referee import FaultReport, MatchOutcome, play_match

__all__ = ["FaultReport", "MatchOutcome", "play_match"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'arena.runner' has no attribute {name!r}")
    from arena.runner import referee

    return getattr(referee, name)

"""Executes matches."""

from arena.runner.referee import FaultReport, MatchOutcome, play_match

__all__ = ["FaultReport", "MatchOutcome", "play_match"]

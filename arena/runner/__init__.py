"""Executes matches."""

from arena.runner.referee import play_match

__all__ = ["play_match"]

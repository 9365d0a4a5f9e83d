"""Replays: writing, reading, verifying and narrating matches."""

from arena.replay.account import Narrator
from arena.replay.lines import ReplayLine, parse_replay, read_replay, replay_lines, write_replay
from arena.replay.verify import Resimulation, verify

__all__ = [
    "Narrator",
    "ReplayLine",
    "Resimulation",
    "parse_replay",
    "read_replay",
    "replay_lines",
    "verify",
    "write_replay",
]

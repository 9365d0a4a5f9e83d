"""What is read back from matches: per-bot diagnostics (provable mistakes judged from each seat's own view,
reply times, faults). It reads the engine's public API, the replays and the store; nothing below imports it."""

from arena.analysis.mistakes import Category, Seat
from arena.analysis.watch import SeatDiagnosis, Watch, diagnose_replay

__all__ = ["Category", "Seat", "SeatDiagnosis", "Watch", "diagnose_replay"]

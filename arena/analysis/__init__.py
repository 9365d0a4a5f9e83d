"""What is read back from matches: per-bot diagnostics (provable mistakes judged from each seat's own view,
reply times, faults). It reads the engine's public API, the replays and the store; nothing below imports it."""

from importlib.machinery import EXTENSION_SUFFIXES

from arena.analysis import mistakes, watch
from arena.analysis.fairplay import notes, sight
from arena.analysis.mistakes import Category, Seat
from arena.analysis.watch import SeatDiagnosis, Watch, diagnose_replay


def judges_compiled() -> bool:
    """Whether the judges that follow every decision run compiled (setup.py: a wheel built where a C compiler is
    at hand), or as plain Python, with the same results at about half again the cost."""
    return all(str(module.__file__).endswith(tuple(EXTENSION_SUFFIXES)) for module in (mistakes, watch, notes, sight))


__all__ = ["Category", "Seat", "SeatDiagnosis", "Watch", "diagnose_replay", "judges_compiled"]

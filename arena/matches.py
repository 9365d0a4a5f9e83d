"""A scheduled match and what came of it: plain values that the runner hands its workers and gets back (so any
executor can carry them), that the store records and the report reads, none of them importing another."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from arena.engine import FaultReason


@dataclass(frozen=True, slots=True)
class MatchJob:
    match_id: str
    round: int
    seats: tuple[str, ...]
    """Bot names in seat order."""
    deal_key: str
    seed: int


@dataclass(frozen=True, slots=True)
class FaultRow:
    match_id: str
    seat: int
    bot: str
    reason: FaultReason
    detail: str
    stderr_tail: str
    after_match: bool


@dataclass(frozen=True, slots=True)
class SeatStats:
    """How one seat played one match, for its bot's diagnostics (arena.analysis): kept in the store, never in the
    replay, so that a replay is the same bytes whatever the timings."""

    decisions: int
    mistakes: tuple[tuple[int, str], ...] = ()
    """(replay line of the decision, mistake category) of each provable mistake."""
    reply_ms: tuple[float, ...] = ()
    """The CPU time charged to each of its `act` replies, in ms; empty for a bot played in-process."""
    reply_wall_ms: tuple[float, ...] = ()
    """The wall-clock time of each, in ms."""


@dataclass(frozen=True, slots=True)
class MatchDone:
    job: MatchJob
    winners: tuple[int, ...]
    ranking: tuple[tuple[int, ...], ...]
    tokens: tuple[int, ...]
    faults: tuple[FaultRow, ...]
    duration_s: float
    replay: str | None
    """The replay file's text (JSON lines), for the arena to write: a worker on another machine has no access to
    the output. None when the worker wrote the file itself, into the output folder it shares with the arena."""
    peak_memory: tuple[int | None, ...] = ()
    """Per seat, in bytes: the most memory the bot's processes had used by the end of the match (every process of
    that bot in this worker so far); None for a bot played in-process. Empty in results older than the figure."""
    seat_stats: tuple[SeatStats, ...] = ()
    """Per seat; empty in results older than the diagnostics (they are judged again from the replay)."""
    logs: tuple[tuple[str, bytes], ...] = ()
    """(bot, what it wrote to stderr in this match) for the arena to keep, with the replay's text; empty when the
    worker kept them itself."""
    fair_play: str = ""
    """The match's fair-play notes (arena.analysis.fairplay.notes_json); empty in results older than them (they are
    noted again from the replay)."""


@dataclass(frozen=True, slots=True)
class MatchFailed:
    """A match the arena itself failed to play: an error on its own side, not a bot's fault. It is not
    recorded, so the next run of the same tournament plays it again."""

    job: MatchJob
    error: str
    """The traceback, for the run's error log."""
    setup: str = ""
    """Where a bot's sandbox could not be set up (arena.sandbox.SetupError): why, in one line. The same in match
    after match, the run stops (the machine will not do better tonight)."""


MatchOutcome = MatchDone | MatchFailed
"""What an executor hands back for each job."""


DRAWN_SEED_BITS = 128
"""A tournament seed drawn for its output folder: far past what a bot could try in a match's time."""
GUESSABLE_SEEDS = 2**64
"""A written seed below this is short enough for a bot to try every candidate and predict the deals."""


def draw_tournament_seed() -> int:
    """A tournament seed from the system's entropy: no bot can guess it, so none can foresee a deal."""
    return secrets.randbits(DRAWN_SEED_BITS)


def guessable(tournament_seed: int) -> bool:
    """Whether a seed is short enough to be found by trying seeds, and every deal then predicted from it."""
    return tournament_seed < GUESSABLE_SEEDS


def match_seed(tournament_seed: int, deal_key: str) -> int:
    """A match's seed from the tournament's and the match's identity alone: the same at any concurrency,
    in any order, on any machine."""
    digest = hashlib.sha256(f"{tournament_seed}/{deal_key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1  # fits an SQLite integer

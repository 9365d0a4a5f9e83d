"""A tournament's configuration as the runner, the store and the workers see it: plain frozen values with
absolute paths, and the hash of what decides the results. Reading a YAML file into them is arena.config.loader's
job; this module imports neither YAML nor pydantic, so a worker process that only receives a configuration does
not load them."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from arena.matches import DRAWN_SEED_BITS, guessable
from arena.players.values import BotCommand, Timing
from arena.sandbox import Limits, SandboxLevel

DEFAULT_RULESET = "2019"
DEFAULT_ROUNDS = 3
NAME_MAX = 64
HASH_VERSION = 1
"""Part of what config_hash hashes: raised when the meaning of a hashed field changes so that results recorded
before would not stand (not for move_ms becoming CPU time: see _hashed_timing)."""


class Format(StrEnum):
    """How bots are brought to tables (arena.tournament schedules each)."""

    ROUND_ROBIN = "round-robin"
    SWISS = "swiss"
    GAUNTLET = "gauntlet"
    SPRT = "sprt"


# ---------------------------------------------------------------------------------------------- the result


@dataclass(frozen=True, slots=True)
class BotEntry:
    """One bot of the tournament: an installed bot by its registry name, or a command to start."""

    name: str
    builtin: str | None = None
    """The registry name (arena.plugins.load_registry()); the runner resolves it."""
    subprocess: bool = False
    """A built-in bot as a sandboxed subprocess over the protocol, as submitted bots run, not in-process."""
    command: BotCommand | None = None
    """Absolute file arguments, the protocol and the bot's own directory."""
    options: tuple[tuple[str, int | float], ...] = ()
    """A built-in bot's parameters (name, value), sorted by name: its spec's BotOption's say which it takes."""

    def __post_init__(self) -> None:
        if (self.builtin is None) == (self.command is None):
            raise ValueError(f"bot {self.name}: exactly one of builtin and command")


@dataclass(frozen=True, slots=True)
class GauntletConfig:
    """Candidates each play the rest (the field); nobody else is ranked."""

    candidates: tuple[str, ...]
    repeats: int = 1
    """How many times each of a candidate's tables is played, seats rotated."""


@dataclass(frozen=True, slots=True)
class SprtConfig:
    """A sequential test of a candidate against a baseline, in pairs of matches on the same deals (docs/sprt.md)."""

    candidate: str
    baseline: str
    elo0: float = 0.0
    elo1: float = 5.0
    alpha: float = 0.05
    beta: float = 0.05
    max_pairs: int = 20_000
    field: tuple[str, ...] = ()
    """The other seats of a table of more than two, the same in every match."""


class ExecutorType(StrEnum):
    """Where matches run (arena.runner.executor)."""

    LOCAL = "local"
    DASK = "dask"


DEFAULT_MAX_BOT_MB = 20


@dataclass(frozen=True, slots=True)
class ExecutorConfig:
    """Where matches run. It decides nothing of the results, so config_hash leaves it out: a tournament begun
    on one machine can be resumed on a cluster."""

    type: ExecutorType = ExecutorType.LOCAL
    address: str | None = None
    """The Dask scheduler's address (tcp://host:8786), for type dask."""
    max_bot_mb: int = DEFAULT_MAX_BOT_MB
    """The cap on a command bot's directory, packed, shipped to cluster workers."""


@dataclass(frozen=True, slots=True)
class TournamentConfig:
    name: str
    ruleset: str
    format: Format
    players_per_match: int
    rounds: int
    """Swiss rounds; unused by the other formats."""
    repeats: int
    """Round-robin: how many times each table is played, seats rotated; 1 for the other formats."""
    duplicate: bool
    seed: int | None
    """As written; None: none was, and the output folder's own seed is used (drawn when the folder is created,
    kept in its results: ResultStore.tournament_seed)."""
    concurrency: int
    sandbox: SandboxLevel
    timing: Timing
    limits: Limits
    output: Path
    """Absolute."""
    bots: tuple[BotEntry, ...]
    gauntlet: GauntletConfig | None
    source: Path
    """The YAML file, absolute."""
    raw_text: str = field(repr=False)
    """The file as read: kept beside the results so that a run can be told exactly what it was."""
    executor: ExecutorConfig = ExecutorConfig()
    sprt: SprtConfig | None = None
    bot_uids: range | None = None
    """As root: the ids bots run as (arena.sandbox.users); None: the lowest range nobody holds. Not hashed: it
    changes no result."""

    @property
    def bot_names(self) -> tuple[str, ...]:
        return tuple(bot.name for bot in self.bots)


def config_hash(config: TournamentConfig) -> str:
    """SHA-256 of what decides a tournament's results: everything but concurrency and output (and the file's
    comments and layout). Paths count relative to the file's directory, so a moved project keeps its hash.

    A file without a seed hashes as `seed: 0`, which it meant before seeds were drawn: a folder begun then
    resumes. The seed drawn for a folder is not hashed (the same file is the same configuration on every run);
    the store keeps it, and refuses a written seed other than the one it holds."""
    base = config.source.parent.resolve()

    def portable(part: str) -> str:
        return os.path.relpath(part, base) if os.path.isabs(part) else part

    def bot(entry: BotEntry) -> dict[str, Any]:
        if entry.command is None:
            hashed = {"name": entry.name, "builtin": entry.builtin, "subprocess": entry.subprocess}
            return {**hashed, "options": dict(entry.options)} if entry.options else hashed  # older hashes stand
        return {
            "name": entry.name,
            "command": [portable(part) for part in entry.command.command],
            "protocol": entry.command.protocol,
            "directory": portable(str(entry.command.directory)),
        }

    canonical = {
        "hash_version": HASH_VERSION,
        "name": config.name,
        "ruleset": config.ruleset,
        "format": config.format.value,
        "players_per_match": config.players_per_match,
        "rounds": config.rounds,
        "repeats": config.repeats,
        "duplicate": config.duplicate,
        "seed": 0 if config.seed is None else config.seed,
        "sandbox": config.sandbox.value,
        "timing": _hashed_timing(config.timing),
        "limits": _hashed_limits(config.limits),
        "bots": [bot(entry) for entry in config.bots],
        "gauntlet": None if config.gauntlet is None else dataclasses.asdict(config.gauntlet),
    }
    if config.sprt is not None:  # only there: the hash of every other format is as it was
        canonical["sprt"] = dataclasses.asdict(config.sprt)
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def seed_warning(config: TournamentConfig) -> str | None:
    """Why a bot could know the written seed, and so every deal before it is dealt: it is short enough to find by
    trying seeds, or the file that holds it lies in a sandboxed bot's directory, which the sandbox shows the bot.
    None for a seed the file leaves to the output folder, and one no bot can reach."""
    if config.seed is None:
        return None
    strong = f"python3 -c 'import secrets; print(secrets.randbits({DRAWN_SEED_BITS}))'"
    if guessable(config.seed):
        return (
            f"seed {config.seed} is short enough to guess, and bots could predict every deal from it; leave seed out"
            f" to have a {DRAWN_SEED_BITS}-bit one drawn and kept in the output folder, or write a strong one: {strong}"
        )
    if config.sandbox is SandboxLevel.NONE:
        return None
    for entry in config.bots:
        if entry.command is not None and config.source.resolve().is_relative_to(entry.command.directory):
            return (
                f"seed: this file lies in the directory of bot {entry.name!r}, {entry.command.directory}, which the"
                " sandbox shows the bot: it could read the seed, and predict every deal from it; leave seed out to"
                " have one drawn and kept in the output folder, or move the file out of that directory"
            )
    return None


def _hashed_timing(timing: Timing) -> dict[str, Any]:
    """The timing as config_hash takes it: wall_factor and ponder at their defaults are left out, so that a
    tournament begun before they existed resumes. move_ms became CPU time then; a bot that replied within it
    by the wall clock is within it by its CPU time too, so the results already recorded stand."""
    values = dataclasses.asdict(timing)
    for name, default in (("wall_factor", Timing().wall_factor), ("ponder", Timing().ponder)):
        if values[name] == default:
            del values[name]
    return values


def _hashed_limits(limits: Limits) -> dict[str, Any]:
    """The limits as config_hash takes them: how memory_mb is held changes no result of a bot within it, so the
    mechanism is left out (and a tournament begun before there was a choice keeps its hash); so is disk_mb at
    its default, so that a tournament begun before there was a disk limit resumes under it."""
    values = dataclasses.asdict(limits)
    del values["memory_mechanism"]
    if values["disk_mb"] == Limits().disk_mb:
        del values["disk_mb"]
    return values


def bot_directory(command: Sequence[str], written: str | None, base: Path) -> Path:
    """The bot's own directory: as written, else that of the first part of the command that names a file (relative
    to base: `./bot`, `python3 bots/a/bot.py`; or, after the program, absolute: `node /home/me/js/bot.js`), else
    base (the YAML file's directory; for `arena check-bot`, the directory it runs in). An absolute program is the
    interpreter (`/usr/bin/python3 bot.py`), not the bot."""
    if written:
        return (base / written).resolve()
    program = [] if not command or Path(command[0]).is_absolute() else [command[0]]
    for part in [*program, *command[1:]]:
        if (base / part).is_file():  # an absolute part is itself
            return (base / part).parent.resolve()
    return base

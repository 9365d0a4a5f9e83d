"""A ladder file: a tournament file (arena.config.loader reads and checks it, as for `arena run`) plus a `ladder:`
section, read into plain frozen values or refused with every problem at once, each as FILE:LINE: field.path: problem.

The tournament part says how the ladder's matches are played (name, ruleset, players_per_match, sandbox, limits,
executor, concurrency, bot_uids) and its `bots` are the reference bots every entrant meets; `seed` and `output`
keep their meaning for the final tournament at the deadline. That final's format is said once, in `ladder.final`:
a ladder file refuses the top-level `format`, `rounds`, `repeats`, `duplicate`, `gauntlet` and `sprt`, which
would say it a second time (or, for `gauntlet` and `sprt`, name candidates the entrants are). The section is taken
out of the file's data before the tournament part is checked, so that load_config keeps refusing `ladder` in a
tournament file; both are checked against the same node tree, so every line is the file's own. See docs/serve.md.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

from arena.config.loader import (
    LineOf,
    Model,
    Positive,
    Problem,
    Source,
    TournamentModel,
    build_tournament,
    folder_in_bot_directory,
    load_file,
    validate_model,
    validate_tournament,
)
from arena.config.values import DEFAULT_ROUNDS, Format, GauntletConfig, TournamentConfig

MIB = 2**20
"""A configuration's MB, as memory_mb's: a mebibyte."""

MISSING = "missing: a ladder file is a tournament file with a ladder: section (see docs/serve.md)"


@dataclass(frozen=True, slots=True)
class UploadRules:
    """What one upload may be, checked before it is unpacked and while it is: a ladder is open to every entrant,
    and a zip bomb or a flood of uploads must cost the server nothing."""

    max_bytes: int = 5 * MIB
    """The upload itself."""
    max_files: int = 200
    max_unpacked_bytes: int = 50 * MIB
    per_entrant_per_hour: int = 20
    """Uploads an entrant may make in any hour: each one costs a check and new matches."""


@dataclass(frozen=True, slots=True)
class Schedule:
    """How the ladder chooses its matches (arena.serve.matchmaking): a new version's rating is unsure, so it plays
    first; the reference bots keep the ratings anchored to bots that never change."""

    new_version_matches: int = 20
    """Matches a new version plays first, before ordinary matchmaking."""
    reference_every: int = 5
    """Every this many matches of a version, its table is the reference bots'; 0: never."""
    sigma_target: float = 2.0
    """The openskill sigma under which a version's rating counts as settled."""


@dataclass(frozen=True, slots=True)
class FinalRules:
    """The tournament at the deadline, with exactly a tournament file's format options: the entrants' last
    versions (and the reference bots) play it, and its standings are the ladder's result."""

    format: Format = Format.SWISS
    """round-robin, swiss or gauntlet (the entrants the candidates, the reference bots the field)."""
    rounds: int | None = DEFAULT_ROUNDS
    """Swiss rounds; None for the other formats."""
    repeats: int = 1
    """How many times each table is played, seats rotated: a round-robin's repeats, a gauntlet's gauntlet.repeats;
    1 for a swiss."""
    duplicate: bool = False


@dataclass(frozen=True, slots=True)
class LadderConfig:
    """A ladder file, read: what `arena serve` runs."""

    source: Path
    """The file, absolute."""
    tournament: TournamentConfig
    """The tournament part as load_config builds it: its bots are the reference bots, its format, rounds, repeats
    and duplicate the final's (for a gauntlet final, gauntlet.candidates is empty: the entrants, named at the
    deadline)."""
    data: Path
    """The server's folder (its database, the uploads, the matches): absolute."""
    deadline: datetime | None
    """Timezone-aware; None: the ladder stays open."""
    uploads: UploadRules
    schedule: Schedule
    final: FinalRules


def load_ladder(path: Path | str) -> LadderConfig:
    """Read, check and resolve a ladder file; arena.errors.ConfigError listing every problem, FILE:LINE each."""
    (tournament, ladder), source = load_file(path, _validate)
    final = FinalRules(
        format=Format(ladder.final.format),
        rounds=ladder.final.rounds if ladder.final.format == Format.SWISS else None,
        repeats=ladder.final.repeats,  # 1 for a swiss: _checks refuses it written there
        duplicate=ladder.final.duplicate,
    )
    config = dataclasses.replace(
        build_tournament(tournament, source),
        format=final.format,
        rounds=final.rounds if final.rounds is not None else DEFAULT_ROUNDS,
        repeats=final.repeats if final.format == Format.ROUND_ROBIN else 1,
        duplicate=final.duplicate,
        gauntlet=GauntletConfig((), final.repeats) if final.format == Format.GAUNTLET else None,
    )
    uploads, schedule = ladder.uploads, ladder.schedule
    return LadderConfig(
        source=source.path,
        tournament=config,
        data=(source.base / ladder.data).resolve(),
        deadline=None if ladder.deadline is None else datetime.fromisoformat(ladder.deadline),
        uploads=UploadRules(
            max_bytes=uploads.max_mb * MIB,
            max_files=uploads.max_files,
            max_unpacked_bytes=uploads.max_unpacked_mb * MIB,
            per_entrant_per_hour=uploads.per_entrant_per_hour,
        ),
        schedule=Schedule(schedule.new_version_matches, schedule.reference_every, schedule.sigma_target),
        final=final,
    )


# ------------------------------------------------------------------------------------------------ shape


def _aware_time(value: str) -> str:
    """An instant everyone agrees on: a deadline without a zone would move with the server's clock setting."""
    example = "2026-12-20T23:59:00+01:00"
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise PydanticCustomError("arena", f"not an ISO 8601 date and time: {value!r} (e.g. {example})") from None
    if moment.utcoffset() is None:
        written = moment.isoformat()
        raise PydanticCustomError(
            "arena",
            f"{value!r} has no time zone: add one, e.g. {written}+01:00, or {written}Z for UTC",
        )
    return value


_Count = Annotated[int, Field(ge=0)]


class _Uploads(Model):
    max_mb: Positive = UploadRules().max_bytes // MIB
    max_files: Positive = UploadRules().max_files
    max_unpacked_mb: Positive = UploadRules().max_unpacked_bytes // MIB
    per_entrant_per_hour: Positive = UploadRules().per_entrant_per_hour


class _Schedule(Model):
    new_version_matches: _Count = Schedule().new_version_matches
    reference_every: _Count = Schedule().reference_every
    sigma_target: Annotated[float, Field(gt=0, allow_inf_nan=False)] = Schedule().sigma_target


class _Final(Model):
    """A tournament file's format options, with its types and ranges (loader._Tournament's)."""

    format: Literal["round-robin", "swiss", "gauntlet"] = "swiss"  # as FinalRules(): any number of entrants
    rounds: Positive = DEFAULT_ROUNDS
    repeats: Positive = 1
    duplicate: bool = False


class _Ladder(Model):
    sections = ("uploads", "schedule", "final")

    data: Annotated[str, Field(min_length=1)]
    deadline: Annotated[str, AfterValidator(_aware_time)] | None = None
    uploads: _Uploads = _Uploads()
    schedule: _Schedule = _Schedule()
    final: _Final = _Final()


class _LadderFile(Model):
    """The ladder: section alone, validated apart from the tournament part, so that its errors' paths start at
    `ladder` and its unknown keys are suggested from its own."""

    ladder: _Ladder


# ------------------------------------------------------------------------------------------------ checks

_FINAL_KEYS = ("format", "rounds", "repeats", "duplicate")
"""Top-level keys of a tournament file that a ladder file says in ladder.final."""
_REFUSED = {
    **{key: f"not in a ladder file: the final tournament's {key} is ladder.final.{key}" for key in _FINAL_KEYS},
    "gauntlet": "not in a ladder file: a gauntlet final (ladder.final.format: gauntlet) has the entrants as its"
    " candidates and the reference bots as its field",
    "sprt": "not in a ladder file: its final is a round-robin, a swiss or a gauntlet (ladder.final.format)",
}


def _validate(
    data: dict[str, Any], source: Source, line_of: LineOf
) -> tuple[tuple[TournamentModel, _Ladder] | None, list[Problem]]:
    """The tournament part's model and the ladder section's, or None; and every problem of both."""
    if "ladder" not in data:  # a tournament file, most likely: one line says what is missing, not its keys
        return None, [Problem(("ladder",), MISSING, line=1)]
    problems = [Problem((key,), message) for key, message in _REFUSED.items() if key in data]
    part = {key: value for key, value in data.items() if key != "ladder" and key not in _REFUSED}
    # The final's format is not the tournament part's to check: a round-robin with none of its options asks
    # nothing of the other keys (load_ladder then sets the final's).
    part["format"] = Format.ROUND_ROBIN.value
    tournament, found = validate_tournament(part, source, line_of)
    problems += found
    section, found = validate_model(_LadderFile, {"ladder": data["ladder"]}, _checks(data, source.base))
    problems += found
    if tournament is None or section is None:
        return None, problems
    return (tournament, section.ladder), problems


def _checks(data: Mapping[str, Any], base: Path) -> Iterator[Problem]:
    """What the section's types cannot say. Reads the raw data, skipping what has the wrong type: the shape's
    check reports that."""
    ladder = data["ladder"]
    if not isinstance(ladder, dict):
        return
    final = ladder.get("final")
    if isinstance(final, dict):
        fmt = final.get("format", FinalRules().format.value)
        if fmt in ("round-robin", "swiss", "gauntlet"):  # the rules of a tournament file's keys (loader._checks)
            if "rounds" in final and fmt != Format.SWISS:
                yield Problem(("ladder", "final", "rounds"), f"only for format swiss, not {fmt}")
            if "repeats" in final and fmt == Format.SWISS:
                yield Problem(("ladder", "final", "repeats"), f"only for format round-robin or gauntlet, not {fmt}")
    yield from _data_checks(ladder.get("data"), data, base)


def _data_checks(written: object, data: Mapping[str, Any], base: Path) -> Iterator[Problem]:
    """The data folder holds every entrant's uploaded bot, the ladder's database and its matches: the server's
    own, kept from the bots as the output folder of a tournament is (loader._output_checks)."""
    loc = ("ladder", "data")
    if not isinstance(written, str) or not written:
        return
    if "\0" in written:
        yield Problem(loc, "must not hold a NUL character (\\0): no path can")
        return
    folder = (base / written).resolve()
    if folder.exists() and not folder.is_dir():
        yield Problem(loc, f"{folder} is a file, not a directory")
    elif base.is_relative_to(folder):
        what = "this file's folder" if folder == base else f"{folder}, which holds this file's folder"
        yield Problem(
            loc,
            f"{what}: the data folder is the server's own (its database, the uploads, the matches); give it a"
            " folder of its own, e.g. data: ladder-data",
        )
    yield from folder_in_bot_directory(
        data,
        base,
        folder,
        loc,
        what=f"{folder} is",
        kept="the other entrants' uploaded bots, the ladder's matches and its database kept there",
        called="the data",
        written=True,
    )


__all__ = ["MIB", "FinalRules", "LadderConfig", "Schedule", "UploadRules", "load_ladder"]

"""The ladder's final tournament, at the deadline: the entrants' active versions (and the reference bots) play it
as `arena run` plays a tournament file, and its standings are the ladder's result.

The final is a real tournament file, final.yaml in the data folder, written from the ladder file and the store:
so it is what an organiser can read, check (`arena validate`) and run by hand, and its results are kept, resumed
and reported as any tournament's. Its text depends on nothing but the ladder file and the active versions (no
date, no drawn seed: the output folder draws one and keeps it), so running the final again resumes it, and a
changed set of active versions is another configuration, which the output folder refuses without --restart.

Each entrant's bot is its active version started exactly as the ladder's matches start it
(arena.serve.checks.version_command): the file is loaded back before anything is played, and a bot that would
start otherwise is refused. The gradebook (gradebook.csv in the output folder) has gauntlet.csv's columns
(arena.report.gradebook) for every format, with a row per reference bot besides, marked.
"""

from __future__ import annotations

import dataclasses
import io
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from arena.analysis.diagnose import diagnose, fair_play
from arena.config import NAME_MAX, BotEntry, ExecutorType, Format, TournamentConfig, config_hash, load_config
from arena.config.changes import changed_fields
from arena.errors import ArenaError, StoreError, UsageError
from arena.report.gradebook import bot_columns, ranks_among
from arena.runner.tournament import RunSummary, run_tournament
from arena.serve.checks import version_command
from arena.serve.ladder import LadderConfig
from arena.serve.server import open_ladder
from arena.serve.store import Entrant, LadderStore, Role, Version
from arena.store import ResultStore
from arena.store.database import recorded_config_hash, recorded_config_text
from arena.store.disk import write_atomically
from arena.store.export import standing_rows, write_rows

FINAL_FILE = "final.yaml"
"""In the data folder: the final tournament's file, written again at every run of the final."""
GRADEBOOK = "gradebook.csv"
"""In the final's output folder."""
SUFFIX = "-final"
"""The final's name is the ladder's with this after it."""
HEADER = (
    "# The ladder's final tournament, written by `arena serve-admin final` from the ladder file and the entrants'\n"
    "# active versions, and written again at every run of it: change the ladder file, not this one.\n"
)


@dataclass(frozen=True, slots=True)
class FinalFile:
    """final.yaml, written and loaded back: what play_final plays."""

    path: Path
    config: TournamentConfig
    """As load_config reads the file."""
    entrants: Mapping[str, str]
    """The entrants who play it, by name: the digest of the version each plays."""


@dataclass(frozen=True, slots=True)
class FinalSummary:
    """What a run of the final left, and where."""

    file: Path
    """final.yaml."""
    run: RunSummary
    """run_tournament's: the output folder, the matches played now and kept."""
    gradebook: Path | None
    """None while matches of the final failed in the arena: it is written once every match is played."""
    report: Path
    """The report's index page."""
    report_problems: tuple[str, ...] = ()
    """Matches whose replay could not be read: the report has no viewer data for them."""


def _utc_now() -> datetime:
    return datetime.now(UTC)


# ------------------------------------------------------------------------------------------------ the file


def final_entrants(store: LadderStore) -> list[tuple[Entrant, Version]]:
    """Every entrant with an active version (a version that passed its check), in the order they were added: the
    bots the ladder's matchmaking seats, so the final's."""
    active = store.active()
    found = []
    for entrant in store.entrants():
        digest = active.get(entrant.id)
        if digest is None:
            continue
        version = store.version(entrant.id, digest)
        assert version is not None  # active names a stored version
        found.append((entrant, version))
    return found


def final_config_text(ladder: LadderConfig, store: LadderStore, versions: Path) -> str:
    """final.yaml's text: the same ladder file and active versions give the same text, byte for byte.

    UsageError, one line, when the final cannot be played: fewer entrants with an active version than a table
    has seats, an entrant named as a reference bot, or a ladder name too long to name the final."""
    return _text(_final_data(ladder, final_entrants(store), versions))


def check_time(ladder: LadderConfig, now: bool = False, clock: Callable[[], datetime] = _utc_now) -> None:
    """UsageError before the deadline (or on a ladder with none) unless `now`: the final plays the versions active
    when it starts, so played early it leaves out what entrants still upload."""
    if now:
        return
    if ladder.deadline is None:
        raise UsageError(
            f"{ladder.source} sets no deadline (ladder.deadline): the ladder stays open; --now plays the final"
            " now, with the versions active now"
        )
    moment = clock()
    if moment < ladder.deadline:
        raise UsageError(
            f"the ladder's deadline is {ladder.deadline.isoformat()}, {_left(ladder.deadline - moment)} from now:"
            " the final is played after it; --now plays it now, with the versions active now"
        )


def write_final(ladder: LadderConfig, *, now: bool = False, clock: Callable[[], datetime] = _utc_now) -> FinalFile:
    """Check that the final may be played (check_time, final_config_text), write final.yaml in the data folder and
    load it back as `arena run` would; ArenaError if a bot of it would start otherwise than in the ladder."""
    check_time(ladder, now, clock)
    store, versions = open_ladder(ladder)
    chosen = final_entrants(store)
    text = _text(_final_data(ladder, chosen, versions))
    path = ladder.data / FINAL_FILE
    write_atomically(path, text)
    config = load_config(path)
    expected = [BotEntry(e.name, command=version_command(e.name, v, versions)) for e, v in chosen]
    expected += ladder.tournament.bots
    differ = [mine.name for mine, loaded in zip(expected, config.bots, strict=True) if mine != loaded]
    if differ:  # a word of the command naming no file of the bot's own, but one of the data folder
        raise ArenaError(
            f"{path}: {', '.join(differ)} would start otherwise in the final than in the ladder: a word of its"
            f" command that names no file of the bot's names one in {ladder.data}, from where a tournament file's"
            " command words are read as files"
        )
    return FinalFile(path, config, {entrant.name: version.digest for entrant, version in chosen})


def _final_data(ladder: LadderConfig, chosen: Sequence[tuple[Entrant, Version]], versions: Path) -> dict[str, Any]:
    """final.yaml as a plain mapping, in a tournament file's usual order of keys."""
    tournament, final = ladder.tournament, ladder.final
    seats = tournament.players_per_match
    if len(chosen) < seats:
        have = f"{len(chosen)} {'has' if len(chosen) == 1 else 'have'}"
        raise UsageError(
            f"the final needs at least {seats} entrants with an active version (a bot that passed its check), one"
            f" per seat of a table; {have} one"
        )
    references = set(tournament.bot_names)
    taken = [entrant.name for entrant, _ in chosen if entrant.name in references]
    if taken:
        raise UsageError(
            f"entrant{'s' if len(taken) > 1 else ''} {', '.join(map(repr, taken))} named as a reference bot: a"
            " tournament's bots need names of their own"
        )
    name = tournament.name + SUFFIX
    if len(name) > NAME_MAX:
        raise UsageError(
            f"the final is named {name!r}, more than {NAME_MAX} characters: shorten the ladder file's name"
        )
    data: dict[str, Any] = {
        "name": name,
        "ruleset": tournament.ruleset,
        "players_per_match": seats,
        "format": final.format.value,
    }
    if final.format is Format.SWISS:
        data["rounds"] = final.rounds
    elif final.format is Format.ROUND_ROBIN:
        data["repeats"] = final.repeats
    else:
        data["gauntlet"] = {"candidates": [entrant.name for entrant, _ in chosen], "repeats": final.repeats}
    data["duplicate"] = final.duplicate
    if tournament.seed is not None:  # written in the ladder file: it keeps its meaning for the final
        data["seed"] = tournament.seed
    data["sandbox"] = tournament.sandbox.value
    if tournament.bot_uids is not None:
        data["bot_uids"] = f"{tournament.bot_uids.start}-{tournament.bot_uids.stop - 1}"
    limits = {**dataclasses.asdict(tournament.timing), **dataclasses.asdict(tournament.limits)}
    data["limits"] = {**limits, "memory_mechanism": tournament.limits.memory_mechanism.value}
    data["concurrency"] = tournament.concurrency
    executor = tournament.executor
    if executor.type is not ExecutorType.LOCAL:  # a local run's file says none
        data["executor"] = {"type": executor.type.value, "address": executor.address, "max_bot_mb": executor.max_bot_mb}
    data["output"] = str(tournament.output)
    data["bots"] = [_entrant_bot(entrant, version, versions, ladder.data) for entrant, version in chosen]
    data["bots"] += [_reference_bot(entry) for entry in tournament.bots]
    return data


def _entrant_bot(entrant: Entrant, version: Version, versions: Path, folder: Path) -> dict[str, Any]:
    """The version as a command bot of a file in `folder`: its files' paths from there (a tournament file's
    command names files from its own folder, not from the bot's dir), its dir its version's folder."""
    command = version_command(entrant.name, version, versions)
    return {
        "name": entrant.name,
        "command": [_from(folder, part) for part in command.command],
        "protocol": command.protocol.value,
        "dir": _from(folder, str(command.directory)),
    }


def _from(folder: Path, part: str) -> str:
    """An absolute path inside `folder` as a path from it; any other word as it is."""
    path = Path(part)
    if path.is_absolute() and path.is_relative_to(folder) and path != folder:
        return path.relative_to(folder).as_posix()
    return part


def _reference_bot(entry: BotEntry) -> dict[str, Any]:
    """A reference bot as the ladder file has it, its paths absolute (resolved from the ladder file's folder)."""
    if entry.command is None:
        bot: dict[str, Any] = {"name": entry.name, "builtin": entry.builtin}
        if entry.subprocess:
            bot["subprocess"] = True
        if entry.options:
            bot["options"] = dict(entry.options)
        return bot
    return {
        "name": entry.name,
        "command": list(entry.command.command),
        "protocol": entry.command.protocol.value,
        "dir": str(entry.command.directory),
    }


class _Dumper(yaml.SafeDumper):
    """SafeDumper that also quotes what YAML 1.2 reads as a number, as the arena's loader does (`1e3`, `0o17`: its
    int and float resolvers, arena.config.loader): a bot may be named so, and it must stay a string."""


_Dumper.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"), list("-+0123456789")
)
_Dumper.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+.0123456789"),
)


def _text(data: dict[str, Any]) -> str:
    dumped = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=2**16)
    return HEADER + dumped


def _left(span: timedelta) -> str:
    """A timedelta as a person reads it: 2 days 3 h, 5 h 12 min, 40 s."""
    seconds = int(span.total_seconds())
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    if days:
        return f"{days} day{'s' if days > 1 else ''} {hours} h"
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"


# ------------------------------------------------------------------------------------------------ the run


def play_final(
    ladder: LadderConfig,
    final: FinalFile,
    *,
    restart: bool = False,
    progress: bool | None = None,
    live: Callable[[int, int], None] | None = None,
) -> FinalSummary:
    """Play what is not played yet of the final (run_tournament, as `arena run`), then write its gradebook and
    its report. A final begun with other versions is refused unless `restart`, which discards it."""
    config = final.config
    recorded = recorded_config_hash(config.output)
    if not restart and recorded is not None and recorded != config_hash(config):
        changes = changed_fields(recorded_config_text(config.output), config.raw_text)
        what = "; ".join(changes) or "a version's files or a path changed"
        raise StoreError(
            f"{config.output} holds a final of other bots or rules ({what}): the active versions or the ladder"
            f" file changed since it was played; `arena serve-admin final {ladder.source} --restart` discards it"
            " and plays the final of the versions active now"
        )
    run = run_tournament(config, restart=restart, progress=progress, live=live)
    path = run.output / GRADEBOOK
    gradebook = None if run.failed else path
    if gradebook is None:  # grades of a final that lacks matches: none until a run plays them
        path.unlink(missing_ok=True)
    else:
        store = ResultStore.open_existing(run.output)
        roster, _ = open_ladder(ladder)
        try:
            write_gradebook(store, gradebook, final.entrants, roster.entrants())
        finally:
            store.close()
    from arena.report import write_report

    report = write_report(run.output)
    return FinalSummary(final.path, run, gradebook, report.index, tuple(report.problems))


def run_final(
    ladder: LadderConfig,
    *,
    restart: bool = False,
    now: bool = False,
    progress: bool | None = None,
    clock: Callable[[], datetime] = _utc_now,
) -> FinalSummary:
    """write_final, then play_final: `arena serve-admin final` without its messages."""
    return play_final(ladder, write_final(ladder, now=now, clock=clock), restart=restart, progress=progress)


# ------------------------------------------------------------------------------------------------ the gradebook


def write_gradebook(
    store: ResultStore, path: Path, entrants: Mapping[str, str], roster: Sequence[Entrant] = ()
) -> None:
    """gradebook.csv: a row per bot in the order of the standings, with gauntlet.csv's columns
    (arena.report.gradebook.write_gauntlet_csv) whatever the format, and `kind`, `version` and `email` after `bot`;
    then a row for everyone on the roster who had no version in the final (none passed its check), so that the
    gradebook has every entrant.

    `rank` is among the entrants alone (the reference bots are what a grade is measured against, not graded:
    theirs is empty) and `field_rank` in the whole table; `kind` is entrant or reference; `version`, the
    first 12 digits of the entrant's version's hash (`entrants`: name to digest); `email`, the roster's."""
    emails = {entrant.name: entrant.email for entrant in roster}
    diagnoses = {bot.bot: bot for bot in diagnose(store)}
    fair = fair_play(store)  # every bot tested, references too: the correction counts them all
    rows = standing_rows(store)
    ranks = iter(ranks_among([row["rank"] for row in rows if row["bot"] in entrants]))
    flat = []
    for row in rows:
        bot = row["bot"]
        entrant = bot in entrants
        flat.append(
            {
                "rank": next(ranks) if entrant else None,
                "bot": bot,
                "kind": "entrant" if entrant else "reference",
                "version": entrants[bot][:12] if entrant else "",
                "email": emails.get(bot, ""),
                **bot_columns(row, diagnoses[bot], fair),
            }
        )
    columns = list(flat[0]) if flat else []
    for person in roster:
        if person.role is Role.ENTRANT and person.name not in entrants:
            flat.append(
                {
                    **dict.fromkeys(columns),
                    "bot": person.name,
                    "kind": "entrant",
                    "version": "none passed its check",
                    "email": person.email,
                }
            )
    text = io.StringIO(newline="")
    write_rows(flat, "csv", text)
    write_atomically(path, text.getvalue())


__all__ = [
    "FINAL_FILE",
    "GRADEBOOK",
    "FinalFile",
    "FinalSummary",
    "check_time",
    "final_config_text",
    "final_entrants",
    "play_final",
    "run_final",
    "write_final",
    "write_gradebook",
]

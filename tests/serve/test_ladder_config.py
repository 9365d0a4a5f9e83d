"""Ladder files: real YAML files in a temporary directory, read by load_ladder as `arena serve` reads them. A ladder
file is a tournament file (checked by the same code) plus a `ladder:` section; every problem of either is reported
at once, at its line of the file."""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from arena.config import Format, GauntletConfig, load_config
from arena.config.values import DEFAULT_ROUNDS
from arena.errors import ConfigError
from arena.sandbox import SandboxLevel
from arena.serve.ladder import MIB, FinalRules, LadderConfig, Schedule, UploadRules, load_ladder

ROOT = Path(__file__).resolve().parents[2]

TOURNAMENT = """\
name: course
players_per_match: 2
bots:
  - {name: random, builtin: random}
  - {name: heuristic, builtin: heuristic}
"""
"""The tournament part of a ladder: lines 1 to 5."""

LADDER = TOURNAMENT + "ladder:\n  data: ladder-data\n"
"""The smallest ladder file: `ladder:` on line 6, `data:` on line 7."""


def write(directory: Path, text: str, name: str = "ladder.yaml") -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(text))
    return path


def problems(path: Path) -> list[str]:
    """The problem lines of the ConfigError that loading `path` raises, without the file name."""
    with pytest.raises(ConfigError) as raised:
        load_ladder(path)
    prefix = f"{path}:"
    assert all(line.startswith(prefix) for line in raised.value.problems), raised.value.problems
    return [line[len(prefix) :] for line in raised.value.problems]


def ladder(tmp_path: Path, section: str) -> Path:
    """A ladder file whose ladder: section (from line 6) is `section`, indented under it."""
    return write(tmp_path, TOURNAMENT + "ladder:\n" + textwrap.indent(textwrap.dedent(section), "  "))


# ------------------------------------------------------------------------------------------------ loading


def test_the_shipped_example_loads_as_written() -> None:
    config = load_ladder(ROOT / "tournaments" / "ladder.yaml")
    folder = ROOT / "tournaments"
    assert config.source == folder / "ladder.yaml"
    assert config.data == folder / "results" / "course-ladder-data"
    assert config.deadline is None  # a comment there: a course writes its own
    assert config.uploads == UploadRules(5 * MIB, 200, 50 * MIB, 20)
    assert config.schedule == Schedule(new_version_matches=20, reference_every=5, sigma_target=2.0)
    assert config.final == FinalRules(Format.SWISS, rounds=7, repeats=1, duplicate=True)
    tournament = config.tournament
    assert tournament.name == "course-ladder"
    assert tournament.players_per_match == 2
    assert tournament.sandbox is SandboxLevel.STRICT
    assert tournament.bot_names == ("random", "heuristic", "search")
    assert [bot.builtin for bot in tournament.bots] == ["random", "heuristic", "search"]
    assert (tournament.timing.move_ms, tournament.timing.startup_ms) == (1000, 10000)
    assert (tournament.limits.memory_mb, tournament.limits.cpu_s) == (512, 120)
    assert tournament.concurrency == 2
    assert tournament.output == folder / "results" / "course-ladder-final"
    assert (tournament.format, tournament.rounds, tournament.duplicate) == (Format.SWISS, 7, True)


def test_the_shipped_example_with_its_deadline_uncommented_loads_that_instant(tmp_path: Path) -> None:
    text = (ROOT / "tournaments" / "ladder.yaml").read_text()
    assert "  # deadline: 2026-12-20T23:59:00+01:00" in text
    path = write(tmp_path, text.replace("  # deadline:", "  deadline:"))
    assert load_ladder(path).deadline == datetime(2026, 12, 20, 22, 59, tzinfo=UTC)


def test_a_ladder_section_with_only_its_data_folder_takes_the_defaults(tmp_path: Path) -> None:
    config = load_ladder(write(tmp_path, LADDER))
    assert isinstance(config, LadderConfig)
    assert config.source == tmp_path / "ladder.yaml"
    assert config.data == tmp_path.resolve() / "ladder-data"
    assert config.deadline is None
    assert config.uploads == UploadRules() == UploadRules(5 * MIB, 200, 50 * MIB, 20)
    assert config.schedule == Schedule() == Schedule(20, 5, 2.0)
    assert config.final == FinalRules() == FinalRules(Format.SWISS, DEFAULT_ROUNDS, 1, False)
    # The tournament part as load_config builds a tournament's, its format the final's.
    tournament = config.tournament
    assert tournament.bot_names == ("random", "heuristic")
    assert tournament.format is Format.SWISS and tournament.rounds == DEFAULT_ROUNDS
    assert (tournament.repeats, tournament.duplicate, tournament.gauntlet) == (1, False, None)
    assert tournament.output == tmp_path.resolve() / "results" / "course"
    assert tournament.source == tmp_path / "ladder.yaml"
    assert tournament.raw_text == LADDER


def test_every_ladder_field_is_read(tmp_path: Path) -> None:
    path = ladder(
        tmp_path,
        """\
        data: ../elsewhere/data
        deadline: 2026-12-20T23:59:00+01:00
        uploads: {max_mb: 2, max_files: 30, max_unpacked_mb: 8, per_entrant_per_hour: 3}
        schedule: {new_version_matches: 0, reference_every: 0, sigma_target: 1}
        final: {format: round-robin, repeats: 4, duplicate: true}
        """,
    )
    config = load_ladder(path)
    assert config.data == tmp_path.resolve().parent / "elsewhere" / "data"
    assert config.deadline == datetime(2026, 12, 20, 23, 59, tzinfo=timezone(timedelta(hours=1)))
    assert config.uploads == UploadRules(2 * MIB, 30, 8 * MIB, 3)
    assert config.schedule == Schedule(0, 0, 1.0)
    assert config.final == FinalRules(Format.ROUND_ROBIN, rounds=None, repeats=4, duplicate=True)
    tournament = config.tournament
    assert (tournament.format, tournament.repeats, tournament.duplicate) == (Format.ROUND_ROBIN, 4, True)


def test_a_gauntlet_final_has_the_reference_bots_as_its_field_and_its_repeats(tmp_path: Path) -> None:
    config = load_ladder(ladder(tmp_path, "data: d\nfinal: {format: gauntlet, repeats: 3}\n"))
    assert config.final == FinalRules(Format.GAUNTLET, rounds=None, repeats=3, duplicate=False)
    assert config.tournament.format is Format.GAUNTLET
    assert config.tournament.gauntlet == GauntletConfig(candidates=(), repeats=3)  # the entrants, at the deadline
    assert config.tournament.repeats == 1


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("2026-12-20T23:59:00Z", datetime(2026, 12, 20, 23, 59, tzinfo=UTC)),
        ("'2026-12-20 23:59+05:30'", datetime(2026, 12, 20, 18, 29, tzinfo=UTC)),
        ('"2026-12-20T23:59:00-08:00"', datetime(2026, 12, 21, 7, 59, tzinfo=UTC)),
    ],
)
def test_a_deadline_is_any_iso_8601_time_with_a_zone(tmp_path: Path, written: str, expected: datetime) -> None:
    deadline = load_ladder(ladder(tmp_path, f"data: d\ndeadline: {written}\n")).deadline
    assert deadline == expected and deadline.tzinfo is not None


def test_anchors_under_x_keys_serve_the_ladder_section_too(tmp_path: Path) -> None:
    path = write(tmp_path, "x-limits: &limits {max_mb: 1}\n" + LADDER + "  uploads: *limits\n")
    assert load_ladder(path).uploads.max_bytes == MIB


# ------------------------------------------------------------------------------------------------ problems


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        ("data: ''\n", "7: ladder.data: must not be empty"),
        ("data: 12\n", '7: ladder.data: must be a string, not the number 12 (quote it: "12")'),
        ("data: d\ndeadline: 2026\n", '8: ladder.deadline: must be a string, not the number 2026 (quote it: "2026")'),
        (
            "data: d\ndeadline: next friday\n",
            "8: ladder.deadline: not an ISO 8601 date and time: 'next friday' (e.g. 2026-12-20T23:59:00+01:00)",
        ),
        ("data: d\nuploads: {max_mb: 0}\n", "8: ladder.uploads.max_mb: must be at least 1, not the number 0"),
        ("data: d\nuploads:\n  max_files: x\n", "9: ladder.uploads.max_files: must be a whole number, not 'x'"),
        (
            "data: d\nuploads:\n  max_mb: 1\n  max_unpacked_mb: -3\n",
            "10: ladder.uploads.max_unpacked_mb: must be at least 1, not the number -3",
        ),
        (
            "data: d\nuploads: {per_entrant_per_hour: 0}\n",
            "8: ladder.uploads.per_entrant_per_hour: must be at least 1, not the number 0",
        ),
        (
            "data: d\nschedule: {new_version_matches: -1}\n",
            "8: ladder.schedule.new_version_matches: must be at least 0, not the number -1",
        ),
        (
            "data: d\nschedule: {reference_every: 1.5}\n",
            "8: ladder.schedule.reference_every: must be a whole number, not the number 1.5",
        ),
        ("data: d\nschedule: {sigma_target: 0}\n", "8: ladder.schedule.sigma_target: input should be greater than 0"),
        (
            "data: d\nschedule: {sigma_target: .inf}\n",
            "8: ladder.schedule.sigma_target: input should be a finite number",
        ),
        (
            "data: d\nfinal: {format: sprt}\n",
            "8: ladder.final.format: must be 'round-robin', 'swiss' or 'gauntlet', not 'sprt'",
        ),
        ("data: d\nfinal: {rounds: 0}\n", "8: ladder.final.rounds: must be at least 1, not the number 0"),
        (
            "data: d\nfinal: {format: round-robin, repeats: 0}\n",
            "8: ladder.final.repeats: must be at least 1, not the number 0",
        ),
        ("data: d\nfinal: {duplicate: yes}\n", "8: ladder.final.duplicate: must be true or false, not 'yes'"),
        (
            "data: d\nfinal: {format: gauntlet, rounds: 5}\n",
            "8: ladder.final.rounds: only for format swiss, not gauntlet",
        ),
        (
            "data: d\nfinal:\n  rounds: 5\n  repeats: 2\n",  # swiss, the default format
            "10: ladder.final.repeats: only for format round-robin or gauntlet, not swiss",
        ),
        ("data: d\nfinal: swiss\n", "8: ladder.final: must be a mapping (key: value), not 'swiss'"),
        ("deadline: 2026-12-20T23:59:00Z\n", "6: ladder.data: required"),
    ],
)
def test_each_ladder_field_is_checked_at_its_line(tmp_path: Path, section: str, expected: str) -> None:
    assert problems(ladder(tmp_path, section)) == [expected]


def test_an_empty_or_scalar_ladder_section_is_not_a_mapping(tmp_path: Path) -> None:
    assert problems(write(tmp_path, TOURNAMENT + "ladder:\n")) == [
        "6: ladder: must be a mapping (key: value), not an empty value"
    ]
    assert problems(write(tmp_path, TOURNAMENT + "ladder: ladder-data\n")) == [
        "6: ladder: must be a mapping (key: value), not 'ladder-data'"
    ]


def test_a_naive_deadline_is_refused_with_the_zone_to_add(tmp_path: Path) -> None:
    assert problems(ladder(tmp_path, "data: d\ndeadline: 2026-12-20T23:59\n")) == [
        "8: ladder.deadline: '2026-12-20T23:59' has no time zone: add one, e.g. 2026-12-20T23:59:00+01:00,"
        " or 2026-12-20T23:59:00Z for UTC"
    ]
    assert problems(ladder(tmp_path, "data: d\ndeadline: 2026-12-20\n")) == [  # a date alone is midnight where?
        "8: ladder.deadline: '2026-12-20' has no time zone: add one, e.g. 2026-12-20T00:00:00+01:00,"
        " or 2026-12-20T00:00:00Z for UTC"
    ]


def test_an_unknown_key_in_the_ladder_section_is_refused_with_a_suggestion(tmp_path: Path) -> None:
    assert problems(ladder(tmp_path, "data: d\ndeadlin: 2026-12-20T23:59:00Z\n")) == [
        "8: ladder.deadlin: unknown key; did you mean 'deadline'?"
    ]
    assert problems(ladder(tmp_path, "data: d\nuploads: {max_mbs: 3}\n")) == [
        "8: ladder.uploads.max_mbs: unknown key; did you mean 'max_mb'?"
    ]
    assert problems(ladder(tmp_path, "data: d\nfinal: {format: swiss, round: 3}\n")) == [
        "8: ladder.final.round: unknown key; did you mean 'rounds'?"
    ]
    assert problems(ladder(tmp_path, "data: d\nsigma_target: 1.5\n")) == [
        "8: ladder.sigma_target: unknown key here; it belongs under schedule (schedule: {sigma_target: ...})"
    ]
    assert problems(ladder(tmp_path, "data: d\ncolour: blue\n")) == [
        "8: ladder.colour: unknown key (known here: data, deadline, uploads, schedule, final)"
    ]


def test_a_file_without_a_ladder_section_is_refused_in_one_line(tmp_path: Path) -> None:
    missing = "1: ladder: missing: a ladder file is a tournament file with a ladder: section (see docs/serve.md)"
    assert problems(write(tmp_path, TOURNAMENT)) == [missing]
    assert problems(write(tmp_path, "# a comment first\n" + TOURNAMENT + "colour: blue\n")) == [missing]
    for tournament in sorted((ROOT / "tournaments").glob("*.yaml")):  # a tournament file given to arena serve
        if tournament.name != "ladder.yaml":
            with pytest.raises(ConfigError) as raised:
                load_ladder(tournament)
            assert list(raised.value.problems) == [f"{tournament}:{missing}"]


def test_the_file_itself_is_reported_as_load_config_reports_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        load_ladder(tmp_path / "nothere.yaml")
    assert list(raised.value.problems) == [f"{tmp_path / 'nothere.yaml'}: no such file"]
    assert problems(write(tmp_path, "- a list\n")) == [
        "1: the file is a list: it must be a mapping (name: ..., bots: ...)"
    ]
    assert problems(write(tmp_path, LADDER + "  data: again\n")) == ["8: ladder.data: given twice (first on line 7)"]


def test_every_problem_of_both_parts_is_reported_at_once_at_its_own_line(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        ladder:
          data: d
          uploads: {max_mb: 0}
          deadline: tomorrow
        name: course
        players_per_match: 7
        bots:
          - {name: random, builtin: random}
          - {name: heuristic, builtin: heuristc}
        sandbox: tight
        """,
    )
    assert problems(path) == [
        "3: ladder.uploads.max_mb: must be at least 1, not the number 0",
        "4: ladder.deadline: not an ISO 8601 date and time: 'tomorrow' (e.g. 2026-12-20T23:59:00+01:00)",
        "6: players_per_match: the 2019 ruleset is for 2 to 6 players, not 7",
        "7: bots: 2 bots, too few for 7 per table (players_per_match)",
        "9: bots[1].builtin: no bot 'heuristc' is installed; did you mean 'heuristic'?"
        " (installed: heuristic, random, search; see arena bots)",
        "10: sandbox: must be 'strict', 'basic' or 'none', not 'tight'",
    ]


def test_the_finals_format_is_written_once_under_ladder_final(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        LADDER
        + "format: swiss\nrounds: 5\nrepeats: 2\nduplicate: true\n"
        + "gauntlet: {candidates: [random]}\nsprt: {candidate: random, baseline: heuristic}\n",
    )
    assert problems(path) == [
        "8: format: not in a ladder file: the final tournament's format is ladder.final.format",
        "9: rounds: not in a ladder file: the final tournament's rounds is ladder.final.rounds",
        "10: repeats: not in a ladder file: the final tournament's repeats is ladder.final.repeats",
        "11: duplicate: not in a ladder file: the final tournament's duplicate is ladder.final.duplicate",
        "12: gauntlet: not in a ladder file: a gauntlet final (ladder.final.format: gauntlet) has the entrants as"
        " its candidates and the reference bots as its field",
        "13: sprt: not in a ladder file: its final is a round-robin, a swiss or a gauntlet (ladder.final.format)",
    ]


def test_load_config_keeps_refusing_a_ladder_section(tmp_path: Path) -> None:
    path = write(tmp_path, TOURNAMENT + "format: round-robin\nladder:\n  data: d\n")
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert list(raised.value.problems) == [
        f"{path}:7: ladder: unknown key (known here: name, ruleset, format, players_per_match, rounds, repeats,"
        " duplicate, seed, concurrency, sandbox, bot_uids, limits, output, bots, gauntlet, sprt, executor)"
    ]
    with pytest.raises(ConfigError) as raised:
        load_config(ROOT / "tournaments" / "ladder.yaml")
    assert any(": ladder: unknown key" in line for line in raised.value.problems)


# ------------------------------------------------------------------------------------------------ the data folder


@pytest.fixture
def alice(tmp_path: Path) -> str:
    """A command bot in its own folder, alice/, as a reference bot: a line for the file's bots."""
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / "bot.py").write_text("print('hello')\n")
    return "  - {name: alice, command: [python3, alice/bot.py]}\n"


def test_a_data_folder_inside_a_sandboxed_reference_bots_directory_is_refused(tmp_path: Path, alice: str) -> None:
    for sandbox, line in (("", 8), ("sandbox: basic\n", 9)):
        path = write(tmp_path, TOURNAMENT + alice + sandbox + "ladder:\n  data: alice/ladder-data\n")
        folder = tmp_path.resolve() / "alice"
        assert problems(path) == [
            f"{line}: ladder.data: {folder / 'ladder-data'} is inside the directory of bot 'alice', {folder}, which the"
            " sandbox shows the bot: it could read the other entrants' uploaded bots, the ladder's matches and its"
            " database kept there; put the data outside it, or the bot in a folder of its own"
        ]
    assert problems(write(tmp_path, TOURNAMENT + alice + "ladder:\n  data: alice\n"))[0].startswith("8: ladder.data: ")
    trusted = load_ladder(write(tmp_path, TOURNAMENT + alice + "sandbox: none\nladder:\n  data: alice/data\n"))
    assert trusted.data == tmp_path.resolve() / "alice" / "data"  # trusted code sees everything anyway
    beside = load_ladder(write(tmp_path, TOURNAMENT + alice + "ladder:\n  data: ladder-data\n"))
    assert beside.data == tmp_path.resolve() / "ladder-data"


def test_a_data_folder_that_is_or_holds_the_files_folder_is_refused(tmp_path: Path) -> None:
    own = "give it a folder of its own, e.g. data: ladder-data"
    assert problems(ladder(tmp_path, "data: .\n")) == [
        f"7: ladder.data: this file's folder: the data folder is the server's own (its database, the uploads, the"
        f" matches); {own}"
    ]
    assert problems(ladder(tmp_path, "data: ./sub/..\n"))[0].startswith("7: ladder.data: this file's folder: ")
    assert problems(ladder(tmp_path, "data: ..\n")) == [
        f"7: ladder.data: {tmp_path.resolve().parent}, which holds this file's folder: the data folder is the"
        f" server's own (its database, the uploads, the matches); {own}"
    ]


def test_a_data_folder_must_be_a_folder(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file\n")
    assert problems(ladder(tmp_path, "data: taken\n")) == [
        f"7: ladder.data: {tmp_path.resolve() / 'taken'} is a file, not a directory"
    ]
    assert problems(ladder(tmp_path, 'data: "a\\0b"\n')) == [
        "7: ladder.data: must not hold a NUL character (\\0): no path can"
    ]

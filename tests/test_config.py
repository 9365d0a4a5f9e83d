"""Tournament files: real YAML files in a temporary directory, loaded and checked as the CLI does."""

from __future__ import annotations

import dataclasses
import re
import textwrap
from pathlib import Path

import pytest

from arena.cli import main
from arena.config import BotEntry, Format, GauntletConfig, config_hash, load_config
from arena.errors import ConfigError, UsageError
from arena.players.values import Timing
from arena.sandbox import Limits, MemoryMechanism, SandboxLevel

ROOT = Path(__file__).resolve().parents[1]

VALID = """\
name: club-night
ruleset: "2019"
format: swiss
players_per_match: 4
rounds: 5
seed: 42
concurrency: 2
sandbox: strict
limits: {move_ms: 800, startup_ms: 9000, memory_mb: 512, cpu_s: 60}
output: results/club-night
bots:
  - {name: random-1, builtin: random}
  - {name: heuristic, builtin: heuristic}
  - {name: alice, command: [python3, students/alice/bot.py]}
  - {name: bob, command: [./bob/bob], protocol: stdio}
"""

SMALL = """\
name: small
format: round-robin
players_per_match: 2
bots:
  - {name: a, builtin: random}
  - {name: b, builtin: random}
"""


def write(directory: Path, text: str, name: str = "tournament.yaml") -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(text))
    return path


def problems(path: Path) -> list[str]:
    """The problem lines of the ConfigError that loading `path` raises, without the file name."""
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    prefix = f"{path}:"
    assert all(line.startswith(prefix) for line in raised.value.problems), raised.value.problems
    return [line[len(prefix) :] for line in raised.value.problems]


@pytest.fixture
def bots_dir(tmp_path: Path) -> Path:
    """The files the command bots of VALID name: a Python script and an executable, each in a folder of its own."""
    alice = tmp_path / "students" / "alice"
    alice.mkdir(parents=True)
    (alice / "bot.py").write_text("print('hello')\n")
    bob = tmp_path / "bob" / "bob"
    bob.parent.mkdir()
    bob.write_text("#!/bin/sh\n")
    bob.chmod(0o755)
    return tmp_path


def test_a_valid_file_loads_with_paths_resolved_against_its_directory(bots_dir: Path) -> None:
    config = load_config(write(bots_dir, VALID))
    assert (config.name, config.ruleset, config.format, config.players_per_match) == (
        "club-night",
        "2019",
        Format.SWISS,
        4,
    )
    assert (config.rounds, config.repeats, config.duplicate, config.seed, config.concurrency) == (5, 1, False, 42, 2)
    assert config.sandbox is SandboxLevel.STRICT
    assert config.timing == Timing(move_ms=800, startup_ms=9000)
    assert config.limits == Limits(memory_mb=512, cpu_s=60)
    assert config.output == bots_dir.resolve() / "results" / "club-night"
    assert config.source == bots_dir / "tournament.yaml"
    assert config.raw_text == VALID
    assert config.gauntlet is None
    random_1, heuristic, alice, bob = config.bots
    assert random_1 == BotEntry("random-1", builtin="random")
    assert heuristic == BotEntry("heuristic", builtin="heuristic")
    assert alice.builtin is None and alice.command is not None
    assert alice.command.command == ("python3", str(bots_dir.resolve() / "students" / "alice" / "bot.py"))
    assert alice.command.directory == bots_dir.resolve() / "students" / "alice"
    assert alice.command.protocol == "zmq"
    assert bob.command is not None
    assert bob.command.command == (str(bots_dir.resolve() / "bob" / "bob"),)
    assert bob.command.protocol == "stdio"
    assert bob.command.directory == bots_dir.resolve() / "bob"


def test_the_wall_cap_and_pondering_are_limits_too(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, SMALL + "limits: {move_ms: 50, wall_factor: 4, ponder: true}\n"))
    assert config.timing == Timing(move_ms=50, wall_factor=4, ponder=True)
    assert config.timing.wall_ms == 200
    assert config_hash(config) != config_hash(load_config(write(tmp_path, SMALL + "limits: {move_ms: 50}\n", "b.yaml")))
    assert problems(write(tmp_path, SMALL + "limits: {wall_factor: 0, ponder: 1}\n")) == [
        "7: limits.wall_factor: must be at least 1, not the number 0",
        "7: limits.ponder: must be true or false, not the number 1",
    ]


def test_defaults_come_from_the_project_defaults(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, SMALL))
    assert config.ruleset == "2019"
    assert (config.rounds, config.repeats, config.duplicate, config.seed) == (3, 1, False, None)
    assert config.concurrency >= 1
    assert config.sandbox is SandboxLevel.STRICT
    assert config.timing == Timing()
    assert config.limits == Limits()
    assert config.output == tmp_path.resolve() / "results" / "small"


def test_a_bare_number_ruleset_is_the_ruleset_of_that_name(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, SMALL + "ruleset: 2019\n")).ruleset == "2019"


def test_an_unknown_key_is_named_with_its_line_and_the_closest_known_key(tmp_path: Path) -> None:
    path = write(tmp_path, SMALL + "rouns: 5\nlimits: {move_s: 10}\n")
    assert problems(path) == [
        "7: rouns: unknown key; did you mean 'rounds'?",
        "8: limits.move_s: unknown key; did you mean 'move_ms'?",
    ]


def test_a_limit_at_the_top_level_is_sent_under_limits(tmp_path: Path) -> None:
    assert problems(write(tmp_path, SMALL + "move_ms: 10\n")) == [
        "7: move_ms: unknown key here; it belongs under limits (limits: {move_ms: ...})"
    ]


def test_every_problem_is_reported_at_once_in_the_order_of_the_file(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        name: club night
        ruleset: classic
        format: knockout
        players_per_match: 3
        seed: -1
        concurrency: 0
        limits:
          move_ms: 0
          memory_mb: lots
        bots:
          - {name: a, builtin: random}
          - {name: b, command: python3 bot.py}
          - name: c
            command: [python3, 5]
          - {name: d}
        """,
    )
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert str(raised.value).splitlines()[0] == f"{path}: 9 problems"
    assert problems(path) == [
        "1: name: must be letters, digits, '.', '_' and '-', starting with a letter or digit",
        "3: format: must be 'round-robin', 'swiss', 'gauntlet' or 'sprt', not 'knockout'",
        "5: seed: must be at least 0, not the number -1",
        "6: concurrency: must be at least 1, not the number 0",
        "8: limits.move_ms: must be at least 1, not the number 0",
        "9: limits.memory_mb: must be a whole number, not 'lots'",
        "12: bots[1].command: must be a list of strings, e.g. [python3, bot.py], not a string",
        "14: bots[2].command: must be a non-empty list of strings",
        "15: bots[3]: needs builtin (an installed bot) or command (a program to start)",
    ]
    assert isinstance(raised.value, UsageError) and raised.value.exit_status == 2


def test_yaml_words_for_booleans_stay_strings(tmp_path: Path) -> None:
    config = load_config(
        write(
            tmp_path,
            """\
            name: on
            format: round-robin
            players_per_match: 2
            bots:
              - {name: no, builtin: random}
              - {name: yes, builtin: random}
              - {name: off, builtin: random}
            """,
        )
    )
    assert config.name == "on"
    assert [bot.name for bot in config.bots] == ["no", "yes", "off"]


def test_yaml_words_for_booleans_are_not_booleans(tmp_path: Path) -> None:
    assert problems(write(tmp_path, SMALL + "duplicate: yes\nsandbox: off\n")) == [
        "7: duplicate: must be true or false, not 'yes'",
        "8: sandbox: must be 'strict', 'basic' or 'none', not 'off'",
    ]


def test_a_bot_name_must_be_a_string(tmp_path: Path) -> None:
    path = write(tmp_path, SMALL.replace("{name: b,", "{name: 12,"))
    assert problems(path) == ['6: bots[1].name: must be a string, not the number 12 (quote it: "12")']


def test_a_duplicate_bot_name_is_reported_at_the_duplicate(tmp_path: Path) -> None:
    path = write(tmp_path, SMALL + "  - {name: a, builtin: heuristic}\n")
    assert problems(path) == ["7: bots[2].name: 'a' is taken: bots[0] (line 5) has it"]


def test_an_unknown_builtin_lists_the_installed_bots(tmp_path: Path) -> None:
    (found,) = problems(write(tmp_path, SMALL.replace("{name: b, builtin: random}", "{name: b, builtin: rando}")))
    assert found.startswith("6: bots[1].builtin: no bot 'rando' is installed; did you mean 'random'? (installed: ")
    for name in ("heuristic", "random", "search"):
        assert name in found


def test_a_bot_has_either_builtin_or_command(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        SMALL
        + "  - {name: c, builtin: random, command: [python3, x.py]}\n"
        + "  - {name: d, builtin: random, protocol: stdio}\n",
    )
    assert problems(path) == [
        "7: bots[2].command: a bot has builtin or command, not both",
        "8: bots[3].protocol: only for a command bot: a built-in bot brings its own protocol",
    ]


def test_the_gauntlet_format_needs_its_section(tmp_path: Path) -> None:
    path = write(tmp_path, SMALL.replace("round-robin", "gauntlet"))
    assert problems(path) == ["2: gauntlet: required for format gauntlet, e.g. gauntlet: {candidates: [alice, bob]}"]


def test_a_gauntlet_loads_its_candidates_and_repeats(tmp_path: Path) -> None:
    text = SMALL.replace("round-robin", "gauntlet") + "gauntlet: {candidates: [a], repeats: 4}\n"
    config = load_config(write(tmp_path, text))
    assert config.format is Format.GAUNTLET
    assert config.gauntlet == GauntletConfig(("a",), repeats=4)


def test_a_gauntlet_checks_its_candidates_and_its_field(tmp_path: Path) -> None:
    text = (
        SMALL.replace("round-robin", "gauntlet").replace("players_per_match: 2", "players_per_match: 3")
        + "  - {name: c, builtin: random}\n"
        + "gauntlet:\n  candidates: [a, b, bb, a]\n"
    )
    assert problems(write(tmp_path, text)) == [
        "9: gauntlet.candidates[2]: no bot named 'bb' in bots; did you mean 'b'?",
        "9: gauntlet.candidates[3]: 'a' is named twice",
        "9: gauntlet.candidates: 1 bot left for the field, too few for 3 per table: it needs 2",
    ]


def test_keys_of_another_format_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path, SMALL + "rounds: 4\ngauntlet: {candidates: [a]}\n")
    assert problems(path) == [
        "7: rounds: only for format swiss, not round-robin",
        "8: gauntlet: only for format gauntlet, not round-robin",
    ]


def test_classic_is_for_at_most_four_players(tmp_path: Path) -> None:
    text = SMALL.replace("players_per_match: 2", "players_per_match: 6") + "ruleset: classic\n"
    assert problems(write(tmp_path, text)) == [
        "3: players_per_match: the classic ruleset is for 2 to 4 players, not 6",
        "4: bots: 2 bots, too few for 6 per table (players_per_match)",
    ]


def test_too_few_bots_for_the_table(tmp_path: Path) -> None:
    path = write(tmp_path, SMALL.replace("players_per_match: 2", "players_per_match: 3"))
    assert problems(path) == ["4: bots: 2 bots, too few for 3 per table (players_per_match)"]


def test_a_command_bot_needs_its_program_and_its_directory(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        SMALL
        + "  - {name: c, command: [./missing]}\n"
        + "  - {name: d, command: [no-such-program-here, x.py]}\n"
        + "  - {name: e, command: [python3, bot.py], dir: nowhere}\n"
        + "output: ../elsewhere\n",  # not in the directory of c or d, the file's: they would see it
    )
    found = problems(path)
    assert (
        found[0]
        == f"7: bots[2].command: bot command './missing' not found ({tmp_path.resolve()}/missing is not a file)"
    )
    assert found[1].startswith("8: bots[3].command: bot command 'no-such-program-here' not found on PATH ")
    assert found[2] == f"8: bots[3].command[1]: no such file: x.py (not in {tmp_path.resolve()})"
    assert found[3] == f"9: bots[4].dir: no such directory: {tmp_path.resolve()}/nowhere"


def test_a_command_bots_script_must_be_there(tmp_path: Path) -> None:
    """A typo in a script's name is found before the run, not as a crash in every match."""
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / "bot.py").write_text("")
    (tmp_path / "alice" / "helper.js").write_text("")
    fine = (
        "  - {name: alice, command: [python3, alice/bot.py, --log=x.py, -m, pkg.mod]}\n"
        "  - {name: c, command: [sh, -c, exec python3 alice/bot.py]}\n"
        "  - {name: d, command: [sh, -c, x.sh]}\n"
        "  - {name: e, command: [java, -cp, 'alice/a.jar:alice/b.jar', Main]}\n"
        "sandbox: basic\n"
        "output: ../elsewhere\n"  # not in the directory of c, d and e, the file's: they would see it
    )
    assert load_config(write(tmp_path, SMALL + fine)).bots[2].command is not None
    path = write(tmp_path, SMALL + "  - {name: c, command: [python3, alice/bto.py]}\n")
    assert problems(path) == [f"7: bots[2].command[1]: no such file: alice/bto.py (not in {tmp_path.resolve()})"]


def test_a_sandboxed_bots_script_is_named_from_the_yaml_files_folder(tmp_path: Path) -> None:
    """It starts in a folder of its own: only at sandbox none does it start in its directory (dir)."""
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / "bot.py").write_text("")
    bot = "  - {name: alice, command: [python3, bot.py], dir: alice}\n"
    assert load_config(write(tmp_path, SMALL + bot + "sandbox: none\n")).bots[2].command is not None
    assert problems(write(tmp_path, SMALL + bot + "sandbox: basic\n")) == [
        f"7: bots[2].command[1]: no such file: bot.py (not in {tmp_path.resolve()}; a sandboxed bot does not start"
        " in its directory: write the path from the YAML file's folder)"
    ]


def test_an_explicit_dir_is_the_bots_directory_and_its_program_may_live_there(tmp_path: Path) -> None:
    home = tmp_path / "bob-home"
    home.mkdir()
    (home / "bob").write_text("#!/bin/sh\n")
    (home / "bob").chmod(0o755)
    config = load_config(write(tmp_path, SMALL + "  - {name: bob, command: [./bob], dir: bob-home}\n"))
    bob = config.bots[2].command
    assert bob is not None
    assert bob.directory == home.resolve()
    assert bob.command == ("./bob",)  # the launcher finds it in the bot's directory


def test_a_strict_bot_must_find_its_files_in_its_directory(tmp_path: Path) -> None:
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / "bot.py").write_text("")
    (tmp_path / "weights.bin").write_text("")
    path = write(tmp_path, SMALL + "  - {name: alice, command: [python3, alice/bot.py, weights.bin]}\n")
    assert problems(path) == [
        f"7: bots[2].command: weights.bin is outside the bot's directory {tmp_path.resolve()}/alice, which is all"
        " a strict sandbox shows of its files: move it there, or set dir"
    ]
    assert load_config(write(tmp_path, path.read_text() + "sandbox: basic\n")).bots[2].command is not None


def test_a_key_given_twice_is_reported_with_both_lines(tmp_path: Path) -> None:
    assert problems(write(tmp_path, SMALL + "seed: 1\nseed: 2\n")) == ["8: seed: given twice (first on line 7)"]


def test_anchors_live_under_x_keys_and_merge(tmp_path: Path) -> None:
    text = "x-builtin: &builtin {builtin: heuristic}\n" + SMALL + "  - {<<: *builtin, name: c}\n"
    assert load_config(write(tmp_path, text)).bots[2] == BotEntry("c", builtin="heuristic")


def test_a_yaml_syntax_error_has_its_line(tmp_path: Path) -> None:
    (found,) = problems(write(tmp_path, "name: x\nformat: [a\nbots: 1\n"))
    assert found.startswith("3: expected ',' or ']'")


def test_a_file_that_is_not_a_mapping(tmp_path: Path) -> None:
    assert problems(write(tmp_path, "")) == ["1: the file is empty: it must be a mapping (name: ..., bots: ...)"]
    assert problems(write(tmp_path, "- a\n")) == ["1: the file is a list: it must be a mapping (name: ..., bots: ...)"]


def test_a_missing_file_is_one_clear_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path / "nothere.yaml")
    assert str(raised.value) == f"{tmp_path / 'nothere.yaml'}: no such file"


def test_the_hash_ignores_concurrency_output_and_comments(tmp_path: Path) -> None:
    one = write(tmp_path, SMALL + "concurrency: 1\n", "one.yaml")
    two = write(tmp_path, "# the same, run wider\n" + SMALL + "concurrency: 8  # more\noutput: elsewhere\n", "two.yaml")
    assert config_hash(load_config(one)) == config_hash(load_config(two))
    three = write(tmp_path, SMALL + "seed: 1\n", "three.yaml")
    assert config_hash(load_config(three)) != config_hash(load_config(one))
    assert len(config_hash(load_config(one))) == 64


def test_the_hash_of_a_moved_project_stays(tmp_path: Path, bots_dir: Path) -> None:
    first = config_hash(load_config(write(bots_dir, VALID)))
    moved = tmp_path / "moved"
    moved.mkdir()
    for part in ("students", "bob"):
        (bots_dir / part).rename(moved / part)
    assert config_hash(load_config(write(moved, VALID))) == first


def test_validate_prints_a_summary_and_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, SMALL)
    assert main(["validate", str(path)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{path}: ok — round-robin, 2 bots, 2 per table, ruleset 2019",
        "  1 match: 1 table (each its own group of bots)",
    ]


def test_validate_prints_every_problem_and_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, SMALL + "rouns: 5\nseed: x\n")
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"arena: {path}: 2 problems",
        f"{path}:7: rouns: unknown key; did you mean 'rounds'?",
        f"{path}:8: seed: must be a whole number, not 'x'",
    ]
    assert main(["validate", str(tmp_path / "nothere.yaml")]) == 2
    assert capsys.readouterr().err == f"arena: {tmp_path / 'nothere.yaml'}: no such file\n"


@pytest.mark.parametrize(
    "example",
    [path for path in sorted((ROOT / "tournaments").glob("*.yaml")) if path.name != "ladder.yaml"],  # tests/serve's
    ids=lambda path: path.name,
)
def test_the_example_tournaments_are_valid(example: Path) -> None:
    config = load_config(example)
    assert config.output.is_relative_to(ROOT / "tournaments" / "results")


def test_the_documented_limit_defaults_are_the_projects() -> None:
    text = (ROOT / "docs" / "configuration.md").read_text()
    documented = dict(re.findall(r"^\| `(\w+)` \| `?(\w+)`? \|", text.split("## Limits")[1].split("\n## ")[0], re.M))
    actual = {**dataclasses.asdict(Timing()), **dataclasses.asdict(Limits())}
    shown = {key: str(getattr(value, "value", value)) for key, value in actual.items()}
    assert documented == {key: text.lower() if text in ("True", "False") else text for key, text in shown.items()}


def test_the_executor_is_local_unless_the_file_names_a_dask_scheduler(tmp_path: Path) -> None:
    from arena.config import ExecutorConfig, ExecutorType

    assert load_config(write(tmp_path, SMALL)).executor == ExecutorConfig()
    dask = load_config(write(tmp_path, SMALL + "executor: {type: dask, address: 'tcp://h:8786', max_bot_mb: 5}\n"))
    assert dask.executor == ExecutorConfig(ExecutorType.DASK, "tcp://h:8786", 5)
    assert config_hash(dask) == config_hash(load_config(write(tmp_path, SMALL, "local.yaml")))


def test_a_dask_executor_needs_its_address_and_a_local_one_takes_none(tmp_path: Path) -> None:
    assert problems(write(tmp_path, SMALL + "executor: {type: dask}\n")) == [
        "7: executor.address: required for type dask, e.g. address: tcp://host:8786"
    ]
    assert problems(write(tmp_path, SMALL + "executor: {address: 'tcp://h:1', type: slurm}\n")) == [
        "7: executor.type: must be 'local' or 'dask', not 'slurm'"
    ]
    assert problems(write(tmp_path, SMALL + "executor: {max_bot_mb: 5}\n")) == [
        "7: executor.max_bot_mb: only for type dask: a local run ships nothing"
    ]


def test_the_memory_mechanism_is_read_checked_and_left_out_of_the_hash(tmp_path: Path) -> None:
    auto = load_config(write(tmp_path, SMALL, "auto.yaml"))
    assert auto.limits.memory_mechanism is MemoryMechanism.AUTO
    chosen = load_config(write(tmp_path, SMALL + "limits: {memory_mechanism: rlimit}\n", "rlimit.yaml"))
    assert chosen.limits == Limits(memory_mechanism=MemoryMechanism.RLIMIT)
    assert config_hash(chosen) == config_hash(auto)  # how the limit is held changes no result within it
    smaller = load_config(write(tmp_path, SMALL + "limits: {memory_mb: 512}\n", "smaller.yaml"))
    assert config_hash(smaller) != config_hash(auto)
    assert problems(write(tmp_path, SMALL + "limits: {memory_mechanism: rss}\n")) == [
        "7: limits.memory_mechanism: must be 'auto', 'cgroup' or 'rlimit', not 'rss'"
    ]


def test_the_disk_limit_is_read_and_checked_and_a_tournament_begun_without_it_keeps_its_hash(tmp_path: Path) -> None:
    default = load_config(write(tmp_path, SMALL, "default.yaml"))
    assert default.limits.disk_mb == 256
    assert config_hash(default) == "15146bc0ef277ae932267ba4217da2edbc6f8354369dd3f79b9fa2ccb4f28fdf"  # as before
    stated = load_config(write(tmp_path, SMALL + "limits: {disk_mb: 256}\n", "stated.yaml"))
    assert config_hash(stated) == config_hash(default)
    smaller = load_config(write(tmp_path, SMALL + "limits: {disk_mb: 64}\n", "smaller.yaml"))
    assert smaller.limits.disk_mb == 64
    assert config_hash(smaller) != config_hash(default)
    assert problems(write(tmp_path, SMALL + "limits: {disk_mb: 0}\n")) == [
        "7: limits.disk_mb: must be at least 1, not the number 0"
    ]


@pytest.mark.parametrize("example", sorted((ROOT / "examples").glob("**/*.yaml")), ids=lambda path: path.name)
def test_the_example_projects_tournaments_are_valid(example: Path) -> None:
    assert load_config(example).bots


def test_a_seed_may_be_left_out_or_written_up_to_256_bits_in_decimal_or_hex(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, SMALL)).seed is None  # drawn for the output folder when it is created
    largest = 2**256 - 1
    assert load_config(write(tmp_path, SMALL + f"seed: {largest}\n")).seed == largest
    assert load_config(write(tmp_path, SMALL + f"seed: {largest:#x}\n")).seed == largest
    assert load_config(write(tmp_path, SMALL + "seed: 0xdeadbeef\n")).seed == 0xDEADBEEF
    assert problems(write(tmp_path, SMALL + f"seed: {2**256}\n")) == [
        f"7: seed: must be less than 2**256, not the number {2**256}"
    ]


def test_a_file_without_a_seed_hashes_as_seed_0_did_and_the_same_on_every_load(tmp_path: Path) -> None:
    """The seed drawn for a folder is the folder's: the file is the same configuration on every run, and a folder
    begun when a file without a seed meant seed 0 resumes."""
    seedless = config_hash(load_config(write(tmp_path, SMALL, "a.yaml")))
    assert config_hash(load_config(write(tmp_path, SMALL, "b.yaml"))) == seedless
    assert config_hash(load_config(write(tmp_path, SMALL + "seed: 0\n", "c.yaml"))) == seedless
    assert config_hash(load_config(write(tmp_path, SMALL + f"seed: {2**200}\n", "d.yaml"))) != seedless


WEAK = "is short enough to guess, and bots could predict every deal from it"


@pytest.mark.parametrize(
    ("seed", "said"),
    [
        ("seed: 42\n", True),
        (f"seed: {2**64 - 1}\n", True),
        (f"seed: {2**64}\n", False),
        (f"seed: {2**128:#x}\n", False),
    ],
)
def test_validate_says_once_that_a_short_written_seed_can_be_guessed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], seed: str, said: bool
) -> None:
    path = write(tmp_path, SMALL + seed)
    assert main(["validate", str(path)]) == 0
    err = capsys.readouterr().err
    if not said:
        assert err == ""
        return
    number = load_config(path).seed
    assert err == (
        f"arena: {path}: seed {number} {WEAK}; leave seed out to have a 128-bit one drawn and kept in the output"
        " folder, or write a strong one: python3 -c 'import secrets; print(secrets.randbits(128))'\n"
    )


def test_validate_says_nothing_of_the_seed_of_a_file_without_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(write(tmp_path, SMALL))]) == 0
    assert capsys.readouterr().err == ""


def test_validate_refuses_a_written_seed_other_than_the_one_its_output_folder_keeps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file without a seed hashes as `seed: 0`: only the kept seed tells the two apart."""
    from arena.store import ResultStore

    seedless = load_config(write(tmp_path, SMALL, "seedless.yaml"))
    ResultStore.create_or_resume(seedless.output, config_hash(seedless), {}, False, seedless.seed).close()
    assert main(["validate", str(write(tmp_path, SMALL, "again.yaml"))]) == 0
    capsys.readouterr()
    zero = write(tmp_path, SMALL + "seed: 0\n", "zero.yaml")
    assert main(["validate", str(zero)]) == 2
    assert f"arena: {seedless.output} holds the results of the same configuration with another seed than 0" in (
        capsys.readouterr().err
    )


def _bot_folders(tmp_path: Path) -> None:
    """alice/bot.py, and bob/bob beside it: each bot's directory is its own folder."""
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / "bot.py").write_text("")
    (tmp_path / "bob").mkdir()
    (tmp_path / "bob" / "bob").write_text("#!/bin/sh\n")
    (tmp_path / "bob" / "bob").chmod(0o755)


INSIDE = "which the sandbox shows the bot: it could read the results kept there, the seed that decides every deal"


def test_an_output_folder_inside_a_sandboxed_bots_directory_is_refused_at_the_line_of_output(tmp_path: Path) -> None:
    _bot_folders(tmp_path)
    alice = "  - {name: alice, command: [python3, alice/bot.py]}\n"
    for sandbox in ("", "sandbox: strict\n", "sandbox: basic\n"):
        path = write(tmp_path, SMALL + alice + sandbox + "output: alice/results\n")
        line = 8 + bool(sandbox)
        assert problems(path) == [
            f"{line}: output: {tmp_path.resolve() / 'alice' / 'results'} is inside the directory of bot 'alice',"
            f" {tmp_path.resolve() / 'alice'}, {INSIDE} among them; put the output outside it, or the bot in a folder"
            " of its own"
        ]
    assert problems(write(tmp_path, SMALL + alice + "output: alice\n"))[0].startswith("8: output: ")  # itself too
    outside = load_config(write(tmp_path, SMALL + alice + "output: results/alice\n"))
    assert outside.output == tmp_path.resolve() / "results" / "alice"


def test_the_default_output_folder_inside_a_bots_directory_is_refused_at_the_bots_line(tmp_path: Path) -> None:
    """A bot whose program lies beside the file has the file's folder as its directory, and results/NAME in it."""
    (tmp_path / "bot.py").write_text("")
    bots = "  - {name: c, command: [python3, bot.py]}\n  - {name: d, command: [sh, -c, 'exec python3 bot.py']}\n"
    assert problems(write(tmp_path, SMALL + bots)) == [
        f"7: output: the default output folder, {tmp_path.resolve() / 'results' / 'small'}, is inside the directory"
        f" of bots 'c', 'd', {tmp_path.resolve()}, which the sandbox shows each of them: they could read the results"
        " kept there, the seed that decides every deal among them; put the output outside it, or each bot in a"
        " folder of its own"
    ]


def test_a_dir_that_holds_the_output_folder_is_refused_too(tmp_path: Path) -> None:
    _bot_folders(tmp_path)
    bob = "  - {name: bob, command: [./bob/bob], dir: .}\noutput: results/x\n"
    assert problems(write(tmp_path, SMALL + bob))[0].startswith(f"8: output: {tmp_path.resolve() / 'results' / 'x'}")


def test_trusted_bots_and_built_in_ones_may_have_the_output_folder_beside_them(tmp_path: Path) -> None:
    _bot_folders(tmp_path)
    bots = "  - {name: alice, command: [python3, alice/bot.py]}\n  - {name: s, builtin: random, subprocess: true}\n"
    config = load_config(write(tmp_path, SMALL + bots + "sandbox: none\noutput: alice/results\n"))
    assert config.output == tmp_path.resolve() / "alice" / "results"
    assert load_config(write(tmp_path, SMALL + bots + "output: bob-results\n")).bots[2].command is not None


def test_validate_says_when_a_sandboxed_bot_could_read_a_written_seed_in_the_file_itself(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bot whose program lies beside the file has the file's folder as its directory: a strong seed written
    there is the bot's to read."""
    _bot_folders(tmp_path)
    (tmp_path / "bot.py").write_text("")
    strong = f"seed: {2**128:#x}\n"
    own_folder = write(tmp_path, SMALL + "  - {name: alice, command: [python3, alice/bot.py]}\n" + strong)
    assert main(["validate", str(own_folder)]) == 0
    assert capsys.readouterr().err == ""
    beside = SMALL + "  - {name: c, command: [python3, bot.py]}\noutput: ../elsewhere\n"
    for sandbox, said in (("", True), ("sandbox: basic\n", True), ("sandbox: none\n", False)):
        assert main(["validate", str(write(tmp_path, beside + sandbox + strong))]) == 0
        assert capsys.readouterr().err == (
            f"arena: {tmp_path / 'tournament.yaml'}: seed: this file lies in the directory of bot 'c',"
            f" {tmp_path.resolve()}, which the sandbox shows the bot: it could read the seed, and predict every deal"
            " from it; leave seed out to have one drawn and kept in the output folder, or move the file out of that"
            " directory\n"
            if said
            else ""
        )
    assert main(["validate", str(write(tmp_path, beside))]) == 0  # no seed in the file: nothing to read there
    assert capsys.readouterr().err == ""


def test_an_output_folder_with_a_nul_character_is_a_problem_not_a_traceback(tmp_path: Path) -> None:
    """Found checking where the output folder lies: no path holds a NUL, and resolving one raised ValueError."""
    (tmp_path / "bot.py").write_text("")
    for bots in ("", "  - {name: c, command: [python3, bot.py]}\n"):
        assert problems(write(tmp_path, SMALL + bots + 'output: "a\\0b"\n')) == [
            f"{7 + bool(bots)}: output: must not hold a NUL character (\\0): no path can"
        ]


def test_the_fields_of_another_configuration_are_named() -> None:
    from arena.config.changes import changed_fields

    stored = """
name: night
format: swiss
rounds: 3
concurrency: 2
limits: {move_ms: 1000, memory_mb: 512}
bots:
  - {name: alice, builtin: random}
  - {name: bob, builtin: heuristic}
"""
    current = """
name: night
format: swiss
rounds: 4
seed: 7
concurrency: 1
limits: {move_ms: 500, memory_mb: 512}
bots:
  - {name: alice, builtin: heuristic}
  - {name: carol, builtin: search}
"""
    assert changed_fields(stored, current) == [
        "bots: carol added, bob removed, alice changed (builtin: random → heuristic)",
        "limits.move_ms: 1000 → 500",
        "rounds: 3 → 4",
        "seed: (none) → 7",
    ]
    assert changed_fields(stored, stored.replace("concurrency: 2", "concurrency: 8")) == []  # it decides nothing
    assert changed_fields(stored, "[not a mapping]") == []


def test_a_bare_program_name_is_looked_up_on_path_even_beside_a_folder_of_that_name(tmp_path: Path) -> None:
    (tmp_path / "java").mkdir()  # the bot's sources, say; `java` is still the program on PATH
    (tmp_path / "python3").mkdir()
    (tmp_path / "bot.py").write_text("")
    path = tmp_path / "t.yaml"
    path.write_text(
        "name: t\nformat: round-robin\nplayers_per_match: 2\nsandbox: none\noutput: out\nbots:\n"
        "  - {name: a, command: [python3, bot.py]}\n  - {name: b, builtin: random}\n"
    )
    (entry,) = [bot for bot in load_config(path).bots if bot.command is not None]
    assert entry.command is not None
    assert entry.command.command == ("python3", str(tmp_path.resolve() / "bot.py"))


def test_a_built_in_bots_options_are_checked_against_what_it_takes(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        name: t
        format: round-robin
        players_per_match: 2
        bots:
          - {name: a, builtin: search, options: {playouts: 5000, seed: 2}}
          - {name: b, builtin: search, options: {budget: 10}}
          - {name: c, builtin: search, options: {playouts: 0.5}}
          - {name: d, builtin: random, options: {playouts: 10}}
          - {name: e, command: [python3, x.py], options: {playouts: 10}}
        """,
    )
    assert problems(path) == [
        "6: bots[1].options: bot 'search' takes no option 'budget' (its options: playouts, seed, share); see arena"
        " bots",
        "7: bots[2].options: playouts is a whole number, not 0.5; see arena bots",
        "8: bots[3].options: bot 'random' takes no option 'playouts' (its options: none); see arena bots",
        "9: bots[4].options: only for a built-in bot: a command bot takes its options in its command",
        "9: bots[4].command[1]: no such file: x.py (not in " + str(tmp_path) + ")",
    ]


def test_a_built_in_bots_options_reach_its_entry_and_change_the_configuration(tmp_path: Path) -> None:
    text = SMALL.replace("{name: b, builtin: random}", "{name: b, builtin: search, options: {seed: 4, playouts: 9}}")
    entry = load_config(write(tmp_path, text)).bots[1]
    assert entry.options == (("playouts", 9), ("seed", 4))
    other = load_config(write(tmp_path, text.replace("seed: 4", "seed: 5"), name="other.yaml"))
    assert config_hash(other) != config_hash(load_config(write(tmp_path, text, name="again.yaml")))


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ("{share: .nan}", "share is a number, not nan"),
        ("{share: .inf}", "share is a number, not inf"),
        ("{share: 5}", "share is from 0.001 to 0.5, not 5"),
        ("{playouts: 1000000000}", "playouts is from 1 to 100000, not 1000000000"),
        ("{playouts: true}", "playouts is a number, not True"),
    ],
)
def test_an_option_that_would_hang_a_run_is_refused(tmp_path: Path, options: str, said: str) -> None:
    text = SMALL.replace("{name: b, builtin: random}", f"{{name: b, builtin: search, options: {options}}}")
    (problem,) = problems(write(tmp_path, text))
    assert problem.endswith(f"bots[1].options: {said}; see arena bots"), problem

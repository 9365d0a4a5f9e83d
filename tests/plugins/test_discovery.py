"""Finding bots: the built-in ones through this project's own entry point, a third-party package through its."""

from __future__ import annotations

import json
import re
from pathlib import Path

from arena.plugins import GROUP, load_registry
from arena.plugins.manager import find_entry_points
from tests.plugins.conftest import arena_cli, make_distribution, plugin_code, run


def test_the_built_in_bots_come_through_the_projects_own_entry_point() -> None:
    own = [entry for entry in find_entry_points() if entry.distribution == "loveletter-arena"]
    assert {(entry.name, entry.value) for entry in own} == {("builtin", "arena.bots.plugin")}
    registry = load_registry(fresh=True)
    random = registry["random"]
    assert random.distribution == "loveletter-arena"
    assert random.version
    assert random.spec.player is not None
    assert random.spec.command[-2:] == ("-m", "arena.bots.random_bot")


def test_arena_bots_lists_the_installed_example_beside_the_built_ins(firstbot: Path, tmp_path: Path) -> None:
    ran = arena_cli(["bots"], [firstbot], tmp_path)
    assert ran.returncode == 0, ran.stderr
    lines = [line for line in ran.stdout.splitlines() if not line.lstrip().startswith("option ")]  # bots' rows
    rows = {line.split()[0]: line for line in lines}
    assert rows["first-legal"].endswith("loveletter-firstbot 1.0.0")
    assert "always the first legal answer" in rows["first-legal"]
    assert rows["random"].split()[-2] == "loveletter-arena"
    columns = {tuple(found.start() for found in re.finditer(r"(?<=  )\S", line)) for line in lines}
    assert len(columns) == 1 and len(columns.pop()) == 2  # description and distribution aligned on every line


def test_arena_bots_as_json_gives_each_bots_source_and_how_it_runs(firstbot: Path, tmp_path: Path) -> None:
    ran = arena_cli(["bots", "--format", "json"], [firstbot], tmp_path)
    assert ran.returncode == 0, ran.stderr
    bots = {bot["name"]: bot for bot in json.loads(ran.stdout)}
    assert bots["first-legal"] == {
        "name": "first-legal",
        "description": "always the first legal answer",
        "distribution": "loveletter-firstbot",
        "version": "1.0.0",
        "protocol": "zmq",
        "in_process": True,
        "options": [],
    }
    assert bots["random"]["distribution"] == "loveletter-arena"


def test_the_example_registers_its_subprocess_command_and_package_directory(firstbot: Path, tmp_path: Path) -> None:
    code = (
        "import sys; from arena.plugins import load_registry\n"
        "spec = load_registry()['first-legal'].spec\n"
        "print(spec.command == (sys.executable, '-m', 'firstbot.bot'), spec.directory)\n"
    )
    ran = run(["-c", code], [firstbot], tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["True", str(firstbot / "firstbot")]


def test_disabling_plugins_keeps_the_built_ins_only(firstbot: Path, tmp_path: Path) -> None:
    ran = arena_cli(["bots", "--format", "json"], [firstbot], tmp_path, {"ARENA_DISABLE_PLUGINS": "1"})
    assert ran.returncode == 0, ran.stderr
    names = {bot["name"]: bot["distribution"] for bot in json.loads(ran.stdout)}
    assert "first-legal" not in names
    assert names["random"] == "loveletter-arena"
    assert "ARENA_DISABLE_PLUGINS" in ran.stderr


def test_disabling_plugins_skips_even_one_that_cannot_be_imported(tmp_path: Path) -> None:
    broken = make_distribution(tmp_path / "site", "broken-bots", "0.1", {"broken": "broken_bots"}, {})
    assert arena_cli(["bots"], [broken], tmp_path).returncode == 2
    ran = arena_cli(["bots"], [broken], tmp_path, {"ARENA_DISABLE_PLUGINS": "1"})
    assert ran.returncode == 0, ran.stderr
    assert "random" in [line.split()[0] for line in ran.stdout.splitlines()]


def test_the_same_distribution_found_twice_on_the_path_is_loaded_once(tmp_path: Path) -> None:
    modules = {"twice_bots": plugin_code("twice")}
    first = make_distribution(tmp_path / "a", "twice-bots", "1.0", {"twice": "twice_bots"}, modules)
    second = make_distribution(tmp_path / "b", "twice-bots", "1.0", {"twice": "twice_bots"}, modules)
    ran = arena_cli(["bots"], [first, second], tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert [line.split()[0] for line in ran.stdout.splitlines()].count("twice") == 1


def test_the_help_of_arena_bots_names_the_switch_that_disables_plugins(tmp_path: Path) -> None:
    ran = arena_cli(["bots", "--help"], [], tmp_path)
    assert ran.returncode == 0
    assert "ARENA_DISABLE_PLUGINS=1" in ran.stdout
    assert GROUP in ran.stdout

"""A plugin at fault is named: its distribution, its version, and what went wrong, in one line."""

from __future__ import annotations

from pathlib import Path

from arena import __version__
from tests.plugins.conftest import Ran, arena_cli, make_distribution, plugin_code


def only_error(ran: Ran) -> str:
    """`arena bots` failed as for bad configuration: exit status 2, one line on stderr, nothing on stdout."""
    assert ran.returncode == 2, (ran.stdout, ran.stderr)
    assert ran.stdout == ""
    lines = ran.stderr.splitlines()
    assert len(lines) == 1, ran.stderr
    return lines[0]


def my_bots(tmp_path: Path, code: str) -> Path:
    """A distribution my-bots 1.2 whose plugin module is `code`."""
    return make_distribution(tmp_path / "site", "my-bots", "1.2", {"my-bots": "my_bots"}, {"my_bots": code})


def test_a_bot_name_taken_by_two_distributions_names_both(tmp_path: Path) -> None:
    site = my_bots(tmp_path, plugin_code("random"))
    line = only_error(arena_cli(["bots"], [site], tmp_path))
    assert line == f"arena: bot name 'random' is registered by both loveletter-arena {__version__} and my-bots 1.2"


def test_a_bot_name_taken_twice_by_one_distribution_is_refused(tmp_path: Path) -> None:
    site = my_bots(tmp_path, plugin_code("a", "a"))
    assert only_error(arena_cli(["bots"], [site], tmp_path)) == "arena: bot name 'a' is registered twice by my-bots 1.2"


def test_an_entry_point_name_taken_by_two_distributions_names_both(tmp_path: Path) -> None:
    one = make_distribution(tmp_path / "one", "alpha-bots", "1.0", {"bots": "alpha"}, {"alpha": plugin_code("alpha")})
    two = make_distribution(tmp_path / "two", "beta-bots", "2.0", {"bots": "beta"}, {"beta": plugin_code("beta")})
    line = only_error(arena_cli(["bots"], [one, two], tmp_path))
    assert "entry point 'bots' in group loveletter_arena is declared by both alpha-bots 1.0 and beta-bots 2.0" in line


def test_taking_the_built_in_entry_point_name_is_refused_even_with_plugins_disabled(tmp_path: Path) -> None:
    site = make_distribution(tmp_path / "site", "sly-bots", "0.3", {"builtin": "sly"}, {"sly": plugin_code("sly")})
    for env in ({}, {"ARENA_DISABLE_PLUGINS": "1"}):
        line = only_error(arena_cli(["bots"], [site], tmp_path, env))
        assert "declared by both" in line and f"loveletter-arena {__version__}" in line and "sly-bots 0.3" in line


def test_a_hook_that_raises_names_its_distribution_and_the_error(tmp_path: Path) -> None:
    code = plugin_code("never", before="raise RuntimeError('no config file for my bots')")
    site = make_distribution(tmp_path / "site", "angry-bots", "0.9", {"angry": "angry_bots"}, {"angry_bots": code})
    line = only_error(arena_cli(["bots"], [site], tmp_path))
    assert line == (
        "arena: plugin angry-bots 0.9 (entry point angry) failed in arena_register_bots:"
        " RuntimeError: no config file for my bots"
    )


def test_a_plugin_that_fails_to_import_names_its_distribution_entry_point_and_error(tmp_path: Path) -> None:
    code = "import numpy_that_is_not_installed\n"
    site = make_distribution(tmp_path / "site", "heavy-bots", "3.1", {"heavy": "heavy_bots"}, {"heavy_bots": code})
    line = only_error(arena_cli(["bots"], [site], tmp_path))
    assert line == (
        "arena: plugin heavy-bots 3.1 (entry point heavy = heavy_bots) failed to load:"
        " ModuleNotFoundError: No module named 'numpy_that_is_not_installed'"
    )


def test_an_entry_point_whose_module_is_missing_names_its_distribution(tmp_path: Path) -> None:
    site = make_distribution(tmp_path / "site", "ghost-bots", "1.0", {"ghost": "ghost_bots.plugin"}, {})
    line = only_error(arena_cli(["bots"], [site], tmp_path))
    assert line.startswith("arena: plugin ghost-bots 1.0 (entry point ghost = ghost_bots.plugin) failed to load:")
    assert "No module named 'ghost_bots'" in line


def test_a_hook_with_a_misspelt_name_is_refused_rather_than_ignored(tmp_path: Path) -> None:
    code = "from arena.plugins import hookimpl\n\n@hookimpl\ndef arena_register_bot(registry):\n    pass\n"
    site = make_distribution(tmp_path / "site", "typo-bots", "0.1", {"typo": "typo_bots"}, {"typo_bots": code})
    line = only_error(arena_cli(["bots"], [site], tmp_path))
    assert line.startswith("arena: plugin typo-bots 0.1 (entry point typo): ")
    assert "arena_register_bot" in line


def test_a_bot_spec_the_arena_could_not_start_is_refused_with_its_distribution(tmp_path: Path) -> None:
    code = plugin_code(before="registry.add(BotSpec('odd', 'x', (sys.executable,), Path('.'), protocol='http'))")
    site = make_distribution(tmp_path / "site", "odd-bots", "0.2", {"odd": "odd_bots"}, {"odd_bots": code})
    line = only_error(arena_cli(["bots"], [site], tmp_path))
    assert line == "arena: odd-bots 0.2: bot 'odd': protocol must be zmq or stdio, not 'http'"

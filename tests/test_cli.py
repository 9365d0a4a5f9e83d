"""The `arena` command as a user runs it: a real subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SAMPLES = Path(__file__).parent / "replay" / "samples"


def arena(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *map(str, args)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_play_prints_the_outcome_and_writes_a_replay_that_verifies(tmp_path: Path) -> None:
    replay = tmp_path / "out.jsonl"
    played = arena("play", "--players", "4", "--ruleset", "2019", "--seed", "7", "--replay", replay)
    assert played.returncode == 0, played.stderr
    assert "match play-7: ruleset 2019, seed 7" in played.stdout
    assert "winner: random-" in played.stdout
    assert f"replay written to {replay}" in played.stdout
    verified = arena("replay", replay, "--verify")
    assert verified.returncode == 0, verified.stderr
    assert (
        verified.stdout.strip()
        == f"{replay}: valid (2019, 4 players, {replay.read_text().count('round_start')} rounds)"
    )


def test_the_same_seed_plays_the_same_match(tmp_path: Path) -> None:
    for name in ("a", "b"):
        assert (
            arena(
                "play", "--players", "3", "--ruleset", "classic", "--seed", "11", "--replay", tmp_path / name
            ).returncode
            == 0
        )
    assert (tmp_path / "a").read_text() == (tmp_path / "b").read_text()


def test_replay_prints_a_readable_account() -> None:
    shown = arena("replay", SAMPLES / "valid" / "00047-2019-4p-1968528650.jsonl")
    assert shown.returncode == 0
    out = shown.stdout
    assert "Round 1: bot0 starts." in out
    assert "bot0 plays priest on bot1 and sees" in out
    assert "! bot0 faults (crash): injected crash" in out
    assert "bot0 is out (disqualified), showing handmaid" in out
    assert "spy bonus: bot3" in out
    assert "Match over: bot3 wins." in out
    assert "warning: line 59: the ranking splits the disqualified seats" in shown.stderr


def test_verify_names_the_first_line_that_breaks_the_rules() -> None:
    path = SAMPLES / "invalid" / "guard-names-guard.jsonl"
    checked = arena("replay", path, "--verify")
    assert checked.returncode == 1
    assert checked.stdout == ""
    assert checked.stderr.strip() == f"{path}:3: seat 0: illegal play: a guard may not name guard"


def test_an_invalid_replay_is_narrated_up_to_the_failing_line() -> None:
    shown = arena("replay", SAMPLES / "invalid" / "wrong-round-winner.jsonl")
    assert shown.returncode == 1
    assert "Round 1:" in shown.stdout and "Round 2:" not in shown.stdout
    assert ":20: round 1: won by seat 2" in shown.stderr


def test_bad_usage_gets_one_clear_line_and_status_2() -> None:
    wrong = arena("play", "--players", "5", "--ruleset", "classic")
    assert wrong.returncode == 2
    assert wrong.stderr.strip() == "arena: --players: the classic ruleset is for 2 to 4 players, not 5"


def test_a_missing_replay_is_a_clear_error(tmp_path: Path) -> None:
    missing = arena("replay", tmp_path / "nope.jsonl", "--verify")
    assert missing.returncode == 1
    assert "nope.jsonl: cannot read: No such file or directory" in missing.stderr


def test_help_describes_the_commands() -> None:
    helped = arena("--help")
    assert helped.returncode == 0
    assert "play" in helped.stdout and "replay" in helped.stdout
    assert "--verify" in arena("replay", "--help").stdout


def test_sizes_are_said_as_a_person_reads_them() -> None:
    from arena.cli import _size

    assert [_size(n) for n in (1, 243, 1536, 20 * 1024, int(3.2 * 1024 * 1024))] == [
        "1 byte",
        "243 bytes",
        "1.5 KiB",
        "20 KiB",
        "3.2 MiB",
    ]


def test_arena_docs_shows_the_documentation_installed_with_it() -> None:
    root = Path(__file__).resolve().parents[1]
    listed = subprocess.run([sys.executable, "-m", "arena", "docs"], capture_output=True, text=True, check=True)
    assert "configuration  Tournament files: the configuration reference" in listed.stdout.splitlines()
    shown = subprocess.run(
        [sys.executable, "-m", "arena", "docs", "configuration"], capture_output=True, text=True, check=True
    )
    assert shown.stdout == (root / "docs" / "configuration.md").read_text(encoding="utf-8")
    unknown = subprocess.run([sys.executable, "-m", "arena", "docs", "nope"], capture_output=True, text=True)
    assert unknown.returncode == 2 and "no topic 'nope' (topics: bots, cluster, configuration" in unknown.stderr


def test_arena_bots_lists_the_ladder_and_each_bots_options() -> None:
    import json

    listed = subprocess.run([sys.executable, "-m", "arena", "bots", "--format", "json"], capture_output=True, text=True)
    bots = {bot["name"]: bot for bot in json.loads(listed.stdout)}
    assert [name for name in bots if name in ("random", "heuristic", "search")] == ["random", "heuristic", "search"]
    assert [(o["name"], o["type"], o["default"]) for o in bots["search"]["options"]] == [
        ("playouts", "int", 1200),
        ("seed", "int", 0),
        ("share", "float", None),
    ]
    assert bots["random"]["options"] == []
    table = subprocess.run([sys.executable, "-m", "arena", "bots"], capture_output=True, text=True).stdout
    assert "  option playouts (int 1 to 100000, default 1200): playouts a decision" in table

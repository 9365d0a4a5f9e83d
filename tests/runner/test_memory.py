"""Bots in other languages play a tournament at memory_mb 512, and each bot's peak memory reaches the standings;
an output folder of the layout before the figure resumes, keeping its results, and a newer one is refused."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.cli import main
from arena.config import load_config
from arena.runner.tournament import run_tournament
from arena.sandbox import cgroups
from arena.store.database import DATABASE, REPLAYS, STORE_VERSION
from tests.runner.test_tournament import results

MakeFile = Callable[..., Path]


def json_output(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, object]]:
    capsys.readouterr()
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("mechanism", ["cgroup", "rlimit"])
def test_a_java_bot_and_a_node_bot_play_a_tournament_at_512_mb_and_their_peaks_reach_the_standings(
    tmp_path: Path,
    java_classes: Path,
    node_bot: Path,
    marker: str,
    mechanism: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if mechanism == "cgroup" and not isinstance(found := cgroups.hierarchy(), cgroups.Hierarchy):
        pytest.skip(f"no memory cgroup can be made here: {found}")
    tournament = tmp_path / "languages.yaml"
    tournament.write_text(
        "\n".join(
            [
                "name: languages",
                "format: round-robin",
                "players_per_match: 2",
                "repeats: 2",
                "seed: 3",
                "concurrency: 2",
                "sandbox: strict",
                f"limits: {{memory_mb: 512, memory_mechanism: {mechanism}, move_ms: 2000, startup_ms: 20000}}",
                "output: out",
                "bots:",
                f"  - {{name: java, command: [java, -cp, {java_classes}, Bot, {marker}], protocol: stdio,"
                f" dir: {java_classes}}}",
                f"  - {{name: node, command: [node, {node_bot}, {marker}], protocol: stdio, dir: {node_bot.parent}}}",
                "  - {name: random, builtin: random}",
            ]
        )
        + "\n"
    )
    config = load_config(tournament)
    summary = run_tournament(config, progress=False)
    assert summary.played == 6
    matches = json_output(capsys, "results", str(config.output), "--format", "json")
    assert [match["faults"] for match in matches] == [[]] * 6
    for match in matches:
        for bot, peak in zip(match["seats"], match["peak_memory_mb"], strict=True):  # type: ignore[call-overload]
            assert (peak is None) == (bot == "random")
    table = {row["bot"]: row for row in json_output(capsys, "standings", str(config.output), "--format", "json")}
    assert table["random"]["peak_memory_mb"] is None  # played in-process
    for bot in ("java", "node"):
        peak = table[bot]["peak_memory_mb"]
        assert isinstance(peak, float) and 0 < peak < 512, table[bot]


def _as_first_layout(output: Path, keep: int) -> None:
    """Turn an output folder into one the arena wrote before store_version 2, holding only its first `keep`
    matches: no peak_memory column, no store_version."""
    with sqlite3.connect(output / DATABASE) as db:
        kept = [row[0] for row in db.execute("SELECT match_id FROM matches ORDER BY round, match_id LIMIT ?", (keep,))]
        for (match_id,) in db.execute("SELECT match_id FROM matches").fetchall():
            if match_id not in kept:
                db.execute("DELETE FROM faults WHERE match_id = ?", (match_id,))
                db.execute("DELETE FROM matches WHERE match_id = ?", (match_id,))
                (output / REPLAYS / f"{match_id}.jsonl").unlink()
        db.execute("ALTER TABLE matches DROP COLUMN peak_memory")
        db.execute("DELETE FROM meta WHERE key = 'store_version'")
    db.close()


def test_a_folder_of_the_first_layout_resumes_keeping_its_results(
    tournament_file: MakeFile, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = load_config(tournament_file())
    run_tournament(config, progress=False)
    whole = results(config.output)
    old = tmp_path / "old"
    shutil.copytree(config.output, old)
    _as_first_layout(old, keep=2)
    assert [row["peak_memory_mb"] for row in json_output(capsys, "results", str(old), "--format", "json")] == [None] * 2

    resumed = run_tournament(load_config(tournament_file(output="old")), progress=False)
    assert resumed.played == len(whole) - 2
    assert results(old) == whole
    with sqlite3.connect(old / DATABASE) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'store_version'").fetchone() == (str(STORE_VERSION),)
    db.close()
    # Recorded before: no figure at all. Recorded now: one per seat (None: the built-in bots play in-process).
    rows = json_output(capsys, "results", str(old), "--format", "json")
    assert [row["peak_memory_mb"] for row in rows] == [None, None] + [[None, None]] * (len(whole) - 2)


def test_a_folder_of_a_newer_layout_is_refused_with_a_clear_message(
    tournament_file: MakeFile, capsys: pytest.CaptureFixture[str]
) -> None:
    config = load_config(tournament_file(builtins=("random", "random")))
    run_tournament(config, progress=False)
    with sqlite3.connect(config.output / DATABASE) as db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'store_version'", (str(STORE_VERSION + 1),))
    db.close()
    capsys.readouterr()
    assert main(["standings", str(config.output)]) != 0
    error = capsys.readouterr().err
    assert (
        f"written by a newer arena (store version {STORE_VERSION + 1}; this one reads up to {STORE_VERSION})" in error
    )
    assert error.count("\n") == 1

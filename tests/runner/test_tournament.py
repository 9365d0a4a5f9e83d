"""Whole tournaments: scheduled, played by real bot processes, recorded, resumed, reproduced."""

from __future__ import annotations

import contextlib
import csv
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main
from arena.config import TournamentConfig, load_config
from arena.errors import StoreError
from arena.matches import MatchDone, MatchJob
from arena.runner.executor import LocalExecutor
from arena.runner.tournament import run_tournament
from arena.store import ResultStore
from arena.store.export import match_rows, standing_rows
from tests.conftest import find_processes

MakeFile = Callable[..., Path]


def results(output: Path) -> list[dict[str, object]]:
    """What a run decided, without what differs from run to run (durations, paths)."""
    store = ResultStore.open_existing(output)
    try:
        return [
            {k: v for k, v in row.items() if k not in ("duration_s", "replay", "peak_memory_mb")}
            for row in match_rows(store)
        ]
    finally:
        store.close()


def children(pid: int) -> list[int]:
    """The arena's own child processes: its workers (and the multiprocessing resource tracker)."""
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def alive(pids: list[int]) -> list[int]:
    """Those of pids still running (a zombie has finished)."""
    running = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X"):
            running.append(pid)
    return running


def standings_of(output: Path) -> list[dict[str, object]]:
    store = ResultStore.open_existing(output)
    try:
        return standing_rows(store)
    finally:
        store.close()


FREE_MATCHES = 6
"""Matches rr-0001 to this one are played at once by the held bot; it holds every later one (see held_bot)."""

HELD_BOT = """
import sys, time
from pathlib import Path

from arena.sdk import run
from random_bot import RandomBot

HOLD = Path(__file__).with_name("hold")


class HeldBot(RandomBot):
    def act(self, message):
        if HOLD.exists() and int(message["match_id"].rsplit("-", 1)[1]) > FREE_MATCHES:
            time.sleep(3600)  # held: the wall-clock cap is far beyond the time the test takes to act on the arena
        return super().act(message)


run(HeldBot(), name="held")
"""


def held_bot(tmp_path: Path) -> Path:
    """Make the student programs play as the example bot but, while the returned file exists, never answer in a
    match numbered past FREE_MATCHES: an arena run then cannot end before the test stops it, and a run without
    the file (the whole one, the resumed one) plays exactly as the example bot does."""
    student = tmp_path / "student"
    shutil.copy(student / "bot.py", student / "random_bot.py")
    (student / "bot.py").write_text(HELD_BOT.replace("FREE_MATCHES", str(FREE_MATCHES)))
    return student / "hold"


def held_and_played(rows: list[dict[str, object]]) -> list[object]:
    """The matches among rows that the held bot should have held, yet finished."""
    played = []
    for row in rows:
        seats, number = row["seats"], int(str(row["match_id"]).rsplit("-", 1)[1])
        assert isinstance(seats, list)
        if number > FREE_MATCHES and any(str(bot).startswith("student") for bot in seats):
            played.append(row["match_id"])
    return played


def committed(output: Path) -> int:
    """Matches the arena has committed to its results database so far."""
    path = output / "results.sqlite"
    if not path.exists():
        return 0
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)) as database:
            return int(database.execute("SELECT count(*) FROM matches").fetchone()[0])
    except sqlite3.OperationalError:  # the schema is not there yet
        return 0


def await_committed(arena: subprocess.Popen[Any], output: Path, matches: int) -> None:
    """Until the arena has committed that many matches (it must not end before)."""
    deadline = time.monotonic() + 60
    while committed(output) < matches:
        assert arena.poll() is None, f"the arena ended (status {arena.returncode}) before {matches} matches"
        assert time.monotonic() < deadline, f"the arena committed fewer than {matches} matches in 60 s"
        time.sleep(0.05)


def test_a_round_robin_is_played_recorded_and_its_replays_verify(tournament_file: MakeFile, capsys) -> None:
    config = load_config(tournament_file(programs=1))
    summary = run_tournament(config, progress=False)
    rows = results(config.output)
    assert summary.matches == summary.played == len(rows) == 6  # 4 bots, 2 a table: every pair once
    assert {frozenset(row["seats"]) for row in rows} == {
        frozenset(pair) for pair in [(a, b) for a in config.bot_names for b in config.bot_names if a < b]
    }
    replays = sorted((config.output / "replays").glob("*.jsonl"))
    assert len(replays) == 6
    assert all(main(["replay", str(replay), "--verify"]) == 0 for replay in replays)
    capsys.readouterr()
    table = standings_of(config.output)
    assert sorted(row["bot"] for row in table) == sorted(config.bot_names)
    assert sum(row["matches"] for row in table) == 12
    assert main(["standings", str(config.output), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == table


def test_results_are_the_same_at_any_concurrency(tournament_file: MakeFile) -> None:
    one = load_config(tournament_file(name="one", output="out1", concurrency=1, programs=1))
    two = load_config(tournament_file(name="one", output="out2", concurrency=2, programs=1))
    run_tournament(one, progress=False)
    run_tournament(two, progress=False)
    assert results(one.output) == results(two.output)


class StopAfter:
    """A local executor that is interrupted (as by Ctrl-C) after some matches are done."""

    def __init__(self, matches: int) -> None:
        self.matches = matches

    def __call__(self, config: TournamentConfig, workers: int) -> LocalExecutor:
        executor, limit = LocalExecutor(config, workers), self.matches
        original = executor.run

        def run(jobs: Sequence[MatchJob]) -> Iterator[MatchDone]:
            for count, done in enumerate(original(jobs), start=1):
                yield done
                if count >= limit:
                    raise KeyboardInterrupt

        executor.run = run  # type: ignore[method-assign]
        return executor


def test_an_interrupted_tournament_resumes_to_the_same_results(tournament_file: MakeFile) -> None:
    whole = load_config(tournament_file(name="r", output="whole", programs=1))
    run_tournament(whole, progress=False)
    config = replace(whole, output=whole.output.parent / "halves")
    with pytest.raises(KeyboardInterrupt):
        run_tournament(config, progress=False, executor=StopAfter(2))
    assert 2 <= len(results(config.output)) < 6
    kept = len(results(config.output))
    summary = run_tournament(config, progress=False)
    assert summary.kept == kept and summary.kept + summary.played == 6
    assert results(config.output) == results(whole.output)


def test_a_resumed_runs_progress_counts_only_the_matches_it_plays(
    tournament_file: MakeFile, capsys: pytest.CaptureFixture[str]
) -> None:
    config = load_config(tournament_file(name="p", builtins=("random", "heuristic", "random"), programs=0))
    with pytest.raises(KeyboardInterrupt, match=r"interrupted: \d+ of 3 matches are kept"):
        run_tournament(config, progress=False, executor=StopAfter(1))
    kept = len(results(config.output))
    seen: list[tuple[int, int]] = []
    run_tournament(config, progress=True, live=lambda done, total: seen.append((done, total)))
    bar = capsys.readouterr().err.replace("\r", "\n").splitlines()[-1]
    assert f" {3 - kept}/{3 - kept} " in bar and f"kept={kept}" in bar, bar
    assert seen == [(kept + n, 3) for n in range(1, 4 - kept)]  # the live page counts every match, kept ones too


def test_another_configuration_in_the_same_output_is_refused_unless_restarted(tournament_file: MakeFile) -> None:
    config = load_config(tournament_file())
    run_tournament(config, progress=False)
    other = replace(config, seed=8)
    with pytest.raises(StoreError, match=r"different configuration.*--restart"):
        run_tournament(other, progress=False)
    assert run_tournament(other, progress=False, restart=True).played == 3  # 3 bots: every pair once


def test_a_swiss_tournament_pairs_each_round_from_the_results_so_far(tournament_file: MakeFile) -> None:
    path = tournament_file(fmt="swiss", builtins=("random", "heuristic", "random", "heuristic"), extra="rounds: 3\n")
    config = load_config(path)
    run_tournament(config, progress=False)
    rows = results(config.output)
    assert [row["round"] for row in rows] == [1, 1, 2, 2, 3, 3]
    pairs = [frozenset(row["seats"]) for row in rows]
    assert len(set(pairs)) == 6  # 4 bots over 3 rounds: nobody meets twice
    resumed = run_tournament(config, progress=False)
    assert resumed.played == 0 and resumed.kept == 6


def test_a_gauntlet_writes_a_gradebook_csv_of_its_candidates(tournament_file: MakeFile) -> None:
    extra = "gauntlet: {candidates: [student-0]}\n"
    config = load_config(tournament_file(fmt="gauntlet", programs=1, extra=extra))
    run_tournament(config, progress=False)
    rows = (config.output / "gauntlet.csv").read_text().splitlines()
    assert rows[0].startswith("rank,bot,matches,wins")
    assert [row.split(",")[1] for row in rows[1:]] == ["student-0"]
    assert rows[0].endswith(",fair_play_flags,fair_play") and rows[1].endswith(",0,")  # honest: no flag


# A match worker told to stop (SIGTERM) at the worst moment: while it still imports the bot hosts and ZeroMQ.
STOPPED_WHILE_IMPORTING = """
import importlib.abc, multiprocessing, os, signal, sys
from arena.config import load_config
from arena.runner.executor import _serve

class StopOnImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "arena.runner.worker":
            os.kill(os.getpid(), signal.SIGTERM)
        return None

sys.meta_path.insert(0, StopOnImport())
_serve(load_config(sys.argv[1]), multiprocessing.Pipe()[1], None)
print("stopped")
"""


def test_a_worker_stopped_while_it_starts_stops_quietly(tournament_file: MakeFile) -> None:
    """A full disk or Ctrl-C stops the workers at once, the ones still starting too: no traceback of theirs."""
    done = subprocess.run(
        [sys.executable, "-c", STOPPED_WHILE_IMPORTING, str(tournament_file())], capture_output=True, text=True
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "stopped\n", "")


def test_ctrl_c_keeps_finished_matches_and_leaves_no_process(
    tournament_file: MakeFile, marker: str, tmp_path: Path
) -> None:
    path = tournament_file(name="big", builtins=("heuristic", "random"), programs=2, extra="repeats: 20\n")
    config = load_config(path)
    hold = held_bot(tmp_path)
    hold.touch()
    arena = subprocess.Popen(
        [sys.executable, "-m", "arena", "run", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    await_committed(arena, config.output, 3)
    assert find_processes(marker), "the bot programs should be running"
    os.killpg(arena.pid, signal.SIGINT)  # as a terminal does: to the arena and its workers alike
    _, err = arena.communicate(timeout=60)
    assert arena.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err, err
    hold.unlink()
    kept = results(config.output)
    said = f"arena: interrupted: {len(kept)} of {6 * 20} matches are kept in {config.output}; run the same command"
    assert said in err, err
    assert 3 <= len(kept) < 6 * 20
    assert held_and_played(kept) == []
    summary = run_tournament(config, progress=False)
    assert summary.kept == len(kept) and summary.kept + summary.played == summary.matches


def test_an_arena_killed_outright_leaves_no_process_and_resumes_to_the_same_results(
    tournament_file: MakeFile, marker: str, tmp_path: Path
) -> None:
    hold = held_bot(tmp_path)
    whole = load_config(tournament_file(name="k", output="whole", programs=1, extra="repeats: 4\n"))
    run_tournament(whole, progress=False)
    path = tournament_file(name="k", output="killed", programs=1, extra="repeats: 4\n")
    config = load_config(path)
    hold.touch()
    arena = subprocess.Popen([sys.executable, "-m", "arena", "run", str(path)], stderr=subprocess.DEVNULL)
    await_committed(arena, config.output, 3)
    workers = children(arena.pid)
    os.kill(arena.pid, signal.SIGKILL)  # no cleanup code runs in the arena: its workers must notice
    arena.wait(10)
    deadline = time.monotonic() + 20
    while (find_processes(marker) or alive(workers)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not find_processes(marker)
    assert workers and not alive(workers), "the arena's worker processes outlived it"
    assert 3 <= len(results(config.output)) < 24
    assert held_and_played(results(config.output)) == []
    stray = config.output / "report" / "matches" / "rr-0999.js.partial"  # as a worker killed mid-write leaves one
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_text("var half")
    hold.unlink()
    run_tournament(config, progress=False)
    assert results(config.output) == results(whole.output)
    assert not list(config.output.rglob("*.partial"))


def test_a_faulting_bot_is_counted_in_the_standings_and_the_tournament_goes_on(
    tournament_file: MakeFile, tmp_path: Path
) -> None:
    (tmp_path / "student" / "bad.py").write_text("from arena.sdk import run\nrun(lambda message: 999)\n")
    extra = "  - {name: bad, command: [python3, student/bad.py]}\n"
    config = load_config(tournament_file(extra=extra))
    summary = run_tournament(config, progress=False)
    assert summary.played == 6 and summary.faults == 3  # every match of the bad bot: an illegal index
    table = {row["bot"]: row for row in standings_of(config.output)}
    assert table["bad"]["faults"] == {"illegal": 3}
    assert table["bad"]["wins"] == 0 and table["bad"]["rank"] == 4
    faults = [fault for row in results(config.output) for fault in row["faults"]]
    assert {fault["bot"] for fault in faults} == {"bad"}
    assert all("index 999 is outside legal" in fault["detail"] for fault in faults)


def test_duplicate_matches_deal_the_same_cards_to_the_rotated_seats(tournament_file: MakeFile) -> None:
    config = load_config(tournament_file(builtins=("random", "heuristic"), extra="duplicate: true\n"))
    run_tournament(config, progress=False)
    rows = results(config.output)
    assert len(rows) == 2 and rows[0]["seed"] == rows[1]["seed"]
    assert rows[0]["seats"] == rows[1]["seats"][::-1]
    deals = []
    for path in sorted((config.output / "replays").glob("*.jsonl")):
        first = next(json.loads(line) for line in path.read_text().splitlines() if '"round_start"' in line)
        deals.append((first["hands"], first["deck"]))
    assert deals[0] == deals[1]


def test_a_gauntlets_gradebook_ranks_the_candidates_among_themselves(tournament_file: MakeFile) -> None:
    extra = "gauntlet: {candidates: [student-0, student-1]}\n"
    config = load_config(tournament_file(fmt="gauntlet", programs=2, extra=extra))
    run_tournament(config, progress=False)
    rows = list(csv.DictReader((config.output / "gauntlet.csv").open()))
    whole = {row["bot"]: row["rank"] for row in standings_of(config.output)}
    assert [row["bot"] for row in rows] == sorted(whole.keys() & {"student-0", "student-1"}, key=whole.__getitem__)
    assert [row["field_rank"] for row in rows] == [str(whole[row["bot"]]) for row in rows]
    tied = whole["student-0"] == whole["student-1"]
    assert [row["rank"] for row in rows] == (["1", "1"] if tied else ["1", "2"])

"""Batched commits: a batch run of in-process bots commits as it goes, a kill -9 loses only what it had not
committed, and resuming gives back every result and replay byte for byte, at any concurrency."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

from arena.config import load_config
from arena.runner.tournament import run_tournament
from arena.store import ResultStore
from tests.runner.test_tournament import committed, results

BATCH = """\
name: batch
format: round-robin
players_per_match: 4
repeats: {repeats}
seed: 5
concurrency: 2
sandbox: none
output: {output}
bots:
  - {{name: r1, builtin: random}}
  - {{name: r2, builtin: random}}
  - {{name: r3, builtin: heuristic}}
  - {{name: r4, builtin: random}}
  - {{name: r5, builtin: random}}
  - {{name: r6, builtin: heuristic}}
"""


def batch_file(tmp_path: Path, output: str, repeats: int) -> Path:
    path = tmp_path / f"{output}.yaml"
    path.write_text(BATCH.format(repeats=repeats, output=output))
    return path


def replays(output: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted((output / "replays").glob("*.jsonl"))}


def recorded_replays(output: Path) -> dict[str, bytes]:
    """The replay of every committed match, by file name."""
    store = ResultStore.open_existing(output)
    try:
        return {match.replay.name: match.replay.read_bytes() for match in store.matches() if match.replay}
    finally:
        store.close()


def test_a_batch_killed_outright_keeps_its_committed_batches_and_resumes_to_the_same_bytes(tmp_path: Path) -> None:
    whole = load_config(batch_file(tmp_path, "whole", repeats=6))
    assert run_tournament(whole, progress=False).played == 90
    expected_results, expected_replays = results(whole.output), replays(whole.output)

    path = batch_file(tmp_path, "killed", repeats=6)
    config = load_config(path)
    arena = subprocess.Popen([sys.executable, "-m", "arena", "run", str(path), "--quiet"], stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while committed(config.output) == 0 and arena.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert arena.poll() is None, "the run should commit batches while it runs, not only at its end"
    os.kill(arena.pid, signal.SIGKILL)
    arena.wait(10)
    assert arena.stderr is not None
    arena.stderr.close()

    kept = results(config.output)
    assert 0 < len(kept) < 90
    assert all(row in expected_results for row in kept)  # whole matches, as the uninterrupted run decided them
    assert {name: expected_replays[name] for name in recorded_replays(config.output)} == recorded_replays(config.output)
    summary = run_tournament(config, progress=False)
    assert (summary.kept, summary.kept + summary.played) == (len(kept), 90)
    assert results(config.output) == expected_results
    assert replays(config.output) == expected_replays


def test_replays_are_the_same_bytes_at_any_concurrency(tmp_path: Path) -> None:
    one = load_config(batch_file(tmp_path, "one", repeats=4))
    run_tournament(replace(one, concurrency=1), progress=False)
    two = load_config(batch_file(tmp_path, "two", repeats=4))
    run_tournament(two, progress=False)
    assert results(one.output) == results(two.output)
    assert len(replays(one.output)) == 60 and replays(one.output) == replays(two.output)

"""Whole tournaments, as `arena run` plays them, at tables a course's bots make hard: a bot that spins up
CPU hogs beside honest bots that think hard, and bots kept in a folder closed to everyone but root."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from tests.plugins.conftest import arena_cli
from tests.runner.test_tournament import results
from tests.sandbox.conftest import strict_or_skip

THINKER = """
import random, sys, time
from arena.sdk import run

acts = 0
def act(message):
    global acts
    acts += 1
    if acts <= 8:  # thinks hard early in each match: 35 of its 50 ms of CPU
        spent = time.process_time() + 0.035
        while time.process_time() < spent:
            pass
    return random.choice(message["legal"])

run(act)
"""
HOG = """
import os, random, sys
from arena.sdk import run

for _ in range(6):
    if os.fork() == 0:
        while True:
            pass
run(lambda message: random.choice(message["legal"]))
"""


def _run(tmp_path: Path, text: str) -> list[dict[str, object]]:
    (tmp_path / "t.yaml").write_text(text)
    done = arena_cli(["run", "t.yaml", "--quiet", "--replay-pages", "0"], [], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    return results(tmp_path / "out")


def test_honest_bots_beside_a_cpu_hog_lose_none_of_their_time(tmp_path: Path, marker: str) -> None:
    strict_or_skip()
    bots = tmp_path / "bots"
    bots.mkdir(mode=0o755)
    (bots / "thinker.py").write_text(THINKER)
    (bots / "hog.py").write_text(HOG)
    rows = _run(
        tmp_path,
        f"""\
name: hog
format: round-robin
players_per_match: 3
seed: 2
concurrency: 1
sandbox: strict
limits: {{move_ms: 50, wall_factor: 100}}
output: out
bots:
  - {{name: thinker-1, command: [{sys.executable}, bots/thinker.py, {marker}]}}
  - {{name: thinker-2, command: [{sys.executable}, bots/thinker.py, {marker}]}}
  - {{name: thinker-3, command: [{sys.executable}, bots/thinker.py, {marker}]}}
  - {{name: hog, command: [{sys.executable}, bots/hog.py, {marker}]}}
""",
    )
    assert len(rows) == 4
    faults = [fault for row in rows for fault in row["faults"]]  # type: ignore[attr-defined]
    honest = [fault for fault in faults if fault["bot"] != "hog"]
    # The wall cap (5 s) only keeps a loaded machine, which gives a thinker a few per cent of a core, from
    # deciding this test: what it checks is that a thinker's 50 ms are its own CPU time, not the hog's.
    assert honest == [], "the thinkers are charged their own CPU time only"
    # The hog's children spin on its turn, on its own clock: where they are stopped one by one (SIGSTOP, without
    # a cgroup) they may spend its time before it answers. That is its fault, and nobody else's.
    assert all(fault["reason"] in ("timeout", "limit") for fault in faults), faults


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root arena gives bots UIDs of their own")
def test_bots_in_a_folder_closed_to_all_but_root_play_at_basic(tmp_path: Path, marker: str) -> None:
    closed = Path(tempfile.mkdtemp(prefix="arena-test-closed-"))  # mode 0700, as `mktemp -d` makes it
    try:
        (closed / "bot.py").write_text(
            "import random\nfrom arena.sdk import run\nrun(lambda m: random.choice(m['legal']))\n"
        )
        rows = _run(
            tmp_path,
            f"""\
name: closed
format: round-robin
players_per_match: 2
seed: 4
sandbox: basic
output: out
bots:
  - {{name: random-0, builtin: random}}
  - {{name: student, command: [{sys.executable}, {closed}/bot.py, {marker}]}}
""",
        )
        assert oct(closed.stat().st_mode & 0o777) == "0o700"
        assert len(rows) == 1
        assert rows[0]["faults"] == []
    finally:
        shutil.rmtree(closed, ignore_errors=True)

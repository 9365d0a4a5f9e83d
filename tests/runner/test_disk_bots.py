"""A tournament with a bot that fills its disk and one that floods it with files: each is stopped with a
`limit` fault of its own, and the other bots play on unharmed."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.plugins.conftest import arena_cli
from tests.runner.test_tournament import results
from tests.sandbox.conftest import strict_or_skip

BOT = """
import os, random, sys, time
from arena.sdk import run

def fill(message):
    fd = os.open("fill", os.O_WRONLY | os.O_CREAT)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:  # retries its full disk: only the arena ends this
        try:
            os.write(fd, b"x" * 65536)
        except OSError:
            pass
    return random.choice(message["legal"])

def flood(message):
    for number in range(5000):
        open(f"f{number}", "w").close()
    time.sleep(3)
    return random.choice(message["legal"])

run({"fill": fill, "flood": flood}[sys.argv[1]])
"""


def test_bots_that_fill_or_flood_their_disk_are_stopped_and_the_run_goes_on(tmp_path: Path, marker: str) -> None:
    strict_or_skip()
    bots = tmp_path / "bots"
    bots.mkdir(mode=0o755)
    (bots / "bot.py").write_text(BOT)
    (tmp_path / "t.yaml").write_text(
        f"""\
name: disk
format: round-robin
players_per_match: 2
seed: 5
sandbox: strict
limits: {{move_ms: 8000, disk_mb: 4}}
output: out
bots:
  - {{name: random-0, builtin: random}}
  - {{name: heuristic-0, builtin: heuristic}}
  - {{name: filler, command: [{sys.executable}, bots/bot.py, fill, {marker}]}}
  - {{name: flooder, command: [{sys.executable}, bots/bot.py, flood, {marker}]}}
"""
    )
    done = arena_cli(["run", "t.yaml", "--quiet", "--replay-pages", "0"], [], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = results(tmp_path / "out")
    assert len(rows) == 6
    faults = [fault for row in rows for fault in row["faults"]]  # type: ignore[attr-defined]
    assert {fault["bot"] for fault in faults} == {"filler", "flooder"}
    details = {(fault["bot"], fault["reason"], fault["detail"].split(" (")[0]) for fault in faults}
    assert details == {
        ("filler", "limit", "disk: kept writing after its 4 MB were full"),
        ("flooder", "limit", "disk: wrote more than 1024 files"),
    }

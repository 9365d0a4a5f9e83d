"""The search bot's playouts run compiled from a wheel and from the sources in an editable install (setup.py), and
play the same moves either way: a result must not depend on how the arena was installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import arena
from arena.bots.search import playouts_compiled

ROOT = Path(__file__).resolve().parents[2]
EXPECT_COMPILED = os.environ.get("ARENA_EXPECT_COMPILED") == "1"  # .ci/run's wheel stage: built with a compiler

ANSWERS = """
import hashlib, json, sys
from arena.bots.heuristic import HeuristicBot
from arena.bots.search import SearchBot, playouts_compiled
from arena.engine import RULESETS, Match
from arena.players.local import MessagePlayer
from arena.runner import play_match

digest, count = hashlib.sha256(), 0


class Recorded:
    def __init__(self, bot):
        self.bot = bot

    def match_start(self, message):
        self.bot.match_start(message)

    def act(self, message):
        global count
        answer = self.bot.act(message)
        digest.update(json.dumps(answer, sort_keys=True).encode())
        count += 1
        return answer


for ruleset in sorted(RULESETS):
    for seed in range(6):
        bots = [Recorded(SearchBot(playouts=200)), HeuristicBot(), HeuristicBot()]
        players = [MessagePlayer(bot, 1000) for bot in bots]
        play_match(Match(RULESETS[ruleset], ["search", "a", "b"], seed), players, f"m{seed}")
print(json.dumps({"compiled": playouts_compiled(), "answers": count, "digest": digest.hexdigest()}))
"""


def answers(python_path: str | None) -> dict[str, object]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    if python_path is not None:
        env["PYTHONPATH"] = python_path
    done = subprocess.run([sys.executable, "-c", ANSWERS], env=env, capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout))


def sources_as_installed(folder: Path) -> Path:
    """The plain sources laid out as installed (bots/ as arena.bots), for a process that must not import the wheel."""
    package = folder / "arena"
    package.mkdir()
    for entry in (ROOT / "arena").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    (package / "bots").symlink_to(ROOT / "bots")
    return folder


def test_the_playouts_are_compiled_where_a_wheel_was_built_and_never_shadow_the_sources() -> None:
    if EXPECT_COMPILED:
        assert playouts_compiled()
        assert Path(arena.__file__).resolve().parent != ROOT / "arena"
    elif Path(arena.__file__).resolve().parent == ROOT / "arena":
        assert not playouts_compiled()
        assert not list((ROOT / "bots").rglob("*.so"))


@pytest.mark.skipif(not playouts_compiled(), reason="the playouts are plain Python here: nothing to compare")
def test_compiled_playouts_play_the_same_moves_as_plain_python(tmp_path: Path) -> None:
    compiled = answers(None)
    plain = answers(str(sources_as_installed(tmp_path)))
    assert compiled["compiled"] is True and plain["compiled"] is False
    assert plain["answers"] == compiled["answers"] > 250
    assert plain["digest"] == compiled["digest"]

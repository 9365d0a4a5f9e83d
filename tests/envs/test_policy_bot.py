"""examples/policy-bot as its README and docs/training.md use it: trained by train.py, checked by check-bot."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from arena.envs import action_space, observation_size
from tests.players.conftest import ROOT
from tests.test_check_bot import check_bot

POLICY_BOT = ROOT / "examples" / "policy-bot"


def test_the_shipped_policy_bot_passes_check_bot_at_every_table_size() -> None:
    done = check_bot("--matches", "1", "--", "python3", POLICY_BOT / "bot.py")
    assert done.returncode == 0, done.stdout + done.stderr
    for players in range(2, 7):
        assert f"  {players} players: 1 match," in done.stdout
    assert done.stdout.rstrip().endswith("PASS: no faults")


def test_a_policy_for_another_ruleset_says_so_and_faults() -> None:
    done = check_bot("--matches", "1", "--ruleset", "classic", "--", "python3", POLICY_BOT / "bot.py")
    assert done.returncode == 1
    assert "policy.npz was not trained for the classic ruleset" in done.stdout


def test_train_writes_a_policy_of_the_spaces_shape_that_the_bot_loads(tmp_path: Path) -> None:
    out = tmp_path / "policy.npz"
    command = [sys.executable, "train.py", "--steps", "1", "--batch", "4", "--evaluate", "4", "--out", out]
    done = subprocess.run(command, cwd=POLICY_BOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "untrained: won" in done.stdout and "trained (1 steps)" in done.stdout
    with np.load(out) as saved:
        assert saved["weights"].shape == (observation_size("2019"), action_space("2019").size)
        assert saved["bias"].shape == (action_space("2019").size,)
        assert np.any(saved["weights"] != 0), "one step of a batch with a win and a loss moves the weights"

"""`arena doctor`: what the machine gives, and a hostile suite that fails where a guarantee is really missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from arena.sandbox import notices
from tests.sandbox.conftest import strict_or_skip

CHECKOUT = Path(__file__).resolve().parents[2]
CHECKS = [
    "network",
    "files outside its directory",
    "another bot's files",
    "signals outside its tree",
    "fork bomb",
    "memory",
    "disk",
    "CPU off its turn",
]


def doctor(*args: str, env: dict[str, str] | None = None, cwd: Path = CHECKOUT) -> tuple[int, dict[str, Any]]:
    """Run `arena doctor --format json`, as an organiser would, in a process of its own (no probe answers
    inherited from this one)."""
    environment = {k: v for k, v in os.environ.items() if k != notices.SHARED_VARIABLE} | (env or {})
    done = subprocess.run(
        [sys.executable, "-m", "arena", "doctor", *args, "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=environment,
    )
    return done.returncode, json.loads(done.stdout)


def passed(found: dict[str, Any]) -> dict[str, bool]:
    return {check["name"]: check["passed"] for check in found["checks"]}


def test_strict_here_keeps_every_hostile_bot_from_what_it_tries() -> None:
    strict_or_skip()
    status, found = doctor()
    assert found["level"] == "strict" and found["asked"] == "strict"
    assert list(passed(found)) == CHECKS
    assert all(passed(found).values()), found["checks"]
    assert status == 0 and found["ok"]


def test_at_none_the_hostile_suite_fails_as_nothing_is_kept() -> None:
    status, found = doctor("--sandbox", "none")
    results = passed(found)
    assert not any(results[name] for name in CHECKS if name != "CPU off its turn"), found["checks"]
    assert results["CPU off its turn"]  # the arena freezes a bot off its turn at every level
    assert status == 1 and not found["ok"]


def test_without_bubblewrap_strict_is_not_given_and_basic_still_holds(tmp_path: Path) -> None:
    status, found = doctor(env={"ARENA_BWRAP": str(tmp_path / "no-bwrap")})
    assert found["asked"] == "strict" and found["level"] == "basic"
    assert "bubblewrap cannot run here" in found["why"]
    facts = {fact["name"]: fact for fact in found["facts"]}
    assert facts["bubblewrap"]["short"]
    assert all(passed(found).values()), found["checks"]  # Landlock, seccomp (and namespaces, as root)
    assert status == 1 and not found["ok"]


def test_a_tournament_file_is_checked_for_its_own_level(tmp_path: Path) -> None:
    (tmp_path / "bot").mkdir()
    (tmp_path / "bot" / "bot.py").write_text("pass\n")
    (tmp_path / "t.yaml").write_text(
        "name: t\nformat: round-robin\nplayers_per_match: 2\nsandbox: basic\nbots:\n"
        "  - {name: a, builtin: random}\n  - {name: b, command: [python3, bot/bot.py]}\n"
    )
    status, found = doctor(str(tmp_path / "t.yaml"), cwd=tmp_path)
    assert found["asked"] == "basic" and found["level"] == "basic"
    assert all(passed(found).values()), found["checks"]
    assert status == 0 and found["ok"]

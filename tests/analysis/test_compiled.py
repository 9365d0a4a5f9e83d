"""The judges run compiled from a wheel, and from the sources in an editable install (setup.py)."""

from __future__ import annotations

import os
from pathlib import Path

import arena
from arena.analysis import judges_compiled

ROOT = Path(__file__).resolve().parents[2]


def test_the_judges_are_compiled_where_a_wheel_was_built_and_never_shadow_the_sources() -> None:
    if os.environ.get("ARENA_EXPECT_COMPILED") == "1":  # .ci/run's wheel stage: built with a C compiler at hand
        assert judges_compiled()
        assert Path(arena.__file__).resolve().parent != ROOT / "arena"
    elif Path(arena.__file__).resolve().parent == ROOT / "arena":
        # the source tree: a module compiled there once would hide every later edit of its source
        assert not judges_compiled()
        assert not list((ROOT / "arena").rglob("*.so"))

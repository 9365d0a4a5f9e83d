"""The hot paths compiled with mypyc where a C compiler is at hand. Everything else is in pyproject.toml.

- The judges of every decision follow each seat's knowledge through every event of every match a tournament plays
  (arena.analysis): in plain Python that is most of what the diagnostics cost a run, and compiled it is a third less.
- The search bot's playouts (bots/simulator.py, bots/sampling.py, bots/equity.py) take 2.5 times less CPU a move
  compiled, with the same moves (docs/bots.md).

- A wheel (`pip install .`) compiles them; without a compiler, or with ARENA_PURE_PYTHON=1, the same modules run as
  plain Python, with the same results and moves (`arena doctor` says which).
- An editable install (`pip install -e .`) never compiles them: a module compiled once would hide every later edit
  of its source."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

COMPILED = [
    "arena/analysis/mistakes.py",
    "arena/analysis/watch.py",
    "arena/analysis/fairplay/sight.py",
    "arena/analysis/fairplay/notes.py",
    "bots/simulator.py",
    "bots/sampling.py",
    "bots/equity.py",
]
STAGE = Path("build", "mypyc-sources")
"""mypyc names a module by its path, and bots/ installs as `arena.bots` (pyproject.toml's package-dir): the sources
are compiled from a copy laid out as installed."""


def staged(paths: list[str]) -> list[str]:
    shutil.rmtree(STAGE, ignore_errors=True)
    skip = shutil.ignore_patterns("__pycache__", "*.so")
    shutil.copytree("arena", STAGE / "arena", ignore=skip)
    shutil.copytree("bots", STAGE / "arena" / "bots", ignore=skip)
    return [str(STAGE / "arena" / path) if path.startswith("bots/") else str(STAGE / path) for path in paths]


class BuildCompiled(build_ext):
    """Builds the compiled modules into a wheel, all or none: they share one library, and a module whose part of it
    is missing would not import at all."""

    def build_extensions(self) -> None:
        try:
            super().build_extensions()
        except Exception as error:  # a compiler or Python's headers missing: plain Python runs instead
            for built in self.get_outputs():
                if os.path.exists(built):
                    os.remove(built)
            print(f"loveletter-arena: the compiled modules stay plain Python ({error})", file=sys.stderr)


def compiled_modules() -> list[Extension]:
    building = any(command in sys.argv for command in ("bdist_wheel", "build", "build_ext", "install"))
    if not building or "editable_wheel" in sys.argv or os.environ.get("ARENA_PURE_PYTHON") == "1":
        return []
    try:
        from mypyc.build import mypycify

        # The build environment has the project's source, not its dependencies: their types are not needed here.
        return mypycify(["--ignore-missing-imports", "--no-warn-unused-ignores", *staged(COMPILED)], opt_level="3")
    except (Exception, SystemExit) as error:  # mypy missing, or the sources not compilable: plain Python
        print(f"loveletter-arena: the compiled modules stay plain Python ({error})", file=sys.stderr)
        return []


setup(ext_modules=compiled_modules(), cmdclass={"build_ext": BuildCompiled})

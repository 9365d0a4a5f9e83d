"""The judges of every decision compiled with mypyc where a C compiler is at hand.

They follow each seat's knowledge through every event of every match a tournament plays (arena.analysis): in plain
Python that is most of what the diagnostics cost a run, and compiled it is a third less. Everything else is in
pyproject.toml.

- A wheel (`pip install .`) compiles them; without a compiler, or with ARENA_PURE_PYTHON=1, the same modules run as
  plain Python, with the same results (`arena doctor` says which).
- An editable install (`pip install -e .`) never compiles them: a module compiled once would hide every later edit
  of its source."""

from __future__ import annotations

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

COMPILED = [
    "arena/analysis/mistakes.py",
    "arena/analysis/watch.py",
    "arena/analysis/fairplay/sight.py",
    "arena/analysis/fairplay/notes.py",
]


class BuildCompiledJudges(build_ext):
    """Builds the compiled modules into a wheel, all or none: they share one library, and a module whose part of it
    is missing would not import at all."""

    def build_extensions(self) -> None:
        try:
            super().build_extensions()
        except Exception as error:  # a compiler or Python's headers missing: plain Python runs instead
            for built in self.get_outputs():
                if os.path.exists(built):
                    os.remove(built)
            print(f"loveletter-arena: the judges stay plain Python ({error})", file=sys.stderr)


def compiled_judges() -> list[Extension]:
    building = any(command in sys.argv for command in ("bdist_wheel", "build", "build_ext", "install"))
    if not building or "editable_wheel" in sys.argv or os.environ.get("ARENA_PURE_PYTHON") == "1":
        return []
    try:
        from mypyc.build import mypycify

        # The build environment has the project's source, not its dependencies: their types are not needed here.
        return mypycify(["--ignore-missing-imports", "--no-warn-unused-ignores", *COMPILED], opt_level="3")
    except (Exception, SystemExit) as error:  # mypy missing, or the sources not compilable: plain Python
        print(f"loveletter-arena: the judges stay plain Python ({error})", file=sys.stderr)
        return []


setup(ext_modules=compiled_judges(), cmdclass={"build_ext": BuildCompiledJudges})

"""Real plugin distributions for the tests: the example package installed with pip, and hand-made ones.

Each test's distributions live on the PYTHONPATH of a subprocess only, so the test process's own
registry and the shared environment stay as they are.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "third-party-bot"
TIMEOUT_S = 60


@dataclass(frozen=True, slots=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str


def run(args: list[str], pythonpath: list[Path], cwd: Path, env: Mapping[str, str] | None = None) -> Ran:
    """A Python subprocess of the arena's interpreter that sees the distributions in `pythonpath`."""
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ARENA_DISABLE_PLUGINS")}
    if pythonpath:
        environment["PYTHONPATH"] = os.pathsep.join(str(path) for path in pythonpath)
    environment.update(env or {})
    done = subprocess.run(
        [sys.executable, *args], cwd=cwd, env=environment, capture_output=True, text=True, timeout=TIMEOUT_S
    )
    return Ran(done.returncode, done.stdout, done.stderr)


def arena_cli(args: list[str], pythonpath: list[Path], cwd: Path, env: Mapping[str, str] | None = None) -> Ran:
    """`arena ARGS` in a subprocess, as a user would run it."""
    return run(["-m", "arena", *args], pythonpath, cwd, env)


@pytest.fixture(scope="session")
def firstbot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/third-party-bot installed by pip into a folder of its own (offline: no index, no isolation).

    pip builds from a copy, so the build leaves nothing in the source tree."""
    work = tmp_path_factory.mktemp("firstbot")
    source = work / "source"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    target = work / "site"
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index"]
    done = subprocess.run(
        [*command, "--target", str(target), str(source)], capture_output=True, text=True, timeout=TIMEOUT_S
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return target


def make_distribution(
    folder: Path,
    name: str,
    version: str,
    entry_points: Mapping[str, str],
    modules: Mapping[str, str],
) -> Path:
    """A real installed distribution, as importlib.metadata sees one: a dist-info folder and its modules.

    `entry_points` maps names to targets in the group loveletter_arena; `modules` maps module names to code."""
    folder.mkdir(parents=True, exist_ok=True)
    info = folder / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = "".join(f"{key} = {value}\n" for key, value in entry_points.items())
    (info / "entry_points.txt").write_text(f"[loveletter_arena]\n{lines}")
    for module, code in modules.items():
        (folder / f"{module}.py").write_text(textwrap.dedent(code))
    return folder


def plugin_code(*bots: str, before: str = "") -> str:
    """A plugin module registering bots of these names (listed, never started); `before` runs first in its hook."""
    adds = "".join(
        f"    registry.add(BotSpec({bot!r}, 'test bot', (sys.executable, '-c', 'pass'), Path('.')))\n" for bot in bots
    )
    first = textwrap.indent(textwrap.dedent(before).strip() + "\n", "    ") if before else ""
    hook_body = first + adds or "    pass\n"
    return (
        "import sys\n"
        "from pathlib import Path\n"
        "from arena.plugins import BotSpec, hookimpl\n\n"
        "@hookimpl\n"
        "def arena_register_bots(registry):\n" + hook_body
    )

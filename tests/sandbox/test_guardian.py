"""An arena killed outright (SIGKILL) leaves nothing of its bots: not a grandchild that left its parent, not a
frozen bot, not a cgroup. The arena here is a real process: a Python program that launches a bot and waits."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from arena.sandbox import SandboxLevel, guardian, procfs
from tests.conftest import ROOT, find_processes
from tests.sandbox.conftest import DEADLINE_S, LIMITED_LEVELS, poll_until, strict_or_skip

# The bot: it leaves a directory closed to its own user in its workdir; its child leaves the session and forks
# a grandchild, then exits; the grandchild's parent is gone.
BOT = """
import os, sys, time
os.makedirs("closed/inner")
with open("closed/inner/file", "w") as file:
    file.write("x" * 100_000)
os.chmod("closed/inner", 0)
os.chmod("closed", 0)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", sys.argv[1], "grandchild"])
    os._exit(0)
time.sleep(600)
"""

ARENA = """
import json, sys, time
from pathlib import Path
from arena.sandbox import LaunchSpec, SandboxLevel, launch
from tests.conftest import find_processes

level, bot_dir, marker, freeze = sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4] == "freeze"
command = (sys.executable, str(bot_dir / "bot.py"), marker)
bot = launch(LaunchSpec(command=command, bot_dir=bot_dir, level=SandboxLevel(level)))
deadline = time.monotonic() + 10
while find_processes(marker + "\\0grandchild") == []:
    assert time.monotonic() < deadline, "the grandchild did not start"
    time.sleep(0.01)
if freeze:
    bot.clock.freeze()
left = {"cgroups": [str(path) for path in bot.clock.own_cgroups], "base": str(bot.workdir.parent)}
print(json.dumps(left), flush=True)
time.sleep(600)
"""


def kill_arena_with_a_bot(level: SandboxLevel, bot_dir: Path, marker: str, *, freeze: bool) -> dict[str, Any]:
    """Run the arena until its bot's grandchild runs, SIGKILL it; the bot's own cgroups and private folder."""
    if level is SandboxLevel.STRICT:
        strict_or_skip()
    (bot_dir / "bot.py").write_text(BOT)
    arena = subprocess.Popen(
        [sys.executable, "-c", ARENA, level.value, str(bot_dir), marker, "freeze" if freeze else "run"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
    )
    try:
        assert arena.stdout is not None
        line = arena.stdout.readline()
        assert line, "the arena ended before its bot was up"
    finally:
        arena.send_signal(signal.SIGKILL)
        arena.wait(DEADLINE_S)
    return json.loads(line)


def reap_orphans() -> None:
    """The test process is a subreaper (it probed strict): the killed arena's orphans die as its zombies, which
    would count against their bot UID's process limit for the next test. Reap them, as init would."""
    for pid in procfs.pids():
        info = procfs.stat(pid)
        if info is not None and info.ppid == os.getpid() and info.zombie:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)


@LIMITED_LEVELS
def test_an_arena_killed_outright_leaves_no_process_and_no_folder_of_its_bots(
    level: SandboxLevel, bot_dir: Path, marker: str
) -> None:
    left = kill_arena_with_a_bot(level, bot_dir, marker, freeze=False)
    poll_until(lambda: not find_processes(marker), what="every process of the killed arena's bot to end")
    reap_orphans()
    base = Path(left["base"])
    poll_until(lambda: not base.exists(), what=f"the bot's private folder {base} to be removed")


@LIMITED_LEVELS
def test_a_bot_frozen_off_its_turn_when_the_arena_is_killed_dies_and_leaves_no_cgroup(
    level: SandboxLevel, bot_dir: Path, marker: str
) -> None:
    cgroups = kill_arena_with_a_bot(level, bot_dir, marker, freeze=True)["cgroups"]
    poll_until(lambda: not find_processes(marker), what="every process of the frozen bot to end")
    reap_orphans()
    poll_until(lambda: not any(map(os.path.exists, cgroups)), what=f"the bot's cgroups {cgroups} to be removed")


def test_the_guardian_of_an_arena_that_ends_cleanly_ends_with_it(bot_dir: Path, marker: str) -> None:
    (bot_dir / "bot.py").write_text("print('done')\n")
    script = (
        "import sys; from pathlib import Path; from arena.sandbox import LaunchSpec, SandboxLevel, guardian, launch\n"
        "bot = launch(LaunchSpec(command=(sys.executable, sys.argv[1] + '/bot.py'), bot_dir=Path(sys.argv[1]),"
        " level=SandboxLevel.BASIC))\n"
        "bot.wait(10); bot.kill(); print(guardian.guardian_pid())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(bot_dir)], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    pid = int(result.stdout.split()[-1])
    deadline = time.monotonic() + DEADLINE_S
    while Path(f"/proc/{pid}/cmdline").exists() and b"guardian" in _cmdline(pid):
        if time.monotonic() > deadline:
            pytest.fail(f"the guardian {pid} outlived its arena by {DEADLINE_S} s")
        time.sleep(0.02)


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_bots_still_start_where_no_guardian_can(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def cannot_start() -> tuple[int, int]:
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(guardian, "_start", cannot_start)
    link = guardian._Link()
    link.send({"watch": "a-marker", "uid": None, "thaw": None, "cgroups": []})
    link.send({"forget": "a-marker"})
    warnings = [record.getMessage() for record in caplog.records if "no guardian" in record.getMessage()]
    assert warnings == [
        "sandbox: no guardian to kill the bots a killed arena leaves ([Errno 11] Resource temporarily unavailable)"
    ]

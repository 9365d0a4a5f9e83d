"""A bot's CPU clock counts all its processes, and its freezer stops them all (cpuclock.py), at every level."""

from __future__ import annotations

import time

import pytest

from arena.sandbox import SandboxLevel, cpuclock
from arena.sandbox.cpuclock import CgroupClock, TreeClock, V1Clock
from tests.sandbox.conftest import ALL_LEVELS, Bots, poll_until

SPIN_IN_TWO = """
import os
os.fork()
while True:
    pass
"""


@ALL_LEVELS
@pytest.mark.parametrize("kind", ["v2", "v1", "tree"])
def test_the_clock_counts_a_bots_processes_and_the_freezer_stops_and_restarts_them(
    bots: Bots, level: SandboxLevel, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if kind != "v2":
        monkeypatch.setattr(cpuclock, "for_memory_cgroup", lambda group: None)
    if kind == "v1":
        monkeypatch.setattr(cpuclock, "parent", cpuclock.find_v1)
    if kind == "tree":
        monkeypatch.setattr(cpuclock, "create", lambda: "no cgroup in this test")
    bot = bots.start(level, SPIN_IN_TWO)
    clock = bot.clock
    made = {CgroupClock: "v2", V1Clock: "v1", TreeClock: "tree"}[type(clock)]
    if made != kind:
        pytest.skip(f"no {kind} clock here")
    poll_until(lambda: clock.cpu_ns() > 200_000_000, what="the bot to use 0.2 s of CPU")
    clock.freeze()
    time.sleep(0.05)  # a stop takes effect at once, a freeze soon after
    frozen = clock.cpu_ns()
    time.sleep(0.3)
    assert clock.cpu_ns() - frozen < 30_000_000  # two spinning processes, 0.3 s; the tree's clock counts ticks
    clock.thaw()
    poll_until(lambda: clock.cpu_ns() > frozen + 200_000_000, what="the thawed bot to spin again")
    clock.freeze()
    bot.kill()  # frozen: it is killed and reaped all the same (the fixture checks that no child is left)
    assert bot.returncode() is not None
    if isinstance(clock, CgroupClock) and clock.owned:
        assert not clock.path.exists()
    if isinstance(clock, V1Clock):
        assert not clock.freezer.exists() and not clock.cpuacct.exists()

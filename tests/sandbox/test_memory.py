"""The memory limit counts what a bot uses, by either mechanism, and every bot's peak memory is measured."""

from __future__ import annotations

import logging
import os
import signal
import time
from pathlib import Path

import pytest

from arena.sandbox import Limits, MemoryMechanism, SandboxError, SandboxLevel, cgroups, procfs
from arena.sandbox.limits import data_limit
from tests.sandbox.conftest import ALL_LEVELS, DEADLINE_S, LIMITED_LEVELS, Bots, poll_until

MIB = 1024 * 1024
CGROUP, RLIMIT = MemoryMechanism.CGROUP, MemoryMechanism.RLIMIT
MECHANISMS = pytest.mark.parametrize("mechanism", [CGROUP, RLIMIT], ids=lambda mechanism: mechanism.value)


def limits(mechanism: MemoryMechanism, memory_mb: int) -> Limits:
    if mechanism is CGROUP:
        found = cgroups.hierarchy()
        if not isinstance(found, cgroups.Hierarchy):
            pytest.skip(f"no memory cgroup can be made here: {found}")
    return Limits(memory_mb=memory_mb, memory_mechanism=mechanism)


RESERVE_8_GB = """
import ctypes, mmap, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
PROT_NONE, MAP_NORESERVE = 0, 0x4000
# As a JVM reserves its heap and V8 its code range: address space, no access, nothing touched.
address = libc.mmap(None, 8 << 30, PROT_NONE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
if address in (None, ctypes.c_void_p(-1).value):
    sys.exit(f"reserving 8 GB failed: errno {ctypes.get_errno()}")
used = bytearray(50 << 20)  # bytearray zeroes it: 50 MB touched
"""


@LIMITED_LEVELS
@MECHANISMS
def test_address_space_reserved_but_not_used_does_not_count(
    bots: Bots, level: SandboxLevel, mechanism: MemoryMechanism
) -> None:
    bot = bots.start(level, RESERVE_8_GB, limits=limits(mechanism, 256))
    assert bot.wait(DEADLINE_S) == 0, bot.stderr_tail()


@LIMITED_LEVELS
@MECHANISMS
def test_touching_2_gb_at_a_512_mb_limit_is_a_limit_fault(
    bots: Bots, level: SandboxLevel, mechanism: MemoryMechanism
) -> None:
    bot = bots.start(level, "hoard = bytearray(2 << 30)  # zeroed, so touched\n", limits=limits(mechanism, 512))
    code = bot.wait(DEADLINE_S)
    if mechanism is CGROUP:  # the kernel kills it at the limit
        assert (code, bot.exit_fault()) == (-signal.SIGKILL, ("limit", "memory: used more than 512 MB"))
    elif data_limit(512) < 2 << 30:  # RLIMIT_DATA refuses the allocation
        assert (code, bot.exit_fault()) == (1, ("limit", "out of memory (limit 512 MB)"))
        assert "MemoryError" in bot.stderr_tail()
    else:  # a machine of 48 GB or more: RLIMIT_DATA allows it, the watch stops it as it touches the pages
        assert (code, bot.exit_fault()) == (-signal.SIGKILL, ("limit", "memory: used more than 512 MB"))


@LIMITED_LEVELS
def test_without_a_cgroup_an_allocation_past_the_data_limit_fails_at_once(bots: Bots, level: SandboxLevel) -> None:
    script = f"hoard = bytearray({data_limit(512) + (1 << 30)})\n"
    bot = bots.start(level, script, limits=limits(RLIMIT, 512))
    assert bot.wait(DEADLINE_S) == 1
    assert bot.exit_fault() == ("limit", "out of memory (limit 512 MB)")
    assert "MemoryError" in bot.stderr_tail()
    assert bot.peak_memory() < 512 * MIB  # refused before any of it was used


GROW_SHARED_MEMORY = """
import mmap, time
# Shared memory is not data: RLIMIT_DATA lets it grow; the cgroup, or the watch on resident memory, does not.
chunk = 16 << 20
hoard = []
while True:
    block = mmap.mmap(-1, chunk)
    for offset in range(0, chunk, 4096):
        block[offset] = 1
    hoard.append(block)
    time.sleep(0.02)
"""


@LIMITED_LEVELS
@MECHANISMS
def test_growing_resident_memory_slowly_past_the_limit_is_a_limit_fault(
    bots: Bots, level: SandboxLevel, mechanism: MemoryMechanism
) -> None:
    bot = bots.start(level, GROW_SHARED_MEMORY, limits=limits(mechanism, 256))
    assert bot.wait(DEADLINE_S) == -signal.SIGKILL
    assert bot.exit_fault() == ("limit", "memory: used more than 256 MB")
    assert bot.peak_memory() > 200 * MIB


PROCESSES_TOGETHER = """
import os, signal, sys, time
children = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        hoard = bytearray(120 << 20)  # each well within the limit on its own
        time.sleep(60)
        os._exit(0)
    children.append(pid)
pid, status = os.wait()
for child in children:
    os.kill(child, signal.SIGKILL)
sys.exit(f"child {pid} ended: {status}")
"""


@LIMITED_LEVELS
@MECHANISMS
def test_processes_over_the_limit_together_are_a_limit_fault(
    bots: Bots, level: SandboxLevel, mechanism: MemoryMechanism
) -> None:
    bot = bots.start(level, PROCESSES_TOGETHER, limits=limits(mechanism, 256))
    assert bot.wait(DEADLINE_S) is not None
    assert bot.exit_fault() == ("limit", "memory: used more than 256 MB")


USE_100_MB = """
import time
hoard = bytearray(100 << 20)  # zeroed: touched
report("main")
time.sleep(60)
"""


@ALL_LEVELS
@MECHANISMS
def test_peak_memory_is_measured_while_the_bot_runs_and_kept_after(
    bots: Bots, level: SandboxLevel, mechanism: MemoryMechanism
) -> None:
    bot = bots.start(level, USE_100_MB, limits=limits(mechanism, 256))
    bots.reported(bot, "main")
    poll_until(lambda: bot.peak_memory() >= 100 * MIB, what="a peak of 100 MB")
    bot.kill()
    assert 100 * MIB <= bot.peak_memory() < 256 * MIB


def test_a_bot_at_level_none_is_measured_but_never_stopped(bots: Bots) -> None:
    bot = bots.start(SandboxLevel.NONE, "hoard = bytearray(100 << 20)\n", limits=Limits(memory_mb=64))
    assert bot.wait(DEADLINE_S) == 0
    bot.kill()
    assert bot.peak_memory() >= 100 * MIB


def _memory_cgroup(pid: int) -> Path:
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        hierarchy = cgroups.hierarchy()
        assert isinstance(hierarchy, cgroups.Hierarchy)
        if (hierarchy.version == 1 and "memory" in controllers.split(",")) or (
            hierarchy.version == 2 and not controllers
        ):
            return hierarchy.parent / Path(path).name
    raise AssertionError(f"pid {pid} is in no memory cgroup")


@LIMITED_LEVELS
def test_each_bot_process_has_a_cgroup_of_its_own_which_goes_with_it(bots: Bots, level: SandboxLevel) -> None:
    first = bots.start(level, USE_100_MB, limits=limits(CGROUP, 300))
    second = bots.start(level, USE_100_MB, limits=limits(CGROUP, 300), name="other.py")
    bots.reported(first, "main")
    group = _memory_cgroup(first.pid)
    assert group.name.startswith(cgroups.PREFIX) and group.is_dir()
    assert group != _memory_cgroup(second.pid)
    hierarchy = cgroups.hierarchy()
    assert isinstance(hierarchy, cgroups.Hierarchy)
    limit_file = "memory.max" if hierarchy.version == 2 else "memory.limit_in_bytes"
    assert int((group / limit_file).read_text()) == 300 * MIB
    assert first.pid in [int(pid) for pid in (group / "cgroup.procs").read_text().split()]
    first.kill()
    assert not group.exists()


def test_without_cgroups_auto_falls_back_to_rlimit_and_says_why(
    bots: Bots, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # A machine where no cgroup can be made: the arena's view of it, the only thing not real here.
    problem = f"no cgroup for test {os.getpid()}"
    monkeypatch.setattr(cgroups, "hierarchy", lambda: problem)
    with caplog.at_level(logging.WARNING):
        script = f"hoard = bytearray({data_limit(512) + (1 << 30)})\n"
        bot = bots.start(SandboxLevel.BASIC, script, limits=Limits(memory_mb=512))
    assert bot.limits.memory_mechanism is RLIMIT
    assert any(problem in record.getMessage() and "RLIMIT_DATA" in record.getMessage() for record in caplog.records)
    assert bot.wait(DEADLINE_S) == 1
    assert bot.exit_fault() == ("limit", "out of memory (limit 512 MB)")


def test_asking_for_cgroups_where_there_are_none_is_an_error(bots: Bots, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cgroups, "hierarchy", lambda: "no cgroup v1 memory controller mounted")
    with pytest.raises(SandboxError, match="memory_mechanism is cgroup, but no cgroup v1 memory controller mounted"):
        bots.start(SandboxLevel.BASIC, "pass\n", limits=Limits(memory_mechanism=CGROUP))


HOLD_300_MB = """
import time
hoard = bytearray(300 << 20)  # within RLIMIT_DATA (memory_mb and a share of the machine): for the watch to stop
print("held", flush=True)
time.sleep(4)
"""


@LIMITED_LEVELS
def test_a_machine_busy_with_other_work_does_not_slow_the_memory_watch(
    bots: Bots, level: SandboxLevel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each look waits a third of a second for a core, as on a loaded machine: the watch still looks often enough to
    stop a bot that holds five times its limit for four seconds (it backed off by the time a look took, and waited
    six seconds between looks)."""
    table = procfs.table

    def waiting_for_a_core() -> dict[int, procfs.ProcStat]:
        time.sleep(0.3)
        return table()

    monkeypatch.setattr(procfs, "table", waiting_for_a_core)
    bot = bots.start(level, HOLD_300_MB, limits=limits(RLIMIT, 64))
    assert bot.wait(DEADLINE_S) == -signal.SIGKILL, bot.stderr_tail()
    assert bot.exit_fault() == ("limit", "memory: used more than 64 MB")

"""Finding where bot cgroups go, from /proc/self/cgroup and /proc/self/mountinfo as hosts write them."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from arena.sandbox.cgroups import PREFIX, STALE_AFTER_S, Hierarchy, candidates, own_cgroups, remove_stale

HYBRID_CGROUP = """9:name=systemd:/
4:memory:/process_api/5787
1:cpu,cpuacct:/
0::/
"""
HYBRID_MOUNTS = """30 25 0:26 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
31 30 0:27 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
34 30 0:30 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 30 0:36 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
UNIFIED_CGROUP = "0::/user.slice/user-1000.slice/session-2.scope\n"
UNIFIED_MOUNTS = "35 24 0:30 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n"


def test_a_host_with_both_hierarchies_offers_v2_first_then_the_v1_memory_controller() -> None:
    assert own_cgroups(HYBRID_CGROUP) == {
        "name=systemd": "/",
        "memory": "/process_api/5787",
        "cpu": "/",
        "cpuacct": "/",
        "": "/",
    }
    assert candidates(HYBRID_CGROUP, HYBRID_MOUNTS) == [
        Hierarchy(2, Path("/sys/fs/cgroup/unified")),
        Hierarchy(1, Path("/sys/fs/cgroup/memory/process_api/5787")),
    ]


def test_a_v2_only_host_offers_the_arenas_own_cgroup() -> None:
    assert candidates(UNIFIED_CGROUP, UNIFIED_MOUNTS) == [
        Hierarchy(2, Path("/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope"))
    ]


def test_a_mount_of_part_of_a_hierarchy_is_followed_and_one_elsewhere_is_not_used() -> None:
    # A container shown only its own part of the host's hierarchy (and a mount point with a space in it).
    mounts = "50 40 0:30 /docker/abc /sys/fs/cgroup/my\\040memory ro - cgroup cgroup rw,memory\n"
    assert candidates("5:memory:/docker/abc/bots\n", mounts) == [Hierarchy(1, Path("/sys/fs/cgroup/my memory/bots"))]
    assert candidates("5:memory:/docker/other\n", mounts) == []
    assert candidates("5:memory:/docker/abcdef\n", mounts) == []


def test_no_memory_controller_means_no_candidate() -> None:
    mounts = "31 30 0:27 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
    assert candidates("2:cpu:/\n", mounts) == []


def test_leftovers_of_dead_arenas_are_removed_and_nothing_else(tmp_path: Path) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()  # a pid no process has now
    old = time.time() - STALE_AFTER_S - 5
    names = {
        "dead-old": f"{PREFIX}{dead.pid}-1",
        "dead-young": f"{PREFIX}{dead.pid}-2",
        "alive-old": f"{PREFIX}{os.getpid()}-1",
        "someone-else": "system.slice",
    }
    for key, name in names.items():
        (tmp_path / name).mkdir()
        if key != "dead-young":
            os.utime(tmp_path / name, (old, old))
    busy = tmp_path / f"{PREFIX}{dead.pid}-3"
    (busy / "inside").mkdir(parents=True)  # not empty: rmdir fails, as for a cgroup still holding a process
    os.utime(busy, (old, old))
    remove_stale(tmp_path)
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        [names["dead-young"], names["alive-old"], names["someone-else"], busy.name]
    )
    shutil.rmtree(busy)

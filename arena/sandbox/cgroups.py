"""Memory cgroups for bot processes: one per process, made under the arena's own cgroup, removed once it is gone.

A cgroup's limit counts what its processes use (their resident memory, the file pages they are the first to
read, kernel memory spent on them), never the address space they reserve: a JVM or V8 reserves gigabytes it
never touches. Two kinds of hosts:
- cgroup v2: memory.max, memory.swap.max = 0 and memory.oom.group = 1 (an OOM kill takes the whole bot).
  The arena's own cgroup must give the memory controller to its children (its cgroup.subtree_control); the
  kernel allows that only where the cgroup holds no process itself or is the root, so a delegated subtree in
  which the arena runs does not usually qualify: then v1 is tried, then the caller falls back.
- cgroup v1 (the memory controller mounted on its own): memory.limit_in_bytes, and memory.memsw.limit_in_bytes
  at the same value where swap is accounted, so that swapping cannot stretch the limit.

The bot's process joins its cgroup before exec (bootstrap.py writes "0", itself, to cgroup.procs), so
every process the bot starts is in it from the first instruction. The cgroup is removed after the bot is
gone; an arena that died leaves empty cgroups named after its pid, which the next arena here removes.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import logging
import os
import re
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

log = logging.getLogger(__name__)

PREFIX = "arena-bot-"
STALE_AFTER_S = 60.0
"""A leftover cgroup of a dead arena is removed only when this old: never one another arena is just setting up."""
POLL_S = 0.005

_names = itertools.count(1)


@dataclass(frozen=True, slots=True)
class Hierarchy:
    """Where bot cgroups are made: the arena's own cgroup, in the v1 memory hierarchy or in the v2 one."""

    version: int
    parent: Path


def own_cgroups(text: str) -> dict[str, str]:
    """/proc/self/cgroup as {controller: path}; the v2 hierarchy's path is under the key ""."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        for controller in controllers.split(",") if controllers else [""]:
            found.setdefault(controller, path)
    return found


@dataclass(frozen=True, slots=True)
class Mount:
    fstype: str
    root: str  # the path, inside its hierarchy, of the cgroup mounted here
    point: Path
    options: frozenset[str]  # the super options: the controllers of a v1 hierarchy


def _unescape(field: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda match: chr(int(match.group(1), 8)), field)


def cgroup_mounts(text: str) -> list[Mount]:
    """The cgroup and cgroup2 mounts of /proc/self/mountinfo."""
    mounts = []
    for line in text.splitlines():
        before, separator, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if not separator or len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        mounts.append(Mount(tail[0], _unescape(fields[3]), Path(_unescape(fields[4])), frozenset(tail[2].split(","))))
    return mounts


def directory_of(mounts: list[Mount], path: str) -> Path | None:
    """The directory of the cgroup at path through the first of mounts that shows it."""
    for mount in mounts:
        if path == mount.root or path.startswith(mount.root.rstrip("/") + "/"):
            return mount.point / os.path.relpath(path, mount.root)
    return None


def candidates(proc_cgroup: str, mountinfo: str) -> list[Hierarchy]:
    """The arena's own cgroup in each hierarchy that could hold a memory limit: v2 first, then v1."""
    own = own_cgroups(proc_cgroup)
    mounts = cgroup_mounts(mountinfo)
    found = []
    if "" in own:
        directory = directory_of([m for m in mounts if m.fstype == "cgroup2"], own[""])
        if directory is not None:
            found.append(Hierarchy(2, directory))
    if "memory" in own:
        directory = directory_of([m for m in mounts if m.fstype == "cgroup" and "memory" in m.options], own["memory"])
        if directory is not None:
            found.append(Hierarchy(1, directory))
    return found


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def _write(path: Path, value: str) -> None:
    with open(path, "w") as stream:
        stream.write(value)


def _usable(hierarchy: Hierarchy) -> str | None:
    """None if bot cgroups with a memory limit can be made in hierarchy.parent, else why not."""
    parent = hierarchy.parent
    if hierarchy.version == 2:
        if "memory" not in (_read(parent / "cgroup.controllers") or "").split():
            return f"cgroup v2: no memory controller in {parent}"
        if "memory" not in (_read(parent / "cgroup.subtree_control") or "").split():
            try:
                _write(parent / "cgroup.subtree_control", "+memory")
            except OSError as error:
                return f"cgroup v2: {parent} cannot give the memory controller to its children ({error.strerror})"
    probe = parent / f"{PREFIX}{os.getpid()}-probe"
    try:
        probe.mkdir()
    except FileExistsError:
        pass
    except OSError as error:
        return f"cgroup v{hierarchy.version}: cannot create a cgroup in {parent} ({error.strerror})"
    try:
        limit = "memory.max" if hierarchy.version == 2 else "memory.limit_in_bytes"
        if not (probe / limit).exists():
            return f"cgroup v{hierarchy.version}: a cgroup made in {parent} has no {limit}"
    finally:
        with contextlib.suppress(OSError):
            probe.rmdir()
    return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale(parent: Path, prefix: str = PREFIX) -> None:
    """Remove the empty cgroups named prefix + pid that arenas no longer alive left in parent."""
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return
    now = time.time()
    for entry in entries:
        match = re.fullmatch(re.escape(prefix) + r"(\d+)-.*", entry.name)
        if match is None or not entry.is_dir(follow_symlinks=False) or _alive(int(match.group(1))):
            continue
        with contextlib.suppress(OSError):
            if now - entry.stat(follow_symlinks=False).st_mtime >= STALE_AFTER_S:
                os.rmdir(entry.path)  # fails, harmlessly, while a process is still in it


T = TypeVar("T")


def once_per_process(find: Callable[[], T]) -> Callable[[], T]:
    """find(), called once per process (a forked child looks again, its cgroup may differ), then remembered."""
    lock = threading.Lock()
    found: dict[int, T] = {}

    def remembered() -> T:
        with lock:
            if os.getpid() not in found:
                found[os.getpid()] = find()
            return found[os.getpid()]

    return remembered


@once_per_process
def hierarchy() -> Hierarchy | str:
    """Where this process makes bot cgroups, or why it cannot."""
    found = _find()
    if isinstance(found, Hierarchy):
        remove_stale(found.parent)
    return found


def _find() -> Hierarchy | str:
    proc_cgroup, mountinfo = _read(Path("/proc/self/cgroup")), _read(Path("/proc/self/mountinfo"))
    if proc_cgroup is None or mountinfo is None:
        return "no /proc/self/cgroup"
    problems = []
    for candidate in candidates(proc_cgroup, mountinfo):
        problem = _usable(candidate)
        if problem is None:
            return candidate
        problems.append(problem)
    return "; ".join(problems) or "no cgroup hierarchy with a memory controller is mounted"


class BotCgroup:
    """The cgroup of one bot process, with its memory limit: made before the process starts."""

    def __init__(self, hierarchy: Hierarchy, path: Path, limit_bytes: int) -> None:
        self.hierarchy = hierarchy
        self.path = path
        self.limit_bytes = limit_bytes
        self._peak = 0  # v2 without memory.peak: the highest memory.current seen

    def __repr__(self) -> str:
        return f"<BotCgroup v{self.hierarchy.version} {self.path}>"

    @classmethod
    def create(cls, hierarchy: Hierarchy, limit_bytes: int) -> BotCgroup:
        """A new cgroup with limit_bytes of memory and no swap; OSError if it cannot be made."""
        path = hierarchy.parent / f"{PREFIX}{os.getpid()}-{next(_names)}"
        path.mkdir()
        group = cls(hierarchy, path, limit_bytes)
        try:
            if hierarchy.version == 2:
                _write(path / "memory.max", str(limit_bytes))
                group._write_if_there("memory.swap.max", "0")
                group._write_if_there("memory.oom.group", "1")
            else:
                _write(path / "memory.limit_in_bytes", str(limit_bytes))
                if not group._write_if_there("memory.memsw.limit_in_bytes", str(limit_bytes)):
                    group._write_if_there("memory.swappiness", "0")  # swap is not accounted: keep out of it
        except OSError:
            group.remove(1.0)
            raise
        return group

    def _write_if_there(self, name: str, value: str) -> bool:
        if not (self.path / name).exists():
            return False
        _write(self.path / name, value)
        return True

    @property
    def procs_file(self) -> bytes:
        """The file a process writes "0" to to join (the child does, between fork and exec)."""
        return os.fsencode(self.path / "cgroup.procs")

    def _number(self, name: str) -> int | None:
        text = _read(self.path / name)
        try:
            return None if text is None else int(text.split()[0])
        except (IndexError, ValueError):
            return None

    def _counters(self, name: str) -> dict[str, int]:
        """A flat keyed file (memory.events, memory.oom_control) as {key: number}."""
        counters = {}
        for line in (_read(self.path / name) or "").splitlines():
            key, _, value = line.partition(" ")
            if value.strip().isdigit():
                counters[key] = int(value)
        return counters

    def peak_bytes(self) -> int:
        """The most memory the bot's processes have used together so far (the kernel's own high-water mark)."""
        if self.hierarchy.version == 2:
            peak = self._number("memory.peak")
            if peak is None:
                peak = max(self._peak, self._number("memory.current") or 0)
        else:
            peak = self._number("memory.memsw.max_usage_in_bytes") or self._number("memory.max_usage_in_bytes") or 0
        self._peak = max(self._peak, peak)
        return self._peak

    def hit_limit(self) -> bool:
        """Whether the kernel killed a process of this cgroup for memory (or, on a kernel too old to count its
        OOM kills, whether the usage ever ran into the limit)."""
        if self.hierarchy.version == 2:
            events = self._counters("memory.events")
            if "oom_kill" in events:
                return events["oom_kill"] > 0 or events.get("oom_group_kill", 0) > 0
            return events.get("max", 0) > 0
        control = self._counters("memory.oom_control")
        if "oom_kill" in control:
            return control["oom_kill"] > 0
        return (self._number("memory.memsw.failcnt") or 0) > 0 or (self._number("memory.failcnt") or 0) > 0

    def pids(self) -> list[int]:
        text = _read(self.path / "cgroup.procs") or ""
        return [int(line) for line in text.split() if line.isdigit()]

    def remove(self, timeout: float) -> bool:
        """Kill whatever is still in the cgroup and remove it; False (logged) if it is still busy at the deadline."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                os.rmdir(self.path)
                return True
            except FileNotFoundError:
                return True
            except OSError as error:
                if error.errno != errno.EBUSY:
                    log.error("sandbox: cannot remove cgroup %s: %s", self.path, error.strerror)
                    return False
            if time.monotonic() >= deadline:
                log.error("sandbox: cgroup %s is still busy (processes %s); left in place", self.path, self.pids())
                return False
            self._kill_all()
            time.sleep(POLL_S)

    def _kill_all(self) -> None:
        """SIGKILL every process still in the cgroup (one that escaped every other net)."""
        pids = self.pids()
        if self.hierarchy.version == 2 and pids:
            with contextlib.suppress(OSError):
                _write(self.path / "cgroup.kill", "1")
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

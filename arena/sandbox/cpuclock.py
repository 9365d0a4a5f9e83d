"""A bot's CPU clock and its freezer: how much CPU time all its processes have used, and stopping them all.

The arena charges each reply with the CPU time the bot's processes used since the request (not the wall
time, which another process on the machine can stretch), and freezes a bot while it is not on turn, so
that whatever it does with CPU, on its turn or off it, costs the other bots nothing. Two kinds:

- CgroupClock: a cgroup v2 of the bot's own (the bot's memory cgroup itself, where that is a v2 one: a process
  is in one v2 cgroup only). Its cpu.stat counts every process in it, those that left the bot's process
  tree too, in microseconds; cgroup.freeze stops all of them, and nothing inside can undo it. The bot's
  process joins it before exec (bootstrap.py), as it joins its memory cgroup.
- V1Clock, where there is no usable v2 hierarchy: the same with a cgroup of the bot's own in each of the v1
  freezer and cpuacct hierarchies (freezer.state, cpuacct.usage in nanoseconds).
- TreeClock, where no v2 cgroup can be made: the CPU time of the bot's live process tree, read from /proc
  (in clock ticks), and SIGSTOP / SIGCONT of each process of the tree. A process that left the tree is
  neither counted nor stopped, and could continue the others: the off-turn bound (see BotHost) catches that.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import logging
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from arena.sandbox import cgroups, procfs

log = logging.getLogger(__name__)

PREFIX = "arena-cpu-"
STOP_ROUNDS = 5
"""How often a tree is walked again for processes born while it was being stopped."""
POLL_S = 0.005

_names = itertools.count(1)


class CpuClock:
    """The CPU time a bot's processes have used, and a freezer for all of them."""

    kind = ""

    def cpu_ns(self) -> int:
        """CPU nanoseconds the bot's processes have used so far (only the differences matter)."""
        raise NotImplementedError

    def freeze(self) -> None:
        raise NotImplementedError

    def thaw(self) -> None:
        raise NotImplementedError

    def remove(self, timeout: float) -> None:
        """After the bot is killed: release what the clock holds."""

    @property
    def thawing(self) -> tuple[Path, bytes] | None:
        """The file to write, and what, to thaw the bot: for the guardian of an arena that dies."""
        return None

    @property
    def own_cgroups(self) -> tuple[Path, ...]:
        """The cgroups made for the clock alone."""
        return ()


class _FreezerFile(CpuClock):
    """A clock frozen and thawed by writing a cgroup file (what to write, and where, say the subclasses)."""

    kind = "cgroup"
    FROZEN, THAWED = b"1", b"0"
    frozen = False
    freezer_file: Path

    def _write(self, value: bytes) -> None:
        with contextlib.suppress(FileNotFoundError):  # removed: the bot is gone
            fd = os.open(self.freezer_file, os.O_WRONLY)
            try:
                os.write(fd, value)
            finally:
                os.close(fd)

    def freeze(self) -> None:
        if not self.frozen:
            self._write(self.FROZEN)
            self.frozen = True

    def thaw(self) -> None:
        if self.frozen:
            self._write(self.THAWED)
            self.frozen = False

    @property
    def thawing(self) -> tuple[Path, bytes]:
        return self.freezer_file, self.THAWED


class CgroupClock(_FreezerFile):
    """A cgroup v2 directory: cpu.stat's usage_usec, cgroup.freeze."""

    def __init__(self, path: Path, owned: bool) -> None:
        self.path = path
        self.owned = owned
        """Made for the clock alone (else it is the bot's memory cgroup, which BotCgroup removes)."""
        self._stat = os.fsencode(path / "cpu.stat")
        self.freezer_file = path / "cgroup.freeze"

    def __repr__(self) -> str:
        return f"<CgroupClock {self.path}>"

    @property
    def procs_files(self) -> tuple[bytes, ...]:
        """What the bot's child joins before exec: nothing more where the clock is the memory cgroup."""
        return (os.fsencode(self.path / "cgroup.procs"),) if self.owned else ()

    def cpu_ns(self) -> int:
        try:
            fd = os.open(self._stat, os.O_RDONLY)
        except OSError:
            return 0  # removed: the bot is gone
        try:
            text = os.read(fd, 4096)
        finally:
            os.close(fd)
        first = text.split(b"\n", 1)[0]  # "usage_usec N" comes first
        if first.startswith(b"usage_usec "):
            return int(first.split()[1]) * 1000
        for line in text.splitlines():
            if line.startswith(b"usage_usec "):
                return int(line.split()[1]) * 1000
        return 0

    def remove(self, timeout: float) -> None:
        self.thaw()
        if self.owned:
            _remove(self.path, timeout)

    @property
    def own_cgroups(self) -> tuple[Path, ...]:
        return (self.path,) if self.owned else ()


class V1Clock(_FreezerFile):
    """A cgroup in each of the v1 freezer and cpuacct hierarchies."""

    FROZEN, THAWED = b"FROZEN", b"THAWED"  # a frozen v1 process does not even die before it is thawed

    def __init__(self, freezer: Path, cpuacct: Path) -> None:
        self.freezer = freezer
        self.cpuacct = cpuacct
        self.owned = True
        self._usage = os.fsencode(cpuacct / "cpuacct.usage")
        self.freezer_file = freezer / "freezer.state"

    def __repr__(self) -> str:
        return f"<V1Clock {self.freezer} {self.cpuacct}>"

    @property
    def procs_files(self) -> tuple[bytes, ...]:
        return (os.fsencode(self.freezer / "cgroup.procs"), os.fsencode(self.cpuacct / "cgroup.procs"))

    def cpu_ns(self) -> int:
        try:
            fd = os.open(self._usage, os.O_RDONLY)
        except OSError:
            return 0
        try:
            return int(os.read(fd, 64) or b"0")
        except ValueError:
            return 0
        finally:
            os.close(fd)

    def remove(self, timeout: float) -> None:
        self.thaw()
        for path in self.own_cgroups:
            _remove(path, timeout)

    @property
    def own_cgroups(self) -> tuple[Path, ...]:
        return (self.freezer, self.cpuacct)


def _remove(path: Path, timeout: float) -> None:
    """Remove a bot's clock cgroup; whatever is still in it is killed first."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError as error:
            if error.errno != errno.EBUSY or time.monotonic() >= deadline:
                log.error("sandbox: cannot remove cgroup %s: %s", path, error.strerror)
                return
        with contextlib.suppress(OSError), open(path / "cgroup.kill", "w") as stream:
            stream.write("1")  # v2 only
        with contextlib.suppress(OSError):
            for pid in (path / "cgroup.procs").read_text().split():
                with contextlib.suppress(ProcessLookupError, PermissionError, ValueError):
                    os.kill(int(pid), signal.SIGKILL)
        time.sleep(POLL_S)


class TreeClock(CpuClock):
    """The bot's live process tree, walked through /proc/PID/task/TID/children."""

    kind = "tree"

    def __init__(self, root: int) -> None:
        self.root = root
        self.frozen = False
        self._stopped: list[tuple[int, int]] = []  # (pid, start time) of the processes SIGSTOPped
        self._ticks_ns = 1_000_000_000 // os.sysconf("SC_CLK_TCK")

    def _tree(self) -> list[procfs.ProcStat]:
        found: list[procfs.ProcStat] = []
        todo = [self.root]
        seen: set[int] = set()
        while todo:
            pid = todo.pop()
            if pid in seen:
                continue
            seen.add(pid)
            entry = procfs.stat(pid)
            if entry is None:
                continue
            found.append(entry)
            todo.extend(_children(pid))
        return found

    def cpu_ns(self) -> int:
        return sum(entry.cpu_ticks for entry in self._tree()) * self._ticks_ns

    def freeze(self) -> None:
        if self.frozen:
            return
        self.frozen = True
        stopped: dict[int, int] = {}
        for _ in range(STOP_ROUNDS):
            fresh = [entry for entry in self._tree() if entry.pid not in stopped and not entry.zombie]
            if not fresh:
                break
            for entry in fresh:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(entry.pid, signal.SIGSTOP)
                stopped[entry.pid] = entry.start
        self._stopped = list(stopped.items())

    def thaw(self) -> None:
        if not self.frozen:
            return
        self.frozen = False
        for pid, start in self._stopped:
            entry = procfs.stat(pid)
            if entry is not None and entry.start == start:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGCONT)
        self._stopped = []


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as stream:
                found.extend(int(child) for child in stream.read().split())
        except (OSError, ValueError):
            continue
    return found


@dataclass(frozen=True, slots=True)
class Parents:
    """Where bots' clock cgroups are made: the arena's own cgroup v2, or its own v1 freezer and cpuacct cgroups."""

    version: int
    directories: tuple[Path, ...]


@cgroups.once_per_process
def parent() -> Parents | str:
    """Where this process makes bots' clock cgroups, or why it cannot."""
    found = _find()
    if isinstance(found, Parents):
        for directory in found.directories:
            cgroups.remove_stale(directory, PREFIX)
    return found


def _find() -> Parents | str:
    v2 = find_v2()
    if isinstance(v2, Parents):
        return v2
    v1 = find_v1()
    return v1 if isinstance(v1, Parents) else f"{v2}; {v1}"


def _own() -> tuple[dict[str, str], list[cgroups.Mount]] | str:
    try:
        proc_cgroup = Path("/proc/self/cgroup").read_text()
        mountinfo = Path("/proc/self/mountinfo").read_text()
    except OSError:
        return "no /proc/self/cgroup"
    return cgroups.own_cgroups(proc_cgroup), cgroups.cgroup_mounts(mountinfo)


def find_v2() -> Parents | str:
    """The arena's own cgroup v2, if a bot's clock cgroup can be made in it."""
    found = _own()
    if isinstance(found, str):
        return found
    own, mounts = found
    v2 = [mount for mount in mounts if mount.fstype == "cgroup2"]
    directory = cgroups.directory_of(v2, own[""]) if "" in own else None
    if directory is None:
        return "no cgroup v2 hierarchy is mounted"
    problem = _usable(directory, ("cgroup.freeze", "cpu.stat"))
    return Parents(2, (directory,)) if problem is None else problem


def find_v1() -> Parents | str:
    """The arena's own v1 freezer and cpuacct cgroups, if a bot's clock cgroups can be made in them."""
    found = _own()
    if isinstance(found, str):
        return found
    own, mounts = found
    directories = []
    for controller, wanted in (("freezer", "freezer.state"), ("cpuacct", "cpuacct.usage")):
        v1 = [mount for mount in mounts if mount.fstype == "cgroup" and controller in mount.options]
        directory = cgroups.directory_of(v1, own[controller]) if controller in own else None
        if directory is None:
            return f"no cgroup v1 {controller} hierarchy is mounted"
        problem = _usable(directory, (wanted,))
        if problem is not None:
            return problem
        directories.append(directory)
    return Parents(1, tuple(directories))


def _usable(directory: Path, files: tuple[str, ...]) -> str | None:
    """None if a cgroup made in directory has those files and a process can join it, else why not."""
    probe = directory / f"{PREFIX}{os.getpid()}-probe"
    try:
        probe.mkdir(exist_ok=True)
    except OSError as error:
        return f"cannot create a cgroup in {directory} ({error.strerror})"
    try:
        missing = [name for name in files if not (probe / name).exists()]
        if missing:
            return f"a cgroup made in {directory} has no {', '.join(missing)}"
        problem = _joinable(probe)
        if problem is not None:
            return f"a process cannot join a cgroup made in {directory} ({problem})"
    finally:
        with contextlib.suppress(OSError):
            probe.rmdir()
    return None


def _joinable(probe: Path) -> str | None:
    """Can a process of the arena's join the probe? A child moved there tells (the kernel can refuse it: a v2
    cgroup whose parent gives controllers to its children may hold no process besides them)."""
    sleep = shutil.which("sleep")
    if sleep is None:
        return None  # nothing to try it with: a bot's start says so if it cannot
    child = subprocess.Popen([sleep, "10"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        with open(probe / "cgroup.procs", "w") as stream:
            stream.write(str(child.pid))
    except OSError as error:
        return error.strerror or str(error)
    finally:
        child.kill()
        child.wait()
    return None


def for_memory_cgroup(group: cgroups.BotCgroup | None) -> CgroupClock | None:
    """The bot's memory cgroup, where it is a v2 one: the clock's cgroup too."""
    if group is not None and group.hierarchy.version == 2:
        return CgroupClock(group.path, owned=False)
    return None


def create() -> CgroupClock | V1Clock | str:
    """New cgroups for one bot's clock, or why none can be made here."""
    found = parent()
    if isinstance(found, str):
        return found
    name = f"{PREFIX}{os.getpid()}-{next(_names)}"
    made: list[Path] = []
    for directory in found.directories:
        try:
            (directory / name).mkdir()
        except OSError as error:
            for path in made:
                _remove(path, 1.0)
            return f"cannot create a cgroup in {directory} ({error.strerror})"
        made.append(directory / name)
    if found.version == 2:
        return CgroupClock(made[0], owned=True)
    return V1Clock(made[0], made[1])

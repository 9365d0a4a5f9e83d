"""Telling why a bot process ended: a resource limit the arena can recognise, or a crash.

The detail is written for the bot's author: what happened and, for a limit, which one and how much.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass

from arena.sandbox.spec import Limits, SandboxLevel

MEMORY_MARKERS = (
    b"MemoryError",  # Python
    b"Cannot allocate memory",  # ENOMEM, as C's strerror says it
    b"std::bad_alloc",  # C++
    b"out of memory",  # Go, Node.js ("JavaScript heap out of memory"), Rust, many C programs
    b"OutOfMemory",  # Java's OutOfMemoryError, .NET's OutOfMemoryException
    b"insufficient memory",  # the JVM, when it cannot commit memory it reserved
    b"Fatal process OOM",  # V8
)
# Python ignores SIGXFSZ, so a Python bot sees EFBIG ("File too large") instead of being killed.
FILE_SIZE_MARKERS = (b"File too large",)
DISK_FULL_MARKERS = (b"No space left on device",)  # ENOSPC: the bot's space is full (disk.py)


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def returncode_from_status(status: int, level: SandboxLevel, *, init: bool = False) -> int:
    """Popen's convention: the exit status, or -N for a process killed by signal N.

    bwrap, and bootstrap.py as the init of a basic bot's PID namespace (init), report a bot killed by signal N as
    their own exit status 128 + N; that is translated too (a bot exiting with such a status of its own accord is
    indistinguishable).
    """
    code = os.waitstatus_to_exitcode(status)
    if (level is SandboxLevel.STRICT or init) and 128 < code < 128 + signal.NSIG:
        return -(code - 128)
    return code


@dataclass(frozen=True, slots=True)
class Ending:
    """What is known about a finished bot process."""

    returncode: int
    level: SandboxLevel
    limits: Limits
    cpu_seconds: float
    killed_by_arena: bool
    memory_marker: bool  # stderr shows an allocation failure
    file_size_marker: bool  # stderr shows EFBIG
    memory_exceeded: bool  # the kernel (in the bot's cgroup) or the arena's memory watch stopped it for memory
    disk_fault: str | None = None  # the disk watch stopped it, for this reason
    disk_full_marker: bool = False  # stderr shows ENOSPC


def classify(ending: Ending) -> tuple[str, str]:
    """("limit", detail) when a resource limit stopped the process, else ("crash", detail)."""
    code, limits = ending.returncode, ending.limits
    signum = -code if code < 0 else None
    cpu = f"stopped by the CPU time limit ({limits.cpu_s} s)"
    size = f"stopped by the file size limit ({limits.file_size_mb} MB)"
    memory = f"out of memory (limit {limits.memory_mb} MB)"
    if ending.level is not SandboxLevel.NONE and ending.memory_exceeded and code != 0:
        return ("limit", f"memory: used more than {limits.memory_mb} MB")
    if ending.level is not SandboxLevel.NONE and ending.disk_fault is not None and code != 0:
        return ("limit", ending.disk_fault)
    if signum == signal.SIGKILL and ending.killed_by_arena:
        return ("crash", "killed by the arena")
    if ending.level is not SandboxLevel.NONE:
        if signum == signal.SIGXCPU:
            return ("limit", cpu)
        if signum == signal.SIGXFSZ:
            return ("limit", size)
        if signum == signal.SIGKILL and ending.cpu_seconds >= limits.cpu_s:
            return ("limit", cpu)
        if code != 0 and ending.memory_marker:
            return ("limit", memory)
        if code != 0 and ending.file_size_marker:
            return ("limit", size)
        if code != 0 and ending.disk_full_marker:
            return ("limit", f"disk: its {limits.disk_mb} MB were full (No space left on device)")
    if signum is not None:
        return ("crash", f"killed by {signal_name(signum)}")
    return ("crash", f"exited with status {code}")

"""Turning Limits into the rlimits a bot process is started with."""

from __future__ import annotations

import os
import resource

from arena.sandbox import procfs
from arena.sandbox.spec import Limits, MemoryMechanism

MIB = 1024 * 1024

Rlimit = tuple[int, int, int]  # (resource, soft, hard)


def _clamp(which: int, soft: int, hard: int) -> Rlimit:
    """Never ask for more than the arena's own hard limit: the child may no longer be allowed to raise it."""
    _, current_hard = resource.getrlimit(which)
    if current_hard != resource.RLIM_INFINITY:
        hard = min(hard, current_hard)
        soft = min(soft, hard)
    return (which, soft, hard)


def rlimits(limits: Limits, *, own_uid: bool) -> tuple[Rlimit, ...]:
    """The rlimits of one bot process (and of bwrap, which passes them on to the bot).

    RLIMIT_NPROC counts every task of a user. With a UID of its own the count is the bot's alone. Without one
    (the arena does not run as root) the bot shares the arena user's count, so its limit is set to that count
    now plus limits.processes: the bot may start that many more, but concurrent bots share the headroom.

    Memory is limited here only when no cgroup holds it (any mechanism but CGROUP), and then by RLIMIT_DATA: the
    private writable memory a process has mapped, touched or not. Address space merely reserved (PROT_NONE, as a
    JVM's heap or V8's code range is until used) does not count, as it would under RLIMIT_AS.
    """
    processes = limits.processes if own_uid else procfs.tasks_of_user(os.getuid()) + limits.processes
    memory = limits.memory_mb * MIB
    by_rlimit = limits.memory_mechanism is not MemoryMechanism.CGROUP
    return (
        *([_clamp(resource.RLIMIT_DATA, memory, memory)] if by_rlimit else []),
        _clamp(resource.RLIMIT_CPU, limits.cpu_s, limits.cpu_s + 1),
        _clamp(resource.RLIMIT_NPROC, processes, processes),
        _clamp(resource.RLIMIT_NOFILE, limits.open_files, limits.open_files),
        _clamp(resource.RLIMIT_FSIZE, limits.file_size_mb * MIB, limits.file_size_mb * MIB),
        _clamp(resource.RLIMIT_CORE, 0, 0),
    )

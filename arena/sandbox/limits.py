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


def data_limit(memory_mb: int) -> int:
    """RLIMIT_DATA where no cgroup holds the memory limit, in bytes: memory_mb plus 1/32 of the machine's memory.

    RLIMIT_DATA counts memory a process has mapped to write even if it never touches it, and a JVM commits its
    initial heap, 1/64 of the machine's memory, at start, untouched: 512 MB on a 32 GB machine. The headroom
    lets it start; the memory watch holds memory_mb on what is used, and RLIMIT_DATA refuses at once an
    allocation far past it (and bounds how far one process gets between two looks of the watch).
    """
    return memory_mb * MIB + os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 32


def rlimits(limits: Limits, *, own_uid: bool, nproc_inside: bool = False) -> tuple[Rlimit, ...]:
    """The rlimits of one bot process (and of bwrap, which passes them on to the bot).

    RLIMIT_NPROC counts every task of a user. With a UID of its own the count is the bot's alone. Without one
    (the arena does not run as root) the bot shares the arena user's count. Under strict the count is also kept
    per user namespace, and checked against the limit the namespace was made with: so bwrap makes it with the
    user's own limit, left as it is here (nproc_inside), and the bot's limits.processes is set inside
    (plans.strict), on its namespace's count alone. Elsewhere its limit is set to the user's count now plus
    limits.processes: the bot may start that many more, but concurrent bots share the headroom, and one could
    tell another something by how much of it it holds.

    Memory is limited here only when no cgroup holds it (any mechanism but CGROUP), and then by RLIMIT_DATA (see
    data_limit): the private writable memory a process has mapped, touched or not. Address space merely reserved
    (PROT_NONE, as a JVM's heap or V8's code range is until used) does not count, as it would under RLIMIT_AS.
    """
    processes = limits.processes if own_uid else procfs.tasks_of_user(os.getuid()) + limits.processes
    memory = data_limit(limits.memory_mb)
    by_rlimit = limits.memory_mechanism is not MemoryMechanism.CGROUP
    return (
        *([_clamp(resource.RLIMIT_DATA, memory, memory)] if by_rlimit else []),
        _clamp(resource.RLIMIT_CPU, limits.cpu_s, limits.cpu_s + 1),
        *([] if nproc_inside else [_clamp(resource.RLIMIT_NPROC, processes, processes)]),
        _clamp(resource.RLIMIT_NOFILE, limits.open_files, limits.open_files),
        _clamp(resource.RLIMIT_FSIZE, limits.file_size_mb * MIB, limits.file_size_mb * MIB),
        _clamp(resource.RLIMIT_CORE, 0, 0),
    )

"""What the forked child does between fork and exec: the preexec_fn of every bot process.

Everything is computed in the parent; the child only makes system calls (the arena has threads, so the
child must not need any lock another thread might hold).
"""

from __future__ import annotations

import os
import resource
import signal
from dataclasses import dataclass

from arena.sandbox import linux
from arena.sandbox.limits import Rlimit


@dataclass(frozen=True, slots=True)
class ChildSetup:
    """The preexec_fn: its cgroup, staging mounts (as root), then the bot's own ids, death signal, rlimits, CPU."""

    parent_pid: int
    mounts: tuple[tuple[bytes, bytes], ...] = ()  # (source, staging target), bound in a private mount namespace
    uid: int | None = None
    gid: int | None = None
    rlimits: tuple[Rlimit, ...] = ()
    cpu: int | None = None
    cgroup_procs: bytes | None = None  # the cgroup.procs file of the bot's memory cgroup

    def __call__(self) -> None:
        try:
            self._prepare()
        except OSError as error:
            # Popen only reports "Exception occurred in preexec_fn": leave the reason on stderr for the arena.
            os.write(2, f"sandbox: {error}\n".encode())
            raise

    def _prepare(self) -> None:
        if self.cgroup_procs is not None:
            # First, while still privileged: from here on the process and all it starts are in the bot's cgroup.
            fd = os.open(self.cgroup_procs, os.O_WRONLY)
            try:
                os.write(fd, b"0")  # "0" is the writing process itself
            finally:
                os.close(fd)
        if self.mounts:
            # Staging: paths the bot's UID cannot traverse (a Python under /root) are bound where it can, in a
            # mount namespace of this child alone, so that bwrap (unprivileged) can bind them in turn.
            linux.private_mount_namespace()
            for source, target in self.mounts:
                linux.bind_mount(source, target)
        if self.uid is not None and self.gid is not None:
            os.setgroups([])
            os.setresgid(self.gid, self.gid, self.gid)
            os.setresuid(self.uid, self.uid, self.uid)
        # After the uid change, which clears it. The signal comes when the forking *thread* exits: bots are
        # always forked from the sandbox's own long-lived spawner thread for that reason.
        linux.set_parent_death_signal(signal.SIGKILL)
        if os.getppid() != self.parent_pid:
            os._exit(1)  # the arena died before the death signal was armed
        for which, soft, hard in self.rlimits:
            resource.setrlimit(which, (soft, hard))
        if self.cpu is not None:
            os.sched_setaffinity(0, {self.cpu})

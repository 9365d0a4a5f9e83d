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
from arena.sandbox.views import EMPTY, TMPFS_OPTIONS, StepKind, View


@dataclass(frozen=True, slots=True)
class OwnSpace:
    """A basic bot's writable space, made by its child as root (disk.py): a tmpfs on the workdir, one on
    /dev/shm, and every other directory anyone may write in shown read-only."""

    workdir: bytes
    workdir_options: bytes
    shm_options: bytes
    read_only: tuple[tuple[bytes, int], ...]  # (path, the mount flags its remount keeps)

    def make(self) -> None:
        linux.mount_tmpfs(self.workdir, self.workdir_options, executable=True)  # a bot may build a helper there
        for path, flags in self.read_only:  # after the workdir: a tmpfs under /tmp stays writable in /tmp's bind
            linux.read_only(path, flags)
        if os.path.isdir(b"/dev/shm"):
            linux.mount_tmpfs(b"/dev/shm", self.shm_options)
        os.chdir(self.workdir)  # Popen's chdir came first, into the directory now covered


@dataclass(frozen=True, slots=True)
class ChildSetup:
    """The preexec_fn: its cgroup, the bot's view of the files (as root), then its own ids, death signal, rlimits,
    CPU."""

    parent_pid: int
    view: View = EMPTY  # carried out in a mount namespace of this child alone, before the ids change
    space: OwnSpace | None = None  # made after the view, in the same mount namespace
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
            where = f": {os.fsdecode(error.filename)}" if error.filename is not None else ""
            os.write(2, f"sandbox: {error.strerror or error}{where}\n".encode())
            raise

    def _prepare(self) -> None:
        if self.cgroup_procs is not None:
            # First, while still privileged: from here on the process and all it starts are in the bot's cgroup.
            fd = os.open(self.cgroup_procs, os.O_WRONLY)
            try:
                os.write(fd, b"0")  # "0" is the writing process itself
            finally:
                os.close(fd)
        if self.view or self.space:
            linux.private_mount_namespace()
        if self.view:
            _show(self.view)
        if self.space is not None:
            self.space.make()
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


def _show(view: View) -> None:
    """Carry out a view (views.py): paths the bot's UID cannot reach on the host become reachable, here only.

    The sources are opened once the namespace is this child's own (the caller makes it: a mount of another
    namespace cannot be bound) and before any cover hides them; each is bound through its descriptor, closed
    again at exec.
    """
    sources = [os.open(source, os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW) for source in view.sources]
    mask = os.umask(0)
    for step in view.steps:
        if step.kind is StepKind.TMPFS:
            linux.mount_tmpfs(step.path, TMPFS_OPTIONS)
        elif step.kind is StepKind.MKDIR:
            os.mkdir(step.path, 0o755)
        elif step.kind is StepKind.FILE:
            os.close(os.open(step.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC, 0o644))
        elif step.kind is StepKind.SYMLINK:
            os.symlink(step.target, step.path)
        else:
            linux.bind_mount(b"/proc/self/fd/%d" % sources[step.source], step.path)
    os.umask(mask)

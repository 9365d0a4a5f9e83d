"""Starting a bot process: subprocess runs bootstrap.py, which makes the bot's place and then becomes the bot.

Nothing runs Python in a child forked from the arena, which has threads (bootstrap.py says why). ChildSetup is
all bootstrap.py does, decided here; start() hands it over and waits until the bot runs or its start failed.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import marshal
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from arena.sandbox import linux
from arena.sandbox.limits import Rlimit
from arena.sandbox.views import EMPTY, TMPFS_OPTIONS, View

BOOTSTRAP = str(Path(__file__).with_name("bootstrap.py"))
START_TIMEOUT_S = 20.0
"""From the start of bootstrap.py to the bot's exec: a fresh interpreter and a few system calls."""


@dataclass(frozen=True, slots=True)
class OwnSpace:
    """A basic bot's writable space, made as root (disk.py): a tmpfs on the workdir, one on /dev/shm, and every
    other directory anyone may write in shown read-only."""

    workdir: bytes
    workdir_options: bytes
    shm_options: bytes
    read_only: tuple[tuple[bytes, int], ...]  # (path, the mount flags its remount keeps)


@dataclass(frozen=True, slots=True)
class ChildSetup:
    """What happens between the start and the bot's exec, in order: its cgroups, the bot's view of the files (as
    root), its own ids, death signal, rlimits, CPU, Landlock, seccomp."""

    parent_pid: int
    view: View = EMPTY  # carried out in a mount namespace of this child alone, before the ids change
    space: OwnSpace | None = None  # made after the view, in the same mount namespace
    uid: int | None = None
    gid: int | None = None
    rlimits: tuple[Rlimit, ...] = ()
    cpu: int | None = None
    cgroup_procs: tuple[bytes, ...] = ()  # the cgroup.procs files it joins: its CPU clock's, its memory's
    landlock: tuple[int, tuple[tuple[bytes, int], ...]] | None = None  # ABI, (path, rights): landlock.restrict
    seccomp: bytes | None = None  # the filter's program (seccomp.py), loaded last
    namespaces: bool = False  # PID, IPC and network namespaces of its own, and a /proc of its PID namespace (root)
    sysinfo: tuple[bytes, int, int] | None = None  # sysinfo.py's filter, seccomp()'s number, the socket to the arena

    def payload(self, argv: list[str], env: dict[str, str]) -> bytes:
        """What bootstrap.py reads: marshal's bytes (no import to read them); paths, the command line and the
        environment as bytes, so that they reach the bot as the arena has them."""
        view = space = None
        if self.view:
            steps = [(step.kind.value, step.path, step.target, step.source) for step in self.view.steps]
            view = {"sources": self.view.sources, "steps": tuple(steps), "cover_options": TMPFS_OPTIONS}
        if self.space is not None:
            space = {
                "workdir": self.space.workdir,
                "workdir_options": self.space.workdir_options,
                "shm_options": self.space.shm_options,
                "read_only": self.space.read_only,
            }
        setup = {
            "parent_pid": self.parent_pid,
            "cgroup_procs": self.cgroup_procs,
            "view": view,
            "space": space,
            "uid": self.uid,
            "gid": self.gid,
            "rlimits": self.rlimits,
            "cpu": self.cpu,
            "landlock": self.landlock,
            "seccomp": self.seccomp,
            "namespaces": self.namespaces,
            "sysinfo": self.sysinfo,
            "argv": tuple(os.fsencode(part) for part in argv),
            "env": {os.fsencode(name): os.fsencode(value) for name, value in env.items()},
        }
        return marshal.dumps(setup)


Stream = int | IO[bytes] | None


class ExecFailed(OSError):
    """The bot's program could not be executed (its file, its format, its interpreter): the bot's own doing, unlike
    every other failure of a start, which is the machine's or the arena's."""


def start(
    argv: list[str],
    setup: ChildSetup,
    *,
    env: dict[str, str],
    cwd: str,
    stdin: Stream,
    stdout: Stream,
    stderr: Stream,
    pass_fds: tuple[int, ...],
    umask: int,
) -> subprocess.Popen[bytes]:
    """The bot's process, in its own session, once it runs argv; ExecFailed if the bot's program cannot run,
    OSError (as Popen raises it) if no process can be started, SubprocessError if its place cannot be made.

    The setup goes to bootstrap.py in a memory file, not on its command line: anyone may read a process's
    command line, and the setup holds the bot's environment (its token); and a memory file has no size limit.
    """
    status_read, status_write = (_above_stdio(fd) for fd in os.pipe2(os.O_CLOEXEC))
    setup_fd = -1
    try:
        try:
            setup_fd = _above_stdio(_memory_file())
            with open(setup_fd, "wb", closefd=False) as file:
                file.write(setup.payload(argv, env))
            os.lseek(setup_fd, 0, os.SEEK_SET)
            with _own_pid_namespace(setup.namespaces):
                popen = subprocess.Popen(
                    [sys.executable, "-I", "-S", "-B", BOOTSTRAP, str(setup_fd), str(status_write)],
                    stdin=stdin,
                    stdout=stdout,
                    stderr=stderr,
                    cwd=cwd,
                    env={},
                    start_new_session=True,
                    pass_fds=(*pass_fds, setup_fd, status_write),
                    umask=umask,
                )
        finally:
            os.close(status_write)
            if setup_fd >= 0:
                os.close(setup_fd)
        try:
            report = _read_until_exec(status_read)
        except BaseException:  # the bootstrap hangs, or the arena is stopped: no bot starts unwatched
            popen.kill()
            popen.wait()
            raise
    finally:
        os.close(status_read)
    if report:
        popen.wait()
        failure = marshal.loads(report)
        if failure["stage"] == "exec":
            raise ExecFailed(failure["errno"], failure["strerror"], failure["filename"])
        where = f": {failure['filename']}" if failure["filename"] else ""
        raise subprocess.SubprocessError(f"sandbox: {failure['strerror']}{where}")
    return popen


OWN_PID_NAMESPACE = "/proc/thread-self/ns/pid"


def pid_namespaces_problem() -> str | None:
    """Why this process cannot start bots in PID namespaces of their own, or None. The test is the step that
    ends each such start, entering its own namespace again: where that fails (root of a user namespace that does
    not own the PID namespace), a start would leave the spawner's children in the bot's namespace."""
    try:
        own = os.open(OWN_PID_NAMESPACE, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as error:
        return f"{OWN_PID_NAMESPACE}: {error.strerror}"
    try:
        linux.setns(own, linux.CLONE_NEWPID, "the arena's PID namespace")
    except OSError as error:
        return str(error)
    finally:
        os.close(own)
    return None


@contextlib.contextmanager
def _own_pid_namespace(wanted: bool) -> Iterator[None]:
    """Start the next child of this thread (the spawner's) as the first process of a new PID namespace, where
    bootstrap.py serves as its init; then this thread's children are born in the arena's own namespace again."""
    if not wanted:
        yield
        return
    own = os.open(OWN_PID_NAMESPACE, os.O_RDONLY | os.O_CLOEXEC)
    try:
        linux.unshare(linux.CLONE_NEWPID, "CLONE_NEWPID")
        try:
            yield
        finally:
            linux.setns(own, linux.CLONE_NEWPID, "the arena's PID namespace")
    finally:
        os.close(own)


MFD_NOEXEC_SEAL = 0x0008
"""Linux 6.3 on: a memory file that can never be executed, which a system with vm.memfd_noexec = 2 requires."""


def _memory_file() -> int:
    try:
        return os.memfd_create("arena-bot-setup", os.MFD_CLOEXEC | MFD_NOEXEC_SEAL)
    except OSError as error:
        if error.errno != errno.EINVAL:  # a kernel before 6.3 knows no such flag
            raise
        return os.memfd_create("arena-bot-setup", os.MFD_CLOEXEC)


def _above_stdio(fd: int) -> int:
    """fd, moved above 2 if it is one of them (an arena started with its standard streams closed): Popen's dup2
    of the bot's streams would land on it."""
    if fd > 2:
        return fd
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    os.close(fd)
    return moved


def _read_until_exec(status: int) -> bytes:
    """What bootstrap.py reported: nothing once the bot runs (its exec closed the pipe)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    waiting = select.poll()  # not select.select: it refuses descriptors from 1024 on
    waiting.register(status, select.POLLIN)
    report = b""
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not waiting.poll(remaining * 1000):
            raise subprocess.SubprocessError(f"the bot's process did not start within {START_TIMEOUT_S:.0f} s")
        chunk = os.read(status, 65536)
        if not chunk:
            return report
        report += chunk

"""Killing a bot's whole process tree and reaping every child, with a deadline on every wait.

Three nets, because a bot can leave its process group (setsid) and its parent (double fork):
- the arena is a child subreaper, so orphaned descendants re-parent to it instead of to init, and it reaps them;
- every process started from a bot carries the bot's marker in its inherited environment
  (procfs.MARKER_VARIABLE); the arena finds and kills them wherever they are;
- a bot with a UID of its own is swept by UID: kill(-1) sent *as that UID* reaches every process of it in
  one atomic pass, which also stops a fork bomb.
An arena killed outright casts the last two through its guardian (guardian.py).
"""

from __future__ import annotations

import contextlib
import logging
import os
import resource
import signal
import subprocess
import threading
import time
from collections.abc import Collection

from arena.sandbox import linux, procfs

log = logging.getLogger(__name__)

POLL_S = 0.005

_setup_lock = threading.Lock()
_subreaper_pid: int | None = None


def become_subreaper() -> None:
    """Once per process: orphans of bots re-parent to the arena, which reaps them."""
    global _subreaper_pid
    with _setup_lock:
        if _subreaper_pid == os.getpid():
            return
        _subreaper_pid = os.getpid()
        try:
            linux.become_child_subreaper()
        except OSError:
            log.warning("sandbox: cannot become a child subreaper; orphaned bot processes re-parent to init")


def wait_pid(pid: int, timeout: float) -> tuple[int, resource.struct_rusage] | None:
    """Reap child pid within timeout: (wait status, rusage), or None if it is still running or not our child."""
    if pid <= 0:
        raise ValueError(f"wait_pid({pid}) would wait for any child, or a process group")
    deadline = time.monotonic() + timeout
    while True:
        try:
            reaped, status, usage = os.wait4(pid, os.WNOHANG)
        except ChildProcessError:
            return None
        if reaped:
            return status, usage
        if time.monotonic() >= deadline:
            return None
        time.sleep(POLL_S)


def _reap_if_ours(pid: int) -> bool:
    """Reap pid if it is a zombie child of the arena; True if it is gone (or was never ours to wait for)."""
    try:
        reaped, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return False
    return reaped != 0


def _signal(pid: int, signum: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signum)


def kill_as_user(uid: int, gid: int) -> None:
    """kill(-1, SIGKILL) sent as uid: every process of uid dies, in one pass.

    The sender is a shell started by subprocess, whose fork and exec happen in C: forking the arena, which
    has threads, and running Python in the child could deadlock on a lock another thread held.
    """
    try:
        sender = subprocess.Popen(
            [SHELL, "-c", "kill -KILL -1"],
            user=uid,
            group=gid,
            extra_groups=[],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            cwd="/",
            env={},
        )
    except (OSError, subprocess.SubprocessError) as error:
        log.error("sandbox: cannot start the helper that kills the processes of uid %d: %s", uid, error)
        return
    try:
        sender.wait(5.0)
    except subprocess.TimeoutExpired:
        log.error("sandbox: the helper killing the processes of uid %d did not exit", uid)
        sender.kill()
        sender.wait()


SHELL = "/bin/sh"
"""Its builtin kill sends the signal: no other program needs to be installed, or readable by the bot's uid."""


def kill_user(uid: int, timeout: float, exclude: Collection[int] = ()) -> bool:
    """Kill every process of uid and reap those that are (or become) the arena's children.

    True once none is left; False (logged) if some survive the deadline. Pids in exclude are killed but left
    for their owner to reap (a BotProcess reaps its own pid with wait4, to keep the rusage).
    """
    deadline = time.monotonic() + timeout
    me = os.getpid()
    while True:
        alive = False
        pending = False
        for pid in procfs.processes_of_user(uid):
            info = procfs.stat(pid)
            if info is None:
                continue
            if info.ppid == me and pid not in exclude and _reap_if_ours(pid):
                continue
            if info.zombie:
                pending = pending or pid not in exclude  # its parent reaps it, or it re-parents to us
            else:
                alive = True
        if not alive and not pending:
            return True
        if alive:
            kill_as_user(uid, uid)
        if time.monotonic() >= deadline:
            log.error("sandbox: processes of bot uid %d survived being killed", uid)
            return False
        time.sleep(POLL_S)


class MarkedSweep:
    """Kill every process carrying a bot's marker in its environment, and reap those that become our children.

    A dying process loses its environment before it even becomes a zombie, so processes are followed from
    their first sighting by pid and start time (never mistaking a later process with the same pid for them)
    until they are gone or reaped. Call track() before killing anything, finish() after.
    """

    def __init__(self, marker: str, exclude: Collection[int] = ()) -> None:
        self._marker = marker
        self._exclude = set(exclude)
        self._tracked: dict[int, int] = {}  # pid -> start time

    def track(self) -> None:
        """Note every live process that carries the marker now."""
        for pid in procfs.pids():
            if pid not in self._exclude and pid not in self._tracked and procfs.carries_marker(pid, self._marker):
                info = procfs.stat(pid)
                if info is not None:
                    self._tracked[pid] = info.start

    def finish(self, timeout: float) -> bool:
        """Kill and reap what was tracked, and whatever still turns up; True if nothing is left."""
        deadline = time.monotonic() + timeout
        me = os.getpid()
        while True:
            self.track()
            for pid, start in list(self._tracked.items()):
                info = procfs.stat(pid)
                if info is None or info.start != start:
                    del self._tracked[pid]  # gone: reaped by its parent
                    continue
                if not info.zombie:
                    _signal(pid)
                elif info.ppid == me and _reap_if_ours(pid):
                    del self._tracked[pid]
                # else: a zombie whose parent (killed too) has yet to die; then it re-parents to us
            if not self._tracked:
                return True
            if time.monotonic() >= deadline:
                log.error("sandbox: processes of a bot survived being killed: %s", sorted(self._tracked))
                return False
            time.sleep(POLL_S)


def reap_zombie_children(*, uids: range = range(0), sessions: Collection[int] = (), timeout: float = 0.0) -> None:
    """Reap zombies re-parented to the arena that came from bots (a bot UID, or a bot's session).

    They may have died before the arena ever saw them, so neither their marker nor their UID sweep found them.
    With a timeout, such a child still dying (its environment already gone, so no sweep tracked it) is killed
    and waited for until it can be reaped.
    """
    me = os.getpid()
    deadline = time.monotonic() + timeout
    while True:
        dying = False
        for pid in procfs.pids():
            info = procfs.stat(pid)
            if info is None or info.ppid != me:
                continue
            ids = procfs.uids(pid)
            if not ((ids is not None and ids[0] in uids) or info.sid in sessions or info.pgid in sessions):
                continue
            if info.zombie:
                _reap_if_ours(pid)
            elif timeout:
                _signal(pid)
                dying = True
        if not dying or time.monotonic() >= deadline:
            return
        time.sleep(POLL_S)

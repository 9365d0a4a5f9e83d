"""One bot process, from started to reaped, and the registry that kill_all empties."""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import resource
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Collection
from pathlib import Path
from types import TracebackType

from arena.sandbox import cpuclock, disk, diskwatch, faults, guardian, memwatch, procfs, procview, reaper, users
from arena.sandbox.capture import StderrCapture
from arena.sandbox.cgroups import BotCgroup
from arena.sandbox.errors import SandboxError
from arena.sandbox.readiness import readable
from arena.sandbox.spawner import spawner
from arena.sandbox.spec import LaunchSpec, Limits, MemoryMechanism, SandboxLevel

SPAWN_DRAIN_S = 5.0

log = logging.getLogger(__name__)

KILL_TIMEOUT_S = 5.0

_registry_lock = threading.RLock()
_live: dict[int, BotProcess] = {}


def _forget_inherited() -> None:
    """After a fork: the child does not own its parent's bots and must neither kill nor reap them."""
    _live.clear()


os.register_at_fork(after_in_child=_forget_inherited)


def read_info(fd: int, received: bytearray) -> bytes | None:
    """Read bwrap's info fd (non-blocking) into received: all it wrote, once bwrap has closed it (or died);
    None while more may come."""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except BlockingIOError:
            return None
        if not chunk:
            return bytes(received)
        received += chunk


def close_fd(fd: int) -> None:
    """Close fd; one already closed is fine."""
    try:
        os.close(fd)
    except OSError as error:
        if error.errno != errno.EBADF:
            raise


def remove_base(base: Path) -> None:
    """Remove a bot's private tree: the workdir with its contents, and the copies of its closed files."""
    for inside in ("work", "files"):
        disk.make_removable(base / inside)  # a bot may have left directories its own UID cannot enter
        shutil.rmtree(base / inside, ignore_errors=True)
    (base / procview.EMPTY_FILE).unlink(missing_ok=True)
    try:
        base.rmdir()
    except FileNotFoundError:
        pass
    except OSError:
        log.error("sandbox: cannot remove %s", base)


class BotProcess:
    """A running (or finished) bot: watch it with fileno(), ask returncode(), end it with kill().

    stdin_fd and stdout_fd (only with spec.stdio) are the arena's non-blocking ends of the bot's stdin and
    stdout. Without stdio the bot's stdout goes to the same log as its stderr.

    Its memory is held by its cgroup, when it has one; otherwise (spec.limits.memory_mechanism is RLIMIT, or the
    level is none and nothing is limited) the memory watch measures it, and stops it over the limit.
    """

    def __init__(
        self,
        *,
        popen: subprocess.Popen[bytes],
        spec: LaunchSpec,
        level: SandboxLevel,
        base: Path,
        workdir: Path,
        user: users.BotUser | None,
        marker: str,
        stderr_fd: int,
        stdin_fd: int | None,
        stdout_fd: int | None,
        info_fd: int | None,
        cgroup: BotCgroup | None = None,
        disk: disk.DiskSpace | None = None,
        clock: cpuclock.CpuClock | None = None,
        init: bool = False,
    ) -> None:
        self.pid = popen.pid
        self.level = level
        self.own_pid_namespace = init
        """basic: the bot runs in a PID namespace of its own, whose init (bootstrap.py) pid is (strict: always)."""
        self.workdir = workdir
        """On the host; at strict and at basic as root an empty place-holder, the bot's own being a tmpfs of its
        mount namespace (read it through files_path())."""
        self.seen_workdir = disk.workdir if disk is not None else workdir
        """The bot's workdir at the path the bot sees it (its cwd, HOME and TMPDIR)."""
        self.stdin_fd = stdin_fd
        self.stdout_fd = stdout_fd
        self.command = spec.command
        self.limits: Limits = spec.limits
        self._popen = popen
        self._base = base
        self._user = user
        self._marker = marker
        self._info_fd = info_fd
        self._info = bytearray()  # what bwrap wrote to it so far: it writes its JSON in pieces
        self._init_pid: int | None = None  # strict: host pid of the sandbox's init, from bwrap's info fd
        self._init_cpu = 0.0
        self._init_maxrss_kb = 0
        self._owner = os.getpid()
        self._lock = threading.RLock()
        self._pidfd = os.pidfd_open(self.pid)
        self._returncode: int | None = None
        self._usage: resource.struct_rusage | None = None
        self._status_lost = False
        self._killed_by_arena = False
        self._all_gone = False  # killed, and none of its processes found left: the guardian may forget it
        self._closed = False
        self._capture = StderrCapture(stderr_fd, spec.limits.stderr_kb * 1024, str(self.pid), spec.stderr_echo)
        self._cgroup = cgroup
        self.clock: cpuclock.CpuClock = clock if clock is not None else cpuclock.TreeClock(self.pid)
        """The CPU time of all the bot's processes, and their freezer (cpuclock.py)."""
        self._cgroup_hit_limit: bool | None = None  # read once the cgroup is gone
        self._stopped_for_memory = False
        self._final_peak: int | None = None
        self._watched: memwatch.Watched | None = None
        if cgroup is None:
            enforced = level is not SandboxLevel.NONE and spec.limits.memory_mechanism is MemoryMechanism.RLIMIT
            self._watched = memwatch.Watched(
                root=self.pid,
                marker=marker,
                uid=user.uid if user else None,
                limit_bytes=spec.limits.memory_mb * 1024 * 1024 if enforced else None,
                stop=self._stop_for_memory,
            )
            memwatch.watch.add(self.pid, self._watched)
        self._disk_fault: str | None = None
        self._space_fds: list[int] | None = None
        self._disk: diskwatch.Watched | None = None
        if disk is not None:
            self._disk = diskwatch.Watched(disk, self._disk_usage, self._live_pids, self._stop_for_disk)
            diskwatch.watch.add(self.pid, self._disk)
        with _registry_lock:
            _live[self.pid] = self

    def __repr__(self) -> str:
        return f"<BotProcess pid={self.pid} level={self.level.value} returncode={self._returncode}>"

    def fileno(self) -> int:
        """A pidfd, readable once the process has exited: poll it together with the bot's socket."""
        with self._lock:
            if self._pidfd < 0:
                raise ValueError("the bot process has been killed and its pidfd closed")
            return self._pidfd

    def _collect(self) -> None:
        """One non-blocking wait4 (the caller holds the lock)."""
        try:
            pid, status, usage = os.wait4(self.pid, os.WNOHANG)
        except ChildProcessError:
            log.warning("sandbox: the exit status of bot pid %d was collected elsewhere", self.pid)
            self._status_lost = True
            self._returncode = 255
        else:
            if pid == 0:
                return
            self._usage = usage
            self._returncode = faults.returncode_from_status(status, self.level, init=self.own_pid_namespace)
        self._popen.returncode = self._returncode  # so Popen never waits for this pid itself

    def returncode(self) -> int | None:
        """The exit status (-N if killed by signal N), or None while running. Never blocks."""
        with self._lock:
            if self._returncode is None:
                self._collect()
            return self._returncode

    def wait(self, timeout: float) -> int | None:
        """Wait up to timeout seconds for the process to exit: its returncode, or None if still running."""
        deadline = time.monotonic() + timeout
        while True:
            code = self.returncode()
            if code is not None:
                return code
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            try:
                fd = self.fileno()
            except (OSError, ValueError):  # killed, and the pidfd closed, by another thread meanwhile
                time.sleep(min(remaining, reaper.POLL_S))
                continue
            readable(fd, remaining)  # then the returncode is looked at again

    def _sandbox_init(self) -> int | None:
        """Strict only: the host pid of the sandbox's init, which bwrap writes to its info fd at start."""
        if self._init_pid is None and self._info_fd is not None:
            info = read_info(self._info_fd, self._info)
            if info is None:
                return None  # not all written yet: bwrap is still setting up
            with contextlib.suppress(ValueError, KeyError, TypeError):
                self._init_pid = int(json.loads(info or b"")["child-pid"])
            close_fd(self._info_fd)  # only now: bwrap writing to a closed info fd dies of SIGPIPE
            self._info_fd = None
        return self._init_pid

    def _reap_sandbox_init(self, timeout: float) -> None:
        """Reap the sandbox's init if it re-parented to the arena: its rusage holds the bot's CPU time."""
        pid = self._sandbox_init()
        if pid is None or pid <= 0 or self._returncode is None:  # -1: reaped already (waiting for -1 is any child)
            return
        reaped = reaper.wait_pid(pid, timeout)
        if reaped is not None:
            self._init_cpu += reaped[1].ru_utime + reaped[1].ru_stime
            self._init_maxrss_kb = max(self._init_maxrss_kb, reaped[1].ru_maxrss)
            self._init_pid = -1  # reaped: never signal or wait for that pid again

    @property
    def cpu_seconds(self) -> float:
        """User + system CPU time of the process and its reaped descendants (0 until it is reaped)."""
        usage = self._usage
        return self._init_cpu + (0.0 if usage is None else usage.ru_utime + usage.ru_stime)

    def cpu_used(self) -> float:
        """CPU seconds used so far by the live process tree (the CPU limit counts per process, so this is an upper
        bound of what any one of them has used)."""
        return procfs.tree_cpu_seconds(self.pid)

    def _space(self) -> list[int] | None:
        """Descriptors of the bot's tmpfs mounts (caller holds the lock), opened through /proc/PID/root once its
        sandbox is up and then held, so that they stay readable until kill() even once the bot has exited."""
        space = self._disk.space if self._disk is not None else None
        if space is None or space.kind is disk.DiskKind.MEASURED:
            return None
        if self._space_fds is None and self._pidfd >= 0:
            inside = self._sandbox_init() if self.level is SandboxLevel.STRICT else self.pid
            if inside is not None and inside > 0:
                fds = [disk.open_tmpfs(f"/proc/{inside}/root{path}", size) for path, size in space.mounts]
                if all(fd is not None for fd in fds):
                    self._space_fds = [fd for fd in fds if fd is not None]
                else:
                    for fd in fds:
                        if fd is not None:
                            close_fd(fd)
        return self._space_fds

    def files_path(self) -> str | None:
        """Where the arena reads the bot's workdir while it runs (its tmpfs is in the bot's own mount namespace):
        None before its sandbox is up, or when it ended before ever being seen."""
        with self._lock:
            fds = self._space()
            if self._disk is None or self._disk.space.kind is disk.DiskKind.MEASURED:
                return str(self.workdir)
            if fds is None:
                return None
            inside = self._disk.space.workdir.relative_to(self._disk.space.mounts[0][0])
            return f"/proc/self/fd/{fds[0]}/{inside}"

    def _disk_usage(self) -> disk.Usage | None:
        """What the bot has written now; None while its space cannot be seen, or the lock is taken (the watch's
        thread never waits for it: kill() may hold it for seconds)."""
        if self._disk is None or not self._lock.acquire(blocking=False):
            return None
        try:
            if self._disk.space.kind is disk.DiskKind.MEASURED:
                return disk.tree_usage([self.workdir]) + disk.deleted_open_files(self._live_pids())
            fds = self._space()
            if fds is None:
                return None
            return sum((disk.filesystem_usage(fd) for fd in fds), disk.Usage(0, 0))
        finally:
            self._lock.release()

    def _live_pids(self) -> list[int]:
        return [entry.pid for entry in procfs.tree(self.pid)]

    def _stop_for_disk(self, reason: str) -> bool:
        """The disk watch found the bot past what it may write: kill it, so that it ends in a limit fault (the
        rest of its tree goes with kill(), as after any fault). Called from the watch's thread, like
        _stop_for_memory, and for the same reason never waits for the lock."""
        if not self._lock.acquire(blocking=False):
            return False
        try:
            if self._closed or self.returncode() is not None:
                return True
            self._disk_fault = reason
            with contextlib.suppress(ProcessLookupError, PermissionError):
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
            return True
        finally:
            self._lock.release()

    def peak_disk(self) -> int:
        """The most, in bytes, the bot had written at one look (the watch's, or this one's while it runs), its
        workdir, /tmp and /dev/shm together; 0 at level none."""
        if self._disk is None:
            return 0
        if self._pidfd >= 0 and self._returncode is None:
            diskwatch.look(self._disk, stop=False)
        return self._disk.peak_bytes

    def _stop_for_memory(self, members: Collection[memwatch.Member]) -> bool:
        """The memory watch found the bot over its limit: kill its processes, so that it ends in a limit fault.

        Called from the watch's thread, which must not wait for this bot's lock (kill() holds it for seconds):
        False when it is taken, and the watch asks again on its next look.
        """
        if not self._lock.acquire(blocking=False):
            return False
        try:
            if self._closed or self.returncode() is not None:
                return True  # ended already: kill() takes care of the rest
            self._stopped_for_memory = True
            with contextlib.suppress(ProcessLookupError, PermissionError):
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            for pid, start in members:
                info = procfs.stat(pid)
                if pid != self.pid and info is not None and info.start == start:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGKILL)
            log.info("sandbox: bot pid %d stopped over its memory limit of %d MB", self.pid, self.limits.memory_mb)
            return True
        finally:
            self._lock.release()

    def _memory_exceeded(self) -> bool:
        """Whether the bot was stopped for using more memory than its limit (the caller holds the lock)."""
        if self._stopped_for_memory:
            return True
        if self._cgroup_hit_limit is None and self._cgroup is not None:
            return self._cgroup.hit_limit()
        return bool(self._cgroup_hit_limit)

    def peak_memory(self) -> int:
        """The most memory, in bytes, the bot has used so far, as its limit counts it: its cgroup's high-water
        mark; or, without a cgroup, the largest sum of its processes' resident memory the watch saw, or (once
        reaped) the resident memory of its largest process, whichever is more."""
        with self._lock:
            if self._final_peak is not None:
                return self._final_peak
            return self._measure_peak()

    def _measure_peak(self) -> int:
        if self._cgroup is not None:
            return self._cgroup.peak_bytes()
        watched = self._watched.peak_bytes if self._watched is not None else 0
        largest_kb = max(self._init_maxrss_kb, self._usage.ru_maxrss if self._usage is not None else 0)
        return max(watched, largest_kb * 1024)

    def exit_fault(self) -> tuple[str, str]:
        """After exit: ("limit", detail) if a resource limit stopped it, else ("crash", detail)."""
        with self._lock:
            code = self.returncode()
            if code is None:
                raise SandboxError(f"exit_fault() asked of bot pid {self.pid}, which is still running")
            if self._status_lost:
                return ("crash", "exited (its exit status was lost)")
            killed = code == -signal.SIGKILL and not self._killed_by_arena
            self._reap_sandbox_init(0.5 if killed else 0.0)  # SIGKILL may be the CPU hard limit: need the time
            memory_exceeded = self._memory_exceeded()
            tmpfs = self._disk is not None and self._disk.space.kind is disk.DiskKind.TMPFS  # ENOSPC: its space
        self._capture.wait_eof(0.5)  # the last words (a MemoryError) may still be in the pipe
        ending = faults.Ending(
            returncode=code,
            level=self.level,
            limits=self.limits,
            cpu_seconds=self.cpu_seconds,
            killed_by_arena=self._killed_by_arena,
            memory_marker=self._capture.contains(faults.MEMORY_MARKERS),
            file_size_marker=self._capture.contains(faults.FILE_SIZE_MARKERS),
            memory_exceeded=memory_exceeded,
            disk_fault=self._disk_fault,
            disk_full_marker=tmpfs and self._capture.contains(faults.DISK_FULL_MARKERS),
        )
        return faults.classify(ending)

    def stderr_tail(self) -> str:
        """The last lines the bot wrote to stderr (capture.TAIL_LINES, a few KiB at most), decoded leniently."""
        if self.returncode() is not None:
            self._capture.wait_eof(0.5)  # its last lines may still be in the pipe
        return self._capture.tail_lines().decode("utf-8", errors="replace")

    def take_log_segment(self) -> bytes:
        """The stderr kept since the last take, as stderr_log keeps it; the next segment begins now."""
        return self._capture.take_segment()

    @property
    def stderr_log(self) -> bytes:
        """The kept stderr: the first stderr_kb KiB, then, if some was dropped, a marker line and the tail."""
        return self._capture.log()

    @property
    def stderr_dropped(self) -> int:
        """How many bytes of stderr were dropped (0: stderr_log holds all of it)."""
        return self._capture.dropped

    def kill(self) -> None:
        """Kill the whole tree, reap it, close the fds, remove the workdir. Idempotent; never raises."""
        with self._lock:
            if self._closed or self._owner != os.getpid():
                return
            self._closed = True
            try:
                self._kill_tree()
            except Exception:  # one failed step must stop neither the others nor the caller
                log.exception("sandbox: killing bot pid %d failed", self.pid)
            finally:
                self._release()

    def _kill_tree(self) -> None:
        init = self._sandbox_init()
        if self._disk is not None:
            diskwatch.watch.remove(self.pid)
            with contextlib.suppress(Exception):
                self.peak_disk()  # its last state, while its space is still there
        sweep = reaper.MarkedSweep(self._marker, exclude={self.pid})
        sweep.track()  # before any signal: a killed process soon has no environment left to recognise it by
        if self.returncode() is None:
            self._killed_by_arena = True
            with contextlib.suppress(ProcessLookupError, PermissionError):
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
            if init is not None and init > 0:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(init, signal.SIGKILL)  # bwrap's --die-with-parent would too: be sure of it
        self.clock.thaw()  # a stopped process would wait for SIGCONT to die (v1 freezer, SIGSTOP'd tracers)
        uid = self._user.uid if self._user else None
        if uid is not None:
            reaper.kill_as_user(uid, uid)
        deadline = time.monotonic() + KILL_TIMEOUT_S
        while self._returncode is None and time.monotonic() < deadline:
            self._collect()
            if self._returncode is None:
                readable(self._pidfd, 0.05)
        if self._returncode is None:
            log.error("sandbox: bot pid %d did not die within %.0f s of SIGKILL", self.pid, KILL_TIMEOUT_S)
        self._reap_sandbox_init(KILL_TIMEOUT_S if self._returncode is not None else 0.0)
        swept = sweep.finish(KILL_TIMEOUT_S)
        reaper.reap_zombie_children(sessions={self.pid}, timeout=KILL_TIMEOUT_S)  # members that died unseen
        if uid is not None:
            swept = reaper.kill_user(uid, KILL_TIMEOUT_S, exclude={self.pid}) and swept
        self._all_gone = swept and self._returncode is not None
        if self._user is not None:
            if swept and self._returncode is not None:
                self._user.release()  # only a UID with no process left may go to another bot
            else:
                log.error("sandbox: keeping bot uid %d out of use: some of its processes may survive", uid)

    def _release(self) -> None:
        if self._watched is not None:
            memwatch.watch.remove(self.pid)
        for space_fd in self._space_fds or ():
            close_fd(space_fd)  # first: the tmpfs's pages are memory, charged to the cgroup removed next
        self._space_fds = None
        try:
            self._final_peak = self._measure_peak()
            if self._cgroup is not None:
                self._cgroup_hit_limit = self._cgroup.hit_limit()
                self._cgroup.remove(KILL_TIMEOUT_S)
        except Exception:  # the rest must be released all the same
            log.exception("sandbox: releasing the memory cgroup of bot pid %d failed", self.pid)
        try:
            self.clock.remove(KILL_TIMEOUT_S)
        except Exception:
            log.exception("sandbox: releasing the CPU clock of bot pid %d failed", self.pid)
        if not self._capture.finish(timeout=1.0):
            log.warning("sandbox: the stderr of bot pid %d is still held open by some process", self.pid)
        for fd in (self.stdin_fd, self.stdout_fd, self._info_fd):
            if fd is not None:
                close_fd(fd)
        self.stdin_fd = self.stdout_fd = self._info_fd = None
        close_fd(self._pidfd)
        self._pidfd = -1
        remove_base(self._base)
        with _registry_lock:
            _live.pop(self.pid, None)
        if self._all_gone:
            guardian.forget(self._marker)  # else it stays watched: the guardian tries again when the arena ends

    def __enter__(self) -> BotProcess:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.kill()


def kill_all() -> None:
    """Kill every bot process this process started that is still alive (for signal handlers and atexit)."""
    spawner.drain(SPAWN_DRAIN_S)  # a start under way when the arena was interrupted is killed as it completes
    with _registry_lock:
        bots = [bot for bot in _live.values() if bot._owner == os.getpid()]
    for bot in bots:
        bot.kill()
    reaper.reap_zombie_children(uids=users.chosen())

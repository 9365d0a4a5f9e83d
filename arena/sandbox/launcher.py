"""launch(): from a LaunchSpec to a running BotProcess, and the probe that tells whether strict works."""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import logging
import os
import re
import secrets
import signal
import socket
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from arena.sandbox import (
    bwrap,
    cgroups,
    child,
    command,
    confinement,
    cpuclock,
    disk,
    guardian,
    notices,
    plans,
    reaper,
    users,
    views,
)
from arena.sandbox.errors import SandboxError, SetupError
from arena.sandbox.limits import MIB
from arena.sandbox.process import KILL_TIMEOUT_S, BotProcess, close_fd, kill_all, remove_base
from arena.sandbox.spawner import spawner
from arena.sandbox.spec import LaunchSpec, Limits, MemoryMechanism, SandboxLevel

log = logging.getLogger(__name__)

_setup_lock = threading.Lock()
_setup_done = False


def _setup_process() -> None:
    """Once: become a subreaper, and kill every bot when the interpreter exits."""
    global _setup_done
    with _setup_lock:
        if not _setup_done:
            _setup_done = True
            atexit.register(kill_all)
    reaper.become_subreaper()  # once per process, forked children included


def _validate(spec: LaunchSpec) -> None:
    if not spec.command or not all(isinstance(part, str) for part in spec.command):
        raise SandboxError(f"bot command must be a non-empty tuple of strings, not {spec.command!r}")
    if not Path(spec.bot_dir).is_dir():
        raise SandboxError(f"bot directory {spec.bot_dir} does not exist")
    if spec.socket_dir is not None and not Path(spec.socket_dir).is_dir():
        raise SandboxError(f"socket directory {spec.socket_dir} does not exist")
    allowed = os.sched_getaffinity(0)
    if spec.cpu is not None and spec.cpu not in allowed:
        raise SandboxError(f"CPU {spec.cpu} is not available to the arena (it may use {sorted(allowed)})")


def _memory_limit(limits: Limits) -> tuple[cgroups.BotCgroup | None, Limits]:
    """The bot's memory cgroup, if it gets one, and its limits with the mechanism that holds memory_mb."""
    if limits.memory_mechanism is MemoryMechanism.RLIMIT:
        return None, limits
    found = cgroups.hierarchy()
    if isinstance(found, cgroups.Hierarchy):
        try:
            group = cgroups.BotCgroup.create(found, limits.memory_mb * MIB)
        except OSError as error:
            problem = f"cannot create a cgroup in {found.parent} ({error.strerror})"
        else:
            return group, replace(limits, memory_mechanism=MemoryMechanism.CGROUP)
    else:
        problem = found
    if limits.memory_mechanism is MemoryMechanism.CGROUP:
        raise SetupError(f"memory_mechanism is cgroup, but {problem}")
    notices.warn_once(
        f"sandbox: no memory cgroup for bots here ({_short(problem)}): memory_mb is held by RLIMIT_DATA and a watch"
        " of resident memory instead (`arena docs configuration`, Sandbox; `arena doctor --sandbox` says more)",
        per_machine=True,
    )
    return None, replace(limits, memory_mechanism=MemoryMechanism.RLIMIT)


def _disk_space(level: SandboxLevel, spec: LaunchSpec, base: Path, mounts: bool) -> disk.DiskSpace | None:
    """Where the bot writes and how its disk_mb is held (disk.py): a tmpfs wherever it gets a mount namespace
    (mounts: a basic bot's child can make one)."""
    disk_mb = spec.limits.disk_mb
    if level is SandboxLevel.NONE:
        return None
    if level is SandboxLevel.STRICT:
        inner = disk.inner_workdir(base)
        return disk.DiskSpace.tmpfs(inner, Path("/tmp"), disk_mb)
    if mounts:
        return disk.DiskSpace.tmpfs(base / "work", base / "work", disk_mb)
    return disk.DiskSpace.measured(base / "work", disk_mb)


def _cpu_clock(cgroup: cgroups.BotCgroup | None) -> cpuclock.CgroupClock | cpuclock.V1Clock | None:
    """The cgroups that count the bot's CPU time and freeze it; None (logged once) where none can be made."""
    clock = cpuclock.for_memory_cgroup(cgroup) or cpuclock.create()
    if isinstance(clock, str):
        notices.warn_once(
            f"sandbox: no CPU cgroup for bots here ({_short(clock)}): CPU time is read from /proc instead"
            " (`arena docs configuration`, Sandbox; `arena doctor --sandbox` says more)",
            per_machine=True,
        )
        return None
    return clock


def _short(problem: str) -> str:
    """The cause of a cgroup problem without its paths: "Permission denied", "no memory controller"."""
    causes = re.findall(r"\(([^()]+)\)", problem)
    return ", ".join(dict.fromkeys(causes)) if causes else problem.split(";")[0]


def _give_to(user: users.BotUser, directory: Path) -> None:
    """Hand the socket directory and the sockets already bound in it to the bot's UID, so it may connect."""
    os.chown(directory, user.uid, user.gid, follow_symlinks=False)
    for entry in directory.iterdir():
        os.chown(entry, user.uid, user.gid, follow_symlinks=False)


def _nonblocking(fd: int) -> int:
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
    return fd


def _kill_late(popen: subprocess.Popen[bytes]) -> None:
    """A process whose start was given up on, or whose BotProcess could not be built: it must not live on."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(popen.pid, signal.SIGKILL)
    reaper.wait_pid(popen.pid, KILL_TIMEOUT_S)
    popen.returncode = -signal.SIGKILL


class _Fds:
    """The pipes of one start: the arena keeps its ends, the child's ends are closed once it has them."""

    def __init__(self, stdio: bool, info: bool, sysinfo: bool) -> None:
        self.mine: dict[str, int] = {}
        self.theirs: dict[str, int] = {}
        wanted = ["stderr"] + (["stdin", "stdout"] if stdio else []) + (["info"] if info else [])
        try:
            if sysinfo:  # the listener's way to the arena (sysinfo.py)
                ours, its = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
                self.mine["sysinfo"], self.theirs["sysinfo"] = ours.detach(), its.detach()
            for name in wanted:
                read, write = os.pipe2(os.O_CLOEXEC)
                if name == "stdin":
                    self.mine[name], self.theirs[name] = write, read
                else:
                    self.mine[name], self.theirs[name] = read, write
        except OSError:
            self.close_all()
            raise

    def give(self, name: str, content: bytes) -> int:
        """A memory file holding content, for the child to read: closed here with the child's other ends."""
        fd = os.memfd_create(f"arena-{name}", os.MFD_CLOEXEC)
        self.theirs[name] = fd
        os.write(fd, content)
        os.lseek(fd, 0, os.SEEK_SET)
        return fd

    def close_theirs(self) -> None:
        for fd in self.theirs.values():
            close_fd(fd)
        self.theirs.clear()

    def close_all(self) -> None:
        self.close_theirs()
        for fd in self.mine.values():
            close_fd(fd)
        self.mine.clear()


def _own_uid_lost(spec: LaunchSpec, view: views.View, base: Path, problem: str) -> str:
    """The warning for a bot that runs as the arena's user because its view cannot be made here. It names
    the same closed folder for every bot it applies to, never the bot's own private box, so it is said once."""
    closed = next((path for path in view.closed if not path.is_relative_to(base)), Path(spec.bot_dir))
    if closed == notices.python_out_of_reach():
        return notices.own_uid_warning("the arena's Python", closed, problem)
    return notices.own_uid_warning(f"the bot's directory {spec.bot_dir}", closed, problem)


def start(
    spec: LaunchSpec, level: SandboxLevel, views_problem: Callable[[], str | None], *, probe: str = ""
) -> BotProcess:
    """Start spec's command at exactly this level (no fallback: arena.sandbox.levels.launch chooses it).
    views_problem: why no view can be made here (levels, by a probe started through this function), asked only
    when one is wanted. probe: which probe starts it ("strict" says nothing; "views" finds out whether a view can
    be made, so it makes one whatever the answer so far)."""
    _setup_process()
    _validate(spec)
    user = users.allocate() if os.geteuid() == 0 and level is not SandboxLevel.NONE else None
    base: Path | None = None
    fds: _Fds | None = None
    popen: subprocess.Popen[bytes] | None = None
    kept = plans.Confinement()
    cgroup: cgroups.BotCgroup | None = None
    clock: cpuclock.CgroupClock | cpuclock.V1Clock | None = None
    place: plans.Place | None = None
    try:
        if level is not SandboxLevel.NONE:
            cgroup, limits = _memory_limit(spec.limits)
            spec = replace(spec, limits=limits)  # the plan's rlimits follow the mechanism chosen
        clock = _cpu_clock(cgroup)
        if user is not None:
            reaper.kill_user(user.uid, KILL_TIMEOUT_S)  # whatever an arena that died holding this UID left
        base = Path(tempfile.mkdtemp(prefix="arena-bot-"))
        workdir = base / "work"
        workdir.mkdir(mode=0o700)
        path = spec.env.get("PATH", command.bot_path(level))  # the bot's own PATH, if the caller gives one
        argv = [command.resolve(spec.command, Path(spec.bot_dir), path), *spec.command[1:]]
        bwrap_path = bwrap.bwrap_path() if level is SandboxLevel.STRICT else None
        if level is SandboxLevel.STRICT:
            if bwrap_path is None:
                raise SandboxError(f"{bwrap.wanted()} not found")
            plans.check_strict(spec, argv, workdir)
        view, problem = views.EMPTY, None
        if user is not None:
            os.chmod(base, 0o711)  # before planning: the bot's own box is never a reason for a view
            view = views.plan(plans.needs(level, spec, argv, workdir, bwrap_path), user.uid, base)
            if (view or level is SandboxLevel.BASIC) and probe != "views":  # a mount namespace is wanted
                problem = views_problem()
            if problem is not None and view:
                # No mount namespace here (root without CAP_SYS_ADMIN): rather the arena's user than a bot that
                # cannot start.
                if not probe:
                    notices.warn_once(_own_uid_lost(spec, view, base, problem))
                user.release()
                user, view = None, views.EMPTY
        if user is not None:
            os.chown(workdir, user.uid, user.gid)
            if spec.socket_dir is not None:
                _give_to(user, Path(spec.socket_dir))
        mounts = user is not None and problem is None
        space = _disk_space(level, spec, base, mounts=mounts)
        namespaces = mounts and level is SandboxLevel.BASIC and confinement.pid_namespaces_problem() is None
        place = plans.Place(base=base, workdir=workdir, user=user, marker=secrets.token_hex(12), view=view, disk=space)
        fds = _Fds(spec.stdio, info=level is SandboxLevel.STRICT, sysinfo=confinement.answers_sysinfo(level))
        if level is SandboxLevel.STRICT:
            assert bwrap_path is not None
            plan = plans.strict(
                spec,
                argv,
                place,
                confinement.strict_fds(fds.give, fds.theirs["info"], spec, base),
                bwrap_path=bwrap_path,
            )
        elif level is SandboxLevel.BASIC:
            kept = confinement.basic(namespaces=namespaces)
            plan = plans.basic(spec, argv, place, kept)
        else:
            plan = plans.none(spec, argv, place)
        joins = (*(clock.procs_files if clock else ()), *((cgroup.procs_file,) if cgroup else ()))
        setup = replace(plan.setup, cgroup_procs=joins)
        pass_fds = plan.pass_fds
        if "sysinfo" in fds.theirs:
            setup = replace(setup, sysinfo=confinement.sysinfo_setup(fds.theirs["sysinfo"]))
            pass_fds += (fds.theirs["sysinfo"],)
        stderr = fds.theirs["stderr"]

        def spawn() -> subprocess.Popen[bytes]:
            return child.start(
                plan.argv,
                setup,
                env=plan.env,
                cwd=plan.cwd,
                stdin=fds.theirs.get("stdin", subprocess.DEVNULL),
                stdout=fds.theirs.get("stdout", stderr),
                stderr=stderr,
                pass_fds=pass_fds,
                umask=plan.umask,
            )

        guardian.watch(
            place.marker,
            uid=user.uid if user else None,
            thaw=clock.thawing if clock else None,
            cgroups=(*(clock.own_cgroups if clock else ()), *((cgroup.path,) if cgroup else ())),
            base=base,
        )
        try:
            popen = spawner.run(spawn, on_late=_kill_late)
        except child.ExecFailed as error:
            fds.close_theirs()
            raise SandboxError(f"cannot start bot command {spec.command[0]!r}: {error}") from error
        except (OSError, subprocess.SubprocessError) as error:
            fds.close_theirs()
            raise SetupError(f"cannot start bot command {spec.command[0]!r}: {error}") from error
        fds.close_theirs()
        if "sysinfo" in fds.mine:
            confinement.watch_sysinfo(fds.mine.pop("sysinfo"), spec.limits.memory_mb * MIB)
        bot = BotProcess(
            popen=popen,
            spec=spec,
            level=level,
            base=base,
            workdir=workdir,
            user=user,
            marker=place.marker,
            stderr_fd=fds.mine["stderr"],
            stdin_fd=_nonblocking(fds.mine["stdin"]) if spec.stdio else None,
            stdout_fd=_nonblocking(fds.mine["stdout"]) if spec.stdio else None,
            info_fd=_nonblocking(fds.mine["info"]) if "info" in fds.mine else None,
            cgroup=cgroup,
            disk=space,
            clock=clock,
            init=kept.namespaces,
        )
    except BaseException:
        if popen is not None:
            _kill_late(popen)
        if cgroup is not None:
            cgroup.remove(KILL_TIMEOUT_S)
        if clock is not None:
            clock.remove(KILL_TIMEOUT_S)
        if fds is not None:
            fds.close_all()
        if base is not None:
            remove_base(base)
        if user is not None:
            user.release()
        if place is not None and popen is None:
            guardian.forget(place.marker)  # never started; a started one stays watched, as it may live on
        raise
    if space is not None and space.kind is disk.DiskKind.TMPFS and level is SandboxLevel.BASIC:
        bot.files_path()  # held now, while the bot surely runs (strict's appears once bwrap has set it up)
    log.debug("sandbox: started %s as pid %d at level %s", argv[0], bot.pid, level.value)
    return bot


def preflight(spec: LaunchSpec, level: SandboxLevel) -> None:
    """Before any start: SandboxError if the bot's program cannot be found, or (strict) if it or a file its
    arguments name lies outside what the sandbox shows, in the words launch() would use."""
    path = spec.env.get("PATH", command.bot_path(level))
    argv = [command.resolve(spec.command, Path(spec.bot_dir), path), *spec.command[1:]]
    if level is SandboxLevel.STRICT:
        plans.check_strict(spec, argv, Path(spec.bot_dir))

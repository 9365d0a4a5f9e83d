"""How to call Popen for each level: command line, environment, cwd, and what the child does before exec."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from arena.sandbox import bwrap, command, disk, landlock, procfs, procview
from arena.sandbox.child import ChildSetup, OwnSpace
from arena.sandbox.errors import SandboxError
from arena.sandbox.limits import MIB, rlimits
from arena.sandbox.spec import LaunchSpec, Limits, SandboxLevel
from arena.sandbox.users import BotUser
from arena.sandbox.views import EMPTY, Need, View


@dataclass(frozen=True, slots=True)
class Plan:
    """Popen's arguments for one bot at one level."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    setup: ChildSetup
    pass_fds: tuple[int, ...] = ()
    umask: int = 0o077


@dataclass(frozen=True, slots=True)
class Place:
    """Where one bot lives: its private tree, the UID it runs as (root only), its marker, its view of the files."""

    base: Path  # root-owned, 0711: holds work/ and, as root, files/ (copies of the bot's closed files)
    workdir: Path
    user: BotUser | None
    marker: str
    view: View = EMPTY  # what the child shows the bot's UID before it drops to it (views.py)
    disk: disk.DiskSpace | None = None  # where it writes, and how that is bounded (None: level none)


PENDING_SIGNALS, QUEUE_BYTES, LOCKED_BYTES = 1024, 64 * 1024, 64 * 1024
"""A strict bot's own counts of queued signals, message-queue bytes and locked shared memory: as an ordinary user's,
each bot's adds to the user's, whose limit a bot could otherwise fill and another measure (a message)."""


def per_namespace_limits(limits: Limits) -> list[str]:
    """prlimit's options for the counts the kernel keeps per user namespace as well as per user."""
    processes = limits.processes
    return [
        f"--nproc={processes}:{processes}",
        f"--sigpending={PENDING_SIGNALS}:{PENDING_SIGNALS}",
        f"--msgqueue={QUEUE_BYTES}:{QUEUE_BYTES}",
        f"--memlock={LOCKED_BYTES}:{LOCKED_BYTES}",
    ]


def empty_file(base: Path) -> Path:
    """An empty file in the bot's private tree that bwrap shows in place of a masked /proc file."""
    return base / procview.EMPTY_FILE


def check_strict(spec: LaunchSpec, argv: list[str], workdir: Path) -> None:
    """Refuse, by name, a program or file argument that a strict sandbox would not show."""
    bot_dir = Path(os.path.abspath(spec.bot_dir))
    visible = bwrap.visible_dirs([bot_dir, workdir])
    if not command.under(argv[0], visible):
        raise SandboxError(
            f"bot command {spec.command[0]!r} ({argv[0]}) is not visible inside the strict sandbox, which shows "
            f"only the system, the arena's Python and the bot's directory {bot_dir}: put it in the bot's directory"
        )
    visible += (Path("/dev"), Path("/proc"))  # bwrap's own
    for argument in argv[1:]:
        if os.path.isabs(argument) and os.path.exists(argument) and not command.under(argument, visible):
            raise SandboxError(
                f"bot argument {argument} is outside the bot's directory {bot_dir}, which is all a strict sandbox"
                " shows of its files: move it there, or give the bot a directory that holds it"
            )


def needs(level: SandboxLevel, spec: LaunchSpec, argv: list[str], workdir: Path, bwrap_path: str | None) -> list[Need]:
    """What a bot with a UID of its own must reach at this level: the arena's Python (under basic only when the
    bot runs it), bwrap (strict), the bot's own files, its socket and workdir, and under basic its program and
    the files its arguments name."""
    python = bwrap.python_dirs()
    runs_arena_python = any(
        Path(argv[0]).is_relative_to(d) or Path(argv[0]).resolve().is_relative_to(d) for d in python
    )
    found = [Need(path) for path in python] if level is SandboxLevel.STRICT or runs_arena_python else []
    found.append(Need(Path(os.path.abspath(spec.bot_dir)), deep=True))
    found.append(Need(workdir, given=True))
    if spec.socket_dir is not None:
        found.append(Need(Path(os.path.abspath(spec.socket_dir)), given=True))
    if level is SandboxLevel.STRICT:
        found += [Need(path) for path in bwrap.own_dirs(bwrap_path or bwrap.BWRAP)]
    else:
        found.append(Need(Path(argv[0])))
        found += [Need(Path(a)) for a in argv[1:] if os.path.isabs(a) and os.path.exists(a)]
    return found


@dataclass(frozen=True, slots=True)
class StrictFds:
    """The descriptors bwrap reads at a strict start: its info pipe, the seccomp filter, the /proc masks' contents."""

    info: int
    seccomp: int | None
    proc: tuple[tuple[procview.Mask, int | None], ...]

    def all(self) -> tuple[int, ...]:
        data = tuple(fd for _, fd in self.proc if fd is not None)
        return (self.info, *((self.seccomp,) if self.seccomp is not None else ()), *data)


def strict(spec: LaunchSpec, argv: list[str], place: Place, fds: StrictFds, bwrap_path: str) -> Plan:
    """bwrap, run as the bot's own UID when the arena is root (in the view the child made it first)."""
    shown: list[tuple[Path, bool]] = [(d, False) for d in bwrap.python_dirs()]
    shown.append((Path(os.path.abspath(spec.bot_dir)), False))
    if spec.socket_dir is not None:
        shown.append((Path(os.path.abspath(spec.socket_dir)), False))
    workdir = disk.inner_workdir(place.base)
    env = command.environment(SandboxLevel.STRICT, workdir, spec.env, marker=None)
    user = place.user
    prlimit = shutil.which("prlimit", path=command.SYSTEM_PATH) if user is None else None
    if prlimit is not None:  # limits on its own namespace's counts, not on a headroom all bots share (limits.py)
        argv = [prlimit, *per_namespace_limits(spec.limits), "--", *argv]
    args = bwrap.argv(
        path=bwrap_path,
        binds=[bwrap.Bind(str(path), path, writable) for path, writable in shown],
        workdir=workdir,
        env=env,
        command=argv,
        disk_bytes=spec.limits.disk_mb * MIB,
        info_fd=fds.info,
        proc_masks=procview.bwrap_args(list(fds.proc), empty_file(place.base)),
        seccomp_fd=fds.seccomp,
    )
    return Plan(
        argv=args,
        env={"PATH": command.SYSTEM_PATH, procfs.MARKER_VARIABLE: place.marker},  # bwrap's; the bot's is cleared
        cwd="/",
        setup=ChildSetup(
            parent_pid=os.getpid(),
            view=place.view,
            uid=user.uid if user else None,
            gid=user.gid if user else None,
            rlimits=rlimits(spec.limits, own_uid=user is not None, nproc_inside=prlimit is not None),
            cpu=spec.cpu,
        ),
        pass_fds=fds.all(),
    )


@dataclass(frozen=True, slots=True)
class Confinement:
    """What keeps a basic bot from other bots and the arena beyond its UID: Landlock's ABI (0: none), the seccomp
    filter's program, and whether it gets PID, IPC and network namespaces of its own (root)."""

    landlock_abi: int = 0
    seccomp: bytes | None = None
    namespaces: bool = False


def _program_prefix(program: str) -> Path:
    """What a program needs of its installation: the prefix of a program in a bin/ folder (/opt/jdk for
    /opt/jdk/bin/java: its libraries lie beside), else its own folder."""
    folder = Path(program).resolve().parent
    return folder.parent if folder.name == "bin" and folder.parent != Path("/") else folder


def landlock_rules(spec: LaunchSpec, argv: list[str], place: Place) -> tuple[tuple[bytes, int], ...]:
    """A basic bot's Landlock rules (landlock.py): read-only the system, the arena's Python, its program's
    installation, its directory and the files its arguments name; writable its workdir and, in a space of its own,
    /dev/shm."""
    read_only = [Path(p) for p in bwrap.SYSTEM_DIRS if os.path.isdir(p)]
    read_only += [*bwrap.python_dirs(), _program_prefix(argv[0]), Path(os.path.abspath(spec.bot_dir))]
    read_only += [Path(a) for a in argv[1:] if os.path.isabs(a) and os.path.exists(a)]
    writable = [place.workdir]
    if place.user is not None and place.disk is not None and place.disk.kind is disk.DiskKind.TMPFS:
        writable.append(Path("/dev/shm"))
    unique = dict.fromkeys(os.fsencode(path) for path in read_only)
    return tuple(landlock.rules(list(unique), [os.fsencode(path) for path in writable]))


def basic(spec: LaunchSpec, argv: list[str], place: Place, confinement: Confinement) -> Plan:
    """Own session, own UID when root (in the view the child made it first), rlimits, private cwd, scrubbed
    environment, and the confinement the machine allows."""
    user = place.user
    marker = (procfs.MARKER_VARIABLE, place.marker)
    space = None
    if user is not None and place.disk is not None and place.disk.kind is disk.DiskKind.TMPFS:
        limit, files = place.disk.limit_bytes, place.disk.max_files
        space = OwnSpace(
            workdir=os.fsencode(place.workdir),
            workdir_options=disk.tmpfs_options(limit, files, user.uid, user.gid),
            shm_options=disk.tmpfs_options(disk.shm_bytes(limit), files, user.uid, user.gid, mode=0o1777),
            read_only=disk.writable_by_anyone(),
        )
    return Plan(
        argv=argv,
        env=command.environment(SandboxLevel.BASIC, place.workdir, spec.env, marker=marker),
        cwd=str(place.workdir),
        setup=ChildSetup(
            parent_pid=os.getpid(),
            view=place.view,
            space=space,
            uid=user.uid if user else None,
            gid=user.gid if user else None,
            rlimits=rlimits(spec.limits, own_uid=user is not None),
            cpu=spec.cpu,
            landlock=(
                (confinement.landlock_abi, landlock_rules(spec, argv, place)) if confinement.landlock_abi else None
            ),
            seccomp=confinement.seccomp,
            namespaces=confinement.namespaces,
        ),
    )


def none(spec: LaunchSpec, argv: list[str], place: Place) -> Plan:
    """Trusted code: own session, the arena's environment plus spec.env, cwd = bot_dir, no limits."""
    marker = (procfs.MARKER_VARIABLE, place.marker)
    return Plan(
        argv=argv,
        env=command.environment(SandboxLevel.NONE, place.workdir, spec.env, marker=marker),
        cwd=str(spec.bot_dir),
        setup=ChildSetup(parent_pid=os.getpid(), cpu=spec.cpu),
        umask=-1,
    )

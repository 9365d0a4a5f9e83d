"""Building the bubblewrap command line of the strict level.

Inside: a new root with the system read-only, the Python the arena runs on read-only (so an SDK bot or one
importing pyzmq runs as is), the bot's own directory read-only, its workdir and socket directory writable,
a small private /tmp, fresh /proc and /dev. Nothing else of the machine exists there.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import arena

BWRAP = "bwrap"
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")


def bwrap_path() -> str | None:
    """The bwrap executable, or None if it is not installed."""
    return shutil.which(BWRAP)


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
    binds: Sequence[Bind],
    workdir: Path,
    env: Mapping[str, str],
    command: Sequence[str],
    tmp_bytes: int,
    info_fd: int,
) -> list[str]:
    """The full bwrap command line running command inside the sandbox.

    bwrap writes the host pid of the sandbox's init to info_fd: bwrap may exit without reaping it, and then
    the init (whose rusage holds the bot's CPU time) re-parents to the arena, which reaps it by that pid.
    """
    path = bwrap_path() or BWRAP
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
        "--dev",
        "/dev",
        "--size",
        str(tmp_bytes),
        "--tmpfs",
        "/tmp",
        *system_args(),
    ]
    # Parents before children, so a nested directory is bound on top of its parent, not hidden by it.
    for bind in sorted(binds, key=lambda b: len(b.dest.parts)):
        args += ["--bind" if bind.writable else "--ro-bind", bind.source, str(bind.dest)]
    args += ["--remount-ro", "/", "--chdir", str(workdir), "--clearenv"]
    for name, value in env.items():
        args += ["--setenv", name, value]
    return [*args, "--", *command]

"""Finding the bot's executable and writing its environment, before anything is started.

A command that cannot run is reported here, by name, rather than as a bot that crashes at once.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from arena.sandbox.errors import SandboxError
from arena.sandbox.spec import SandboxLevel

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


def sandbox_path() -> str:
    """PATH of a sandboxed bot: the arena's Python environment first, so `python` is the arena's own."""
    return f"{Path(sys.prefix) / 'bin'}:{SYSTEM_PATH}"


def trusted_path() -> str:
    """PATH of a bot under none: the arena's own PATH, after the arena's Python environment (an arena started
    as .venv/bin/arena, its venv not activated, still gives its bots the `python` that has the SDK)."""
    own = str(Path(sys.prefix) / "bin")
    rest = [part for part in os.environ.get("PATH", os.defpath).split(":") if part != own]
    return ":".join([own, *rest])


def bot_path(level: SandboxLevel) -> str:
    """The PATH a bot's program is looked up on, and that it gets."""
    return trusted_path() if level is SandboxLevel.NONE else sandbox_path()


def resolve(command: Sequence[str], bot_dir: Path, path: str) -> str:
    """The absolute path of command[0]: relative paths are taken in bot_dir, bare names looked up on path."""
    if not command or not command[0]:
        raise SandboxError("bot command is empty")
    name = command[0]
    if "/" in name:
        candidate = Path(name) if os.path.isabs(name) else bot_dir / name
        if not candidate.is_file():
            raise SandboxError(f"bot command {name!r} not found ({candidate} is not a file)")
        if not os.access(candidate, os.X_OK):
            raise SandboxError(f"bot command {name!r} is not executable ({candidate})")
        return os.path.abspath(candidate)
    found = shutil.which(name, path=path)
    if found is None:
        raise SandboxError(f"bot command {name!r} not found on PATH {path}")
    return os.path.abspath(found)


def blocked_for(path: Path, uid: int, *, need_read: bool = False) -> Path | None:
    """The first directory on path (or path itself) that user uid, in group uid and no other, cannot pass.

    A bot with a UID of its own is such a user. Both the path as written and the path its symlinks lead to
    must be passable; with need_read the last component must be readable too.
    """
    for route in (Path(os.path.abspath(path)), path.resolve()):
        parts = route.parts
        for depth in range(1, len(parts) + 1):
            here = Path(*parts[:depth])
            try:
                info = os.stat(here)
            except OSError:
                return here
            if info.st_uid == uid:
                search, read = stat.S_IXUSR, stat.S_IRUSR
            elif info.st_gid == uid:
                search, read = stat.S_IXGRP, stat.S_IRGRP
            else:
                search, read = stat.S_IXOTH, stat.S_IROTH
            needed = search | (read if need_read and depth == len(parts) else 0)
            if info.st_mode & needed != needed:
                return here
    return None


def blocked_for_others(path: Path, *, need_read: bool = False) -> Path | None:
    """blocked_for() a user who owns nothing on the way (a fresh bot UID)."""
    return blocked_for(path, -1, need_read=need_read)


def under(path: str, dirs: Sequence[Path]) -> bool:
    """Whether path, as written and resolved, lies inside one of dirs."""
    candidates = (Path(os.path.normpath(path)), Path(path).resolve())  # "dir/../bot/x" is "bot/x" as written
    return all(any(c.is_relative_to(d) for d in dirs) for c in candidates)


def environment(
    level: SandboxLevel, workdir: Path, extra: Mapping[str, str], marker: tuple[str, str] | None
) -> dict[str, str]:
    """The bot's environment: scrubbed except under none, which inherits the arena's.

    The marker variable (None under strict, where the PID namespace does its job) lets the arena find the
    bot's descendants however far they wander from its process group.
    """
    if level is SandboxLevel.NONE:
        env = dict(os.environ, PATH=trusted_path())
    else:
        env = {
            "PATH": sandbox_path(),
            "HOME": str(workdir),
            "TMPDIR": str(workdir),
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
    env.update(extra)
    if marker is not None:
        env[marker[0]] = marker[1]
    return env

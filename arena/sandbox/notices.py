"""What the sandbox tells its user once: a warning said once per process, and not again in the processes started
after a command printed it (a run's workers), through what it leaves in the environment (SHARED_VARIABLE)."""

from __future__ import annotations

import functools
import json
import logging
import os
import pwd
import sys
import threading
from pathlib import Path

from arena.sandbox import bwrap, command

log = logging.getLogger(__name__)

SHARED_VARIABLE = "ARENA_SANDBOX_PROBED"

_warned_lock = threading.Lock()
_warned: set[str] = set()


def inherited() -> dict[str, object]:
    """What a parent process found and said, if it looked with the same bwrap and the same user."""
    try:
        shared = json.loads(os.environ.get(SHARED_VARIABLE, ""))
    except ValueError:
        return {}
    if not isinstance(shared, dict) or shared.get("bwrap") != bwrap.bwrap_path() or shared.get("euid") != os.geteuid():
        return {}
    return shared


def share(answers: dict[str, str | None], told: list[str]) -> None:
    """Leave the probes' answers found so far, and what the caller is to say, to the processes started from here."""
    shared = inherited() or {"bwrap": bwrap.bwrap_path(), "euid": os.geteuid()}
    shared.update(answers)
    with _warned_lock:
        _warned.update(told)
        said = shared.get("told")
        shared["told"] = sorted(_warned | set(said if isinstance(said, list) else []))
    os.environ[SHARED_VARIABLE] = json.dumps(shared)


def warn_once(warning: str, *, per_machine: bool = False) -> None:
    """Log a warning the first time it applies in this process, unless resolve_level() returned it here or in a
    parent process (whose caller said it). `per_machine`: a fact of the machine that no run can change (no cgroup
    for an ordinary user): said once for this user on this machine, noted in its cache folder, then logged at
    debug level only (`arena doctor --sandbox` says it every time)."""
    said = inherited().get("told")
    with _warned_lock:
        if warning in _warned or (isinstance(said, list) and warning in said):
            return
        _warned.add(warning)
    if per_machine and not _first_on_this_machine(warning):
        log.debug("%s", warning)
        return
    log.warning("%s", warning)


def said_on_this_machine() -> Path:
    """Where the notices said once per machine are noted: the user's cache folder."""
    cache = os.environ.get("XDG_CACHE_HOME")
    if not cache:
        try:
            cache = str(Path(pwd.getpwuid(os.geteuid()).pw_dir) / ".cache")
        except KeyError:  # a user id without an account (a container's): its HOME, if any
            cache = str(Path(os.environ.get("HOME") or "/nonexistent") / ".cache")
    return Path(cache) / "loveletter-arena" / "notices-said"


def _first_on_this_machine(warning: str) -> bool:
    """Whether the warning was never noted here before; notes it. Where nothing can be noted, every run says it."""
    path = said_on_this_machine()
    try:
        said = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        if warning in said:
            return False
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as notes:
            notes.write(warning + "\n")
    except OSError:
        return True
    return True


def forget() -> None:
    """Forget what was said, here and in the environment (for tests, or after installing bubblewrap)."""
    python_out_of_reach.cache_clear()
    os.environ.pop(SHARED_VARIABLE, None)
    with _warned_lock:
        _warned.clear()


@functools.cache
def python_out_of_reach() -> Path | None:
    """The first closed directory between a bot's own UID and the arena's Python (a UID that owns nothing)."""
    for path in (Path(sys.executable), *bwrap.python_dirs()):
        blocked = command.blocked_for_others(path)
        if blocked is not None:
            return blocked
    return None


def own_uid_warning(what: str, closed: Path, problem: str) -> str:
    """ONE line: a root arena whose bots would not reach their files under a UID of their own runs them as root."""
    try:
        name = pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        name = str(os.geteuid())
    return (
        f"sandbox: {what} is out of reach of the bots' own user ids ({closed} is closed to other users), and the"
        f" arena cannot show it to them here ({problem}): such bots run as the arena's user, {name}, and may read"
        f" and write whatever it may; a folder others may enter (chmod o+x {closed}) gives them ids of their own"
    )

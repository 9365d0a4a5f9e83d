"""Which isolation level works on this machine, and what is lost when strict falls back to basic.

Both questions are answered by starting a real sandbox, once per process. resolve_level() (what a command
calls before its first bot) also leaves the answers, and the warnings it returned for its caller to print, in
the environment: the worker processes of a run, started afterwards, neither probe again nor repeat them.
"""

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
from arena.sandbox.spec import SandboxLevel

log = logging.getLogger(__name__)

SHARED_VARIABLE = "ARENA_SANDBOX_PROBED"

_warned_lock = threading.Lock()
_warned: set[str] = set()


def _inherited() -> dict[str, object]:
    """What a parent process found and said, if it looked with the same bwrap and the same user."""
    try:
        shared = json.loads(os.environ.get(SHARED_VARIABLE, ""))
    except ValueError:
        return {}
    if not isinstance(shared, dict) or shared.get("bwrap") != bwrap.bwrap_path() or shared.get("euid") != os.geteuid():
        return {}
    return shared


def _share(told: list[str]) -> None:
    """Leave the answers found so far, and what the caller is to say, to the processes started from here."""
    shared = _inherited() or {"bwrap": bwrap.bwrap_path(), "euid": os.geteuid()}
    if _strict_problem.cache_info().currsize:
        shared["strict"] = _strict_problem()
    if views_problem.cache_info().currsize:
        shared["views"] = views_problem()
    with _warned_lock:
        _warned.update(told)
        said = shared.get("told")
        shared["told"] = sorted(_warned | set(said if isinstance(said, list) else []))
    os.environ[SHARED_VARIABLE] = json.dumps(shared)


@functools.cache
def _strict_problem() -> str | None:
    """Why strict cannot run here, or None: found by starting one real strict sandbox."""
    shared = _inherited()
    if "strict" in shared:
        return shared["strict"] if isinstance(shared["strict"], str) else None
    from arena.sandbox.launcher import probe_strict  # the probe starts a bot; launcher.py imports this module

    return probe_strict()


@functools.cache
def views_problem() -> str | None:
    """Root only: why the child cannot show a bot's UID what is closed to it (views.py), or None."""
    shared = _inherited()
    if "views" in shared:
        return shared["views"] if isinstance(shared["views"], str) else None
    from arena.sandbox.launcher import probe_views

    return probe_views()


@functools.cache
def python_out_of_reach() -> Path | None:
    """The first closed directory between a bot's own UID and the arena's Python (a UID that owns nothing)."""
    for path in (Path(sys.executable), *bwrap.python_dirs()):
        blocked = command.blocked_for_others(path)
        if blocked is not None:
            return blocked
    return None


def reset() -> None:
    """Forget the probes' answers and what was said (for tests, or after installing bubblewrap)."""
    _strict_problem.cache_clear()
    views_problem.cache_clear()
    python_out_of_reach.cache_clear()
    os.environ.pop(SHARED_VARIABLE, None)
    with _warned_lock:
        _warned.clear()


def fallback_warning(problem: str) -> str:
    """ONE line saying what a basic bot is no longer isolated from."""
    if os.geteuid() == 0:
        shared = "the network, the file system (subject to permissions) and the process table"
    else:
        shared = "the network, the file system (subject to permissions), the process table and the arena's user ID"
    return f"sandbox: bubblewrap cannot run here ({problem}); falling back to basic: bots share {shared}"


def own_uid_warning(what: str, closed: Path, problem: str) -> str:
    """ONE line: a root arena whose bots would not reach their files under a UID of their own runs them as root."""
    try:
        name = pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        name = str(os.geteuid())
    return (
        f"sandbox: {what} is out of reach of the bots' own user ids ({closed} is closed to other users), and no"
        f" private mount namespace can be made here to show it to them ({problem}): such bots run as the"
        f" arena's user, {name}, and may read and write whatever it may"
    )


def resolve(requested: SandboxLevel) -> tuple[SandboxLevel, str | None]:
    """The level that works here for the one requested, and None or the fallback warning (for launch())."""
    if requested is not SandboxLevel.STRICT:
        return requested, None
    problem = _strict_problem()
    if problem is None:
        return SandboxLevel.STRICT, None
    return SandboxLevel.BASIC, fallback_warning(problem)


def resolve_level(requested: SandboxLevel) -> tuple[SandboxLevel, str | None]:
    """The level that works here for the one requested, and None or the warning, for the caller to say before
    any bot starts: one line for the fallback, and as root one more when bots must run as the arena's user."""
    level, fallback = resolve(requested)
    warnings = [fallback] if fallback else []
    if os.geteuid() == 0 and level is not SandboxLevel.NONE:
        closed = python_out_of_reach()
        problem = views_problem() if closed is not None else None
        if closed is not None and problem is not None:
            warnings.append(own_uid_warning("the arena's Python", closed, problem))
    if requested is not SandboxLevel.NONE:
        _share(warnings)
    return level, "\n".join(warnings) or None


def warn_once(warning: str) -> None:
    """Log a warning the first time it applies in this process, unless resolve_level() returned it here or in a
    parent process (whose caller said it)."""
    said = _inherited().get("told")
    with _warned_lock:
        if warning in _warned or (isinstance(said, list) and warning in said):
            return
        _warned.add(warning)
    log.warning("%s", warning)

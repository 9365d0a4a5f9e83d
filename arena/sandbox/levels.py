"""Which isolation level works on this machine, and what is lost when strict falls back to basic."""

from __future__ import annotations

import functools
import logging
import os
import threading

from arena.sandbox.spec import SandboxLevel

log = logging.getLogger(__name__)

_warned_lock = threading.Lock()
_warned: set[str] = set()


@functools.cache
def _strict_problem() -> str | None:
    """Why strict cannot run here, or None: found by starting one real strict sandbox, once per process."""
    from arena.sandbox.launcher import probe_strict  # the probe starts a bot; launcher.py imports this module

    return probe_strict()


def reset() -> None:
    """Forget the probe's answer (for tests, or after installing bubblewrap)."""
    _strict_problem.cache_clear()
    with _warned_lock:
        _warned.clear()


def fallback_warning(problem: str) -> str:
    """ONE line saying what a basic bot is no longer isolated from."""
    if os.geteuid() == 0:
        shared = "the network, the file system (subject to permissions) and the process table"
    else:
        shared = "the network, the file system (subject to permissions), the process table and the arena's user ID"
    return f"sandbox: bubblewrap cannot run here ({problem}); falling back to basic: bots share {shared}"


def resolve_level(requested: SandboxLevel) -> tuple[SandboxLevel, str | None]:
    """The level that works here for the one requested, and None or one warning line."""
    if requested is not SandboxLevel.STRICT:
        return requested, None
    problem = _strict_problem()
    if problem is None:
        return SandboxLevel.STRICT, None
    return SandboxLevel.BASIC, fallback_warning(problem)


def warn_once(warning: str) -> None:
    """Log a fallback warning the first time it applies in this process."""
    with _warned_lock:
        if warning in _warned:
            return
        _warned.add(warning)
    log.warning("%s", warning)

"""Which isolation level works on this machine, and what is lost when strict falls back to basic.

Both questions are answered by starting a real sandbox, once per process. resolve_level() (what a command
calls before its first bot) also leaves the answers, and the warnings it returned for its caller to print, in
the environment: the worker processes of a run, started afterwards, neither probe again nor repeat them.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
from pathlib import Path

from arena.sandbox import bwrap, confinement, launcher, notices
from arena.sandbox.errors import SandboxError
from arena.sandbox.process import BotProcess
from arena.sandbox.spec import LaunchSpec, SandboxLevel


def _share(told: list[str]) -> None:
    """Leave the probes' answers found so far, and what the caller is to say, to the processes started from here."""
    answers: dict[str, str | None] = {}
    if _strict_problem.cache_info().currsize:
        answers["strict"] = _strict_problem()
    if views_problem.cache_info().currsize:
        answers["views"] = views_problem()
    notices.share(answers, told)


@functools.cache
def _strict_problem() -> str | None:
    """Why strict cannot run here, or None: found by starting one real strict sandbox."""
    shared = notices.inherited()
    if "strict" in shared:
        return shared["strict"] if isinstance(shared["strict"], str) else None
    return probe_strict()


@functools.cache
def views_problem() -> str | None:
    """Root only: why the child cannot show a bot's UID what is closed to it (views.py), or None."""
    shared = notices.inherited()
    if "views" in shared:
        return shared["views"] if isinstance(shared["views"], str) else None
    return probe_views()


def reset() -> None:
    """Forget the probes' answers and what was said (for tests, or after installing bubblewrap)."""
    _strict_problem.cache_clear()
    views_problem.cache_clear()
    notices.forget()


def basic_shares() -> list[str]:
    """What a basic bot shares with the other bots and the arena on this machine (launcher.py's confinement)."""
    if os.geteuid() != 0:
        return ["the arena's user ID", *confinement.basic_gaps(namespaces=False)]
    namespaces = confinement.pid_namespaces_problem() is None and views_problem() is None
    return confinement.basic_gaps(namespaces=namespaces)


def fallback_warning(problem: str) -> str:
    """ONE line saying what a basic bot is no longer isolated from."""
    shared = basic_shares()
    rest = f"bots share {', '.join(shared)}" if shared else "bots are kept apart by Landlock, seccomp and their UIDs"
    return (
        f"sandbox: bubblewrap cannot run here ({problem}); falling back to basic: {rest}, and the kernel's"
        " counters that strict masks (`arena docs configuration`, Sandbox)"
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
        closed = notices.python_out_of_reach()
        problem = views_problem() if closed is not None else None
        if closed is not None and problem is not None:
            warnings.append(notices.own_uid_warning("the arena's Python", closed, problem))
    if requested is not SandboxLevel.NONE:
        _share(warnings)
    return level, "\n".join(warnings) or None


def launch(spec: LaunchSpec) -> BotProcess:
    """Start a bot at the requested level, or at the level that works here (the fallback is logged once)."""
    level, warning = resolve(spec.level)
    if warning:
        notices.warn_once(warning)
    return launcher.start(spec, level, views_problem)


def _probe(spec: LaunchSpec, level: SandboxLevel, probe: str) -> str | None:
    """Start spec and wait for it: None if it exits 0, else why not, in one phrase."""
    try:
        bot = launcher.start(spec, level, views_problem, probe=probe)
    except SandboxError as error:
        return str(error).removeprefix(f"cannot start bot command {spec.command[0]!r}: ").removeprefix("sandbox: ")
    with bot:
        code = bot.wait(10.0)
        if code == 0:
            return None
        if code is None:
            return "a test sandbox did not finish within 10 s"
        bot.exit_fault()  # waits for the end of its stderr
        lines = bot.stderr_tail().strip().splitlines()
        return lines[-1] if lines else f"a test sandbox exited with status {code}"


def probe(level: SandboxLevel) -> str | None:
    """Start one sandbox of exactly this level running `true`, now (a bot's start failed: was it the machine?):
    None if it runs, else why not, in one phrase."""
    if level is SandboxLevel.STRICT:
        return probe_strict()
    bot_dir = Path(tempfile.mkdtemp(prefix="arena-probe-"))
    try:
        bot_dir.chmod(0o755)
        return _probe(LaunchSpec(command=("true",), bot_dir=bot_dir), level, "again")
    finally:
        shutil.rmtree(bot_dir, ignore_errors=True)


def probe_strict() -> str | None:
    """Start one real strict sandbox running `true`: None if that works, else why not, in one phrase."""
    path = bwrap.bwrap_path()
    if path is None:
        return f"{bwrap.wanted()} not found"
    bot_dir = Path(tempfile.mkdtemp(prefix="arena-probe-"))
    try:
        bot_dir.chmod(0o755)
        problem = _probe(LaunchSpec(command=("true",), bot_dir=bot_dir), SandboxLevel.STRICT, "strict")
    finally:
        shutil.rmtree(bot_dir, ignore_errors=True)
    return None if problem is None else bwrap.explain_failure(problem, path)


def probe_views() -> str | None:
    """Root only: start one basic bot whose directory is closed to its UID (views.py): None if it runs."""
    bot_dir = Path(tempfile.mkdtemp(prefix="arena-probe-"))  # mode 0700
    try:
        return _probe(LaunchSpec(command=("true",), bot_dir=bot_dir), SandboxLevel.BASIC, "views")
    finally:
        shutil.rmtree(bot_dir, ignore_errors=True)

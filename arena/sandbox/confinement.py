"""What keeps sandboxed bots apart beyond their user ids, as this machine allows it, and what it cannot, said once.

strict: bwrap's namespaces, the seccomp filter (seccomp.py) and the masks over /proc (procview.py). basic: Landlock
(landlock.py), the same filter, and as root PID, IPC and network namespaces of its own. Both: sysinfo() answered
by the arena (sysinfo.py). The launcher asks here what a start gets; levels.py, what to warn of before any start.
"""

from __future__ import annotations

import functools
import socket
from collections.abc import Callable
from pathlib import Path

from arena.sandbox import child, landlock, notices, plans, procview, seccomp, sysinfo
from arena.sandbox.errors import SetupError
from arena.sandbox.limits import MIB
from arena.sandbox.spec import LaunchSpec, SandboxLevel


def answers_sysinfo(level: SandboxLevel) -> bool:
    """Whether the arena answers this bot's sysinfo() (sysinfo.py); where it cannot, that is said once."""
    if level is SandboxLevel.NONE:
        return False
    problem = sysinfo.available()
    if problem is not None:
        notices.warn_once(
            f"sandbox: the arena cannot answer bots' sysinfo() here ({problem}): it shows them the machine's free"
            " memory and process count, which bots can move to signal each other"
        )
    return problem is None


def sysinfo_setup(channel: int) -> tuple[bytes, int, int]:
    """What bootstrap.py needs to hand its sysinfo() to the arena: the filter, seccomp()'s number, the socket."""
    program, number = sysinfo.program(), sysinfo.seccomp_syscall()
    assert isinstance(program, bytes) and number is not None  # answers_sysinfo() said so
    return program, number, channel


def watch_sysinfo(channel: int, memory_bytes: int) -> None:
    """Take the listener the bot's start sent (before its exec, so it is there) and answer its sysinfo() calls."""
    try:
        with socket.socket(fileno=channel) as arena:
            arena.settimeout(child.START_TIMEOUT_S)
            _, listeners, _, _ = socket.recv_fds(arena, 16, 1)
    except OSError as error:
        raise SetupError(f"the bot's sysinfo listener did not reach the arena: {error}") from None
    if not listeners:
        raise SetupError("the bot's start sent no sysinfo listener")
    sysinfo.answerer.watch(listeners[0], memory_bytes)


def _seccomp_program(own_namespaces: bool) -> bytes | None:
    """The filter's program (seccomp.py), or None, said once, where libseccomp cannot make it."""
    program = seccomp.program(own_namespaces=own_namespaces)
    if isinstance(program, str):
        notices.warn_once(
            f"sandbox: no seccomp filter for bots here ({program}); bots can signal each other through file locks,"
            " inotify, sockets and namespaces, and one can use up the user's namespaces (install libseccomp2)"
        )
        return None
    return program


def strict_fds(give: Callable[[str, bytes], int], info: int, spec: LaunchSpec, base: Path) -> plans.StrictFds:
    """What bwrap reads at this start besides its info pipe: the seccomp filter and the /proc masks (procview.py).
    give: a descriptor of the child's holding the content named."""
    program = _seccomp_program(own_namespaces=True)
    seccomp_fd = give("seccomp", program) if program is not None else None
    laid = []
    for index, mask in enumerate(procview.masks(spec.limits.memory_mb * MIB)):
        fd = give(f"proc-{index}", mask.content) if mask.kind is procview.MaskKind.DATA else None
        laid.append((mask, fd))
    plans.empty_file(base).touch(mode=0o444)
    return plans.StrictFds(info=info, seccomp=seccomp_fd, proc=tuple(laid))


def basic_gaps(*, namespaces: bool) -> list[str]:
    """What a basic bot is not kept from here, as phrases: what this kernel's Landlock lacks, less what its own
    namespaces (root) or the seccomp filter hold instead."""
    gaps = landlock.missing(landlock_abi())
    if namespaces:
        gaps = [gap for gap in gaps if gap not in ("signals", "abstract unix sockets", "TCP on loopback")]
    elif "TCP on loopback" in gaps and not isinstance(seccomp.program(own_namespaces=False), str):
        gaps.remove("TCP on loopback")  # the filter allows it no socket but a Unix one
    return gaps


def basic(*, namespaces: bool) -> plans.Confinement:
    """What keeps a basic bot from the others here: namespaces (root, where mounts can be made), Landlock, seccomp;
    what is missing is said once."""
    abi = landlock_abi()
    gaps = basic_gaps(namespaces=namespaces)
    if gaps:
        have = f"Landlock ABI {abi}" if abi else "no Landlock"
        notices.warn_once(
            f"sandbox: this kernel has {have} (Linux 6.12 on has ABI 6): basic bots are not kept from"
            f" {', '.join(gaps)} (`arena docs configuration`, Sandbox)"
        )
    program = _seccomp_program(own_namespaces=namespaces)
    return plans.Confinement(landlock_abi=abi, seccomp=program, namespaces=namespaces)


@functools.cache
def pid_namespaces_problem() -> str | None:
    """Why basic bots cannot have PID namespaces of their own here (child.py), or None; asked once."""
    return child.pid_namespaces_problem()


@functools.cache
def landlock_abi() -> int:
    """The running kernel's Landlock ABI (0: none), asked once."""
    return landlock.abi()

"""The system calls a bot may not make: those through which two bots could signal each other via the kernel.

Namespaces keep apart what the kernel names per namespace; these calls reach what it shares between all processes:

- a file lock (fcntl's record and open-file-description locks, flock, leases) on any file two bots both see, such
  as a system file: one sets it, the other tests for it;
- inotify and fanotify watches on a file both see: one opens or reads it, the other is told;
- the kernel's key rings, whose quota is counted per user;
- cachestat (Linux 6.5), which tells whether a file's pages are in the page cache, and POSIX_FADV_DONTNEED, which
  evicts them so that a page-cache signal can be sent again;
- sockets other than Unix ones, for a bot without a network namespace of its own (basic without root): two bots
  on one loopback could talk over UDP, and netlink lets processes address each other by port.

A refused call fails with an error number a program expects from a kernel without the feature (ENOLCK, ENOSYS,
EACCES), never kills the bot: a runtime that tries a lock or a watch it can do without goes on. An fadvise that
would evict pages succeeds without doing anything, as advice may.

The filter is built with libseccomp (through pyseccomp, its ctypes binding), exported as the classic BPF program
the kernel loads, and installed by bwrap (strict) or by bootstrap.py (basic) right before the bot's exec. It covers
every ABI the machine's processes can call the kernel with (on x86_64 the 32-bit one too), so that a bot cannot go
round it through int 0x80; a call of an ABI it does not cover (x32) kills the bot. Where libseccomp is missing,
program() says why instead.
"""

from __future__ import annotations

import errno
import functools
import logging
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

F_SETLK, F_SETLKW, F_OFD_SETLK, F_OFD_SETLKW, F_SETLEASE = 6, 7, 37, 38, 1024
POSIX_FADV_DONTNEED = 4
AF_UNIX = 1
INT_MASK = 0xFFFF_FFFF
"""Arguments declared int: the kernel reads their low 32 bits, so a filter must compare no more (a bot could set
the upper half to slip past an exact 64-bit comparison)."""

COMPAT_ARCHES = {"X86_64": ("X86",), "AARCH64": ("ARM",)}
"""The other ABIs a native process may enter the kernel through, by the native ABI's pyseccomp name."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """One refused call: which, when (its argument `argument` masked equal to `value`, or always), and how."""

    syscall: str
    action: str  # "errno" (fail with error) or "succeed" (return 0, do nothing)
    error: int = 0
    argument: int | None = None
    value: int = 0
    negate: bool = False  # refuse when the argument is NOT value


def refusals(*, own_network: bool) -> tuple[Refusal, ...]:
    """What a bot may not call. own_network: it has a network namespace of its own (no other bot in it)."""
    locks = tuple(
        Refusal("fcntl", "errno", errno.ENOLCK, argument=1, value=command)
        for command in (F_SETLK, F_SETLKW, F_OFD_SETLK, F_OFD_SETLKW, F_SETLEASE)
    )
    always = (
        Refusal("flock", "errno", errno.ENOLCK),
        *(Refusal(name, "errno", errno.ENOSYS) for name in ("inotify_init", "inotify_init1", "fanotify_init")),
        *(Refusal(name, "errno", errno.ENOSYS) for name in ("add_key", "request_key", "keyctl", "cachestat")),
        Refusal("fadvise64", "succeed", argument=3, value=POSIX_FADV_DONTNEED),
    )
    network = (
        ()
        if own_network
        else (
            Refusal("socket", "errno", errno.EACCES, argument=0, value=AF_UNIX, negate=True),
            Refusal("socketcall", "errno", errno.EACCES),  # the 32-bit ABI's door to socket(), arguments unseen
        )
    )
    return locks + always + network


def _compat_locks() -> Iterator[Refusal]:
    """fcntl64: the 32-bit ABIs' name for fcntl."""
    for command in (F_SETLK, F_SETLKW, F_OFD_SETLK, F_OFD_SETLKW, F_SETLEASE):
        yield Refusal("fcntl64", "errno", errno.ENOLCK, argument=1, value=command)


@functools.cache
def program(*, own_network: bool) -> bytes | str:
    """The BPF program of the filter, or why none can be made here (one phrase)."""
    try:
        import pyseccomp
    except (ImportError, RuntimeError, OSError) as error:  # RuntimeError: "Unable to find libseccomp"
        return f"libseccomp cannot be loaded ({error})"
    try:
        chosen = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
        _add_arches(pyseccomp, chosen)
        for refusal in (*refusals(own_network=own_network), *_compat_locks()):
            _add(pyseccomp, chosen, refusal)
        with tempfile.TemporaryFile() as file:
            chosen.export_bpf(file)
            file.seek(0)
            return file.read()
    except OSError as error:
        return f"libseccomp cannot build the filter ({error})"


def _add_arches(pyseccomp: Any, chosen: Any) -> None:
    arch = pyseccomp.Arch
    native = pyseccomp.system_arch()
    names = {getattr(arch, name): name for name in dir(arch) if name.isupper()}
    for name in COMPAT_ARCHES.get(names.get(native, ""), ()):
        try:
            chosen.add_arch(getattr(arch, name))
        except OSError:  # libseccomp built without it: its calls then kill the process, as any unknown ABI's do
            log.debug("seccomp: ABI %s not added", name)


def _add(pyseccomp: Any, chosen: Any, refusal: Refusal) -> None:
    """Add one refusal; a call that this libseccomp does not know is skipped, as no program it serves makes it."""
    action = pyseccomp.ERRNO(0 if refusal.action == "succeed" else refusal.error)
    conditions = []
    if refusal.argument is not None and refusal.negate:
        # Refuse unless exactly value: a value with its upper half set is refused too, which is only safer.
        conditions.append(pyseccomp.Arg(refusal.argument, pyseccomp.NE, refusal.value))
    elif refusal.argument is not None:
        conditions.append(pyseccomp.Arg(refusal.argument, pyseccomp.MASKED_EQ, INT_MASK, refusal.value))
    try:
        chosen.add_rule(action, refusal.syscall, *conditions)
    except (OSError, ValueError) as error:
        log.debug("seccomp: %s not filtered (%s)", refusal.syscall, error)

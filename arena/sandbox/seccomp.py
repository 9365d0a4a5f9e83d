"""The system calls a bot may not make: those through which two bots could signal each other via the kernel.

Namespaces keep apart what the kernel names per namespace; these calls reach what it shares between all processes:

- a file lock (fcntl's record and open-file-description locks, flock, leases) on any file two bots both see, such
  as a system file: one sets it, the other tests for it;
- inotify, fanotify and directory notification (fcntl F_NOTIFY) on a file both see: one opens or reads it, the
  other is told;
- the kernel's key rings, whose quota is counted per user;
- what tells whether a file's pages are in the page cache without timing a read: mincore (the kernel answers it
  for the files the caller owns, and the arena's Python may be the arena user's own), cachestat (Linux 6.5), a
  read with RWF_NOWAIT, io_uring; and what evicts them so that a page-cache signal could be sent again:
  POSIX_FADV_DONTNEED, MADV_COLD, MADV_PAGEOUT;
- sockets other than Unix ones: two bots on one loopback (basic without root) could talk over UDP, netlink lets
  processes address each other by port, and even on a loopback of its own a bot moves the machine-wide memory of
  UDP and TCP that /proc/net/sockstat reports; a bot needs none (it speaks to the arena over a Unix socket);
- new namespaces (clone, unshare, setns; clone3, whose flags a filter cannot read, is refused whole: the C library
  falls back to clone);
- for a bot without an IPC namespace of its own (basic without root): System V IPC and POSIX message queues, which
  the kernel keeps per IPC namespace.

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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

F_SETLK, F_SETLKW, F_OFD_SETLK, F_OFD_SETLKW, F_SETLEASE, F_NOTIFY = 6, 7, 37, 38, 1024, 1026
LOCKS = (F_SETLK, F_SETLKW, F_OFD_SETLK, F_OFD_SETLKW, F_SETLEASE)
NEW_NAMESPACES = (0x20000, 0x2000000, 0x4000000, 0x8000000, 0x10000000, 0x20000000, 0x40000000, 0x80)
"""CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME: a bot makes no namespace. User
namespaces are counted for the arena's user however deeply they nest: a bot that made them until none was left
would make every other bot's start fail, and the arena's probe with it (a failure blamed on the machine)."""
POSIX_FADV_DONTNEED = 4
MADV_COLD, MADV_PAGEOUT = 20, 21
RWF_NOWAIT = 0x8
AF_UNIX = 1
INT_MASK = 0xFFFF_FFFF
"""Arguments declared int: the kernel reads their low 32 bits, so a filter must compare no more (a bot could set
the upper half to slip past an exact 64-bit comparison)."""

IPC = ("shmget", "semget", "msgget", "mq_open", "ipc")
"""System V IPC, POSIX message queues and the 32-bit ABI's door to both: names shared by every process outside an
IPC namespace (shared memory and semaphores of POSIX are files in /dev/shm, which Landlock closes)."""
READS = ("preadv2", "pwritev2")
"""Their flags (argument 5) may ask for RWF_NOWAIT: EAGAIN where the data is not cached, a page-cache probe."""
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
    mask: int = INT_MASK  # the bits of the argument compared (int arguments: the kernel reads the low half)


def refusals(*, own_namespaces: bool) -> tuple[Refusal, ...]:
    """What a bot may not call. own_namespaces: it has an IPC namespace of its own (no other bot in it)."""
    fcntl = tuple(
        Refusal(name, "errno", errno.ENOLCK, argument=1, value=command)
        for name in ("fcntl", "fcntl64")  # fcntl64: the 32-bit ABI's name
        for command in LOCKS
    ) + tuple(Refusal(name, "errno", errno.EINVAL, argument=1, value=F_NOTIFY) for name in ("fcntl", "fcntl64"))
    namespaces = (
        *(
            Refusal(name, "errno", errno.EPERM, argument=0, value=flag, mask=flag)
            for name in ("clone", "unshare")
            for flag in NEW_NAMESPACES
        ),
        Refusal("clone3", "errno", errno.ENOSYS),
        Refusal("setns", "errno", errno.EPERM),
    )
    always = (
        Refusal("flock", "errno", errno.ENOLCK),
        *(Refusal(name, "errno", errno.ENOSYS) for name in ("inotify_init", "inotify_init1", "fanotify_init")),
        *(Refusal(name, "errno", errno.ENOSYS) for name in ("add_key", "request_key", "keyctl")),
        *(Refusal(name, "errno", errno.ENOSYS) for name in ("mincore", "cachestat", "io_uring_setup")),
        *(Refusal(name, "errno", errno.EOPNOTSUPP, argument=5, value=RWF_NOWAIT, mask=RWF_NOWAIT) for name in READS),
        Refusal("fadvise64", "succeed", argument=3, value=POSIX_FADV_DONTNEED),
        *(Refusal("madvise", "succeed", argument=2, value=advice) for advice in (MADV_COLD, MADV_PAGEOUT)),
        Refusal("socket", "errno", errno.EACCES, argument=0, value=AF_UNIX, negate=True),
        Refusal("socketcall", "errno", errno.EACCES),  # the 32-bit ABI's door to socket(), arguments unseen
    )
    ipc = () if own_namespaces else tuple(Refusal(name, "errno", errno.ENOSYS) for name in IPC)
    return fcntl + namespaces + always + ipc


@functools.cache
def program(*, own_namespaces: bool) -> bytes | str:
    """The BPF program of the filter, or why none can be made here (one phrase)."""

    def add(pyseccomp: Any, chosen: Any) -> None:
        for refusal in refusals(own_namespaces=own_namespaces):
            _add(pyseccomp, chosen, refusal)

    return build(add)


def build(add: Callable[[Any, Any], None]) -> bytes | str:
    """A filter that allows every call but those add() adds rules for, on every ABI of this machine, as the BPF
    program the kernel loads; or why libseccomp cannot make it, in one phrase."""
    try:
        import pyseccomp
    except (ImportError, RuntimeError, OSError) as error:  # RuntimeError: "Unable to find libseccomp"
        return f"libseccomp cannot be loaded ({error})"
    try:
        chosen = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
        _add_arches(pyseccomp, chosen)  # a call of another ABI would be allowed, or (unknown to it) kill the bot
        add(pyseccomp, chosen)
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
        conditions.append(pyseccomp.Arg(refusal.argument, pyseccomp.MASKED_EQ, refusal.mask, refusal.value))
    try:
        chosen.add_rule(action, refusal.syscall, *conditions)
    except (OSError, ValueError) as error:
        log.debug("seccomp: %s not filtered (%s)", refusal.syscall, error)

"""The few Linux calls Python's os module lacks (prctl, unshare, mount), through ctypes.

Standard library only: bootstrap.py, which runs without the arena package, loads this file by its path.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import struct

PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_SET_MODE_FILTER = 1
SECCOMP_FILTER_FLAG_NEW_LISTENER = 8
CLONE_NEWIPC = 0x08000000
CLONE_NEWNET = 0x40000000
CLONE_NEWPID = 0x20000000
PR_SET_CHILD_SUBREAPER = 36
CLONE_NEWNS = 0x00020000
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_RDONLY = 0x1
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18


@functools.cache
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    ulong, char_p = ctypes.c_ulong, ctypes.c_char_p
    libc.prctl.argtypes = [ctypes.c_int, ulong, ulong, ulong, ulong]
    libc.unshare.argtypes = [ctypes.c_int]
    libc.mount.argtypes = [char_p, char_p, char_p, ulong, ctypes.c_void_p]
    libc.setns.argtypes = [ctypes.c_int, ctypes.c_int]
    return libc


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def set_parent_death_signal(signum: int) -> None:
    """Ask the kernel to send signum to this process when the thread that forked it exits."""
    _check(_libc().prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")


def become_child_subreaper() -> None:
    """Make orphaned descendants re-parent to this process, so none escapes the arena's wait."""
    _check(_libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), "prctl(PR_SET_CHILD_SUBREAPER)")


def private_mount_namespace() -> None:
    """Give this process a mount namespace of its own whose mounts never propagate back to the host."""
    _check(_libc().unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _check(_libc().mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "mount(/, MS_PRIVATE)")


def bind_mount(source: bytes, target: bytes) -> None:
    """Bind source on target (recursively) in the current mount namespace."""
    _check(_libc().mount(source, target, None, MS_BIND | MS_REC, None), f"bind mount {source!r}")


def read_only(target: bytes, flags: int) -> None:
    """Show target read-only in the current mount namespace: bound on itself with what is mounted under it, then
    that bind remounted read-only (the mounts under it keep their own flags). flags: the MS_NOSUID, MS_NODEV,
    MS_NOEXEC it has, which a remount must repeat."""
    bind_mount(target, target)
    remount = MS_REMOUNT | MS_BIND | MS_RDONLY | flags
    _check(_libc().mount(b"none", target, None, remount, None), f"remount {target!r} read-only")


def mount_tmpfs(target: bytes, options: bytes, *, executable: bool = False) -> None:
    """Mount a fresh tmpfs on target: no set-user-ID programs or devices, and no programs unless executable."""
    flags = MS_NOSUID | MS_NODEV | (0 if executable else MS_NOEXEC)
    _check(_libc().mount(b"tmpfs", target, b"tmpfs", flags, options), f"mount tmpfs on {target!r}")


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install_seccomp(program: bytes) -> None:
    """Load a seccomp filter (seccomp.py's classic BPF program, 8 bytes an instruction) on this process."""
    _check(_libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
    code = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(code, ctypes.c_void_p))
    _check(_libc().prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0), "prctl(PR_SET_SECCOMP)")


def install_listener(program: bytes, seccomp_number: int) -> int:
    """Load a seccomp filter whose notifications go to a new listener: its descriptor (close-on-exec)."""
    _check(_libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
    code = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(code, ctypes.c_void_p))
    libc = _libc()
    fd = libc.syscall(seccomp_number, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, ctypes.byref(fprog))
    if fd < 0:
        _check(-1, "seccomp(SECCOMP_FILTER_FLAG_NEW_LISTENER)")
    return int(fd)


def unshare(flags: int, what: str) -> None:
    """Give this process (for CLONE_NEWPID: its next child) new namespaces of the kinds in flags."""
    _check(_libc().unshare(flags), f"unshare({what})")


def setns(fd: int, kind: int, what: str) -> None:
    """Enter the namespace fd names (for CLONE_NEWPID: the namespace of this thread's next children)."""
    _check(_libc().setns(fd, kind), f"setns({what})")


MOUNT_SETATTR = 442  # the same number on every architecture
AT_FDCWD, AT_RECURSIVE, MOUNT_ATTR_RDONLY = -100, 0x8000, 0x1


def read_only_tree(target: bytes) -> bool:
    """Make target and every mount under it read-only in the current mount namespace (Linux 5.12 on): False
    where the kernel cannot, and nothing is changed."""
    attr = ctypes.create_string_buffer(struct.pack("QQQQ", MOUNT_ATTR_RDONLY, 0, 0, 0))
    libc = _libc()
    result = libc.syscall(MOUNT_SETATTR, AT_FDCWD, target, AT_RECURSIVE, attr, ctypes.c_size_t(32))
    if result != 0 and ctypes.get_errno() == errno.ENOSYS:
        return False
    _check(result, f"mount_setattr({target!r}, read-only)")
    return True


def mount_proc(target: bytes) -> None:
    """A fresh proc on target, showing the processes of the caller's PID namespace."""
    _check(_libc().mount(b"proc", target, b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None), "mount proc")

"""Landlock (Linux 5.13 on): what a basic bot may reach, enforced by the kernel without privileges.

A basic bot has no mount or user namespace of its own, so every file its UID may read is there for it to read:
the tournament's YAML file, its output folder, other bots' directories, and every process's /proc. Landlock keeps
a process and all it starts to the paths its rules name. A basic bot's rules (rules()) name the system's
directories, the arena's Python and the bot's own program and directory, all read-only; its workdir, writable;
its own /proc entry; and the few devices a program opens. ABI 4 (Linux 6.7) adds TCP: neither bind nor connect is
allowed. ABI 6 (Linux 6.12) scopes abstract Unix sockets and signals to the bot's own domain: it can neither
connect to another bot's abstract socket nor signal a process outside its own tree. Landlock also keeps ptrace,
and with it /proc/PID/environ, mem, fd and maps, to processes inside the domain.

No rule lets a bot create a Unix socket in the file system: two bots could otherwise meet at one, as connect() is
outside what Landlock mediates.

Standard library only: bootstrap.py, which runs without the arena package, loads this file by its path and calls
restrict(); the arena calls abi() and rules().
"""

from __future__ import annotations

import ctypes
import functools
import os
import stat
import struct

CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446  # the same number on every architecture
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1, 2, 4, 8
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG = 16, 32, 64, 128, 256
MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 512, 1024, 2048, 4096
REFER, TRUNCATE, IOCTL_DEV = 8192, 16384, 32768
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1, 2

FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
"""The rights a rule on a file (not a directory) may hold."""
READ = EXECUTE | READ_FILE | READ_DIR
DEVICE = READ_FILE | WRITE_FILE | TRUNCATE | IOCTL_DEV
WORKDIR = (EXECUTE | WRITE_FILE | READ_FILE | READ_DIR | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG | MAKE_FIFO) | (
    MAKE_SYM | REFER | TRUNCATE
)
"""Everything in its own space but making sockets and device nodes."""
OWN_PROC = READ_FILE | READ_DIR | WRITE_FILE

SCOPES = {"abstract unix sockets": (6, SCOPE_ABSTRACT_UNIX_SOCKET), "signals": (6, SCOPE_SIGNAL)}
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
OWN_PROC_PATH = "/proc/self"
"""Opened by the child itself, so that the rule names its own /proc entry (the bot's, after exec)."""


def _fs_rights(abi: int) -> int:
    """Every file-system right the kernel of this ABI knows: all of them are handled, so none is left open."""
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


@functools.cache
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi() -> int:
    """The Landlock ABI of the running kernel: 0 where it has none, or has it switched off."""
    version = _libc().syscall(CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    return max(int(version), 0)


def rules(read_only: list[bytes], writable: list[bytes], devices: tuple[str, ...] = DEVICES) -> list[tuple[bytes, int]]:
    """The (path, rights) of a basic bot's rules, for restrict(): paths that do not exist are left out there."""
    found = [(path, READ) for path in read_only]
    found += [(path, WORKDIR) for path in writable]
    found += [(os.fsencode(path), DEVICE) for path in devices]
    found.append((os.fsencode(OWN_PROC_PATH), OWN_PROC))
    return found


def restrict(version: int, chosen: list[tuple[bytes, int]]) -> None:
    """Confine this process and everything it starts to the chosen paths (bootstrap.py, right before exec).

    The descriptor of the process's own /proc entry is kept open across exec, as the rule's anchor: a /proc entry
    whose dentry the kernel drops is made anew as another inode, which the rule would no longer name.
    """
    libc = _libc()
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        _raise("prctl(PR_SET_NO_NEW_PRIVS)")
    handled = _fs_rights(version)
    net = NET_BIND_TCP | NET_CONNECT_TCP if version >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if version >= 6 else 0
    attr = struct.pack("QQQ", handled, net, scoped)[: 8 if version < 4 else 16 if version < 6 else 24]
    ruleset = libc.syscall(CREATE_RULESET, attr, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if ruleset < 0:
        _raise("landlock_create_ruleset")
    try:
        for path, rights in chosen:
            _add_rule(libc, ruleset, path, rights & handled)
        if libc.syscall(RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            _raise("landlock_restrict_self")
    finally:
        os.close(ruleset)


def _add_rule(libc: ctypes.CDLL, ruleset: int, path: bytes, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | (0 if path == os.fsencode(OWN_PROC_PATH) else os.O_CLOEXEC))
    except (FileNotFoundError, PermissionError, NotADirectoryError):  # out of the bot's reach already
        return
    if not stat.S_ISDIR(os.fstat(fd).st_mode):
        rights &= FILE_RIGHTS
    beneath = struct.pack("=Qi", rights, fd)
    result = libc.syscall(ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(RULE_PATH_BENEATH), beneath, ctypes.c_uint32(0))
    if path != os.fsencode(OWN_PROC_PATH):
        os.close(fd)
    if result != 0:
        _raise(f"landlock_add_rule({os.fsdecode(path)})")


def _raise(what: str) -> None:
    error = ctypes.get_errno()
    raise OSError(error, f"{what}: {os.strerror(error)}")


def missing(version: int) -> list[str]:
    """What a basic bot is not kept from on a kernel of this Landlock ABI, as phrases (empty: nothing)."""
    if version < 1:
        return ["other bots' and the arena's files", "every process's /proc", "signals", "abstract unix sockets"]
    gaps = [what for what, (needed, _) in SCOPES.items() if version < needed]
    if version < 4:
        gaps.append("TCP on loopback")
    return gaps

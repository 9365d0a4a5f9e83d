"""The sysinfo() system call of a sandboxed bot, answered by the arena with the same static figures procview.py puts
in /proc.

sysinfo() reports the whole machine: free and shared memory (a bot's tmpfs is shared memory), the count of all
processes, the load. A bot moves these by what it holds, and they stay moved while it is frozen: another bot could
read them as a message. Refusing the call is no answer: the C library's sysconf(_SC_PHYS_PAGES) and
_SC_AVPHYS_PAGES, which runtimes size their heaps by, do not check its result and would read garbage.

So each bot gets a seccomp filter whose action for sysinfo is to notify a listener (seccomp user notification,
Linux 5.0): bootstrap.py installs it last, hands the listener's descriptor to the arena over a socket, and one
thread of the arena's (Answerer) writes the bot's figures into the caller's memory and lets the call return 0.
The figures: memory as the bot's limit, all of it free, no swap, one process, no load, and the machine's uptime at
the arena's start.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import functools
import logging
import os
import platform
import select
import struct
import threading

from arena.sandbox import procview, seccomp

log = logging.getLogger(__name__)

SECCOMP_SYSCALL = {"x86_64": 317, "aarch64": 277}
"""The seccomp() system call's number by machine; elsewhere sysinfo() is not answered (available() says why)."""
SECCOMP_GET_ACTION_AVAIL = 2
SECCOMP_RET_USER_NOTIF = 0x7FC0_0000
NOTIF_RECV, NOTIF_SEND, NOTIF_ID_VALID = 0xC050_2100, 0xC018_2101, 0x4008_2102
NOTIF_SIZE = 80  # struct seccomp_notif: id, pid, flags, and struct seccomp_data (nr, arch, ip, args[6])
AUDIT_ARCH_64BIT = 0x8000_0000
NATIVE_LAYOUT = "=q3Q6QHH4x2QI4x"  # struct sysinfo of a 64-bit process: 112 bytes
COMPAT_LAYOUT = "=i3I6IHH2II8x"  # of a 32-bit one: 64 bytes


def seccomp_syscall() -> int | None:
    return SECCOMP_SYSCALL.get(platform.machine())


@functools.cache
def available() -> str | None:
    """Why the arena cannot answer bots' sysinfo() here, or None."""
    number = seccomp_syscall()
    if number is None:
        return f"no seccomp() number known for {platform.machine()}"
    libc = ctypes.CDLL(None, use_errno=True)
    action = ctypes.c_uint32(SECCOMP_RET_USER_NOTIF)
    if libc.syscall(number, SECCOMP_GET_ACTION_AVAIL, 0, ctypes.byref(action)) != 0:
        return f"the kernel has no seccomp user notification ({os.strerror(ctypes.get_errno())})"
    if isinstance(program(), str):
        return str(program())
    return None


@functools.cache
def program() -> bytes | str:
    """The filter that hands sysinfo() to the listener, or why libseccomp cannot make it."""
    return seccomp.build(lambda pyseccomp, chosen: chosen.add_rule(pyseccomp.NOTIFY, "sysinfo"))


def figures(memory_bytes: int, compat: bool) -> bytes:
    """struct sysinfo as a bot is shown it, in the layout of its ABI."""
    uptime = int(float(procview.uptime()))
    memory = memory_bytes if not compat else min(memory_bytes, 0xFFFF_FFFF)
    values = (uptime, 0, 0, 0, memory, memory, 0, 0, 0, 0, 1, 0, 0, 0, 1)
    return struct.pack(COMPAT_LAYOUT if compat else NATIVE_LAYOUT, *values)


class _Iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("length", ctypes.c_size_t)]


@functools.cache
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.process_vm_writev.restype = ctypes.c_ssize_t
    libc.process_vm_writev.argtypes = [
        ctypes.c_int,
        ctypes.POINTER(_Iovec),
        ctypes.c_ulong,
        ctypes.POINTER(_Iovec),
        ctypes.c_ulong,
        ctypes.c_ulong,
    ]
    return libc


def _write(pid: int, address: int, data: bytes) -> bool:
    """Write data at address in process pid; False if it cannot be (a bad pointer, a process gone)."""
    buffer = ctypes.create_string_buffer(data, len(data))
    local = _Iovec(ctypes.cast(buffer, ctypes.c_void_p), len(data))
    remote = _Iovec(address, len(data))
    written = _libc().process_vm_writev(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
    return written == len(data)


def answer(listener: int, memory_bytes: int) -> None:
    """Answer one notification waiting on listener."""
    notification = bytearray(NOTIF_SIZE)
    try:
        fcntl.ioctl(listener, NOTIF_RECV, notification)
    except OSError as error:  # ENOENT: the caller was interrupted and is gone
        log.debug("sandbox: sysinfo notification not received: %s", error)
        return
    ident, pid, _flags, _nr, arch, _ip, address = struct.unpack_from("=QIIiIQQ", notification)
    compat = not arch & AUDIT_ARCH_64BIT
    written = _write(pid, address, figures(memory_bytes, compat))
    try:
        fcntl.ioctl(listener, NOTIF_ID_VALID, struct.pack("=Q", ident))  # pid still names the caller: it wrote there
        reply = struct.pack("=QqiI", ident, 0, 0 if written else -errno.EFAULT, 0)
        fcntl.ioctl(listener, NOTIF_SEND, reply)
    except OSError as error:
        log.debug("sandbox: sysinfo notification not answered: %s", error)


class Answerer:
    """One thread per arena process, polling every bot's listener; a listener whose bot is gone is closed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: dict[int, int] = {}  # fd -> the bot's memory limit
        self._pid: int | None = None
        self._wake_read = self._wake_write = -1

    def watch(self, listener: int, memory_bytes: int) -> None:
        """Answer the sysinfo() calls of the bot behind listener from now on (the listener is closed here)."""
        with self._lock:
            if self._pid != os.getpid():  # first use, or a forked child: a thread of its own
                self._pid = os.getpid()
                self._listeners = {}
                self._wake_read, self._wake_write = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
                threading.Thread(target=self._serve, name="arena-sandbox-sysinfo", daemon=True).start()
            self._listeners[listener] = memory_bytes
            with contextlib.suppress(BlockingIOError):
                os.write(self._wake_write, b"x")

    def _serve(self) -> None:
        poller = select.poll()
        watched: set[int] = set()
        poller.register(self._wake_read, select.POLLIN)
        while True:
            with self._lock:
                current = dict(self._listeners)
            for fd in current.keys() - watched:
                poller.register(fd, select.POLLIN)
                watched.add(fd)
            for fd, events in poller.poll():
                if fd == self._wake_read:
                    with contextlib.suppress(BlockingIOError):
                        os.read(fd, 4096)
                elif events & select.POLLIN:
                    answer(fd, current[fd])
                elif events & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
                    poller.unregister(fd)
                    watched.discard(fd)
                    with self._lock:
                        self._listeners.pop(fd, None)
                    os.close(fd)


answerer = Answerer()

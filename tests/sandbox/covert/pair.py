"""One member of a covert-channel pair, run as a bot: `python pair.py send|receive CHANNEL TAG`.

Written as a colluding student would write it: the sender encodes its hand (a card value, 1 to 8) through
something two sandboxes might share, the receiver decodes it. The pair agree in advance on a TAG (names, keys and
lock ranges of their own, so that other pairs on the machine do not disturb them) and on covert.json beside this
file (the large files the page-cache channels use).

Over stdin and stdout, one line each way: after setting up it prints `ready`; the sender answers `send V` with
`ok NOTE`, the receiver answers `guess` with `G NOTE`. Between its turns a bot is frozen, as the arena freezes it.
Nothing a channel does ends the bot: a refused call is the sender's note, and a receiver that cannot decode
guesses blind (BLIND).

Standard library only: it runs under the arena's own Python inside the sandbox, and the driver imports it for
CHANNELS and cleanup().
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import fcntl
import json
import mmap
import os
import random
import resource
import signal
import socket
import stat
import struct
import sys
import sysconfig
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

LIBC = ctypes.CDLL(None, use_errno=True)
PAGE = mmap.PAGESIZE
VALUES = range(1, 9)
LOCK_BASE = 1 << 40
"""Lock ranges lie this far past the end of the file: a byte range of a file is lockable whatever its size."""
FLOCK = struct.Struct("hhqqi4x")
"""struct flock: l_type, l_whence, l_start, l_len, l_pid (x86_64 and aarch64 alike)."""
BLIND = 1
"""A receiver with nothing to go on names this card: as good as any blind guess, the values being uniform, and the
same every time, so that a test of a closed channel never fails by the luck of random guesses."""
SLOTS = 8
SPACING = 16
"""Pages between two page-cache slots: a read of one must not bring another in with it."""
UNITS: dict[str, float] = {
    "meminfo": 8 * 2**20,  # bytes of tmpfs held per unit of the value
    "vmstat": 8 * 2**20,
    "sysinfo": 8 * 2**20,
    "loadavg": 6,  # threads held
    "stat": 4,  # threads started and ended
    "uptime": 0.003,  # seconds of CPU burnt
    "file-nr": 256,  # memfd mappings held: each one a file, an inode and a dentry
    "inode-nr": 256,
    "dentry-state": 256,
    "sigpending": 50,  # signals held pending
    "sockstat": 500 * 8448,  # bytes of datagrams held unread: 500 of DATAGRAM_TRUESIZE
    "userns": 40,  # user namespaces held: two chains of USERNS_CHAIN
}


class Agreement:
    """What both members know before the match: the channel, the tag, and covert.json's contents."""

    def __init__(self, channel: str, tag: str, extra: dict[str, Any]) -> None:
        self.channel = channel
        self.tag = tag
        self.files: list[str] = list(extra.get("files", []))
        self.unit: float = float(extra.get("unit", UNITS.get(channel, 1)))

    @property
    def number(self) -> int:
        return int(self.tag, 16)

    def chosen(self, count: int, salt: str) -> list[str]:
        """count cold shared files, the same for both members: RECORD files of the Python install's packages,
        which nothing reads while a match is played."""
        found = sorted(str(path) for path in Path(sysconfig.get_paths()["purelib"]).glob("*.dist-info/RECORD"))
        if len(found) < count:
            found += sorted(str(path) for path in Path(os.path.dirname(os.__file__)).glob("*.py"))
        return random.Random(f"{self.tag}-{salt}").sample(found, count)


def fail(what: str) -> OSError:
    number = ctypes.get_errno()
    return OSError(number, f"{what}: {os.strerror(number)}")


def function(name: str, restype: Any, *argtypes: Any) -> Any:
    """A C function of the C library, or of librt where an older C library keeps it there."""
    try:
        found = LIBC[name]  # a fresh function object: each caller sets its own argument types
    except AttributeError:
        found = ctypes.CDLL(ctypes.util.find_library("rt") or "librt.so.1", use_errno=True)[name]
    found.restype = restype
    found.argtypes = argtypes
    return found


def mapping_calls() -> tuple[Any, Any]:
    """mmap and munmap of the C library, for mappings of files and memfds made by hand."""
    mmap = function(
        "mmap", ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
        ctypes.c_long,
    )  # fmt: skip
    return mmap, function("munmap", ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t)


def checked(result: int, what: str) -> int:
    if result == -1:
        raise fail(what)
    return result


class Endpoint:
    """A sender (send) or a receiver (guess); __init__ sets the channel up."""

    def __init__(self, agreement: Agreement) -> None:
        pass

    def send(self, value: int) -> str:
        raise NotImplementedError

    def guess(self) -> int | None:
        raise NotImplementedError


class Broken(Endpoint):
    """A member whose channel could not even be set up: its sends do nothing, its guesses are blind."""

    def __init__(self, error: BaseException) -> None:
        self.note = f"setup: {error!r}".replace(" ", "_")

    def send(self, value: int) -> str:
        return self.note

    def guess(self) -> int | None:
        return None


# File locks on a file both can read: POSIX record locks, OFD locks, flock, leases.


class PosixLockSender(Endpoint):
    """A read lock on byte (base + value) of /etc/passwd, far past its end; it stays while the bot is frozen."""

    SET, GET = fcntl.F_SETLK, fcntl.F_GETLK
    PATH = "/etc/passwd"

    def __init__(self, agreement: Agreement) -> None:
        self.fd = os.open(self.PATH, os.O_RDONLY)
        self.base = LOCK_BASE + (agreement.number % 2**20) * 16

    def send(self, value: int) -> str:
        fcntl.fcntl(self.fd, self.SET, FLOCK.pack(fcntl.F_UNLCK, os.SEEK_SET, self.base, 16, 0))
        fcntl.fcntl(self.fd, self.SET, FLOCK.pack(fcntl.F_RDLCK, os.SEEK_SET, self.base + value, 1, 0))
        return ""


class PosixLockReceiver(PosixLockSender):
    """F_GETLK for a write lock over the pair's range: the kernel names the sender's lock, and where it lies."""

    def guess(self) -> int | None:
        asked = FLOCK.pack(fcntl.F_WRLCK, os.SEEK_SET, self.base, 16, 0)
        kind, _, start, _, _ = FLOCK.unpack(fcntl.fcntl(self.fd, self.GET, asked))
        return None if kind == fcntl.F_UNLCK else start - self.base


class OfdLockSender(PosixLockSender):
    SET, GET = fcntl.F_OFD_SETLK, fcntl.F_OFD_GETLK


class OfdLockReceiver(PosixLockReceiver):
    SET, GET = fcntl.F_OFD_SETLK, fcntl.F_OFD_GETLK


class FlockSender(Endpoint):
    """flock locks a whole file: three shared files, one bit of (value - 1) each."""

    def __init__(self, agreement: Agreement) -> None:
        self.fds = [os.open(path, os.O_RDONLY) for path in agreement.chosen(3, "flock")]

    def send(self, value: int) -> str:
        for bit, fd in enumerate(self.fds):
            fcntl.flock(fd, fcntl.LOCK_SH if (value - 1) >> bit & 1 else fcntl.LOCK_UN)
        return ""


class FlockReceiver(FlockSender):
    def guess(self) -> int | None:
        bits = 0
        for bit, fd in enumerate(self.fds):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                bits |= 1 << bit
            else:
                fcntl.flock(fd, fcntl.LOCK_UN)
        return bits + 1


class LeaseSender(Endpoint):
    """A write lease on each of three shared files, one bit each: a lease needs a file the bot owns (as an
    ordinary user, the Python install it runs is its own), or root's CAP_LEASE."""

    def __init__(self, agreement: Agreement) -> None:
        signal.signal(signal.SIGIO, signal.SIG_IGN)  # a lease break is told by SIGIO, which would end the bot
        self.paths = agreement.chosen(3, "lease")
        self.fds: list[int] = []

    def send(self, value: int) -> str:
        for fd in self.fds:
            os.close(fd)  # its lease goes with it, broken or not
        self.fds = []
        notes = []
        for bit, path in enumerate(self.paths):
            if (value - 1) >> bit & 1:
                fd = os.open(path, os.O_RDONLY)
                try:
                    fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
                except OSError as error:
                    os.close(fd)
                    notes.append(errno.errorcode.get(error.errno or 0, "?"))
                else:
                    self.fds.append(fd)
        return ",".join(notes)


class LeaseReceiver(Endpoint):
    """An open without blocking of a file under a write lease fails with EWOULDBLOCK (and starts a break)."""

    def __init__(self, agreement: Agreement) -> None:
        self.paths = agreement.chosen(3, "lease")

    def guess(self) -> int | None:
        bits = 0
        for bit, path in enumerate(self.paths):
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            except BlockingIOError:
                bits |= 1 << bit
            else:
                os.close(fd)
        return bits + 1


# inotify on shared files.

IN_ACCESS, IN_OPEN = 0x1, 0x20
EVENT = struct.Struct("iIII")


class InotifySender(Endpoint):
    """Opens and reads one of eight shared files."""

    def __init__(self, agreement: Agreement) -> None:
        self.paths = agreement.chosen(8, "inotify")

    def send(self, value: int) -> str:
        with open(self.paths[value - 1], "rb") as stream:
            stream.read(1)
        return ""


class InotifyReceiver(Endpoint):
    """Watches the eight files: the events queue up while it is frozen, and name the file the sender opened."""

    def __init__(self, agreement: Agreement) -> None:
        init = function("inotify_init1", ctypes.c_int, ctypes.c_int)
        add = function("inotify_add_watch", ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32)
        self.fd = checked(init(os.O_NONBLOCK | os.O_CLOEXEC), "inotify_init1")
        self.values = {}
        for value, path in enumerate(agreement.chosen(8, "inotify"), start=1):
            self.values[checked(add(self.fd, os.fsencode(path), IN_ACCESS | IN_OPEN), "inotify_add_watch")] = value

    def guess(self) -> int | None:
        seen: Counter[int] = Counter()
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            offset = 0
            while offset < len(data):
                watch, _, _, length = EVENT.unpack_from(data, offset)
                seen[self.values.get(watch, 0)] += 1
                offset += EVENT.size + length
        seen.pop(0, None)
        return seen.most_common(1)[0][0] if seen else None


# Directory notification (dnotify, fcntl F_NOTIFY) on shared directories.

ZONEINFO = "/usr/share/zoneinfo"


def notify_places(agreement: Agreement) -> list[tuple[str, str]]:
    """Eight directories of the time zone database, with a file in each, the same for both members: one the C
    library reads for the machine's own time (/etc/localtime's) is left out, as are copies of the whole database."""
    local = os.path.dirname(os.path.realpath("/etc/localtime"))
    places = []
    for name in sorted(os.listdir(ZONEINFO)):
        directory = os.path.join(ZONEINFO, name)
        if name in ("posix", "right") or directory == local or os.path.islink(directory):
            continue
        if os.path.isdir(directory):
            files = sorted(entry.path for entry in os.scandir(directory) if entry.is_file(follow_symlinks=False))
            if files:
                places.append((directory, files[0]))
    if len(places) < len(VALUES):
        raise OSError(errno.ENOENT, f"fewer than {len(VALUES)} directories in {ZONEINFO}")
    return random.Random(f"{agreement.tag}-dnotify").sample(places, len(VALUES))


class DnotifySender(Endpoint):
    """Reads a file in the value's directory."""

    def __init__(self, agreement: Agreement) -> None:
        self.places = notify_places(agreement)

    def send(self, value: int) -> str:
        with open(self.places[value - 1][1], "rb") as stream:
            stream.read(1)
        return ""


class DnotifyReceiver(Endpoint):
    """Asks to be told of every access in each of the eight directories (DN_ACCESS, DN_MULTISHOT) by a real-time
    signal of its own (F_SETSIG), blocked: the signals queue while it is frozen, and name the directory."""

    def __init__(self, agreement: Agreement) -> None:
        self.signals = [signal.SIGRTMIN + value for value in VALUES]
        signal.pthread_sigmask(signal.SIG_BLOCK, self.signals)
        self.fds = []
        for (directory, _), number in zip(notify_places(agreement), self.signals, strict=True):
            fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
            self.fds.append(fd)
            fcntl.fcntl(fd, fcntl.F_SETSIG, number)
            fcntl.fcntl(fd, fcntl.F_NOTIFY, fcntl.DN_ACCESS | fcntl.DN_MULTISHOT)

    def guess(self) -> int | None:
        seen: Counter[int] = Counter()
        while (info := signal.sigtimedwait(self.signals, 0)) is not None:
            seen[info.si_signo - signal.SIGRTMIN] += 1
        return seen.most_common(1)[0][0] if seen else None


# Unix sockets and signals: reaching the partner itself.


class AbstractSocketSender(Endpoint):
    """A datagram to an abstract unix socket the receiver bound: it waits in its queue while it is frozen."""

    def __init__(self, agreement: Agreement) -> None:
        self.address: str | bytes = b"\0covert-" + agreement.tag.encode()
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)

    def send(self, value: int) -> str:
        self.socket.sendto(bytes([value]), self.address)
        return ""


class AbstractSocketReceiver(Endpoint):
    def __init__(self, agreement: Agreement) -> None:
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.socket.bind(self.address(agreement))
        self.socket.setblocking(False)

    def address(self, agreement: Agreement) -> str | bytes:
        return b"\0covert-" + agreement.tag.encode()

    def guess(self) -> int | None:
        last = None
        while True:
            try:
                last = self.socket.recv(16)[0]
            except BlockingIOError:
                return last


SOCKET_DIRS = ("/tmp", "/dev/shm", "/var/tmp")


class PathSocketSender(AbstractSocketSender):
    """The same through a socket file, in the first of the usual shared places where the receiver could bind."""

    def __init__(self, agreement: Agreement) -> None:
        super().__init__(agreement)
        self.paths = [f"{directory}/covert-{agreement.tag}.sock" for directory in SOCKET_DIRS]

    def send(self, value: int) -> str:
        for path in self.paths:
            try:
                self.socket.sendto(bytes([value]), path)
                return ""
            except OSError:
                continue
        return "no-socket"


class PathSocketReceiver(AbstractSocketReceiver):
    def address(self, agreement: Agreement) -> str | bytes:
        for directory in SOCKET_DIRS:
            if os.access(directory, os.W_OK):
                return f"{directory}/covert-{agreement.tag}.sock"
        raise OSError(errno.EROFS, "nowhere to bind")


class SignalSender(Endpoint):
    """Finds the receiver in /proc by its command line and sends it real-time signal SIGRTMIN + value: such
    signals queue, and wait while the receiver is frozen."""

    def __init__(self, agreement: Agreement) -> None:
        self.mark = b"\0receive\0signal\0" + agreement.tag.encode() + b"\0"
        self.pid: int | None = None

    def partner(self) -> int | None:
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    with open(f"/proc/{name}/cmdline", "rb") as stream:
                        if self.mark in stream.read():
                            return int(name)
                except OSError:
                    continue
        return None

    def send(self, value: int) -> str:
        self.pid = self.pid or self.partner()
        if self.pid is None:
            return "no-partner"
        os.kill(self.pid, signal.SIGRTMIN + value)
        return ""


class SignalReceiver(Endpoint):
    def __init__(self, agreement: Agreement) -> None:
        self.signals = {signal.SIGRTMIN + value for value in VALUES}
        signal.pthread_sigmask(signal.SIG_BLOCK, self.signals)

    def guess(self) -> int | None:
        last = None
        while (info := signal.sigtimedwait(self.signals, 0)) is not None:
            last = info.si_signo - signal.SIGRTMIN
        return last


# System V IPC: a key both derive from the tag.

IPC_CREAT, IPC_NOWAIT, IPC_RMID, SHM_RDONLY, GETVAL, SETVAL = 0o1000, 0o4000, 0, 0o10000, 12, 16
FAILED_POINTER = ctypes.c_void_p(-1).value


def sysv_key(tag: str) -> int:
    return 0x0C000000 | (int(tag, 16) & 0x00FFFFFF)


class Message(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_long), ("text", ctypes.c_char * 8)]


class SysvShmSender(Endpoint):
    """A System V shared memory segment: the value in its first byte."""

    def __init__(self, agreement: Agreement) -> None:
        get = function("shmget", ctypes.c_int, ctypes.c_int, ctypes.c_size_t, ctypes.c_int)
        attach = function("shmat", ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int)
        create, flags = self.modes()
        segment = checked(get(sysv_key(agreement.tag), PAGE, create), "shmget")
        self.address = attach(segment, None, flags)
        if self.address in (None, FAILED_POINTER):
            raise fail("shmat")

    def modes(self) -> tuple[int, int]:
        return IPC_CREAT | 0o666, 0

    def send(self, value: int) -> str:
        ctypes.c_ubyte.from_address(self.address).value = value
        return ""


class SysvShmReceiver(SysvShmSender):
    def modes(self) -> tuple[int, int]:
        return 0, SHM_RDONLY

    def guess(self) -> int | None:
        return ctypes.c_ubyte.from_address(self.address).value or None


class SysvSemSender(Endpoint):
    """A System V semaphore set to the value."""

    def __init__(self, agreement: Agreement) -> None:
        get = function("semget", ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int)
        self.control = function("semctl", ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int)
        self.set = checked(get(sysv_key(agreement.tag), 1, self.create()), "semget")

    def create(self) -> int:
        return IPC_CREAT | 0o666

    def send(self, value: int) -> str:
        checked(self.control(self.set, 0, SETVAL, value), "semctl")
        return ""


class SysvSemReceiver(SysvSemSender):
    def create(self) -> int:
        return 0

    def guess(self) -> int | None:
        return checked(self.control(self.set, 0, GETVAL, 0), "semctl") or None


class SysvMsgSender(Endpoint):
    """A System V message queue: one message a turn, its type the value."""

    def __init__(self, agreement: Agreement) -> None:
        get = function("msgget", ctypes.c_int, ctypes.c_int, ctypes.c_int)
        self.put = function("msgsnd", ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
        self.take = function(
            "msgrcv", ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_long, ctypes.c_int
        )
        self.queue = checked(get(sysv_key(agreement.tag), self.create()), "msgget")

    def create(self) -> int:
        return IPC_CREAT | 0o666

    def send(self, value: int) -> str:
        message = Message(value, b"x")
        checked(self.put(self.queue, ctypes.byref(message), 1, IPC_NOWAIT), "msgsnd")
        return ""


class SysvMsgReceiver(SysvMsgSender):
    def create(self) -> int:
        return 0

    def guess(self) -> int | None:
        message, last = Message(), None
        while self.take(self.queue, ctypes.byref(message), 8, 0, IPC_NOWAIT) >= 0:
            last = message.kind
        return last


# POSIX IPC: names both derive from the tag.


class QueueAttributes(ctypes.Structure):
    _fields_ = [
        ("flags", ctypes.c_long),
        ("most", ctypes.c_long),
        ("size", ctypes.c_long),
        ("current", ctypes.c_long),
        ("reserved", ctypes.c_long * 4),
    ]


class PosixMqSender(Endpoint):
    """A POSIX message queue: one message a turn, the value in it."""

    def __init__(self, agreement: Agreement) -> None:
        self.name = f"/covert-{agreement.tag}-mq".encode()
        opening = function(
            "mq_open", ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(QueueAttributes)
        )
        self.put = function("mq_send", ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint)
        self.take = function(
            "mq_receive", ctypes.c_ssize_t, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p
        )
        flags = self.flags()
        attributes = QueueAttributes(0, 8, 8, 0) if flags & os.O_CREAT else None
        self.queue = checked(opening(self.name, flags, 0o666, attributes), "mq_open")

    def flags(self) -> int:
        return os.O_CREAT | os.O_WRONLY | os.O_NONBLOCK

    def send(self, value: int) -> str:
        checked(self.put(self.queue, bytes([value]), 1, 0), "mq_send")
        return ""


class PosixMqReceiver(PosixMqSender):
    def flags(self) -> int:
        return os.O_RDONLY | os.O_NONBLOCK

    def guess(self) -> int | None:
        buffer, last = ctypes.create_string_buffer(8), None
        while self.take(self.queue, buffer, 8, None) > 0:
            last = buffer.raw[0]
        return last


class PosixShmSender(Endpoint):
    """POSIX shared memory (shm_open): the value in its first byte."""

    def __init__(self, agreement: Agreement) -> None:
        opening = function("shm_open", ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_uint)
        name = f"/covert-{agreement.tag}-shm".encode()
        writer = self.writer()
        fd = checked(opening(name, os.O_CREAT | os.O_RDWR if writer else os.O_RDONLY, 0o666), "shm_open")
        if writer:
            os.ftruncate(fd, PAGE)
        self.memory = mmap.mmap(fd, PAGE, prot=mmap.PROT_READ | (mmap.PROT_WRITE if writer else 0))
        os.close(fd)

    def writer(self) -> bool:
        return True

    def send(self, value: int) -> str:
        self.memory[0] = value
        return ""


class PosixShmReceiver(PosixShmSender):
    def writer(self) -> bool:
        return False

    def guess(self) -> int | None:
        return self.memory[0] or None


class PosixSemSender(Endpoint):
    """A POSIX named semaphore (sem_open), its count the value."""

    def __init__(self, agreement: Agreement) -> None:
        opening = function("sem_open", ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_uint)
        self.post = function("sem_post", ctypes.c_int, ctypes.c_void_p)
        self.trywait = function("sem_trywait", ctypes.c_int, ctypes.c_void_p)
        self.getvalue = function("sem_getvalue", ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int))
        name = f"/covert-{agreement.tag}-sem".encode()
        self.semaphore = opening(name, self.flags(), 0o666, 0)
        if not self.semaphore:  # SEM_FAILED
            raise fail("sem_open")

    def flags(self) -> int:
        return os.O_CREAT

    def value(self) -> int:
        count = ctypes.c_int()
        checked(self.getvalue(self.semaphore, ctypes.byref(count)), "sem_getvalue")
        return count.value

    def send(self, value: int) -> str:
        while self.value() < value:
            checked(self.post(self.semaphore), "sem_post")
        while self.value() > value:
            checked(self.trywait(self.semaphore), "sem_trywait")
        return ""


class PosixSemReceiver(PosixSemSender):
    def flags(self) -> int:
        return 0

    def guess(self) -> int | None:
        return self.value() or None


# Files in the usual shared places.


class FileSender(Endpoint):
    """The value written to a file in a shared directory."""

    DIRECTORY = "/tmp"

    def __init__(self, agreement: Agreement) -> None:
        self.path = f"{self.DIRECTORY}/covert-{agreement.tag}-file"

    def send(self, value: int) -> str:
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        try:
            os.write(fd, str(value).encode())
        finally:
            os.close(fd)
        return ""


class FileReceiver(FileSender):
    def guess(self) -> int | None:
        with open(self.path) as stream:
            return int(stream.read())


class ShmFileSender(FileSender):
    DIRECTORY = "/dev/shm"


class ShmFileReceiver(FileReceiver):
    DIRECTORY = "/dev/shm"


# Access times of shared files: a first read moves a file's, and anyone may stat it.

ATIME_ROOTS = ("/usr/share/doc", "/usr/share/man", "/usr/share/info")
ATIME_MAX_BYTES = 64 * 1024
"""Small files only: the page-cache pairs read the heads of the large ones."""
DAY_NS = 86400 * 10**9


def atime_pool() -> list[str]:
    """The documentation's small files, in an order both members know: nothing reads them while a match is played."""
    found = []
    for root in ATIME_ROOTS:
        for directory, _, names in os.walk(root):
            for name in names:
                path = os.path.join(directory, name)
                with contextlib.suppress(OSError):
                    info = os.lstat(path)
                    if stat.S_ISREG(info.st_mode) and 0 < info.st_size <= ATIME_MAX_BYTES:
                        found.append(path)
    return sorted(found)


def moves_on_read(info: os.stat_result) -> bool:
    """Whether a read would move the file's access time on a relatime mount (the kernel's relatime_need_update):
    its access time is no later than its change or modification, or a day old. Once read, it is not, for a day."""
    atime = info.st_atime_ns
    return atime <= info.st_mtime_ns or atime <= info.st_ctime_ns or time.time_ns() - atime >= DAY_NS


class AtimeSender(Endpoint):
    """Reads the value's one of the first eight files of the pool that a read would mark: the same eight the
    receiver found after its last look, as nothing else touched them since. Each read uses a file up, for a day."""

    def __init__(self, agreement: Agreement) -> None:
        self.pool = atime_pool()
        self.start = 0

    def candidates(self) -> list[str]:
        """The first eight files a read would mark, from where the last search found the first (those before it
        were marked already)."""
        found: list[str] = []
        for index in range(self.start, len(self.pool)):
            with contextlib.suppress(OSError):
                if moves_on_read(os.stat(self.pool[index])):
                    if not found:
                        self.start = index
                    found.append(self.pool[index])
                    if len(found) == len(VALUES):
                        return found
        raise OSError(errno.ENOENT, f"fewer than {len(VALUES)} files left whose access time a read moves")

    def send(self, value: int) -> str:
        with open(self.candidates()[value - 1], "rb") as stream:
            stream.read(1)
        return ""


class AtimeReceiver(AtimeSender):
    """Stats the eight candidates: the one whose access time moved since it last looked is the value."""

    def __init__(self, agreement: Agreement) -> None:
        super().__init__(agreement)
        self.watched = self.look()

    def look(self) -> list[tuple[str, int]]:
        return [(path, os.stat(path).st_atime_ns) for path in self.candidates()]

    def guess(self) -> int | None:
        moved = [slot for slot, (path, atime) in enumerate(self.watched) if os.stat(path).st_atime_ns != atime]
        self.watched = self.look()
        return moved[0] + 1 if len(moved) == 1 else None


# The page cache of shared files: which pages are resident (mincore), and how fast a first read is.

PROT_READ, MAP_SHARED = 0x1, 0x01


def slot_blocks(files: list[str]) -> list[list[tuple[str, int]]]:
    """Blocks of SLOTS pages, SPACING pages apart, over the agreed files: a block a turn, slot = value - 1."""
    slots = [(path, page * PAGE) for path in files for page in range(0, os.path.getsize(path) // PAGE, SPACING)]
    return [slots[start : start + SLOTS] for start in range(0, len(slots) - SLOTS + 1, SLOTS)]


class PageSender(Endpoint):
    """Reads one page: it is in the page cache from then on, for everyone."""

    def __init__(self, agreement: Agreement) -> None:
        self.blocks = slot_blocks(agreement.files)
        if not self.blocks:
            raise OSError(errno.ENOENT, "no large shared file agreed")
        self.fds = {path: os.open(path, os.O_RDONLY) for path in agreement.files}
        for fd in self.fds.values():
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)  # no read-ahead: one page, not its neighbours
        self.turn = 0

    def block(self) -> list[tuple[str, int]]:
        block = self.blocks[self.turn % len(self.blocks)]
        self.turn += 1
        return block

    def send(self, value: int) -> str:
        path, offset = self.block()[value - 1]
        os.pread(self.fds[path], 1, offset)
        return ""

    def evict(self, block: list[tuple[str, int]], length: Callable[[str], int] = lambda path: PAGE) -> bool:
        """Drop the block's pages from the page cache (they are clean: any reader may), ready for a next use."""
        try:
            for path, offset in block:
                os.posix_fadvise(self.fds[path], offset, length(path), os.POSIX_FADV_DONTNEED)
        except OSError:
            return False
        return True


class MincoreReceiver(PageSender):
    """mincore on a mapping of the files: which slot became resident since the receiver last looked."""

    def __init__(self, agreement: Agreement) -> None:
        super().__init__(agreement)
        self.mincore = function("mincore", ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p)
        mapping = function(
            "mmap", ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
            ctypes.c_long,
        )  # fmt: skip
        self.addresses = {}
        for path, fd in self.fds.items():
            address = mapping(None, os.path.getsize(path), PROT_READ, MAP_SHARED, fd, 0)
            if address in (None, FAILED_POINTER):
                raise fail("mmap")
            self.addresses[path] = address
        self.evict([(path, 0) for path in self.fds], os.path.getsize)  # a clean start, where it may
        self.before = self.resident(self.blocks[0])

    def resident(self, block: list[tuple[str, int]]) -> list[bool]:
        vector = ctypes.create_string_buffer(1)
        found = []
        for path, offset in block:
            checked(self.mincore(self.addresses[path] + offset, PAGE, vector), "mincore")
            found.append(bool(vector.raw[0] & 1))
        return found

    def guess(self) -> int | None:
        block = self.block()
        now = self.resident(block)
        fresh = [slot for slot in range(SLOTS) if now[slot] and not self.before[slot]]
        self.evict(block)
        upcoming = self.blocks[self.turn % len(self.blocks)]
        self.evict(upcoming)
        self.before = self.resident(upcoming)  # what is resident already is no news next turn
        return fresh[0] + 1 if len(fresh) == 1 else None


class ReadTimingReceiver(PageSender):
    """Times a first read of each slot: the one the sender read comes from memory, the others from the disk."""

    def guess(self) -> int | None:
        block = self.block()
        times = []
        for path, offset in block:
            start = time.perf_counter_ns()
            os.pread(self.fds[path], 1, offset)
            times.append(time.perf_counter_ns() - start)
        self.evict(block)
        ordered = sorted(times)
        return times.index(ordered[0]) + 1 if ordered[0] * 3 < ordered[1] else None


MAP_PRIVATE, MADV_RANDOM = 0x02, 1
WINDOW = SPACING * PAGE
"""A slot's window: 64 KiB, the kernel's fault_around_bytes (its default), with 4 KiB pages."""
SENT_PAGES = range(4, 12)


class FaultAroundSender(PageSender):
    """Reads eight pages in the middle of the value's window."""

    def send(self, value: int) -> str:
        path, offset = self.block()[value - 1]
        for page in SENT_PAGES:
            os.pread(self.fds[path], 1, offset + page * PAGE)
        return ""


class FaultAroundReceiver(PageSender):
    """Maps each window of the block (MADV_RANDOM: no read-ahead) and touches its first page: on that fault the
    kernel also maps the window's other pages that are in the page cache already (fault-around), and
    /proc/self/pagemap tells which pages of its own mapping are present. No mincore, no timing: the window the
    sender read has its pages mapped, the others none."""

    def __init__(self, agreement: Agreement) -> None:
        super().__init__(agreement)
        self.map, self.unmap = mapping_calls()
        self.advise = function("madvise", ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
        self.pagemap = os.open("/proc/self/pagemap", os.O_RDONLY)

    def present(self, path: str, offset: int) -> int:
        """Pages of the window past its first that the fault on the first mapped."""
        address = self.map(None, WINDOW, PROT_READ, MAP_PRIVATE, self.fds[path], offset)
        if address in (None, FAILED_POINTER):
            raise fail("mmap")
        try:
            checked(self.advise(address, WINDOW, MADV_RANDOM), "madvise")
            ctypes.c_char.from_address(address).value  # noqa: B018  the fault
            entries = struct.unpack(f"{SPACING}Q", os.pread(self.pagemap, SPACING * 8, address // PAGE * 8))
        finally:
            self.unmap(address, WINDOW)
        return sum(entry >> 63 for entry in entries[1:])

    def guess(self) -> int | None:
        block = self.block()
        counts = [self.present(path, offset) for path, offset in block]
        self.evict(block, lambda path: WINDOW)  # where it may (at none): ready for a next use
        best = max(counts)
        return counts.index(best) + 1 if best and counts.count(best) == 1 else None


# The kernel's global counters, moved by what the sender holds (or did) and read by the receiver while it is frozen.


def mounted_tmpfs(directory: str) -> bool:
    """Whether directory lies on a tmpfs, by the longest mount point above it in /proc/self/mountinfo."""
    best, kind = "", ""
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split(" - ")
        point = fields[0].split()[4]
        if (directory == point or directory.startswith(point.rstrip("/") + "/")) and len(point) >= len(best):
            best, kind = point, fields[1].split()[0]
    return kind == "tmpfs"


class HoldSender(Endpoint):
    """Holds a level of 0 to 7 units of something the machine counts, and moves it by the value each turn (modulo
    8): the receiver reads the value in the change since its last look, so that whatever else moves the count at
    one moment spoils that one turn, not every turn after it."""

    def __init__(self, agreement: Agreement) -> None:
        self.unit = agreement.unit
        self.level = 0

    def send(self, value: int) -> str:
        self.level = (self.level + value) % len(VALUES)
        self.hold(self.level)
        return ""

    def hold(self, units: int) -> None:
        raise NotImplementedError


class TmpfsHoldSender(HoldSender):
    """Holds files of a unit each in a tmpfs it may write (its own /tmp in a sandbox): shared memory pages, counted
    in the machine's Shmem whatever mount namespace they are in. One file a unit: a file may not exceed the bot's
    file size limit."""

    def __init__(self, agreement: Agreement) -> None:
        super().__init__(agreement)
        candidates = (os.environ.get("TMPDIR", ""), "/tmp", "/dev/shm")
        place = next((d for d in candidates if d and os.access(d, os.W_OK) and mounted_tmpfs(os.path.realpath(d))), "")
        if not place:
            raise OSError(errno.ENOENT, "no tmpfs to write")
        self.paths = [f"{place}/covert-{agreement.tag}-hold-{n}" for n in range(len(VALUES) - 1)]

    def hold(self, units: int) -> None:
        for held, path in enumerate(self.paths):
            if held < units:
                fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
                try:
                    os.posix_fallocate(fd, 0, int(self.unit))
                finally:
                    os.close(fd)
            elif os.path.exists(path):
                os.unlink(path)


class ThreadHoldSender(HoldSender):
    """Holds sleeping threads: the machine's count of threads in /proc/loadavg."""

    def __init__(self, agreement: Agreement) -> None:
        super().__init__(agreement)
        threading.stack_size(256 * 1024)
        self.held: list[tuple[threading.Thread, threading.Event]] = []

    def hold(self, units: int) -> None:
        while len(self.held) < units * self.unit:
            event = threading.Event()
            thread = threading.Thread(target=event.wait, daemon=True)
            thread.start()
            self.held.append((thread, event))
        while len(self.held) > units * self.unit:
            thread, event = self.held.pop()
            event.set()
            thread.join()


class MemfdHoldSender(HoldSender):
    """Holds mapped memfds, their descriptors closed (so no file limit applies): each holds a file, an inode and a
    dentry of the machine's counts in /proc/sys/fs."""

    def __init__(self, agreement: Agreement) -> None:
        super().__init__(agreement)
        self.map, self.unmap = mapping_calls()
        self.held: list[int] = []

    def hold(self, units: int) -> None:
        while len(self.held) < units * self.unit:
            fd = os.memfd_create("covert")
            try:
                address = self.map(None, PAGE, PROT_READ, MAP_SHARED, fd, 0)
            finally:
                os.close(fd)
            if address in (None, FAILED_POINTER):
                raise fail("mmap")
            self.held.append(address)
        while len(self.held) > units * self.unit:
            self.unmap(self.held.pop(), PAGE)


QUEUED = signal.SIGRTMIN + 9
"""The real-time signal the sigpending pair queue to themselves, blocked: each one queued stays pending."""
SIGNAL_MARGIN = 10
"""Units of the sigpending pair's count that the sender leaves below its limit: the receiver finds the limit within
that many."""
PROBE_MAX = 2000
"""The most signals or namespaces a receiver makes to find its limit: past that it has found none."""


def queue_own(count: int) -> int:
    """Queue up to count instances of QUEUED to this process (sigqueue: a signal that counts against the user's
    RLIMIT_SIGPENDING): how many it queued before the kernel refused one (EAGAIN)."""
    sigqueue = function("sigqueue", ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p)
    pid = os.getpid()
    for queued in range(count):
        if sigqueue(pid, QUEUED, None) != 0:
            if ctypes.get_errno() != errno.EAGAIN:
                raise fail("sigqueue")
            return queued
    return count


def drop_queued() -> None:
    """Discard every pending QUEUED: ignoring a signal drops what is pending of it."""
    signal.signal(QUEUED, signal.SIG_IGN)
    signal.signal(QUEUED, signal.SIG_DFL)


class PendingSignalHoldSender(HoldSender):
    """Holds queued instances of a blocked real-time signal, pending while it is frozen: the kernel counts them for
    its user, across processes, and in each user namespace up from its own (so an ordinary user's count holds its
    bots' in namespaces of their own); a queuer may go up to its RLIMIT_SIGPENDING in its own namespace, and up
    the chain to the limit each namespace was made with. The sender holds a base of its own limit less
    SIGNAL_MARGIN units from the start, so that the receiver meets the limit within a few hundred signals, not a
    hundred thousand; the value moves what it holds on top."""

    def __init__(self, agreement: Agreement) -> None:
        super().__init__(agreement)
        signal.pthread_sigmask(signal.SIG_BLOCK, {QUEUED})
        limit = resource.getrlimit(resource.RLIMIT_SIGPENDING)[0]
        margin = int(SIGNAL_MARGIN * self.unit)
        self.base = limit - margin if margin < limit < 1 << 20 else 0  # RLIM_INFINITY: no limit to meet
        self.held = 0
        self.hold(0)

    def hold(self, units: int) -> None:
        wanted = self.base + int(units * self.unit)
        if self.held < wanted:
            self.held += queue_own(wanted - self.held)
        while self.held > wanted and signal.sigtimedwait({QUEUED}, 0) is not None:
            self.held -= 1
        if self.held != wanted:
            raise OSError(errno.EAGAIN, f"holds {self.held} signals of {wanted}")


def pending_signals_left() -> float:
    """Minus how many signals the receiver may still queue (the more others hold, the higher): it queues QUEUED,
    blocked, to itself until refused, then drops them. No refusal within PROBE_MAX: no limit in reach."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {QUEUED})
    try:
        queued = queue_own(PROBE_MAX)
    finally:
        drop_queued()
    if queued == PROBE_MAX:
        raise OSError(errno.ERANGE, f"no limit within {PROBE_MAX} signals")
    return -float(queued)


DATAGRAM = b"x" * 7000
DATAGRAMS_A_SOCKET = 25
"""Well within a receive buffer of the default size (rmem_default, 208 KiB): none is dropped."""
DATAGRAM_TRUESIZE = 8448
"""What the kernel charges for one DATAGRAM on the loopback: a 8 KiB buffer and its sk_buff."""


class UdpHoldSender(HoldSender):
    """Holds datagrams unread in sockets of its own, on the loopback of its own network namespace (at strict): the
    kernel counts the memory of every UDP socket of the machine in one number, /proc/net/sockstat's "UDP: mem".
    A unit: 500 datagrams of 7,000 bytes, 4 MiB, in 20 sockets; to hold less it reads them (closing a socket
    frees its memory only later)."""

    def __init__(self, agreement: Agreement) -> None:
        super().__init__(agreement)
        self.writer = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sockets: list[socket.socket] = []
        self.full = 0

    def hold(self, units: int) -> None:
        wanted = round(units * self.unit / (DATAGRAM_TRUESIZE * DATAGRAMS_A_SOCKET))
        while self.full < wanted:
            if self.full == len(self.sockets):
                held = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                held.bind(("127.0.0.1", 0))
                held.setblocking(False)
                self.sockets.append(held)
            address = self.sockets[self.full].getsockname()
            for _ in range(DATAGRAMS_A_SOCKET):
                self.writer.sendto(DATAGRAM, address)
            self.full += 1
        while self.full > wanted:
            self.full -= 1
            with contextlib.suppress(BlockingIOError):
                while True:
                    self.sockets[self.full].recv(len(DATAGRAM))


def udp_memory() -> float:
    """The machine's UDP memory, in bytes: "UDP: ... mem PAGES" of /proc/net/sockstat (whose other lines are the
    network namespace's own)."""
    with open("/proc/net/sockstat") as stream:
        for line in stream:
            words = line.split()
            if words and words[0] == "UDP:" and "mem" in words:
                return float(words[words.index("mem") + 1]) * PAGE
    raise OSError(errno.ENOENT, "no UDP memory in /proc/net/sockstat")


CLONE_NEWUSER = 0x10000000
USERNS_CHAIN = 20
"""Nested user namespaces one child of the userns sender makes and holds (the kernel allows 32 levels)."""
PROBE_CHAIN = 24
FREED_S = 0.05
"""The kernel frees released user namespaces a little later (a work queue): how long a member that released some
waits for the count to fall back before it answers."""


def nest(depth: int) -> tuple[int, int]:
    """Make depth user namespaces, each inside the last, this process in the innermost: how many it made, and the
    error number of the one it could not make (0: none)."""
    unshare = function("unshare", ctypes.c_int, ctypes.c_int)
    for made in range(depth):
        uid, gid = os.geteuid(), os.getegid()
        if unshare(CLONE_NEWUSER) != 0:
            return made, ctypes.get_errno()
        try:  # its own IDs mapped, as the next one needs
            for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
                with open(f"/proc/self/{name}", "w") as stream:
                    stream.write(text)
        except OSError as error:
            return made + 1, error.errno or errno.EIO
    return depth, 0


class Chains:
    """Chains of nested user namespaces, each made by a child that hands back a descriptor of its innermost
    namespace (SCM_RIGHTS) and ends: the descriptor holds the chain. Closed, the namespaces go within a few
    milliseconds (a work queue frees them; held by a child, they would go only after its credentials, an RCU grace
    period later)."""

    def __init__(self) -> None:
        self.held: list[int] = []
        self.count = 0

    def add(self, depth: int) -> tuple[int, int]:
        """A chain of up to depth: how many it made, and why not more (an error number, 0: none)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with ours:
            with theirs:
                pid = os.fork()
                if pid == 0:  # the child
                    try:
                        made, error = nest(depth)
                        report = f"{made} {error}".encode()
                        if made:
                            socket.send_fds(theirs, [report], [os.open("/proc/self/ns/user", os.O_RDONLY)])
                        else:
                            theirs.send(report)
                    finally:
                        os._exit(0)
            try:  # an empty report if the child ended without one
                report, fds, _, _ = socket.recv_fds(ours, 64, 1)
            finally:
                os.waitpid(pid, 0)
        self.held += fds
        words = report.split()
        made, error = (int(words[0]), int(words[1])) if len(words) == 2 else (0, errno.EIO)
        self.count += made
        return made, error

    def release(self) -> None:
        """Release the last chain."""
        os.close(self.held.pop())

    def release_all(self) -> None:
        while self.held:
            self.release()
        self.count = 0


class NamespaceHoldSender(HoldSender):
    """Holds user namespaces: the kernel counts every user namespace a user made, however deeply nested and in
    whatever namespace, against user.max_user_namespaces. A unit: two chains of USERNS_CHAIN; at most seven units
    (280 namespaces), a few hundred of the machine's tens of thousands."""

    def __init__(self, agreement: Agreement) -> None:
        super().__init__(agreement)
        self.chains = Chains()

    def hold(self, units: int) -> None:
        wanted = round(units * self.unit / USERNS_CHAIN)
        while len(self.chains.held) < wanted:
            made, error = self.chains.add(USERNS_CHAIN)
            if error:
                if made:
                    self.chains.release()  # a chain cut short
                raise OSError(error, f"unshare(CLONE_NEWUSER) after {made}")
        if len(self.chains.held) > wanted:
            while len(self.chains.held) > wanted:
                self.chains.release()
            time.sleep(FREED_S)


def namespaces_left() -> float:
    """Minus how many user namespaces the receiver may still make: it makes chains of them until the kernel says
    none is left (ENOSPC), up to PROBE_MAX or the machine's limit (/proc/sys/user/max_user_namespaces, where it
    shows), then releases them. No refusal within that: no limit in reach (here the receiver cannot tell a count)."""
    bound = PROBE_MAX
    with contextlib.suppress(OSError), open("/proc/sys/user/max_user_namespaces") as stream:
        bound = min(PROBE_MAX, int(stream.read()) + 1)  # one past the limit: refused there
    chains = Chains()
    try:
        while chains.count < bound:
            _, error = chains.add(min(PROBE_CHAIN, bound - chains.count))
            if error == errno.ENOSPC:
                return -float(chains.count)
            if error:
                raise OSError(error, f"unshare(CLONE_NEWUSER) after {chains.count}")
    finally:
        if chains.held:
            chains.release_all()
            time.sleep(FREED_S)
    raise OSError(errno.ERANGE, f"no limit within {bound} namespaces")


class ThreadBurstSender(Endpoint):
    """Starts and ends (value - 1) units of threads: the machine's count of forks since boot, in /proc/stat."""

    def __init__(self, agreement: Agreement) -> None:
        threading.stack_size(256 * 1024)
        self.unit = int(agreement.unit)

    def send(self, value: int) -> str:
        for _ in range((value - 1) * self.unit):
            thread = threading.Thread(target=int)
            thread.start()
            thread.join()
        return ""


class CpuBurnSender(Endpoint):
    """Burns (value - 1) units of CPU time: the machine's idle time (/proc/uptime) grows that much less."""

    def __init__(self, agreement: Agreement) -> None:
        self.unit = agreement.unit

    def send(self, value: int) -> str:
        end = time.process_time() + (value - 1) * self.unit
        while time.process_time() < end:
            pass
        return ""


class SysinfoStruct(ctypes.Structure):
    _fields_ = [
        ("uptime", ctypes.c_long),
        ("loads", ctypes.c_ulong * 3),
        ("totalram", ctypes.c_ulong),
        ("freeram", ctypes.c_ulong),
        ("sharedram", ctypes.c_ulong),
        ("bufferram", ctypes.c_ulong),
        ("totalswap", ctypes.c_ulong),
        ("freeswap", ctypes.c_ulong),
        ("procs", ctypes.c_ushort),
        ("pad", ctypes.c_ushort),
        ("totalhigh", ctypes.c_ulong),
        ("freehigh", ctypes.c_ulong),
        ("mem_unit", ctypes.c_uint),
        ("reserved", ctypes.c_char * 8),
    ]


def field(path: str, name: str, index: int = 1) -> float:
    """The number after name on its line of a /proc file (name "": the first line)."""
    with open(path) as stream:
        for line in stream:
            words = line.replace(":", " ").split()
            if not name or (words and words[0] == name):
                return float(words[index])
    raise OSError(errno.ENOENT, f"no {name} in {path}")


def read_sysinfo() -> float:
    found = SysinfoStruct()
    checked(function("sysinfo", ctypes.c_int, ctypes.POINTER(SysinfoStruct))(ctypes.byref(found)), "sysinfo")
    return float(found.sharedram * found.mem_unit)


def read_uptime_busy() -> float:
    """CPU seconds the machine was busy since boot: uptime times the CPUs, less the idle time of all of them."""
    with open("/proc/uptime") as stream:
        up, idle = (float(word) for word in stream.read().split())
    return up * (os.cpu_count() or 1) - idle


READERS: dict[str, Callable[[], float]] = {
    "meminfo": lambda: field("/proc/meminfo", "Shmem") * 1024,
    "vmstat": lambda: field("/proc/vmstat", "nr_shmem") * PAGE,
    "sysinfo": read_sysinfo,
    "loadavg": lambda: float(Path("/proc/loadavg").read_text().split()[3].split("/")[1]),
    "stat": lambda: field("/proc/stat", "processes"),
    "uptime": read_uptime_busy,
    "file-nr": lambda: field("/proc/sys/fs/file-nr", "", 0),
    "inode-nr": lambda: field("/proc/sys/fs/inode-nr", "", 0),
    "dentry-state": lambda: field("/proc/sys/fs/dentry-state", "", 0),
    "sigpending": pending_signals_left,
    "sockstat": udp_memory,
    "userns": namespaces_left,
}
INCREMENTS = {"stat"}
"""Counters that only grow, each turn by (value - 1) units; the others show a level that HoldSender moves."""
HISTORY = 64


class CounterReceiver(Endpoint):
    """Decodes the change of a counter since its last look, in units: a held level moved by the value modulo 8
    (HoldSender), or a count that only grows by (value - 1) units. It follows the drift the rest of the machine
    adds: the part of each change its decoding did not explain moves the drift it expects half way."""

    def __init__(self, agreement: Agreement) -> None:
        self.read = READERS[agreement.channel]
        self.unit = agreement.unit
        self.increments = agreement.channel in INCREMENTS
        self.last = self.read()
        self.drift = 0.0

    def guess(self) -> int | None:
        reading = self.read()
        change, self.last = reading - self.last - self.drift, reading
        steps = round(change / self.unit)
        value = min(max(steps + 1, 1), 8) if self.increments else steps % len(VALUES) or len(VALUES)
        explained = value - 1 if self.increments else steps
        self.drift += (change - explained * self.unit) / 2
        if not self.increments:  # a drift of half a unit a turn would read as a value, and stay: keep it small
            self.drift = min(max(self.drift, -self.unit / 4), self.unit / 4)
        return value


class RankReceiver(Endpoint):
    """Decodes the octile of a counter's growth among the last HISTORY growths it saw: for a counter whose growth
    is no multiple of the unit (the busy time a burn shows is not the time burnt, and the machine's idle time is
    told in hundredths of a second). The values are uniform, so the growth's octile is the value."""

    def __init__(self, agreement: Agreement) -> None:
        self.read = READERS[agreement.channel]
        self.last = self.read()
        self.seen: list[float] = []

    def guess(self) -> int | None:
        reading = self.read()
        growth, self.last = reading - self.last, reading
        below = sum(seen < growth for seen in self.seen) + sum(seen == growth for seen in self.seen) / 2
        value = min(int(8 * below / len(self.seen)) + 1, 8) if self.seen else None
        self.seen = [*self.seen[-HISTORY + 1 :], growth]
        return value


class ProcLocksSender(Endpoint):
    """Locks on files of its own, at a range of the pair's: /proc/locks lists every lock on the machine. An OFD
    lock on one file, a POSIX lock on another (the two kinds would conflict on one file)."""

    def __init__(self, agreement: Agreement) -> None:
        self.base = 2 * LOCK_BASE + (agreement.number % 2**20) * 16
        self.fds = {
            command: os.open(f"covert-{agreement.tag}-{command}", os.O_RDWR | os.O_CREAT, 0o600)
            for command in (fcntl.F_OFD_SETLK, fcntl.F_SETLK)  # an OFD lock shows across PID namespaces
        }

    def send(self, value: int) -> str:
        refused = []
        for command, fd in self.fds.items():
            try:
                fcntl.fcntl(fd, command, FLOCK.pack(fcntl.F_UNLCK, os.SEEK_SET, self.base, 16, 0))
                fcntl.fcntl(fd, command, FLOCK.pack(fcntl.F_WRLCK, os.SEEK_SET, self.base + value, 1, 0))
            except OSError as error:
                refused.append(errno.errorcode.get(error.errno or 0, "?"))
        return ",".join(refused)


class ProcLocksReceiver(Endpoint):
    def __init__(self, agreement: Agreement) -> None:
        self.base = 2 * LOCK_BASE + (agreement.number % 2**20) * 16

    def guess(self) -> int | None:
        for line in Path("/proc/locks").read_text().splitlines():
            words = line.split()
            if len(words) >= 2 and words[-2].isdigit() and 0 < int(words[-2]) - self.base < 16:
                return int(words[-2]) - self.base
        return None


CHANNELS: dict[str, tuple[type[Endpoint], type[Endpoint]]] = {
    "posix-lock": (PosixLockSender, PosixLockReceiver),
    "ofd-lock": (OfdLockSender, OfdLockReceiver),
    "flock": (FlockSender, FlockReceiver),
    "lease": (LeaseSender, LeaseReceiver),
    "inotify": (InotifySender, InotifyReceiver),
    "unix-abstract": (AbstractSocketSender, AbstractSocketReceiver),
    "unix-path": (PathSocketSender, PathSocketReceiver),
    "signal": (SignalSender, SignalReceiver),
    "sysv-shm": (SysvShmSender, SysvShmReceiver),
    "sysv-sem": (SysvSemSender, SysvSemReceiver),
    "sysv-msg": (SysvMsgSender, SysvMsgReceiver),
    "posix-mq": (PosixMqSender, PosixMqReceiver),
    "posix-shm": (PosixShmSender, PosixShmReceiver),
    "posix-sem": (PosixSemSender, PosixSemReceiver),
    "dev-shm": (ShmFileSender, ShmFileReceiver),
    "tmp": (FileSender, FileReceiver),
    "mincore": (PageSender, MincoreReceiver),
    "read-timing": (PageSender, ReadTimingReceiver),
    "meminfo": (TmpfsHoldSender, CounterReceiver),
    "vmstat": (TmpfsHoldSender, CounterReceiver),
    "sysinfo": (TmpfsHoldSender, CounterReceiver),
    "loadavg": (ThreadHoldSender, CounterReceiver),
    "stat": (ThreadBurstSender, CounterReceiver),
    "uptime": (CpuBurnSender, RankReceiver),
    "file-nr": (MemfdHoldSender, CounterReceiver),
    "inode-nr": (MemfdHoldSender, CounterReceiver),
    "dentry-state": (MemfdHoldSender, CounterReceiver),
    "proc-locks": (ProcLocksSender, ProcLocksReceiver),
    "dnotify": (DnotifySender, DnotifyReceiver),
    "sigpending": (PendingSignalHoldSender, CounterReceiver),
    "sockstat": (UdpHoldSender, CounterReceiver),
    "userns": (NamespaceHoldSender, CounterReceiver),
    "atime": (AtimeSender, AtimeReceiver),
    "fault-around": (FaultAroundSender, FaultAroundReceiver),
}


def _sysv(key: int) -> dict[str, Callable[[], object]]:
    """The System V objects of a key on the machine, each with what removes it."""
    found: dict[str, Callable[[], object]] = {}
    shm = function("shmget", ctypes.c_int, ctypes.c_int, ctypes.c_size_t, ctypes.c_int)(key, 0, 0)
    if shm >= 0:
        control = function("shmctl", ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p)
        found["shm"] = lambda: control(shm, IPC_RMID, None)
    sem = function("semget", ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int)(key, 0, 0)
    if sem >= 0:
        semctl = function("semctl", ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int)
        found["sem"] = lambda: semctl(sem, 0, IPC_RMID, 0)
    queue = function("msgget", ctypes.c_int, ctypes.c_int, ctypes.c_int)(key, 0)
    if queue >= 0:
        msgctl = function("msgctl", ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p)
        found["msg"] = lambda: msgctl(queue, IPC_RMID, None)
    return found


def _queue_exists(tag: str) -> bool:
    opening = function("mq_open", ctypes.c_int, ctypes.c_char_p, ctypes.c_int)
    queue = opening(f"/covert-{tag}-mq".encode(), os.O_RDONLY)
    if queue < 0:
        return False
    function("mq_close", ctypes.c_int, ctypes.c_int)(queue)
    return True


def leftovers(tag: str) -> list[str]:
    """What a pair of this tag left in the machine's own namespaces: files, System V objects, a message queue."""
    found = [str(path) for directory in (*SOCKET_DIRS, "/dev/shm") for path in Path(directory).glob(f"*covert-{tag}*")]
    found += [f"System V {kind} of key {sysv_key(tag):#x}" for kind in _sysv(sysv_key(tag))]
    return found + ([f"POSIX message queue /covert-{tag}-mq"] if _queue_exists(tag) else [])


def cleanup(tag: str) -> None:
    """Remove what a pair at level none leaves in the machine's own namespaces (at strict it went with the
    sandboxes' namespaces and tmpfs)."""
    for directory in (*SOCKET_DIRS, "/dev/shm"):
        for path in Path(directory).glob(f"*covert-{tag}*"):
            with contextlib.suppress(OSError):
                path.unlink()
    function("mq_unlink", ctypes.c_int, ctypes.c_char_p)(f"/covert-{tag}-mq".encode())
    for remove in _sysv(sysv_key(tag)).values():
        remove()


def serve(endpoint: Endpoint) -> None:
    """Answer the driver's lines until it closes stdin."""
    for line in sys.stdin:
        words = line.split()
        if words[0] == "send":
            try:
                note = endpoint.send(int(words[1]))
            except Exception as error:
                note = repr(error)
            print(f"ok {note}".replace("\n", " "), flush=True)
        else:
            try:  # a member whose channel could not be set up says why, every turn
                value, note = endpoint.guess(), endpoint.note if isinstance(endpoint, Broken) else "decoded"
            except Exception as error:
                value, note = None, repr(error)
            if value not in VALUES:
                note = f"undecoded:{value}" if note == "decoded" else note
                value = BLIND
            print(f"{value} {note}".replace("\n", " "), flush=True)


def main(argv: list[str]) -> None:
    role, channel, tag = argv[1:4]
    extra = json.loads((Path(__file__).parent / "covert.json").read_text())
    agreement = Agreement(channel, tag, extra)
    kind = CHANNELS[channel][0 if role == "send" else 1]
    endpoint: Endpoint
    try:
        endpoint = kind(agreement)
    except Exception as error:
        endpoint = Broken(error)
    print("ready", flush=True)
    serve(endpoint)


if __name__ == "__main__":
    main(sys.argv)

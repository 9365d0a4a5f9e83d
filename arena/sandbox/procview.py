"""What a strict bot's /proc shows in place of the kernel's counters that every process shares.

A fresh /proc in the bot's own PID namespace lists its own processes only, but its other files report the whole
machine: free memory, the page cache, CPU and context-switch counts, open-file and inode counts, pressure. A bot
moves them by what it does (writing to its tmpfs, holding memory or threads, opening files) and they stay moved
while it is frozen, so another bot could read them as a message. Here every such entry is masked: the files a
runtime reads for its own sizing (meminfo, stat, cpuinfo, loadavg, uptime) are replaced by static ones written
once (memory as the bot's limit), a few /proc/sys values programs look up are copied as they were at the start,
and everything else that is not per namespace or fixed at boot is shown empty.

Only the entries named in KEPT show the kernel's own: a process's directories, and what the kernel keeps per
namespace (net, sysvipc) or fixes at boot (version, cmdline, filesystems). Entries a newer kernel adds are masked
too, as they are not in that list.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

PROC = Path("/proc")
EMPTY_FILE = "empty"
"""In a bot's private tree (plans.Place.base): the empty file shown in place of a masked one."""
KEPT = frozenset(
    {"self", "thread-self", "net", "mounts", "sysvipc", "cmdline", "version", "filesystems", "devices", "execdomains"}
)
"""Per process, per namespace, or fixed at boot."""
SYS_COPIED = (
    "kernel/ngroups_max",
    "kernel/pid_max",
    "kernel/threads-max",
    "kernel/osrelease",
    "kernel/ostype",
    "kernel/cap_last_cap",
    "vm/overcommit_memory",
    "fs/nr_open",
    "fs/pipe-max-size",
)
"""/proc/sys values that C libraries and runtimes read to size themselves, copied once."""


class MaskKind(Enum):
    DATA = "data"  # a read-only file of the given content
    EMPTY_FILE = "empty-file"
    EMPTY_DIR = "empty-dir"


@dataclass(frozen=True, slots=True)
class Mask:
    path: str  # inside the sandbox
    kind: MaskKind
    content: bytes = b""


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


@functools.cache
def _host_entries(proc: Path = PROC) -> tuple[tuple[str, bool], ...]:
    """The top-level entries of /proc that are not a process's, with whether each is a directory."""
    entries = []
    for entry in sorted(os.scandir(proc), key=lambda e: e.name):
        if entry.name.isdigit() or entry.name in KEPT or entry.is_symlink():
            continue
        entries.append((entry.name, entry.is_dir(follow_symlinks=False)))
    return tuple(entries)


@functools.cache
def _snapshot() -> dict[str, bytes]:
    """What is read once per arena process: the CPU description, boot time, uptime and the /proc/sys values."""
    found = {}
    cpuinfo = _read(PROC / "cpuinfo")
    if cpuinfo is not None:
        lines = [line for line in cpuinfo.splitlines(keepends=True) if not line.startswith((b"cpu MHz", b"bogomips"))]
        found["cpuinfo"] = b"".join(lines)
    for line in (_read(PROC / "stat") or b"").splitlines():
        if line.startswith(b"btime "):
            found["btime"] = line.split()[1]
    uptime = _read(PROC / "uptime")
    if uptime:
        found["uptime"] = uptime.split()[0]
    for name in SYS_COPIED:
        value = _read(PROC / "sys" / name)
        if value is not None:
            found[f"sys/{name}"] = value
    return found


def uptime() -> str:
    """The machine's uptime in seconds when first asked: what every bot is shown as its uptime."""
    return _snapshot().get("uptime", b"0").decode()


def _meminfo(memory_bytes: int) -> bytes:
    kib = memory_bytes // 1024
    fields = {"MemTotal": kib, "MemFree": kib, "MemAvailable": kib}
    zero = ("Buffers", "Cached", "SwapCached", "Active", "Inactive", "Shmem", "SwapTotal", "SwapFree", "Dirty")
    fields.update(dict.fromkeys(zero, 0))
    return "".join(f"{name + ':':<16}{value:>8} kB\n" for name, value in fields.items()).encode()


def _stat(cpus: int, btime: bytes) -> bytes:
    idle = " 0" * 10
    lines = [f"cpu {idle}", *(f"cpu{n}{idle}" for n in range(cpus))]
    lines += ["intr 0", "ctxt 0", f"btime {btime.decode()}", "processes 1", "procs_running 1", "procs_blocked 0"]
    return ("\n".join(lines) + "\n").encode()


def masks(memory_bytes: int) -> tuple[Mask, ...]:
    """What to lay over a fresh /proc for a bot whose memory limit is memory_bytes."""
    snapshot = _snapshot()
    faked = {
        "meminfo": _meminfo(memory_bytes),
        "stat": _stat(os.cpu_count() or 1, snapshot.get("btime", b"0")),
        "loadavg": b"0.00 0.00 0.00 1/1 1\n",
        "uptime": snapshot.get("uptime", b"0.00") + b" 0.00\n",
        "cpuinfo": snapshot.get("cpuinfo", b""),
    }
    found: list[Mask] = []
    for name, is_dir in _host_entries():
        path = f"/proc/{name}"
        if name in faked:
            found.append(Mask(path, MaskKind.DATA, faked[name]))
        else:
            found.append(Mask(path, MaskKind.EMPTY_DIR if is_dir else MaskKind.EMPTY_FILE))
    found += [
        Mask(f"/proc/{name}", MaskKind.DATA, value) for name, value in snapshot.items() if name.startswith("sys/")
    ]
    return tuple(found)


def bwrap_args(laid: list[tuple[Mask, int | None]], empty_file: Path) -> list[str]:
    """bwrap's options laying the masks over its /proc: each DATA mask with the descriptor its content is in;
    empty_file, an empty regular file on the host that bwrap can read (a device node cannot stand in for one: the
    sandbox's mounts do not open devices but its own /dev's)."""
    args: list[str] = []
    read_only_dirs = []
    for mask, fd in laid:
        if mask.kind is MaskKind.EMPTY_DIR:
            args += ["--tmpfs", mask.path]
            read_only_dirs.append(mask.path)
        elif mask.kind is MaskKind.EMPTY_FILE:
            args += ["--ro-bind", str(empty_file), mask.path]
        else:
            args += ["--perms", "0444", "--ro-bind-data", str(fd), mask.path]
    for path in read_only_dirs:
        args += ["--remount-ro", path]
    return args

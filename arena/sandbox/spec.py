"""What the caller asks for: the isolation level, the resource limits, and how to start the bot."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path


class SandboxLevel(Enum):
    """How much of the machine a bot is kept away from."""

    STRICT = "strict"  # bubblewrap: own PID, network, IPC, UTS, user and mount namespaces
    BASIC = "basic"  # own session, own UID when root, rlimits, private cwd, scrubbed environment
    NONE = "none"  # trusted code: own session only, inherits the environment, cwd = bot_dir


class MemoryMechanism(Enum):
    """How Limits.memory_mb is held: both count what the bot's processes use, not the address space they reserve
    (a JVM or V8 reserves many times what it uses)."""

    AUTO = "auto"  # cgroup where the arena can create one, else rlimit
    CGROUP = "cgroup"  # a memory cgroup per bot process, swap included: the kernel stops the bot at the limit
    RLIMIT = "rlimit"  # RLIMIT_DATA per process, and a watch on the resident memory of the bot's process tree


@dataclass(frozen=True, slots=True)
class Limits:
    """Resource limits per bot; the defaults suit student bots."""

    memory_mb: int = 1024  # memory the bot uses, its whole process tree together (see MemoryMechanism)
    cpu_s: int = 120  # RLIMIT_CPU soft limit (SIGXCPU); the hard limit (SIGKILL) is one second later
    processes: int = 64  # RLIMIT_NPROC; threads count too, and pyzmq starts a few
    open_files: int = 256  # RLIMIT_NOFILE
    file_size_mb: int = 64  # RLIMIT_FSIZE
    stderr_kb: int = 256  # how much of stderr is kept; the rest is dropped, which is not a fault
    disk_mb: int = 256  # what the bot may have written at any time, its workdir and /tmp together (see disk.py)
    memory_mechanism: MemoryMechanism = MemoryMechanism.AUTO

    def __post_init__(self) -> None:
        for name in ("memory_mb", "cpu_s", "processes", "open_files", "file_size_mb", "disk_mb"):
            if getattr(self, name) < 1:
                raise ValueError(f"Limits.{name} must be at least 1, not {getattr(self, name)}")
        if self.stderr_kb < 0:
            raise ValueError(f"Limits.stderr_kb must not be negative, not {self.stderr_kb}")


@dataclass(frozen=True, slots=True)
class LaunchSpec:
    """Everything needed to start one bot process; no protocol work happens here.

    A relative command path containing a slash (``./bot``) is taken relative to ``bot_dir``; a bare name is
    looked up on the bot's PATH.
    """

    command: tuple[str, ...]
    bot_dir: Path  # the bot's own files: read-only under strict
    env: Mapping[str, str] = field(default_factory=dict)  # protocol variables, e.g. ARENA_ENDPOINT, ARENA_TOKEN
    level: SandboxLevel = SandboxLevel.STRICT
    limits: Limits = Limits()
    socket_dir: Path | None = None  # private directory holding the ipc socket the caller already bound
    stdio: bool = False  # True: the caller gets pipes to the bot's stdin and stdout
    cpu: int | None = None  # pin the bot to this CPU when given
    stderr_echo: Callable[[bytes], None] | None = field(default=None, compare=False)
    """Handed each chunk of the bot's stderr as it is read (arena check-bot --stderr), besides the log."""

"""Plays a covert-channel pair (pair.py) as the arena plays two bots: turn by turn, each frozen off its turn.

Each turn the sender is thawed, told a secret card value (as if it were its own hand), answers, and is frozen;
then the receiver is thawed, asked its guess, answers, and is frozen. Both run in the real sandbox, each with a
bot directory of its own. What the pair got across is told by how often the receiver guessed right, against the
1 in 8 of a blind guess (binomial_tail), and by the mutual information of sent and guessed values.

No pytest here: the benchmark (benchmarks/covert_channels.py) plays the pairs too.
"""

from __future__ import annotations

import errno
import functools
import json
import math
import os
import platform
import random
import secrets
import select
import shutil
import socket
import stat
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from arena.sandbox import BotProcess, LaunchSpec, SandboxLevel, launch
from tests.sandbox.covert import pair

PAIR = Path(pair.__file__)
CHANNELS = tuple(pair.CHANNELS)
PAGE_CACHE = ("mincore", "read-timing", "fault-around")
"""Pairs through the page cache of agreed large files (covert.json's files)."""
SHARED = frozenset(
    {
        *("flock", "lease", "inotify", "dnotify", "atime", *PAGE_CACHE),
        *("meminfo", "vmstat", "sysinfo", "loadavg", "stat", "uptime", "file-nr", "inode-nr", "dentry-state"),
        *("sigpending", "sockstat", "userns"),
    }
)
"""Channels through what other pairs on the machine use too: the kernel's counters (the user's pending signals and
user namespaces among them), the pages of the agreed files, the Python install's files that the flock, lease and
inotify pairs pick (a file another pair holds open takes no write lease), the time zone directories and the
documentation's access times, unlike those through names or lock ranges of the pair's own. Their pairs play one
at a time machine-wide (the other xdist worker, a test run beside this one, as .ci/run starts them), else each
would be another's noise."""
MUTEX = b"\0arena-covert-channels-one-at-a-time"
"""An abstract unix socket, as a mutex for every process in the machine's network namespace (test runs, whoever
runs them): one process at a time can bind it, and it is freed when its process ends, however it ends. Never a
file to leave behind."""
MUTEX_WAIT_S = 300.0
START_S = 30.0
"""How long a bot may take to start and set its channel up (bwrap and Python, on a loaded machine)."""
REPLY_S = 10.0
CHANCE = 1 / 8
COLD_FILES = 4
LARGE = 1 << 20


class CovertError(Exception):
    """The driver could not play the pair: a bot died, or did not answer in time."""


@dataclass(slots=True)
class Run:
    """What one pair did over its turns."""

    channel: str
    level: SandboxLevel
    tag: str
    sent: list[int] = field(default_factory=list)
    guessed: list[int] = field(default_factory=list)
    notes: Counter[str] = field(default_factory=Counter)
    """The bots' notes, "send: ..." and "guess: ...": a refused call, a receiver that could not decode."""
    seconds: float = 0.0

    @property
    def turns(self) -> int:
        return len(self.sent)

    @property
    def correct(self) -> int:
        return sum(s == g for s, g in zip(self.sent, self.guessed, strict=True))

    @property
    def p_value(self) -> float:
        """How likely a blind receiver is to guess right this often or more."""
        return binomial_tail(self.correct, self.turns, CHANCE)

    def summary(self) -> str:
        notes = ", ".join(f"{note} x{count}" for note, count in self.notes.most_common(4))
        return (
            f"{self.channel} at {self.level.value}: {self.correct}/{self.turns} right (chance 1/8, p = "
            f"{self.p_value:.2g}), {mutual_information(self.sent, self.guessed):.2f} bits a turn; notes: {notes}"
        )


def binomial_tail(successes: int, trials: int, p: float) -> float:
    """P(X >= successes) for X ~ Binomial(trials, p), summed in exact fractions (1/8 is exact in binary)."""
    q = Fraction(p)
    return float(sum(math.comb(trials, k) * q**k * (1 - q) ** (trials - k) for k in range(successes, trials + 1)))


def mutual_information(sent: Sequence[int], guessed: Sequence[int]) -> float:
    """Bits a turn the guesses tell of the values sent, from their confusion matrix (a plug-in estimate: with few
    turns it is biased upwards, by about (cells - 1) / (2 n ln 2) bits)."""
    turns = len(sent)
    if not turns:
        return 0.0
    joint = Counter(zip(sent, guessed, strict=True))
    sent_counts, guessed_counts = Counter(sent), Counter(guessed)
    return sum(
        count / turns * math.log2(count * turns / (sent_counts[s] * guessed_counts[g]))
        for (s, g), count in joint.items()
    )


ELF_MACHINES = {"x86_64": 62, "aarch64": 183}


def runs_here(path: str) -> bool:
    """Whether path is a program or library of this machine (ELF, of its architecture): one that some process may
    have mapped, whose pages stay resident. A Mach-O, a Windows program or an ELF of another architecture (the
    selenium package brings one of each) is never run here."""
    try:
        with open(path, "rb") as stream:
            head = stream.read(20)
    except OSError:
        return True
    machine = ELF_MACHINES.get(platform.machine())
    return head[:4] == b"\x7fELF" and (machine is None or int.from_bytes(head[18:20], "little") == machine)


def large_files(roots: Sequence[str]) -> list[tuple[int, str]]:
    """(size, path) of the files of at least LARGE bytes under roots that every user may read, largest first."""
    found: list[tuple[int, str]] = []
    for root in roots:
        for directory, _, names in os.walk(root):
            for name in names:
                path = os.path.join(directory, name)
                try:
                    info = os.lstat(path)
                except OSError:
                    continue
                if stat.S_ISREG(info.st_mode) and info.st_mode & stat.S_IROTH and info.st_size >= LARGE:
                    found.append((info.st_size, path))
    return sorted(found, reverse=True)


@functools.cache
def cold_files(megabytes: int = 0) -> tuple[str, ...]:
    """Shared files that every level shows, that every user (a bot's UID too) may read and that nothing here maps,
    largest first: the page-cache pairs' agreement. The largest COLD_FILES of the venv (as an ordinary user, the
    arena's user owns them, and mincore shows a file's pages to its owner), its libraries if it has nothing else;
    or, given megabytes, as many as make that much, from /usr/share too (a pair that cannot evict a page it used
    needs fresh ones every turn)."""
    if not megabytes:
        own = [path for _, path in large_files([sys.prefix])]
        return tuple(([path for path in own if not runs_here(path)] or own)[:COLD_FILES])
    found = [(size, path) for size, path in large_files([sys.prefix, "/usr/share"]) if not runs_here(path)]
    chosen, total = [], 0
    for size, path in found:
        if total >= megabytes * LARGE:
            break
        chosen.append(path)
        total += size
    return tuple(chosen)


def evict(files: Sequence[str]) -> None:
    """Drop the files' pages from the page cache (those no process maps): each page-cache pair starts as on a
    machine that has not read them lately, whatever pair read them before."""
    for path in files:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


class Member:
    """One bot of the pair, spoken to one line at a time; frozen but while it answers."""

    def __init__(self, bot: BotProcess, role: str) -> None:
        self.bot = bot
        self.role = role
        self.pending = b""

    def line(self, timeout: float) -> str:
        """The bot's next line, within timeout: polling its stdout and its pidfd, no sleeping."""
        deadline = time.monotonic() + timeout
        fd = self.bot.stdout_fd
        assert fd is not None
        while b"\n" not in self.pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise CovertError(f"the {self.role} did not answer within {timeout} s{self.stderr()}")
            ready = select.select([fd, self.bot.fileno()], [], [], remaining)[0]
            if fd in ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise CovertError(f"the {self.role} closed its stdout{self.stderr()}")
                self.pending += chunk
            elif ready and self.bot.returncode() is not None:
                raise CovertError(f"the {self.role} exited with {self.bot.returncode()}{self.stderr()}")
        line, self.pending = self.pending.split(b"\n", 1)
        return line.decode()

    def ask(self, line: str) -> str:
        """Thaw, ask, read the answer, freeze: as the arena's BotHost.request does."""
        self.bot.clock.thaw()
        fd = self.bot.stdin_fd
        assert fd is not None
        os.write(fd, line.encode() + b"\n")
        answer = self.line(REPLY_S)
        self.bot.clock.freeze()
        return answer

    def stderr(self) -> str:
        tail = self.bot.stderr_tail().strip() if self.bot.returncode() is not None else ""
        return f"; its stderr: {tail}" if tail else ""


@contextmanager
def one_at_a_time(channel: str) -> Iterator[None]:
    """Hold MUTEX while a pair of a SHARED channel plays: polled, up to MUTEX_WAIT_S."""
    if channel not in SHARED:
        yield
        return
    deadline = time.monotonic() + MUTEX_WAIT_S
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as held:
        while True:
            try:
                held.bind(MUTEX)
                break
            except OSError as error:
                if error.errno != errno.EADDRINUSE:
                    raise
                if time.monotonic() >= deadline:
                    raise CovertError(f"another pair held the machine for {MUTEX_WAIT_S} s") from None
                time.sleep(0.01)
        yield


@contextmanager
def member(role: str, channel: str, tag: str, level: SandboxLevel, agreed: dict[str, object]) -> Iterator[Member]:
    """A started bot of the pair, ready and frozen, in a bot directory of its own; killed and removed after."""
    directory = Path(tempfile.mkdtemp(prefix=f"arena-covert-{role}-"))
    try:
        directory.chmod(0o755)  # as root, a bot has a UID of its own
        script = directory / "pair.py"
        shutil.copyfile(PAIR, script)
        (directory / "covert.json").write_text(json.dumps(agreed))
        command = (sys.executable, str(script), "send" if role == "sender" else "receive", channel, tag)
        with launch(LaunchSpec(command=command, bot_dir=directory, level=level, stdio=True)) as bot:
            one = Member(bot, role)
            ready = one.line(START_S)
            if ready != "ready":
                raise CovertError(f"the {role} said {ready!r} instead of ready")
            bot.clock.freeze()
            yield one
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def play(
    channel: str,
    level: SandboxLevel,
    turns: int,
    *,
    seed: int | str | None = None,
    unit: float | None = None,
    files: Sequence[str] | None = None,
) -> Run:
    """Play turns turns of channel's pair at level. The secret values are uniform on 1..8, from seed (None: fresh):
    a fixed seed replays the same hands, so that a failure can be told again. unit: a counter pair's step, if not
    pair.UNITS's; files: the page-cache pairs' shared files, if not cold_files()."""
    values = random.Random(seed if seed is not None else secrets.randbits(64))
    run = Run(channel, level, secrets.token_hex(4))
    if files is None:
        files = cold_files() if channel in PAGE_CACHE else ()
    agreed: dict[str, object] = {"files": list(files)}
    if unit is not None:
        agreed["unit"] = unit
    try:
        with ExitStack() as stack:
            stack.enter_context(one_at_a_time(channel))
            evict(files)
            started = time.monotonic()
            sender = stack.enter_context(member("sender", channel, run.tag, level, agreed))
            receiver = stack.enter_context(member("receiver", channel, run.tag, level, agreed))
            for _ in range(turns):
                value = values.randint(1, 8)
                note = sender.ask(f"send {value}").removeprefix("ok").strip()
                guess, _, why = receiver.ask("guess").partition(" ")
                run.sent.append(value)
                run.guessed.append(int(guess))
                run.notes.update(f"{role}: {text}" for role, text in (("send", note), ("guess", why)) if text)
            run.seconds = time.monotonic() - started
    finally:
        pair.cleanup(run.tag)
    return run

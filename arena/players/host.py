"""One bot process kept across matches: started, greeted, asked, and killed on its first fault.

The host watches the process (its pidfd) in the same poll as the channel, so a crash is seen at
once. Every fault kills the whole process tree; the next match starts a new process.

Each reply is charged with the CPU time the bot's processes used since the request (their clock,
arena.sandbox.cpuclock), never with time another process took: whatever a bot does with the CPU costs
the others nothing. The wall clock only caps a reply (Timing.wall_factor). Between its reply and the
next message to it a bot is frozen, unless Timing.ponder.
"""

from __future__ import annotations

import logging
import os
import secrets
import select
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import zmq
from zmq.backend import zmq_poll

from arena.engine import FaultReason
from arena.errors import PlayerFault
from arena.players import channels
from arena.players.channels import POLLIN, Channel, Dropped
from arena.players.values import BotCommand, Timing, Transport
from arena.protocol import read_hello, read_reply, shutdown_message, welcome_message
from arena.protocol.replies import malformed
from arena.sandbox import BotProcess, LaunchSpec, Limits, SandboxError, SandboxLevel, SetupError, probe
from arena.sandbox.cpuclock import CpuClock

log = logging.getLogger(__name__)

EXIT_GRACE_S = 0.1
"""After the process exits, how long the channel may still deliver a reply it sent just before."""
DROP_GRACE_S = 1.0
"""After the bot's connection drops, how long its process has to exit (a crash, then) before the drop counts as
the bot's malformed message: a dying process hangs up first, and exits late on a loaded machine."""
SHUTDOWN_GRACE_S = 2.0
IDLE_LOOK_S = 0.002
"""How long a bot seen alive counts as alive for the checks between decisions (a move takes ~0.3 ms)."""
CORES = os.cpu_count() or 1
"""A process's threads use CPU time at most this many times as fast as the wall clock runs."""
START_ATTEMPTS = 3
"""Failed starts in a row (a process that cannot be launched, exits or fails its handshake before its hello)
after which a bot is not started again for the rest of the run: each later match is a fault at once."""
CPU_SLICE_S = 0.002
"""While a bot thinks, its CPU time is read again at the latest when it could have used its budget on every core,
but not more often than this."""
OFF_TURN_MS = 100
"""The CPU time a frozen bot's processes may use between a reply and the next request (freezing takes a moment):
beyond it, something of the bot escaped the freezer, and that is a limit fault."""
STDIO_FLUSH_HINT = (
    "; over stdio a bot must flush its standard output after each line (Python: print(..., flush=True); Java:"
    " System.out.flush()), or its hello waits in a buffer"
)
STDIO_HINT = "it wrote its hello to standard output: it speaks over its standard streams (protocol stdio)"


@dataclass(slots=True)
class HostStats:
    starts: int = 0
    replies: int = 0
    slowest_ms: float = 0.0
    """Wall time of the slowest reply."""
    slowest_cpu_ms: float = 0.0
    """CPU time of the most expensive reply (the one move_ms limits)."""
    failed_starts: int = 0
    """Failed starts in a row (see START_ATTEMPTS)."""
    hello_on_stdout: bool = False
    """A ZeroMQ bot wrote a hello to its standard output: it is a stdio bot."""
    peak_memory: int = 0
    """In bytes: the most memory a finished process of this host used (BotHost.peak_memory adds the live one)."""
    peak_disk: int = 0
    """In bytes: the most a finished process of this host had written at once (as peak_memory)."""


class BotHost:
    def __init__(
        self,
        bot: BotCommand,
        timing: Timing = Timing(),
        sandbox: SandboxLevel = SandboxLevel.STRICT,
        limits: Limits = Limits(),
        *,
        context: zmq.Context | None = None,
        cpu: int | None = None,
        stderr_echo: Callable[[bytes], None] | None = None,
    ) -> None:
        self.bot = bot
        self.stderr_echo = stderr_echo
        """Handed each chunk of the bot's stderr as it comes (arena check-bot --stderr)."""
        self.timing = timing
        self.sandbox = sandbox
        self.limits = limits
        self.cpu = cpu
        self.stats = HostStats()
        self._context = context
        self._process: BotProcess | None = None
        self._channel: Channel | None = None
        self._directory: Path | None = None
        self._exit_watch: select.poll | None = None
        """The process's pidfd alone: a look between decisions."""
        self._idle_look_due = 0.0
        """Before this moment `check_alive` does not look: the process was seen alive very recently."""
        self._cpu_check_due = 0.0
        """Before this moment the process cannot have used half its CPU limit, whatever it did."""
        self._awaiting_hello = False
        self._last_start_fault: PlayerFault | None = None
        self._cpu_at_reply: int | None = None
        """The bot's CPU nanoseconds when it last replied, while it is frozen until the next request."""
        self._reply_times: list[tuple[float, float]] = []
        """(CPU ms, wall ms) of each `act` reply since take_reply_times()."""
        self._log_parts: list[bytes] = []
        """The stderr of processes ended since take_log(), each kept as the process's log is kept."""

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.returncode() is None

    def ensure_running(self) -> None:
        """Start the bot and greet it, unless its process is alive and greeted already.

        The CPU limit counts per process, over every match it plays: a process that has used half of it
        is shut down and replaced between matches, so a long tournament never trips the limit.
        """
        if self.running:
            if not self._worn_out():
                return
            self.shutdown()
        last = self._last_start_fault
        if self.stats.failed_starts >= START_ATTEMPTS and last is not None:
            detail = f"not restarted: it failed to start {self.stats.failed_starts} times in a row; last: {last.detail}"
            raise PlayerFault(last.reason, detail, last.stderr_tail)
        self._start()

    def _worn_out(self) -> bool:
        """Has the process used half its CPU limit? Reading /proc is slow, so it is read only once the wall
        time since the last reading, on every core, could have added up to that much."""
        now = time.monotonic()
        if self.sandbox is SandboxLevel.NONE or now < self._cpu_check_due:
            return False
        assert self._process is not None
        used = self._process.cpu_used()
        if used < self.limits.cpu_s / 2:
            self._cpu_check_due = now + (self.limits.cpu_s / 2 - used) / CORES
            return False
        log.info("bot %s: a fresh process after %.0f s of CPU time", self.bot.name, used)
        return True

    def _start(self) -> None:
        self.kill()
        self.stats.starts += 1
        started = time.monotonic()
        self._awaiting_hello = True
        try:
            token = self._launch()
            self._await_hello(token)
        except PlayerFault as fault:
            self._blame_the_sandbox_instead(fault)
            self.stats.failed_starts += 1
            self._last_start_fault = fault
            raise
        finally:
            self._awaiting_hello = False
        self.stats.failed_starts = 0
        self._welcome()
        log.debug("bot %s started in %.0f ms", self.bot.name, (time.monotonic() - started) * 1000)

    def _blame_the_sandbox_instead(self, fault: PlayerFault) -> None:
        """A start that failed may be bwrap's, failing before the bot's program ran (no user namespace left, no
        memory): a sandbox started afresh here with a program that only exits tells. SetupError if that one
        fails too, so that neither the bot nor its start count is blamed."""
        if self.sandbox is SandboxLevel.NONE:
            return
        problem = probe(self.sandbox)
        if problem is not None:
            raise SetupError(f"the sandbox cannot start a program here: {problem}") from fault

    def _launch(self) -> str:
        """Start the process and its channel; the token its hello must carry."""
        token = secrets.token_hex(16)
        try:
            self._directory = Path(tempfile.mkdtemp(prefix="arena-ipc-"))
        except OSError as error:  # the arena's own temporary folder: full, or out of inodes
            raise SetupError(f"the arena could not start a bot: {error}") from error
        spec = LaunchSpec(
            command=self.bot.command,
            bot_dir=self.bot.directory,
            env={"ARENA_TOKEN": token},
            level=self.sandbox,
            limits=self.limits,
            cpu=self.cpu,
            stderr_echo=self.stderr_echo,
        )
        try:
            self._channel, self._process = channels.start(self.bot.protocol, spec, self._directory, self._context)
        except SetupError:
            raise  # the machine's or the arena's: the match is left unplayed, and the bot is not blamed
        except SandboxError as error:
            raise PlayerFault(FaultReason.CRASH, str(error)) from None
        except OSError as error:  # the arena's own: its descriptors, its disk (the system's temporary folder)
            raise SetupError(f"the arena could not start a bot: {error}") from error
        self._cpu_check_due = time.monotonic() + self.limits.cpu_s / 2 / CORES
        self._cpu_at_reply = None
        self._exit_watch = select.poll()
        self._exit_watch.register(self._process.fileno(), select.POLLIN)
        return token

    def _await_hello(self, token: str) -> None:
        deadline = time.monotonic() + self.timing.startup_ms / 1000
        ignored = ""
        """The first message that was not a hello, for the detail."""
        while True:
            identity, payload = self._wait(deadline, handshake=True)
            if payload is None:
                note = f"; ignored: {ignored}" if ignored else ""
                if self.bot.protocol is Transport.STDIO and not ignored:
                    note += STDIO_FLUSH_HINT
                raise self.fault(
                    PlayerFault(FaultReason.HANDSHAKE, f"no hello within {self.timing.startup_ms} ms{note}")
                )
            assert self._channel is not None
            try:
                not_a_hello = read_hello(payload, token, token_required=self._channel.token_required)
            except PlayerFault as fault:
                raise self.fault(fault) from None
            if not_a_hello is not None:
                ignored = ignored or not_a_hello
                continue
            self._channel.accept(identity)
            return

    def _welcome(self) -> None:
        self.request(welcome_message(self.bot.name, self.timing.move_ms, self.timing.startup_ms))

    def request(self, message: dict[str, Any], *, freeze: bool = True) -> dict[str, Any]:
        """Send one message and return the bot's reply object; PlayerFault on any fault.

        The bot is thawed first, charged with the CPU time its processes use until the reply, and frozen
        again after it (unless freeze is False or the timing lets it ponder). This runs once per move, so it
        is kept flat: the usual case is two CPU readings, one send, one poll, one read, one freeze.
        """
        channel, process = self._channel, self._process
        if channel is None or process is None:
            raise RuntimeError(f"bot {self.bot.name}: {message['type']} asked of a host with no process")
        timing, clock = self.timing, process.clock
        start_cpu = clock.cpu_ns()
        if self._cpu_at_reply is not None:
            off_turn_ms = (start_cpu - self._cpu_at_reply) / 1e6
            self._cpu_at_reply = None
            if off_turn_ms > OFF_TURN_MS:
                raise self.fault(
                    PlayerFault(
                        FaultReason.LIMIT,
                        f"used {off_turn_ms:.0f} ms of CPU off its turn, while frozen (bound {OFF_TURN_MS} ms)",
                    )
                )
        clock.thaw()
        if channel.discard_stale():
            log.debug("bot %s: dropped what it sent while no message awaited a reply", self.bot.name)
        sent = time.monotonic()
        if not channel.send(orjson.dumps(message)):
            raise self.fault(self._gone("the bot's connection is gone"))
        budget = _CpuBudget(clock, start_cpu, timing.move_ms * 1_000_000, sent)
        _, payload = self._wait(sent + timing.wall_ms / 1000, budget=budget)
        if payload is None:
            budget.spent()  # the latest reading, for the detail
            self._timed_out(message, (clock.cpu_ns() - start_cpu) / 1e6, sent)
            raise self.fault(PlayerFault(FaultReason.TIMEOUT, budget.late(message["type"], timing)))
        used = clock.cpu_ns()
        if freeze and not timing.ponder:
            clock.freeze()
            self._cpu_at_reply = used
        used_ms = (used - start_cpu) / 1e6
        if used_ms > timing.move_ms:
            self._timed_out(message, used_ms, sent)
            raise self.fault(PlayerFault(FaultReason.TIMEOUT, _cpu_late(message["type"], used_ms, timing)))
        stats = self.stats
        stats.replies += 1
        replied = time.monotonic()
        self._idle_look_due = replied + IDLE_LOOK_S
        elapsed_ms = (replied - sent) * 1000
        if message["type"] == "act":
            self._reply_times.append((used_ms, elapsed_ms))
        if elapsed_ms > stats.slowest_ms:
            stats.slowest_ms = elapsed_ms
        if used_ms > stats.slowest_cpu_ms:
            stats.slowest_cpu_ms = used_ms
        try:
            return read_reply(payload, message["type"])
        except PlayerFault as fault:
            raise self.fault(fault) from None

    def _timed_out(self, message: dict[str, Any], used_ms: float, sent: float) -> None:
        """A move answered too late counts among the reply times, with what it used: the slowest replies are the
        ones a summary must not leave out."""
        if message["type"] == "act":
            self._reply_times.append((used_ms, (time.monotonic() - sent) * 1000))

    def _wait(
        self, deadline: float, handshake: bool = False, budget: _CpuBudget | None = None
    ) -> tuple[bytes, bytes | None]:
        """The next message from the bot, or (b"", None) at the deadline or once the bot has used its CPU budget
        (budget.spent tells); faults for exits and drops."""
        channel, process = self._channel, self._process
        assert channel is not None and process is not None
        exit_item = (process.fileno(), POLLIN)
        exited_at: float | None = None
        while True:
            now = time.monotonic()
            if exited_at is not None and now >= exited_at + EXIT_GRACE_S:
                raise self.fault(self._exit_fault(handshake))
            limit = deadline if exited_at is None else min(deadline, exited_at + EXIT_GRACE_S)
            if now >= limit:
                return b"", None
            wait_s = limit - now
            if budget is not None:
                wait_s = min(wait_s, budget.due - now)
            ready = [item for item, _ in zmq_poll([*channel.poll_items(), exit_item], max(1, int(wait_s * 1000)))]
            if budget is not None and time.monotonic() >= budget.due and budget.spent():
                return b"", None
            if not channel.pump(ready):
                exited_at = exited_at or time.monotonic()
            for identity, arrival in channel.arrivals(ready):
                if isinstance(arrival, bytes):
                    if channel.peer is not None and identity != channel.peer:
                        continue  # not the bot: ignored
                    return identity, arrival
                if isinstance(arrival, Dropped):
                    if process.wait(DROP_GRACE_S) is None:  # a dying process drops its connection first
                        if handshake:
                            continue  # a connection that never said hello
                        raise self.fault(malformed(arrival.detail))
                    exited_at = exited_at or time.monotonic()
                    continue
                # garbled: the bot's fault, unless it came from another connection or before any hello
                if handshake or (channel.peer is not None and identity != channel.peer):
                    continue
                raise self.fault(malformed(arrival.detail))
            if process.fileno() in ready and exited_at is None:
                exited_at = time.monotonic()

    def _exit_fault(self, handshake: bool) -> PlayerFault:
        assert self._process is not None
        self._process.wait(1.0)
        kind, detail = self._process.exit_fault()
        reason = FaultReason.LIMIT if kind == "limit" else FaultReason.CRASH
        when = " before its hello" if handshake else ""
        return PlayerFault(reason, f"{detail}{when}")

    def _gone(self, detail: str) -> PlayerFault:
        if self._process is not None and self._process.wait(EXIT_GRACE_S) is not None:
            return self._exit_fault(False)
        return PlayerFault(FaultReason.CRASH, detail)

    def fault(self, fault: PlayerFault) -> PlayerFault:
        """Attach the stderr tail, kill the process tree, and hand the fault back to raise."""
        if self._process is not None:
            fault.stderr_tail = self._process.stderr_tail()
            logs_stdout = self._channel is not None and self._channel.stdout_logged
            if self._awaiting_hello and logs_stdout and _says_hello(self._process.stderr_log):
                self.stats.hello_on_stdout = True
                fault.detail = f"{fault.detail}; {STDIO_HINT}"
        self.kill()
        return fault

    def shutdown(self) -> PlayerFault | None:
        """Ask the bot to exit; kill it after the grace period. A fault here is returned, not raised."""
        fault = None
        if self.running:
            self.peak_disk()  # what it wrote, before it may clean up
            try:
                self.request(shutdown_message(), freeze=False)
            except PlayerFault as error:
                fault = error
            if self._process is not None:
                self._process.wait(SHUTDOWN_GRACE_S)
        self.kill()
        return fault

    def peak_memory(self) -> int:
        """The most memory, in bytes, any process of this bot has used so far (0 before the first starts)."""
        live = self._process.peak_memory() if self._process is not None else 0
        return max(self.stats.peak_memory, live)

    def peak_disk(self) -> int:
        """The most, in bytes, any process of this bot had written at once (its workdir and /tmp together)."""
        live = self._process.peak_disk() if self._process is not None else 0
        return max(self.stats.peak_disk, live)

    def kill(self) -> None:
        self._exit_watch = None
        if self._channel is not None:
            self._channel.close()
            self._channel = None
        if self._process is not None:
            self._process.kill()
            if part := self._process.take_log_segment():
                self._log_parts.append(part)
            self.stats.peak_memory = max(self.stats.peak_memory, self._process.peak_memory())
            self.stats.peak_disk = max(self.stats.peak_disk, self._process.peak_disk())
            self._process = None
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None

    def take_reply_times(self) -> list[tuple[float, float]]:
        """(CPU ms, wall ms) of each `act` reply since the last take: a match's, for its bot's diagnostics."""
        taken, self._reply_times = self._reply_times, []
        return taken

    def take_log(self) -> bytes:
        """What the bot wrote to stderr since the last take (a match's log, OUTPUT/logs/BOT/MATCH.log): every
        process's part, each bounded as its whole log is (limits.stderr_kb, then the last 16 KiB)."""
        parts, self._log_parts = self._log_parts, []
        if self._process is not None:
            parts.append(self._process.take_log_segment())
        return b"".join(parts)

    def check_alive(self) -> None:
        """Between decisions: a bot whose process died while idle is at fault now.

        The referee asks this of every idle bot before every decision, and the look is a system call: a
        bot seen alive less than IDLE_LOOK_S ago (by this look, or by answering) is not looked at yet.
        """
        now = time.monotonic()
        if now < self._idle_look_due:
            return
        self._idle_look_due = now + IDLE_LOOK_S
        if self._exit_watch is not None and self._exit_watch.poll(0) and self._process is not None:
            raise self.fault(self._exit_fault(False))

    def __enter__(self) -> BotHost:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()


@dataclass(slots=True)
class _CpuBudget:
    """The CPU time one reply may take, looked at while the host waits for it."""

    clock: CpuClock
    start_ns: int
    budget_ns: int
    due: float
    """When to read the clock next (time.monotonic): the earliest moment the bot could have used the rest of its
    budget, running on every core, but never sooner than CPU_SLICE_S after the last reading."""
    used_ns: int = 0

    def __post_init__(self) -> None:
        self.due += max(CPU_SLICE_S, self.budget_ns / 1e9 / CORES)

    def spent(self) -> bool:
        self.used_ns = self.clock.cpu_ns() - self.start_ns
        self.due = time.monotonic() + max(CPU_SLICE_S, (self.budget_ns - self.used_ns) / 1e9 / CORES)
        return self.used_ns > self.budget_ns

    def late(self, kind: str, timing: Timing) -> str:
        """Why no reply came: the CPU budget, or the wall-clock cap."""
        if self.used_ns > self.budget_ns:
            return _cpu_late(kind, self.used_ns / 1e6, timing)
        return (
            f"no reply to {kind} within {timing.wall_ms} ms of wall time (the cap, {timing.wall_factor} times move_ms;"
            f" it used {self.used_ns / 1e6:.0f} ms of CPU)"
        )


def _cpu_late(kind: str, used_ms: float, timing: Timing) -> str:
    return f"no reply to {kind} within {timing.move_ms} ms of CPU time: it used {used_ms:.0f} ms of CPU"


def _says_hello(log: bytes) -> bool:
    """Does a ZeroMQ bot's log (its stdout goes there) hold a hello line, as a stdio bot writes one?"""
    for line in log.splitlines():
        line = line.strip()
        if line.startswith(b"{") and b"hello" in line:
            try:
                said = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if type(said) is dict and said.get("type") == "hello":
                return True
    return False

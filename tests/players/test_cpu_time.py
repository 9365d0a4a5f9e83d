"""A bot's time is its own CPU time: what another process does with the CPU never makes it late, and a bot is
frozen off its turn (cpuclock.py, BotHost.request). Real bots, real processes, real CPU contention."""

from __future__ import annotations

import time

import pytest

from arena.engine import Action, Decision, FaultReason, Observer
from arena.players import RandomPlayer
from arena.players.host import OFF_TURN_MS, BotHost
from arena.players.values import Timing
from arena.sandbox import SandboxLevel, cpuclock, procfs
from tests.players.test_remote import only_fault, play

THINK = """
end = time.process_time() + {seconds}
while time.process_time() < end:
    pass
"""

HOG_CHILDREN = """
for _ in range(3):
    if os.fork() == 0:
        while True:
            pass
"""

# Leaves the bot's process tree (a double fork: it re-parents to the arena) and continues the bot every 5 ms.
ESCAPEE = """
import signal, threading
bot_pid = os.getpid()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        while True:
            os.kill(bot_pid, signal.SIGCONT)
            time.sleep(0.005)
    os._exit(0)
os.wait()

def spin():
    while True:
        pass
"""
SPIN_AFTER_FIRST_ACT = "if acts == 1: threading.Thread(target=spin, daemon=True).start()"


class SlowPlayer(RandomPlayer):
    """Thinks for a while on its first turns: the others are off theirs meanwhile. Given the bot that spins, it
    thinks on while that bot's CPU time keeps growing, until it has grown by twice the off-turn bound: on a loaded
    machine a spinning thread gets a fraction of a core, and a fixed 0.25 s may hold less than the bound."""

    slow_turns = 3

    def __init__(self, seed: int, spinner: BotHost | None = None) -> None:
        super().__init__(seed)
        self.spinner = spinner

    def act(self, decision: Decision, observer: Observer) -> Action:
        if self.slow_turns:
            self.slow_turns -= 1
            start = self._spinner_cpu_ns()
            time.sleep(0.25)
            deadline, last = time.monotonic() + 10, start
            while start is not None and time.monotonic() < deadline:
                now = self._spinner_cpu_ns()
                if now is None or now == last or now - start > 2 * OFF_TURN_MS * 1_000_000:
                    break
                last = now
                time.sleep(0.05)
        return super().act(decision, observer)

    def _spinner_cpu_ns(self) -> int | None:
        process = self.spinner._process if self.spinner else None
        return process.clock.cpu_ns() if process else None


@pytest.mark.parametrize("ponder", [False, True], ids=["frozen-off-turn", "ponder"])
def test_an_honest_bot_at_70_percent_of_move_ms_beside_a_hog_on_its_cpu_gets_no_timeout(
    make_bot, hosts: list[BotHost], ponder: bool
) -> None:
    """Both bots on one CPU: the hog's three spinning children would take three quarters of it. A move of 200 ms,
    not less: where the clock is read from /proc (no cgroup), each reading is rounded to a 10 ms tick."""
    timing = Timing(move_ms=200, startup_ms=5000, ponder=ponder)
    honest = BotHost(make_bot("honest", on_act=THINK.format(seconds=0.14)), timing, SandboxLevel.STRICT, cpu=0)
    hog = BotHost(make_bot("hog", before_hello=HOG_CHILDREN), timing, SandboxLevel.STRICT, cpu=0)
    hosts.extend([honest, hog])
    outcome = play([honest, hog, RandomPlayer(1)], seed=4)
    # The hog's children spin on its own turns too, and its time is theirs: its fault if they use it up.
    assert [fault for fault in outcome.faults if fault.seat == 0] == []
    assert honest.stats.replies > 10 and honest.stats.slowest_cpu_ms > 130


def test_a_bot_is_charged_with_the_cpu_time_of_its_whole_tree_and_stopped_at_move_ms(make_bot, host_for) -> None:
    """The bot itself waits; a child it started spins. The wall cap is ten times further."""
    on_act = "if acts == 2:\n    if os.fork() == 0:\n        while True: pass\n    time.sleep(60)"
    host = host_for(make_bot(on_act=on_act), move_ms=300, wall_factor=10)
    fault = only_fault(play([host, RandomPlayer(1)]))
    assert fault.reason is FaultReason.TIMEOUT
    assert "no reply to act within 300 ms of CPU time: it used" in fault.detail, fault.detail
    assert not host.running


def test_a_bot_that_waits_past_the_wall_cap_is_a_timeout_that_says_so(make_bot, host_for) -> None:
    host = host_for(make_bot(on_act="if acts == 2: time.sleep(60)"), move_ms=200, wall_factor=3)
    fault = only_fault(play([host, RandomPlayer(1)]))
    assert fault.reason is FaultReason.TIMEOUT
    assert fault.detail.startswith("no reply to act within 600 ms of wall time (the cap, 3 times move_ms"), fault.detail


def test_a_bot_is_frozen_off_its_turn_and_killed_and_reaped_frozen(make_bot, host_for) -> None:
    """Its spinning child uses no CPU between two messages; kill() ends a frozen tree (the marker fixture checks
    that no process of it survives), and shutdown() thaws it to say goodbye."""
    host = host_for(make_bot(before_hello=HOG_CHILDREN))
    host.ensure_running()  # hello, welcome, and frozen after the welcome's reply
    process = host._process
    assert process is not None
    before = procfs.tree_cpu_seconds(process.pid)
    time.sleep(0.3)
    assert procfs.tree_cpu_seconds(process.pid) - before < 0.05  # three spinning children, 0.3 s
    host.kill()
    assert not host.running
    again = host_for(make_bot("again", before_hello=HOG_CHILDREN))
    again.ensure_running()
    assert again.shutdown() is None and not again.running


def _tree_clock_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a machine where the arena can make no cgroup v2: /proc and SIGSTOP."""
    monkeypatch.setattr(cpuclock, "for_memory_cgroup", lambda group: None)
    monkeypatch.setattr(cpuclock, "create", lambda: "no cgroup v2 in this test")


@pytest.mark.parametrize("clock", ["tree", "cgroup"])
def test_a_bot_that_undoes_its_stop_and_spins_off_turn_is_a_limit_fault_unless_frozen_by_its_cgroup(
    make_bot, host_for, monkeypatch: pytest.MonkeyPatch, clock: str
) -> None:
    """A process that left the bot's tree continues the bot, stopped with SIGSTOP, and a thread spins: past the
    bound, a limit fault. In the bot's own cgroup the same process is frozen with the rest, and in a PID namespace
    of its own (basic as root) it re-parents to the namespace's init, inside the tree: nothing to fault."""
    if clock == "tree":
        _tree_clock_only(monkeypatch)
    bot = make_bot(before_hello=ESCAPEE, on_act=SPIN_AFTER_FIRST_ACT)
    host = host_for(bot, move_ms=1000)
    host.sandbox = SandboxLevel.BASIC  # without a PID namespace the escapee re-parents to the arena, out of the tree
    host.ensure_running()
    assert host._process is not None
    if host._process.clock.kind != clock:
        pytest.skip(f"no {clock} clock here")
    escapes = not host._process.own_pid_namespace
    outcome = play([host, SlowPlayer(1, host)])
    if clock == "tree" and escapes:
        fault = only_fault(outcome)
        assert fault.reason is FaultReason.LIMIT
        assert "ms of CPU off its turn, while frozen" in fault.detail and f"(bound {OFF_TURN_MS} ms)" in fault.detail
        assert not host.running
    else:
        assert outcome.faults == ()


def test_a_pondering_bot_may_use_cpu_off_its_turn(make_bot, host_for, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree_clock_only(monkeypatch)
    host = host_for(make_bot(on_act=SPIN_AFTER_FIRST_ACT, before_hello=ESCAPEE), move_ms=1000, ponder=True)
    host.sandbox = SandboxLevel.BASIC
    assert play([host, SlowPlayer(1, host)]).faults == ()

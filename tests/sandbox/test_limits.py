"""Resource limits: each stops the bot, and the arena tells which limit it was (memory: test_memory.py)."""

from __future__ import annotations

import errno
import os
import subprocess

from arena.sandbox import Limits, SandboxLevel
from arena.sandbox.capture import TAIL_BYTES
from tests.sandbox.conftest import (
    ALL_LEVELS,
    DEADLINE_S,
    LIMITED_LEVELS,
    ROOT,
    Bots,
    assert_all_gone,
    host_processes,
    poll_until,
    strict_or_skip,
)


@LIMITED_LEVELS
def test_spinning_past_the_cpu_limit_is_a_limit_fault(bots: Bots, level: SandboxLevel) -> None:
    bot = bots.start(level, "while True: pass", limits=Limits(cpu_s=1))
    assert bot.wait(DEADLINE_S) == -24  # SIGXCPU
    assert bot.exit_fault() == ("limit", "stopped by the CPU time limit (1 s)")


@LIMITED_LEVELS
def test_ignoring_sigxcpu_ends_in_sigkill_at_the_hard_limit_still_a_limit(bots: Bots, level: SandboxLevel) -> None:
    script = """
    import signal
    signal.signal(signal.SIGXCPU, signal.SIG_IGN)
    while True: pass
    """
    bot = bots.start(level, script, limits=Limits(cpu_s=1))
    assert bot.wait(DEADLINE_S) == -9
    assert bot.exit_fault() == ("limit", "stopped by the CPU time limit (1 s)")
    assert bot.cpu_seconds >= 1


@LIMITED_LEVELS
def test_writing_a_file_past_the_size_limit_is_a_limit_fault(bots: Bots, level: SandboxLevel) -> None:
    # Python ignores SIGXFSZ, so it sees EFBIG ("File too large") and dies of the exception.
    script = """
    with open("big", "wb") as stream:
        stream.write(b"x" * (2 * 1024 * 1024))
    """
    bot = bots.start(level, script, limits=Limits(file_size_mb=1))
    assert bot.wait(DEADLINE_S) == 1
    assert bot.exit_fault() == ("limit", "stopped by the file size limit (1 MB)")


@LIMITED_LEVELS
def test_being_killed_by_sigxfsz_is_a_file_size_limit_fault(bots: Bots, level: SandboxLevel) -> None:
    script = """
    import signal
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # as for a program in C
    with open("big", "wb", buffering=0) as stream:
        for _ in range(4):
            stream.write(b"x" * (1024 * 1024))
    """
    bot = bots.start(level, script, limits=Limits(file_size_mb=1))
    assert bot.wait(DEADLINE_S) == -25  # SIGXFSZ
    assert bot.exit_fault() == ("limit", "stopped by the file size limit (1 MB)")


@LIMITED_LEVELS
def test_a_fork_bomb_is_stopped_by_the_process_limit_and_the_arena_survives(bots: Bots, level: SandboxLevel) -> None:
    script = """
    import os, time
    read, write = os.pipe()
    count, failure = 0, 0
    deadline = time.monotonic() + 5
    while count < 10_000 and time.monotonic() < deadline:
        try:
            pid = os.fork()
        except OSError as error:
            failure = error.errno
            break
        if pid == 0:
            os.read(read, 1)  # children wait, so they all count at once
            os._exit(0)
        count += 1
    with open("result.tmp", "w") as stream:
        stream.write(f"{count} {failure}")
    os.rename("result.tmp", "result")
    report("main")
    while True:
        time.sleep(1)
    """
    bot = bots.start(level, script, limits=Limits(processes=32))
    main = bots.reported(bot, "main")
    count, failure = map(int, (bots.report_dir(bot) / "result").read_text().split())
    assert failure == errno.EAGAIN
    # With a UID of its own the count is the bot's alone. Without one the bot has the arena user's task count at
    # its start plus 32: tasks of the user that end meanwhile (the other test worker's) widen that headroom.
    assert count < 32 if ROOT else count < 32 + 200
    assert subprocess.run(["true"], timeout=DEADLINE_S).returncode == 0, "the arena can still start processes"

    survivors = host_processes(main)
    assert len(survivors) >= count
    bot.kill()
    assert_all_gone(survivors)


@ALL_LEVELS
def test_a_flood_of_stderr_neither_blocks_nor_grows_the_log(bots: Bots, level: SandboxLevel) -> None:
    script = """
    import sys
    out = sys.stderr.buffer
    out.write(b"FIRST LINE\\n")
    block = b"y" * (1024 * 1024)
    for _ in range(100):
        out.write(block)
    out.write(b"\\nLAST LINE\\n")
    out.flush()
    """
    bot = bots.start(level, script, limits=Limits(stderr_kb=64))
    assert bot.wait(30) == 0
    bot.kill()  # waits for the reader to drain the pipe to its end
    log = bot.stderr_log
    assert log.startswith(b"FIRST LINE\n")
    assert len(log) <= 64 * 1024 + TAIL_BYTES + 200
    assert bot.stderr_dropped >= 100 * 1024 * 1024 - 64 * 1024 - TAIL_BYTES
    assert b"bytes of stderr dropped here]" in log
    assert bot.stderr_tail() == "LAST LINE\n"  # whole lines only: the 100 MB line before it is no line to show
    assert bot.take_log_segment() == log  # a match's log is bounded as the whole one: here, the same bytes
    assert bot.take_log_segment() == b""


def test_at_strict_a_bots_process_limit_is_its_own_not_a_headroom_others_can_fill(bots: Bots) -> None:
    """A bot that takes 20 threads after another started must not leave that one fewer: through it one bot would
    tell another a number (as an ordinary user all bots share one user id, whose task count is the kernel's)."""
    strict_or_skip()
    counter = bots.start(
        SandboxLevel.STRICT,
        """
        import sys, threading
        sys.stdin.readline()  # once the other bot holds its threads
        done, count = threading.Event(), 0
        try:
            while count < 200:
                threading.Thread(target=done.wait, daemon=True).start()
                count += 1
        except RuntimeError:
            pass
        print(count, flush=True)
        done.set()
        """,
        limits=Limits(processes=32),
        stdio=True,
        name="counter.py",
    )
    holder = bots.start(
        SandboxLevel.STRICT,
        """
        import os, threading, time
        done = threading.Event()
        for _ in range(20):
            threading.Thread(target=done.wait, daemon=True).start()
        open("held.tmp", "w").close()
        os.rename("held.tmp", "held")
        time.sleep(60)
        """,
        limits=Limits(processes=32),
        name="holder.py",
    )
    poll_until(lambda: (bots.report_dir(holder) / "held").exists(), what="the holder's 20 threads")
    assert counter.stdin_fd is not None and counter.stdout_fd is not None
    os.write(counter.stdin_fd, b"go\n")
    assert counter.wait(DEADLINE_S) == 0, counter.stderr_tail()
    started = int(os.read(counter.stdout_fd, 100).decode())
    assert 24 <= started < 32, started  # its own 32, less its main thread and the sandbox's own processes
    holder.kill()

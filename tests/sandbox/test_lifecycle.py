"""Starting bots, watching them end, talking to them over stdio, and what they see of the machine."""

from __future__ import annotations

import json
import os
import resource
import select
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from arena.sandbox import LaunchSpec, SandboxError, SandboxLevel, launch, procfs
from tests.sandbox.conftest import ALL_LEVELS, DEADLINE_S, ROOT, Bots, poll_until, read_line


@ALL_LEVELS
def test_a_bot_that_exits_normally_has_returncode_zero(bots: Bots, level: SandboxLevel) -> None:
    bot = bots.start(level, "raise SystemExit(0)")
    assert bot.wait(DEADLINE_S) == 0
    assert bot.level is level
    assert bot.exit_fault() == ("crash", "exited with status 0")


@ALL_LEVELS
def test_a_bot_that_exits_with_status_one_is_a_crash(bots: Bots, level: SandboxLevel) -> None:
    bot = bots.start(level, "import sys; print('something broke', file=sys.stderr); sys.exit(1)")
    assert bot.wait(DEADLINE_S) == 1
    assert bot.exit_fault() == ("crash", "exited with status 1")
    assert "something broke" in bot.stderr_tail()
    bot.kill()  # the exit status and the log outlive the process
    assert bot.returncode() == 1
    assert bot.exit_fault() == ("crash", "exited with status 1")
    assert b"something broke" in bot.stderr_log


@ALL_LEVELS
def test_releasing_a_bot_that_ended_reaps_no_other_child_of_the_arena(bots: Bots, level: SandboxLevel) -> None:
    other = subprocess.Popen(["true"])
    poll_until(lambda: procfs.stat(other.pid) and procfs.stat(other.pid).zombie, what="the other child to end")
    bot = bots.start(level, "raise SystemExit(0)")
    assert bot.wait(DEADLINE_S) == 0
    assert bot.exit_fault() == ("crash", "exited with status 0")  # reaps what it may of the bot
    bot.kill()
    info = procfs.stat(other.pid)
    assert info is not None and info.zombie, "the arena's other child was reaped in the bot's place"
    assert other.wait(DEADLINE_S) == 0


@ALL_LEVELS
def test_a_bot_killed_by_a_signal_is_a_crash_naming_the_signal(bots: Bots, level: SandboxLevel) -> None:
    bot = bots.start(level, "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
    assert bot.wait(DEADLINE_S) == -11
    assert bot.exit_fault() == ("crash", "killed by SIGSEGV")


@ALL_LEVELS
def test_the_pidfd_becomes_readable_when_the_bot_exits(bots: Bots, level: SandboxLevel) -> None:
    bot = bots.start(level, "import sys; sys.stdin.read(); raise SystemExit(4)", stdio=True)
    assert select.select([bot], [], [], 0.05)[0] == []
    assert bot.returncode() is None
    assert bot.stdin_fd is not None
    os.close(bot.stdin_fd)  # the bot reads EOF and exits
    bot.stdin_fd = None
    assert select.select([bot], [], [], DEADLINE_S)[0] == [bot]
    assert bot.returncode() == 4


@ALL_LEVELS
def test_kill_ends_a_running_bot_and_is_idempotent(bots: Bots, level: SandboxLevel) -> None:
    bot = bots.start(level, "import time\nwhile True: time.sleep(1)")
    assert bot.wait(0.1) is None
    bot.kill()
    bot.kill()
    assert bot.returncode() == -9
    assert bot.exit_fault() == ("crash", "killed by the arena")
    assert not bot.workdir.exists()
    with pytest.raises(ValueError):
        bot.fileno()


@ALL_LEVELS
def test_stdio_gives_the_caller_the_bots_stdin_and_stdout(bots: Bots, level: SandboxLevel) -> None:
    script = """
    import sys
    for line in sys.stdin:
        print("echo " + line.strip(), flush=True)
    """
    bot = bots.start(level, script, stdio=True)
    assert bot.stdin_fd is not None and bot.stdout_fd is not None
    os.write(bot.stdin_fd, b"hello\n")
    assert read_line(bot.stdout_fd) == b"echo hello\n"


def test_without_stdio_there_are_no_pipes_and_stdout_goes_to_the_log(bots: Bots) -> None:
    bot = bots.start(SandboxLevel.NONE, "print('to stdout', flush=True)")
    assert bot.stdin_fd is None and bot.stdout_fd is None
    assert bot.wait(DEADLINE_S) == 0
    bot.kill()
    assert b"to stdout" in bot.stderr_log


@pytest.mark.parametrize("level", [SandboxLevel.STRICT, SandboxLevel.BASIC], ids=lambda level: level.value)
def test_the_environment_is_scrubbed_to_the_protocol_variables(bots: Bots, level: SandboxLevel) -> None:
    script = """
    import json, os, sys
    print(json.dumps({"env": dict(os.environ), "uid": os.getuid(), "cwd": os.getcwd()}), flush=True)
    """
    bot = bots.start(level, script, env={"ARENA_TOKEN": "t0ken"}, stdio=True)
    seen = json.loads(read_line(bot.stdout_fd or -1))
    env = seen["env"]
    expected = {"PATH", "HOME", "TMPDIR", "LANG", "PYTHONDONTWRITEBYTECODE", "ARENA_TOKEN"}
    # bwrap sets PWD after --chdir; basic carries the marker that finds the bot's escaped descendants.
    extra = {"PWD"} if level is SandboxLevel.STRICT else {"ARENA_SANDBOX_ID"}
    assert expected <= set(env) <= expected | extra
    assert env["ARENA_TOKEN"] == "t0ken"
    assert env["HOME"] == env["TMPDIR"] == seen["cwd"] == str(bot.seen_workdir)
    assert env["PATH"].startswith(str(Path(sys.prefix) / "bin") + ":")
    if ROOT:
        assert seen["uid"] >= 200_000, "as root, a bot runs under a UID of its own"


def test_none_inherits_the_environment_and_runs_in_the_bot_dir(bots: Bots, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_TEST_INHERITED", "yes")
    script = """
    import json, os
    print(json.dumps({"env": dict(os.environ), "cwd": os.getcwd()}), flush=True)
    """
    bot = bots.start(SandboxLevel.NONE, script, env={"ARENA_TOKEN": "t"}, stdio=True)
    seen = json.loads(read_line(bot.stdout_fd or -1))
    assert seen["env"]["ARENA_TEST_INHERITED"] == "yes"
    assert seen["env"]["ARENA_TOKEN"] == "t"
    assert seen["cwd"] == str(bots.bot_dir)


@ALL_LEVELS
def test_a_bot_is_pinned_to_the_cpu_asked_for(bots: Bots, level: SandboxLevel) -> None:
    cpu = max(os.sched_getaffinity(0))
    bot = bots.start(level, "import os; print(sorted(os.sched_getaffinity(0)), flush=True)", stdio=True, cpu=cpu)
    assert json.loads(read_line(bot.stdout_fd or -1)) == [cpu]


def test_a_bot_launched_from_a_short_lived_thread_outlives_the_thread(bots: Bots) -> None:
    started = []
    thread = threading.Thread(
        target=lambda: started.append(bots.start(SandboxLevel.NONE, "import time\nwhile True: time.sleep(1)"))
    )
    thread.start()
    thread.join(DEADLINE_S)
    assert started, "launch did not return"
    # The parent-death signal follows the forking thread: had the bot been forked there, it would be dead now.
    assert started[0].wait(0.3) is None


def test_a_command_that_does_not_exist_raises_a_sandbox_error_naming_it(bot_dir: Path) -> None:
    for level in SandboxLevel:
        with pytest.raises(SandboxError, match="no-such-bot-program"):
            launch(LaunchSpec(command=("no-such-bot-program",), bot_dir=bot_dir, level=level))


def test_a_relative_command_is_found_in_the_bot_dir(bots: Bots, bot_dir: Path) -> None:
    program = bot_dir / "run.sh"
    program.write_text("#!/bin/sh\nexit 7\n")
    program.chmod(0o755)
    bot = launch(LaunchSpec(command=("./run.sh",), bot_dir=bot_dir, level=SandboxLevel.BASIC))
    bots.started.append(bot)
    assert bot.wait(DEADLINE_S) == 7


def test_a_missing_bot_dir_is_a_sandbox_error(tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match="does not exist"):
        launch(LaunchSpec(command=("true",), bot_dir=tmp_path / "missing", level=SandboxLevel.NONE))


@ALL_LEVELS
def test_a_bot_whose_descriptors_are_past_1023_is_read_waited_for_and_killed(bots: Bots, level: SandboxLevel) -> None:
    """An arena that keeps many bots (a swiss of 150 programs) opens descriptors past 1023, where select() ends."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < 4096:
        pytest.skip(f"this machine allows {hard} descriptors a process")
    resource.setrlimit(resource.RLIMIT_NOFILE, (4096, hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]  # the bot's own come after them
    try:
        bot = bots.start(level, "import sys, time\nprint('said', file=sys.stderr, flush=True)\ntime.sleep(0.3)\n")
        assert bot.fileno() >= 1024
        poll_until(lambda: b"said" in bot.stderr_log, what="its stderr read")
        assert b"said" in bot.take_log_segment()
        assert bot.wait(DEADLINE_S) == 0
        slow = bots.start(level, "import time\ntime.sleep(60)\n")
        assert slow.wait(0.2) is None
        slow.kill()
        assert slow.returncode() is not None
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

"""How a bot process starts (child.py, bootstrap.py): no Python runs in a child forked from the threaded arena,
what the arena decided reaches the bot byte for byte, and a start that fails says why, synchronously."""

from __future__ import annotations

import errno
import os
import resource
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from arena.sandbox import LaunchSpec, SandboxError, SandboxLevel, child, launch
from tests.sandbox.conftest import ALL_LEVELS, DEADLINE_S, Bots


def _run(argv: list[str], setup: child.ChildSetup, env: dict[str, str] | None = None) -> str:
    read, write = os.pipe()
    try:
        popen = child.start(
            argv,
            setup,
            env=env or {},
            cwd="/",
            stdin=subprocess.DEVNULL,
            stdout=write,
            stderr=write,
            pass_fds=(),
            umask=0o077,
        )
    finally:
        os.close(write)
    with os.fdopen(read, "rb") as output:
        text = output.read().decode("utf-8", errors="surrogateescape")
    assert popen.wait(DEADLINE_S) == 0, text
    return text


def test_the_bot_gets_its_command_line_environment_and_rlimits_exactly() -> None:
    odd = os.fsdecode(b"caf\xe9")  # not UTF-8: an argument and a variable reach the bot as the arena has them
    setup = child.ChildSetup(parent_pid=os.getpid(), rlimits=((resource.RLIMIT_NOFILE, 17, 17),))
    script = 'printf "%s|%s|%s|" "$1" "$ODD" "$(ulimit -n)"; printf "%s" "$(umask)"'
    text = _run(["/bin/sh", "-c", script, "sh", odd], setup, env={"ODD": odd})
    assert text == f"{odd}|{odd}|17|0077"


def test_a_program_that_cannot_run_fails_the_start_with_the_error_exec_gave(tmp_path: Path) -> None:
    program = tmp_path / "bot"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o644)
    with pytest.raises(child.ExecFailed) as raised:  # the bot's doing, not the machine's (SetupError)
        _run([str(program)], child.ChildSetup(parent_pid=os.getpid()))
    assert raised.value.errno == errno.EACCES and raised.value.filename == str(program)


def test_a_place_that_cannot_be_made_fails_the_start_naming_what_failed(tmp_path: Path) -> None:
    missing = tmp_path / "no-cgroup" / "cgroup.procs"
    setup = child.ChildSetup(parent_pid=os.getpid(), cgroup_procs=(os.fsencode(missing),))
    with pytest.raises(subprocess.SubprocessError, match=f"sandbox: No such file or directory: {missing}$"):
        _run(["/bin/true"], setup)


def test_a_script_whose_interpreter_is_missing_is_a_sandbox_error_naming_its_command(bot_dir: Path) -> None:
    program = bot_dir / "bot.sh"
    program.write_text("#!/no/such/interpreter\n")
    program.chmod(0o755)
    for level in (SandboxLevel.NONE, SandboxLevel.BASIC):
        with pytest.raises(SandboxError, match=r"cannot start bot command './bot.sh': \[Errno 2\] No such file"):
            launch(LaunchSpec(command=("./bot.sh",), bot_dir=bot_dir, level=level))


@ALL_LEVELS
def test_no_bot_start_runs_python_in_a_child_forked_from_the_arena(
    bots: Bots, level: SandboxLevel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Popen with a preexec_fn forks the arena, threads and all, and runs Python in the child, which can deadlock
    on a lock another thread held: every start goes through bootstrap.py instead."""
    starts: list[dict[str, Any]] = []
    real_init = subprocess.Popen.__init__

    def recording_init(popen: subprocess.Popen[bytes], *args: Any, **kwargs: Any) -> None:
        starts.append(kwargs)
        real_init(popen, *args, **kwargs)

    monkeypatch.setattr(subprocess.Popen, "__init__", recording_init)
    busy = threading.Event()
    worker = threading.Thread(target=busy.wait, daemon=True)  # the arena always has other threads
    worker.start()
    bot = bots.start(level, "raise SystemExit(3)")
    busy.set()
    assert bot.wait(DEADLINE_S) == 3
    assert starts, "the bot was started with subprocess"
    assert all(kwargs.get("preexec_fn") is None for kwargs in starts)


def test_the_suite_refuses_a_fork_in_a_process_with_threads() -> None:
    """tests/conftest.py's guard: Python 3.12+ warns of such a fork, but drops the warning made an error inside
    os.fork, so the suite refuses the fork itself, on every Python."""
    done = threading.Event()
    thread = threading.Thread(target=done.wait)
    thread.start()
    try:
        with pytest.raises(AssertionError, match="its child may deadlock"):
            os.fork()
    finally:
        done.set()
        thread.join()


def test_a_bot_starts_with_no_signal_ignored_or_blocked_so_its_file_size_limit_kills_it(tmp_path: Path) -> None:
    """An ignored signal stays ignored across exec, and so does the signal mask of the thread that starts a
    process: Python ignores SIGPIPE and SIGXFSZ, an arena started with nohup SIGHUP. The bot must not inherit
    any of it. (Signals 32 and 33 are the C library's own, which no program sets through it.)"""
    setup = child.ChildSetup(parent_pid=os.getpid(), rlimits=((resource.RLIMIT_FSIZE, 1 << 20, 1 << 20),))
    script = f"grep -E '^Sig(Ign|Blk)' /proc/self/status; head -c 2000000 /dev/zero > {tmp_path}/big; echo $?"
    hangup = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    try:
        lines = _run(["/bin/sh", "-c", script], setup).split()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        signal.signal(signal.SIGHUP, hangup)
    assert (lines[0], lines[2]) == ("SigBlk:", "SigIgn:")
    libc_own = 0b11 << 31
    assert int(lines[1], 16) & ~libc_own == 0 and int(lines[3], 16) & ~libc_own == 0, lines[:4]
    assert lines[-1] == str(128 + signal.SIGXFSZ)  # head was killed by the signal, not told "File too large"


def test_the_setup_is_not_on_a_command_line_and_has_no_size_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Anyone may read a process's command line; the bot's environment holds its token. One command-line
    argument may be 128 KiB at most: a bot's environment may be larger in all."""
    env = {"TOKEN": "s3cr3t", **{f"BIG{n}": "x" * 100_000 for n in range(3)}}  # each below the kernel's limit
    arguments: list[str] = []
    real_init = subprocess.Popen.__init__

    def recording_init(popen: subprocess.Popen[bytes], args: Any, *rest: Any, **kwargs: Any) -> None:
        arguments.extend(args)
        real_init(popen, args, *rest, **kwargs)

    monkeypatch.setattr(subprocess.Popen, "__init__", recording_init)
    script = 'printf "%s %s" "$TOKEN" "${#BIG0}${#BIG1}${#BIG2}"'
    assert _run(["/bin/sh", "-c", script], child.ChildSetup(parent_pid=os.getpid()), env) == "s3cr3t " + "100000" * 3
    assert arguments and not any("s3cr3t" in argument for argument in arguments)


def test_a_start_works_with_descriptors_past_1024() -> None:
    """select() refuses a descriptor from 1024 on: an arena with many bots and a raised limit has such."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"the open files limit is {hard} here: no descriptor past 1100")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    held = []
    try:
        while not held or held[-1] < 1100:
            held.append(os.dup(0))
        assert _run(["/bin/echo", "far"], child.ChildSetup(parent_pid=os.getpid())) == "far\n"
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_start_works_with_the_standard_streams_closed(tmp_path: Path) -> None:
    """With fds 0 to 2 closed, a pipe made for the start could be one of them, and Popen's dup2 of the bot's
    streams would overwrite it."""
    output = tmp_path / "output"
    script = f"""
import os, subprocess
from arena.sandbox import child
for fd in (0, 1, 2):
    os.close(fd)
out = os.open({str(output)!r}, os.O_WRONLY | os.O_CREAT, 0o644)  # fd 0
bot = child.start(["/bin/sh", "-c", "echo out; echo err >&2"], child.ChildSetup(parent_pid=os.getpid()),
    env={{}}, cwd="/", stdin=subprocess.DEVNULL, stdout=out, stderr=out, pass_fds=(), umask=0o022)
os._exit(bot.wait())
"""
    done = subprocess.run([sys.executable, "-c", script], timeout=DEADLINE_S)
    assert (done.returncode, output.read_text()) == (0, "out\nerr\n")

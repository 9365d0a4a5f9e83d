"""How a bot process starts (child.py, bootstrap.py): no Python runs in a child forked from the threaded arena,
what the arena decided reaches the bot byte for byte, and a start that fails says why, synchronously."""

from __future__ import annotations

import os
import resource
import subprocess
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
    with pytest.raises(PermissionError) as raised:
        _run([str(program)], child.ChildSetup(parent_pid=os.getpid()))
    assert raised.value.filename == str(program)


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

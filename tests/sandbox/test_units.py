"""The pure parts: telling a limit from a crash, the bounded stderr log, the UID pool, the bwrap command line."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from arena.sandbox import Limits, SandboxError, SandboxLevel, bwrap, disk, users
from arena.sandbox.capture import TAIL_BYTES, StderrCapture
from arena.sandbox.faults import Ending, classify, returncode_from_status
from arena.sandbox.process import read_info
from tests.sandbox.conftest import ROOT


def ending(code: int, level: SandboxLevel = SandboxLevel.BASIC, **changes: object) -> Ending:
    values: dict[str, object] = {
        "returncode": code,
        "level": level,
        "limits": Limits(cpu_s=3, memory_mb=100, file_size_mb=2),
        "cpu_seconds": 0.5,
        "killed_by_arena": False,
        "memory_marker": False,
        "file_size_marker": False,
        "memory_exceeded": False,
    }
    values.update(changes)
    return Ending(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("end", "expected"),
    [
        (ending(1), ("crash", "exited with status 1")),
        (ending(0), ("crash", "exited with status 0")),
        (ending(-signal.SIGSEGV), ("crash", "killed by SIGSEGV")),
        (ending(-signal.SIGXCPU), ("limit", "stopped by the CPU time limit (3 s)")),
        (ending(-signal.SIGKILL, cpu_seconds=3.2), ("limit", "stopped by the CPU time limit (3 s)")),
        (ending(-signal.SIGKILL), ("crash", "killed by SIGKILL")),
        (ending(-signal.SIGKILL, cpu_seconds=9.0, killed_by_arena=True), ("crash", "killed by the arena")),
        (ending(-signal.SIGXFSZ), ("limit", "stopped by the file size limit (2 MB)")),
        (ending(1, memory_marker=True), ("limit", "out of memory (limit 100 MB)")),
        (ending(-signal.SIGABRT, memory_marker=True), ("limit", "out of memory (limit 100 MB)")),
        (ending(0, memory_marker=True), ("crash", "exited with status 0")),
        (ending(1, file_size_marker=True), ("limit", "stopped by the file size limit (2 MB)")),
        (ending(-signal.SIGXCPU, SandboxLevel.NONE), ("crash", "killed by SIGXCPU")),  # none sets no limits
        (ending(1, SandboxLevel.NONE, memory_marker=True), ("crash", "exited with status 1")),
        (ending(-signal.SIGKILL, memory_exceeded=True), ("limit", "memory: used more than 100 MB")),
        (ending(1, memory_exceeded=True, memory_marker=True), ("limit", "memory: used more than 100 MB")),
        (ending(0, memory_exceeded=True), ("crash", "exited with status 0")),  # a child was stopped; it went on
        (ending(-signal.SIGKILL, SandboxLevel.NONE, memory_exceeded=True), ("crash", "killed by SIGKILL")),
    ],
)
def test_an_ending_is_classified_as_a_limit_or_a_crash(end: Ending, expected: tuple[str, str]) -> None:
    assert classify(end) == expected


def test_bwrap_reports_a_signal_as_128_plus_n_and_that_reads_as_the_signal() -> None:
    exited_152 = 152 << 8  # a wait status: exit(152)
    assert returncode_from_status(exited_152, SandboxLevel.STRICT) == -signal.SIGXCPU
    assert returncode_from_status(exited_152, SandboxLevel.BASIC) == 152
    assert returncode_from_status(signal.SIGKILL, SandboxLevel.STRICT) == -signal.SIGKILL
    assert returncode_from_status(1 << 8, SandboxLevel.STRICT) == 1


def _capture(head: int) -> tuple[StderrCapture, int]:
    read, write = os.pipe()
    return StderrCapture(read, head, "test"), write


def test_the_stderr_log_keeps_everything_when_small() -> None:
    capture, write = _capture(1024)
    os.write(write, b"hello\n")
    os.write(write, b"world\n")
    os.close(write)
    assert capture.finish(5.0)
    assert capture.log() == b"hello\nworld\n"
    assert capture.dropped == 0
    assert capture.tail(6) == b"world\n"
    assert capture.contains((b"o\nw",))


def test_the_stderr_log_keeps_a_head_and_a_tail_and_counts_the_rest() -> None:
    capture, write = _capture(1000)
    total = 0
    for index in range(50):
        chunk = bytes([65 + index % 26]) * 4000
        os.write(write, chunk)
        total += len(chunk)
    os.write(write, b"THE END")
    os.close(write)
    assert capture.finish(5.0)
    log = capture.log()
    assert log.startswith(b"A" * 1000)
    assert log.endswith(b"THE END")
    assert capture.dropped == total + len(b"THE END") - 1000 - TAIL_BYTES
    assert f"[arena: {capture.dropped} bytes of stderr dropped here]".encode() in log
    assert capture.tail(7) == b"THE END"


def test_a_capture_that_never_sees_eof_stops_when_asked() -> None:
    capture, write = _capture(100)
    try:
        assert not capture.finish(0.1)  # the writer is still open
    finally:
        os.close(write)


def test_the_bwrap_command_line_shows_nothing_but_what_it_is_given(tmp_path: Path) -> None:
    workdir = tmp_path / "work"
    args = bwrap.argv(
        path="/usr/bin/bwrap",
        binds=[bwrap.Bind("/src", Path("/a/b"), False), bwrap.Bind("/w", Path("/a"), True)],
        workdir=workdir,
        env={"ARENA_TOKEN": "x"},
        command=["/bin/bot", "--flag"],
        disk_bytes=128 * 1024 * 1024,
        info_fd=9,
    )
    for flag in ("--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--clearenv"):
        assert flag in args
    assert args[args.index("--proc") + 1] == "/proc"
    assert args[args.index("--dev") + 1] == "/dev"
    tmpfs = [i for i, arg in enumerate(args) if arg == "--tmpfs"]
    sizes = [(str(disk.SHM_BYTES), "/dev/shm"), (str(128 * 1024 * 1024), "/tmp")]
    assert [(args[i - 1], args[i + 1]) for i in tmpfs] == sizes
    assert args[args.index("--remount-ro") + 1] == "/dev", "only /dev/shm of /dev is writable"
    assert args[args.index("--dir") + 1] == str(workdir), "the workdir is a directory of /tmp"
    assert args.index("--bind") < args.index("--ro-bind", args.index("--bind")), "parents are bound first"
    assert args[-3:] == ["--", "/bin/bot", "--flag"]
    assert args[args.index("--chdir") + 1] == str(workdir)
    assert "/home" not in args


def test_the_python_dirs_are_the_prefixes_and_the_package_never_its_parent() -> None:
    dirs = bwrap.python_dirs()
    assert Path(sys.base_prefix).resolve() in dirs
    assert Path(sys.prefix).resolve() in dirs
    checkout = Path(bwrap.arena.__file__).resolve().parent.parent
    assert checkout not in dirs


@pytest.mark.skipif(not ROOT, reason="bot UIDs are handed out only when the arena runs as root")
def test_the_uid_pool_hands_out_each_uid_once_across_processes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    locks = tmp_path / "locks"
    monkeypatch.setattr(users, "LOCK_DIRS", (locks,))
    pool = users.UserPool(range(3_900_000_000, 3_900_000_003))
    first, second = pool.allocate(), pool.allocate()
    assert first.uid != second.uid
    # Another arena process gets the one UID left, and then none.
    other = f"""
import sys
sys.path[:0] = {sys.path!r}
from pathlib import Path
from arena.sandbox import users
users.LOCK_DIRS = (Path({str(locks)!r}),)
pool = users.UserPool(range(3_900_000_000, 3_900_000_003))
held = pool.allocate()
print(held.uid)
try:
    pool.allocate()
except Exception as error:
    print(type(error).__name__)
"""
    out = subprocess.run([sys.executable, "-c", other], capture_output=True, text=True, timeout=30, check=True)
    uid, error = out.stdout.split()
    assert int(uid) not in (first.uid, second.uid)
    assert error == "SetupError"
    third = pool.allocate()  # the other process has exited: the kernel dropped its lock
    assert third.uid == int(uid)
    with pytest.raises(SandboxError, match="held by other bots running now"):
        pool.allocate()
    first.release()
    assert pool.allocate().uid == first.uid
    for held in (first, second, third):
        held.release()


def test_bwraps_info_is_read_whole_though_written_in_pieces() -> None:
    # bwrap writes its info JSON in several writes, then closes it; a read between two writes must not be
    # taken as the whole (the arena would close the fd, and bwrap's next write would kill it with SIGPIPE).
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    received = bytearray()
    try:
        assert read_info(read_end, received) is None
        os.write(write_end, b'{\n    "child-pid": 4242')
        assert read_info(read_end, received) is None
        os.write(write_end, b',\n    "pid-namespace": 4026532290\n}\n')
        os.close(write_end)
        write_end = -1
        assert read_info(read_end, received) == b'{\n    "child-pid": 4242,\n    "pid-namespace": 4026532290\n}\n'
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)


def test_a_fact_of_the_machine_is_said_once_per_machine_not_at_every_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from arena.sandbox import notices

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    said = "sandbox: no CPU cgroup for bots here (Permission denied): CPU time is read from /proc instead"
    for run in range(3):  # three runs: each a fresh process as far as the notices know
        notices.forget()
        with caplog.at_level(logging.DEBUG, logger="arena.sandbox.notices"):
            notices.warn_once(said, per_machine=True)
            notices.warn_once("sandbox: something of this run", per_machine=False)
        levels = [(record.levelno, record.getMessage()) for record in caplog.records]
        assert (logging.WARNING if run == 0 else logging.DEBUG, said) in levels
        assert (logging.WARNING, "sandbox: something of this run") in levels
        caplog.clear()
    assert notices.said_on_this_machine().read_text() == said + "\n"
    notices.forget()

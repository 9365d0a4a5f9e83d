"""`arena check-bot` as a student runs it, on good and bad bots, in real subprocesses."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from arena.sandbox import cgroups, notices
from tests.conftest import find_processes
from tests.players.conftest import ROOT

EXAMPLE = ROOT / "examples" / "random_bot.py"
C_BOT = ROOT / "examples" / "c-bot"
MEMORY_LINE = re.compile(r"^peak memory: (\d+) MB \(limit (\d+) MB\)$", re.M)


def check_bot(*args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "arena", "check-bot", *map(str, args)]
    return subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def peak_memory(done: subprocess.CompletedProcess[str]) -> tuple[int, int]:
    """check-bot's peak memory line: (peak, limit), in MB."""
    line = MEMORY_LINE.search(done.stdout)
    assert line is not None, done.stdout
    return int(line.group(1)), int(line.group(2))


def memory_options(mechanism: str | None) -> list[str]:
    """None: the default limits; else memory_mb 512, held by that mechanism (skipped where it cannot be)."""
    if mechanism is None:
        return []
    if mechanism == "cgroup" and not isinstance(found := cgroups.hierarchy(), cgroups.Hierarchy):
        pytest.skip(f"no memory cgroup can be made here: {found}")
    return ["--memory-mb", "512", "--memory-mechanism", mechanism]


MEMORY = pytest.mark.parametrize("mechanism", [None, "cgroup", "rlimit"], ids=["defaults", "512-cgroup", "512-rlimit"])


@pytest.mark.parametrize("protocol", ["zmq", "stdio"])
def test_a_good_bot_passes(protocol: str, marker: str) -> None:
    done = check_bot("--protocol", protocol, "--matches", "2", "--", sys.executable, EXAMPLE, marker)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"checking random_bot: {sys.executable} {EXAMPLE}" in done.stdout
    for players in range(2, 7):
        assert f"  {players} players: 2 matches," in done.stdout
    assert "process started once" in done.stdout
    replies = re.search(
        r"reply times \((\d+) replies\), CPU ms: .* of 1000 .*; wall ms: .*most ([0-9.]+)\n", done.stdout
    )
    assert replies is not None and int(replies.group(1)) > 10, done.stdout
    assert float(replies.group(2)) > 0, done.stdout  # a fast bot shows tenths, not 0
    assert "slowest reply" not in done.stdout  # one summary of the reply times, not two
    peak, limit = peak_memory(done)
    assert 0 < peak < limit == 1024
    assert "\ndisk: 0 MB of 256\n" in done.stdout
    assert done.stdout.rstrip().endswith("PASS: no faults")


def _bad_bot(tmp_path: Path, body: str) -> Path:
    directory = tmp_path / "bad"
    directory.mkdir(mode=0o755)
    script = directory / "bot.py"
    script.write_text("import random, sys, time\nfrom arena.sdk import run\n" + body)
    return script


@pytest.mark.parametrize(
    ("body", "reported"),
    [
        ("raise SystemExit('cannot start: missing model file')", "crash: exited with status 1 before its hello"),
        (
            "def act(m):\n    print('about to fail', file=sys.stderr)\n    raise RuntimeError('bug in act')\nrun(act)",
            "crash: exited with status 1",
        ),
        ("run(lambda m: {'card': 'joker'})", 'illegal: {"card": "joker"}: "card": unknown card "joker"'),
        ("run(lambda m: time.sleep(5) or 0)", "timeout: no reply to act within 300 ms of wall time"),
    ],
    ids=["start-up", "exception", "illegal", "slow"],
)
def test_a_bad_bot_fails_and_its_fault_is_named(tmp_path: Path, marker: str, body: str, reported: str) -> None:
    script = _bad_bot(tmp_path, body)
    done = check_bot(
        "--matches",
        "1",
        "--move-ms",
        "300",
        "--wall-factor",
        "1",
        "--dir",
        script.parent,
        "--",
        sys.executable,
        script,
        marker,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"FAULT in check-2p-1: {reported}" in done.stdout
    assert done.stdout.count("FAULT in ") == 1  # the same fault in every match, printed once
    if "start-up" in body or "cannot start" in body:  # not started again after three tries: three matches
        assert "the same crash in all 3 matches" in done.stdout and "FAIL: 3 faults" in done.stdout
    else:
        assert "FAIL: 5 faults" in done.stdout
        assert "the same " in done.stdout and "in all 5 matches" in done.stdout
    if "exception" in body:
        assert "  | about to fail" in done.stdout
        assert "  | RuntimeError: bug in act" in done.stdout
    if "sleep" in body:  # the replies too late are among the reply times, with the time they had taken
        late = re.search(r"reply times \((\d+) replies, 5 too late\), CPU ms: .*; wall ms: .*most (\d+)\n", done.stdout)
        assert late is not None and int(late.group(1)) >= 5 and int(late.group(2)) >= 300, done.stdout


def test_a_bot_that_never_answered_is_said_so_in_its_reply_times(tmp_path: Path, marker: str) -> None:
    script = _bad_bot(tmp_path, "raise SystemExit('cannot start: missing model file')")
    done = check_bot("--matches", "1", "--dir", script.parent, "--", sys.executable, script, marker)
    assert "no reply from the bot; process started 3 times" in done.stdout, done.stdout
    assert "reply times: none kept" not in done.stdout


def test_check_bot_shows_what_the_bot_wrote_and_a_full_disk_is_its_own_affair(tmp_path: Path, marker: str) -> None:
    body = (
        "import errno\n"
        "open('scratch', 'wb').write(b'x' * (3 << 20))\n"
        "try:\n"
        "    open('/tmp/more', 'wb').write(b'x' * (16 << 20))\n"
        "except OSError as error:\n"
        "    print('tmp:', errno.errorcode[error.errno], file=sys.stderr)\n"
        "run(lambda m: random.choice(m['legal']))"
    )
    script = _bad_bot(tmp_path, body)
    done = check_bot("--matches", "1", "--disk-mb", "8", "--dir", script.parent, "--", sys.executable, script, marker)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^disk: [78] MB of 8$", done.stdout, re.M), done.stdout  # the 3 MB and /tmp filled to 8


def test_check_bot_needs_a_command() -> None:
    done = check_bot()
    assert done.returncode == 2
    assert "give the bot's command after --" in done.stderr


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--dir", "/nonexistent"], "--dir /nonexistent: not a directory"),
        (["--matches", "0"], "must be at least 1"),
    ],
)
def test_check_bot_refuses_bad_options(options: list[str], message: str) -> None:
    done = check_bot(*options, "--", sys.executable, EXAMPLE)
    assert done.returncode == 2
    assert message in done.stderr


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_an_interrupted_arena_leaves_no_bot_behind(tmp_path: Path, marker: str, stop: signal.Signals) -> None:
    script = _bad_bot(
        tmp_path,
        "import os\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(60)\nrun(lambda m: time.sleep(0.05) or 0)",
    )
    command = [
        sys.executable,
        "-m",
        "arena",
        "check-bot",
        "--dir",
        str(script.parent),
        "--",
        sys.executable,
        str(script),
        marker,
    ]
    arena = subprocess.Popen(
        command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while arena.poll() is None and time.monotonic() < deadline:
            if [pid for pid in find_processes(marker) if pid != arena.pid]:
                break  # the bot runs
            time.sleep(0.05)
        if arena.poll() is not None or time.monotonic() >= deadline:
            arena.kill()
            out, err = arena.communicate(timeout=30)
            pytest.fail(f"the bot never ran under the arena:\n{out}\n{err}")
        arena.send_signal(stop)
        out, err = arena.communicate(timeout=30)
    finally:
        arena.kill()
    assert arena.returncode == 130, out + err
    assert "arena: interrupted" in err


@pytest.mark.skipif(
    not (shutil.which("cc") and Path("/usr/include/zmq.h").exists()), reason="needs a C compiler and libzmq headers"
)
def test_the_c_bot_builds_and_passes(tmp_path: Path) -> None:
    build = tmp_path / "c-bot"
    shutil.copytree(C_BOT, build)
    build.chmod(0o755)
    subprocess.run(["make", "-s"], cwd=build, check=True, timeout=120)
    done = check_bot("--matches", "1", "--dir", build, "--", build / "bot")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS: no faults" in done.stdout


def test_a_relative_script_path_works_from_the_bots_directory(tmp_path: Path, marker: str) -> None:
    directory = tmp_path / "student"
    directory.mkdir(mode=0o755)
    shutil.copy(EXAMPLE, directory / "mybot.py")
    command = [sys.executable, "-m", "arena", "check-bot", "--matches", "1", "--", sys.executable, "mybot.py", marker]
    done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, cwd=directory)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "checking mybot:" in done.stdout


def test_a_path_through_dot_dot_and_a_linked_folder_into_the_bots_directory_works(tmp_path: Path, marker: str) -> None:
    (tmp_path / "versions" / "2").mkdir(parents=True, mode=0o755)
    shutil.copy(EXAMPLE, tmp_path / "versions" / "2" / "bot.py")
    (tmp_path / "py").mkdir()
    (tmp_path / "py" / "v2").symlink_to(Path("..") / "versions" / "2")  # py/v2 is a link to the real folder
    (tmp_path / "java").mkdir()
    command = [sys.executable, "-m", "arena", "check-bot", "--matches", "1", "--", sys.executable, "../py/v2/bot.py"]
    done = subprocess.run(
        [*command, marker], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, cwd=tmp_path / "java"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"the bot's directory: {(tmp_path / 'versions' / '2').resolve()}" in done.stdout


STDIO_BOT = """
import json, sys
print(json.dumps({"type": "hello", "protocol": 1, "name": "stdio-bot"}), flush=True)
for line in sys.stdin:
    message = json.loads(line)
    print(json.dumps({"type": "action", "index": 0} if message["type"] == "act" else {"type": "ok"}), flush=True)
"""


def test_a_stdio_bot_checked_over_zmq_is_told_to_use_stdio(tmp_path: Path, marker: str) -> None:
    script = tmp_path / "bot.py"
    script.write_text(STDIO_BOT)
    options = ["--sandbox", "none", "--matches", "1", "--startup-ms", "3000"]
    done = check_bot(*options, "--dir", tmp_path, "--", sys.executable, script, marker)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "this bot speaks over its standard streams: use --protocol stdio" in done.stdout
    assert "it wrote its hello to standard output" in done.stdout
    done = check_bot(*options, "--protocol", "stdio", "--dir", tmp_path, "--", sys.executable, script, marker)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "standard streams" not in done.stdout


def test_a_bot_that_never_starts_is_tried_three_times_and_its_crash_printed_once(tmp_path: Path, marker: str) -> None:
    script = _bad_bot(tmp_path, "def choose(message)\n    return 0\nrun(choose)\n")  # a syntax error
    done = check_bot("--matches", "40", "--dir", script.parent, "--", sys.executable, script, marker)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert done.stdout.count("FAULT in ") == 1
    assert "FAULT in check-2p-1: crash: exited with status 1 before its hello" in lines
    assert "  the same crash in all 3 matches" in lines
    stderr = [line for line in lines if line.startswith("  | ")]  # the interpreter's report, whole
    assert stderr[0] == f'  |   File "{script}", line 3', stderr
    assert stderr[-1] == "  | SyntaxError: expected ':'"
    assert (
        "the bot failed to start 3 times in a row, so it is not started again (a tournament does the same):"
        " the check stopped after 3 matches of 200" in lines
    )
    assert "no reply from the bot; process started 3 times" in lines
    assert len(lines) < 20


def test_a_long_stderr_is_shown_by_its_last_whole_lines(tmp_path: Path, marker: str) -> None:
    body = "for n in range(500):\n    print(f'line {n} ' + 'x' * 60, file=sys.stderr)\nsys.exit(2)\n"
    script = _bad_bot(tmp_path, body)
    done = check_bot("--matches", "1", "--dir", script.parent, "--", sys.executable, script, marker)
    shown = [line[4:] for line in done.stdout.splitlines() if line.startswith("  | ")]
    assert shown[-1] == "line 499 " + "x" * 60
    assert 30 <= len(shown) <= 50 and all(line.startswith("line ") and line.endswith("x" * 60) for line in shown)


def test_check_bot_stderr_shows_the_bots_log_as_it_comes(tmp_path: Path, marker: str) -> None:
    body = (
        "def act(m):\n    print('thinking about', m['match_id'], file=sys.stderr, flush=True)\n    return 0\nrun(act)"
    )
    script = _bad_bot(tmp_path, body)
    done = check_bot(
        "--matches", "1", "--stderr", "--name", "chatty", "--dir", script.parent, "--", sys.executable, script, marker
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[chatty] thinking about check-2p-1" in done.stderr.splitlines()
    assert "[chatty] thinking about check-6p-1" in done.stderr.splitlines()
    quiet = check_bot("--matches", "1", "--dir", script.parent, "--", sys.executable, script, marker)
    assert "thinking about" not in quiet.stdout + quiet.stderr


def test_check_bot_takes_the_bots_directory_from_an_absolute_file_argument(tmp_path: Path, marker: str) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    script = _bad_bot(tmp_path, "run(lambda m: 0)")
    done = subprocess.run(
        [sys.executable, "-m", "arena", "check-bot", "--matches", "1", "--", sys.executable, str(script), marker],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"  the bot's directory: {script.parent}" in done.stdout.splitlines()


def test_a_file_argument_out_of_the_sandboxs_sight_is_said_before_the_bot_starts(tmp_path: Path, marker: str) -> None:
    script = _bad_bot(tmp_path, "open(sys.argv[1]).read()\nrun(lambda m: 0)")
    private = tmp_path / "private"
    private.mkdir()
    data = private / "weights.txt"
    data.write_text("1 2 3\n")
    done = check_bot("--matches", "1", "--", sys.executable, script, str(data), marker)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"FAIL: bot argument {data} is outside the bot's directory {script.parent}" in done.stdout
    assert "players:" not in done.stdout  # no match was played


@MEMORY
def test_the_java_bot_passes(java_classes: Path, marker: str, mechanism: str | None) -> None:
    options = memory_options(mechanism)
    command = ["java", "-cp", java_classes, "Bot", marker]  # the marker: an argument the bot ignores
    done = check_bot("--protocol", "stdio", "--matches", "1", *options, "--dir", java_classes, "--", *command)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS: no faults" in done.stdout
    peak, limit = peak_memory(done)
    assert 0 < peak < limit == (512 if options else 1024)


@MEMORY
def test_the_node_bot_passes(node_bot: Path, marker: str, mechanism: str | None) -> None:
    options = memory_options(mechanism)
    done = check_bot("--protocol", "stdio", "--matches", "1", *options, "--", "node", node_bot, marker)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS: no faults" in done.stdout
    peak, limit = peak_memory(done)
    assert 0 < peak < limit == (512 if options else 1024)


HOG = """
import json, mmap, os, sys

def send(message):
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()

send({"type": "hello", "protocol": 1, "name": "hog", "token": os.environ["ARENA_TOKEN"]})
hoard = []
for line in sys.stdin:
    if json.loads(line)["type"] == "act":
        while len(hoard) < 128:  # shared memory (RLIMIT_DATA does not count it), 16 MB at a time, 2 GB at most
            block = mmap.mmap(-1, 16 << 20)
            for offset in range(0, len(block), 4096):
                block[offset] = 1
            hoard.append(block)
    send({"type": "ok"})
"""


@pytest.mark.parametrize("mechanism", ["cgroup", "rlimit"])
def test_a_bot_using_more_memory_than_its_limit_is_stopped_with_a_limit_fault(marker: str, mechanism: str) -> None:
    options = ["--memory-mb", "256", *memory_options(mechanism)[2:], "--move-ms", "20000"]
    directory = Path(tempfile.mkdtemp(prefix="arena-test-hog-"))  # open to the bot's own UID, unlike tmp_path
    try:
        directory.chmod(0o755)
        (directory / "bot.py").write_text(HOG)
        command = [sys.executable, directory / "bot.py", marker]
        done = check_bot("--protocol", "stdio", "--matches", "1", *options, "--dir", directory, "--", *command)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAULT in check-2p-1: limit: memory: used more than 256 MB" in done.stdout
    assert "FAIL: 5 faults (limit 5)" in done.stdout
    peak, limit = peak_memory(done)
    assert peak >= limit == 256


@pytest.mark.skipif(os.geteuid() != 0, reason="bot user ids are handed out only when the arena runs as root")
def test_a_sandbox_the_machine_cannot_set_up_is_said_not_to_be_the_bots_fault() -> None:
    command = [sys.executable, "-m", "arena", "check-bot", "--matches", "1", "--", "python3", str(EXAMPLE)]
    env = {**os.environ, "ARENA_BOT_UIDS": "1-10"}  # ids /etc/passwd gives daemon, bin, …
    env.pop(notices.SHARED_VARIABLE, None)
    done = subprocess.run(
        command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, cwd=ROOT, env=env
    )
    assert done.returncode == 2, done.stdout + done.stderr
    said = done.stdout.strip().splitlines()[-1]
    assert said.startswith("ERROR: the arena could not start your bot here: bot user ids 1\u201310 are reserved by")
    assert said.endswith("this is not your bot's fault"), said
    assert "FAIL" not in done.stdout


def test_a_bot_named_through_dot_dot_is_checked_in_its_own_directory(tmp_path: Path) -> None:
    """`check-bot -- python3 ../bot/bot.py` from a sibling folder: the sandbox shows bot/, not the sibling the path
    passes through, so the path is taken as the one it names."""
    (tmp_path / "here").mkdir()
    (tmp_path / "bot").mkdir()
    shutil.copy(EXAMPLE, tmp_path / "bot" / "bot.py")
    command = [sys.executable, "-m", "arena", "check-bot", "--matches", "1", "--", "python3", "../bot/bot.py"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path / "here")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"the bot's directory: {tmp_path / 'bot'}" in done.stdout

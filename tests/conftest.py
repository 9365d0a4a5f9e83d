"""Fixtures for every test: a marker on the command line of each process a test starts, and the example bots
in other languages (played where their runtime is installed); no fork of a process that has threads; and
missing(), by which what CI installs is never silently skipped there; SIGINT heard even in a background job; a
cache folder of its own."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import hypothesis_profiles

hypothesis_profiles.load()

_fork = os.fork


def _threads() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return 1


def _fork_without_threads() -> int:
    """os.fork, refused in a process with other threads (libzmq's and the sandbox's count too).

    The child of such a fork can deadlock on a lock another thread held. Python 3.12 and later warn of it,
    but a warning turned into an error inside os.fork is dropped, so the tests refuse the fork itself."""
    threads = _threads()
    if threads > 1:
        raise AssertionError(f"os.fork() in a process with {threads} threads: its child may deadlock")
    return _fork()


os.fork = _fork_without_threads

# A shell starts a background job with SIGINT ignored, and every process the tests start would inherit that:
# the tests that press Ctrl-C on an arena need it to hear the signal, as it does in a terminal.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def under_ci() -> bool:
    """CI=true, as .ci/run sets it: there the machine has everything the tests use."""
    return os.environ.get("CI", "").lower() in ("true", "1")


def missing(reason: str) -> None:
    """Something a test needs is not on this machine: a skip, but a failure under CI, which installs it."""
    if under_ci():
        pytest.fail(f"{reason}; CI installs it (.ci/run), so a skip here would hide lost coverage")
    pytest.skip(reason)


ROOT = Path(__file__).resolve().parents[1]
JAVA_BOT = ROOT / "examples" / "java-bot" / "Bot.java"
NODE_BOT = ROOT / "examples" / "node-bot" / "bot.js"


@pytest.fixture(autouse=True)
def _own_cache_folder(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache folder per test: the sandbox's notices said once per machine are said again in every test (and
    none of them goes to the user's own ~/.cache)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture(scope="session")
def java_classes() -> Iterator[Path]:
    """The example Java bot, compiled into a directory every user may read (a bot may run as a UID of its own)."""
    if not (shutil.which("javac") and shutil.which("java")):
        missing(
            "no JDK here (javac, java), so the Java bot is not played (Debian: apt-get install default-jdk-headless)"
        )
    directory = Path(tempfile.mkdtemp(prefix="arena-test-java-bot-"))
    directory.chmod(0o755)
    subprocess.run(["javac", "-d", str(directory), str(JAVA_BOT)], check=True, timeout=300)
    for path in directory.iterdir():
        path.chmod(0o644)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def node_bot() -> Path:
    """The example Node.js bot's script."""
    if not shutil.which("node"):
        missing("no Node.js here (node), so the Node.js bot is not played (Debian: apt-get install nodejs)")
    return NODE_BOT


def find_processes(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.fixture
def marker() -> Iterator[str]:
    """A word on every test bot's command line; after the test no process may carry it."""
    word = f"arena-test-{uuid.uuid4().hex[:12]}"
    yield word
    deadline = time.monotonic() + 5
    while (left := find_processes(word)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left, f"processes survived the test: {[_describe(pid) for pid in left]}"


def _describe(pid: int) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return f"{pid} (gone)"
    fields = stat[stat.rfind(")") + 2 :].split()
    return f"{pid} state {fields[0]} parent {fields[1]}: {command[:160]}"

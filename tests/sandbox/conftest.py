"""Helpers for the sandbox tests: levels, bot directories, hostile scripts, and checks that nothing survives."""

from __future__ import annotations

import os
import select
import shutil
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from arena.sandbox import BotProcess, LaunchSpec, Limits, SandboxLevel, guardian, launch, resolve_level
from tests.conftest import missing

ROOT = os.geteuid() == 0
DEADLINE_S = 10.0

# Hostile scripts use this to tell the test which processes they started: "pid pid-namespace session".
REPORT = """
import os
def report(name):
    line = f"{os.getpid()} {os.readlink('/proc/self/ns/pid')} {os.getsid(0)}\\n"
    with open(name + ".tmp", "w") as stream:
        stream.write(line)
    os.rename(name + ".tmp", name)
"""


def poll_until(condition: Callable[[], object], timeout: float = DEADLINE_S, what: str = "condition") -> object:
    """Poll condition until it is truthy; fail the test at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.01)


def strict_or_skip() -> None:
    level, warning = resolve_level(SandboxLevel.STRICT)
    if level is not SandboxLevel.STRICT:
        missing(f"strict is not available here: {warning}")


@dataclass(frozen=True, slots=True)
class Reported:
    """A process a hostile script reported: its pid in its own namespace, the namespace, its session."""

    pid: int
    namespace: str
    session: int


def _namespace(pid: int | str) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def _nspid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as stream:
            for line in stream:
                if line.startswith("NSpid:"):
                    return int(line.split()[-1])
    except OSError:
        return None
    return None


def _session(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stream:
            raw = stream.read()
    except OSError:
        return None
    return int(raw[raw.rfind(b")") + 2 :].split()[3])


def host_processes(reported: Reported) -> set[int]:
    """Host pids of what reported stands for: the process itself, or its whole PID namespace if it has one."""
    mine = _namespace("self")
    found = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        if reported.namespace != mine:
            if _namespace(pid) == reported.namespace:
                found.add(pid)
        elif pid == reported.pid or _session(pid) == reported.session:
            found.add(pid)
    return found


def read_report(path: Path) -> Reported:
    pid, namespace, session = path.read_text().split()
    return Reported(int(pid), namespace, int(session))


def assert_all_gone(pids: set[int]) -> None:
    """Every pid must vanish from the process table (a zombie still counts as there), before the deadline."""

    def gone() -> bool:
        for pid in pids:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                continue
            return False
        return True

    poll_until(gone, what=f"processes {sorted(pids)} to be gone")


def children_of_this_process() -> set[int]:
    me = str(os.getpid())
    found = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as stream:
                    raw = stream.read()
            except OSError:
                continue
            if raw[raw.rfind(b")") + 2 :].split()[1].decode() == me:
                found.add(int(name))
    return found - {guardian.guardian_pid()}  # it lives as long as the test process


def read_line(fd: int, timeout: float = DEADLINE_S) -> bytes:
    """One line from a non-blocking pipe, within timeout."""
    data = b""
    deadline = time.monotonic() + timeout
    while not data.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            pytest.fail(f"no line from the bot within {timeout} s (got {data!r})")
        chunk = os.read(fd, 65536)
        if not chunk:
            pytest.fail(f"the bot closed its stdout (got {data!r})")
        data += chunk
    return data


@pytest.fixture
def bot_dir() -> Iterator[Path]:
    """A bot's own directory, open to every user (under basic as root the bot has a UID of its own)."""
    path = Path(tempfile.mkdtemp(prefix="arena-test-bot-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def closed_dir() -> Iterator[Path]:
    """Another directory (a tournament's output, another bot's files): mode 0700, with a secret in it."""
    path = Path(tempfile.mkdtemp(prefix="arena-test-other-"))
    (path / "secret.txt").write_text("secret\n")
    yield path
    shutil.rmtree(path, ignore_errors=True)


class Bots:
    """Starts hostile scripts and, at teardown, kills them and checks that the test left no process behind."""

    def __init__(self, bot_dir: Path) -> None:
        self.bot_dir = bot_dir
        self.started: list[BotProcess] = []
        self.children_before = children_of_this_process()

    def start(
        self,
        level: SandboxLevel,
        script: str,
        *,
        limits: Limits | None = None,
        env: dict[str, str] | None = None,
        stdio: bool = False,
        cpu: int | None = None,
        socket_dir: Path | None = None,
        name: str = "bot.py",
    ) -> BotProcess:
        if level is SandboxLevel.STRICT:
            strict_or_skip()
        path = self.bot_dir / name
        path.write_text(REPORT + textwrap.dedent(script))
        spec = LaunchSpec(
            command=(sys.executable, str(path)),  # as root under a closed /root too: its UID is shown it
            bot_dir=self.bot_dir,
            env=env or {},
            level=level,
            limits=limits or Limits(),
            stdio=stdio,
            cpu=cpu,
            socket_dir=socket_dir,
        )
        bot = launch(spec)
        self.started.append(bot)
        return bot

    def report_dir(self, bot: BotProcess) -> Path:
        """Where a script's relative paths land: its cwd (as the arena reads it while the bot runs)."""
        if bot.level is SandboxLevel.NONE:
            return self.bot_dir
        poll_until(lambda: bot.files_path() is not None, what="the bot's sandbox to be up")
        return Path(str(bot.files_path()))

    def reported(self, bot: BotProcess, name: str) -> Reported:
        path = self.report_dir(bot) / name
        poll_until(path.exists, what=f"the bot to write {name}")
        return read_report(path)

    def close(self) -> None:
        for bot in self.started:
            bot.kill()
        for bot in self.started:
            assert bot.returncode() is not None
            assert not bot.workdir.exists(), f"{bot.workdir} was not removed"
        poll_until(
            lambda: not children_of_this_process() - self.children_before,
            what="every child of the test to be reaped",
        )


@pytest.fixture
def bots(bot_dir: Path) -> Iterator[Bots]:
    started = Bots(bot_dir)
    yield started
    started.close()


ALL_LEVELS = pytest.mark.parametrize("level", list(SandboxLevel), ids=lambda level: level.value)
LIMITED_LEVELS = pytest.mark.parametrize(
    "level", [SandboxLevel.STRICT, SandboxLevel.BASIC], ids=lambda level: level.value
)

"""`arena doctor`: what this machine's sandbox gives a tournament, looked at and then tried, before the night.

An organiser runs it before a club night or a grading run, as isolate's isolate-check-environment is run: it says
which sandbox level a bot would get here and why, what the machine offers that level (user namespaces, cgroups,
Landlock, seccomp, free bot user ids, the output disk), and then plays a short hostile suite against the real
sandbox: bots that try the network, files outside their directory, another bot's files, signals outside their
tree, a fork bomb, too much memory, too much disk, CPU off their turn. Each check passes only if the attack fails;
at `none`, where bots are trusted, every one of them fails.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from arena.analysis import judges_compiled
from arena.bots.search import playouts_compiled
from arena.sandbox import (
    BotProcess,
    LaunchSpec,
    Limits,
    SandboxError,
    SandboxLevel,
    bwrap,
    cgroups,
    confinement,
    cpuclock,
    launch,
    levels,
    resolve_level,
    seccomp,
    sysinfo,
    users,
)

WAIT_S = 10.0
SUITE_LIMITS = Limits(memory_mb=64, processes=32, disk_mb=8, cpu_s=10)
"""Small limits, so that the hostile bots reach them in a fraction of a second."""
OFF_TURN_BOUND_MS = 50


@dataclass(frozen=True, slots=True)
class Fact:
    """One line of what the machine offers: what, its value, and whether it falls short of what is asked."""

    name: str
    value: str
    short: bool = False


@dataclass(frozen=True, slots=True)
class Check:
    """One hostile bot's attack on the sandbox: passed means the attack failed."""

    name: str
    passed: bool
    detail: str


@dataclass(slots=True)
class Diagnosis:
    asked: SandboxLevel
    level: SandboxLevel
    why: str
    facts: list[Fact] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """The machine gives what was asked: the level, every fact, every check."""
        return self.level is self.asked and not any(f.short for f in self.facts) and all(c.passed for c in self.checks)

    def as_json(self) -> dict[str, object]:
        return {
            "asked": self.asked.value,
            "level": self.level.value,
            "why": self.why,
            "facts": [{"name": f.name, "value": f.value, "short": f.short} for f in self.facts],
            "checks": [{"name": c.name, "passed": c.passed, "detail": c.detail} for c in self.checks],
            "ok": self.ok,
        }


def diagnose(asked: SandboxLevel, limits: Limits, output: Path, bot_uids: range | None = None) -> Diagnosis:
    """Look at the machine for a tournament of this level, then try its sandbox."""
    level, warning = resolve_level(asked)
    lines = (warning or "").splitlines()
    fallback = next((line for line in lines if "bubblewrap cannot run here" in line), "")
    as_arenas_user = next((line for line in lines if line != fallback), "")  # root, whose bots cannot have ids
    found = Diagnosis(asked, level, fallback or ("as asked" if level is asked else ""))
    found.facts = list(_facts(asked, level, limits, output, bot_uids))
    if as_arenas_user:
        found.facts.append(Fact("bots' own user ids", as_arenas_user.removeprefix("sandbox: "), short=True))
    found.checks = list(_suite(level))
    return found


def _facts(
    asked: SandboxLevel, level: SandboxLevel, limits: Limits, output: Path, bot_uids: range | None
) -> Iterator[Fact]:
    path = bwrap.bwrap_path()
    problem = None if level is SandboxLevel.STRICT else levels.probe_strict()
    short = asked is SandboxLevel.STRICT and problem is not None
    yield Fact("bubblewrap", path or f"{bwrap.wanted()} not found", short)
    yield Fact("user namespaces for bubblewrap", problem or "given", short)
    found = cgroups.hierarchy()
    memory = f"cgroup v{found.version} at {found.parent}" if isinstance(found, cgroups.Hierarchy) else found
    yield Fact("memory limit", memory if isinstance(found, cgroups.Hierarchy) else f"RLIMIT_DATA and a watch ({found})")
    clock = cpuclock.create()
    if isinstance(clock, str):
        yield Fact("CPU clock and freezer", f"/proc and SIGSTOP ({clock})")
    else:
        yield Fact("CPU clock and freezer", f"a cgroup ({clock.kind})")
        clock.remove(WAIT_S)
    abi = confinement.landlock_abi()
    gaps = confinement.basic_gaps(namespaces=os.geteuid() == 0 and confinement.pid_namespaces_problem() is None)
    yield Fact(
        "Landlock",
        f"ABI {abi}" if abi else "none",
        short=level is SandboxLevel.BASIC and bool(gaps),
    )
    program = seccomp.program(own_namespaces=True)
    yield Fact(
        "seccomp filter", "libseccomp" if isinstance(program, bytes) else program, short=isinstance(program, str)
    )
    problem = sysinfo.available()
    yield Fact("sysinfo() answered by the arena", problem or "yes", short=problem is not None)
    if os.geteuid() == 0 and level is not SandboxLevel.NONE:
        try:
            users.use(bot_uids)
            ids = users.ids()
            yield Fact("bot user ids", f"{ids.start}\u2013{ids.stop - 1}, held by nobody")
        except SandboxError as error:
            yield Fact("bot user ids", str(error), short=True)
    else:
        yield Fact("bot user ids", "none: bots run as the arena's user (it is not root)")
    yield Fact(
        "diagnostics' judges",
        "compiled" if judges_compiled() else "plain Python (an editable install, or no C compiler at install)",
    )
    yield Fact(
        "search bot's playouts",
        "compiled"
        if playouts_compiled()
        else "plain Python (an editable install, or no C compiler at install): the same moves, 2.5 times the CPU",
    )
    where = output if output.exists() else next((p for p in output.parents if p.exists()), Path("/"))
    free_mb = shutil.disk_usage(where).free // 2**20
    yield Fact("output disk", f"{free_mb} MB free at {where}", short=free_mb < 2 * limits.disk_mb)


# The hostile suite: each attack is a bot script given its target in $TARGET (a path on its command line would be
# refused before the start, as strict shows a bot no file outside its directory); it prints what it got.

NETWORK = """
import os, socket
try:
    socket.create_connection(("127.0.0.1", int(os.environ["TARGET"])), timeout=2).close()
    print("connected")
except OSError as error:
    print("refused:", error)
"""
READ = """
import os
try:
    print("read:", open(os.environ["TARGET"]).read(20))
except OSError as error:
    print("refused:", error)
"""
SIGNAL = """
import os, signal
try:
    os.kill(int(os.environ["TARGET"]), signal.SIGKILL)
    print("sent")
except OSError as error:
    print("refused:", error)
"""
FORK_BOMB = """
import os, time
count = 0
try:
    while count < 200:  # far past the suite's limit of 32; unbounded (sandbox none), it stops here
        if os.fork() == 0:
            time.sleep(5)
            os._exit(0)
        count += 1
    print("forked", count)
except OSError as error:
    print("stopped at", count, error)
"""
MEMORY = """
import time
hoard = []
for _ in range(64):
    hoard.append(bytearray(8 << 20))
print("held", len(hoard) * 8, "MB", flush=True)
time.sleep(3)  # where no cgroup holds it, the memory of a bot is looked at every 0.1 s
"""
DISK = """
import time
try:
    with open("big", "wb") as stream:
        for _ in range(64):
            stream.write(b"x" * (1 << 20))
            stream.flush()
    print("wrote 64 MB", flush=True)
    time.sleep(3)  # where the disk is measured (basic, not root), it is looked at a few times a second
except OSError as error:
    print("refused:", error)
"""
SPIN = """
import sys
print("spinning", flush=True)
while True:
    pass
"""


class _Place:
    """The suite's folders: a bot's, another bot's with a file, and an arena-like folder with a secret."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="arena-doctor-"))
        self.root.chmod(0o755)
        self.bot = self._folder("bot")
        self.other = self._folder("other")
        self.arena = self._folder("output")
        for folder, name in ((self.other, "strategy.py"), (self.arena, "results.sqlite")):
            secret = folder / name
            secret.write_text("secret\n")
            secret.chmod(0o644)

    def _folder(self, name: str) -> Path:
        folder = self.root / name
        folder.mkdir(mode=0o755)
        return folder

    def bot_running(self, level: SandboxLevel, script: str, target: str = "") -> BotProcess:
        path = self.bot / f"attack-{abs(hash(script))}.py"
        path.write_text(textwrap.dedent(script))
        path.chmod(0o644)
        command = (sys.executable, str(path))
        env = {"TARGET": target}
        return launch(LaunchSpec(command, bot_dir=self.bot, env=env, level=level, limits=SUITE_LIMITS, stdio=True))

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _said(bot: BotProcess) -> str:
    """What the bot printed, once it ended (killed if it had not within WAIT_S)."""
    if bot.wait(WAIT_S) is None:
        bot.kill()
    assert bot.stdout_fd is not None
    chunks = []
    with contextlib.suppress(BlockingIOError, OSError):
        while chunk := os.read(bot.stdout_fd, 65536):
            chunks.append(chunk)
    return b"".join(chunks).decode(errors="replace").strip()


def _attempt(place: _Place, level: SandboxLevel, name: str, script: str, target: str) -> Check:
    """An attack that prints "refused: …" when it fails."""
    bot = place.bot_running(level, script, target)
    try:
        said = _said(bot)
    finally:
        bot.kill()
    return Check(name, said.startswith("refused"), said or bot.stderr_tail().strip()[-200:])


def _network(place: _Place, level: SandboxLevel) -> Check:
    with socket.create_server(("127.0.0.1", 0)) as server:
        return _attempt(place, level, "network", NETWORK, str(server.getsockname()[1]))


def _signals(place: _Place, level: SandboxLevel) -> Check:
    victim = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        check = _attempt(place, level, "signals outside its tree", SIGNAL, str(victim.pid))
        alive = victim.poll() is None
        return Check(check.name, check.passed and alive, check.detail + ("" if alive else "; the victim died"))
    finally:
        victim.kill()
        victim.wait()


def _fork_bomb(place: _Place, level: SandboxLevel) -> Check:
    bot = place.bot_running(level, FORK_BOMB)
    try:
        said = _said(bot)
        kind, detail = bot.exit_fault() if bot.returncode() not in (None, 0) else ("", "")
    finally:
        bot.kill()
    still = subprocess.run(["true"], timeout=WAIT_S).returncode == 0
    # Stopped at its process limit, or by another of its limits first (its copies' memory, counted together where
    # no cgroup shares their pages, can pass memory_mb before the process limit is reached): the bomb failed.
    stopped = said.startswith("stopped at") or kind == "limit"
    shown = said or detail or bot.stderr_tail().strip()[-200:] or f"no word from the bot within {WAIT_S:g} s"
    return Check("fork bomb", stopped and still, shown + ("" if still else "; the arena could not start a process"))


def _ended_by_limit(place: _Place, level: SandboxLevel, name: str, script: str) -> Check:
    bot = place.bot_running(level, script)
    try:
        said = _said(bot)
        kind, detail = bot.exit_fault() if bot.returncode() not in (None, 0) else ("", "")
    finally:
        bot.kill()
    held = kind == "limit" or said.startswith("refused")
    return Check(name, held, detail or said)


def _off_turn(place: _Place, level: SandboxLevel) -> Check:
    bot = place.bot_running(level, SPIN)
    try:
        deadline = time.monotonic() + WAIT_S
        while bot.clock.cpu_ns() < 50_000_000 and time.monotonic() < deadline:
            time.sleep(0.01)
        bot.clock.freeze()
        time.sleep(0.05)  # a freeze takes a moment
        before = bot.clock.cpu_ns()
        time.sleep(0.3)
        used_ms = (bot.clock.cpu_ns() - before) / 1e6
    finally:
        bot.kill()
    return Check("CPU off its turn", used_ms < OFF_TURN_BOUND_MS, f"{used_ms:.0f} ms in 0.3 s frozen")


def _arena_files(place: _Place, level: SandboxLevel) -> Check:
    return _attempt(place, level, "files outside its directory", READ, str(place.arena / "results.sqlite"))


def _other_bot(place: _Place, level: SandboxLevel) -> Check:
    return _attempt(place, level, "another bot's files", READ, str(place.other / "strategy.py"))


def _memory(place: _Place, level: SandboxLevel) -> Check:
    return _ended_by_limit(place, level, "memory", MEMORY)


def _disk(place: _Place, level: SandboxLevel) -> Check:
    return _ended_by_limit(place, level, "disk", DISK)


SUITE: tuple[tuple[str, Callable[[_Place, SandboxLevel], Check]], ...] = (
    ("network", _network),
    ("files outside its directory", _arena_files),
    ("another bot's files", _other_bot),
    ("signals outside its tree", _signals),
    ("fork bomb", _fork_bomb),
    ("memory", _memory),
    ("disk", _disk),
    ("CPU off its turn", _off_turn),
)


def _suite(level: SandboxLevel) -> Iterator[Check]:
    place = _Place()
    try:
        for name, attack in SUITE:
            try:
                yield attack(place, level)
            except (SandboxError, OSError) as error:
                yield Check(name, False, f"the hostile bot could not be played: {error}")
    finally:
        place.remove()

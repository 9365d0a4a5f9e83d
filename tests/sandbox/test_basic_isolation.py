"""Hostile bots against basic (issue 34, part 3): no bot reaches another bot's or the arena's files, another
process's /proc, a process outside its own tree by a signal, or another bot's socket.

Each attack runs at none too, where it must succeed: that is the control that the hostile bot and its victim work,
so that no test here passes because its probe is broken. strict runs each as a regression guard. A basic case skips
(fails under CI) where this kernel cannot hold it: files need Landlock; /proc, signals and sockets are held by the
bot's own namespaces when the arena is root (and may make them), else by Landlock (ABI 6 scopes signals and abstract
sockets) or, for inet sockets, by seccomp.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.sandbox import BotProcess, LaunchSpec, SandboxLevel, launch
from arena.sandbox import levels as levels_module
from tests.conftest import missing
from tests.sandbox.conftest import DEADLINE_S, ROOT, Bots, poll_until, strict_or_skip

Outcome = dict[str, Any]
"""What a hostile bot reports of one attempt: {"ok": True, "value": ...} or {"ok": False, "error": "EACCES"}."""

LEVELS = pytest.mark.parametrize("level", list(SandboxLevel), ids=lambda level: level.value)
"""Every attack at every level: at none it must succeed (the control), at basic and strict fail."""

PRELUDE = """
import errno, json, os, signal, socket, sys, time

def outcome(action):
    try:
        return {"ok": True, "value": action()}
    except OSError as error:
        return {"ok": False, "error": errno.errorcode.get(error.errno, str(error))}

def say(**result):
    sys.stdout.write(json.dumps(result) + "\\n")
    sys.stdout.flush()
"""

PROBES = """
def read_file(path):
    with open(path, "rb") as stream:
        return stream.read().decode("latin-1")

def list_dir(path):
    return sorted(os.listdir(path))

def create(path):
    with open(path, "x") as stream:
        stream.write("planted by another bot")
    return path

def yaml_on_command_line(pid):
    named = [part for part in read_file(f"/proc/{pid}/cmdline").split("\\0") if part.endswith(".yaml")]
    if not named:
        raise OSError(errno.ENOENT, "no .yaml on the command line")
    return read_file(named[0])

def descriptors(pid):
    links = []
    for name in os.listdir(f"/proc/{pid}/fd"):
        try:
            links.append(os.readlink(f"/proc/{pid}/fd/{name}"))
        except OSError as error:
            links.append(errno.errorcode.get(error.errno, "?"))
    return links

def memory(pid_and_address):
    pid, address = pid_and_address.split(":")
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as stream:
        stream.seek(int(address))
        return stream.read(16).hex()

def scan(_):
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                found.append(read_file(f"/proc/{name}/cmdline"))
            except OSError:
                pass
    return found

KINDS = {"read": read_file, "list": list_dir, "create": create, "yaml": yaml_on_command_line,
         "fd": descriptors, "mem": memory, "scan": scan}
wanted = json.loads(os.environ["PROBES"])
say(**{name: outcome(lambda: KINDS[kind](argument)) for name, (kind, argument) in wanted.items()})
"""

SIGNALLER = """
def signal_number(name):
    return 0 if name == "0" else getattr(signal, name)

child = os.fork()
if child == 0:
    while True:
        time.sleep(60)
results = {"own child": outcome(lambda: os.kill(child, signal.SIGKILL))}
_, status = os.waitpid(child, 0)
results["own child killed"] = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
for target, pid in json.loads(os.environ["TARGETS"]).items():
    for name in os.environ["SIGNALS"].split():
        results[f"{name} to {target}"] = outcome(lambda: os.kill(pid, signal_number(name)))
say(**results)
"""

KILL_EVERYONE = """
child = os.fork()
if child == 0:
    while True:
        time.sleep(60)
outside = json.loads(os.environ["TARGETS"])
reachable = sorted(name for name, pid in outside.items() if outcome(lambda: os.kill(pid, 0))["ok"])
if reachable:  # kill(-1) would reach the test runner: not tried
    os.kill(child, signal.SIGKILL)
    os.waitpid(child, 0)
    say(reachable=reachable)
    raise SystemExit(0)
sent = outcome(lambda: os.kill(-1, signal.SIGKILL))
_, status = os.waitpid(child, 0)
say(reachable=[], sent=sent, child_killed=os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL)
"""

SENDER = """
import contextlib
kind, name, secret = os.environ["CHANNEL"], os.environ["NAME"], os.environ["SECRET"].encode()

def listen():
    if kind == "udp":
        server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        server.bind(("127.0.0.1", 0))
        return server, server.getsockname()[1]
    if kind == "tcp":
        server = socket.create_server(("127.0.0.1", 0))
        return server, server.getsockname()[1]
    if kind == "abstract-dgram":
        server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        server.bind("\\0" + name)
        return server, "\\0" + name
    paths = {"abstract": "\\0" + name, "workdir": os.path.abspath(name + ".sock"), "tmp": f"/tmp/{name}.sock"}
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(paths[kind])
    if kind != "abstract":  # open to a receiver of another UID too
        with contextlib.suppress(OSError):
            os.chmod(paths[kind], 0o777)
        if kind == "workdir":
            with contextlib.suppress(OSError):
                os.chmod(".", 0o755)
    server.listen()
    return server, paths[kind]

try:
    server, address = listen()
except OSError as error:
    say(bound=False, error=errno.errorcode.get(error.errno, str(error)))
    raise SystemExit(0)
say(bound=True, address=address)
while True:
    if kind in ("udp", "abstract-dgram"):
        _, peer = server.recvfrom(64)
        server.sendto(secret, peer)
    else:
        connection, _ = server.accept()
        connection.sendall(secret)
        connection.close()
"""

RECEIVER = """
kind, address = os.environ["CHANNEL"], json.loads(os.environ["ADDRESS"])

def fetch():
    if kind == "udp":
        client = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        client.settimeout(3)
        client.connect(("127.0.0.1", address))
        client.send(b"?")
    elif kind == "abstract-dgram":
        client = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        client.settimeout(3)
        client.bind("")  # an abstract address of its own, for the answer
        client.connect(address)
        client.send(b"?")
    elif kind == "tcp":
        client = socket.create_connection(("127.0.0.1", address), timeout=3)
    else:
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.settimeout(3)
        client.connect(address)
    return client.recv(64).decode()

say(got=outcome(fetch))
"""

# --- what this machine can hold at basic


@functools.cache
def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 where it has none (not built, or not enabled at boot)."""
    landlock_create_ruleset, version_flag = 444, 1  # the same number on every architecture
    libc = ctypes.CDLL(None, use_errno=True)
    return max(int(libc.syscall(landlock_create_ruleset, None, 0, version_flag)), 0)


@functools.cache
def own_namespaces() -> bool:
    """Whether basic bots can get namespaces of their own here: the arena is root and may make them."""
    return ROOT and levels_module.views_problem() is None


def has_seccomp() -> bool:
    return any(line.startswith("Seccomp:") for line in Path("/proc/self/status").read_text().splitlines())


def need(level: SandboxLevel, what: str, *, landlock: int, namespaces: bool) -> None:
    """Skip (fail under CI) a case this machine cannot hold: strict where bubblewrap cannot run; basic where
    neither the bot's own namespaces (namespaces: they would hold it) nor Landlock of that ABI (0: seccomp) can."""
    if level is SandboxLevel.STRICT:
        strict_or_skip()
    if level is not SandboxLevel.BASIC or (namespaces and own_namespaces()):
        return
    found = landlock_abi()
    if landlock and found < landlock:
        having = f"ABI {found}" if found else "no Landlock"
        missing(
            f"basic cannot keep a bot from {what} here: that needs Landlock ABI {landlock}, this kernel has {having}"
        )
    if not landlock and not has_seccomp():
        missing(f"basic cannot keep a bot from {what} here: that needs seccomp, which this kernel lacks")


# --- starting hostile bots and reading what they report


def start(
    bots: Bots, level: SandboxLevel, script: str, env: dict[str, str], directory: Path | None = None
) -> BotProcess:
    """A hostile script as a bot of its own directory (the test's bot_dir by default), its stdout a pipe."""
    directory = directory or bots.bot_dir
    path = directory / "bot.py"
    path.write_text(PRELUDE + textwrap.dedent(script))
    path.chmod(0o644)
    spec = LaunchSpec(command=(sys.executable, str(path)), bot_dir=directory, env=env, level=level, stdio=True)
    bot = launch(spec)
    bots.started.append(bot)
    return bot


def report(bot: BotProcess) -> dict[str, Any]:
    """The one JSON line the bot writes to its stdout; fail with its stderr if it writes none in time."""
    assert bot.stdout_fd is not None
    data = b""
    deadline = time.monotonic() + DEADLINE_S
    while not data.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        chunk = os.read(bot.stdout_fd, 65536) if select.select([bot.stdout_fd], [], [], max(remaining, 0))[0] else b""
        if not chunk:
            bot.kill()
            pytest.fail(f"no report from the bot (got {data!r}); its stderr:\n{bot.stderr_tail()}")
        data += chunk
    result: dict[str, Any] = json.loads(data)
    return result


def leaked(outcome: Outcome, secret: str | None) -> bool:
    """The attempt succeeded, and (when a secret is named) what it got holds the secret."""
    if not outcome["ok"]:
        return False
    value = outcome["value"]
    text = value if isinstance(value, str) else "\n".join(map(str, value or ()))
    return secret is None or secret in text


def brief(results: dict[str, Any]) -> dict[str, str]:
    """What each attempt came to, without what it read: an environment may hold the machine's secrets."""
    told = {}
    for name, outcome in results.items():
        if isinstance(outcome, dict):
            told[name] = "succeeded" if outcome["ok"] else str(outcome["error"])
        else:
            told[name] = str(outcome)
    return told


def assert_attack(level: SandboxLevel, results: dict[str, Outcome], secrets: dict[str, str | None]) -> None:
    """At none every attempt gets its secret (the control); at basic and strict none does."""
    got = {name for name, secret in secrets.items() if leaked(results[name], secret)}
    if level is SandboxLevel.NONE:
        assert got == set(secrets), f"control: at none every attempt should succeed: {brief(results)}"
    else:
        assert not got, f"at {level.value} the bot got {sorted(got)}: {brief(results)}"


def run_probes(bots: Bots, level: SandboxLevel, probes: dict[str, tuple[str, str]]) -> dict[str, Outcome]:
    """Run the probe bot; it must read its own script (the control that reading works in its sandbox)."""
    own = ("read", str(bots.bot_dir / "bot.py"))
    results = report(start(bots, level, PROBES, {"PROBES": json.dumps({"own script": own, **probes})}))
    own_result = results.pop("own script")
    assert leaked(own_result, "def read_file"), (
        f"control: the bot cannot read its own script: {brief({'own': own_result})}"
    )
    return results


# --- what the attacks aim at


def token() -> str:
    return uuid.uuid4().hex[:12]


def shared_dir(prefix: str) -> Path:
    """A folder as users' folders usually are: 0755, its files 0644 (mkdtemp makes it 0700)."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o755)
    return path


@pytest.fixture
def output_dir() -> Iterator[Path]:
    """A tournament's output folder: its YAML (with its seed) and a stand-in results.sqlite."""
    path = shared_dir("arena-test-output-")
    (path / "tournament.yaml").write_text(f"format: round-robin\nseed: {int(token(), 16)}\n")
    (path / "results.sqlite").write_text(f"SQLite format 3\0results-{token()}\n")
    for file in path.iterdir():
        file.chmod(0o644)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def other_bot_dir() -> Iterator[Path]:
    """Another bot's directory, with its strategy in it."""
    path = shared_dir("arena-test-other-bot-")
    (path / "strategy.py").write_text(f"SECRET = {token()!r}\n")
    (path / "strategy.py").chmod(0o644)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def idle_process(arguments: list[str]) -> subprocess.Popen[bytes]:
    """A Python process of the arena's user that waits for its stdin to close; its command line ends in arguments."""
    command = [sys.executable, "-c", "import sys; sys.stdin.read()", *arguments]
    return subprocess.Popen(command, stdin=subprocess.PIPE, start_new_session=True)


def end(process: subprocess.Popen[bytes]) -> None:
    process.kill()
    process.wait()
    if process.stdin is not None:
        process.stdin.close()


@pytest.fixture
def arena_run(output_dir: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A stand-in for `arena run FILE`: a process of the arena's user whose command line names the tournament."""
    process = idle_process(["arena", "run", str(output_dir / "tournament.yaml")])
    yield process
    end(process)


@pytest.fixture
def helper() -> Iterator[subprocess.Popen[bytes]]:
    """A harmless process of the arena's user, not a bot: a victim for signals in the arena's place."""
    process = idle_process(["arena-test-victim"])
    yield process
    end(process)


def idle_bot(bots: Bots, level: SandboxLevel, directory: Path) -> BotProcess:
    """Another bot, at the same level, that only waits: a victim."""
    return start(bots, level, "while True:\n    time.sleep(60)\n", {}, directory)


def state(pid: int) -> str:
    """The process's state letter (T: stopped, Z: dead), or "gone"."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return "gone"
    return raw[raw.rfind(b")") + 2 :].split()[0].decode()


def assert_untouched(pid: int) -> None:
    assert state(pid) not in ("T", "t", "Z", "X", "gone"), f"the victim {pid} is in state {state(pid)}"


# --- files: the tournament file, the output folder, another bot's directory


@LEVELS
def test_a_bot_cannot_read_the_tournament_file_its_arena_names(
    bots: Bots, output_dir: Path, arena_run: subprocess.Popen[bytes], level: SandboxLevel
) -> None:
    """The seed, directly: the arena's command line names the YAML; the bot reads it there, or at a guessed path."""
    need(level, "the arena's files", landlock=1, namespaces=False)
    yaml = output_dir / "tournament.yaml"
    probes = {"named on the command line": ("yaml", str(arena_run.pid)), "at its path": ("read", str(yaml))}
    seed = yaml.read_text().splitlines()[1]
    assert_attack(level, run_probes(bots, level, probes), dict.fromkeys(probes, seed))


@LEVELS
def test_a_bot_can_neither_read_nor_write_the_arenas_output_folder(
    bots: Bots, output_dir: Path, level: SandboxLevel
) -> None:
    """results.sqlite, the folder's listing, and a file planted there."""
    need(level, "the arena's files", landlock=1, namespaces=False)
    results = output_dir / "results.sqlite"
    probes = {
        "results.sqlite": ("read", str(results)),
        "listing": ("list", str(output_dir)),
        "planting": ("create", str(output_dir / "planted")),
    }
    secrets = {"results.sqlite": results.read_text(), "listing": "results.sqlite", "planting": None}
    assert_attack(level, run_probes(bots, level, probes), secrets)
    assert (output_dir / "planted").exists() == (level is SandboxLevel.NONE)


@LEVELS
def test_a_bot_can_neither_read_nor_write_another_bots_directory(
    bots: Bots, other_bot_dir: Path, level: SandboxLevel
) -> None:
    need(level, "another bot's files", landlock=1, namespaces=False)
    strategy = other_bot_dir / "strategy.py"
    probes = {
        "listing": ("list", str(other_bot_dir)),
        "strategy": ("read", str(strategy)),
        "planting": ("create", str(other_bot_dir / "planted")),
    }
    secrets = {"listing": "strategy.py", "strategy": strategy.read_text(), "planting": None}
    assert_attack(level, run_probes(bots, level, probes), secrets)


# --- /proc of the arena and of another bot


def first_mapping() -> tuple[int, str]:
    """The start of this process's first mapping (its interpreter's ELF header), and its first 16 bytes."""
    start = int(Path("/proc/self/maps").read_text().split("-", 1)[0], 16)
    with open("/proc/self/mem", "rb", buffering=0) as stream:
        stream.seek(start)
        return start, stream.read(16).hex()


def arena_probe(probe: str, held: Path) -> tuple[tuple[str, str], str | None]:
    """An attempt on the arena's (this test process's) /proc, and what it would get there."""
    pid = os.getpid()
    if probe == "mem":
        address, first_bytes = first_mapping()
        return ("mem", f"{pid}:{address}"), first_bytes
    if probe == "scan":  # found among every process's command line
        return ("scan", ""), Path("/proc/self/cmdline").read_bytes().decode("latin-1")
    if probe == "fd":  # the listing alone: which descriptors it has open
        return ("list", f"/proc/{pid}/fd"), None
    if probe == "fd-links":  # and what they are
        return ("fd", str(pid)), str(held)
    mine = {
        "cmdline": Path("/proc/self/cmdline").read_bytes().decode("latin-1"),
        "status": f"Pid:\t{pid}\n",
        "environ": Path("/proc/self/environ").read_bytes().decode("latin-1").split("\0")[0] or None,
        "maps": Path("/proc/self/maps").read_text().splitlines()[0],
    }
    return ("read", f"/proc/{pid}/{probe}"), mine[probe]


@pytest.mark.parametrize("probe", ["scan", "cmdline", "status", "environ", "fd", "fd-links", "maps", "mem"])
@LEVELS
def test_a_bot_cannot_read_the_arenas_proc(bots: Bots, output_dir: Path, level: SandboxLevel, probe: str) -> None:
    """The arena's command line (found in a scan of /proc, or read at its pid), status, environment, descriptors
    (their listing, and what they are: here a file it holds open in its output folder), memory map and memory."""
    need(level, "another process's /proc", landlock=1, namespaces=True)
    held = output_dir / "results.sqlite"
    with held.open("rb"):
        attempt, secret = arena_probe(probe, held)
        results = run_probes(bots, level, {probe: attempt})
    assert_attack(level, results, {probe: secret})


@pytest.mark.parametrize("probe", ["cmdline", "status"])
@LEVELS
def test_a_bot_cannot_read_another_bots_proc(bots: Bots, other_bot_dir: Path, level: SandboxLevel, probe: str) -> None:
    need(level, "another process's /proc", landlock=1, namespaces=True)
    victim = idle_bot(bots, level, other_bot_dir)
    secrets = {"cmdline": str(other_bot_dir / "bot.py"), "status": f"Pid:\t{victim.pid}\n"}
    results = run_probes(bots, level, {probe: ("read", f"/proc/{victim.pid}/{probe}")})
    assert_attack(level, results, {probe: secrets[probe]})


# --- signals


def signal_attack(bots: Bots, level: SandboxLevel, targets: dict[str, int], signals: str) -> dict[str, Outcome]:
    """Send each signal to each target; the bot's SIGKILL of its own child must work (the control)."""
    results = report(start(bots, level, SIGNALLER, {"TARGETS": json.dumps(targets), "SIGNALS": signals}))
    assert results["own child"]["ok"] and results["own child killed"], (
        f"control: own child not killed: {brief(results)}"
    )
    return {name: outcome for name, outcome in results.items() if not name.startswith("own child")}


def assert_signals_refused(level: SandboxLevel, sent: dict[str, Outcome]) -> None:
    if level is SandboxLevel.NONE:
        assert all(outcome["ok"] for outcome in sent.values()), f"control: at none every signal goes: {brief(sent)}"
    else:
        delivered = sorted(name for name, outcome in sent.items() if outcome["ok"])
        assert not delivered, f"at {level.value} the bot sent {delivered}: {brief(sent)}"
        assert {outcome["error"] for outcome in sent.values()} <= {"EPERM", "ESRCH"}, brief(sent)


@LEVELS
def test_a_bot_cannot_stop_or_kill_another_bot(bots: Bots, other_bot_dir: Path, level: SandboxLevel) -> None:
    need(level, "signalling another bot", landlock=6, namespaces=True)
    victim = idle_bot(bots, level, other_bot_dir)
    sent = signal_attack(bots, level, {"the other bot": victim.pid}, "SIGSTOP SIGTERM SIGKILL")
    assert_signals_refused(level, sent)
    if level is SandboxLevel.NONE:
        poll_until(lambda: victim.returncode() is not None, what="the control's victim to die")
    else:
        assert victim.returncode() is None, "the other bot died"
        assert_untouched(victim.pid)


@LEVELS
def test_a_bot_cannot_stop_or_kill_a_process_of_the_arenas_user(
    bots: Bots, helper: subprocess.Popen[bytes], level: SandboxLevel
) -> None:
    """A harmless process in the arena's place (the arena's user, not a bot) as the victim."""
    need(level, "signalling the arena", landlock=6, namespaces=True)
    sent = signal_attack(bots, level, {"the arena's process": helper.pid}, "SIGSTOP SIGTERM SIGKILL")
    assert_signals_refused(level, sent)
    if level is SandboxLevel.NONE:
        poll_until(lambda: helper.poll() is not None, what="the control's victim to die")
    else:
        assert helper.poll() is None, "the arena's process died"
        assert_untouched(helper.pid)


@LEVELS
def test_a_bot_cannot_signal_the_arena_itself(bots: Bots, level: SandboxLevel) -> None:
    """The test process, the bot's own arena: only harmless signals (0, SIGCONT), whose success kill() tells."""
    need(level, "signalling the arena", landlock=6, namespaces=True)
    sent = signal_attack(bots, level, {"the arena": os.getpid()}, "0 SIGCONT")
    assert_signals_refused(level, sent)


@pytest.mark.parametrize("level", [SandboxLevel.STRICT, SandboxLevel.BASIC], ids=lambda level: level.value)
def test_kill_minus_one_reaches_only_the_bots_own_tree(
    bots: Bots, other_bot_dir: Path, helper: subprocess.Popen[bytes], level: SandboxLevel
) -> None:
    """kill(-1, SIGKILL) kills the bot's own child and nothing else. The bot sends it only once kill(pid, 0) fails
    on the arena, its parent and the victims: where that succeeds, kill(-1) would kill the test runner."""
    need(level, "signalling outside its tree", landlock=6, namespaces=True)
    victim = idle_bot(bots, level, other_bot_dir)
    outside = {"the arena": os.getpid(), "its parent": os.getppid(), "a helper": helper.pid, "a bot": victim.pid}
    result = report(start(bots, level, KILL_EVERYONE, {"TARGETS": json.dumps(outside)}))
    assert not result["reachable"], f"at {level.value} the bot can signal {result['reachable']}: kill(-1) not tried"
    assert result["sent"]["ok"] and result["child_killed"], (
        f"control: kill(-1) did not kill its own child: {brief(result)}"
    )
    assert victim.returncode() is None and helper.poll() is None
    assert_untouched(victim.pid)
    assert_untouched(helper.pid)


# --- two bots talking


CHANNELS = {
    "abstract": ("an abstract unix socket", 6),
    "abstract-dgram": ("an abstract unix datagram socket", 6),
    "workdir": ("a unix socket in a bot's workdir", 1),
    "tmp": ("a unix socket in /tmp", 1),
    "tcp": ("TCP on loopback", 0),
    "udp": ("UDP on loopback", 0),
}


@pytest.fixture
def channel_name() -> Iterator[str]:
    """A name for the channel; a socket a control left in /tmp under it is removed."""
    name = f"arena-test-{token()}"
    yield name
    with contextlib.suppress(FileNotFoundError):
        os.unlink(f"/tmp/{name}.sock")


@pytest.mark.parametrize("channel", list(CHANNELS))
@LEVELS
def test_two_bots_cannot_talk(
    bots: Bots, other_bot_dir: Path, channel_name: str, level: SandboxLevel, channel: str
) -> None:
    """One bot listens and serves a secret; the other, told its address, connects and reads."""
    what, landlock = CHANNELS[channel]
    need(level, f"reaching another bot over {what}", landlock=landlock, namespaces=True)
    secret = token()
    sender = start(bots, level, SENDER, {"CHANNEL": channel, "NAME": channel_name, "SECRET": secret})
    listening = report(sender)
    if not listening["bound"]:
        assert level is not SandboxLevel.NONE, f"control: at none the sender should listen: {listening}"
        return
    env = {"CHANNEL": channel, "ADDRESS": json.dumps(listening["address"])}
    got = report(start(bots, level, RECEIVER, env, other_bot_dir))["got"]
    if level is SandboxLevel.NONE:
        assert got == {"ok": True, "value": secret}, f"control: at none the receiver should get the secret: {got}"
    else:
        assert not leaked(got, secret), f"at {level.value} the receiver got the secret over {what}"

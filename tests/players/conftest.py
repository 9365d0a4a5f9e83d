"""Bots as real subprocesses: a template for misbehaving bots, and a check that none survives."""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.players.host import BotHost
from arena.players.values import BotCommand, Timing
from arena.sandbox import Limits, SandboxLevel, resolve_level
from tests.conftest import under_ci

ROOT = Path(__file__).resolve().parents[2]
LEVEL, WHY_NOT_STRICT = resolve_level(SandboxLevel.STRICT)


@pytest.fixture(autouse=True, scope="session")
def _strict_under_ci() -> None:
    """The players' tests run their bots at strict where it works, else at basic; under CI strict must work."""
    if LEVEL is not SandboxLevel.STRICT and under_ci():
        pytest.fail(f"strict is not available here, so the players' tests would run at {LEVEL.value}: {WHY_NOT_STRICT}")


ZMQ_PRELUDE = """
import json, os, sys, time
import zmq

SOCKET = zmq.{socket}
context = zmq.Context()
sock = context.socket(SOCKET)
sock.linger = 0
sock.connect(os.environ["ARENA_ENDPOINT"])

def send_raw(payload):
    if SOCKET == zmq.DEALER:
        sock.send_multipart([b"", payload])
    else:
        sock.send(payload)

def send(obj):
    send_raw(json.dumps(obj).encode())

def recv():
    return json.loads(sock.recv_multipart()[-1])
"""

STDIO_PRELUDE = """
import json, os, sys, time

def send(obj):
    sys.stdout.write(json.dumps(obj) + "\\n")
    sys.stdout.flush()

def recv():
    line = sys.stdin.readline()
    return json.loads(line) if line else None
"""

LOOP = """
{before_hello}
send({{"type": "hello", "protocol": 1, "name": "test-bot"{token}}})
acts = 0
while (message := recv()) is not None:
    if message["type"] == "act":
        acts += 1
{on_act}
        send({{"type": "action", "index": 0}})
    else:
        send({{"type": "ok"}})
        if message["type"] == "shutdown":
            break
"""


def bot_code(prelude: str, *, on_act: str = "", before_hello: str = "", token: bool = True) -> str:
    """A well-behaved bot but for `before_hello` (run before its hello) and `on_act` (run on each act)."""
    return prelude + LOOP.format(
        before_hello=textwrap.dedent(before_hello),
        on_act=textwrap.indent(textwrap.dedent(on_act), " " * 8),
        token=', "token": os.environ["ARENA_TOKEN"]' if token else "",
    )


@pytest.fixture
def make_bot(tmp_path: Path, marker: str):
    """make_bot(on_act=..., before_hello=..., socket="REQ") -> BotCommand of a raw pyzmq bot."""

    def make(name: str = "bot", *, on_act: str = "", before_hello: str = "", socket: str = "REQ") -> BotCommand:
        directory = tmp_path / name
        directory.mkdir(exist_ok=True)
        code = bot_code(ZMQ_PRELUDE.format(socket=socket), on_act=on_act, before_hello=before_hello)
        (directory / "bot.py").write_text(code)
        os.chmod(directory, 0o755)
        os.chmod(directory / "bot.py", 0o644)
        return BotCommand(name, (sys.executable, str(directory / "bot.py"), marker), "zmq", directory)

    return make


@pytest.fixture
def hosts() -> Iterator[list[BotHost]]:
    """Hosts made in a test, killed after it whatever happens."""
    made: list[BotHost] = []
    yield made
    for host in made:
        host.kill()


@pytest.fixture
def host_for(hosts: list[BotHost]):
    def make(
        bot: BotCommand,
        move_ms: int = 2000,
        startup_ms: int = 5000,
        limits: Limits = Limits(),
        wall_factor: int = 1,  # a bot that sleeps times out after move_ms: a test of a late bot is quick
        ponder: bool = False,
    ) -> BotHost:
        timing = Timing(move_ms=move_ms, startup_ms=startup_ms, wall_factor=wall_factor, ponder=ponder)
        host = BotHost(bot, timing, LEVEL, limits)
        hosts.append(host)
        return host

    return make


def example_bot(directory: Path, marker: str, protocol: str = "zmq") -> BotCommand:
    """The example SDK bot, started from its own directory."""
    script = ROOT / "examples" / "random_bot.py"
    return BotCommand(f"example-{protocol}", (sys.executable, str(script), marker), protocol, script.parent)

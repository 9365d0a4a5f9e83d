"""Bots over their standard streams: the same messages as JSON lines, the same faults."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from arena.engine import FaultReason
from arena.players import RandomPlayer
from arena.players.values import BotCommand
from tests.players.conftest import STDIO_PRELUDE, bot_code
from tests.players.test_remote import only_fault, play


def stdio_bot(
    tmp_path: Path, marker: str, *, on_act: str = "", before_hello: str = "", token: bool = True
) -> BotCommand:
    code = bot_code(STDIO_PRELUDE, on_act=on_act, before_hello=before_hello, token=token)
    directory = tmp_path / "stdio-bot"
    directory.mkdir(mode=0o755)
    (directory / "bot.py").write_text(code)
    return BotCommand("stdio", (sys.executable, str(directory / "bot.py"), marker), "stdio", directory)


@pytest.mark.parametrize("token", [True, False], ids=["with-token", "token-omitted"])
def test_a_stdio_bot_plays_and_may_omit_its_token(tmp_path: Path, marker: str, host_for, token: bool) -> None:
    host = host_for(stdio_bot(tmp_path, marker, token=token))
    outcome = play([host, RandomPlayer(1), RandomPlayer(2)])
    assert outcome.faults == ()
    assert host.shutdown() is None


@pytest.mark.parametrize(
    ("before_hello", "on_act", "reason", "detail"),
    [
        ("os.environ['ARENA_TOKEN'] = 'nope'", "", FaultReason.HANDSHAKE, "wrong token"),
        (
            "",
            "sys.stdout.write('x' * 70000 + '\\n'); sys.stdout.flush(); continue",
            FaultReason.MALFORMED,
            "a line over 64 KiB",
        ),
        ("", "print('debug output on stdout'); sys.stdout.flush(); continue", FaultReason.MALFORMED, "not JSON"),
        ("", "if acts == 2: sys.exit(4)", FaultReason.CRASH, "exited with status 4"),
        ("", "time.sleep(60)", FaultReason.TIMEOUT, "no reply to act within 700 ms"),
    ],
    ids=["wrong-token", "line-over-64k", "stray-print", "crash", "hang"],
)
def test_stdio_faults(tmp_path: Path, marker: str, host_for, before_hello: str, on_act: str, reason, detail) -> None:
    host = host_for(stdio_bot(tmp_path, marker, on_act=on_act, before_hello=before_hello), move_ms=700)
    fault = only_fault(play([host, RandomPlayer(1)]))
    assert fault.reason is reason
    assert detail in fault.detail


def test_a_stdio_bot_that_never_reads_does_not_block_the_arena(tmp_path: Path, marker: str, host_for) -> None:
    host = host_for(stdio_bot(tmp_path, marker, before_hello="time.sleep(60)"), startup_ms=800)
    fault = only_fault(play([host, RandomPlayer(1)]))
    assert fault.reason is FaultReason.HANDSHAKE


SDK_PRINTER = """
import sys
from arena.sdk import run

def act(message):
    print("thinking about", message["match_id"])  # to stdout, as beginners do
    return 0

run(act)
"""


@pytest.mark.parametrize("protocol", ["stdio", "zmq"])
def test_an_sdk_bot_that_prints_to_stdout_plays_on_and_its_prints_reach_its_log(
    tmp_path: Path, marker: str, host_for, protocol: str
) -> None:
    directory = tmp_path / "printer"
    directory.mkdir(mode=0o755)
    (directory / "bot.py").write_text(SDK_PRINTER)
    host = host_for(BotCommand("printer", (sys.executable, str(directory / "bot.py"), marker), protocol, directory))
    outcome = play([host, RandomPlayer(1)], match_id="printed")
    assert outcome.faults == ()
    assert b"thinking about printed" in host.take_log()

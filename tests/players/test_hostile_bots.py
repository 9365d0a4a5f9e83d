"""Hostile and broken bots, over both transports, in real processes: every behaviour is that bot's fault,
named as PROTOCOL.md names it, and the match goes on. (Sandbox `none`: the sandbox has tests of its own.)"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.engine import FaultReason
from arena.players import RandomPlayer
from arena.players.host import START_ATTEMPTS, STDIO_FLUSH_HINT, STDIO_HINT, BotHost
from arena.players.values import BotCommand, Timing
from arena.sandbox import SandboxLevel
from tests.players.conftest import STDIO_PRELUDE, ZMQ_PRELUDE
from tests.players.test_remote import only_fault, play

STDIO_SEND_RAW = """
def send_raw(payload):
    sys.stdout.buffer.write(payload + b"\\n")
    sys.stdout.flush()
"""
BOT = """
{before_hello}
send({{"type": "hello", "protocol": {version}, "name": "hostile", "token": os.environ["ARENA_TOKEN"]}})
acts = 0
while (message := recv()) is not None:
    kind = message["type"]
    if kind == "act":
        acts += 1
{handle}
    send({{"type": "action", "index": 0}} if kind == "act" else {{"type": "ok"}})
    if kind == "shutdown":
        break
"""
DEEP = "b'{\"type\": \"action\", \"action\": ' + b'[' * 30000 + b']' * 30000 + b'}'"

MakeHost = Callable[..., BotHost]


@pytest.fixture
def hostile(tmp_path: Path, marker: str, hosts: list[BotHost]) -> MakeHost:
    """hostile(protocol, handle=..., before_hello=...) -> a BotHost of a bot that runs `handle` on every message
    (`kind`, `message`, `acts` known; `continue` skips the proper reply)."""

    def make(
        protocol: str,
        handle: str = "",
        before_hello: str = "",
        version: str = "1",
        name: str = "hostile",
        move_ms: int = 1500,
        prelude: str | None = None,
    ) -> BotHost:
        directory = tmp_path / name
        directory.mkdir(exist_ok=True)
        if prelude is None:
            prelude = ZMQ_PRELUDE.format(socket="REQ") if protocol == "zmq" else STDIO_PRELUDE + STDIO_SEND_RAW
        code = prelude + BOT.format(
            before_hello=textwrap.dedent(before_hello),
            handle=textwrap.indent(textwrap.dedent(handle), " " * 4),
            version=version,
        )
        (directory / "bot.py").write_text(code)
        command = BotCommand(name, (sys.executable, str(directory / "bot.py"), marker), protocol, directory)
        host = BotHost(command, Timing(move_ms=move_ms, startup_ms=8000, wall_factor=1), SandboxLevel.NONE)
        hosts.append(host)
        return host

    return make


BOTH = pytest.mark.parametrize("protocol", ["zmq", "stdio"])


@BOTH
def test_a_reply_nested_30000_deep_is_an_illegal_action_and_the_match_goes_on(hostile: MakeHost, protocol: str) -> None:
    bad = hostile(protocol, f"if kind == 'act':\n    send_raw({DEEP})\n    continue")
    outcome = play([bad, RandomPlayer(1), RandomPlayer(2)])
    fault = only_fault(outcome)
    assert fault.reason is FaultReason.ILLEGAL
    assert "an answer is a JSON object, not an array" in fault.detail
    assert outcome.result.ranking[-1] == (0,) and len(outcome.faults) == 1
    assert not bad.running


@BOTH
@pytest.mark.parametrize(("size", "accepted"), [(65536, True), (65537, False)])
def test_a_reply_of_64_kib_is_taken_and_one_byte_more_is_malformed(
    hostile: MakeHost, protocol: str, size: int, accepted: bool
) -> None:
    head, tail = b'{"type": "action", "index": 0, "pad": "', b'"}'
    payload = head + b"x" * (size - len(head) - len(tail)) + tail
    assert len(payload) == size
    bot = hostile(protocol, f"if kind == 'act' and acts == 1:\n    send_raw({payload!r})\n    continue")
    outcome = play([bot, RandomPlayer(1)])
    if accepted:
        assert outcome.faults == ()
    else:
        fault = only_fault(outcome)
        assert fault.reason is FaultReason.MALFORMED and "over 64 KiB" in fault.detail


@BOTH
@pytest.mark.parametrize(
    ("handle", "reason", "detail"),
    [
        ("send({'type': 'action', 'index': 0})\ncontinue", FaultReason.MALFORMED, "has type 'action', not \"ok\""),
        ('send_raw(b\'{"type": "ok"\')\ncontinue', FaultReason.MALFORMED, "not JSON"),
        ("time.sleep(3)", FaultReason.TIMEOUT, "within 1500 ms"),
    ],
    ids=["wrong-type", "not-json", "late"],
)
@pytest.mark.parametrize("when", ["match_start", "match_end"])
def test_a_bad_reply_to_match_start_or_match_end_is_a_fault(
    hostile: MakeHost, protocol: str, when: str, handle: str, reason: FaultReason, detail: str
) -> None:
    clean = play([hostile(protocol, name="clean"), RandomPlayer(1)], seed=5)
    bad = hostile(protocol, f"if kind == {when!r}:\n" + textwrap.indent(handle, "    "))
    outcome = play([bad, RandomPlayer(1)], seed=5)
    fault = only_fault(outcome)
    assert fault.reason is reason and detail in fault.detail, fault.detail
    assert not bad.running
    if when == "match_end":
        assert fault.after_match
        assert outcome.result == clean.result  # the result stands
    else:
        assert not fault.after_match
        assert outcome.result.winners == (1,) and outcome.result.ranking[-1] == (0,)


@BOTH
def test_a_bad_reply_to_welcome_or_shutdown_is_a_fault(hostile: MakeHost, protocol: str) -> None:
    rude = hostile(protocol, "if kind == 'welcome':\n    send({'type': 'welcome'})\n    continue", name="rude")
    fault = only_fault(play([rude, RandomPlayer(1)]))
    assert fault.reason is FaultReason.MALFORMED and "the reply to welcome" in fault.detail
    assert rude.stats.failed_starts == 0  # it said hello: a start that failed later counts as a start
    stubborn = hostile(protocol, "if kind == 'shutdown':\n    time.sleep(30)", name="stubborn")
    stubborn.ensure_running()
    late = stubborn.shutdown()
    assert late is not None and late.reason is FaultReason.TIMEOUT
    assert not stubborn.running


@BOTH
@pytest.mark.parametrize("version", ["True", "1.0", '"1"', "2"])
def test_a_hello_of_another_protocol_is_a_handshake_fault(hostile: MakeHost, protocol: str, version: str) -> None:
    fault = only_fault(play([hostile(protocol, version=version), RandomPlayer(1)]))
    assert fault.reason is FaultReason.HANDSHAKE and "hello says protocol" in fault.detail


@BOTH
def test_a_bot_that_fails_to_start_three_times_is_not_started_again(hostile: MakeHost, protocol: str) -> None:
    host = hostile(protocol, before_hello="sys.exit(3)")
    faults = [only_fault(play([host, RandomPlayer(1)], match_id=f"m{n}")) for n in range(5)]
    assert host.stats.starts == START_ATTEMPTS
    assert [f.detail for f in faults[:3]] == ["exited with status 3 before its hello"] * 3
    for fault in faults[3:]:
        assert fault.reason is FaultReason.CRASH
        last = "exited with status 3 before its hello"
        assert fault.detail == f"not restarted: it failed to start 3 times in a row; last: {last}"


def test_failed_starts_count_only_in_a_row(hostile: MakeHost) -> None:
    before_hello = """
    count = int(open("starts").read()) if os.path.exists("starts") else 0
    open("starts", "w").write(str(count + 1))
    if count % 3 < 2:
        sys.exit(3)
    """
    host = hostile("zmq", before_hello=before_hello, handle="if kind == 'act':\n    os._exit(1)")
    outcomes = [play([host, RandomPlayer(1)], match_id=f"m{n}") for n in range(6)]
    details = [only_fault(outcome).detail for outcome in outcomes]
    assert details == ["exited with status 3 before its hello"] * 2 + ["exited with status 1"] + [
        "exited with status 3 before its hello"
    ] * 2 + ["exited with status 1"]
    assert host.stats.starts == 6


def test_a_zmq_bot_that_says_hello_on_its_stdout_is_told_to_use_stdio(hostile: MakeHost) -> None:
    host = hostile("zmq", prelude=STDIO_PRELUDE)  # a stdio bot, configured as a ZeroMQ one
    fault = only_fault(play([host, RandomPlayer(1)]))
    assert fault.reason in (FaultReason.CRASH, FaultReason.HANDSHAKE)
    assert fault.detail.endswith(STDIO_HINT)
    assert host.stats.hello_on_stdout


def test_a_stdio_bot_that_never_flushes_its_hello_is_told_to_flush(hostile: MakeHost) -> None:
    unflushed = (  # its hello waits in the buffer for good, whatever PYTHONUNBUFFERED says
        STDIO_PRELUDE.replace("    sys.stdout.flush()\n", "")
        + "sys.stdout = open(sys.stdout.fileno(), 'w', buffering=8192, closefd=False)\n"
    )
    host = hostile("stdio", prelude=unflushed)
    host.timing = Timing(move_ms=1500, startup_ms=1500, wall_factor=1)
    fault = only_fault(play([host, RandomPlayer(1)]))
    assert fault.reason is FaultReason.HANDSHAKE
    assert fault.detail.startswith("no hello within 1500 ms") and fault.detail.endswith(STDIO_FLUSH_HINT)


@pytest.mark.parametrize("players", [2, 3])
def test_seats_that_all_fail_to_start_are_each_a_fault_and_nothing_more(hostile: MakeHost, players: int) -> None:
    """In a 2-player match, seat 0's fault ends the match before seat 1 starts; seat 1's own start fault then
    comes after the match, and its host, with no process, must not be asked for match_end."""
    hosts = [hostile("zmq", before_hello="sys.exit(3)", name=f"dead{n}") for n in range(players)]
    outcome = play(hosts)
    assert [(f.seat, f.reason) for f in outcome.faults] == [(n, FaultReason.CRASH) for n in range(players)]
    assert [f.after_match for f in outcome.faults] == [False] * (players - 1) + [True]


def test_what_a_stdio_bot_writes_after_its_reply_is_not_taken_as_its_next_reply(hostile: MakeHost) -> None:
    host = hostile(
        "stdio",
        handle="""
        if kind == "act":  # the reply, then the start of a second one, in one write
            sys.stdout.buffer.write(b'{"type": "action", "index": 0}\\n{"type": "action", "ind')
            sys.stdout.flush()
            continue
        """,
    )
    outcome = play([host, RandomPlayer(1)])
    assert outcome.faults == ()
    assert host.stats.replies > 3


def test_a_second_zmq_reply_to_one_message_is_dropped_before_the_next_message(tmp_path: Path) -> None:
    import zmq

    from arena.players.channels import ZmqChannel

    context = zmq.Context()
    channel = ZmqChannel(context, tmp_path)
    bot = context.socket(zmq.DEALER)
    bot.linger = 0
    bot.connect(channel.endpoint)
    try:
        bot.send_multipart([b"", b'{"type": "hello"}'])
        assert channel.socket.poll(5000)
        [(identity, hello)] = channel.arrivals([channel.socket])
        assert hello == b'{"type": "hello"}'
        channel.peer = identity
        assert channel.send(b'{"type": "act"}')
        assert bot.poll(5000)
        bot.recv_multipart()
        bot.send_multipart([b"", b'{"type": "action", "index": 0}'])
        bot.send_multipart([b"", b'{"type": "action", "index": 9}'])
        assert channel.socket.poll(5000)
        assert channel.arrivals([channel.socket]) == [(identity, b'{"type": "action", "index": 0}')]
        assert channel.socket.poll(5000)  # the second reply has arrived
        assert channel.discard_stale() == 1
        assert channel.discard_stale() == 0
        assert not channel.socket.poll(0)
    finally:
        bot.close()
        channel.close()
        context.term()

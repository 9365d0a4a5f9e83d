"""Bots in subprocesses over the wire: every fault a bot can commit, and the matches around it."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from pathlib import Path

import pytest

from arena.engine import RULESETS, FaultReason, Match
from arena.players import RandomPlayer
from arena.players.remote import RemotePlayer
from arena.runner import MatchOutcome, play_match
from arena.sandbox import Limits, SandboxLevel
from tests.players.conftest import LEVEL, example_bot


def play(hosts_or_players: list, seed: int = 3, match_id: str = "t-1") -> MatchOutcome:
    players = [RemotePlayer(p) if hasattr(p, "ensure_running") else p for p in hosts_or_players]
    names = [f"seat{s}" for s in range(len(players))]
    return play_match(Match(RULESETS["2019"], names, seed), players, match_id)


def only_fault(outcome: MatchOutcome, seat: int = 0):
    faults = [f for f in outcome.faults if f.seat == seat]
    assert len(faults) == 1, outcome.faults
    return faults[0]


@pytest.mark.parametrize("kind", ["REQ", "DEALER"])
def test_req_and_dealer_bots_play_whole_matches_and_keep_their_process(make_bot, host_for, kind: str) -> None:
    host = host_for(make_bot(socket=kind))
    for number in range(2):
        outcome = play([host, RandomPlayer(1), RandomPlayer(2)], seed=number, match_id=f"m{number}")
        assert outcome.faults == ()
        assert outcome.result.ranking
    assert host.stats.starts == 1
    assert host.shutdown() is None
    assert not host.running


def test_the_sdk_bot_plays_over_zmq_and_stdio(tmp_path: Path, marker: str, host_for) -> None:
    zmq_host = host_for(example_bot(tmp_path, marker, "zmq"))
    stdio_host = host_for(example_bot(tmp_path, marker, "stdio"))
    outcome = play([zmq_host, stdio_host, RandomPlayer(5)])
    assert outcome.faults == ()
    assert zmq_host.shutdown() is None and stdio_host.shutdown() is None


@pytest.mark.parametrize(
    ("before_hello", "on_act", "reason", "detail"),
    [
        ("sys.exit(3)", "", FaultReason.CRASH, "exited with status 3 before its hello"),
        ("time.sleep(60)", "", FaultReason.HANDSHAKE, "no hello within 1500 ms"),
        ("", "if acts == 2: os._exit(1)", FaultReason.CRASH, "exited with status 1"),
        ("", "if acts == 2: sock.close(); time.sleep(0.5); os._exit(1)", FaultReason.CRASH, "exited with status 1"),
        ("", "if acts == 2: time.sleep(60)", FaultReason.TIMEOUT, "no reply to act within 700 ms"),
        ("", "while acts == 2: pass", FaultReason.TIMEOUT, "no reply to act within 700 ms"),
        ("", "send_raw(b'not json at all'); continue", FaultReason.MALFORMED, "not JSON"),
        ("", "send_raw(b'\\xff\\xfe'); continue", FaultReason.MALFORMED, "not UTF-8"),
        ("", "send([1, 2]); continue", FaultReason.MALFORMED, "a reply is a JSON object, not an array"),
        (
            "",
            "send({'type': 'ok'}); continue",
            FaultReason.MALFORMED,
            'has type \'ok\', not "action": \'{"type": "ok"}\'',
        ),
        ("", "send({'type': 'action'}); continue", FaultReason.MALFORMED, 'not neither: {"type": "action"}'),
        ("", "send({'type': 'action', 'index': 0, 'action': {}}); continue", FaultReason.MALFORMED, "not both"),
        ("", "send({'type': 'action', 'index': '0'}); continue", FaultReason.MALFORMED, '"index" must be an integer'),
        ("", "send({'type': 'action', 'index': 999}); continue", FaultReason.ILLEGAL, "index 999 is outside legal"),
        (
            "",
            "send({'type': 'action', 'action': {'card': 'guard', 'target': 1, 'guess': 'guard'}}); continue",
            FaultReason.ILLEGAL,
            '{"card": "guard", "target": 1, "guess": "guard"}: ',
        ),
        ("", "send_raw(b' ' * 70000 + b'{}'); continue", FaultReason.MALFORMED, "over 64 KiB"),
    ],
    ids=[
        "exits-at-startup",
        "never-says-hello",
        "crashes-mid-match",
        "hangs-up-then-exits-slowly",
        "hangs",
        "spins",
        "not-json",
        "not-utf8",
        "not-an-object",
        "wrong-type",
        "neither-action-nor-index",
        "both-action-and-index",
        "index-not-integer",
        "index-outside-legal",
        "illegal-action",
        "over-64k",
    ],
)
def test_each_fault_is_named_and_the_match_goes_on(
    make_bot, host_for, before_hello: str, on_act: str, reason: FaultReason, detail: str
) -> None:
    # Only the budget a case is about is short: a slow machine cannot turn the others into a timeout.
    move_ms = 700 if reason is FaultReason.TIMEOUT else 20_000
    startup_ms = 1500 if reason is FaultReason.HANDSHAKE else 20_000
    bad = host_for(make_bot("bad", before_hello=before_hello, on_act=on_act), move_ms=move_ms, startup_ms=startup_ms)
    good = host_for(make_bot("good"))
    for number in (1, 2):
        outcome = play([bad, good, RandomPlayer(7)], match_id=f"t-{number}")
        fault = only_fault(outcome, 0)
        assert fault.reason is reason
        assert detail in fault.detail
        assert outcome.result.ranking[-1] == (0,)
        assert [f for f in outcome.faults if f.seat != 0] == []
        assert not bad.running
        assert good.running
        # the faulty bot got a new process for this match; the good one kept its own
        assert bad.stats.starts == number
        assert good.stats.starts == 1


def test_an_illegal_action_says_which_rule_it_breaks(make_bot, host_for) -> None:
    on_act = """
    guard = [a for a in message["legal"] if a.get("card") == "guard" and "target" in a]
    if guard:
        send({"type": "action", "action": dict(guard[0], guess="guard")})
        continue
    """
    bad = host_for(make_bot("bad", on_act=on_act))
    outcomes = [play([bad, RandomPlayer(1)], seed=seed, match_id=f"m{seed}") for seed in range(6)]
    faults = [f for outcome in outcomes for f in outcome.faults]
    assert faults, "the bot never held a guard in six matches"
    assert faults[0].reason is FaultReason.ILLEGAL
    assert '"guess": "guard"}: a guard may not name guard' in faults[0].detail
    assert bad.stats.starts == len(faults)  # one process per match in which it faulted


def test_the_stderr_tail_is_kept_with_the_fault(make_bot, host_for) -> None:
    on_act = "print('thinking hard about', message['hand'], file=sys.stderr, flush=True); raise ValueError('oops')"
    bad = host_for(make_bot("bad", on_act=on_act))
    fault = only_fault(play([bad, RandomPlayer(1)]))
    assert fault.reason is FaultReason.CRASH
    assert "thinking hard about" in fault.stderr_tail
    assert "ValueError: oops" in fault.stderr_tail


def test_a_flood_of_stderr_is_not_a_fault(make_bot, host_for) -> None:
    on_act = "if acts == 1:\n    sys.stderr.buffer.write(b'x' * (100 * 1024 * 1024)); sys.stderr.flush()"
    noisy = host_for(make_bot("noisy", on_act=on_act), move_ms=20000)
    outcome = play([noisy, RandomPlayer(1)])
    assert outcome.faults == ()


def test_memory_past_the_limit_is_a_limit_fault(make_bot, host_for) -> None:
    on_act = "hog = bytearray(400 * 1024 * 1024)"
    bad = host_for(make_bot("bad", on_act=on_act), limits=Limits(memory_mb=200))
    fault = only_fault(play([bad, RandomPlayer(1)]))
    assert fault.reason is FaultReason.LIMIT
    assert "memory" in fault.detail


def test_ten_thousand_processes_are_not_started(make_bot, host_for, tmp_path: Path) -> None:
    on_act = """
    if acts == 1:
        started = 0
        for _ in range(10000):
            try:
                if os.fork() == 0:
                    time.sleep(30)
                    os._exit(0)
                started += 1
            except OSError:
                break
        print("started", started, file=sys.stderr, flush=True)
    """
    bomb = host_for(make_bot("bomb", on_act=on_act), move_ms=10000, limits=Limits(processes=32))
    outcome = play([bomb, RandomPlayer(1)])
    # a fork that fails is an OSError the bot handles: the limit costs it no fault, its loop just stops early
    assert outcome.faults == ()
    tail = bomb._process.stderr_tail()  # type: ignore[union-attr]
    started = int(tail.split("started ")[1].split()[0])
    # With a UID of its own (a root arena) the count is the bot's alone. Without one it shares the user's count,
    # and a process of the user that ends while it forks (another test's bot) leaves it its slot: a few more.
    bound = 32 if os.geteuid() == 0 else 48
    assert 0 < started < bound, f"the process limit let {started} processes start"
    bomb.kill()


@pytest.mark.skipif(LEVEL is not SandboxLevel.STRICT, reason="network isolation needs the strict sandbox")
def test_a_bot_cannot_reach_a_listener_on_loopback(make_bot, host_for) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    on_act = f"""
    if acts == 1:
        import socket
        try:
            socket.create_connection(("127.0.0.1", {port}), timeout=1).sendall(b"stolen")
            print("CONNECTED", file=sys.stderr, flush=True)
        except OSError as error:
            print("refused", error, file=sys.stderr, flush=True)
    """
    spy = host_for(make_bot("spy", on_act=on_act))
    accepted: list[object] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            accepted.append(listener.accept())

    thread = threading.Thread(target=accept)
    thread.start()
    outcome = play([spy, RandomPlayer(1)])
    thread.join(5)
    listener.close()
    assert outcome.faults == ()
    assert accepted == []


@pytest.mark.skipif(LEVEL is not SandboxLevel.STRICT, reason="file isolation needs the strict sandbox")
def test_a_bot_cannot_read_or_write_outside_its_directory(make_bot, host_for, tmp_path: Path) -> None:
    output = tmp_path / "results"
    output.mkdir()
    (output / "standings.txt").write_text("secret standings")
    other = make_bot("other")
    on_act = f"""
    if acts == 1:
        for path in ({str(output / "standings.txt")!r}, {str(other.directory / "bot.py")!r}):
            try:
                print("READ", open(path).read()[:20], file=sys.stderr, flush=True)
            except OSError as error:
                print("cannot read", error, file=sys.stderr, flush=True)
        for path in ({str(output / "planted.txt")!r}, {str(other.directory / "planted.txt")!r}):
            try:
                open(path, "w").write("x")
            except OSError as error:
                print("cannot write", error, file=sys.stderr, flush=True)
    """
    thief = host_for(make_bot("thief", on_act=on_act))
    outcome = play([thief, host_for(other), RandomPlayer(1)])
    assert outcome.faults == ()
    assert not (output / "planted.txt").exists()
    assert not (other.directory / "planted.txt").exists()
    assert (output / "standings.txt").read_text() == "secret standings"


def test_a_daemonized_grandchild_does_not_survive(make_bot, host_for) -> None:
    on_act = """
    if acts == 1 and os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(60)
        os._exit(0)
    """
    sneaky = host_for(make_bot("sneaky", on_act=on_act))
    outcome = play([sneaky, RandomPlayer(1)])
    assert outcome.faults == ()
    assert sneaky.shutdown() is None
    # the marker fixture checks that the sleeping grandchild is gone


def test_a_bot_with_another_token_fails_its_handshake(make_bot, host_for) -> None:
    impostor = make_bot("impostor", before_hello="os.environ['ARENA_TOKEN'] = 'f' * 32  # someone else's token")
    host = host_for(impostor)
    fault = only_fault(play([host, RandomPlayer(1)]))
    assert fault.reason is FaultReason.HANDSHAKE
    assert "wrong token" in fault.detail


def test_a_message_from_another_connection_on_the_bots_endpoint_is_not_taken_as_its_reply(make_bot, host_for) -> None:
    # Whoever else reaches the endpoint (a child of the bot, another bot where the sandbox does not keep it
    # out), its illegal answer arrives first and is ignored; only the bot's own connection, which said hello,
    # answers for it, and the other one hanging up is not the bot's connection dropping. The bot waits a moment
    # before its own reply so that the other one's message and its hanging up are read first.
    on_act = """
    if acts == 1:
        other = context.socket(zmq.DEALER)
        other.linger = 0
        other.connect(os.environ["ARENA_ENDPOINT"])
        other.send_multipart([b"", json.dumps({"type": "action", "index": 999}).encode()])
        time.sleep(0.3)
        other.close()  # and hangs up: that is not the bot's connection dropping
        time.sleep(0.3)
    """
    victim = host_for(make_bot("victim", on_act=on_act))
    outcome = play([victim, RandomPlayer(1)])
    assert outcome.faults == ()
    assert victim.stats.starts == 1


def test_a_process_is_replaced_between_matches_before_it_uses_its_cpu_limit(make_bot, host_for) -> None:
    on_act = "if acts == 1:\n    end = time.process_time() + 1.1\n    while time.process_time() < end: pass"
    # 1.1 s of CPU in one reply: a budget of 20 s on the clock, so a busy machine cannot make it a timeout
    busy = host_for(make_bot("busy", on_act=on_act), move_ms=20_000, limits=Limits(cpu_s=2))
    first = play([busy, RandomPlayer(1)], match_id="m1")
    second = play([busy, RandomPlayer(1)], match_id="m2")
    assert first.faults == () and second.faults == ()
    assert busy.stats.starts == 2

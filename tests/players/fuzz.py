"""Fuzzed replies through real bot processes, judged by the arena and by the oracle of PROTOCOL.md.

A replay bot is one long-lived bot process (started and greeted by a BotHost, as in a tournament) that
sends back, over its transport, whatever payloads it is handed, then an end-of-batch marker. One round
trip thus carries a whole batch: the arena side reads each payload with the transport's own channel and
judges it with the arena's own code (arena.protocol.replies), the oracle judges the same bytes, and any
difference, or any exception other than a fault, is an arena failure. Shared by tests/players/
test_fuzz_replies.py and benchmarks/fuzz_replies.py.
"""

from __future__ import annotations

import base64
import json
import random
import secrets
import sys
import textwrap
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from hypothesis import strategies as st
from zmq.backend import zmq_poll

from arena.engine import RULESETS, Decision, EventFeed, Match, Observer, View
from arena.errors import PlayerFault
from arena.players.channels import Channel, Dropped, Garbled
from arena.players.host import BotHost
from arena.players.values import BotCommand, Timing, Transport
from arena.protocol import act_message
from arena.protocol.replies import chosen_action, read_reply
from arena.sandbox import SandboxLevel
from tests.players.reply_oracle import ACCEPTED, Judgement, judge

MESSAGE_TYPES = ("act", "act", "act", "match_start", "match_end", "welcome", "shutdown")
"""What a reply answers: mostly act, whose judgement has most rules."""
BATCH_DEADLINE_S = 30.0

REPLAY_BOT = """
import base64, json, os, sys
PROTOCOL = sys.argv[1]
END = sys.argv[2].encode()
if PROTOCOL == "zmq":
    import zmq
    sock = zmq.Context().socket(zmq.DEALER)
    sock.linger = 1000
    sock.connect(os.environ["ARENA_ENDPOINT"])
    def send(payload):
        sock.send_multipart([b"", payload])
    def receive():
        return sock.recv_multipart()[-1]
else:
    out = sys.stdout.buffer
    def send(payload):
        out.write(payload + b"\\n")
    def receive():
        line = sys.stdin.buffer.readline()
        if not line:
            sys.exit(0)
        return line
hello = {"type": "hello", "protocol": 1, "name": "replay", "token": os.environ["ARENA_TOKEN"]}
send(json.dumps(hello).encode())
if PROTOCOL == "stdio":
    out.flush()
while True:
    message = json.loads(receive())
    if message["type"] == "replay":
        for payload in message["payloads"]:
            send(base64.b64decode(payload))
        send(END)
    else:
        send(b'{"type": "ok"}')
    if PROTOCOL == "stdio":
        out.flush()
    if message["type"] == "shutdown":
        break
"""


# ------------------------------------------------------------------------------------ what is offered


@dataclass(frozen=True, slots=True)
class Asked:
    """A real decision of a real match, as the act message puts it to the bot."""

    decision: Decision
    view: View
    legal: list[Any]
    """`legal` as sent on the wire."""


def real_decisions(count: int = 60, seed: int = 11) -> list[Asked]:
    """Decisions met in random matches at every table size, chancellor choices included."""
    chooser = random.Random(seed)
    found: list[Asked] = []
    chancellor = 0
    number = 0
    while len(found) < count or chancellor < count // 4:
        number += 1
        players = 2 + number % 5
        match = Match(RULESETS["2019"], [f"p{s}" for s in range(players)], seed * 1000 + number)
        feed = EventFeed(match)
        observers = [Observer(match, seat, feed) for seat in range(players)]
        while match.result is None:
            decision = match.decision
            if decision is None:
                match.deal_round()
                continue
            observer = observers[decision.seat]
            if chooser.random() < 0.1 or (decision.kind.value == "chancellor" and chancellor < count // 4):
                view = observer.view()
                message = act_message("fuzz", view, 1000, observer.take_events())
                found.append(Asked(decision, view, orjson.loads(orjson.dumps(message["legal"]))))
                chancellor += decision.kind.value == "chancellor"
            match.apply(chooser.choice(decision.legal))
    return found


# ---------------------------------------------------------------------------------------- the replies


@dataclass(frozen=True, slots=True)
class Raw:
    """A JSON token written as is (numbers the encoder would not write: 1.0, 1E2, 10**30, -0)."""

    text: str


@dataclass(frozen=True, slots=True)
class Pairs:
    """An object as its members in order, repeated keys allowed."""

    members: tuple[tuple[str, Any], ...]


def encode(value: Any, separators: tuple[str, str], ascii_only: bool) -> str:
    """JSON text of a generated value, with Raw tokens and Pairs objects, without recursion limits of its own
    making (values are generated shallow)."""
    comma, colon = separators
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, Pairs):
        inner = comma.join(
            json.dumps(key, ensure_ascii=ascii_only) + colon + encode(item, separators, ascii_only)
            for key, item in value.members
        )
        return "{" + inner + "}"
    if isinstance(value, dict):
        return encode(Pairs(tuple(value.items())), separators, ascii_only)
    if isinstance(value, list):
        return "[" + comma.join(encode(item, separators, ascii_only) for item in value) + "]"
    return json.dumps(value, ensure_ascii=ascii_only)


SEPARATORS = st.sampled_from([(",", ":"), (", ", ": "), (" ,\t", "\r: "), ("\t,", ":\t")])
RAW_NUMBERS = st.sampled_from(
    ["1.0", "0.0", "-0", "-0.0", "1E2", "1e0", "2e-1", "18446744073709551616", "-9223372036854775809", "1e400"]
).map(Raw) | st.integers(min_value=20, max_value=5000).map(lambda digits: Raw("9" * digits))
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | RAW_NUMBERS
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=10,
)
CARD_NAMES = st.sampled_from(
    ["guard", "priest", "baron", "handmaid", "prince", "chancellor", "king", "countess", "princess", "spy"]
)


@st.composite
def near_legal(draw: st.DrawFn, legal: list[Any]) -> Any:
    """An element of legal, as it is or changed a little: a field dropped, added, retyped, renamed."""
    element = dict(draw(st.sampled_from(legal)))
    change = draw(st.integers(min_value=0, max_value=9))
    keys = list(element)
    if change == 1:
        del element[draw(st.sampled_from(keys))]
    elif change == 2:
        element[draw(st.sampled_from(["extra", "card", "target", "guess", "keep", "bottom", "Card"]))] = draw(
            SCALARS | CARD_NAMES
        )
    elif change == 3:
        key = draw(st.sampled_from(keys))
        element[key] = draw(JSON_VALUES | CARD_NAMES | st.integers(min_value=-2, max_value=7))
    elif change == 4 and "target" in element:
        element["target"] = draw(st.sampled_from([Raw(f"{element['target']}.0"), True, False, str(element["target"])]))
    elif change == 5 and "bottom" in element:
        element["bottom"] = list(reversed(element["bottom"])) if draw(st.booleans()) else element["bottom"][:1]
    elif change == 6:
        key = draw(st.sampled_from(keys))
        element[key] = None
    elif change == 7:
        element = draw(st.sampled_from(legal))  # another element whole
    order = draw(st.permutations(list(element)))
    return Pairs(tuple((key, element[key]) for key in order))


@st.composite
def reply_objects(draw: st.DrawFn, legal: list[Any]) -> Any:
    """A reply object near the protocol's: a type, an action or an index or both or neither, extra fields."""
    members: list[tuple[str, Any]] = []
    kind = draw(st.sampled_from(["action", "action", "action", "ok", "Action", "hello"]) | JSON_VALUES)
    if draw(st.integers(min_value=0, max_value=9)) > 0:
        members.append(("type", kind))
    shape = draw(st.sampled_from(["index", "index", "action", "action", "both", "neither"]))
    if shape in ("index", "both"):
        index = draw(
            st.integers(min_value=-2, max_value=len(legal) + 2)
            | st.sampled_from([True, False, None, "0", Raw("0.0"), Raw("1E0"), Raw("18446744073709551616")])
            | JSON_VALUES
        )
        members.append(("index", index))
    if shape in ("action", "both"):
        members.append(("action", draw(near_legal(legal) | JSON_VALUES)))
    for key, value in draw(st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=3)).items():
        members.append((key, value))
    if draw(st.integers(min_value=0, max_value=9)) == 0 and members:
        members.append(draw(st.sampled_from(members)))  # a repeated key: the last one stands
    order = draw(st.permutations(range(len(members))))
    return Pairs(tuple(members[n] for n in order))


@st.composite
def texts(draw: st.DrawFn, legal: list[Any]) -> bytes:
    """A reply as JSON text: near the protocol's, or any JSON value at all."""
    value = draw(reply_objects(legal) | reply_objects(legal) | JSON_VALUES)
    text = encode(value, draw(SEPARATORS), draw(st.booleans()))
    padding = draw(st.sampled_from(["", "", " ", "\t", "\r"]))
    return (padding + text + padding).encode("utf-8", "surrogatepass")


ODD_TEXTS = st.sampled_from(
    [
        b"",
        b"{",
        b"}",
        b"null",
        b"NaN",
        b'{"type": "action", "index": NaN}',
        b'{"type": "action", "index": Infinity}',
        b'{"type": "ok", "x": -Infinity}',
        b'{"type": "ok", "x": 1e400}',
        b'{"type": "action", "index": 1e400}',
        b'{"type": "ok", "x": "\\ud800"}',
        b'{"type": "ok", "\\udc00": 1}',
        b'{"type": "ok", "x": "\\ud83d\\ude00"}',
        b'{"type": "ok", "x": "\xed\xa0\x80"}',
        b'\xef\xbb\xbf{"type": "ok"}',
        b'{"type": "ok"} {"type": "ok"}',
        b'{"type": "ok",}',
        b'{"type": "ok"}\x00',
        b'{"type": "ok", "x": "a\tb"}',
        b'{"type": "ok", "x": 01}',
        b'{"type": "ok", "x": .5}',
        b'{"type": "ok", "x": +1}',
        b'{"type": "ok", "x": "\\x"}',
        b"{'type': 'ok'}",
        b'{"type": "ok", "x": tru}',
        b'{"type": "action", "index": -0}',
        b'{"type": "action", "index": 0.0}',
        b'{"type": "action", "index": 1' + b"0" * 30 + b"}",
        b'{"type": "action", "index": -1' + b"0" * 5000 + b"}",
        b'{"type":"action","index":0,"index":"x"}',
        b'{"type":"action","index":"x","index":0}',
    ]
)


@st.composite
def deep_texts(draw: st.DrawFn) -> bytes:
    """Nesting past every parser's comfort, within 64 KiB: the issue's 30,000-deep action among them."""
    depth = draw(st.sampled_from([255, 256, 1023, 1024, 1025, 2000]) | st.integers(min_value=1000, max_value=32000))
    opening, closing = draw(st.sampled_from([("[", "]"), ('{"a":', "}"), ('[{"k":', "}]")]))
    unit = len(opening) + len(closing)
    depth = min(depth, 64000 // unit)
    nested = opening * depth + draw(st.sampled_from(["1", "[]", "{}", '"x"', ""])) + closing * depth
    if draw(st.integers(min_value=0, max_value=5)) == 0:
        nested = nested[: -draw(st.integers(min_value=1, max_value=3))]  # unclosed
    place = draw(st.sampled_from(["action", "index", "type", "extra", "top"]))
    if place == "top":
        return nested.encode()
    if place == "type":
        return f'{{"type": {nested}, "index": 0}}'.encode()
    return f'{{"type": "action", "{place}": {nested}}}'.encode()


@st.composite
def replies(draw: st.DrawFn, legal: list[Any]) -> bytes:
    """One reply's bytes: JSON near the protocol's or any JSON, odd texts, nesting, any bytes at all."""
    choice = draw(st.integers(min_value=0, max_value=19))
    if choice < 12:
        return draw(texts(legal))
    if choice < 15:
        return draw(st.binary(max_size=64))
    if choice < 18:
        return draw(ODD_TEXTS)
    if choice < 19:
        return draw(st.text(max_size=20)).encode("utf-8", "surrogatepass")
    return draw(deep_texts())


def mutations(payloads: Sequence[bytes], chooser: random.Random, count: int) -> list[bytes]:
    """More replies from drawn ones: a byte flipped, inserted or deleted, a cut, a piece repeated."""
    pool = [payload for payload in payloads if len(payload) <= 4096] or [b'{"type": "action", "index": 0}']
    made = []
    for _ in range(count):
        payload = bytearray(chooser.choice(pool))
        for _ in range(chooser.randint(1, 3)):
            where = chooser.randint(0, len(payload))
            how = chooser.randint(0, 4)
            if how == 0 and payload:
                payload[min(where, len(payload) - 1)] ^= 1 << chooser.randint(0, 7)
            elif how == 1:
                payload[where:where] = bytes([chooser.choice(b'{}[]",:0123456789-.eE \\tnul\x80\xff')])
            elif how == 2:
                del payload[where : where + chooser.randint(1, 4)]
            elif how == 3:
                del payload[where:]
            else:
                piece = payload[where : where + chooser.randint(1, 8)]
                payload[where:where] = piece
        made.append(bytes(payload))
    return made


ODD_VALUES: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    -1,
    2**64,
    -(2**63) - 1,
    0.5,
    "",
    "0",
    "action",
    "ok",
    [],
    {},
    [0],
    {"card": "guard"},
    Raw("1.0"),
    Raw("0.0"),
    Raw("1E0"),
    Raw("-0"),
    Raw("18446744073709551616"),
    Raw("1e400"),
)


def _changed(element: dict[str, Any], chooser: random.Random) -> dict[str, Any]:
    """A legal element with one thing changed, or none."""
    element = dict(element)
    how = chooser.randint(0, 7)
    key = chooser.choice(list(element))
    if how == 1:
        del element[key]
    elif how == 2:
        element[chooser.choice(["extra", "card", "target", "guess", "keep", "bottom"])] = chooser.choice(ODD_VALUES)
    elif how == 3:
        element[key] = chooser.choice(ODD_VALUES)
    elif how == 4 and isinstance(element.get("target"), int):
        element["target"] = chooser.choice([Raw(f"{element['target']}.0"), element["target"] + 1, True])
    elif how == 5 and "bottom" in element:
        element["bottom"] = element["bottom"][::-1] if chooser.random() < 0.5 else element["bottom"][:1]
    elif how == 6:
        element[key] = chooser.choice(["guard", "spy", "princess", "Guard", "", "joker"])
    return element


def structural(offered: Sequence[Asked], chooser: random.Random, count: int) -> list[Case]:
    """Reply objects made by a seeded random, near the protocol's: every verdict often, at little cost."""
    made = []
    for _ in range(count):
        asked = chooser.choice(offered)
        members: list[tuple[str, Any]] = []
        if chooser.random() < 0.95:
            members.append(("type", "action" if chooser.random() < 0.85 else chooser.choice(ODD_VALUES)))
        shape = chooser.random()
        if shape < 0.45 or shape > 0.95:
            index: Any = chooser.randint(-2, len(asked.legal) + 1)
            members.append(("index", index if chooser.random() < 0.85 else chooser.choice(ODD_VALUES)))
        if shape >= 0.45:
            element = chooser.choice(asked.legal)
            action = _changed(element, chooser) if chooser.random() < 0.5 else element
            keys = list(action)
            chooser.shuffle(keys)
            members.append(("action", Pairs(tuple((key, action[key]) for key in keys))))
        if chooser.random() < 0.3:
            members.append((chooser.choice(["extra", "Index", "action ", "index", "type"]), chooser.choice(ODD_VALUES)))
        chooser.shuffle(members)
        separators = chooser.choice([(",", ":"), (", ", ": "), (" ,\t", "\r: ")])
        payload = encode(Pairs(tuple(members)), separators, chooser.random() < 0.5).encode()
        made.append(Case(payload, "act" if chooser.random() < 0.9 else chooser.choice(MESSAGE_TYPES), asked))
    return made


@dataclass(frozen=True, slots=True)
class Case:
    """One reply to judge: its bytes, the message it answers, and the decision behind an act."""

    payload: bytes
    message_type: str
    asked: Asked


@st.composite
def batches(draw: st.DrawFn, offered: Sequence[Asked], drawn: int, made: int, mutated: int) -> list[Case]:
    """`drawn` replies drawn one by one by hypothesis; then, from a seed it draws, `made` reply objects near
    the protocol's and `mutated` byte-level changes of all of these (drawing each reply through hypothesis
    costs ten times what judging it does)."""
    cases: list[Case] = []
    for _ in range(drawn):
        asked = draw(st.sampled_from(offered))
        cases.append(Case(draw(replies(asked.legal)), draw(st.sampled_from(MESSAGE_TYPES)), asked))
    chooser = random.Random(draw(st.integers(min_value=0, max_value=2**64)))
    cases += structural(offered, chooser, made)
    for payload in mutations([case.payload for case in cases], chooser, mutated):
        cases.append(Case(payload, chooser.choice(MESSAGE_TYPES), chooser.choice(offered)))
    chooser.shuffle(cases)
    return cases


# ---------------------------------------------------------------------------------------- the judging


def arena_judgement(case: Case) -> Judgement:
    """The arena's verdict, by the code a host runs; an exception other than a fault is let through."""
    try:
        reply = read_reply(case.payload, case.message_type)
        if case.message_type != "act":
            return Judgement(ACCEPTED)
        action = chosen_action(reply, case.asked.decision, case.asked.view)
    except PlayerFault as fault:
        return Judgement(fault.reason.value)
    return Judgement(ACCEPTED, case.asked.decision.legal.index(action))


@dataclass(slots=True)
class Tally:
    """Replies judged, by verdict, and every arena failure (a verdict that differs, or an exception)."""

    judged: int = 0
    blank: int = 0
    """Stdio lines of blanks only, which are no message: checked not to arrive."""
    verdicts: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    def check(self, case: Case, received: bytes | Garbled | Dropped) -> None:
        self.judged += 1
        expected = judge(case.payload, case.message_type, case.asked.legal)
        if received != case.payload:
            self.failures.append(f"{case.payload[:80]!r} arrived as {received!r:.80}")
            return
        try:
            verdict = arena_judgement(case)
        except Exception as error:
            self.failures.append(f"{case.payload[:80]!r} to {case.message_type}: {error!r:.200}")
            return
        if verdict != expected:
            self.failures.append(f"{case.payload[:80]!r} to {case.message_type}: arena {verdict}, oracle {expected}")
            return
        self.verdicts[verdict.verdict] = self.verdicts.get(verdict.verdict, 0) + 1


# ---------------------------------------------------------------------------------------- the replay bot


class ReplayBot:
    """A replay bot over `protocol`, started and greeted by a BotHost, kept for every batch."""

    def __init__(self, directory: Path, protocol: str, marker: str) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        script = directory / "replay_bot.py"
        script.write_text(textwrap.dedent(REPLAY_BOT))
        self.end = f'{{"type": "end-of-batch", "nonce": "{secrets.token_hex(8)}"}}'.encode()
        command = (sys.executable, str(script), protocol, self.end.decode(), marker)
        self.protocol = protocol
        self.host = BotHost(
            BotCommand(f"replay-{protocol}", command, Transport(protocol), directory),
            Timing(move_ms=30000, startup_ms=30000, ponder=True),  # not frozen: exchange() talks to it directly
            SandboxLevel.NONE,
        )
        self.host.ensure_running()

    @property
    def channel(self) -> Channel:
        channel = self.host._channel
        assert channel is not None, "the replay bot is not running"
        return channel

    def usable(self, payload: bytes) -> bytes:
        """A line holds no newline: over stdio, a newline in a payload becomes a blank."""
        return payload.replace(b"\n", b" ") if self.protocol == "stdio" else payload

    def exchange(self, payloads: Sequence[bytes]) -> Iterator[bytes | Garbled | Dropped]:
        """Have the bot send every payload back over its transport; what arrives, in order, up to the marker.
        Over stdio a line of nothing but blanks is no message and does not arrive."""
        message = {"type": "replay", "payloads": [base64.b64encode(payload).decode() for payload in payloads]}
        channel = self.channel
        channel.send(orjson.dumps(message))
        deadline = time.monotonic() + BATCH_DEADLINE_S
        while True:
            ready = [item for item, _ in zmq_poll(channel.poll_items(), 50)]
            channel.pump(ready)
            for identity, arrival in channel.arrivals(ready):
                if channel.peer is not None and identity != channel.peer:
                    raise AssertionError(f"a message from another connection: {arrival!r:.80}")
                if arrival == self.end:
                    return
                yield arrival
            if time.monotonic() > deadline:
                raise AssertionError(f"the batch did not come back within {BATCH_DEADLINE_S} s")

    def run(self, cases: Sequence[Case], tally: Tally) -> None:
        """Send the cases' replies through the bot and judge each as it arrives."""
        sent = [Case(self.usable(case.payload), case.message_type, case.asked) for case in cases]
        if self.protocol == "stdio":
            replies = [case for case in sent if case.payload.strip(b" \t\r")]  # a blank line is no message
            tally.blank += len(sent) - len(replies)
            sent = replies
        arrived = list(self.exchange([case.payload for case in sent]))
        if len(arrived) != len(sent):
            tally.failures.append(f"{len(sent)} replies sent, {len(arrived)} arrived")
            return
        for case, received in zip(sent, arrived, strict=True):
            tally.check(case, received)

    def close(self) -> None:
        self.host.shutdown()
        self.host.kill()

"""Write a Love Letter bot in Python: give `run` a function from an `act` message to an answer.

    from arena.sdk import run
    run(lambda message: 0)          # always the first legal answer

`run` says hello, keeps the lockstep, answers every other message with ok, and exits after
`shutdown`. It speaks ZeroMQ when the arena set ARENA_ENDPOINT and JSON lines on the standard
streams otherwise (`protocol: stdio`). The answer is an element of `message["legal"]` (a dict)
or its index (an int). For more than `act`, pass an object with an `act` method and any of
`welcome`, `match_start`, `match_end`: each gets the message as a dict. A stray print() lands in the
bot's log as it is printed: `run` sends it to stderr, over either transport (over stdio, stdout carries the
protocol).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any, Protocol

Message = dict[str, Any]
Answer = dict[str, Any] | int


class Bot(Protocol):
    def act(self, message: Message) -> Answer: ...


def run(bot: Callable[[Message], Answer] | Bot, name: str = "python-bot") -> None:
    """Play until the arena says shutdown."""
    act = bot if callable(bot) and not hasattr(bot, "act") else bot.act
    hooks = {kind: getattr(bot, kind, None) for kind in ("welcome", "match_start", "match_end")}
    transport = _Zmq(os.environ["ARENA_ENDPOINT"]) if "ARENA_ENDPOINT" in os.environ else _Stdio()
    sys.stdout = sys.stderr  # a stray print() reaches the bot's log as it is printed, over either transport
    hello: Message = {"type": "hello", "protocol": 1, "name": name}
    if "ARENA_TOKEN" in os.environ:
        hello["token"] = os.environ["ARENA_TOKEN"]
    send, receive = transport.send, transport.receive
    send(_dumps(hello))
    while True:
        message = _loads(receive())
        kind = message.get("type")
        if kind == "act":
            answer = act(message)
            if type(answer) is int:
                send(b'{"type":"action","index":%d}' % answer)
            else:
                send(_dumps({"type": "action", "action": answer}))
            continue
        hook = hooks.get(str(kind))
        if hook is not None:
            hook(message)
        send(b'{"type":"ok"}')
        if kind == "shutdown":
            transport.close()
            return


_dumps: Callable[[Message], bytes]
_loads: Callable[[bytes], Any]
try:
    import orjson

    _dumps, _loads = orjson.dumps, orjson.loads
except ImportError:  # the SDK works with the standard library alone

    def _dumps(message: Message) -> bytes:
        return json.dumps(message).encode()

    _loads = json.loads


class _Zmq:
    """A REQ socket: it keeps the lockstep itself."""

    def __init__(self, endpoint: str) -> None:
        import zmq

        self._context = zmq.Context()
        self._socket = self._context.socket(zmq.REQ)
        self._socket.linger = 1000
        self._socket.connect(endpoint)
        self.send: Callable[[bytes], object] = self._socket.send
        self.receive: Callable[[], bytes] = self._socket.recv

    def close(self) -> None:
        self._socket.close()
        self._context.term()


class _Stdio:
    """JSON lines over the standard streams (`run` then sends print() to stderr: stdout carries the protocol)."""

    def __init__(self) -> None:
        self._out = sys.stdout.buffer
        self._in = sys.stdin.buffer

    def send(self, payload: bytes) -> None:
        self._out.write(payload + b"\n")
        self._out.flush()

    def receive(self) -> bytes:
        line = self._in.readline()
        if not line:
            raise SystemExit("arena closed the connection")
        return line

    def close(self) -> None:
        self._out.flush()

"""Write a Love Letter bot in Python: give `run` a function from an `act` message to an answer.

    from arena.sdk import run
    run(lambda message: 0)          # always the first legal answer

`run` says hello, keeps the lockstep, answers every other message with ok, and exits after
`shutdown`. It speaks ZeroMQ when the arena set ARENA_ENDPOINT and JSON lines on the standard
streams otherwise (`protocol: stdio`). The answer is an element of `message["legal"]` (a dict)
or its index (an int). For more than `act`, pass an object with an `act` method and any of
`welcome`, `match_start`, `match_end`: each gets the message as a dict. Print to stderr, never
to stdout: stdout carries the protocol when the bot runs over stdio.
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
    act = bot if callable(bot) and not hasattr(bot, "act") else bot.act  # type: ignore[union-attr]
    hooks = {kind: getattr(bot, kind, None) for kind in ("welcome", "match_start", "match_end")}
    transport = _Zmq(os.environ["ARENA_ENDPOINT"]) if "ARENA_ENDPOINT" in os.environ else _Stdio()
    hello: Message = {"type": "hello", "protocol": 1, "name": name}
    if "ARENA_TOKEN" in os.environ:
        hello["token"] = os.environ["ARENA_TOKEN"]
    transport.send(hello)
    while True:
        message = transport.receive()
        kind = message.get("type")
        if kind == "act":
            answer = act(message)
            key = "index" if isinstance(answer, int) else "action"
            reply: Message = {"type": "action", key: answer}
        else:
            hook = hooks.get(str(kind))
            if hook is not None:
                hook(message)
            reply = {"type": "ok"}
        transport.send(reply)
        if kind == "shutdown":
            transport.close()
            return


try:
    import orjson

    def _dumps(message: Message) -> bytes:
        return orjson.dumps(message)

    _loads = orjson.loads
except ImportError:  # the SDK works with the standard library alone

    def _dumps(message: Message) -> bytes:
        return json.dumps(message).encode()

    _loads = json.loads


class _Zmq:
    def __init__(self, endpoint: str) -> None:
        import zmq

        self._context = zmq.Context()
        self._socket = self._context.socket(zmq.REQ)
        self._socket.linger = 1000
        self._socket.connect(endpoint)

    def send(self, message: Message) -> None:
        self._socket.send(_dumps(message))

    def receive(self) -> Message:
        return _loads(self._socket.recv())

    def close(self) -> None:
        self._socket.close()
        self._context.term()


class _Stdio:
    def __init__(self) -> None:
        self._stdout = sys.stdout
        sys.stdout = sys.stderr  # a stray print() must not break the protocol

    def send(self, message: Message) -> None:
        self._stdout.write(json.dumps(message) + "\n")
        self._stdout.flush()

    def receive(self) -> Message:
        line = sys.stdin.readline()
        if not line:
            raise SystemExit("arena closed the connection")
        return json.loads(line)

    def close(self) -> None:
        self._stdout.flush()

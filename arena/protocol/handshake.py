"""The handshake and the goodbye of PROTOCOL.md: the bot's `hello`, judged; the arena's `welcome` and `shutdown`."""

from __future__ import annotations

from arena.engine import FaultReason
from arena.errors import PlayerFault
from arena.protocol.messages import JSON, PROTOCOL_VERSION, shown
from arena.protocol.replies import decode, snippet


def read_hello(payload: bytes, token: str, *, token_required: bool) -> str | None:
    """None when `payload` is the bot's valid hello; the reason it is no hello at all (a message to ignore before
    the hello, named in the detail if none comes); PlayerFault(handshake) for a hello of another protocol or with
    a wrong token. `token_required`: a stdio bot may leave the token out, a ZeroMQ bot may not."""
    try:
        hello = decode(payload)
    except PlayerFault as fault:
        return fault.detail
    if type(hello) is not dict or hello.get("type") != "hello":
        return f"a message that is not a hello: {snippet(payload)}"
    version = hello.get("protocol")
    if type(version) is not int or version != PROTOCOL_VERSION:
        raise PlayerFault(FaultReason.HANDSHAKE, f"hello says protocol {shown(version)}; this arena speaks 1")
    if (token_required or "token" in hello) and hello.get("token") != token:
        raise PlayerFault(FaultReason.HANDSHAKE, "hello has a wrong token (not this process's ARENA_TOKEN)")
    return None


def welcome_message(name: str, move_ms: int, startup_ms: int) -> JSON:
    return {
        "type": "welcome",
        "protocol": PROTOCOL_VERSION,
        "name": name,
        "limits": {"move_ms": move_ms, "startup_ms": startup_ms},
        "events": [],
    }


def shutdown_message() -> JSON:
    return {"type": "shutdown", "events": []}

"""A bot's reply judged as PROTOCOL.md's fault table says: accepted, `malformed` or `illegal`.

No I/O here: the host reads the bytes (the 64 KiB cap is the channel's) and kills the process on a fault.
Every detail is built from bounded renderings of what the bot sent, so no reply, however large, deep or
odd, can make the judging itself fail.
"""

from __future__ import annotations

from typing import Any

import orjson

from arena.engine import Action, Decision, FaultReason, View
from arena.engine.explain import explain_illegal
from arena.errors import PlayerFault
from arena.protocol.exact_json import NotJson, loads
from arena.protocol.messages import MalformedAction, action_json, json_kind, parse_action, shown

OK_TYPE = "ok"
ACTION_TYPE = "action"


def decode(payload: bytes) -> object:
    """A reply as JSON; PlayerFault(malformed) saying what is wrong with it.

    orjson reads nearly every reply; what it refuses is read again exactly (arena.protocol.exact_json), since
    it refuses some valid JSON: arrays nested over 1024 deep, numbers past a double's range.
    """
    try:
        return orjson.loads(payload)
    except orjson.JSONDecodeError:
        pass
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as error:
        raise malformed(f"not UTF-8 (byte {error.start})") from None
    try:
        return loads(text)
    except NotJson as error:
        raise malformed(f"not JSON ({error}): {snippet(text)}") from None


def read_reply(payload: bytes, message_type: str) -> dict[str, Any]:
    """The reply object to a message of `message_type`, of the type due: "action" to act, else "ok"."""
    reply = decode(payload)
    if type(reply) is not dict:
        raise malformed(f"a reply is a JSON object, not {json_kind(reply)}: {snippet(payload)}")
    expected = ACTION_TYPE if message_type == "act" else OK_TYPE
    kind = reply.get("type")
    if type(kind) is not str or kind != expected:
        named = repr(kind[:80]) if type(kind) is str else shown(kind)
        raise malformed(f'the reply to {message_type} has type {named}, not "{expected}": {snippet(payload)}')
    if type(reply.get("index")) is float:
        # orjson reads an integer past 64 bits as a float: read exactly whether the index is an integer
        try:
            exact = loads(payload.decode("utf-8"))
        except NotJson as error:  # orjson took it: the two readers disagree, and the stricter one is right
            raise malformed(f"not JSON ({error})") from None
        assert isinstance(exact, dict)
        reply = exact
    return reply


def chosen_action(reply: dict[str, Any], decision: Decision, view: View) -> Action:
    """The answer an action reply names, by index or whole; PlayerFault(malformed or illegal) otherwise."""
    has_action, has_index = "action" in reply, "index" in reply
    if has_action == has_index:
        which = "both" if has_action else "neither"
        raise malformed(f'an action reply has exactly one of "action" and "index", not {which}: {shown(reply)}')
    legal = decision.legal
    if has_index:
        index = reply["index"]
        if type(index) is not int:
            raise malformed(f'"index" must be an integer, not {shown(index)}')
        if not 0 <= index < len(legal):
            raise illegal(f"index {shown(index)} is outside legal (0 to {len(legal) - 1})")
        return legal[index]
    answer = reply["action"]
    try:
        action = parse_action(answer)
    except MalformedAction as error:
        raise illegal(f"{shown(answer)}: {error}") from None
    if not decision.accepts(action):
        raise illegal(f"{shown(answer)}: {explain_illegal(action, decision, view.hand, view)}")
    assert isinstance(answer, dict)  # parse_action reads objects only
    extra = sorted(set(answer) - set(action_json(action)))
    if extra:
        fields = ", ".join(shown(key) for key in extra[:5])
        raise illegal(f"{shown(answer)}: not equal to an element of legal, which has no {fields}")
    return action


def answered_action(answer: object, decision: Decision, view: View) -> Action:
    """The answer of an in-process bot written against the protocol (arena.sdk's `act`: an index into legal, or
    one of its elements), judged as the same answer sent over the wire would be."""
    key = "index" if type(answer) is int else "action"
    return chosen_action({"type": ACTION_TYPE, key: answer}, decision, view)


def snippet(text: str | bytes, size: int = 80) -> str:
    """The start of what the bot sent, for a detail."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return repr(text[:size] + ("…" if len(text) > size else ""))


def malformed(detail: str) -> PlayerFault:
    return PlayerFault(FaultReason.MALFORMED, detail)


def illegal(detail: str) -> PlayerFault:
    return PlayerFault(FaultReason.ILLEGAL, detail)

"""PROTOCOL.md's judgement of a reply, written from the page alone, to check the arena's against.

It shares no code with the arena: the standard json module parses (with its recursion made room for,
in a thread with a large stack), and every rule of the fault table is spelt out here once more:

- malformed: over 64 KiB, not UTF-8 JSON, not an object, of the wrong `type` ("action" to act, "ok" to
  every other message), with both or neither of `action` and `index`, an `index` that is not an integer;
- illegal: an `action` not equal to an element of `legal` (key order aside), an `index` outside it;
- anything else is accepted; fields a reply has beyond these are ignored.

"Integer" and "equal" are JSON's: `1.0` and `true` are not the integer 1; strings, numbers, objects and
arrays equal only their own kind.
"""

from __future__ import annotations

import json
import json.scanner
import sys
import threading
from dataclasses import dataclass
from typing import Any

LIMIT = 64 * 1024
ACCEPTED, MALFORMED, ILLEGAL = "accepted", "malformed", "illegal"


@dataclass(frozen=True, slots=True)
class Judgement:
    verdict: str
    index: int | None = None
    """For an accepted reply to act: the position in legal of the answer it names."""


class JsonFloat:
    """A number written with a fraction or an exponent: never equal to an integer, never an index."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class HugeInt:
    """An integer longer than Python converts: an integer all the same, and past every seat and index."""

    __slots__ = ()


class NotJson(Exception):
    pass


def _constant(name: str) -> object:
    raise NotJson(f"{name} is not JSON")


def _integer(text: str) -> object:
    return int(text) if len(text) <= 4000 else HugeInt()


def _parse(text: str) -> object:
    return json.loads(text, parse_float=JsonFloat, parse_int=_integer, parse_constant=_constant)


def _parse_in_python(text: str) -> object:
    """The json module's own Python scanner: from Python 3.12 the C scanner's depth has a fixed cap, which no
    recursion limit raises; the Python one recurses in Python frames, which the limit below allows."""
    decoder = json.JSONDecoder(parse_float=JsonFloat, parse_int=_integer, parse_constant=_constant)
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    return decoder.decode(text)


def _parse_deep(text: str) -> object:
    """json.loads recurses once per level: a 64 KiB text nests up to 32,768 deep."""
    result: list[object] = []
    error: list[BaseException] = []

    def work() -> None:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(200_000)
        try:
            result.append(_parse_in_python(text))
        except BaseException as problem:
            error.append(problem)
        finally:
            sys.setrecursionlimit(limit)

    previous = threading.stack_size(512 * 1024 * 1024)
    try:
        thread = threading.Thread(target=work)
        thread.start()
    finally:
        threading.stack_size(previous)
    thread.join()
    if error:
        raise error[0]
    return result[0]


def _has_lone_surrogate(value: object) -> bool:
    """Is any string (or key) not Unicode text, as UTF-8 JSON's strings are? Looked at without recursion."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if any(0xD800 <= ord(char) <= 0xDFFF for char in item):
                return True
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


def _is_integer(value: object) -> bool:
    return (type(value) is int) or isinstance(value, HugeInt)


def _equal(ours: object, legal: object) -> bool:
    """JSON equality, as deep as the legal element goes (a kind that differs ends the look)."""
    if type(ours) is not type(legal):
        return False
    if isinstance(legal, dict):
        assert isinstance(ours, dict)
        return ours.keys() == legal.keys() and all(_equal(ours[key], legal[key]) for key in legal)
    if isinstance(legal, list):
        assert isinstance(ours, list)
        return len(ours) == len(legal) and all(_equal(a, b) for a, b in zip(ours, legal, strict=True))
    return bool(ours == legal)


def decode(payload: bytes) -> Any:
    """The JSON value of a payload; NotJson when it is not UTF-8 JSON."""
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError:
        raise NotJson("not UTF-8") from None
    try:
        try:
            value = _parse(text)
        except RecursionError:
            value = _parse_deep(text)
    except ValueError:  # json.JSONDecodeError
        raise NotJson("not JSON") from None
    if _has_lone_surrogate(value):
        raise NotJson("a string that is not Unicode")
    return value


def judge(payload: bytes, message_type: str, legal: list[Any]) -> Judgement:
    """PROTOCOL.md's verdict on `payload` as the reply to a message of `message_type` offering `legal`."""
    if len(payload) > LIMIT:
        return Judgement(MALFORMED)
    try:
        reply = decode(payload)
    except NotJson:
        return Judgement(MALFORMED)
    if type(reply) is not dict:
        return Judgement(MALFORMED)
    expected = "action" if message_type == "act" else "ok"
    if type(reply.get("type")) is not str or reply["type"] != expected:
        return Judgement(MALFORMED)
    if message_type != "act":
        return Judgement(ACCEPTED)
    if ("action" in reply) == ("index" in reply):
        return Judgement(MALFORMED)
    if "index" in reply:
        index = reply["index"]
        if not _is_integer(index):
            return Judgement(MALFORMED)
        if isinstance(index, HugeInt) or not 0 <= index < len(legal):
            return Judgement(ILLEGAL)
        return Judgement(ACCEPTED, index)
    for position, element in enumerate(legal):
        if _equal(reply["action"], element):
            return Judgement(ACCEPTED, position)
    return Judgement(ILLEGAL)

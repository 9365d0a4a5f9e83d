"""JSON text read exactly as RFC 8259 has it, at any depth: the judge of whatever orjson refuses.

orjson is the fast path for every reply, but it refuses some valid JSON (arrays nested over 1024 deep,
numbers past a double's range) and turns integers past 64 bits into floats; Python's json module
recurses and accepts NaN and lone surrogates. PROTOCOL.md calls a reply malformed only when it is not
UTF-8 JSON, so a reply orjson refuses is read again here: iteratively (a 64 KiB reply can nest 32,000
deep), strictly (what orjson refuses as not JSON, this refuses too), and keeping only the top levels,
since no legal answer lies deeper (see KEPT_DEPTH).
"""

from __future__ import annotations

import json.decoder
import re
import sys
from collections.abc import Callable

scanstring: Callable[[str, int, bool], tuple[str, int]] = getattr(json.decoder, "scanstring")  # noqa: B009
"""The json module's string scanner (in C), strict: it is not in the module's typed interface."""

KEPT_DEPTH = 8
"""Containers nested deeper than this are read and checked but kept as NESTED: a legal answer's deepest
container is at depth 3 (the reply, its action, the action's bottom list)."""
LONGEST_INTEGER = min(4000, (sys.get_int_max_str_digits() or 4300) - 1)
"""Digits of an integer kept exactly; a longer one stands as ±10**LONGEST_INTEGER (past every seat and
index, as it is), since Python will not convert more than 4300 digits."""

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_LITERALS = {"true": True, "false": False, "null": None}


class Nested:
    """A container nested past KEPT_DEPTH: valid JSON, not kept."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "[…]"


NESTED = Nested()


class NotJson(ValueError):
    """Text that is not one JSON value; says what is wrong and where."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(f"{message} at character {position}")
        self.message = message
        self.position = position


def loads(text: str) -> object:
    """The one JSON value of `text`, containers past KEPT_DEPTH as NESTED; NotJson if there is none."""
    stack: list[tuple[list[object] | dict[str, object] | None, bool]] = []
    """The open containers, outermost first, each with whether it is an object; None past KEPT_DEPTH."""
    keys: list[str] = []
    """The key awaiting its value, for each open object."""
    end = len(text)
    position = _skip(text, 0)
    while True:
        # a value starts at `position`
        if position >= end:
            raise NotJson("a value is missing", position)
        char = text[position]
        value: object
        if char in "[{":
            is_object = char == "{"
            kept = len(stack) < KEPT_DEPTH and (not stack or stack[-1][0] is not None)
            container: list[object] | dict[str, object] | None = ({} if is_object else []) if kept else None
            position = _skip(text, position + 1)
            if position < end and text[position] == ("}" if is_object else "]"):
                value = NESTED if container is None else container
                position += 1
            else:
                stack.append((container, is_object))
                if is_object:
                    position = _key(text, position, keys)
                continue
        elif char == '"':
            value, position = _string(text, position)
        elif (number := _NUMBER.match(text, position)) is not None:
            token = number.group()
            if number.group(1) or number.group(2):
                value = float(token)
            elif len(token) - token.startswith("-") > LONGEST_INTEGER:
                value = (-1 if token.startswith("-") else 1) * 10**LONGEST_INTEGER
            else:
                value = int(token)
            position = number.end()
        else:
            word = next((w for w in _LITERALS if text.startswith(w, position)), None)
            if word is None:
                raise NotJson(f"expected a value, found {text[position]!r}", position)
            value = _LITERALS[word]
            position += len(word)
        # the value is complete: put it in its container, and close every container it completes
        while True:
            position = _skip(text, position)
            if not stack:
                if position != end:
                    raise NotJson("more after the value", position)
                return value
            top, is_object = stack[-1]
            if isinstance(top, dict):
                top[keys[-1]] = value  # a repeated key: the last value stands, as in orjson
            elif isinstance(top, list):
                top.append(value)
            if position < end and text[position] == ",":
                position = _skip(text, position + 1)
                if is_object:
                    position = _key(text, position, keys, replace=True)
                break
            closing = "}" if is_object else "]"
            if position < end and text[position] == closing:
                stack.pop()
                if is_object:
                    keys.pop()
                value = NESTED if top is None else top
                position += 1
                continue
            raise NotJson(f"expected ',' or '{closing}'", position)


def _skip(text: str, position: int) -> int:
    match = _WHITESPACE.match(text, position)
    assert match is not None  # matches the empty string
    return match.end()


def _string(text: str, position: int) -> tuple[str, int]:
    try:
        value, after = scanstring(text, position + 1, True)
    except ValueError as error:
        raise NotJson(getattr(error, "msg", str(error)), getattr(error, "pos", position)) from None
    if not value.isascii() and (surrogate := _SURROGATE.search(value)) is not None:
        raise NotJson(f"a lone surrogate \\u{ord(surrogate.group()):04x} in a string", position)
    return value, after


def _key(text: str, position: int, keys: list[str], replace: bool = False) -> int:
    """Read `"key" :` at position; the key joins `keys` (or replaces the last one); returns the value's start."""
    if position >= len(text) or text[position] != '"':
        raise NotJson("expected a string key", position)
    key, position = _string(text, position)
    position = _skip(text, position)
    if position >= len(text) or text[position] != ":":
        raise NotJson("expected ':'", position)
    if replace:
        keys[-1] = key
    else:
        keys.append(key)
    return _skip(text, position + 1)

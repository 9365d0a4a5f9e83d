"""Properties of reply judging, in-process: any bytes and any JSON a bot can send are judged as the oracle of
PROTOCOL.md judges them, and the exact reader agrees with a strict standard parser on any text.

The strategies are tests/players/fuzz.py's (which sends replies through real bot processes, in batches);
here each reply is one example, so a wrong verdict shrinks to the smallest reply that shows it.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from arena.protocol.exact_json import KEPT_DEPTH, LONGEST_INTEGER, NESTED, NotJson, loads
from tests.players.fuzz import (
    JSON_VALUES,
    MESSAGE_TYPES,
    ODD_VALUES,
    SEPARATORS,
    Asked,
    Case,
    Pairs,
    Raw,
    arena_judgement,
    encode,
    near_legal,
    real_decisions,
    replies,
)
from tests.players.reply_oracle import HugeInt, JsonFloat, judge
from tests.players.reply_oracle import NotJson as OracleNotJson
from tests.players.reply_oracle import decode as oracle_decode

OFFERED = real_decisions()
ASKED = st.sampled_from(OFFERED)


def judged_alike(payload: bytes, message_type: str, asked: Asked) -> None:
    expected = judge(payload, message_type, asked.legal)
    assert arena_judgement(Case(payload, message_type, asked)) == expected


@settings(max_examples=200)
@given(st.data())
def test_any_reply_is_judged_as_the_protocol_says(data: st.DataObject) -> None:
    asked = data.draw(ASKED, label="asked")
    payload = data.draw(replies(asked.legal), label="payload")
    judged_alike(payload, data.draw(st.sampled_from(MESSAGE_TYPES), label="message"), asked)


@settings(max_examples=150)
@given(payload=st.binary(max_size=200), message_type=st.sampled_from(MESSAGE_TYPES), asked=ASKED)
@example(payload=b'{"type":"action","index":1e400}', message_type="act", asked=OFFERED[0])
def test_any_bytes_are_judged_as_the_protocol_says(payload: bytes, message_type: str, asked: Asked) -> None:
    judged_alike(payload, message_type, asked)


def field_values(field: str, asked: Asked) -> st.SearchStrategy[Any]:
    """What one field may hold: any JSON value, the values most often wrong (true for 1, 1.0, 2**64), and
    those near the right ones."""
    odd = st.sampled_from(ODD_VALUES) | JSON_VALUES
    if field == "type":
        return st.sampled_from(["action", "ok", "Action", "OK", "", "hello"]) | odd
    if field == "index":
        return st.integers(min_value=-2, max_value=len(asked.legal) + 1) | odd
    if field == "action":
        return near_legal(asked.legal) | odd
    return odd


@pytest.mark.parametrize("field", ["type", "index", "action", "extra"])
@settings(max_examples=100)
@given(data=st.data())
def test_any_json_value_in_any_field_is_judged_as_the_protocol_says(field: str, data: st.DataObject) -> None:
    """A well-formed reply but for one field, which holds any JSON value, in any spelling of its numbers."""
    asked = data.draw(ASKED, label="asked")
    message_type = data.draw(st.sampled_from(MESSAGE_TYPES) if field in ("type", "extra") else st.just("act"))
    members: dict[str, Any] = {"type": "action" if message_type == "act" else "ok", "index": 0}
    if field == "action":
        del members["index"]
    members[field] = data.draw(field_values(field, asked), label="value")
    order = data.draw(st.permutations(list(members)), label="order")
    text = encode(Pairs(tuple((key, members[key]) for key in order)), data.draw(SEPARATORS), data.draw(st.booleans()))
    judged_alike(text.encode("utf-8", "surrogatepass"), message_type, asked)


# ------------------------------------------------------------------------------------------ the exact reader

JSON_CHARACTERS = st.sampled_from(list('{}[]",:0123456789-+.eE \t\n\rtrufalsn\\/bu\u00e9\ud800x'))
TOKENS = st.sampled_from(
    [
        *"{}[],:",
        *('"a"', '""', '"\\u00e9"', '"\\ud83d\\ude00"', '"\\ud800"', '"\\x"', '"a', '"\t"', "'a'"),
        *("0", "01", "-0", "-", "1.", "1.5", ".5", "1e5", "1e", "1E+2", "-1e-2", "1e400", "+1", "9" * 4100),
        *("true", "tru", "false", "null", "nul", "NaN", "Infinity", "\ufeff"),
    ]
)
"""JSON's tokens and near-tokens: the grammar's edges are met in a few of them."""
LEAVES = st.sampled_from(
    [
        *("0", "01", "-0", "-", "1.", "1.5", ".5", "1e5", "1e", "1E+2", "-1e-2", "+1", "00", "-01", "0.0e0", "1_0"),
        *(
            "true",
            "True",
            "tru",
            "null",
            "nul",
            "NaN",
            "-Infinity",
            '"\\u00e9"',
            '"\\ud800"',
            '"\\x"',
            '"\t"',
            "'a'",
            "",
        ),
    ]
)
"""Leaves written as is: numbers and words just inside and just outside JSON's grammar."""


@st.composite
def json_like_texts(draw: st.DrawFn) -> str:
    """Mostly near the line between JSON and not: JSON values with a leaf just inside or outside the grammar,
    JSON text with a character put in, taken out or replaced, tokens and near-tokens in any order, JSON's
    characters in any order."""
    how = draw(st.integers(0, 4))
    if how == 0:  # one leaf at the edge, in a value that is JSON elsewhere
        leaf, value = Raw(draw(LEAVES)), draw(JSON_VALUES)
        near = draw(st.sampled_from([leaf, [leaf], [value, leaf], [leaf, value], {"k": leaf}, {"k": value, "j": leaf}]))
        return encode(near, draw(SEPARATORS), draw(st.booleans()))
    if how == 3:
        tokens = draw(st.lists(TOKENS, min_size=1, max_size=12))
        blank = st.sampled_from(["", "", " ", "\n", "\t\r"])
        return "".join(draw(blank) + token for token in tokens)
    if how == 4:
        return "".join(draw(st.lists(JSON_CHARACTERS, max_size=30)))
    text = encode(draw(JSON_VALUES), draw(SEPARATORS), draw(st.booleans()))
    for _ in range(how):
        where = draw(st.integers(0, len(text)))
        change = draw(st.sampled_from(["insert", "delete", "replace"]))
        put = draw(JSON_CHARACTERS) if change != "delete" else ""
        text = text[:where] + put + text[where + (change != "insert") :]
    return text


def same_value(ours: object, theirs: object, depth: int = 0) -> bool:
    """The exact reader's value against the oracle's: numbers as JSON has them, containers past KEPT_DEPTH as
    NESTED, an integer past LONGEST_INTEGER digits as ±10**LONGEST_INTEGER (the oracle counts the sign in its 4000)."""
    if isinstance(theirs, JsonFloat):
        return type(ours) is float and ours == float(theirs.text)
    if isinstance(theirs, HugeInt):  # over 4000 characters, a sign included: past every index either way
        return type(ours) is int and abs(ours) >= 10 ** (LONGEST_INTEGER - 1)
    if isinstance(theirs, dict | list) and depth >= KEPT_DEPTH:
        return ours is NESTED
    if isinstance(theirs, dict):
        return (
            isinstance(ours, dict)
            and ours.keys() == theirs.keys()
            and all(same_value(ours[key], theirs[key], depth + 1) for key in theirs)
        )
    if isinstance(theirs, list):
        return (
            isinstance(ours, list)
            and len(ours) == len(theirs)
            and all(same_value(a, b, depth + 1) for a, b in zip(ours, theirs, strict=True))
        )
    return type(ours) is type(theirs) and ours == theirs


@settings(max_examples=400)
@given(json_like_texts() | st.text(max_size=30))
@example("[1,]")
@example('{"a": 1, "a": [2]}')
@example("[" * 9 + "]" * 9)
@example("-" + "1" * 4100)
@example('"\\ud800"')
def test_the_exact_reader_agrees_with_a_strict_parser_on_any_text(text: str) -> None:
    try:
        theirs = oracle_decode(text.encode("utf-8", "surrogatepass"))
    except OracleNotJson:
        theirs = NotJson
    try:
        ours: object = loads(text)
    except NotJson:
        ours = NotJson
    if theirs is NotJson or ours is NotJson:
        assert ours is theirs, f"the exact reader says {ours!r:.80}, a strict parser {theirs!r:.80}"
    else:
        assert same_value(ours, theirs), f"{ours!r:.80} is not {theirs!r:.80}"

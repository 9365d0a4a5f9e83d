"""PROTOCOL.md's judgement of single replies, by the arena and by the oracle alike: the rules one by one."""

from __future__ import annotations

import json

import pytest

from arena.protocol.exact_json import NESTED, NotJson, loads
from tests.players.fuzz import Case, arena_judgement, real_decisions
from tests.players.reply_oracle import ACCEPTED, ILLEGAL, MALFORMED, Judgement, judge

OFFERED = real_decisions()
PLAY = next(asked for asked in OFFERED if asked.decision.kind.value == "play" and len(asked.legal) >= 3)
CHANCELLOR = next(asked for asked in OFFERED if asked.decision.kind.value == "chancellor")
FIRST, SECOND = PLAY.legal[0], PLAY.legal[1]
DEEP = "[" * 30000 + "]" * 30000  # the reply: 60 KB, under the cap


def act(body: str) -> bytes:
    return ('{"type": "action", ' + body + "}").encode()


ACT_CASES = [
    (act('"index": 0'), Judgement(ACCEPTED, 0)),
    (act('"index": 1'), Judgement(ACCEPTED, 1)),
    (act('"index": -0'), Judgement(ACCEPTED, 0)),
    (act('"index": 999'), Judgement(ILLEGAL)),
    (act('"index": -1'), Judgement(ILLEGAL)),
    (act('"index": 18446744073709551616'), Judgement(ILLEGAL)),  # orjson reads it as a float
    (act('"index": 1' + "0" * 5000), Judgement(ILLEGAL)),
    (act('"index": true'), Judgement(MALFORMED)),
    (act('"index": false'), Judgement(MALFORMED)),
    (act('"index": 1.0'), Judgement(MALFORMED)),
    (act('"index": 1E0'), Judgement(MALFORMED)),
    (act('"index": 1e400'), Judgement(MALFORMED)),  # orjson refuses it whole
    (act('"index": "0"'), Judgement(MALFORMED)),
    (act('"index": null'), Judgement(MALFORMED)),
    (act(f'"index": {DEEP}'), Judgement(MALFORMED)),
    (act(f'"action": {json.dumps(SECOND)}'), Judgement(ACCEPTED, 1)),
    (act(f'"action": {json.dumps(dict(reversed(list(SECOND.items()))))}'), Judgement(ACCEPTED, 1)),  # key order
    (act(f'"action": {json.dumps({**FIRST, "note": "x"})}'), Judgement(ILLEGAL)),  # not equal to an element
    (act(f'"action": {json.dumps({**FIRST, "guess": None})}'), Judgement(ILLEGAL)),
    (act('"action": [0]'), Judgement(ILLEGAL)),  # not an object: an action not in legal
    (act('"action": "guard"'), Judgement(ILLEGAL)),
    (act('"action": {}'), Judgement(ILLEGAL)),
    (act('"action": {"card": "joker"}'), Judgement(ILLEGAL)),
    (act(f'"action": {DEEP}'), Judgement(ILLEGAL)),
    (act('"action": ' + "[" * 1000 + "]" * 1000), Judgement(ILLEGAL)),  # orjson reads it; repr would recurse
    (act(f'"index": 0, "action": {json.dumps(FIRST)}'), Judgement(MALFORMED)),
    (b'{"type": "action"}', Judgement(MALFORMED)),
    (act('"index": 0, "extra": [1, {"a": null}], "events": []'), Judgement(ACCEPTED, 0)),  # extra fields
    (act(f'"index": 0, "extra": {DEEP}'), Judgement(ACCEPTED, 0)),
    (b'{"index": 0, "type": "action"}', Judgement(ACCEPTED, 0)),
    (b'{"type": "ok", "index": 0}', Judgement(MALFORMED)),
    (b'{"index": 0}', Judgement(MALFORMED)),
    (f'{{"type": {DEEP}, "index": 0}}'.encode(), Judgement(MALFORMED)),
    (DEEP.encode(), Judgement(MALFORMED)),
    (b"[1, 2]", Judgement(MALFORMED)),
    (b"", Judgement(MALFORMED)),
    (b"\xff\xfe", Judgement(MALFORMED)),
    (act('"index": NaN'), Judgement(MALFORMED)),
    (act('"index": 0, "x": "\\ud800"'), Judgement(MALFORMED)),  # a lone surrogate is not Unicode text
    (act('"index": 0, "x": "\\ud83d\\ude00"'), Judgement(ACCEPTED, 0)),
    (b"\xef\xbb\xbf" + act('"index": 0'), Judgement(MALFORMED)),
    (act('"index": 0,'), Judgement(MALFORMED)),
    (act('"index": 0') + b" x", Judgement(MALFORMED)),
    (b' \t{"type":"action","index":0}\r ', Judgement(ACCEPTED, 0)),
    (b'{"type":"action","index":"x","index":0}', Judgement(ACCEPTED, 0)),  # a repeated key: the last stands
]


@pytest.mark.parametrize(("payload", "expected"), ACT_CASES, ids=[repr(p[:60]) for p, _ in ACT_CASES])
def test_a_reply_to_act_is_judged_as_the_protocol_says(payload: bytes, expected: Judgement) -> None:
    assert judge(payload, "act", PLAY.legal) == expected  # the oracle
    assert arena_judgement(Case(payload, "act", PLAY)) == expected


def test_a_chancellor_choice_is_judged_whole() -> None:
    choice = CHANCELLOR.legal[-1]
    reordered = json.dumps({"bottom": choice["bottom"], "keep": choice["keep"]})
    assert arena_judgement(Case(act(f'"action": {reordered}'), "act", CHANCELLOR)).index == len(CHANCELLOR.legal) - 1
    swapped = dict(choice, bottom=list(reversed(choice["bottom"])))
    index = CHANCELLOR.legal.index(swapped) if swapped in CHANCELLOR.legal else None
    verdict = arena_judgement(Case(act(f'"action": {json.dumps(swapped)}'), "act", CHANCELLOR))
    assert verdict == (Judgement(ACCEPTED, index) if index is not None else Judgement(ILLEGAL))
    played = arena_judgement(Case(act(f'"action": {json.dumps(PLAY.legal[0])}'), "act", CHANCELLOR))
    assert played == Judgement(ILLEGAL)


OK_CASES = [
    (b'{"type": "ok"}', Judgement(ACCEPTED)),
    (b'{"type": "ok", "note": [1, 2, {"x": null}], "n": 1e400}', Judgement(ACCEPTED)),  # extra fields ignored
    (f'{{"deep": {DEEP}, "type": "ok"}}'.encode(), Judgement(ACCEPTED)),
    (b'{"type": "action", "index": 0}', Judgement(MALFORMED)),
    (b'{"type": "OK"}', Judgement(MALFORMED)),
    (b'{"type": ["ok"]}', Judgement(MALFORMED)),
    (b"{}", Judgement(MALFORMED)),
    (b'"ok"', Judgement(MALFORMED)),
    (b'{"type": "ok"', Judgement(MALFORMED)),
]


@pytest.mark.parametrize("message_type", ["welcome", "match_start", "match_end", "shutdown"])
@pytest.mark.parametrize(("payload", "expected"), OK_CASES, ids=[repr(p[:40]) for p, _ in OK_CASES])
def test_every_other_message_wants_ok(message_type: str, payload: bytes, expected: Judgement) -> None:
    assert judge(payload, message_type, []) == expected
    assert arena_judgement(Case(payload, message_type, PLAY)) == expected


def test_a_fault_detail_shows_what_the_bot_sent_briefly_however_deep() -> None:
    from arena.protocol.replies import chosen_action, read_reply

    with pytest.raises(Exception) as caught:
        chosen_action(read_reply(act(f'"action": {DEEP}'), "act"), PLAY.decision, PLAY.view)
    detail = str(caught.value)
    assert "illegal" in detail and "an answer is a JSON object, not an array" in detail
    assert len(detail) < 300


@pytest.mark.parametrize(
    "text",
    ["[1,]", '{"a":1,}', "01", "[1 2]", '{"a" 1}', "{1:2}", "tru", "NaN", "-", "1.", ".5", '"\\x"', '"a\nb"', ""],
)
def test_the_exact_reader_refuses_what_is_not_json(text: str) -> None:
    with pytest.raises(NotJson):
        loads(text)


def test_the_exact_reader_keeps_the_top_levels_of_any_depth() -> None:
    value = loads('{"a": [1, 2.5, "x", true, null], "b": ' + "[" * 20000 + "]" * 20000 + "}")
    assert isinstance(value, dict) and value["a"] == [1, 2.5, "x", True, None]
    level = value["b"]
    for _ in range(7):
        assert isinstance(level, list) and len(level) == 1
        level = level[0]
    assert level is NESTED

"""Engine values in PROTOCOL.md's JSON shapes, and answers parsed back."""

from __future__ import annotations

import pytest

from arena.engine import Card, Keep, Observer, Play, project
from arena.protocol import MalformedAction, act_message, action_json, event_json, parse_action
from tests.engine.scenario import play, start


def test_an_act_message_has_every_field_of_the_protocol() -> None:
    match = start("2019", ["guard", "priest", "baron"], ["prince"])
    events = Observer(match, 0).take_events()
    message = act_message("swiss-r3-t2", match.view(0), 1000, events)
    assert message == {
        "type": "act",
        "match_id": "swiss-r3-t2",
        "round": 1,
        "decision": "play",
        "seat": 0,
        "hand": ["guard", "prince"],
        "players": [
            {"name": f"p{s}", "tokens": 0, "in_round": True, "protected": False, "disqualified": False, "discards": []}
            for s in range(3)
        ],
        "deck": 16,
        "removed_face_up": [],
        "deadline_ms": 1000,
        "legal": message["legal"],
        "events": [
            {"event": "round_start", "round": 1, "first": 0, "tokens": [0, 0, 0], "removed_face_up": [],
             "players_in": [0, 1, 2], "hand": ["guard"]}
        ],
    }  # fmt: skip
    assert message["legal"][:2] == [
        {"card": "guard", "target": 1, "guess": "spy"},
        {"card": "guard", "target": 1, "guess": "priest"},
    ]
    assert message["legal"][-3:] == [{"card": "prince", "target": t} for t in (0, 1, 2)]
    assert len(message["legal"]) == 2 * 9 + 3


def test_events_carry_private_fields_only_to_those_entitled() -> None:
    match = start("2019", ["priest", "king", "guard"], ["guard"])
    play(match, "priest", 1)
    played = match.records[-1]
    assert event_json(project(played, 0)) == {"event": "play", "seat": 0, "card": "priest", "target": 1, "seen": "king"}
    assert event_json(project(played, 2)) == {"event": "play", "seat": 0, "card": "priest", "target": 1}


def test_answers_round_trip_and_may_omit_nothing_they_need() -> None:
    for action in (Play(Card.GUARD, 2, Card.SPY), Play(Card.PRINCE, 0), Play(Card.HANDMAID)):
        assert parse_action(action_json(action)) == action
    keep = Keep(Card.KING, (Card.GUARD, Card.PRIEST))
    assert action_json(keep) == {"keep": "king", "bottom": ["guard", "priest"]}
    assert parse_action({"bottom": ["guard", "priest"], "keep": "king", "extra": 1}) == keep


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ([1, 2], "an answer is a JSON object, not an array"),
        ({"target": 1}, 'an answer has "card"'),
        ({"card": "joker"}, '"card": unknown card "joker"'),
        ({"card": "guard", "target": "1", "guess": "spy"}, '"target" must be a seat number'),
        ({"card": "guard", "target": True, "guess": "spy"}, '"target" must be a seat number'),
        ({"keep": "king", "bottom": "guard"}, '"bottom" must be a list'),
    ],
)
def test_malformed_answers_say_what_is_wrong(answer: object, message: str) -> None:
    with pytest.raises(MalformedAction, match=message):
        parse_action(answer)

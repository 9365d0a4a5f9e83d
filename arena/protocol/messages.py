"""The JSON shapes of PROTOCOL.md: engine values to wire objects and back. No sockets here."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import orjson

from arena.engine import (
    Action,
    Card,
    ChancellorEvent,
    DiscardEvent,
    Event,
    Faulted,
    Keep,
    MatchResult,
    OutEvent,
    Play,
    PlayerView,
    PlayEvent,
    RoundEnded,
    RoundStartEvent,
    View,
)
from arena.engine.memo import IdentityMemo

PROTOCOL_VERSION = 1

JSON = dict[str, Any]


class MalformedAction(ValueError):
    """An answer object that is not of any legal answer's shape."""


LABELS = tuple(card.label for card in Card)
"""Card names indexed by card, for the hot paths."""


@lru_cache(maxsize=8192)
def cards_json(cards: tuple[Card, ...]) -> list[str]:
    """Card names; the same hands and discards recur, so each tuple is converted once (read-only result)."""
    return [LABELS[card] for card in cards]


def seat_map_json(by_seat: Mapping[int, Card]) -> dict[str, str]:
    """Objects keyed by seat use the seat number written as a string, as JSON requires."""
    return {str(seat): card.label for seat, card in sorted(by_seat.items())}


player_json: IdentityMemo[PlayerView, JSON] = IdentityMemo(
    lambda player: {
        "name": player.name,
        "tokens": player.tokens,
        "in_round": player.in_round,
        "protected": player.protected,
        "disqualified": player.disqualified,
        "discards": cards_json(player.discards),
    }
)
"""A seat's entry in `players`, once per PlayerView: the engine reuses the views of unchanged seats."""


def action_json(action: Action) -> JSON:
    if isinstance(action, Keep):
        return {"keep": LABELS[action.keep], "bottom": cards_json(action.bottom)}
    answer: JSON = {"card": LABELS[action.card]}
    if action.target is not None:
        answer["target"] = action.target
    if action.guess is not None:
        answer["guess"] = LABELS[action.guess]
    return answer


legal_json: IdentityMemo[tuple[Action, ...], list[JSON]] = IdentityMemo(
    lambda legal: [action_json(action) for action in legal], size=100_000
)
"""The legal list as JSON, once per legal tuple: the engine reuses each one it builds."""


def shown(value: object, size: int = 80) -> str:
    """A decoded value as JSON for a fault's detail, cut to `size` characters; never fails, however deep or odd."""
    if type(value) is int:
        text = str(value)  # exact_json keeps no integer longer than Python converts
    else:
        try:
            orjson.dumps(value, default=repr)  # refuses what nests past 254 levels, where json.dumps would recurse
            text = json.dumps(value, default=repr, ensure_ascii=False)
        except orjson.JSONEncodeError:  # nested past orjson's limit, or an integer past 64 bits
            text = "(too deep or too large to show)"
    return text if len(text) <= size else text[:size] + "…"


def json_kind(value: object) -> str:
    """A decoded value's kind in JSON's words, for a bot author."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "an object"
    return "an array"


def parse_action(obj: object) -> Action:
    """An answer object as the engine's action; MalformedAction says what is wrong with it."""
    if not isinstance(obj, dict):
        raise MalformedAction(f"an answer is a JSON object, not {json_kind(obj)}")
    if "keep" in obj:
        keep, bottom = obj.get("keep"), obj.get("bottom")
        if not isinstance(bottom, list):
            raise MalformedAction('"bottom" must be a list of card names')
        return Keep(_card(keep, "keep"), tuple(_card(c, "bottom") for c in bottom))
    if "card" not in obj:
        raise MalformedAction('an answer has "card" (a play) or "keep" (a chancellor choice)')
    card = _card(obj["card"], "card")
    target = obj.get("target")
    if target is not None and (not isinstance(target, int) or isinstance(target, bool)):
        raise MalformedAction(f'"target" must be a seat number, not {shown(target)}')
    guess = obj.get("guess")
    return Play(card, target, None if guess is None else _card(guess, "guess"))


def _card(value: object, field: str) -> Card:
    if not isinstance(value, str):
        raise MalformedAction(f'"{field}" must be a card name, not {shown(value)}')
    try:
        return Card.from_label(value)
    except ValueError:
        raise MalformedAction(f'"{field}": unknown card {shown(value)}') from None


def events_json(events: Sequence[Event]) -> list[JSON]:
    """Events as JSON; an event object shared by several seats (see EventFeed) is encoded once."""
    return _encoded_event.many(events)


def event_json(event: Event) -> JSON:
    """One event as PROTOCOL.md's Events table has it; private fields only where present."""
    if isinstance(event, PlayEvent):
        out: JSON = {"event": "play", "seat": event.seat, "card": LABELS[event.card]}
        if event.target is not None:
            out["target"] = event.target
        if event.guess is not None:
            out["guess"] = LABELS[event.guess]
        if event.hit is not None:
            out["hit"] = event.hit
        if event.seen is not None:
            out["seen"] = LABELS[event.seen]
        if event.cards is not None:
            out["cards"] = seat_map_json(event.cards)
        if event.received is not None:
            out["received"] = LABELS[event.received]
        return out
    if isinstance(event, DiscardEvent):
        return {
            "event": "discard",
            "seat": event.seat,
            "card": LABELS[event.card],
            "cause": event.cause,
            "drew_set_aside": event.drew_set_aside,
        }
    if isinstance(event, OutEvent):
        return {
            "event": "out",
            "seat": event.seat,
            "card": LABELS[event.card],
            "cards": cards_json(event.cards),
            "cause": event.cause.value,
        }
    if isinstance(event, ChancellorEvent):
        return {"event": "chancellor", "seat": event.seat, "drew": event.drew, "returned": event.returned}
    if isinstance(event, RoundStartEvent):
        out = {
            "event": "round_start",
            "round": event.round,
            "first": event.first,
            "tokens": list(event.tokens),
            "removed_face_up": cards_json(event.removed_face_up),
            "players_in": list(event.players_in),
        }
        if event.hand is not None:
            out["hand"] = cards_json(event.hand)
        return out
    if isinstance(event, Faulted):
        return {"event": "fault", "seat": event.seat, "reason": event.reason.value, "detail": event.detail}
    if isinstance(event, RoundEnded):
        return {
            "event": "round_end",
            "round": event.round,
            "winners": list(event.winners),
            "spy_bonus": event.spy_bonus,
            "revealed": seat_map_json(event.revealed),
            "set_aside": None if event.set_aside is None else LABELS[event.set_aside],
            "tokens": list(event.tokens),
        }
    raise TypeError(f"not an event: {event!r}")


def act_message(match_id: str, view: View, deadline_ms: int, events: Sequence[Event]) -> JSON:
    if view.decision is None:
        raise ValueError(f"seat {view.seat} has no decision to take")
    return {
        "type": "act",
        "match_id": match_id,
        "round": view.round,
        "decision": view.decision.value,
        "seat": view.seat,
        "hand": cards_json(view.hand),
        "players": player_json.many(view.players),
        "deck": view.deck,
        "removed_face_up": cards_json(view.removed_face_up),
        "deadline_ms": deadline_ms,
        "legal": legal_json(view.legal),
        "events": events_json(events),
    }


def match_start_message(
    match_id: str, ruleset: str, seat: int, players: Sequence[str], target: int, events: Sequence[Event]
) -> JSON:
    return {
        "type": "match_start",
        "match_id": match_id,
        "ruleset": ruleset,
        "seat": seat,
        "players": list(players),
        "target": target,
        "events": events_json(events),
    }


def match_end_message(match_id: str, result: MatchResult, events: Sequence[Event]) -> JSON:
    return {
        "type": "match_end",
        "match_id": match_id,
        "winners": list(result.winners),
        "tokens": list(result.tokens),
        "ranking": [list(place) for place in result.ranking],
        "events": events_json(events),
    }


_encoded_event: IdentityMemo[Event, JSON] = IdentityMemo(event_json)

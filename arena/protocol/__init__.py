"""PROTOCOL.md in code, with no sockets: the messages the arena sends (engine values to JSON), the bot's
replies judged as its fault table says, and the handshake. The transports are arena.players.channels'."""

from arena.protocol.handshake import read_hello, shutdown_message, welcome_message
from arena.protocol.messages import (
    JSON,
    LABELS,
    PROTOCOL_VERSION,
    MalformedAction,
    act_message,
    action_json,
    cards_json,
    event_json,
    events_json,
    json_kind,
    match_end_message,
    match_start_message,
    parse_action,
    seat_map_json,
    shown,
)
from arena.protocol.replies import answered_action, chosen_action, decode, read_reply, snippet

__all__ = [
    "JSON",
    "LABELS",
    "PROTOCOL_VERSION",
    "MalformedAction",
    "act_message",
    "action_json",
    "answered_action",
    "cards_json",
    "chosen_action",
    "decode",
    "event_json",
    "events_json",
    "json_kind",
    "match_end_message",
    "match_start_message",
    "parse_action",
    "read_hello",
    "read_reply",
    "seat_map_json",
    "shown",
    "shutdown_message",
    "snippet",
    "welcome_message",
]

"""Replay lines (PROTOCOL.md, Replays): the full-information log as JSON Lines, and a reader."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from arena.engine import (
    Decided,
    Faulted,
    Match,
    MatchEnded,
    Record,
    RoundEnded,
    RoundStarted,
)
from arena.errors import ReplayError
from arena.protocol import action_json, cards_json, event_json

JSON = dict[str, Any]


def match_start_line(match: Match, match_id: str) -> JSON:
    return {
        "type": "match_start",
        "match_id": match_id,
        "ruleset": match.ruleset.name,
        "seed": match.seed,
        "players": list(match.players),
        "target": match.target,
    }


def record_line(record: Record, match_id: str) -> JSON | None:
    """The replay line for a record; None for records the replay leaves to re-simulation."""
    if isinstance(record, Decided):
        return {
            "type": "decision",
            "seat": record.seat,
            "decision": record.kind.value,
            "action": action_json(record.action),
        }
    if isinstance(record, RoundStarted):
        return {
            "type": "round_start",
            "round": record.round,
            "first": record.first,
            "set_aside": record.set_aside.label,
            "removed_face_up": cards_json(record.removed_face_up),
            "hands": [cards_json(hand) for hand in record.hands],
            "deck": cards_json(record.deck),
            "tokens": list(record.tokens),
        }
    if isinstance(record, (Faulted, RoundEnded)):
        line = event_json(record)
        return {"type": line.pop("event"), **line}
    if isinstance(record, MatchEnded):
        return {
            "type": "match_end",
            "match_id": match_id,
            "winners": list(record.winners),
            "tokens": list(record.tokens),
            "ranking": [list(place) for place in record.ranking],
        }
    return None


LINED = (Decided, RoundStarted, Faulted, RoundEnded, MatchEnded)
"""The records that have a line of their own (record_line); the others are left to re-simulation."""


def replay_lines(match: Match, match_id: str) -> Iterator[JSON]:
    yield match_start_line(match, match_id)
    for record in match.records:
        line = record_line(record, match_id)
        if line is not None:
            yield line


_ENCODER = json.JSONEncoder(separators=(", ", ": "))
"""json.dumps with these separators, without building an encoder for every line."""


def dump_line(line: JSON) -> str:
    return _ENCODER.encode(line) + "\n"


def write_lines(stream: IO[str], lines: Iterable[JSON]) -> None:
    for line in lines:
        stream.write(dump_line(line))


def write_replay(path: Path, match: Match, match_id: str) -> None:
    """Write atomically: a reader never sees half a replay."""
    partial = path.with_name(path.name + ".partial")
    with partial.open("w", encoding="utf-8") as stream:
        write_lines(stream, replay_lines(match, match_id))
    partial.replace(path)


@dataclass(frozen=True, slots=True)
class ReplayLine:
    number: int
    """1-based line number in the file."""
    data: JSON


def read_replay(path: Path) -> list[ReplayLine]:
    """Every non-blank line of a replay file, parsed; ReplayError names the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ReplayError(f"{path}: cannot read: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise ReplayError(f"{path}: not UTF-8 text ({error.reason})") from None
    return parse_replay(text.splitlines(), str(path))


def parse_replay(lines: Iterable[str], name: str = "<replay>") -> list[ReplayLine]:
    parsed: list[ReplayLine] = []
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise ReplayError(f"{name}:{number}: not JSON ({error.msg} at column {error.colno})") from None
        if not isinstance(data, dict) or not isinstance(data.get("type"), str):
            raise ReplayError(f'{name}:{number}: a replay line is a JSON object with a "type"')
        parsed.append(ReplayLine(number, data))
    if not parsed:
        raise ReplayError(f"{name}: empty replay")
    return parsed

"""A match as the replay viewer loads it: the engine's records in a few kilobytes, one small `.js` file per match.

The viewer (static/viewer.js) rebuilds every step from these records in the browser: the full table by
bookkeeping what each record says happened (no rules are decided there: who was hit, what was drawn, who
won is all in the records), and a seat's view and account by the entitlements of PROTOCOL.md, which the
browser tests check against the engine's own `Match.view` and `Observer` at every step.

Written by the worker that played the match (from `Match.records`, no re-simulation: a fraction of a
millisecond), or from a replay file for `arena report` and `arena replay --html`. A `.js` file loaded by
a `<script>` tag works from `file://`, where `fetch` of a data file does not.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from arena.engine import (
    Card,
    ChancellorResolved,
    Decided,
    Discarded,
    Faulted,
    Match,
    MatchEnded,
    Play,
    Played,
    Record,
    RoundEnded,
    RoundStarted,
    WentOut,
)
from arena.errors import ReplayMismatch
from arena.replay import ReplayLine, Resimulation

JSON = dict[str, Any]
FORMAT = 2
"""The layout of the data. 2: the seed as text (1 wrote it as a number, which JavaScript rounds to 53 bits); `arena
report` writes a file of an older layout again."""
SAFE_INTEGER = 2**53 - 1
"""JavaScript's Number.MAX_SAFE_INTEGER: an integer past it reaches a page's script rounded."""
KINDS = ("match_start", "round_start", "decision", "fault", "round_end", "match_end")
"""The replay lines that make a step of the viewer."""
CARDS = tuple(card.label for card in Card)
"""A card in the data is its index here."""
_INDEX = {card: index for index, card in enumerate(Card)}
GLOBAL = "ARENA_REPLAYS"
"""The data files add their match to this global, keyed by file name: `window.ARENA_REPLAYS[name] = {...}`."""


REPORT = "report"
"""The report's folder in a tournament's output."""
MATCHES = "matches"
"""The folder of the matches' viewer data in the report."""


def matches_folder(output: Path) -> Path:
    """Where the workers write each match's viewer data as they finish it."""
    return output / REPORT / MATCHES


def display_names(players: Sequence[str]) -> list[str]:
    """As the Narrator names seats: the configured name, with @seat only when two seats share it."""
    unique = len(set(players)) == len(players)
    return [name if unique else f"{name}@{index}" for index, name in enumerate(players)]


def file_stem(match_id: str) -> str:
    """A match's data file name without `.js`: its id with anything unsafe in a file name %-escaped."""
    return quote(match_id, safe="")


def match_data(match: Match, match_id: str, lines: Sequence[int] | None = None, error: str | None = None) -> JSON:
    """The viewer's data for a match played (or re-simulated) so far.

    `lines`: each step's replay line number, when it is not simply one step per line (a replay read from a
    file may hold lines the viewer skips, or stop at a line that breaks the rules)."""
    values = sorted(((card.label, value) for card, value in match.ruleset.values.items()), key=lambda item: item[1])
    data: JSON = {
        "format": FORMAT,
        "match_id": match_id,
        "ruleset": match.ruleset.name,
        "seed": str(match.seed),  # as text: a JavaScript number keeps 53 bits, a match's seed has up to 63
        "players": display_names(match.players),
        "target": match.target,
        "values": dict(values),
        "cards": list(CARDS),
        "records": [encoded for record in match.records if (encoded := encode(record)) is not None],
        "error": error,
    }
    if lines is not None:
        data["lines"] = list(lines)
    return data


def replay_data(lines: Sequence[ReplayLine]) -> JSON | None:
    """The viewer's data re-simulated from a replay file; a replay that breaks the rules gives the steps
    before the bad line, with the error. None when not even its first line starts a match."""
    resimulation = Resimulation(lines)
    numbers: list[int] = []
    error = None
    try:
        for line, _ in resimulation.steps():
            if line.data["type"] in KINDS:
                numbers.append(line.number)
    except ReplayMismatch as mismatch:
        where = "end of file" if mismatch.line is None else f"line {mismatch.line}"
        error = f"{where}: {mismatch.message}"
    if resimulation.match is None:
        return None
    plain = error is None and numbers == list(range(1, len(numbers) + 1))
    return match_data(resimulation.match, resimulation.match_id, None if plain else numbers, error)


def script(data: JSON) -> str:
    """The data file's text: one statement adding the match to the viewer's global."""
    return f"{_assignment(str(data['match_id']))}{embedded_json(data)};\n"


def is_current(path: Path, match_id: str) -> bool:
    """The match's data file is there, in this FORMAT: only its first bytes are read (a report has thousands)."""
    head = _assignment(match_id) + json.dumps({"format": FORMAT}, separators=(",", ":"))[:-1] + ","
    try:
        with path.open(encoding="utf-8") as file:
            return file.read(len(head)) == head
    except (OSError, UnicodeDecodeError):
        return False


def _assignment(match_id: str) -> str:
    return f"(window.{GLOBAL} = window.{GLOBAL} || {{}})[{json.dumps(file_stem(match_id))}] = "


def embedded_json(value: Any) -> str:
    """JSON for a page's script: any integer JavaScript would round (a seed) as text, and `<`, `>` and `&` escaped,
    so the same text can stand inside an inline `<script>` element (`arena replay --html`) without a bot's name or a
    fault's detail closing it."""
    text = json.dumps(_exact(value), separators=(",", ":"), ensure_ascii=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _exact(value: Any) -> Any:
    """`value` with every integer past SAFE_INTEGER (either sign) as its decimal text."""
    if isinstance(value, dict):
        return {key: _exact(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_exact(item) for item in value]
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > SAFE_INTEGER:
        return str(value)
    return value


def write_match_data(folder: Path, match: Match, match_id: str) -> Path:
    """The match's data file in `folder` (OUTPUT/report/matches), written whole or not at all."""
    from arena.store.disk import write_atomically

    path = folder / f"{file_stem(match_id)}.js"
    write_atomically(path, script(match_data(match, match_id)))
    return path


def _card(card: Card | None) -> int | None:
    return None if card is None else _INDEX[card]


def _cards(cards: Sequence[Card]) -> list[int]:
    return [_INDEX[card] for card in cards]


def _pairs(pairs: Sequence[tuple[int, Card]]) -> list[list[int]]:
    return [[seat, _INDEX[card]] for seat, card in pairs]


def encode(record: Record) -> list[Any] | None:
    """One record as a short list, its type a letter first; None for none the viewer uses."""
    if isinstance(record, Decided):
        action = record.action
        return ["D", record.seat, _INDEX[action.card]] if isinstance(action, Play) else ["K", record.seat]
    if isinstance(record, Played):
        fields = [
            record.target,
            _card(record.guess),
            record.hit,
            _card(record.seen),
            _pairs(record.compared),
            _pairs(record.received),
        ]
        while fields and fields[-1] in (None, []):
            fields.pop()  # the usual play has no private fields: its list stops early
        return ["P", record.seat, _INDEX[record.card], *fields]
    if isinstance(record, Discarded):
        return ["X", record.seat, _INDEX[record.card], _INDEX[record.drew], int(record.drew_set_aside)]
    if isinstance(record, ChancellorResolved):
        return ["C", record.seat, _cards(record.drawn), _card(record.kept), _cards(record.bottom)]
    if isinstance(record, WentOut):
        return ["O", record.seat, _cards(record.cards), record.cause.value]
    if isinstance(record, Faulted):
        return ["F", record.seat, record.reason.value, record.detail]
    if isinstance(record, RoundStarted):
        return [
            "R",
            record.round,
            record.first,
            list(record.players_in),
            list(record.tokens),
            _INDEX[record.set_aside],
            _cards(record.removed_face_up),
            [_cards(hand) for hand in record.hands],
            _cards(record.deck),
        ]
    if isinstance(record, RoundEnded):
        return [
            "E",
            record.round,
            list(record.winners),
            record.spy_bonus,
            _pairs(sorted(record.revealed.items())),
            _card(record.set_aside),
            list(record.tokens),
        ]
    if isinstance(record, MatchEnded):
        return ["M", list(record.winners), list(record.tokens), [list(place) for place in record.ranking]]
    return None

"""What each move did, in words, as structured lines the viewer renders (cards and seats marked up).

The phrasing follows arena.replay.Narrator. A line is a list of parts: plain text, `{"card": label}` or
`{"seat": n}`, so the page can draw a card as a card and a test can read every card a line shows. The
full-information account narrates the engine's records; a seat's account narrates only the events
`arena.engine.project` gives that seat, so a private field appears exactly where PROTOCOL.md entitles it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from arena.engine import (
    Card,
    ChancellorEvent,
    ChancellorResolved,
    Discarded,
    DiscardEvent,
    Event,
    Faulted,
    MatchEnded,
    OutCause,
    OutEvent,
    Played,
    PlayEvent,
    Record,
    RoundEnded,
    RoundStarted,
    RoundStartEvent,
    WentOut,
    project,
)
from arena.replay.account import OUT_CAUSES

Part = str | dict[str, Any]
Line = list[Part]

_NO_TARGET = (Card.GUARD, Card.PRIEST, Card.BARON, Card.KING)


def card(value: Card) -> Part:
    return {"card": value.label}


def seat(value: int) -> Part:
    return {"seat": value}


def cards(values: Iterable[Card]) -> list[Part]:
    """Cards separated by commas; "nothing" for none."""
    out: list[Part] = []
    for value in values:
        if out:
            out.append(", ")
        out.append(card(value))
    return out or ["nothing"]


def seats(values: Sequence[int]) -> list[Part]:
    out: list[Part] = []
    for value in values:
        if out:
            out.append(", ")
        out.append(seat(value))
    return out or ["nobody"]


def tokens_line(tokens: Sequence[int]) -> Line:
    line: Line = ["tokens: "]
    for s, count in enumerate(tokens):
        line += [", " if s else "", seat(s), f" {count}"]
    return line


def record_lines(record: Record, viewer: int | None) -> list[Line]:
    """The lines for one record: in full (`viewer` None), or as seat `viewer` is entitled to see it."""
    if isinstance(record, MatchEnded):
        return _match_ended(record)  # public: every seat gets winners, tokens and ranking in match_end
    if viewer is None:
        return _full(record)
    event = project(record, viewer)
    return [] if event is None else _event(event, viewer)


def _full(record: Record) -> list[Line]:
    if isinstance(record, RoundStarted):
        lines = _round_start(record.round, record.first, record.removed_face_up)
        dealt: Line = ["dealt: "]
        for index, s in enumerate(record.players_in):
            dealt += [", " if index else "", seat(s), " ", *cards(record.hands[s])]
        lines.append(dealt)
        lines.append(["set aside face down: ", card(record.set_aside)])
        return lines
    if isinstance(record, Played):
        compared = dict(record.compared) or None
        received = dict(record.received) or None
        return [
            _play(record.seat, record.card, record.target, record.guess, record.hit, record.seen, compared, received)
        ]
    if isinstance(record, Discarded):
        source = "the set-aside card" if record.drew_set_aside else "a new card"
        return [[seat(record.seat), " discards ", card(record.card), f" and draws {source}: ", card(record.drew)]]
    if isinstance(record, ChancellorResolved):
        if not record.drawn:
            return [["the deck is empty: the chancellor draws nothing"]]
        assert record.kept is not None
        return [
            [
                seat(record.seat),
                " draws ",
                *cards(record.drawn),
                "; keeps ",
                card(record.kept),
                "; puts ",
                *cards(record.bottom),
                " under the deck",
            ]
        ]
    if isinstance(record, WentOut):
        return [_out(record.seat, record.cause, record.cards)]
    if isinstance(record, Faulted):
        return [_fault(record)]
    if isinstance(record, RoundEnded):
        return _round_ended(record)
    return []  # a decision shows through the records it causes


def _event(event: Event, viewer: int) -> list[Line]:
    if isinstance(event, RoundStartEvent):
        lines = _round_start(event.round, event.first, event.removed_face_up)
        if event.hand is None:
            lines.append([seat(viewer), " (you) is not dealt in"])
        else:
            lines.append([seat(viewer), " (you) is dealt ", *cards(event.hand)])
        return lines
    if isinstance(event, PlayEvent):
        received = None if event.received is None else {viewer: event.received}
        return [_play(event.seat, event.card, event.target, event.guess, event.hit, event.seen, event.cards, received)]
    if isinstance(event, DiscardEvent):
        source = "the set-aside card" if event.drew_set_aside else "a new card"
        return [[seat(event.seat), " discards ", card(event.card), f" and draws {source}"]]
    if isinstance(event, ChancellorEvent):
        if not event.drew:
            return [["the deck is empty: the chancellor draws nothing"]]
        return [[seat(event.seat), f" draws {event.drew}, keeps one and puts {event.returned} under the deck"]]
    if isinstance(event, OutEvent):
        return [_out(event.seat, event.cause, event.cards)]
    if isinstance(event, Faulted):
        return [_fault(event)]
    return _round_ended(event)


def _round_start(number: int, first: int, face_up: Sequence[Card]) -> list[Line]:
    lines: list[Line] = [[f"Round {number}: ", seat(first), " starts"]]
    if face_up:
        lines.append(["face up, out of the round: ", *cards(face_up)])
    return lines


def _play(
    who: int,
    played: Card,
    target: int | None,
    guess: Card | None,
    hit: bool | None,
    looked: Card | None = None,
    compared: Mapping[int, Card] | None = None,
    received: Mapping[int, Card] | None = None,
) -> Line:
    """A play, with whichever private fields the narrator may show: what a priest saw, the cards a baron
    compared, what each trader received from a king (both in full, only one's own in a seat's account)."""
    line: Line = [seat(who), " plays ", card(played)]
    if target is None:
        if played in _NO_TARGET:
            return [*line, ": everyone else is protected, no effect"]
        return [*line, ": protected until their next turn"] if played is Card.HANDMAID else line
    line += [" on ", "themself" if target == who else seat(target)]
    if played is Card.GUARD:
        assert guess is not None
        return [*line, ", naming ", card(guess), ": right" if hit else ": wrong"]
    if played is Card.PRIEST:
        return line if looked is None else [*line, " and sees ", card(looked)]
    if played is Card.BARON:
        if not compared:
            return [*line, ": they compare hands in secret"]
        line.append(": ")
        for index, (s, value) in enumerate(sorted(compared.items())):
            line += [", " if index else "", seat(s), " ", card(value)]
        return line
    if played is Card.KING:
        line.append(": they trade hands")
        for index, (s, value) in enumerate(sorted((received or {}).items())):
            line += ["; " if index else ", and ", seat(s), " gets ", card(value)]
        return line
    return line


def _out(who: int, cause: OutCause, shown: Sequence[Card]) -> Line:
    return [seat(who), f" is out ({OUT_CAUSES[cause]}), showing ", *cards(shown)]


def _fault(record: Faulted) -> Line:
    return ["! ", seat(record.seat), f" faults ({record.reason.value}): {record.detail}"]


def _round_ended(record: RoundEnded) -> list[Line]:
    lines: list[Line] = []
    if record.revealed:
        shown: Line = ["showdown: "]
        for index, (s, value) in enumerate(sorted(record.revealed.items())):
            shown += [", " if index else "", seat(s), " ", card(value)]
        lines.append(shown)
    how = " wins" if len(record.winners) == 1 else " win"
    lines.append([f"round {record.round}: ", *seats(record.winners), how, " the round"])
    if record.spy_bonus is not None:
        lines.append(["spy bonus: ", seat(record.spy_bonus)])
    if record.set_aside is not None:
        lines.append(["the set-aside card was ", card(record.set_aside)])
    lines.append(tokens_line(record.tokens))
    return lines


def _match_ended(record: MatchEnded) -> list[Line]:
    how = " wins" if len(record.winners) == 1 else " win"
    lines: list[Line] = [["Match over: ", *seats(record.winners), how]]
    for place, group in enumerate(record.ranking, start=1):
        line: Line = [f"{place}. "]
        for index, s in enumerate(group):
            line += [", " if index else "", seat(s), f" ({record.tokens[s]})"]
        lines.append(line)
    return lines

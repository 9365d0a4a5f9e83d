"""What one seat may know: the log projected into PROTOCOL.md's events, and a per-seat observer.

Every private field is filled here and only here, from the entitlement table of PROTOCOL.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from arena.engine.cards import Card
from arena.engine.frozen import frozen
from arena.engine.match import Match
from arena.engine.records import (
    ChancellorResolved,
    Discarded,
    Faulted,
    OutCause,
    Played,
    Record,
    RoundEnded,
    RoundStarted,
    WentOut,
)
from arena.engine.views import View


@frozen
class RoundStartEvent:
    round: int
    first: int
    tokens: tuple[int, ...]
    removed_face_up: tuple[Card, ...]
    players_in: tuple[int, ...]
    hand: tuple[Card, ...] | None
    """Your dealt card; None when you were not dealt in."""


@frozen
class PlayEvent:
    seat: int
    card: Card
    target: int | None = None
    guess: Card | None = None
    hit: bool | None = None
    seen: Card | None = None
    cards: Mapping[int, Card] | None = None
    received: Card | None = None


@frozen
class DiscardEvent:
    seat: int
    card: Card
    drew_set_aside: bool
    cause: str = "prince"


@frozen
class ChancellorEvent:
    seat: int
    drew: int
    returned: int


@frozen
class OutEvent:
    seat: int
    card: Card
    """The card revealed (the first of `cards`)."""
    cards: tuple[Card, ...]
    """Every card revealed: more than one only when a fault ends the seat's own turn."""
    cause: OutCause


Event = RoundStartEvent | PlayEvent | DiscardEvent | ChancellorEvent | OutEvent | Faulted | RoundEnded
"""Faults and round ends are public: their records are their events."""


def _played(record: Played, seat: int) -> PlayEvent:
    seen = record.seen if record.seat == seat else None
    compared = record.compared
    cards = dict(compared) if compared and (compared[0][0] == seat or compared[1][0] == seat) else None
    received = None
    for trader, card in record.received:
        if trader == seat:
            received = card
    return PlayEvent(record.seat, record.card, record.target, record.guess, record.hit, seen, cards, received)


def _round_started(record: RoundStarted, seat: int) -> RoundStartEvent:
    hand = record.hands[seat] if seat in record.players_in else None
    return RoundStartEvent(record.round, record.first, record.tokens, record.removed_face_up, record.players_in, hand)


def _public(record: Faulted | RoundEnded, seat: int) -> Faulted | RoundEnded:
    return record


_PROJECTIONS: dict[type, Callable[[Any, int], Event]] = {
    Played: _played,
    Discarded: lambda record, seat: DiscardEvent(record.seat, record.card, record.drew_set_aside),
    WentOut: lambda record, seat: OutEvent(record.seat, record.cards[0], record.cards, record.cause),
    ChancellorResolved: lambda record, seat: ChancellorEvent(record.seat, len(record.drawn), len(record.bottom)),
    RoundStarted: _round_started,
    Faulted: _public,
    RoundEnded: _public,
}


def project(record: Record, seat: int) -> Event | None:
    """The event `seat` is entitled to for `record`, or None when the record is not an event."""
    projection = _PROJECTIONS.get(type(record))
    return None if projection is None else projection(record, seat)


def _entitled(record: Record) -> tuple[int, ...]:
    """The seats that see more of `record` than everyone else does."""
    if isinstance(record, Played):
        if record.seen is not None:
            return (record.seat,)
        return tuple(seat for seat, _ in record.compared or record.received)
    if isinstance(record, RoundStarted):
        return record.players_in
    return ()


class EventFeed:
    """A match's events for all its observers: each record is projected once for every seat it shows
    nothing private to, and once more for each seat entitled to more. Share one feed between a
    match's observers."""

    def __init__(self, match: Match) -> None:
        self._match = match
        self._shared: list[tuple[Event | None, tuple[int, ...]]] = []
        """Per record: its public event (None when it is no event) and the seats entitled to more."""
        self._private: dict[tuple[int, int], Event] = {}
        """(record index, seat): the event of a seat entitled to more, made once for all its observers."""
        self._last: dict[int, tuple[int, int, list[Event]]] = {}
        """Per seat, the events last taken (from, to, events): a player and the judge of its moves take the same."""

    def events(self, seat: int, start: int, end: int) -> list[Event]:
        """The events of records start to end for `seat` (the same list for the same ones asked again: read it, never
        change it)."""
        last = self._last.get(seat)
        if last is not None and last[0] == start and last[1] == end:
            return last[2]
        log, shared = self._match.records, self._shared
        for record in log[len(shared) : end]:
            projection = _PROJECTIONS.get(type(record))
            shared.append((None, ()) if projection is None else (projection(record, -1), _entitled(record)))
        events: list[Event] = []
        for index in range(start, end):
            event, entitled = shared[index]
            if seat in entitled:
                private = self._private.get((index, seat))
                if private is None:
                    record = log[index]
                    private = self._private[index, seat] = _PROJECTIONS[type(record)](record, seat)
                events.append(private)
            elif event is not None:
                events.append(event)
        self._last[seat] = (start, end, events)
        return events


class Observer:
    """One seat's window on a match: its view now and the events since it last looked."""

    def __init__(self, match: Match, seat: int, feed: EventFeed | None = None) -> None:
        match.view(seat)  # validates the seat
        self._match = match
        self.seat = seat
        self._feed = feed or EventFeed(match)
        self._cursor = 0

    def view(self) -> View:
        return self._match.view(self.seat)

    def twin(self) -> Observer:
        """Another observer of the same seat on the same feed, from the match's start: one that reads everything
        the seat was told (a judge of its moves) while this one goes on for its player."""
        return Observer(self._match, self.seat, self._feed)

    def take_events(self) -> list[Event]:
        """Events since the previous call, oldest first."""
        start, self._cursor = self._cursor, len(self._match.records)
        return self._feed.events(self.seat, start, self._cursor)

"""What one seat may know: the log projected into PROTOCOL.md's events, and a per-seat observer.

Every private field is filled here and only here, from the entitlement table of PROTOCOL.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from arena.engine.cards import Card
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


@dataclass(frozen=True, slots=True)
class RoundStartEvent:
    round: int
    first: int
    tokens: tuple[int, ...]
    removed_face_up: tuple[Card, ...]
    players_in: tuple[int, ...]
    hand: tuple[Card, ...] | None
    """Your dealt card; None when you were not dealt in."""


@dataclass(frozen=True, slots=True)
class PlayEvent:
    seat: int
    card: Card
    target: int | None = None
    guess: Card | None = None
    hit: bool | None = None
    seen: Card | None = None
    cards: Mapping[int, Card] | None = None
    received: Card | None = None


@dataclass(frozen=True, slots=True)
class DiscardEvent:
    seat: int
    card: Card
    drew_set_aside: bool
    cause: str = "prince"


@dataclass(frozen=True, slots=True)
class ChancellorEvent:
    seat: int
    drew: int
    returned: int


@dataclass(frozen=True, slots=True)
class OutEvent:
    seat: int
    card: Card
    """The card revealed (the first of `cards`)."""
    cards: tuple[Card, ...]
    """Every card revealed: more than one only when a fault ends the seat's own turn."""
    cause: OutCause


Event = RoundStartEvent | PlayEvent | DiscardEvent | ChancellorEvent | OutEvent | Faulted | RoundEnded
"""Faults and round ends are public: their records are their events."""


def project(record: Record, seat: int) -> Event | None:
    """The event `seat` is entitled to for `record`, or None when the record is not an event."""
    if isinstance(record, Played):
        seen = record.seen if record.seat == seat else None
        compared = dict(record.compared)
        cards = compared if seat in compared else None
        received = dict(record.received).get(seat)
        return PlayEvent(record.seat, record.card, record.target, record.guess, record.hit, seen, cards, received)
    if isinstance(record, Discarded):
        return DiscardEvent(record.seat, record.card, record.drew_set_aside)
    if isinstance(record, WentOut):
        return OutEvent(record.seat, record.cards[0], record.cards, record.cause)
    if isinstance(record, ChancellorResolved):
        return ChancellorEvent(record.seat, len(record.drawn), len(record.bottom))
    if isinstance(record, RoundStarted):
        hand = record.hands[seat] if seat in record.players_in else None
        return RoundStartEvent(
            record.round, record.first, record.tokens, record.removed_face_up, record.players_in, hand
        )
    if isinstance(record, (Faulted, RoundEnded)):
        return record
    return None


class Observer:
    """One seat's window on a match: its view now and the events since it last looked."""

    def __init__(self, match: Match, seat: int) -> None:
        match.view(seat)  # validates the seat
        self._match = match
        self.seat = seat
        self._cursor = 0

    def view(self) -> View:
        return self._match.view(self.seat)

    def take_events(self) -> list[Event]:
        """Events since the previous call, oldest first."""
        log = self._match.records
        start, self._cursor = self._cursor, len(log)
        events = (project(record, self.seat) for record in log[start : self._cursor])
        return [event for event in events if event is not None]

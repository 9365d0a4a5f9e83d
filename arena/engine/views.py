"""Snapshots of a match: one seat's view (safe to show that seat) and the full table (never shown)."""

from __future__ import annotations

from arena.engine.actions import Action, DecisionKind
from arena.engine.cards import Card
from arena.engine.frozen import frozen


@frozen
class PlayerView:
    """A seat as everyone sees it."""

    name: str
    tokens: int
    in_round: bool
    protected: bool
    disqualified: bool
    discards: tuple[Card, ...]
    """Played and discarded cards in order, oldest first, with the hand revealed on going out."""


@frozen
class View:
    """What one seat may know of the table now: the content of an `act` message."""

    seat: int
    round: int
    decision: DecisionKind | None
    """The decision this seat must take now, if any."""
    hand: tuple[Card, ...]
    players: tuple[PlayerView, ...]
    deck: int
    removed_face_up: tuple[Card, ...]
    legal: tuple[Action, ...]


@frozen
class TableState:
    """Everything on the table, secrets included."""

    round: int
    current: int | None
    hands: tuple[tuple[Card, ...], ...]
    discards: tuple[tuple[Card, ...], ...]
    deck: tuple[Card, ...]
    """Top card first."""
    set_aside: Card | None
    removed_face_up: tuple[Card, ...]
    in_round: tuple[bool, ...]
    protected: tuple[bool, ...]
    disqualified: tuple[bool, ...]
    tokens: tuple[int, ...]

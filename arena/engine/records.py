"""The full-information log of a match: everything that happened, secrets included.

Records never leave the engine towards a bot; `observe` projects them into what one seat may know.
The replay format is written from these records.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum, StrEnum

from arena.engine.actions import Action, DecisionKind
from arena.engine.cards import Card
from arena.engine.frozen import frozen


class FaultReason(StrEnum):
    """PROTOCOL.md's fault kinds; a StrEnum, so that a reason is its name in JSON, SQLite and on a page."""

    HANDSHAKE = "handshake"
    CRASH = "crash"
    LIMIT = "limit"
    TIMEOUT = "timeout"
    MALFORMED = "malformed"
    ILLEGAL = "illegal"


class OutCause(Enum):
    GUARD = "guard"
    BARON = "baron"
    PRINCESS = "princess"
    FAULT = "fault"


@frozen
class RoundStarted:
    round: int
    first: int
    players_in: tuple[int, ...]
    tokens: tuple[int, ...]
    set_aside: Card
    removed_face_up: tuple[Card, ...]
    hands: tuple[tuple[Card, ...], ...]
    deck: tuple[Card, ...]
    """Top card first."""


@frozen
class Decided:
    seat: int
    kind: DecisionKind
    action: Action


@frozen
class Played:
    seat: int
    card: Card
    target: int | None = None
    guess: Card | None = None
    hit: bool | None = None
    seen: Card | None = None
    """Priest: the target's card, known to the priest's player only."""
    compared: tuple[tuple[int, Card], ...] = ()
    """Baron: (seat, card) of both players compared, known to those two only."""
    received: tuple[tuple[int, Card], ...] = ()
    """King: (seat, card it received) for both traders, each knowing its own."""


@frozen
class Discarded:
    """A Prince made `seat` discard `card` and draw `drew` (the set-aside card if the deck was empty)."""

    seat: int
    card: Card
    drew: Card
    drew_set_aside: bool


@frozen
class ChancellorResolved:
    seat: int
    drawn: tuple[Card, ...]
    kept: Card | None
    bottom: tuple[Card, ...]
    """Put under the deck in this order; the last ends lowest."""


@frozen
class WentOut:
    seat: int
    cards: tuple[Card, ...]
    """What went face up with the elimination: the hand, or the Princess a Prince discarded."""
    cause: OutCause


@frozen
class Faulted:
    seat: int
    reason: FaultReason
    detail: str


@frozen
class RoundEnded:
    round: int
    winners: tuple[int, ...]
    spy_bonus: int | None
    revealed: Mapping[int, Card]
    """Each hand shown at a showdown; empty when the round ended with one player left."""
    set_aside: Card | None
    tokens: tuple[int, ...]


@frozen
class MatchEnded:
    winners: tuple[int, ...]
    tokens: tuple[int, ...]
    ranking: tuple[tuple[int, ...], ...]


Record = RoundStarted | Decided | Played | Discarded | ChancellorResolved | WentOut | Faulted | RoundEnded | MatchEnded

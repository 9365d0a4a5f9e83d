"""One seat's view as a fixed-length vector, and every answer as one index of a fixed discrete space.

The same encoding serves a training environment (from the engine's View and events) and a trained policy in a
tournament (from the protocol's `act` message): both are what the seat is told at its turn, and both give the
same vector, so a policy plays in the arena on exactly what it was trained on. docs/training.md lists the fields.

Seats are numbered relative to the seat observing: 0 is itself, 1 the next seat up, and so on. The observation
has the same length at every table size of a ruleset, so that one policy plays at any table: for C card types
(the ruleset's, lowest value first) and M the ruleset's largest table,

    hand          C   how many of each card the seat holds
    decision      2   a play is due; a Chancellor's keep is due
    deck          1   cards left in the deck
    face up       C   the 2-player round's face-up cards, by type
    per seat, M times, relative order (the seats a smaller table lacks are all zero):
      seated      1   this seat is at the table
      tokens      1
      in round    1
      protected   1
      out         1   disqualified from the match (a fault)
      discards    C   face-up discards of the round, by type
      seen        C   the card this seat was privately shown the other holds since its previous turn
                      (its Priest, a Baron it took part in), one-hot; one shown before a round's end is
                      still told at the first turn of the next, as the protocol's events tell it

The action space, per ruleset: every play (card, target relative to the actor or none, guess) and every
Chancellor choice (the card kept, and the first card put under the deck: the hand decides the other), whether
legal or not; the mask says which are legal now.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from typing import Any

import numpy as np

from arena.engine import (
    Action,
    Card,
    DecisionKind,
    Event,
    Keep,
    PlayerView,
    PlayEvent,
    Ruleset,
    View,
    get_ruleset,
)
from arena.protocol import parse_action

Key = tuple[Any, ...]
"""An answer with its target relative to the actor: ("play", card, target | None, guess | None), or ("keep", card
kept, first card put under the deck). Of a keep's three cards, the one kept and the one put under first tell the
third; a keep decision always puts one card or two under the deck."""

SEAT_FIELDS = 5
"""seated, tokens, in round, protected, out."""


class ActionSpace:
    """The fixed discrete answers of one ruleset, at its largest table."""

    def __init__(self, ruleset: Ruleset) -> None:
        self.ruleset = ruleset
        seats = range(ruleset.max_players)
        keys: list[Key] = []
        for card in ruleset.cards:
            if card is Card.GUARD:
                keys.append(("play", card, None, None))
                keys += [("play", card, target, guess) for target in seats for guess in ruleset.guard_guesses]
            elif card in (Card.PRIEST, Card.BARON, Card.KING):
                keys.append(("play", card, None, None))
                keys += [("play", card, target, None) for target in seats]
            elif card is Card.PRINCE:
                keys += [("play", card, target, None) for target in seats]
            else:
                keys.append(("play", card, None, None))
        if Card.CHANCELLOR in ruleset.counts:
            keys += [("keep", keep, first) for keep in ruleset.cards for first in ruleset.cards]
        self.keys = tuple(keys)
        self.size = len(keys)
        self._index = {key: index for index, key in enumerate(keys)}
        self._absolute: dict[tuple[int, int], dict[Action, int]] = {}
        self._legal: dict[tuple[int, int, int], LegalAnswers] = {}

    def index_of(self, action: Action, seat: int, players: int) -> int:
        """The index of an answer of `seat` at a table of `players`."""
        return self.indices((action,), seat, players)[0]

    def indices(self, actions: Iterable[Action], seat: int, players: int) -> list[int]:
        """The indices of answers of `seat` at a table of `players` (remembered: a mask is made at every turn)."""
        known = self._absolute.get((seat, players))
        if known is None:
            known = self._absolute[seat, players] = {}
        found = []
        for action in actions:
            index = known.get(action)
            if index is None:
                if isinstance(action, Keep):
                    key: Key = ("keep", action.keep, action.bottom[0])
                else:
                    target = None if action.target is None else (action.target - seat) % players
                    key = ("play", action.card, target, action.guess)
                index = known[action] = self._index[key]
            found.append(index)
        return found

    def mask(self, actions: Sequence[Action], seat: int, players: int) -> np.ndarray:
        """1 at the index of each of these answers, 0 elsewhere."""
        return self._mask(self.indices(actions, seat, players))

    def _mask(self, indices: list[int]) -> np.ndarray:
        mask = np.zeros(self.size, dtype=np.int8)
        mask[indices] = 1
        return mask

    def legal(self, legal: tuple[Action, ...], seat: int, players: int) -> LegalAnswers:
        """The mask and the answers by index of one of the engine's legal tuples. The engine hands out the same
        tuple for the same hand and targets (a bounded number of them), so these are made once for it; the tuple
        is kept, so that its id stays its own."""
        key = (id(legal), seat, players)
        made = self._legal.get(key)
        if made is None or made.legal is not legal:
            indices = self.indices(legal, seat, players)
            made = self._legal[key] = LegalAnswers(
                legal, seat, self._mask(indices), dict(zip(indices, legal, strict=True))
            )
        return made


class LegalAnswers:
    """One legal tuple of one seat in the action space."""

    __slots__ = ("by_index", "legal", "mask", "seat")

    def __init__(self, legal: tuple[Action, ...], seat: int, mask: np.ndarray, by_index: dict[int, Action]) -> None:
        self.legal = legal
        self.seat = seat
        self.mask = mask
        """Shared: a caller gets a copy."""
        self.by_index = by_index

    def at(self, index: int) -> Action | None:
        """The answer that `index` names; None if the mask does not allow it. An index outside the space is no
        answer at all, and a ValueError."""
        if not 0 <= index < len(self.mask):
            raise ValueError(f"action {index} is outside the action space (0 to {len(self.mask) - 1})")
        return self.by_index.get(index)


@cache
def action_space(ruleset: str) -> ActionSpace:
    return ActionSpace(get_ruleset(ruleset))


def observation_size(ruleset: str = "2019") -> int:
    """The observation's length: one for every table size of the ruleset."""
    return layout(ruleset).size


def observation_high(ruleset: Ruleset) -> float:
    """A bound of every field: no count, token total or deck size exceeds the number of cards."""
    return float(len(ruleset.deck))


class Layout:
    """Where each field of one ruleset's observation is, in the observation and in a Table's buffer."""

    def __init__(self, ruleset: Ruleset) -> None:
        self.index = {card: position for position, card in enumerate(ruleset.cards)}
        self.cards = len(self.index)
        self.max_players = ruleset.max_players
        self.public_size = SEAT_FIELDS + self.cards
        self.segment_size = self.public_size + self.cards
        self.size = 2 * self.cards + 3 + ruleset.max_players * self.segment_size
        self._gathers: dict[int, tuple[np.ndarray, ...]] = {}

    def buffer(self, players: int) -> tuple[int, int, int, int]:
        """A Table's buffer at a table of `players`: where the public fields, the zeros and the sights start, and
        its size."""
        public = 2 * self.cards + 3
        zeros = public + players * self.public_size
        seen = zeros + self.segment_size
        return public, zeros, seen, seen + players * players * self.cards

    def gathers(self, players: int) -> tuple[np.ndarray, ...]:
        """Per seat at a table of `players`, where each field of its observation is in a Table's buffer."""
        made = self._gathers.get(players)
        if made is None:
            made = self._gathers[players] = tuple(self._positions(seat, players) for seat in range(players))
        return made

    def _positions(self, seat: int, players: int) -> np.ndarray:
        public, zeros, seen, _ = self.buffer(players)
        found = list(range(public))
        for relative in range(self.max_players):
            if relative >= players:
                found += range(zeros, seen)
                continue
            other = (seat + relative) % players
            found += range(public + other * self.public_size, public + (other + 1) * self.public_size)
            shown = seen + (seat * players + other) * self.cards
            found += range(shown, shown + self.cards)
        return np.array(found, dtype=np.intp)


@cache
def layout(ruleset: str) -> Layout:
    return Layout(get_ruleset(ruleset))


class Table:
    """One table's fields in one buffer, where a caller that follows a match writes each seat's public fields and
    sights only when they change; a seat's observation is then one numpy take of the buffer in its order. Every
    field is a count below 256, so the buffer is bytes.

    The buffer: the hand, decision and deck of the seat observing; the face-up cards; each seat's public fields
    (seated, tokens, in round, protected, out, discards by type); zeros, for the seats a smaller table lacks; and
    for each seat observing, what it was shown of each seat's hand."""

    def __init__(self, fields: Layout, players: int) -> None:
        self.fields = fields
        self.players = players
        self._public_at, _, self._seen_at, size = fields.buffer(players)
        self._buffer = bytearray(size)
        self._values = np.frombuffer(self._buffer, dtype=np.uint8)
        self._gathers = fields.gathers(players)
        self._no_cards = bytes(fields.cards)
        self._seated = bytes((1,)) + bytes(fields.public_size - 1)
        self._nothing_seen = bytes(players * fields.cards)
        self._shown = [False] * players
        self._written: list[PlayerView | None] = [None] * players
        self._face_up: tuple[Card, ...] | None = None

    def write_turn(self, hand: Iterable[Card], play: bool, keep: bool, deck: int) -> None:
        """The observing seat's hand by type, the decision due, the deck's size."""
        buffer, index, cards = self._buffer, self.fields.index, self.fields.cards
        buffer[:cards] = self._no_cards
        for card in hand:
            buffer[index[card]] += 1
        buffer[cards] = play  # one item at a time: a slice from a tuple takes twice as long
        buffer[cards + 1] = keep
        buffer[cards + 2] = deck

    def write_face_up(self, face_up: Iterable[Card]) -> None:
        """The face-up cards of a 2-player round, by type."""
        buffer, index, cards = self._buffer, self.fields.index, self.fields.cards
        at = cards + 3
        buffer[at : at + cards] = self._no_cards
        for card in face_up:
            buffer[at + index[card]] += 1

    def write_seat(
        self, seat: int, tokens: int, in_round: bool, protected: bool, out: bool, discards: Iterable[Card]
    ) -> None:
        """A seat's public fields: seated, tokens, in round, protected, out, discards by type."""
        values = bytearray(self._seated)  # built apart and copied in at once: half the time of item by item
        values[1] = tokens
        values[2] = in_round
        values[3] = protected
        values[4] = out
        index = self.fields.index
        for card in discards:
            values[SEAT_FIELDS + index[card]] += 1
        at = self._public_at + seat * len(values)
        self._buffer[at : at + len(values)] = values

    def write_seen(self, seat: int, seen: Mapping[int, Card]) -> None:
        """What `seat` was privately shown of the others' hands, by the seat that holds each card."""
        if not seen and not self._shown[seat]:
            return
        buffer, index, cards = self._buffer, self.fields.index, self.fields.cards
        at = self._seen_at + seat * self.players * cards
        buffer[at : at + self.players * cards] = self._nothing_seen
        for other, card in seen.items():
            buffer[at + other * cards + index[card]] = 1
        self._shown[seat] = bool(seen)

    def observation(self, seat: int) -> np.ndarray:
        """`seat`'s vector, a new array: a take of the buffer at the seat's positions."""
        return self._values[self._gathers[seat]]

    def encode(
        self,
        seat: int,
        hand: Iterable[Card],
        decision: DecisionKind | None,
        deck: int,
        face_up: tuple[Card, ...],
        players: Sequence[PlayerView],
    ) -> np.ndarray:
        """`seat`'s vector from the fields of its View, and what write_seen last wrote it was shown. A seat's
        public fields are written again only when the engine hands out a new PlayerView for it (it keeps one while
        nothing of the seat changes)."""
        self.write_turn(hand, decision is DecisionKind.PLAY, decision is DecisionKind.CHANCELLOR, deck)
        if face_up is not self._face_up:
            self.write_face_up(face_up)
            self._face_up = face_up
        written = self._written
        for other, player in enumerate(players):
            if player is not written[other]:
                written[other] = player
                self.write_seat(
                    other, player.tokens, player.in_round, player.protected, player.disqualified, player.discards
                )
        return self._values[self._gathers[seat]]  # observation(seat), without a call at every step


class ViewEncoder:
    """encode_view for the seats of one match after another, cheaper at every turn: one Table keeps the fields
    that did not change since the previous turn."""

    def __init__(self, ruleset: Ruleset) -> None:
        self.ruleset = ruleset
        self._layout = layout(ruleset.name)
        self._space = action_space(ruleset.name)
        self._table: Table | None = None

    def encode(self, view: View, events: Sequence[Event]) -> tuple[np.ndarray, np.ndarray]:
        """(observation, mask) of a seat's view and the events it was told since its previous turn."""
        plays = ((e.seat, e.card, e.target, e.seen, e.cards) for e in events if type(e) is PlayEvent)
        players = len(view.players)
        table = self._table
        if table is None or table.players != players:
            table = self._table = Table(self._layout, players)
        table.write_seen(view.seat, seen_in(view.seat, plays))
        observation = table.encode(view.seat, view.hand, view.decision, view.deck, view.removed_face_up, view.players)
        return observation, self._space.legal(view.legal, view.seat, players).mask.copy()


def encode_view(view: View, events: Sequence[Event], ruleset: Ruleset) -> tuple[np.ndarray, np.ndarray]:
    """(observation, mask) of a seat's view and the events it was told since its previous turn."""
    return ViewEncoder(ruleset).encode(view, events)


def encode(message: Mapping[str, Any], ruleset: str = "2019") -> tuple[np.ndarray, np.ndarray]:
    """(observation, mask) of a protocol `act` message: exactly what encode_view gives for the same turn."""
    label = Card.from_label
    seat = int(message["seat"])
    plays = []
    for event in message.get("events", ()):
        if event.get("event") == "play":
            cards = event.get("cards")
            plays.append(
                (
                    event["seat"],
                    label(event["card"]),
                    event.get("target"),
                    label(event["seen"]) if "seen" in event else None,
                    None if cards is None else {int(s): label(c) for s, c in cards.items()},
                )
            )
    players = message["players"]
    table = Table(layout(ruleset), len(players))
    decision = message["decision"]
    table.write_turn(map(label, message["hand"]), decision == "play", decision == "chancellor", int(message["deck"]))
    table.write_face_up(map(label, message["removed_face_up"]))
    for index, p in enumerate(players):
        table.write_seat(
            index, p["tokens"], p["in_round"], p["protected"], p.get("disqualified", False), map(label, p["discards"])
        )
    table.write_seen(seat, seen_in(seat, plays))
    legal = [parse_action(answer) for answer in message["legal"]]
    return table.observation(seat), action_space(ruleset).mask(legal, seat, len(players))


def decode(index: int, message: Mapping[str, Any], ruleset: str = "2019") -> dict[str, Any]:
    """The reply to an `act` message that answers with the action `index` names (ValueError if it is not legal)."""
    seat, players = int(message["seat"]), len(message["players"])
    legal = [parse_action(answer) for answer in message["legal"]]
    for position, found in enumerate(action_space(ruleset).indices(legal, seat, players)):
        if found == index:
            return {"type": "action", "index": position}
    raise ValueError(f"action {index} is not among the legal answers")


SHOWING = (Card.PRIEST, Card.BARON)
"""The cards whose play shows a seat another's card: the only plays an observation reads (seen_in)."""


def seen_in(seat: int, plays: Iterable[tuple[int, Card, int | None, Card | None, Any]]) -> dict[int, Card]:
    """The cards this seat was privately shown in these plays (seat, card, target, seen, compared), by the seat
    holding each: its Priest's, a Baron's it took part in. A later sight of a seat's card replaces an earlier."""
    found: dict[int, Card] = {}
    for player, card, target, shown, compared in plays:
        if card is Card.PRIEST and player == seat and shown is not None and target is not None:
            found[target] = shown
        elif card is Card.BARON and compared is not None and seat in compared:
            for other, held in compared.items():
                if other != seat:
                    found[other] = held
    return found

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
        self._legal: dict[tuple[int, int, int], tuple[tuple[Action, ...], np.ndarray, dict[int, Action]]] = {}

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

    def legal_mask(self, legal: tuple[Action, ...], seat: int, players: int) -> np.ndarray:
        """The mask of one of the engine's legal tuples (a copy: the caller may change it)."""
        return self._legal_of(legal, seat, players)[1].copy()

    def legal_at(self, index: int, legal: tuple[Action, ...], seat: int, players: int) -> Action | None:
        """The answer of one of the engine's legal tuples that `index` names; None if the mask does not allow it.
        An index outside the space is no answer at all, and a ValueError."""
        if not 0 <= index < self.size:
            raise ValueError(f"action {index} is outside the action space (0 to {self.size - 1})")
        return self._legal_of(legal, seat, players)[2].get(index)

    def _legal_of(
        self, legal: tuple[Action, ...], seat: int, players: int
    ) -> tuple[tuple[Action, ...], np.ndarray, dict[int, Action]]:
        """A legal tuple's mask and answers by index. The engine hands out the same tuple for the same hand and
        targets (a bounded number of them), so these are made once for it; the tuple is kept, so that its id
        stays its own."""
        key = (id(legal), seat, players)
        made = self._legal.get(key)
        if made is None or made[0] is not legal:
            indices = self.indices(legal, seat, players)
            made = self._legal[key] = (legal, self._mask(indices), dict(zip(indices, legal, strict=True)))
        return made


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
    """Where each field of one ruleset's observation is. Every field is a count below 256, so the vector is
    filled as bytes and converted once: a fraction of the cost of numpy's item-by-item assignment. A seat's
    fields are one segment, made once for each PlayerView and reused while the seat does not change."""

    def __init__(self, ruleset: Ruleset) -> None:
        self.index = {card: position for position, card in enumerate(ruleset.cards)}
        cards = len(self.index)
        self.cards = cards
        self.head = 2 * cards + 3
        self.segment_size = SEAT_FIELDS + 2 * cards
        self.size = self.head + ruleset.max_players * self.segment_size
        self.shown = tuple(bytes(i == j for j in range(cards)) for i in range(cards))
        """Per card index, the `seen` fields of a seat shown that card."""
        self.padding = tuple(
            bytes((ruleset.max_players - count) * self.segment_size) for count in range(ruleset.max_players + 1)
        )
        """Per table size, the seats it lacks."""

    def segment(self, tokens: int, in_round: bool, protected: bool, out: bool, discards: Iterable[Card]) -> bytes:
        """A seat's fields, shown nothing: seated, tokens, in round, protected, out, discards by type, seen."""
        values = bytearray((1, tokens, in_round, protected, out)) + bytes(2 * self.cards)
        index = self.index
        for card in discards:
            values[SEAT_FIELDS + index[card]] += 1
        return bytes(values)

    def observation(
        self,
        seat: int,
        hand: Iterable[Card],
        play: bool,
        keep: bool,
        deck: int,
        face_up: Iterable[Card],
        segments: list[bytes],
        seen: Mapping[int, Card],
    ) -> np.ndarray:
        """The vector of `seat`, from every seat's segment in absolute order and what `seat` was shown."""
        index, cards = self.index, self.cards
        head = bytearray(self.head)
        for card in hand:
            head[index[card]] += 1
        head[cards] = play
        head[cards + 1] = keep
        head[cards + 2] = deck
        for card in face_up:
            head[cards + 3 + index[card]] += 1
        count = len(segments)
        ordered = segments[seat:] + segments[:seat]
        for shown_seat, card in seen.items():
            relative = (shown_seat - seat) % count
            ordered[relative] = ordered[relative][: SEAT_FIELDS + cards] + self.shown[index[card]]
        return np.frombuffer(head + b"".join(ordered) + self.padding[count], dtype=np.uint8).astype(np.float32)


@cache
def layout(ruleset: str) -> Layout:
    return Layout(get_ruleset(ruleset))


class ViewEncoder:
    """encode_view for the seats of one match after another, cheaper at every turn: a seat's segment is made
    again only when the engine hands out a new PlayerView for it (it keeps one while nothing of the seat
    changes)."""

    def __init__(self, ruleset: Ruleset) -> None:
        self.ruleset = ruleset
        self._layout = layout(ruleset.name)
        self._space = action_space(ruleset.name)
        self._segments: list[tuple[PlayerView, bytes] | None] = [None] * ruleset.max_players

    def encode(self, view: View, events: Sequence[Event]) -> tuple[np.ndarray, np.ndarray]:
        """(observation, mask) of a seat's view and the events it was told since its previous turn."""
        plays = ((e.seat, e.card, e.target, e.seen, e.cards) for e in events if type(e) is PlayEvent)
        return self.encode_seen(view, seen_in(view.seat, plays))

    def encode_seen(self, view: View, seen: Mapping[int, Card]) -> tuple[np.ndarray, np.ndarray]:
        """(observation, mask) of a seat's view and the cards it was privately shown since its previous turn,
        by the seat that holds each (seen_in)."""
        known = self._segments
        segments = [
            made[1] if (made := known[seat]) is not None and made[0] is player else self._segment(seat, player)
            for seat, player in enumerate(view.players)
        ]
        decision = view.decision
        observation = self._layout.observation(
            view.seat,
            view.hand,
            decision is DecisionKind.PLAY,
            decision is DecisionKind.CHANCELLOR,
            view.deck,
            view.removed_face_up,
            segments,
            seen,
        )
        return observation, self._space.legal_mask(view.legal, view.seat, len(segments))

    def _segment(self, seat: int, player: PlayerView) -> bytes:
        made = self._layout.segment(
            player.tokens, player.in_round, player.protected, player.disqualified, player.discards
        )
        self._segments[seat] = (player, made)
        return made


def encode_view(view: View, events: Sequence[Event], ruleset: Ruleset) -> tuple[np.ndarray, np.ndarray]:
    """(observation, mask) of a seat's view and the events it was told since its previous turn."""
    return ViewEncoder(ruleset).encode(view, events)


def encode(message: Mapping[str, Any], ruleset: str = "2019") -> tuple[np.ndarray, np.ndarray]:
    """(observation, mask) of a protocol `act` message: exactly what encode_view gives for the same turn."""
    fields = layout(ruleset)
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
    observation = fields.observation(
        seat,
        [label(card) for card in message["hand"]],
        message["decision"] == "play",
        message["decision"] == "chancellor",
        int(message["deck"]),
        [label(card) for card in message["removed_face_up"]],
        [
            fields.segment(
                p["tokens"], p["in_round"], p["protected"], p.get("disqualified", False), map(label, p["discards"])
            )
            for p in players
        ],
        seen_in(seat, plays),
    )
    legal = [parse_action(answer) for answer in message["legal"]]
    return observation, action_space(ruleset).mask(legal, seat, len(players))


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

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
      seen        C   the card this seat was privately shown the other holds, in the events of this turn
                      (its Priest, a Baron it took part in), one-hot

The action space, per ruleset: every play (card, target relative to the actor or none, guess) and every
Chancellor choice (the card kept, and the cards put under the deck, in order), whether legal or not; the mask
says which are legal now.
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
    Play,
    PlayerView,
    PlayEvent,
    Ruleset,
    View,
    get_ruleset,
)
from arena.protocol import parse_action

Key = tuple[Any, ...]
"""An answer with its target relative to the actor: ("play", card, target | None, guess | None) or
("keep", card, bottom)."""

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
            for keep in ruleset.cards:
                keys.append(("keep", keep, ()))
                keys += [("keep", keep, (first,)) for first in ruleset.cards]
                keys += [("keep", keep, (first, second)) for first in ruleset.cards for second in ruleset.cards]
        self.keys = tuple(keys)
        self._index = {key: index for index, key in enumerate(keys)}
        self._absolute: dict[tuple[int, int], dict[Action, int]] = {}
        self._masks: dict[tuple[int, int, int], tuple[tuple[Action, ...], np.ndarray]] = {}

    @property
    def size(self) -> int:
        return len(self.keys)

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
                    key: Key = ("keep", action.keep, action.bottom)
                else:
                    target = None if action.target is None else (action.target - seat) % players
                    key = ("play", action.card, target, action.guess)
                index = known[action] = self._index[key]
            found.append(index)
        return found

    def mask(self, actions: Sequence[Action], seat: int, players: int) -> np.ndarray:
        """1 at the index of each of these answers, 0 elsewhere."""
        mask = np.zeros(len(self.keys), dtype=np.int8)
        mask[self.indices(actions, seat, players)] = 1
        return mask

    def legal_mask(self, legal: tuple[Action, ...], seat: int, players: int) -> np.ndarray:
        """The mask of an engine's legal list. The engine hands out the same tuple for the same hand and
        targets, so its mask is made once and copied (the tuple is kept, so that its id stays its own)."""
        key = (id(legal), seat, players)
        made = self._masks.get(key)
        if made is None or made[0] is not legal:
            made = self._masks[key] = (legal, self.mask(legal, seat, players))
        return made[1].copy()

    def action_at(self, index: int, seat: int, players: int) -> Action:
        """The answer of `seat` that `index` names (its target made absolute)."""
        key = self.keys[index]
        if key[0] == "keep":
            return Keep(key[1], key[2])
        target = None if key[2] is None else (seat + key[2]) % players
        return Play(key[1], target, key[3])


@cache
def action_space(ruleset: str) -> ActionSpace:
    return ActionSpace(get_ruleset(ruleset))


@cache
def observation_size(ruleset: str = "2019") -> int:
    """The observation's length: one for every table size of the ruleset."""
    rules = get_ruleset(ruleset)
    cards = len(rules.cards)
    return 2 * cards + 3 + rules.max_players * (SEAT_FIELDS + 2 * cards)


def observation_high(ruleset: Ruleset) -> float:
    """A bound of every field: no count, token total or deck size exceeds the number of cards."""
    return float(len(ruleset.deck))


@cache
def _card_index(ruleset: str) -> dict[Card, int]:
    return {card: index for index, card in enumerate(get_ruleset(ruleset).cards)}


class ViewEncoder:
    """encode_view for the seats of one match after another, cheaper at every turn: a seat's public fields are
    encoded again only when the engine hands out a new PlayerView for it (it keeps one while nothing of the seat
    changes)."""

    def __init__(self, ruleset: Ruleset) -> None:
        self.ruleset = ruleset
        self._index = _card_index(ruleset.name)
        self._space = action_space(ruleset.name)
        self._blocks: list[tuple[PlayerView, bytes] | None] = [None] * ruleset.max_players

    def encode(self, view: View, events: Sequence[Event]) -> tuple[np.ndarray, np.ndarray]:
        """(observation, mask) of a seat's view and the events it was told since its previous turn."""
        blocks, known, index = [], self._blocks, self._index
        for seat, player in enumerate(view.players):
            made = known[seat]
            if made is None or made[0] is not player:
                block = _seat_block(
                    player.tokens, player.in_round, player.protected, player.disqualified, player.discards, index
                )
                made = known[seat] = (player, block)
            blocks.append(made[1])
        decision = view.decision
        observation = _observation(
            self.ruleset,
            view.seat,
            view.hand,
            decision is DecisionKind.PLAY,
            decision is DecisionKind.CHANCELLOR,
            view.deck,
            view.removed_face_up,
            blocks,
            _seen(view.seat, ((e.seat, e.card, e.target, e.seen, e.cards) for e in events if type(e) is PlayEvent)),
        )
        return observation, self._space.legal_mask(view.legal, view.seat, len(blocks))


def encode_view(view: View, events: Sequence[Event], ruleset: Ruleset) -> tuple[np.ndarray, np.ndarray]:
    """(observation, mask) of a seat's view and the events it was told since its previous turn."""
    return ViewEncoder(ruleset).encode(view, events)


def encode(message: Mapping[str, Any], ruleset: str = "2019") -> tuple[np.ndarray, np.ndarray]:
    """(observation, mask) of a protocol `act` message: exactly what encode_view gives for the same turn."""
    rules = get_ruleset(ruleset)
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
    index = _card_index(rules.name)
    observation = _observation(
        rules,
        seat,
        [label(card) for card in message["hand"]],
        message["decision"] == "play",
        message["decision"] == "chancellor",
        int(message["deck"]),
        [label(card) for card in message["removed_face_up"]],
        [
            _seat_block(
                p["tokens"],
                p["in_round"],
                p["protected"],
                p.get("disqualified", False),
                [label(c) for c in p["discards"]],
                index,
            )
            for p in players
        ],
        _seen(seat, plays),
    )
    legal = [parse_action(answer) for answer in message["legal"]]
    return observation, action_space(rules.name).mask(legal, seat, len(players))


def decode(index: int, message: Mapping[str, Any], ruleset: str = "2019") -> dict[str, Any]:
    """The reply to an `act` message that answers with the action `index` names (ValueError if it is not legal)."""
    seat, players = int(message["seat"]), len(message["players"])
    action = action_space(ruleset).action_at(int(index), seat, players)
    for position, answer in enumerate(message["legal"]):
        if parse_action(answer) == action:
            return {"type": "action", "index": position}
    raise ValueError(f"action {index} ({action}) is not among the legal answers")


SHOWING = (Card.PRIEST, Card.BARON)
"""The cards whose play shows a seat another's card: the only plays an observation reads (_seen)."""


def _seen(seat: int, plays: Any) -> dict[int, Card]:
    """The cards this seat was privately shown in these plays: its Priest's, a Baron's it took part in."""
    found: dict[int, Card] = {}
    for player, card, target, shown, compared in plays:
        if card is Card.PRIEST and player == seat and shown is not None and target is not None:
            found[target] = shown
        elif card is Card.BARON and compared is not None and seat in compared:
            for other, held in compared.items():
                if other != seat:
                    found[other] = held
    return found


def _seat_block(
    tokens: int, in_round: bool, protected: bool, out: bool, discards: Iterable[Card], index: Mapping[Card, int]
) -> bytes:
    """A seat's public fields: seated, tokens, in round, protected, out, discards by type."""
    values = bytearray((1, tokens, in_round, protected, out)) + bytes(len(index))
    for card in discards:
        values[SEAT_FIELDS + index[card]] += 1
    return bytes(values)


@cache
def _one_hot(cards: int) -> tuple[bytes, ...]:
    """Per card index, the `seen` fields of a seat shown that card; the last entry: shown nothing."""
    return (*(bytes(i == j for j in range(cards)) for i in range(cards)), bytes(cards))


def _observation(
    ruleset: Ruleset,
    seat: int,
    hand: Sequence[Card],
    play: bool,
    keep: bool,
    deck: int,
    face_up: Sequence[Card],
    blocks: Sequence[bytes],
    seen: Mapping[int, Card],
) -> np.ndarray:
    # Every field is a count below 256: filled as bytes and converted once, it costs a fraction of numpy's
    # item-by-item assignment.
    index = _card_index(ruleset.name)
    cards = len(index)
    head = bytearray(2 * cards + 3)
    for card in hand:
        head[index[card]] += 1
    head[cards] = play
    head[cards + 1] = keep
    head[cards + 2] = deck
    for card in face_up:
        head[cards + 3 + index[card]] += 1
    one_hot = _one_hot(cards)
    parts: list[bytes | bytearray] = [head]
    count = len(blocks)
    for relative in range(count):
        absolute = (seat + relative) % count
        parts.append(blocks[absolute])
        shown = seen.get(absolute)
        parts.append(one_hot[-1] if shown is None else one_hot[index[shown]])
    parts.append(bytes((ruleset.max_players - count) * (SEAT_FIELDS + 2 * cards)))
    return np.frombuffer(b"".join(parts), dtype=np.uint8).astype(np.float32)

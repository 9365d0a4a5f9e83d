"""Cards and rulesets. A ruleset is data: which cards, how many, their values, the token targets."""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum, IntEnum
from types import MappingProxyType

from arena.engine.frozen import frozen


class Card(IntEnum):
    """A card type. The integer is an identity index only; a card's value depends on the ruleset."""

    SPY = 0
    GUARD = 1
    PRIEST = 2
    BARON = 3
    HANDMAID = 4
    PRINCE = 5
    CHANCELLOR = 6
    KING = 7
    COUNTESS = 8
    PRINCESS = 9

    @property
    def label(self) -> str:
        """The lowercase name used on the wire and in replays."""
        return _LABELS[self]

    @classmethod
    def from_label(cls, label: str) -> Card:
        try:
            return _BY_LABEL[label]
        except (KeyError, TypeError):
            raise ValueError(f"unknown card {label!r}") from None


_LABELS = tuple(card.name.lower() for card in Card)
_BY_LABEL = {card.name.lower(): card for card in Card}


class ShowdownTie(Enum):
    """How a showdown between equal hands is settled."""

    ALL_WIN = "all tied players win"
    DISCARD_SUM = "highest total of discarded values wins, then all still tied win"


@frozen
class Ruleset:
    name: str
    counts: Mapping[Card, int]
    values: Mapping[Card, int]
    token_targets: Mapping[int, int]
    showdown_tie: ShowdownTie

    @property
    def cards(self) -> tuple[Card, ...]:
        """The card types of this ruleset, lowest value first."""
        return tuple(sorted(self.counts, key=self.values.__getitem__))

    @property
    def deck(self) -> tuple[Card, ...]:
        return tuple(card for card in self.cards for _ in range(self.counts[card]))

    @property
    def guard_guesses(self) -> tuple[Card, ...]:
        """What a guard may name: every card type but the guard."""
        return tuple(card for card in self.cards if card is not Card.GUARD)

    @property
    def min_players(self) -> int:
        return min(self.token_targets)

    @property
    def max_players(self) -> int:
        return max(self.token_targets)

    def target(self, players: int) -> int:
        """Favour tokens needed to win a match that started with this many players."""
        try:
            return self.token_targets[players]
        except KeyError:
            raise ValueError(
                f"ruleset {self.name} is for {self.min_players}-{self.max_players} players, not {players}"
            ) from None

    def value_table(self) -> tuple[int, ...]:
        """Values indexed by card, for hot loops (-1 for cards not in this ruleset)."""
        return tuple(self.values.get(card, -1) for card in Card)


def _ruleset(
    name: str,
    cards: list[tuple[Card, int, int]],
    targets: dict[int, int],
    tie: ShowdownTie,
) -> Ruleset:
    return Ruleset(
        name=name,
        counts=MappingProxyType({card: count for card, _, count in cards}),
        values=MappingProxyType({card: value for card, value, _ in cards}),
        token_targets=MappingProxyType(targets),
        showdown_tie=tie,
    )


RULESET_2019 = _ruleset(
    "2019",
    [
        (Card.SPY, 0, 2),
        (Card.GUARD, 1, 6),
        (Card.PRIEST, 2, 2),
        (Card.BARON, 3, 2),
        (Card.HANDMAID, 4, 2),
        (Card.PRINCE, 5, 2),
        (Card.CHANCELLOR, 6, 2),
        (Card.KING, 7, 1),
        (Card.COUNTESS, 8, 1),
        (Card.PRINCESS, 9, 1),
    ],
    {2: 6, 3: 5, 4: 4, 5: 3, 6: 3},
    ShowdownTie.ALL_WIN,
)

RULESET_CLASSIC = _ruleset(
    "classic",
    [
        (Card.GUARD, 1, 5),
        (Card.PRIEST, 2, 2),
        (Card.BARON, 3, 2),
        (Card.HANDMAID, 4, 2),
        (Card.PRINCE, 5, 2),
        (Card.KING, 6, 1),
        (Card.COUNTESS, 7, 1),
        (Card.PRINCESS, 8, 1),
    ],
    {2: 7, 3: 5, 4: 4},
    ShowdownTie.DISCARD_SUM,
)

RULESETS: Mapping[str, Ruleset] = MappingProxyType(
    {ruleset.name: ruleset for ruleset in (RULESET_2019, RULESET_CLASSIC)}
)


def get_ruleset(name: str) -> Ruleset:
    try:
        return RULESETS[name]
    except KeyError:
        known = ", ".join(RULESETS)
        raise ValueError(f"unknown ruleset {name!r} (known: {known})") from None

"""What one match tells of its seats' fair play: each seat followed from its own information as the match is played
(or replayed), its plays' chances of success, its choices of target, and the plays it knew would put someone out.

Its records are plain dataclasses, not frozen ones: a tally reads back hundreds of thousands of them, and a frozen
one's __init__ costs twice as much."""

from __future__ import annotations

import array
import base64
import binascii
import bisect
import itertools
import sys
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson

from arena.analysis.fairplay.sight import AIMED, BARON, GUARD, PRINCE, PRINCESS, Bet, Kind, Odds, Sight
from arena.engine import (
    Action,
    Card,
    Decided,
    Event,
    EventFeed,
    Match,
    Observer,
    OutCause,
    Play,
    Played,
    Record,
    Ruleset,
    View,
    WentOut,
)
from arena.replay.lines import LINED


@dataclass(slots=True)
class Chance:
    """A play whose success the replay shows, with its chance from the seat's own information."""

    seat: int
    line: int
    """The decision's line in the match's replay."""
    target: int
    bet: Bet
    success: bool

    @property
    def probability(self) -> float:
        return self.bet.probability


@dataclass(slots=True)
class Aim:
    """A play on another player: whom the seat chose, among the opponents it could choose."""

    seat: int
    line: int
    card: Card
    target: int
    choices: tuple[int, ...]
    features: tuple[tuple[float, ...], ...] = ()
    """Per choice, what an honest bot may aim by (FEATURES), as the seat saw it."""


@dataclass(slots=True)
class Holding:
    """How often a seat held a card, against the chance its opponents gave it (summed over a match's decisions,
    for the chances that fall in one bin): the bots' own habits (no one throws the Princess away) that the
    counts of cards alone do not know."""

    seat: int
    card: Card
    bin: int
    expected: float
    observed: int


@dataclass(slots=True)
class Strike:
    """A play the seat knew to put an opponent out (a Guard naming the card it knew, a Baron against a card it knew
    lower, a Prince at a known Princess), and whether it made it: a partner is spared such plays too."""

    seat: int
    line: int
    target: int
    used: bool


@dataclass(frozen=True, slots=True)
class MatchFairPlay:
    """What one match tells of its seats' fair play: every chance taken and every choice of target."""

    match_id: str
    players: tuple[str, ...]
    chances: tuple[Chance, ...]
    aims: tuple[Aim, ...]
    holdings: tuple[Holding, ...] = ()
    strikes: tuple[Strike, ...] = ()
    unnoted: tuple[int, ...] = ()
    """Seats not followed: bots played in-process, the arena's own trusted code (see Witness)."""


BINS = (0.03, 0.06, 0.1, 0.15, 0.2, 0.3, 0.45, 0.7, 0.999)
"""The upper ends of the bins of chances in which holdings are counted (a known card, 1, is never counted)."""


_BIN_ENDS = np.array(BINS)


def chance_bin(p: float) -> int:
    return bisect.bisect_left(BINS, p)


class Witness:
    """Follows each seat of one match from its own information and notes the chance of each of its plays.

    Only the seats given are followed (every seat by default): a bot played in-process is the arena's own code,
    run without a sandbox and trusted like the arena itself; noting it would prove nothing and cost most of what
    the notes cost a run of built-in bots."""

    def __init__(self, match: Match, seats: Collection[int] | None = None) -> None:
        self._match = match
        self._noted = frozenset(range(len(match.players)) if seats is None else seats)
        self._observers: list[Observer] = []
        """Each seat's window, for `judge` alone (made at its first use): a Watch hands `note` the events and views
        it takes for its own judge."""
        self._sights = [Sight(seat, match.ruleset) for seat in range(len(match.players))]
        self._chances = _part("chances")
        self._aims = _part("aims")
        self._strikes = _part("strikes")
        self._holdings: dict[str, list[Any]] = {"card": [], "p": [], "odds": [], "seat": [], "held": []}
        """Per opponent the seat could aim a bet at: the chance it gave each card (`odds` of them), and the card
        held (summed by _holdings once the match is over)."""

    def share_feed(self, seat: int, observer: Observer) -> None:
        """Read the seat's events from the referee's feed, before any is taken (at the match's start)."""
        self._watch_all()[seat] = observer.twin()

    def judge(self, seat: int, action: Action) -> None:
        """Note the answer `seat` gives now (a legal one, before the match applies it)."""
        observer = self._watch_all()[seat]
        self.note(seat, observer.take_events(), observer.view(), action)

    def _watch_all(self) -> list[Observer]:
        if not self._observers:
            feed = EventFeed(self._match)
            self._observers = [Observer(self._match, seat, feed) for seat in range(len(self._match.players))]
        return self._observers

    def note(self, seat: int, events: Iterable[Event], view: View, action: Action) -> None:
        """`judge`, given the seat's events since its last decision and its view now."""
        if seat not in self._noted:
            return
        sight = self._sights[seat]
        sight.observe(events)
        bet, odds = sight.judge(view, action)
        if type(action) is not Play or action.card not in AIMED or action.target is None or action.target == seat:
            return  # no card aimed at another player: nothing to note
        at, card, aimed = len(self._match.records), action.card, action.target
        if bet is not None:
            _append(
                self._chances, at, seat, aimed, _KIND_CODES[bet.kind], sum(1 << won for won in bet.wins), len(bet.odds)
            )
            self._chances["cards"] += (won for won, _ in bet.odds)
            self._chances["p"] += (p for _, p in bet.odds)
            self._count_holdings(odds)
        players = view.players
        choices = tuple(t for t, p in enumerate(players) if t != seat and p.in_round and not p.protected)
        if len(choices) > 1:  # the opponents the card could aim at, as the rules choose them
            _append(self._aims, at, seat, card, aimed, len(choices))
            self._aims["seats"] += choices
            self._aims["features"] += _features(view, sight, card, choices, odds)
        if sight.known:
            for target, cards in _sure_plays(view, sight):
                _append(self._strikes, at, seat, target, aimed == target and card in cards)

    def _count_holdings(self, odds: dict[int, Odds]) -> None:
        """What each opponent the seat could aim at holds, against the chance the seat gives each card (the
        hidden hands are read here, for the count alone: never for a chance)."""
        hand, holdings = self._match.hand, self._holdings
        for target, chances in odds.items():
            holdings["card"] += chances
            holdings["p"] += chances.values()
            holdings["odds"].append(len(chances))
            holdings["seat"].append(target)
            holdings["held"].append(hand(target)[0])

    def findings(self, match_id: str) -> MatchFairPlay:
        """Every noted play with its outcome, read from the match's log (once over, or as far as it went)."""
        return _notes(match_id, self._match.players, self.columns())

    def columns(self, outcomes: Outcomes | None = None) -> dict[str, Any]:
        """`findings` as the store keeps them (notes_columns), given the match's `outcomes` if they are at hand."""
        if outcomes is None:
            noted = self._chances["at"] or self._aims["at"] or self._strikes["at"]
            outcomes = Outcomes.of(self._match.records) if noted else Outcomes([], [], [], [])
        decided, lines, hits, outs = outcomes.decided, outcomes.lines, outcomes.hits, outcomes.outs
        chances = _placed(self._chances, decided, lines, "odds", 1)
        chances["success"] = [
            hits[index] is True
            if kind == _GUARD
            else (target, OutCause.BARON if kind == _BARON else OutCause.PRINCESS) in outs[index]
            for index, kind, target in zip(chances.pop("index"), chances["kind"], chances["target"], strict=True)
        ]
        aims = _placed(self._aims, decided, lines, "choices", len(FEATURES))
        strikes = _placed(self._strikes, decided, lines)
        del aims["index"], strikes["index"]
        return {
            "version": NOTES_VERSION,
            "chances": chances,
            "aims": aims,
            "holdings": _holdings(self._holdings, len(self._match.players)),
            "strikes": strikes,
            "unnoted": [seat for seat in range(len(self._match.players)) if seat not in self._noted],
        }


def _part(part: str) -> dict[str, list[Any]]:
    """A part's columns as the witness gathers them: first `at`, the match's records when its decision was awaited
    (the decision is the next in them), then the part's own, but its line (and a chance's success)."""
    columns = [column for column in (*COLUMNS[part], *FLAT.get(part, ())) if column not in ("line", "success")]
    return {column: [] for column in ("at", *columns)}


def _placed(
    gathered: dict[str, list[Any]], decided: list[int], lines: list[int], sizes: str = "", width: int = 0
) -> dict[str, list[Any]]:
    """A part's columns with each row's line in the replay (and its decision's `index`): the rows of a decision
    the match did not apply (it stopped first) left out."""
    index = [bisect.bisect_left(decided, at) for at in gathered["at"]]
    kept = bisect.bisect_left(index, len(lines))
    flat = sum(gathered[sizes][:kept]) if sizes else 0
    found = {"index": index[:kept], "line": [lines[i] for i in index[:kept]]}
    for column, values in gathered.items():
        if column != "at":
            found[column] = (
                values[: flat * (width if column == "features" else 1)] if column in _FLAT else values[:kept]
            )
    return found


def _holdings(gathered: dict[str, list[Any]], players: int) -> dict[str, list[Any]]:
    """What each opponent held, summed per (opponent, card, bin of the chance given it), in that order: counted into
    every possible key at once (a match has a few hundred; sorting the chances to find them cost twice as much), in
    as few numpy calls as can be (each costs more than its work on a match's few hundred chances)."""
    if not gathered["p"]:
        return {column: [] for column in COLUMNS["holdings"]}
    p = np.frombuffer(array.array("d", gathered["p"]), dtype=float)
    sizes = np.frombuffer(array.array("q", gathered["odds"]), dtype=np.int64)
    seat = np.frombuffer(array.array("q", gathered["seat"]), dtype=np.int64).repeat(sizes)
    card = np.frombuffer(array.array("q", gathered["card"]), dtype=np.int64)  # Cards are ints
    held = card == np.frombuffer(array.array("q", gathered["held"]), dtype=np.int64).repeat(sizes)
    bins = len(BINS) + 1
    space = players * len(Card) * bins
    keys = (seat * len(Card) + card) * bins + _BIN_ENDS.searchsorted(p)
    keys[p >= BINS[-1]] = space  # a known card, never counted
    counts = np.bincount(keys, minlength=space + 1)[:space]
    found = counts.nonzero()[0]
    rest, bin_ = np.divmod(found, bins)
    seats, cards = np.divmod(rest, len(Card))
    return {
        "seat": seats.tolist(),
        "card": cards.tolist(),
        "bin": bin_.tolist(),
        "expected": np.bincount(keys, weights=p, minlength=space + 1)[found].tolist(),
        "observed": np.bincount(keys, weights=held, minlength=space + 1)[found].astype(int).tolist(),
    }


def _append(columns: dict[str, list[Any]], *values: Any) -> None:
    """A row's first values, in the order of the columns."""
    for column, value in zip(columns.values(), values, strict=False):
        column.append(value)


FEATURES = ("most tokens", "tokens behind", "card known", "first seat", "chance of success", "best chance")
"""What an honest bot may choose its target by, other than who the target is: the leader, how far behind the
leader each is, a card it knows, the first seat of the legal list (the first of equals), the odds of its play
against each, and whether they are the best odds of all (a bot that takes the best makes the smallest difference
decide). Which seat plays next is no feature: where partners sit side by side in every match, it would be the
partner by another name."""


def _features(view: View, sight: Sight, card: Card, choices: tuple[int, ...], odds: dict[int, Odds]) -> list[float]:
    """Each choice's FEATURES, as the seat saw them when it chose, one choice after the other."""
    players, known = view.players, sight.known
    tokens = [players[target].tokens for target in choices]
    most = max(tokens)
    if odds:
        worked: dict[int, float] = {}  # by the odds (opponents unknown alike share theirs)
        chances = []
        for target in choices:
            against = odds[target]
            chance = worked.get(id(against))
            if chance is None:
                chance = worked[id(against)] = _success(card, sight.own, against, sight.ruleset)
            chances.append(chance)
        best = max(chances)
    else:
        chances, best = [0.0] * len(choices), 1.0  # a Priest or a King: no chance to weigh
    first = choices[0]
    found: list[float] = []
    for target, held, chance in zip(choices, tokens, chances, strict=True):
        found += (
            float(held == most),
            float(most - held),
            float(target in known),
            float(target == first),
            chance,
            float(chance > 0 and chance >= best - 1e-9),
        )
    return found


def _sure_plays(view: View, sight: Sight) -> tuple[tuple[int, frozenset[Card]], ...]:
    """The opponents some legal play was sure to put out, from the cards the seat knew, each with the cards that
    were."""
    known = sight.known
    if not known:
        return ()
    values = sight.ruleset.values
    sure: dict[int, set[Card]] = {}
    for play in view.legal:
        if not isinstance(play, Play) or play.target not in known:
            continue
        held = known[play.target]
        if (
            (play.card is GUARD and play.guess is held)
            or (play.card is BARON and values[_kept(view.hand, BARON)] > values[held])
            or (play.card is PRINCE and held is PRINCESS)
        ):
            sure.setdefault(play.target, set()).add(play.card)
    return tuple((target, frozenset(cards)) for target, cards in sorted(sure.items()))


def _kept(hand: Sequence[Card], played: Card) -> Card:
    """The other card of a two-card hand, once `played` is played."""
    return hand[1] if hand[0] is played else hand[0]


def _success(card: Card, kept: Card | None, odds: Odds, ruleset: Ruleset) -> float:
    """The best chance this card has against a target with these odds (0 for a card that puts no one out)."""
    if card is GUARD:
        return max((p for held, p in odds.items() if held is not GUARD), default=0.0)
    if card is BARON and kept is not None:
        return sum(p for held, p in odds.items() if ruleset.values[held] < ruleset.values[kept])
    if card is PRINCE:
        return odds.get(PRINCESS, 0.0)
    return 0.0


@dataclass(slots=True)
class Outcomes:
    """Per decision of a match, in order: its place in the records, its line in the replay, whether its Guard hit,
    and who went out of what before the next decision."""

    decided: list[int]
    lines: list[int]
    hits: list[bool | None]
    outs: list[tuple[tuple[int, OutCause], ...]]

    @classmethod
    def of(cls, records: Sequence[Record]) -> Outcomes:
        """One pass over the records (the judge of mistakes reads the lines, the witness all of it)."""
        found = cls([], [], [], [])
        decided, lines, hits, outs = found.decided, found.lines, found.hits, found.outs
        line = 1
        for at, record in enumerate(records):
            kind = type(record)
            if kind is Decided:
                line += 1
                decided.append(at)
                lines.append(line)
                hits.append(None)
                outs.append(())
            elif kind in LINED:
                line += 1
            elif kind is Played and hits:
                hits[-1] = record.hit  # type: ignore[union-attr]
            elif kind is WentOut and outs:
                outs[-1] = (*outs[-1], (record.seat, record.cause))  # type: ignore[union-attr]
        return found


# -- kept in the store -----------------------------------------------------------------------------------------------


NOTES_VERSION = 3
"""The layout of a match's stored notes: notes of another layout are taken again from the match's replay."""

COLUMNS: dict[str, tuple[str, ...]] = {
    "chances": ("seat", "line", "target", "kind", "wins", "odds", "success"),
    "aims": ("seat", "line", "card", "target", "choices"),
    "holdings": ("seat", "card", "bin", "expected", "observed"),
    "strikes": ("seat", "line", "target", "used"),
}
"""Each part of the notes, kept column by column (a value per row), so that a tally reads a whole tournament's into
arrays at once (in the store, each column an array of its type: notes_json). Beside them, flat: a chance's odds as
`cards` and `p` (`odds` of them per chance), an aim's choices as `seats` and their `features` (`choices` seats per
aim, len(FEATURES) features per seat)."""
FLAT = {"chances": ("cards", "p"), "aims": ("seats", "features")}
_FLAT = {column for columns in FLAT.values() for column in columns}
KINDS = tuple(Kind)
"""A chance's kind by its number in the notes."""
_KIND_CODES = {kind: code for code, kind in enumerate(KINDS)}
_GUARD, _BARON = _KIND_CODES[Kind.GUARD], _KIND_CODES[Kind.BARON]
_INTEGERS: tuple[tuple[int | None, tuple[tuple[str, str], ...]], ...] = (
    (None, (("chances", "seat"), ("chances", "target"), ("aims", "seat"), ("aims", "target"), ("aims", "seats"))),
    (None, (("holdings", "seat"), ("strikes", "seat"), ("strikes", "target"))),
    (len(Card), (("chances", "cards"), ("aims", "card"), ("holdings", "card"))),
    (len(BINS) + 1, (("holdings", "bin"),)),
    (len(KINDS), (("chances", "kind"),)),
    (1 << len(Card), (("chances", "odds"), ("aims", "choices"), ("chances", "wins"))),
    (2**31 - 1, (("chances", "line"), ("aims", "line"), ("strikes", "line"), ("holdings", "observed"))),
)
"""The integer columns, by the bound their values lie under (from 0): the table's seats (None), the cards, the
bins, the kinds, counts of cards or of choices and sets of cards, and lines and counts."""
_STORED: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("<i4", tuple(column for _, columns in _INTEGERS for column in columns)),
    ("<f8", (("chances", "p"), ("aims", "features"), ("holdings", "expected"))),
    ("|b1", (("chances", "success"), ("strikes", "used"))),
)
"""How the store keeps a match's notes: every column of a type end to end in one array, in this order (so that
reading them back takes three arrays, not one per column)."""


def notes_columns(notes: MatchFairPlay) -> dict[str, Any]:
    """A match's notes as the store keeps them (the match's id and players are the match's row)."""
    chances, aims = notes.chances, notes.aims
    return {
        "version": NOTES_VERSION,
        "chances": {
            "seat": [c.seat for c in chances],
            "line": [c.line for c in chances],
            "target": [c.target for c in chances],
            "kind": [_KIND_CODES[c.bet.kind] for c in chances],
            "wins": [sum(1 << card for card in c.bet.wins) for c in chances],
            "odds": [len(c.bet.odds) for c in chances],
            "success": [c.success for c in chances],
            "cards": [card for c in chances for card, _ in c.bet.odds],
            "p": [p for c in chances for _, p in c.bet.odds],
        },
        "aims": {
            "seat": [a.seat for a in aims],
            "line": [a.line for a in aims],
            "card": [a.card for a in aims],
            "target": [a.target for a in aims],
            "choices": [len(a.choices) for a in aims],
            "seats": [seat for a in aims for seat in a.choices],
            "features": [value for a in aims for row in a.features for value in row],
        },
        "holdings": {
            "seat": [h.seat for h in notes.holdings],
            "card": [h.card for h in notes.holdings],
            "bin": [h.bin for h in notes.holdings],
            "expected": [h.expected for h in notes.holdings],
            "observed": [h.observed for h in notes.holdings],
        },
        "strikes": {
            "seat": [s.seat for s in notes.strikes],
            "line": [s.line for s in notes.strikes],
            "target": [s.target for s in notes.strikes],
            "used": [s.used for s in notes.strikes],
        },
        "unnoted": list(notes.unnoted),
    }


def notes_json(columns: dict[str, Any]) -> bytes:
    """Notes (as notes_columns or Witness.columns give them) as the store keeps them: the rows of each part, and the
    columns of each type end to end (_STORED), in base64."""
    rows = {part: len(columns[part]["seat"]) for part in COLUMNS}
    rows |= {"cards": len(columns["chances"]["cards"]), "seats": len(columns["aims"]["seats"])}
    packed = {}
    for dtype, stored in _STORED:
        joined: list[Any] = []
        for part, name in stored:
            joined += columns[part][name]
        packed[dtype] = base64.b64encode(_packed(joined, dtype)).decode("ascii")
    return orjson.dumps({"version": NOTES_VERSION, "rows": rows, **packed, "unnoted": list(columns["unnoted"])})


_TYPECODES = {"<i4": "i", "<f8": "d", "|b1": "b"}
"""Each stored type's array.array code: for a match's few hundred values, array.array packs them in a fraction of the
time numpy's conversion takes."""


def _packed(values: list[Any], dtype: str) -> bytes:
    """The values as the bytes of an array of `dtype` (little-endian, as read_columns reads them)."""
    packed = array.array(_TYPECODES[dtype], values)
    if sys.byteorder == "big" and packed.itemsize > 1:
        packed.byteswap()
    return packed.tobytes()


def read_columns(text: bytes | str, seats: int) -> dict[str, Any] | None:
    """Stored notes as arrays, checked whole (every column as long as its part, every seat at the table, every card,
    bin and kind one that is): None for notes of another layout, or unreadable."""
    try:
        data = orjson.loads(text)
        if data.get("version") != NOTES_VERSION or not isinstance(data["unnoted"], list):
            return None
        rows: dict[str, int] = data["rows"]
        if any(type(rows[part]) is not int or rows[part] < 0 for part in (*COLUMNS, "cards", "seats")):
            return None
        found: dict[str, Any] = {part: {} for part in COLUMNS}
        for dtype, stored in _STORED:
            array = np.frombuffer(base64.b64decode(data[dtype], validate=True), dtype=dtype)
            lengths = [_length(rows, part, name) for part, name in stored]
            if len(array) != sum(lengths):
                return None
            if dtype == "<i4":  # a negative value, seen unsigned, is past every bound
                sizes = iter(lengths)
                groups = [sum(itertools.islice(sizes, len(columns))) for _, columns in _INTEGERS]
                bounds = np.repeat([seats if bound is None else bound for bound, _ in _INTEGERS], groups)
                if np.any(array.view(np.uint32) >= bounds):
                    return None
            start = 0
            for (part, name), length in zip(stored, lengths, strict=True):
                found[part][name] = array[start : start + length]
                start += length
        if found["chances"]["odds"].sum() != rows["cards"] or found["aims"]["choices"].sum() != rows["seats"]:
            return None
        found["unnoted"] = data["unnoted"]
        return found
    except (orjson.JSONDecodeError, binascii.Error, AttributeError, KeyError, TypeError, ValueError):
        return None


def _length(rows: dict[str, int], part: str, column: str) -> int:
    """A stored column's length: a value per row of its part, else per flat odds or choice (FLAT)."""
    if column in ("cards", "p"):
        return rows["cards"]
    if column in ("seats", "features"):
        return rows["seats"] * (len(FEATURES) if column == "features" else 1)
    return rows[part]


def notes_from_json(match_id: str, players: Sequence[str], text: bytes | str) -> MatchFairPlay | None:
    """`notes_json` read back: equal to the notes written; None for notes of another layout, or unreadable."""
    data = read_columns(text, len(players))
    if data is None:
        return None
    try:
        return _notes(match_id, players, data)
    except (KeyError, ValueError, TypeError, IndexError):
        return None


def _notes(match_id: str, players: Sequence[str], data: dict[str, Any]) -> MatchFairPlay:
    chances, aims, holdings, strikes = (
        {name: _listed(column) for name, column in data[part].items()} for part in COLUMNS
    )
    odds = _split(
        list(zip(map(_CARDS.__getitem__, chances["cards"]), map(float, chances["p"]), strict=True)), chances["odds"]
    )
    width = len(FEATURES)
    seats = _split(aims["seats"], aims["choices"])
    features = _split(aims["features"], [n * width for n in aims["choices"]])
    return MatchFairPlay(
        match_id,
        tuple(players),
        tuple(
            Chance(seat, line, target, Bet(KINDS[kind], _wins(wins), tuple(pairs)), success)
            for seat, line, target, kind, wins, pairs, success in zip(
                chances["seat"],
                chances["line"],
                chances["target"],
                chances["kind"],
                chances["wins"],
                odds,
                chances["success"],
                strict=True,
            )
        ),
        tuple(
            Aim(seat, line, _CARDS[card], target, tuple(choices), tuple(_rows(values, width)))
            for seat, line, card, target, choices, values in zip(
                aims["seat"], aims["line"], aims["card"], aims["target"], seats, features, strict=True
            )
        ),
        tuple(
            Holding(seat, _CARDS[card], bin_, expected, observed)
            for seat, card, bin_, expected, observed in zip(*(holdings[c] for c in COLUMNS["holdings"]), strict=True)
        ),
        tuple(Strike(*row) for row in zip(*(strikes[c] for c in COLUMNS["strikes"]), strict=True)),
        tuple(data["unnoted"]),
    )


def _listed(column: Sequence[Any] | np.ndarray) -> list[Any]:
    return column.tolist() if isinstance(column, np.ndarray) else list(column)


def _split(values: Sequence[Any], sizes: Iterable[int]) -> list[Sequence[Any]]:
    parts, start = [], 0
    for size in sizes:
        parts.append(values[start : start + size])
        start += size
    return parts


def _rows(values: Sequence[float], width: int) -> Iterable[tuple[float, ...]]:
    return (tuple(values[start : start + width]) for start in range(0, len(values), width))


def _wins(mask: int) -> frozenset[Card]:
    return frozenset(card for card in _CARDS if mask >> card & 1)


_CARDS = tuple(Card)
"""A card by its number (Card(n) was most of the time of reading notes back)."""

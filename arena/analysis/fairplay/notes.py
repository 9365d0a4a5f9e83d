"""What one match tells of its seats' fair play: each seat followed from its own information as the match is played
(or replayed), its plays' chances of success, its choices of target, and the plays it knew would put someone out.

Its records are plain dataclasses, not frozen ones: a tally reads back hundreds of thousands of them, and a frozen
one's __init__ costs twice as much."""

from __future__ import annotations

import bisect
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

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
from arena.replay.lines import decision_line_numbers


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


@dataclass(slots=True)
class _Judged:
    index: int
    """The decision's place among the match's decisions (from 0)."""
    seat: int
    action: Play
    """A card aimed at another player."""
    bet: Bet | None
    choices: tuple[int, ...]
    features: tuple[tuple[float, ...], ...]
    strikes: tuple[tuple[int, frozenset[Card]], ...]
    """Each opponent some card in the hand was sure to put out, as the seat knew (see _sure_plays), with those cards."""


BINS = (0.03, 0.06, 0.1, 0.15, 0.2, 0.3, 0.45, 0.7, 0.999)
"""The upper ends of the bins of chances in which holdings are counted (a known card, 1, is never counted)."""


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
        self._judged: list[_Judged] = []
        self._holdings: dict[tuple[int, Card, int], list[float]] = {}
        self._read = 0
        """Records of the match counted so far, and the decisions among them."""
        self._decisions = 0

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
        index = self._count_decisions()
        if not isinstance(action, Play) or action.card not in AIMED or action.target in (None, seat):
            return  # no card aimed at another player: nothing to note
        self._count_holdings(odds)
        choices = _choices(view, action)
        features = tuple(_features(view, sight, action, choices, odds)) if choices else ()
        self._judged.append(_Judged(index, seat, action, bet, choices, features, _sure_plays(view, sight)))

    def _count_decisions(self) -> int:
        """The decisions taken before the one awaited now: its place in the replay, wherever the witness began."""
        records = self._match.records
        self._decisions += sum(1 for record in records[self._read :] if isinstance(record, Decided))
        self._read = len(records)
        return self._decisions

    def _count_holdings(self, odds: dict[int, Odds]) -> None:
        """What each opponent the seat could aim at holds, against the chance the seat gives each card (the
        hidden hands are read here, for the count alone: never for a chance)."""
        holdings, hand, top = self._holdings, self._match.hand, BINS[-1]
        for target, chances in odds.items():
            held = hand(target)[0]
            for card, p in chances.items():
                if p < top:
                    key = (target, card, bisect.bisect_left(BINS, p))
                    counts = holdings.get(key)
                    if counts is None:
                        holdings[key] = [p, float(card is held)]
                    else:
                        counts[0] += p
                        counts[1] += card is held

    def findings(self, match_id: str) -> MatchFairPlay:
        """Every noted play with its outcome, read from the match's log (once over, or as far as it went)."""
        records = self._match.records
        chances: list[Chance] = []
        aims: list[Aim] = []
        strikes: list[Strike] = []
        lines = decision_line_numbers(records)
        hits, outs = _outcomes(records)
        for judged in self._judged:
            index = judged.index
            if index >= len(lines) or index >= len(hits):
                break  # not applied (the match stopped first)
            action, line = judged.action, lines[index]
            aimed = action.target
            assert aimed is not None
            if judged.bet is not None:
                kind = judged.bet.kind
                if kind is Kind.GUARD:
                    success = hits[index] is True
                else:
                    success = (aimed, OutCause.BARON if kind is Kind.BARON else OutCause.PRINCESS) in outs[index]
                chances.append(Chance(judged.seat, line, aimed, judged.bet, success))
            if judged.choices:
                aims.append(Aim(judged.seat, line, action.card, aimed, judged.choices, judged.features))
            for target, cards in judged.strikes:
                strikes.append(Strike(judged.seat, line, target, aimed == target and action.card in cards))
        holdings = tuple(
            Holding(seat, card, bin_, expected, round(observed))
            for (seat, card, bin_), (expected, observed) in sorted(self._holdings.items())
        )
        unnoted = tuple(seat for seat in range(len(self._match.players)) if seat not in self._noted)
        return MatchFairPlay(
            match_id, self._match.players, tuple(chances), tuple(aims), holdings, tuple(strikes), unnoted
        )


def _choices(view: View, action: Play) -> tuple[int, ...]:
    """The opponents the seat could have aimed this card at, when it could choose between two or more."""
    targets = {
        other.target
        for other in view.legal
        if isinstance(other, Play) and other.card is action.card and other.target is not None
    }
    targets.discard(view.seat)
    return tuple(sorted(targets)) if len(targets) > 1 else ()


FEATURES = ("most tokens", "tokens behind", "card known", "first seat", "chance of success", "best chance")
"""What an honest bot may choose its target by, other than who the target is: the leader, how far behind the
leader each is, a card it knows, the first seat of the legal list (the first of equals), the odds of its play
against each, and whether they are the best odds of all (a bot that takes the best makes the smallest difference
decide). Which seat plays next is no feature: where partners sit side by side in every match, it would be the
partner by another name."""


def _features(
    view: View, sight: Sight, action: Play, choices: tuple[int, ...], odds: dict[int, Odds]
) -> list[tuple[float, ...]]:
    """Each choice's FEATURES, as the seat saw them when it chose."""
    players = view.players
    most = max(players[target].tokens for target in choices)
    rest = list(view.hand)
    rest.remove(action.card)
    success = [_success(action.card, rest[0] if rest else None, odds.get(t, {}), sight.ruleset) for t in choices]
    best = max(success)
    return [
        (
            float(players[target].tokens == most),
            float(most - players[target].tokens),
            float(target in sight.known),
            float(target == choices[0]),
            chance,
            float(chance > 0 and chance >= best - 1e-9),
        )
        for target, chance in zip(choices, success, strict=True)
    ]


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


def _outcomes(records: Sequence[Record]) -> tuple[list[bool | None], list[tuple[tuple[int, OutCause], ...]]]:
    """Per decision in order: whether its Guard hit, and who went out of what before the next decision."""
    hits: list[bool | None] = []
    outs: list[tuple[tuple[int, OutCause], ...]] = []
    for record in records:
        kind = type(record)
        if kind is Decided:
            hits.append(None)
            outs.append(())
        elif kind is Played and hits:
            hits[-1] = record.hit  # type: ignore[union-attr]
        elif kind is WentOut and outs:
            outs[-1] = (*outs[-1], (record.seat, record.cause))  # type: ignore[union-attr]
    return hits, outs


# -- kept in the store -----------------------------------------------------------------------------------------------


NOTES_VERSION = 1
"""The layout of a match's stored notes: notes of another layout are taken again from the match's replay."""


def notes_json(notes: MatchFairPlay) -> bytes:
    """A match's notes as the store keeps them (the match's id and players are the match's row)."""
    return orjson.dumps(
        {
            "version": NOTES_VERSION,
            "chances": [
                [c.seat, c.line, c.target, c.bet.kind.value, sorted(c.bet.wins), c.bet.odds, c.success]
                for c in notes.chances
            ],
            "aims": [[a.seat, a.line, a.card, a.target, a.choices, a.features] for a in notes.aims],
            "holdings": [[h.seat, h.card, h.bin, h.expected, h.observed] for h in notes.holdings],
            "strikes": [[s.seat, s.line, s.target, s.used] for s in notes.strikes],
            "unnoted": notes.unnoted,
        }
    )


def notes_from_json(match_id: str, players: Sequence[str], text: bytes | str) -> MatchFairPlay | None:
    """`notes_json` read back: equal to the notes written; None for notes of another layout, or unreadable."""
    try:
        return _notes(match_id, players, orjson.loads(text))
    except (orjson.JSONDecodeError, KeyError, ValueError, TypeError, IndexError):
        return None


def _notes(match_id: str, players: Sequence[str], data: dict[str, Any]) -> MatchFairPlay:
    if data.get("version") != NOTES_VERSION:
        raise ValueError("another layout")
    return MatchFairPlay(
        match_id,
        tuple(players),
        tuple(
            Chance(seat, line, target, Bet(_KIND[kind], frozenset(_CARDS[card] for card in wins), _odds(odds)), success)
            for seat, line, target, kind, wins, odds, success in data["chances"]
        ),
        tuple(
            Aim(seat, line, _CARDS[card], target, tuple(choices), tuple(map(tuple, features)))
            for seat, line, card, target, choices, features in data["aims"]
        ),
        tuple(
            Holding(seat, _CARDS[card], bin_, expected, observed)
            for seat, card, bin_, expected, observed in data["holdings"]
        ),
        tuple(Strike(seat, line, target, used) for seat, line, target, used in data["strikes"]),
        tuple(data["unnoted"]),
    )


def _odds(pairs: Iterable[Sequence[Any]]) -> tuple[tuple[Card, float], ...]:
    return tuple((_CARDS[card], float(p)) for card, p in pairs)


_CARDS = tuple(Card)
"""A card by its number (Card(n) was most of the time of reading notes back)."""
_KIND = {kind.value: kind for kind in Kind}

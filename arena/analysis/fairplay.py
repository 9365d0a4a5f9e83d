"""Fair play: a bot that knows more than it can see, and bots that spare each other.

No sandbox closes every channel, so what cannot be prevented is detected. Each seat is followed through its
match from what it was told alone (its events and its views, as the judge of provable mistakes follows it), and
each of its plays whose success the replay shows gets its chance of success over every deal consistent with what
the seat knew: a Guard that names the target's card, a Baron that puts its target out, a Prince that makes its
target discard the Princess. An honest bot's successes are then a sum of Bernoulli draws with those chances (a
Poisson-binomial count); a bot with far more successes than that saw what it could not.

Each play on another player also keeps whom the seat could have chosen: a bot that chooses another far less
often than its own way of choosing predicts spares it, and two bots that spare each other are the strong signal
of a shared hand.

Counting cards alone underrates what an honest bot may know: its opponents' habits (no one throws the Princess
away, most keep the higher card) and its own way of choosing targets (the leader, the first of equals). So by
default a play's chance is calibrated by the target bot's habits, as the hidden hands of the tournament's
matches show them, and a choice of target is weighed by a model of the bot's own choices (a conditional logit on
FEATURES, which leave out who the target is). With `calibrate=False`: the counts of cards alone, and choices at
random among the legal targets.

Both tests are exact tails of the Poisson-binomial distribution, flagged below alpha divided by the number of
tests of their kind (Bonferroni), so that a tournament of honest bots is flagged with probability about alpha
per detector. A flag says that the plays were very unlikely for a bot that knew only what it was told; it proves
no channel by itself.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

from arena.analysis.watch import replayed_decisions
from arena.engine import (
    Action,
    Card,
    ChancellorEvent,
    Decided,
    DiscardEvent,
    Event,
    EventFeed,
    Faulted,
    Keep,
    Match,
    Observer,
    OutCause,
    OutEvent,
    Play,
    Played,
    PlayEvent,
    Record,
    RoundEnded,
    RoundStartEvent,
    Ruleset,
    View,
    WentOut,
)
from arena.errors import ReplayError
from arena.replay import read_replay
from arena.replay.lines import ReplayLine, decision_line_numbers

ALPHA = 0.001
"""The chance that a tournament of honest bots gets a flag of either kind (each detector's family-wise rate)."""
SHOWN = 20
"""Decisions named in a test's JSON: the most telling ones."""
ENUMERATED = 5000
"""The most joint hands of constrained opponents enumerated for one decision; beyond it only the target's own
constraints are kept (a handful of opponents each with most cards ruled out: it never happens in practice)."""
SURPLUS = 0.1
"""How much more often than its chances say a bot must succeed before the surplus is weighed against chance: no
model of what an honest bot may know is exact, and over thousands of plays a test with no room flags the model's
error (a few hundredths either way for the built-in bots, calibrated)."""
SHORTFALL = 0.2
"""How much less often than its own way of choosing predicts a bot must choose a partner before the shortfall is
weighed against chance (the model of choices misses by up to a tenth for the built-in bots)."""
NEGLIGIBLE = 1e-200
"""Probability mass the Poisson-binomial recursion drops: at most this times the number of decisions is lost."""

GUARD, PRIEST, BARON, PRINCE, KING, COUNTESS, PRINCESS = (
    Card.GUARD,
    Card.PRIEST,
    Card.BARON,
    Card.PRINCE,
    Card.KING,
    Card.COUNTESS,
    Card.PRINCESS,
)
AIMED = frozenset({GUARD, PRIEST, BARON, PRINCE, KING})
"""The cards that choose another player."""

T = TypeVar("T")


class Kind(StrEnum):
    """A play whose success the replay shows."""

    GUARD = "guard"
    """A Guard that named the target's card."""
    BARON = "baron"
    """A Baron that put the target out."""
    PRINCE = "prince"
    """A Prince that made the target discard the Princess."""


_KINDS = {GUARD: Kind.GUARD, BARON: Kind.BARON, PRINCE: Kind.PRINCE}


@dataclass(frozen=True, slots=True)
class Bet:
    """A play whose success turns on the target's card: the cards that make it succeed, and the chance of each
    card from the seat's own information."""

    kind: Kind
    wins: frozenset[Card]
    odds: tuple[tuple[Card, float], ...]

    @property
    def probability(self) -> float:
        return sum(p for card, p in self.odds if card in self.wins)


# -- what one seat knows -------------------------------------------------------------------------------------------


class Sight:
    """What one seat knows of the hidden cards of its round, kept up to date from its own events and views.

    It knows another seat's card from its own Priest, a level Baron or a King trade it took part in, and a card
    it put under the deck with a Chancellor once another seat draws it; that lasts while the holder provably keeps
    the card. It knows what another seat does not hold from a Guard that missed, the Countess rule (a King or a
    Prince played: the card kept is no Countess) and a Baron between two others (the winner's card beats the
    loser's, shown as it goes out), until the holder may have changed its card. Every other card it has not seen
    is equally likely anywhere: in a hand, set aside or in the deck."""

    def __init__(self, seat: int, ruleset: Ruleset) -> None:
        self.seat = seat
        self.ruleset = ruleset
        self.known: dict[int, Card] = {}
        """Other seats' cards this seat knows now."""
        self.excluded: dict[int, frozenset[Card]] = {}
        """Cards another seat provably does not hold now (for seats whose card is not known)."""
        self.under: list[Card | None] = []
        """The deck's lowest cards, lowest first, as far as this seat put them there (None: another's)."""
        self.deck: int | None = None
        """Cards in the deck, as counted from the events; None when a fault left the count unsure."""
        self.own: Card | None = None
        """This seat's card between its turns, while it knows it (what it gives away to a King)."""
        self._baron: tuple[int, int] | None = None
        """The two players of a Baron just played, for the winner of one between two others."""

    # -- feeding -------------------------------------------------------------------------------------------------

    def observe(self, events: Iterable[Event]) -> None:
        for event in events:
            if isinstance(event, PlayEvent):
                self._played(event)
            elif isinstance(event, DiscardEvent):
                self._discarded(event)
            elif isinstance(event, ChancellorEvent):
                self._chancellor(event)
            elif isinstance(event, OutEvent):
                self._out(event)
            elif isinstance(event, RoundStartEvent):
                self._round_start(event)
            elif isinstance(event, RoundEnded):
                self._reset(None)
            elif isinstance(event, Faulted):
                self.deck = None  # a seat out on its own turn had drawn: the count is lost till the next view
                self.under.clear()

    def _reset(self, deck: int | None) -> None:
        self.known.clear()
        self.excluded.clear()
        self.under.clear()
        self.deck = deck
        self.own = None
        self._baron = None

    def _round_start(self, event: RoundStartEvent) -> None:
        dealt = 1 + len(event.removed_face_up) + len(event.players_in)  # the set-aside card, face up, hands
        self._reset(len(self.ruleset.deck) - dealt)
        self.own = event.hand[0] if event.hand else None

    def _played(self, event: PlayEvent) -> None:
        player, card, target = event.seat, event.card, event.target
        self._baron = None
        if player != self.seat:  # this seat's own draws are read from its views
            self._kept(player, card, self._draw())
            if card is KING or card is PRINCE:
                self._exclude(player, {COUNTESS})  # with the Countess it would have had to play her
        if target is None:
            return
        if card is GUARD and event.hit is False and event.guess is not None:
            self._exclude(target, {event.guess})
        elif card is PRIEST and event.seen is not None:
            self._know(target, event.seen)
        elif card is BARON:
            self._baron = (player, target)
            if event.cards is not None:
                (first, first_card), (second, second_card) = event.cards.items()
                if first_card is second_card:  # level: each now knows the other's card
                    self._know(second if first == self.seat else first, first_card)
        elif card is KING:
            self._king(player, target, event.received)

    def _kept(self, player: int, played: Card, drawn: Card | None) -> None:
        """What another seat holds after playing `played` from its old card and the one it drew."""
        if drawn is not None:
            if drawn is not played:
                self._know(player, drawn)
            return  # it played the card drawn (or an old one of the same type): what was known of it holds
        old = self.known.get(player)
        if old is None or old is played:
            self._forget(player)  # it may hold the card it drew

    def _king(self, player: int, target: int, received: Card | None) -> None:
        me = self.seat
        if me in (player, target):
            other = target if player == me else player
            self._forget(other)
            if self.own is not None:
                self._know(other, self.own)
            self.own = received
            return
        _swap(self.known, player, target)  # the hands changed places: so does what was known of them
        _swap(self.excluded, player, target)

    def _discarded(self, event: DiscardEvent) -> None:
        drawn = None if event.drew_set_aside else self._draw()
        if event.seat == self.seat:
            self.own = drawn
            return
        self._forget(event.seat)
        if drawn is not None:
            self._know(event.seat, drawn)

    def _chancellor(self, event: ChancellorEvent) -> None:
        if event.seat == self.seat:
            return  # this seat's own: read from its view and its answer
        for _ in range(event.drew):
            self._draw()
        self._forget(event.seat)
        self._bury([None] * event.returned)

    def _out(self, event: OutEvent) -> None:
        self._forget(event.seat)
        if event.cause is OutCause.BARON and self._baron is not None and event.seat in self._baron:
            first, second = self._baron
            winner = second if event.seat == first else first
            values = self.ruleset.values
            self._exclude(winner, {card for card in self.ruleset.cards if values[card] <= values[event.card]})

    def _know(self, seat: int, card: Card) -> None:
        if seat != self.seat:
            self.known[seat] = card
            self.excluded.pop(seat, None)

    def _forget(self, seat: int) -> None:
        self.known.pop(seat, None)
        self.excluded.pop(seat, None)

    def _exclude(self, seat: int, cards: set[Card]) -> None:
        if seat != self.seat and seat not in self.known:
            self.excluded[seat] = self.excluded.get(seat, frozenset()) | cards

    def _draw(self) -> Card | None:
        """A card drawn from the deck: the one this seat put there, if it did."""
        if self.deck is None:
            return None
        if self.deck <= 0:
            self.deck = None
            self.under.clear()
            return None
        self.deck -= 1
        return self.under.pop() if len(self.under) > self.deck else None

    def _bury(self, lowest_first: list[Card | None]) -> None:
        if self.deck is None:
            return
        self.deck += len(lowest_first)
        self.under[:0] = lowest_first
        while self.under and self.under[-1] is None:
            self.under.pop()  # nothing known above the last card this seat put there

    # -- judging -------------------------------------------------------------------------------------------------

    def judge(self, view: View, action: Action) -> Bet | None:
        """What this answer to `view` bets on the target's card, where the replay shows whether it won; then the
        seat holds what it keeps."""
        self._sync(view.deck)
        if isinstance(action, Keep):
            self.own = action.keep
            self._bury(list(reversed(action.bottom)))
            return None
        rest = list(view.hand)
        rest.remove(action.card)
        kept = rest[0] if rest else None
        self.own = kept
        target = action.target
        if target is None or target == self.seat:
            return None
        if action.card is GUARD and action.guess is not None:
            wins = frozenset({action.guess})
        elif action.card is PRINCE:
            wins = frozenset({PRINCESS})
        elif action.card is BARON and kept is not None:
            values = self.ruleset.values
            wins = frozenset(card for card in self.ruleset.cards if values[card] < values[kept])
        else:
            return None
        return Bet(_KINDS[action.card], wins, tuple(sorted(self.odds(view, target).items())))

    def _sync(self, deck: int) -> None:
        """The seat's own draws, from its view: the cards it put under the deck that are left are the lowest."""
        if self.deck is None or deck > self.deck:
            self.under.clear()
        else:
            del self.under[deck:]
        self.deck = deck

    def odds(self, view: View, target: int) -> dict[Card, float]:
        """The chance of each card being `target`'s now, over every deal consistent with what this seat knows (at a
        play decision, once `judge` has read the view: the view's hand holds what the seat drew)."""
        return self._odds(view, [target])[target]

    def chances(self, view: View) -> dict[int, dict[Card, float]]:
        """The odds of every opponent the seat could aim at now (as `odds`)."""
        players = view.players
        return self._odds(view, [t for t, p in enumerate(players) if t != self.seat and p.in_round and not p.protected])

    def _odds(self, view: View, targets: list[int]) -> dict[int, dict[Card, float]]:
        found: dict[int, dict[Card, float]] = {t: {self.known[t]: 1.0} for t in targets if t in self.known}
        unknown = [t for t in targets if t not in found]
        if unknown:
            hidden = [s for s, p in enumerate(view.players) if p.in_round and s != self.seat and s not in self.known]
            bound = {s: self.excluded[s] for s in hidden if s in self.excluded}
            found.update(posteriors(self.unseen(view), bound, unknown))
        return found

    def unseen(self, view: View) -> Counter[Card]:
        """The cards whose place this seat does not know: in an unknown hand, set aside, or in the deck."""
        pool: Counter[Card] = Counter(self.ruleset.counts)
        pool.subtract(view.hand)
        pool.subtract(view.removed_face_up)
        for player in view.players:
            pool.subtract(player.discards)
        pool.subtract(self.known.values())
        pool.subtract(card for card in self.under if card is not None)
        return +pool


def _swap(table: dict[int, T], first: int, second: int) -> None:
    a, b = table.pop(first, None), table.pop(second, None)
    if a is not None:
        table[second] = a
    if b is not None:
        table[first] = b


def posterior(pool: Counter[Card], excluded: dict[int, frozenset[Card]], target: int) -> dict[Card, float]:
    """The chance of each card being `target`'s, the unseen cards `pool` dealt uniformly over the hidden places
    (hands, the set-aside card, the deck), given the cards each constrained seat is known not to hold."""
    return posteriors(pool, excluded, [target])[target]


def posteriors(
    pool: Counter[Card], excluded: dict[int, frozenset[Card]], targets: Sequence[int]
) -> dict[int, dict[Card, float]]:
    """`posterior` for several targets at once.

    The seats without constraints are exchangeable with the deck, so only the constrained ones are enumerated,
    once for all targets: each joint hand weighs the number of ways to deal its cards from the pool."""
    total = sum(pool.values())
    if total <= 0:
        return {target: {} for target in targets}
    if not excluded:
        return {target: {card: count / total for card, count in pool.items()} for target in targets}
    seats = list(excluded)
    choices = [[card for card in pool if card not in excluded[seat]] for seat in seats]
    if _product(len(cards) for cards in choices) > ENUMERATED:
        return {target: posterior(pool, _only(excluded, target), target) for target in targets}
    held: dict[int, defaultdict[Card, float]] = {seat: defaultdict(float) for seat in seats}
    free: defaultdict[Card, float] = defaultdict(float)
    anyone = any(target not in excluded for target in targets)
    for hands in itertools.product(*choices):
        weight, used = _ways(pool, hands)
        if not weight:
            continue
        for seat, card in zip(seats, hands, strict=True):
            held[seat][card] += weight
        rest = total - len(hands)
        if anyone and rest > 0:
            for card, count in pool.items():
                free[card] += weight * (count - used.get(card, 0)) / rest
    return {target: _normal(held.get(target, free), pool, total) for target in targets}


def _only(excluded: dict[int, frozenset[Card]], target: int) -> dict[int, frozenset[Card]]:
    return {target: excluded[target]} if target in excluded else {}


def _normal(weights: dict[Card, float], pool: Counter[Card], total: int) -> dict[Card, float]:
    """The weights as chances; constraints that contradict each other (none should) leave the counts alone."""
    mass = sum(weights.values())
    if mass <= 0:
        return {card: count / total for card, count in pool.items()}
    return {card: weight / mass for card, weight in weights.items() if weight > 0}


def _ways(pool: Counter[Card], hands: Sequence[Card]) -> tuple[int, dict[Card, int]]:
    """The ways to deal `hands` from the pool (its cards told apart), and the cards they use."""
    weight, used = 1, dict[Card, int]()
    for card in hands:
        taken = used.get(card, 0)
        weight *= pool[card] - taken
        if weight <= 0:
            return 0, used
        used[card] = taken + 1
    return weight, used


def _product(sizes: Iterable[int]) -> int:
    result = 1
    for size in sizes:
        result *= size
    return result


# -- one match ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class Aim:
    """A play on another player: whom the seat chose, among the opponents it could choose."""

    seat: int
    line: int
    card: Card
    target: int
    choices: tuple[int, ...]
    features: tuple[tuple[float, ...], ...] = ()
    """Per choice, what an honest bot may aim by (FEATURES), as the seat saw it."""


@dataclass(frozen=True, slots=True)
class Holding:
    """How often a seat held a card, against the chance its opponents gave it (summed over a match's decisions,
    for the chances that fall in one bin): the bots' own habits (no one throws the Princess away) that the
    counts of cards alone do not know."""

    seat: int
    card: Card
    bin: int
    expected: float
    observed: int


@dataclass(frozen=True, slots=True)
class MatchFairPlay:
    """What one match tells of its seats' fair play: every chance taken and every choice of target."""

    match_id: str
    players: tuple[str, ...]
    chances: tuple[Chance, ...]
    aims: tuple[Aim, ...]
    holdings: tuple[Holding, ...] = ()


@dataclass(frozen=True, slots=True)
class _Judged:
    index: int
    """The decision's place among the match's decisions (from 0)."""
    seat: int
    action: Action
    bet: Bet | None
    choices: tuple[int, ...]
    features: tuple[tuple[float, ...], ...]


BINS = (0.03, 0.06, 0.1, 0.15, 0.2, 0.3, 0.45, 0.7, 0.999)
"""The upper ends of the bins of chances in which holdings are counted (a known card, 1, is never counted)."""


def chance_bin(p: float) -> int:
    return bisect.bisect_left(BINS, p)


class Witness:
    """Follows each seat of one match from its own information and notes the chance of each of its plays."""

    def __init__(self, match: Match) -> None:
        feed = EventFeed(match)
        self._match = match
        self._observers = [Observer(match, seat, feed) for seat in range(len(match.players))]
        self._sights = [Sight(seat, match.ruleset) for seat in range(len(match.players))]
        self._judged: list[_Judged] = []
        self._holdings: dict[tuple[int, Card, int], list[float]] = {}
        self._read = 0
        """Records of the match counted so far, and the decisions among them."""
        self._decisions = 0

    def share_feed(self, seat: int, observer: Observer) -> None:
        """Read the seat's events from the referee's feed, before any is taken (at the match's start)."""
        self._observers[seat] = observer.twin()

    def judge(self, seat: int, action: Action) -> None:
        """Note the answer `seat` gives now (a legal one, before the match applies it)."""
        observer = self._observers[seat]
        sight = self._sights[seat]
        sight.observe(observer.take_events())
        view = observer.view()
        bet = sight.judge(view, action)
        index = self._count_decisions()
        if not isinstance(action, Play):
            self._judged.append(_Judged(index, seat, action, None, (), ()))
            return
        odds = sight.chances(view)
        self._count_holdings(odds)
        choices = _choices(view, action)
        features = tuple(_features(view, sight, action, choices, odds)) if choices else ()
        self._judged.append(_Judged(index, seat, action, bet, choices, features))

    def _count_decisions(self) -> int:
        """The decisions taken before the one awaited now: its place in the replay, wherever the witness began."""
        records = self._match.records
        self._decisions += sum(1 for record in records[self._read :] if isinstance(record, Decided))
        self._read = len(records)
        return self._decisions

    def _count_holdings(self, odds: dict[int, dict[Card, float]]) -> None:
        """What each opponent the seat could aim at holds, against the chance the seat gives each card (the
        hidden hands are read here, for the count alone: never for a chance)."""
        for target, chances in odds.items():
            held = self._match.hand(target)[0]
            for card, p in chances.items():
                if p < BINS[-1]:
                    counts = self._holdings.setdefault((target, card, chance_bin(p)), [0.0, 0.0])
                    counts[0] += p
                    counts[1] += card is held

    def findings(self, match_id: str) -> MatchFairPlay:
        """Every noted play with its outcome, read from the match's log (once over, or as far as it went)."""
        records = self._match.records
        chances: list[Chance] = []
        aims: list[Aim] = []
        lines, outcomes = decision_line_numbers(records), _outcomes(records)
        for judged in self._judged:
            if judged.index >= min(len(lines), len(outcomes)):
                break  # not applied (the match stopped first)
            action, line, outcome = judged.action, lines[judged.index], outcomes[judged.index]
            if not isinstance(action, Play) or action.target is None:
                continue
            if judged.bet is not None:
                success = _succeeded(judged.bet.kind, action.target, outcome)
                chances.append(Chance(judged.seat, line, action.target, judged.bet, success))
            if judged.choices:
                aims.append(Aim(judged.seat, line, action.card, action.target, judged.choices, judged.features))
        holdings = tuple(
            Holding(seat, card, bin_, expected, round(observed))
            for (seat, card, bin_), (expected, observed) in sorted(self._holdings.items())
        )
        return MatchFairPlay(match_id, self._match.players, tuple(chances), tuple(aims), holdings)


def _choices(view: View, action: Action) -> tuple[int, ...]:
    """The opponents the seat could have aimed this card at, when it aimed it at one of them."""
    if not isinstance(action, Play) or action.card not in AIMED or action.target in (None, view.seat):
        return ()
    targets = {
        other.target
        for other in view.legal
        if isinstance(other, Play) and other.card is action.card and other.target is not None
    }
    targets.discard(view.seat)
    return tuple(sorted(targets))


FEATURES = ("most tokens", "tokens behind", "card known", "first seat", "chance of success", "best chance")
"""What an honest bot may choose its target by, other than who the target is: the leader, how far behind the
leader each is, a card it knows, the first seat of the legal list (the first of equals), the odds of its play
against each, and whether they are the best odds of all (a bot that takes the best makes the smallest difference
decide). Which seat plays next is no feature: where partners sit side by side in every match, it would be the
partner by another name."""


def _features(
    view: View, sight: Sight, action: Play, choices: tuple[int, ...], odds: dict[int, dict[Card, float]]
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


def _success(card: Card, kept: Card | None, odds: dict[Card, float], ruleset: Ruleset) -> float:
    """The best chance this card has against a target with these odds (0 for a card that puts no one out)."""
    if card is GUARD:
        return max((p for held, p in odds.items() if held is not GUARD), default=0.0)
    if card is BARON and kept is not None:
        return sum(p for held, p in odds.items() if ruleset.values[held] < ruleset.values[kept])
    if card is PRINCE:
        return odds.get(PRINCESS, 0.0)
    return 0.0


@dataclass(frozen=True, slots=True)
class _Outcome:
    hit: bool | None
    out: frozenset[tuple[int, OutCause]]


def _outcomes(records: Sequence[Record]) -> list[_Outcome]:
    """Per decision in order: whether its Guard hit, and who went out of what before the next decision."""
    found: list[_Outcome] = []
    for record in records:
        if isinstance(record, Decided):
            found.append(_Outcome(None, frozenset()))
        elif found and isinstance(record, Played):
            found[-1] = _Outcome(record.hit, found[-1].out)
        elif found and isinstance(record, WentOut):
            found[-1] = _Outcome(found[-1].hit, found[-1].out | {(record.seat, record.cause)})
    return found


def _succeeded(kind: Kind, target: int, outcome: _Outcome) -> bool:
    if kind is Kind.GUARD:
        return outcome.hit is True
    cause = OutCause.BARON if kind is Kind.BARON else OutCause.PRINCESS
    return (target, cause) in outcome.out


def fair_play_of_replay(lines: Sequence[ReplayLine]) -> MatchFairPlay | None:
    """The same notes from a replay, re-simulated: each decision from the events and the view its seat had, as
    far as the replay keeps the rules (None for a replay that starts wrong)."""
    witness: Witness | None = None
    for match, seat, action in replayed_decisions(lines):
        witness = witness or Witness(match)
        witness.judge(seat, action)
    if witness is None:
        return None
    return witness.findings(str(lines[0].data.get("match_id", "")))  # the match_start line: replayed_decisions read it


def upper_tail(probabilities: Sequence[float], observed: int) -> float:
    """P(X >= observed) for X the number of successes of independent trials with these chances (Poisson-binomial),
    by the exact recursion over the trials; counts that reach `observed` are summed as they do, and mass below
    NEGLIGIBLE dropped, so the work is about the trials times the spread of X, not their square."""
    sure = sum(1 for p in probabilities if p >= 1.0)
    needed = observed - sure
    chances = [p for p in probabilities if 0.0 < p < 1.0]
    if needed <= 0:
        return 1.0
    if needed > len(chances):
        return 0.0
    low, mass, reached = 0, [1.0], 0.0
    for p in chances:
        q = 1.0 - p
        following = [a * q + b * p for a, b in zip([*mass, 0.0], [0.0, *mass], strict=True)]
        if low + len(following) - 1 >= needed:
            reached += following.pop()
        start = 0
        while start < len(following) - 1 and following[start] < NEGLIGIBLE:
            start += 1
        end = len(following)
        while end > start + 1 and following[end - 1] < NEGLIGIBLE:
            end -= 1
        low += start
        mass = following[start:end]
        if not mass:
            break
    return min(1.0, reached)


def lower_tail(probabilities: Sequence[float], observed: int) -> float:
    """P(X <= observed), as the upper tail of the failures."""
    return upper_tail([1.0 - p for p in probabilities], len(probabilities) - observed)


@dataclass(frozen=True, slots=True)
class Step:
    """One decision behind a test: its match and replay line, its chance of success, and whether it succeeded
    (for sparing: the chance that the bot's way of choosing picks the partner, and whether it did)."""

    match_id: str
    line: int
    probability: float
    success: bool


@dataclass(frozen=True, slots=True)
class Verdict:
    """Successes against their chances: the exact tail of the Poisson-binomial count in the test's direction."""

    expected: float
    observed: int
    p_value: float
    """The tail's probability with the chances moved by the tolerance, towards the flag."""
    threshold: float
    """alpha over the number of tests of this kind."""
    upper: bool
    """More successes than chance (knows more than it can see), or fewer (spares a partner)."""
    tolerance: float
    """The share by which the observed count may pass the expected before chance is weighed (SURPLUS, SHORTFALL)."""
    steps: tuple[Step, ...]

    @classmethod
    def of(cls, steps: Sequence[Step], threshold: float, upper: bool, tolerance: float = 0.0) -> Verdict:
        chances = [step.probability for step in steps]
        observed = sum(step.success for step in steps)
        if upper:
            p_value = upper_tail([min(1.0, p * (1 + tolerance)) for p in chances], observed)
        else:
            p_value = lower_tail([p * (1 - tolerance) for p in chances], observed)
        return cls(sum(chances), observed, p_value, threshold, upper, tolerance, tuple(steps))

    @property
    def decisions(self) -> int:
        return len(self.steps)

    @property
    def flagged(self) -> bool:
        return self.p_value < self.threshold

    def evidence(self, limit: int = SHOWN) -> list[Step]:
        """The most telling decisions: the least likely successes, or the likeliest choices of the partner not
        made."""
        if self.upper:
            return sorted((s for s in self.steps if s.success), key=lambda s: s.probability)[:limit]
        return sorted((s for s in self.steps if not s.success), key=lambda s: -s.probability)[:limit]

    def json(self) -> dict[str, Any]:
        return {
            "decisions": self.decisions,
            "expected": round(self.expected, 3),
            "observed": self.observed,
            "p_value": self.p_value,
            "threshold": self.threshold,
            "tolerance": self.tolerance,
            "flagged": self.flagged,
            "steps": [
                {"match_id": s.match_id, "line": s.line, "probability": round(s.probability, 4)}
                for s in self.evidence()
            ],
        }


class Flag(StrEnum):
    KNOWS_MORE = "knows-more-than-it-can-see"
    SPARES = "spares-a-partner"


@dataclass(frozen=True, slots=True)
class Sparing:
    """How often a bot chose one partner, against its own way of choosing (or at random, uncalibrated) among the
    opponents it could choose."""

    partner: str
    test: Verdict
    mutual: bool
    """The partner is flagged for sparing this bot too."""


@dataclass(frozen=True, slots=True)
class BotFairPlay:
    bot: str
    knows_more: Verdict | None
    """None when none of its plays had a success the replay shows."""
    spares: tuple[Sparing, ...]
    """One per partner it could choose beside another opponent, in the order met."""

    @property
    def flags(self) -> list[dict[str, Any]]:
        """Each flag with its statistic: what `arena diagnose --format json` lists."""
        found: list[dict[str, Any]] = []
        if self.knows_more is not None and self.knows_more.flagged:
            found.append(_flag(Flag.KNOWS_MORE, self.knows_more))
        for sparing in self.spares:
            if sparing.test.flagged:
                found.append({**_flag(Flag.SPARES, sparing.test), "partner": sparing.partner, "mutual": sparing.mutual})
        return found

    def json(self) -> dict[str, Any]:
        """The bot's `fair_play` object."""
        return {
            "flags": self.flags,
            "knows_more": None if self.knows_more is None else self.knows_more.json(),
            "spares": [
                {"partner": sparing.partner, "mutual": sparing.mutual, **sparing.test.json()} for sparing in self.spares
            ],
        }


def _flag(flag: Flag, test: Verdict) -> dict[str, Any]:
    return {
        "flag": flag.value,
        "expected": round(test.expected, 3),
        "observed": test.observed,
        "p_value": test.p_value,
        "threshold": test.threshold,
        "steps": [{"match_id": step.match_id, "line": step.line} for step in test.evidence()],
    }


@dataclass(frozen=True, slots=True)
class FairPlay:
    alpha: float
    bots: tuple[BotFairPlay, ...]

    def bot(self, name: str) -> BotFairPlay:
        return next(bot for bot in self.bots if bot.bot == name)


RIDGE = 1.0
"""The penalty on the square of the choice model's weights: it keeps finite a feature that always decides."""
STRIDE = 4.0
"""The longest step of the fit in any weight."""


def choice_weights(aims: Sequence[Aim], rounds: int = 50) -> tuple[float, ...]:
    """The weights of FEATURES that best explain a bot's choices of target (a conditional logit: a choice's
    chance grows as the exponential of its weighted features), fitted by Newton's method."""
    size = len(FEATURES)
    weights = [0.0] * size
    fitted = [aim for aim in aims if aim.features]
    for _ in range(rounds):
        gradient = [-RIDGE * w for w in weights]
        curvature = [[RIDGE * (i == j) for j in range(size)] for i in range(size)]
        for aim in fitted:
            chances = _softmax(weights, aim.features)
            mean = [sum(p * x[i] for p, x in zip(chances, aim.features, strict=True)) for i in range(size)]
            chosen = aim.features[aim.choices.index(aim.target)]
            for i in range(size):
                gradient[i] += chosen[i] - mean[i]
            for p, x in zip(chances, aim.features, strict=True):
                centred = [x[i] - mean[i] for i in range(size)]
                for i in range(size):
                    for j in range(size):
                        curvature[i][j] += p * centred[i] * centred[j]
        step = _solve(curvature, gradient)
        longest = max(abs(d) for d in step)
        if longest > STRIDE:  # far from the top: a shorter step, so that Newton's cannot overshoot it
            step = [d * STRIDE / longest for d in step]
        weights = [w + d for w, d in zip(weights, step, strict=True)]
        if max(abs(d) for d in step) < 1e-9:
            break
    return tuple(weights)


def choice_chances(weights: Sequence[float], aim: Aim) -> list[float]:
    """The chance of each of the aim's choices under the model; at random among them without features."""
    if not aim.features or not weights:
        return [1.0 / len(aim.choices)] * len(aim.choices)
    return _softmax(weights, aim.features)


def _softmax(weights: Sequence[float], features: Sequence[Sequence[float]]) -> list[float]:
    scores = [sum(w * x for w, x in zip(weights, row, strict=True)) for row in features]
    top = max(scores)
    exps = [math.exp(score - top) for score in scores]
    total = sum(exps)
    return [e / total for e in exps]


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """matrix x = vector, by Gaussian elimination with partial pivoting (the matrix is positive definite)."""
    size = len(vector)
    rows = [[*row, value] for row, value in zip(matrix, vector, strict=True)]
    for column in range(size):
        pivot = max(range(column, size), key=lambda r: abs(rows[r][column]))
        rows[column], rows[pivot] = rows[pivot], rows[column]
        for r in range(column + 1, size):
            factor = rows[r][column] / rows[column][column]
            rows[r] = [a - factor * b for a, b in zip(rows[r], rows[column], strict=True)]
    solution = [0.0] * size
    for r in reversed(range(size)):
        known = sum(rows[r][c] * solution[c] for c in range(r + 1, size))
        solution[r] = (rows[r][size] - known) / rows[r][r]
    return solution


PRIOR = 10.0
"""Holdings, in expected counts, that pull each habit towards none (a ratio of 1) while it is little known."""

Habits = dict[tuple[str, Card, int], float]
"""(bot, card, bin of chance): how much more often the bot holds the card than its opponents' chance said."""


def habits(matches: Iterable[MatchFairPlay]) -> Habits:
    """Each bot's habits, as the hidden hands of the matches show them."""
    sums: dict[tuple[str, Card, int], list[float]] = {}
    for match in matches:
        for holding in match.holdings:
            counts = sums.setdefault((match.players[holding.seat], holding.card, holding.bin), [0.0, 0.0])
            counts[0] += holding.expected
            counts[1] += holding.observed
    return {key: (observed + PRIOR) / (expected + PRIOR) for key, (expected, observed) in sums.items()}


def calibrated(bet: Bet, target: str, known: Habits) -> float:
    """The bet's chance with the target bot's habits: each winning card's chance times how much more often the
    bot holds that card at that chance than the counts say."""
    chance = sum(
        p * (known.get((target, card, chance_bin(p)), 1.0) if p < BINS[-1] else 1.0)
        for card, p in bet.odds
        if card in bet.wins
    )
    return min(1.0, chance)


@dataclass(frozen=True, slots=True)
class Criteria:
    """What a flag takes."""

    alpha: float = ALPHA
    calibrate: bool = True
    """Chances with the targets' habits and choices weighed by each bot's own way of choosing (else the counts of
    cards alone, and choices at random among the legal targets)."""
    surplus: float = SURPLUS
    shortfall: float = SHORTFALL


def tally(
    matches: Iterable[MatchFairPlay], bots: Sequence[str] | None = None, criteria: Criteria = Criteria()
) -> FairPlay:
    """Both tests for every bot (those named, else every bot met in the order met), from the matches' notes.

    A bot's own copies at the table count as a partner like any other: clones that know each other can share
    their hands too."""
    matches = list(matches)
    alpha, calibrate = criteria.alpha, criteria.calibrate
    known = habits(matches) if calibrate else {}
    chances: dict[str, list[Step]] = {}
    aimed: dict[str, list[tuple[MatchFairPlay, Aim]]] = {}
    met: dict[str, None] = dict.fromkeys(bots or ())
    for match in matches:
        names = match.players
        met.update(dict.fromkeys(names))
        for chance in match.chances:
            p = calibrated(chance.bet, names[chance.target], known)
            chances.setdefault(names[chance.seat], []).append(Step(match.match_id, chance.line, p, chance.success))
        for aim in match.aims:
            aimed.setdefault(names[aim.seat], []).append((match, aim))
    aims: dict[tuple[str, str], list[Step]] = {}
    for bot, pairs in aimed.items():
        weights = choice_weights([aim for _, aim in pairs]) if calibrate else ()
        for match, aim in pairs:
            _spread(aims, bot, match, aim, choice_chances(weights, aim))
    knows = {bot: Verdict.of(steps, alpha / len(chances), True, criteria.surplus) for bot, steps in chances.items()}
    spared = {pair: Verdict.of(steps, alpha / len(aims), False, criteria.shortfall) for pair, steps in aims.items()}
    results = []
    for bot in bots if bots is not None else met:
        sparing = tuple(
            Sparing(partner, test, partner != bot and test.flagged and _flagged(spared.get((partner, bot))))
            for (spender, partner), test in spared.items()
            if spender == bot
        )
        results.append(BotFairPlay(bot, knows.get(bot), sparing))
    return FairPlay(alpha, tuple(results))


def _spread(
    aims: dict[tuple[str, str], list[Step]], bot: str, match: MatchFairPlay, aim: Aim, chances: list[float]
) -> None:
    """One aim as a step of each partner that was a choice beside another opponent."""
    names = match.players
    partners: dict[str, float] = {}
    for seat, p in zip(aim.choices, chances, strict=True):
        partners[names[seat]] = partners.get(names[seat], 0.0) + p
    if len(partners) < 2:
        return  # only one bot could be chosen: no choice between bots
    for partner, p in partners.items():
        step = Step(match.match_id, aim.line, p, names[aim.target] == partner)
        aims.setdefault((bot, partner), []).append(step)


def _flagged(test: Verdict | None) -> bool:
    return test is not None and test.flagged


def fair_play_from_replays(
    replays: Iterable[Sequence[ReplayLine]], bots: Sequence[str] | None = None, criteria: Criteria = Criteria()
) -> FairPlay:
    """Both tests from replays' lines (as arena.replay reads them)."""
    found = (fair_play_of_replay(lines) for lines in replays)
    return tally((match for match in found if match is not None), bots, criteria)


def fair_play_of_output(output: Path, bots: Sequence[str] | None = None, criteria: Criteria = Criteria()) -> FairPlay:
    """Both tests over every replay of a tournament's output folder (OUTPUT/replays/*.jsonl, in the order of their
    names); a replay that cannot be read is left out, as one that starts wrong is."""
    return fair_play_from_replays(_readable(sorted((output / "replays").glob("*.jsonl"))), bots, criteria)


def _readable(paths: Iterable[Path]) -> Iterable[list[ReplayLine]]:
    for path in paths:
        try:
            yield read_replay(path)
        except ReplayError:
            continue

"""A match: rounds until a player reaches the token target, as RULES.md rules.

The match is a state machine driven from outside: `deal_round` in the DEAL phase, `apply` in the
DECIDE phase, `disqualify` at any moment before the end. It keeps a full-information log of
records; only `view` and the observers in `observe` turn that into what one seat may know.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from enum import Enum

from arena.engine.actions import (
    Action,
    ActionTable,
    Decision,
    DecisionKind,
    Keep,
    Play,
    keep_decision,
)
from arena.engine.cards import Card, Ruleset, ShowdownTie
from arena.engine.errors import IllegalAction, IllegalDeal, RulesError, WrongPhase
from arena.engine.explain import explain_illegal
from arena.engine.frozen import frozen
from arena.engine.records import (
    ChancellorResolved,
    Decided,
    Discarded,
    Faulted,
    FaultReason,
    MatchEnded,
    OutCause,
    Played,
    Record,
    RoundEnded,
    RoundStarted,
    WentOut,
)
from arena.engine.views import PlayerView, TableState, View

GUARD, PRIEST, BARON, HANDMAID, PRINCE = Card.GUARD, Card.PRIEST, Card.BARON, Card.HANDMAID, Card.PRINCE
CHANCELLOR, KING, PRINCESS, SPY = Card.CHANCELLOR, Card.KING, Card.PRINCESS, Card.SPY
PLAY = DecisionKind.PLAY


class Phase(Enum):
    DEAL = "deal"
    """A round is to be dealt (also before round 1, so start-up faults come first)."""
    DECIDE = "decide"
    OVER = "over"


@frozen
class Deal:
    """How one round is set up; `deck` is the draw pile, top card first."""

    first: int
    set_aside: Card
    removed_face_up: tuple[Card, ...]
    hands: tuple[tuple[Card, ...], ...]
    deck: tuple[Card, ...]


@frozen
class MatchResult:
    winners: tuple[int, ...]
    tokens: tuple[int, ...]
    ranking: tuple[tuple[int, ...], ...]
    """Places, best first; the seats of a place share it."""
    disqualified: tuple[int, ...]


_TABLES: dict[tuple[str, int], ActionTable] = {}


def _action_table(ruleset: Ruleset, players: int) -> ActionTable:
    key = (ruleset.name, players)
    if key not in _TABLES:
        _TABLES[key] = ActionTable(ruleset, players)
    return _TABLES[key]


class Match:
    def __init__(self, ruleset: Ruleset, players: Sequence[str], seed: int) -> None:
        n = len(players)
        self.target = ruleset.target(n)
        self.ruleset = ruleset
        self.players = tuple(players)
        self.seed = seed
        self._rng = random.Random(seed)
        self._n = n
        self._values = ruleset.value_table()
        self._full_deck = ruleset.deck
        self._actions = _action_table(ruleset, n)
        self._tokens = [0] * n
        self._disqualified = [False] * n
        self._round = 0
        self._phase = Phase.DEAL
        self._log: list[Record] = []
        self._hands: list[list[Card]] = [[] for _ in range(n)]
        self._discards: list[list[Card]] = [[] for _ in range(n)]
        self._in_round = [False] * n
        self._protected = [False] * n
        self._deck: list[Card] = []  # top card last
        self._set_aside: Card | None = None
        self._removed_face_up: tuple[Card, ...] = ()
        self._current = -1
        self._decision: Decision | None = None
        self._drawn: tuple[Card, ...] = ()
        self._round_winners: tuple[int, ...] = ()
        self._result: MatchResult | None = None
        self._public: list[PlayerView | None] = [None] * n
        """Each seat's PlayerView, None once something of it changed: most seats are unchanged from one view to
        the next, and a reused view saves its consumers work too (the protocol and the training environment
        encode each one once)."""
        self._views: list[tuple[int, View] | None] = [None] * n
        """Each seat's last View and the length of the log when it was made."""

    # -- reading ---------------------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def round(self) -> int:
        return self._round

    @property
    def decision(self) -> Decision | None:
        """The decision awaited now, or None outside the DECIDE phase."""
        return self._decision

    @property
    def tokens(self) -> tuple[int, ...]:
        return tuple(self._tokens)

    @property
    def disqualified(self) -> tuple[int, ...]:
        return tuple(s for s in range(self._n) if self._disqualified[s])

    @property
    def result(self) -> MatchResult | None:
        return self._result

    @property
    def records(self) -> Sequence[Record]:
        """The full-information log so far (read-only by convention; never shown to a bot)."""
        return self._log

    def state(self) -> TableState:
        """Full-information snapshot, for replays, viewers and tests; never for a bot."""
        return TableState(
            round=self._round,
            current=self._current if self._phase is Phase.DECIDE else None,
            hands=tuple(tuple(h) for h in self._hands),
            discards=tuple(tuple(d) for d in self._discards),
            deck=tuple(reversed(self._deck)),
            set_aside=self._set_aside,
            removed_face_up=self._removed_face_up,
            in_round=tuple(self._in_round),
            protected=tuple(self._protected),
            disqualified=tuple(self._disqualified),
            tokens=tuple(self._tokens),
        )

    def hand(self, seat: int) -> tuple[Card, ...]:
        """A seat's hand: for a consumer that reads the table field by field instead of through a View (the
        training environment, at every step)."""
        if not 0 <= seat < self._n:  # _check_seat's test, but for its cost at every step
            raise RulesError(f"there is no seat {seat!r} in a match of {self._n}")
        return tuple(self._hands[seat])

    @property
    def deck_size(self) -> int:
        return len(self._deck)

    @property
    def removed_face_up(self) -> tuple[Card, ...]:
        return self._removed_face_up

    def view(self, seat: int) -> View:
        """What `seat` may see now: its own hand and the public table. Between two records nothing changes, so a
        view asked for again (a bot's player and a judge of its moves) is the one made before."""
        self._check_seat(seat)
        made = self._views[seat]
        if made is not None and made[0] == len(self._log):
            return made[1]
        decision = self._decision
        mine = decision if decision is not None and decision.seat == seat else None
        view = View(
            seat=seat,
            round=self._round,
            decision=mine.kind if mine else None,
            hand=tuple(self._hands[seat]),
            players=self.public_seats(),
            deck=len(self._deck),
            removed_face_up=self._removed_face_up,
            legal=mine.legal if mine else (),
        )
        self._views[seat] = (len(self._log), view)
        return view

    def public_seats(self) -> tuple[PlayerView, ...]:
        """Every seat as everyone sees it; a seat's PlayerView is the same object until something of it changes."""
        public = self._public
        for seat, made in enumerate(public):
            if made is None:
                public[seat] = PlayerView(
                    self.players[seat],
                    self._tokens[seat],
                    self._in_round[seat],
                    self._protected[seat],
                    self._disqualified[seat],
                    tuple(self._discards[seat]),
                )
        return tuple(public)  # type: ignore[arg-type]  # every seat is made by now

    # -- driving ---------------------------------------------------------------------------

    def deal_round(self, deal: Deal | None = None) -> None:
        """Start the next round: shuffled by the match's generator, or exactly as `deal` says."""
        if self._phase is not Phase.DEAL:
            raise WrongPhase(f"no round can be dealt now: the match is in phase {self._phase.value}")
        seats_in = tuple(s for s in range(self._n) if not self._disqualified[s])
        if deal is None:
            deal = self._shuffled_deal(seats_in)
        else:
            self._check_deal(deal, seats_in)
        n = self._n
        self._round += 1
        self._hands = [list(hand) for hand in deal.hands]
        self._discards = [[] for _ in range(n)]
        self._in_round = [not dq for dq in self._disqualified]
        self._protected = [False] * n
        self._public = [None] * n
        self._deck = list(reversed(deal.deck))
        self._set_aside = deal.set_aside
        self._removed_face_up = tuple(deal.removed_face_up)
        self._log.append(
            RoundStarted(
                round=self._round,
                first=deal.first,
                players_in=seats_in,
                tokens=tuple(self._tokens),
                set_aside=deal.set_aside,
                removed_face_up=self._removed_face_up,
                hands=tuple(tuple(hand) for hand in deal.hands),
                deck=tuple(deal.deck),
            )
        )
        self._phase = Phase.DECIDE
        self._start_turn(deal.first)

    def apply(self, action: Action) -> None:
        """Carry out the awaited decision; an answer not in its legal list raises IllegalAction."""
        decision = self._decision
        if decision is None:
            raise WrongPhase(f"no decision is awaited: the match is in phase {self._phase.value}")
        if not decision.accepts(action):
            hand = self._hands[decision.seat]
            raise IllegalAction(explain_illegal(action, decision, hand, self.view(decision.seat)))
        self._log.append(Decided(decision.seat, decision.kind, action))
        if decision.kind is PLAY:
            self._play(decision.seat, action)  # type: ignore[arg-type]
        else:
            self._keep(decision.seat, action)  # type: ignore[arg-type]

    def disqualify(self, seat: int, reason: FaultReason, detail: str) -> None:
        """A seat's bot failed: it is out of the round at once and takes no further part."""
        self._check_seat(seat)
        if self._phase is Phase.OVER:
            raise WrongPhase("the match is over")
        if self._disqualified[seat]:
            raise RulesError(f"seat {seat} is already disqualified")
        self._log.append(Faulted(seat, reason, detail))
        self._disqualified[seat] = True
        self._public[seat] = None
        if self._phase is Phase.DEAL:
            if self._disqualified.count(False) <= 1:
                self._end_match()
            return
        if not self._in_round[seat]:
            return
        self._knock_out(seat, OutCause.FAULT)
        if seat == self._current:
            self._end_turn()
            return
        alive = self._alive()
        if len(alive) == 1:
            self._end_round(alive, {})
        elif self._decision is not None and self._decision.kind is PLAY:
            self._decision = self._play_decision(self._current)

    # -- internals -------------------------------------------------------------------------

    def _check_seat(self, seat: int) -> None:
        if not (isinstance(seat, int) and 0 <= seat < self._n):
            raise RulesError(f"there is no seat {seat!r} in a match of {self._n}")

    def _next_in_match(self, seat: int) -> int:
        """`seat` if it is still in the match, else the next seat up (wrapping) that is."""
        while self._disqualified[seat]:
            seat = (seat + 1) % self._n
        return seat

    def first_choices(self) -> tuple[int, ...]:
        """Who may start the next round: seat 0 first, then a winner of the previous round."""
        if self._round == 0:
            return (self._next_in_match(0),)
        return tuple(dict.fromkeys(self._next_in_match(w) for w in self._round_winners))

    def _shuffled_deal(self, seats_in: tuple[int, ...]) -> Deal:
        """Each round's shuffle depends on the seed and the round number alone, so matches of the same seed
        deal the same cards to the same seats round by round whoever sits there (duplicate play)."""
        deck = list(self._full_deck)
        random.Random(f"{self.seed}/deal/{self._round + 1}").shuffle(deck)  # top card last
        set_aside = deck.pop()
        face_up = tuple(deck.pop() for _ in range(3)) if len(seats_in) == 2 else ()
        hands = [() if self._disqualified[s] else (deck.pop(),) for s in range(self._n)]
        winners = self._round_winners
        if self._round == 0:
            first = self._next_in_match(0)
        elif len(winners) == 1:
            first = self._next_in_match(winners[0])
        else:
            first = self._next_in_match(winners[self._rng.randrange(len(winners))])
        return Deal(first, set_aside, face_up, tuple(hands), tuple(reversed(deck)))

    def _check_deal(self, deal: Deal, seats_in: tuple[int, ...]) -> None:
        n = self._n
        if len(deal.hands) != n:
            raise IllegalDeal(f"hands are given for {len(deal.hands)} seats; the match has {n}")
        for seat, hand in enumerate(deal.hands):
            if self._disqualified[seat] and hand:
                raise IllegalDeal(f"seat {seat} is disqualified and is dealt no cards")
            if not self._disqualified[seat] and len(hand) != 1:
                raise IllegalDeal(f"seat {seat} must be dealt exactly one card, not {len(hand)}")
        face_up = 3 if len(seats_in) == 2 else 0
        if len(deal.removed_face_up) != face_up:
            raise IllegalDeal(
                f"with {len(seats_in)} players in the round, {face_up} cards are set aside face up,"
                f" not {len(deal.removed_face_up)}"
            )
        dealt = Counter([deal.set_aside, *deal.removed_face_up, *deal.deck])
        for hand in deal.hands:
            dealt.update(hand)
        expected = Counter(self._full_deck)
        if dealt != expected:
            extra = ", ".join(f"{c.label} x{k}" for c, k in (dealt - expected).items())
            missing = ", ".join(f"{c.label} x{k}" for c, k in (expected - dealt).items())
            raise IllegalDeal(
                f"the cards are not the {self.ruleset.name} deck"
                + (f"; extra: {extra}" if extra else "")
                + (f"; missing: {missing}" if missing else "")
            )
        choices = self.first_choices()
        if deal.first not in choices:
            if self._round == 0:
                why = "round 1 starts with seat 0, or the next seat up still in the match"
            else:
                winners = ", ".join(map(str, self._round_winners))
                why = f"round {self._round + 1} starts with round {self._round}'s winner ({winners})"
                if choices != self._round_winners:
                    why += ", or the next seat up still in the match"
            options = " or ".join(map(str, choices))
            raise IllegalDeal(f"seat {deal.first} may not start: {why}, i.e. seat {options}")

    def _alive(self) -> tuple[int, ...]:
        in_round = self._in_round
        return tuple(s for s in range(self._n) if in_round[s])

    def _play_decision(self, seat: int) -> Decision:
        in_round, protected = self._in_round, self._protected
        targets = tuple([t for t in range(self._n) if in_round[t] and not protected[t] and t != seat])
        first, second = self._hands[seat]
        if second < first:
            first, second = second, first
        return self._actions.play_decision(first, second, seat, targets)

    def _start_turn(self, seat: int) -> None:
        self._current = seat
        if self._protected[seat]:
            self._protected[seat] = False
            self._public[seat] = None
        self._hands[seat].append(self._deck.pop())
        self._decision = self._play_decision(seat)

    def _play(self, seat: int, action: Play) -> None:
        card, target = action.card, action.target
        hand = self._hands[seat]
        hand.remove(card)
        self._discards[seat].append(card)
        self._public[seat] = None
        log = self._log.append
        if target is None:
            log(Played(seat, card))
            if card is HANDMAID:
                self._protected[seat] = True
            elif card is PRINCESS:
                self._knock_out(seat, OutCause.PRINCESS)
            elif card is CHANCELLOR and self._draw_for_chancellor(seat):
                return
        elif card is GUARD:
            hit = self._hands[target][0] is action.guess
            log(Played(seat, card, target, action.guess, hit))
            if hit:
                self._knock_out(target, OutCause.GUARD)
        elif card is PRIEST:
            log(Played(seat, card, target, seen=self._hands[target][0]))
        elif card is BARON:
            mine, theirs = hand[0], self._hands[target][0]
            log(Played(seat, card, target, compared=((seat, mine), (target, theirs))))
            difference = self._values[mine] - self._values[theirs]
            if difference > 0:
                self._knock_out(target, OutCause.BARON)
            elif difference < 0:
                self._knock_out(seat, OutCause.BARON)
        elif card is PRINCE:
            log(Played(seat, card, target))
            self._prince(target)
        else:  # king
            other = self._hands[target]
            mine, theirs = hand[0], other[0]
            hand[0], other[0] = theirs, mine
            log(Played(seat, card, target, received=((seat, theirs), (target, mine))))
        self._end_turn()

    def _prince(self, target: int) -> None:
        hand = self._hands[target]
        if hand[0] is PRINCESS:
            self._knock_out(target, OutCause.PRINCESS)
            return
        discarded = hand.pop()
        self._discards[target].append(discarded)
        self._public[target] = None
        drew: Card | None
        if self._deck:
            drew, from_set_aside = self._deck.pop(), False
        else:
            drew, from_set_aside = self._set_aside, True
            self._set_aside = None
        assert drew is not None, "the set-aside card can only be taken once a round"
        hand.append(drew)
        self._log.append(Discarded(target, discarded, drew, from_set_aside))

    def _draw_for_chancellor(self, seat: int) -> bool:
        """Draw up to two cards; True when the keep decision follows."""
        deck = self._deck
        drawn = tuple(deck.pop() for _ in range(min(2, len(deck))))
        if not drawn:
            self._log.append(ChancellorResolved(seat, (), None, ()))
            return False
        hand = self._hands[seat]
        hand.extend(drawn)
        self._drawn = drawn
        self._decision = keep_decision(seat, tuple(hand))
        return True

    def _keep(self, seat: int, action: Keep) -> None:
        self._hands[seat][:] = [action.keep]
        for card in action.bottom:
            self._deck.insert(0, card)
        self._log.append(ChancellorResolved(seat, self._drawn, action.keep, action.bottom))
        self._drawn = ()
        self._end_turn()

    def _knock_out(self, seat: int, cause: OutCause) -> None:
        hand = self._hands[seat]
        cards = tuple(hand)
        self._discards[seat].extend(cards)
        hand.clear()
        self._in_round[seat] = False
        self._protected[seat] = False
        self._public[seat] = None
        self._log.append(WentOut(seat, cards, cause))

    def _end_turn(self) -> None:
        self._decision = None
        if self._in_round.count(True) <= 1:
            self._end_round(self._alive(), {})
        elif not self._deck:
            self._showdown(self._alive())
        else:
            n, in_round, seat = self._n, self._in_round, self._current
            seat = (seat + 1) % n
            while not in_round[seat]:
                seat = (seat + 1) % n
            self._start_turn(seat)

    def _showdown(self, alive: tuple[int, ...]) -> None:
        values, hands = self._values, self._hands
        revealed = {s: hands[s][0] for s in alive}
        best = max(values[card] for card in revealed.values())
        tied = [s for s in alive if values[revealed[s]] == best]
        if len(tied) > 1 and self.ruleset.showdown_tie is ShowdownTie.DISCARD_SUM:
            sums = {s: sum(values[c] for c in self._discards[s]) for s in tied}
            top = max(sums.values())
            tied = [s for s in tied if sums[s] == top]
        self._end_round(tuple(tied), revealed)

    def _end_round(self, winners: tuple[int, ...], revealed: dict[int, Card]) -> None:
        self._decision = None
        n, tokens = self._n, self._tokens
        spies = [s for s in range(n) if self._in_round[s] and SPY in self._discards[s]]
        spy_bonus = spies[0] if len(spies) == 1 else None
        for seat in winners:
            tokens[seat] += 1
        if spy_bonus is not None:
            tokens[spy_bonus] += 1
        self._public = [None] * n
        self._log.append(RoundEnded(self._round, winners, spy_bonus, revealed, self._set_aside, tuple(tokens)))
        self._round_winners = winners
        remaining = [s for s in range(n) if not self._disqualified[s]]
        if len(remaining) <= 1 or any(tokens[s] >= self.target for s in remaining):
            self._end_match()
        else:
            self._phase = Phase.DEAL

    def _end_match(self) -> None:
        self._decision = None
        tokens = self._tokens
        remaining = [s for s in range(self._n) if not self._disqualified[s]]
        disqualified = tuple(s for s in range(self._n) if self._disqualified[s])
        if len(remaining) == 1:
            winners: tuple[int, ...] = (remaining[0],)
        else:
            winners = tuple(s for s in remaining if tokens[s] >= self.target)
        places = [
            tuple(s for s in remaining if tokens[s] == count)
            for count in sorted({tokens[s] for s in remaining}, reverse=True)
        ]
        if len(remaining) == 1:
            places = [winners]
        if disqualified:
            places.append(disqualified)
        self._result = MatchResult(winners, tuple(tokens), tuple(places), disqualified)
        self._log.append(MatchEnded(winners, tuple(tokens), tuple(places)))
        self._phase = Phase.OVER

"""What a seat can know of the hidden cards, kept up to date from the protocol's messages alone.

Card counting: every card of the ruleset is either visible (discards, the face-up set-aside, my hand),
known in an opponent's hand (my Priest, a Baron tie I was part of, a King trade I was part of), or
unseen. An opponent's hand is a known card, or drawn from the unseen cards minus those a missed Guard
ruled out. The set-aside card and the deck hold the rest.
"""

from __future__ import annotations

from collections import Counter
from math import comb
from typing import Any

from arena.engine.cards import get_ruleset

Message = dict[str, Any]
UNLIKELY = 0.4
"""How much less likely a player kept a card worth less than the one it chose to play."""
FORCED = 3.0
"""How much likelier a player that played the Countess holds a King or a Prince (she must then be played)."""


class Beliefs:
    def __init__(self) -> None:
        self.seat = 0
        self.players = 0
        self.ruleset = "2019"
        self.counts: Counter[str] = Counter()
        self.values: dict[str, int] = {}
        self.known: dict[int, str] = {}
        """Opponents' hands I know for certain."""
        self.ruled_out: dict[int, set[str]] = {}
        """Cards an opponent does not hold (a Guard named them and missed), until the hand changes."""
        self.my_card: str | None = None
        """The card I hold between my turns, when I know it."""
        self.spies: set[int] = set()
        """Seats that played or discarded a spy this round."""
        self.watchers: dict[int, set[int]] = {}
        """Who else knows a seat's hand (my own included): a Priest's look, a Baron tie, a King trade."""
        self.message: Message = {}
        self._sight_counted: Message | None = None
        self._out_of_sight: Counter[str] = Counter()
        self.infer = False
        """Also read what an opponent's own play says of the card it kept (search does; heuristic counts only)."""
        self.last_played: dict[int, str] = {}
        """The card each opponent chose to play on its last turn, while the card it kept is unknown to me."""
        self.last_guess: dict[int, str | None] = {}
        """The card that play named, if a Guard's on a hand it did not know (read beside last_played, set with it)."""
        self.under: list[str | None] = []
        """The cards Chancellors put under the deck this round, the very bottom first: mine by name, the others'
        None. Cards are drawn from the top, so the deck's bottom `deck` of them are still there (`under_deck`)."""
        self.chancellors: dict[int, tuple[str | None, int, int, int]] = {}
        """Per opponent whose last play was a Chancellor that drew: the card it held beside it, if I knew it; the
        cards it drew; the cards it put under; len(under) just after. It kept the best of them (as every bot here
        does), until it plays again."""

    # -- feeding -----------------------------------------------------------------------------

    def match_start(self, message: Message) -> None:
        ruleset = get_ruleset(message["ruleset"])
        self.seat = message["seat"]
        self.players = len(message["players"])
        self.ruleset = message["ruleset"]
        self.counts = Counter({card.label: count for card, count in ruleset.counts.items()})
        self.values = {card.label: value for card, value in ruleset.values.items()}
        self.observe(message["events"])

    def act(self, message: Message) -> None:
        """Take in an act message; remember what I will keep once I answer (see `chose`)."""
        self.observe(message["events"])
        self.message = message

    def chose(self, answer: Message) -> None:
        """My answer to the current act message: what stays in my hand afterwards."""
        hand = list(self.message["hand"])
        if "keep" in answer:
            kept = answer["keep"]
            self._unwatch(self.seat)  # they cannot tell which card I kept
            self._put_under(answer["bottom"])
        else:
            hand.remove(answer["card"])
            kept = hand[0]
            if kept != self.my_card:
                self._unwatch(self.seat)  # I played the card they knew of
        self.my_card = kept

    def observe(self, events: list[Message]) -> None:
        for event in events:
            handler = getattr(self, "_on_" + event["event"], None)
            if handler is not None:
                handler(event)

    def _on_round_start(self, event: Message) -> None:
        self.last_played.clear()
        self.under.clear()
        self.chancellors.clear()
        self.known.clear()
        self.ruled_out.clear()
        self.spies.clear()
        self.watchers.clear()
        hand = event.get("hand")
        self.my_card = hand[0] if hand else None

    def _forget(self, seat: int) -> None:
        self.chancellors.pop(seat, None)
        self.known.pop(seat, None)
        self.ruled_out.pop(seat, None)
        self.last_played.pop(seat, None)

    def _unwatch(self, seat: int) -> None:
        self.watchers.pop(seat, None)

    def _watch(self, viewer: int, seat: int) -> None:
        if viewer != self.seat:
            self.watchers.setdefault(seat, set()).add(viewer)

    def _on_play(self, event: Message) -> None:
        seat, card, target = event["seat"], event["card"], event.get("target")
        if card == "spy":
            self.spies.add(seat)
        if seat != self.seat:
            self.chancellors.pop(seat, None)  # what it kept of three may be the card it plays now
            self._unwatch(seat)  # whether the others' knowledge of it survived, I cannot tell
            if self.known.get(seat) == card:
                self._forget(seat)  # they played the card I knew of: what they hold now is new to me
            else:
                self.ruled_out.pop(seat, None)  # a fresh draw may hold anything
            self.last_played[seat] = card  # it chose this one over the card it kept
            # a card it names knowing its target's says nothing of its own
            knew = target is not None and seat in self.watchers.get(target, ())
            self.last_guess[seat] = None if knew else event.get("guess")
        if target is not None and target != seat and card in ("priest", "baron"):
            self._watch(seat, target)
            if card == "baron":
                self._watch(target, seat)
        if card == "guard" and target is not None and target != self.seat and not event.get("hit"):
            self.ruled_out.setdefault(target, set()).add(event["guess"])
        if "seen" in event and target is not None:
            self.known[target] = event["seen"]
        if "cards" in event:  # a Baron I was part of; a tie leaves both in, each knowing the other's card
            for key, shown in event["cards"].items():
                if int(key) != self.seat:
                    self.known[int(key)] = shown
        if card == "king" and target is not None:
            self._on_king(seat, target, event.get("received"))

    def _on_king(self, seat: int, target: int, received: str | None) -> None:
        watchers = self.watchers
        watchers[seat], watchers[target] = watchers.pop(target, set()), watchers.pop(seat, set())
        self._watch(seat, target)
        self._watch(target, seat)
        if received is not None:  # I traded: the other now holds what I held
            other = target if seat == self.seat else seat
            self._forget(other)
            if self.my_card is not None:  # after my own king, `chose` left the card I kept in my_card
                self.known[other] = self.my_card
            self.my_card = received
            return
        a, b = self.known.pop(seat, None), self.known.pop(target, None)  # the hands moved: so does what I knew
        if target in self.chancellors:  # the best of three it kept is the King player's now
            self.chancellors[seat] = self.chancellors.pop(target)
        if a is not None:
            self.known[target] = a
        if b is not None:
            self.known[seat] = b
        self.ruled_out.pop(seat, None)
        self.ruled_out.pop(target, None)
        self.last_played.pop(seat, None)  # the hands moved: what one chose to keep is now the other's
        self.last_played.pop(target, None)

    def _on_discard(self, event: Message) -> None:
        seat = event["seat"]
        if event["card"] == "spy":
            self.spies.add(seat)
        self._unwatch(seat)
        if seat == self.seat:
            self.my_card = None  # I drew a card I will see in my next act message
        else:
            self._forget(seat)

    def _on_chancellor(self, event: Message) -> None:
        seat = event["seat"]
        if seat != self.seat:  # mine went under as I answered (`chose`)
            held = self.known.get(seat)
            self._forget(seat)
            self._unwatch(seat)
            self._put_under([None] * event["returned"])
            if event["drew"]:
                self.chancellors[seat] = (held, event["drew"], event["returned"], len(self.under))

    def _put_under(self, cards: list[str] | list[None]) -> None:
        """Cards put under the deck in this order: the last ends at the very bottom."""
        self.under[:0] = reversed(cards)

    def _on_out(self, event: Message) -> None:
        self._forget(event["seat"])
        self._unwatch(event["seat"])
        self.spies.discard(event["seat"])

    # -- reading -----------------------------------------------------------------------------

    def unseen(self) -> Counter[str]:
        """Cards I have not seen anywhere: in the deck, the set-aside card, or opponents' unknown hands."""
        left = Counter(self.out_of_sight())
        left.subtract(self.known.values())
        return +left

    def out_of_sight(self) -> Counter[str]:
        """Copies of each card not face up and not in my hand: a Guard naming a card with none is sure to miss,
        even where every card left is one I know the place of (unseen() leaves those out too). Counted once per
        act message (every Guard answer asks), so not to be changed by the caller."""
        message = self.message
        if self._sight_counted is not message:
            left = Counter(self.counts)
            left.subtract(message["hand"])
            left.subtract(message["removed_face_up"])
            for player in message["players"]:
                left.subtract(player["discards"])
            self._sight_counted, self._out_of_sight = message, +left
        return self._out_of_sight

    def hand_odds(self, seat: int, unseen: Counter[str] | None = None) -> dict[str, float]:
        """The chance of each card being the hand of `seat`, an opponent still in the round."""
        if seat in self.known:
            return {self.known[seat]: 1.0}
        unseen = Counter(unseen if unseen is not None else self.unseen())
        ruled_out = self.ruled_out.get(seat, ())
        if self.infer:  # the cards I put under the deck are in no hand
            unseen.subtract(card for card in self.under_deck() if card is not None)
            unseen = +unseen
            if seat in self.chancellors:
                held, drew, _, _ = self.chancellors[seat]
                odds = self._best_of(unseen - Counter([held] if held else []), held, drew)
                odds = {card: p for card, p in odds.items() if card not in ruled_out}  # a Guard missed since
                total = sum(odds.values())
                if total > 0:
                    return {card: p / total for card, p in odds.items()}
        pool = Counter(unseen)
        for card in ruled_out:
            pool.pop(card, None)
        if sum(pool.values()) <= 0:  # my deductions contradict each other (a bluff I cannot see): all unseen
            pool = Counter(unseen)
        weighted = {card: count * self.kept_weight(seat, card) for card, count in pool.items() if count > 0}
        total = sum(weighted.values()) or 1
        return {card: weight / total for card, weight in weighted.items()}

    def _best_of(self, pool: Counter[str], held: str | None, drew: int) -> dict[str, float]:
        """The chance of each card being the best of `drew` cards drawn from `pool` and `held` (None: one more
        drawn; else not in `pool`)."""
        values, size = self.values, sum(pool.values())
        draws = min(drew + (held is None), size)
        if draws <= 0:
            return {held: 1.0} if held is not None else {}
        floor = -1 if held is None else values[held]
        ways = comb(size, draws)
        odds: dict[str, float] = {}
        for card, count in pool.items():
            if values[card] > floor:
                below = sum(n for other, n in pool.items() if values[other] < values[card])
                odds[card] = (comb(below + count, draws) - comb(below, draws)) / ways
        if held is not None:  # none of the draws above it
            odds[held] = comb(sum(n for other, n in pool.items() if values[other] <= floor), draws) / ways
        return {card: p for card, p in odds.items() if p > 0}

    def kept_weight(self, seat: int, card: str) -> float:
        """How much likelier `seat` holds `card` than its count says, from the card it chose to play last (with
        `infer`): a player keeps the better card, and plays the Countess beside a King or a Prince."""
        played = self.last_played.get(seat) if self.infer else None
        if played is None:
            return 1.0
        values = self.values
        if played == "countess":
            return FORCED if card in ("king", "prince") else 1.0 if values[card] > values[played] else UNLIKELY
        return 1.0 if values[card] >= values[played] else UNLIKELY

    def under_deck(self) -> list[str | None]:
        """The cards Chancellors put under the deck that are still in it, the very bottom first (None: one I did not
        see). Draws take the top, so these are the deck's bottom ones, however many were drawn or put under since."""
        return self.under[: self.message["deck"]]

    def opponents_in(self) -> list[int]:
        return [seat for seat, player in enumerate(self.message["players"]) if seat != self.seat and player["in_round"]]

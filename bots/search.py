"""search: a determinization search bot (perfect-information Monte Carlo).

At each decision it samples complete hidden states consistent with everything it has observed (the
card counting of `heuristic`: known hands, Guard misses, unseen cards; what each opponent's play says of the card it
kept, and the best of three an opponent's Chancellor kept; the cards under the deck), plays every candidate answer in
each sampled state and finishes the round with a quick playout policy, and answers with the candidate
whose playouts leave it the best chance to win the match on average (bots/equity.py: a round's tokens are worth
more near the target, and a round lost costs more to the leader than to the last). Every candidate is tried in the
same sampled states, so their averages differ by the answer, not by the luck of the sample; `heuristic`'s score
breaks ties. This module reads the messages and chooses the candidates; the sampling and the playouts, the hot path,
are bots/sampling.py and bots/simulator.py, compiled in a wheel (setup.py).

Its budget is a number of playouts a decision (PLAYOUTS unless configured), fewer where each plays many turns (at a
round's start), so it plays the same moves on any machine at any load, and a match's result depends on its seed
alone. A budget in time (`share`, of each `deadline_ms`) remains, for experiments: it is not reproducible, since a
faster or idler machine samples more.
"""

from __future__ import annotations

import argparse
import random
import time
from importlib.machinery import EXTENSION_SUFFIXES
from typing import Any

from arena.engine.cards import Card
from arena.sdk import run

from . import equity, sampling, simulator
from .beliefs import Beliefs, Message
from .heuristic import HeuristicBot
from .sampling import Move, Opponent, Sampler, Table
from .simulator import GUARD, OUT, Playout, Rules, Standing, World

INDEX = {card.label: int(card) for card in Card}
GUESSES_PER_TARGET = 2
"""Guard answers kept per target: its likeliest guesses (naming an unlikely card never pays)."""
MIN_SAMPLES = 8
"""Sampled states a time budget takes at least, however short the time."""
PLAYOUTS = 1200
"""The default budget: playouts a decision, over every candidate; what it costs is in BENCHMARKS.md (Bot strength),
well within the default move_ms of 1000 on a slow machine."""
TURNS_A_PLAYOUT = 6.5
"""The turns a decision's playouts play at most, on average: a playout at a round's start plays a dozen turns at 4
players, one near its end none, so the longest decisions take fewer playouts (and cost about what the others do)
while the rest take all theirs."""
MISCHOSEN = 0.1
"""How much less likely an opponent kept a card beside which the playouts' policy would not have played the card it
played (or named the card its Guard named): bots choose as heuristic does often, not always."""
PRUNE_EVERY = 16
"""After every this many samples, candidates more than two standard errors behind the best are dropped."""


class SearchBot:
    def __init__(self, playouts: int = PLAYOUTS, share: float | None = None, seed: int = 0) -> None:
        """`playouts` a decision, all its candidates together, playing TURNS_A_PLAYOUT turns each on average at
        most; `share` of each deadline in time instead, when given (not reproducible); `seed` varies its sampling
        (a different bot, as reproducible)."""
        if playouts < 1:
            raise ValueError(f"playouts must be at least 1, not {playouts}")
        self.playouts = playouts
        self.turns = round(playouts * TURNS_A_PLAYOUT)
        self.share = share
        self.seed = seed
        self.heuristic = HeuristicBot()
        self.heuristic.beliefs.infer = True
        self.rules = Rules.of("2019")
        self.target = 1
        """The favour tokens that win the match (match_start's `target`)."""
        self.rng = random.Random(0)

    @property
    def beliefs(self) -> Beliefs:
        return self.heuristic.beliefs

    def match_start(self, message: Message) -> None:
        self.heuristic.match_start(message)
        self.rules = Rules.of(message["ruleset"])
        self.target = int(message["target"])
        self.rng = random.Random(f"search/{self.seed}/{message['match_id']}/{message['seat']}")

    def act(self, message: Message) -> dict[str, Any]:
        started = time.perf_counter()
        beliefs = self.beliefs
        beliefs.act(message)
        candidates = self._candidates(message)
        if len(candidates) == 1:
            answer = candidates[0]
        else:
            deadline = None if self.share is None else started + self.share * message["deadline_ms"] / 1000
            totals = self._search(message, candidates, deadline)
            unseen = beliefs.unseen()
            prior = (
                [0.0] * len(candidates)
                if message["decision"] == "chancellor"
                else [self.heuristic.score(c, message, unseen) for c in candidates]
            )
            best = max(range(len(candidates)), key=lambda i: (totals[i], prior[i]))
            answer = candidates[best]
        beliefs.chose(answer)
        return answer

    def _candidates(self, message: Message) -> list[dict[str, Any]]:
        legal = message["legal"]
        if message["decision"] == "chancellor":
            return legal
        safe = [a for a in legal if not self._sure_loss(a, message["hand"])] or legal
        unseen = self.beliefs.unseen()
        guards: dict[int, list[dict[str, Any]]] = {}
        others = []
        for action in safe:
            if action["card"] == "guard" and "guess" in action:
                guards.setdefault(action["target"], []).append(action)
            else:
                others.append(action)
        for target, actions in guards.items():
            odds = self.beliefs.hand_odds(target, unseen)
            actions.sort(key=lambda a: (-odds.get(a["guess"], 0.0), -unseen.get(a["guess"], 0)))  # unseen first
            known = self.beliefs.known.get(target) not in (None, "guard")  # then the known card is the only guess
            likeliest = actions[: 1 if known else GUESSES_PER_TARGET]
            others += [a for a in likeliest if odds.get(a["guess"], 0.0) > 0] or likeliest[:1]  # none it cannot hold
        return others

    def _sure_loss(self, action: dict[str, Any], hand: list[str]) -> bool:
        """A play that puts me out whatever the hidden cards are: the Princess, a Prince on myself beside her, a
        Baron against a card I know to be higher than the one I keep. No sample can make it worth playing."""
        rest = list(hand)
        rest.remove(action["card"])
        kept = rest[0] if rest else None
        if action["card"] == "princess" or (
            action["card"] == "prince" and action.get("target") == self.beliefs.seat and kept == "princess"
        ):
            return True
        known = self.beliefs.known.get(action.get("target", -1)) if action["card"] == "baron" else None
        values = self.rules.values
        return known is not None and kept is not None and values[INDEX[known]] > values[INDEX[kept]]

    def _search(self, message: Message, candidates: list[dict[str, Any]], deadline: float | None) -> list[float]:
        """Each candidate's mean chance to win the match after the round; candidates clearly behind are dropped as
        samples come in, so the budget goes to telling the good ones apart. It stops once the playouts or the turns
        they played reach the budget, or with a `deadline` (time.perf_counter()) once that has passed and MIN_SAMPLES
        states are sampled."""
        totals = [0.0] * len(candidates)
        squares = [0.0] * len(candidates)
        tries = [0] * len(candidates)
        active = list(range(len(candidates)))
        tokens = tuple(player["tokens"] for player in message["players"])
        playout = Playout(self.rules, self.beliefs.seat, self.rng, Standing(tokens, self.target))
        moves = [self._move(message, candidate) for candidate in candidates]
        sampler = Sampler(self._table(message), moves, playout, self.rng)
        samples = 0
        while True:
            if deadline is None:
                if sampler.played >= self.playouts or playout.turns >= self.turns:
                    break
            elif samples >= MIN_SAMPLES and time.perf_counter() >= deadline:
                break
            sampler.play(active, totals, squares, tries)
            samples += 1
            if samples % PRUNE_EVERY == 0 and len(active) > 2:
                active = _leaders(active, totals, squares, tries)
        return [totals[i] / tries[i] if i in active else -1.0 for i in range(len(candidates))]

    def _move(self, message: Message, action: dict[str, Any]) -> Move:
        """A candidate answer in the simulator's terms."""
        seat = self.beliefs.seat
        if "keep" in action:
            return Move(INDEX[action["keep"]], bottom=tuple(INDEX[c] for c in action["bottom"]))
        hand = list(message["hand"])
        hand.remove(action["card"])
        kept = hand[0]
        watchers = tuple(self.beliefs.watchers.get(seat, ())) if kept == self.beliefs.my_card else ()
        guess = action.get("guess")
        return Move(
            INDEX[kept],
            card=INDEX[action["card"]],
            target=action.get("target"),
            guess=None if guess is None else INDEX[guess],
            watchers=watchers,
        )

    def _table(self, message: Message) -> Table:
        """What every sampled state shares: the cards to hand out, and everything public."""
        beliefs, values = self.beliefs, self.rules.values
        unseen = beliefs.unseen()
        players = message["players"]
        public = list(self.rules.counts)
        for card in message["removed_face_up"]:
            public[INDEX[card]] -= 1
        for player in players:
            for card in player["discards"]:
                public[INDEX[card]] -= 1
        protected = [player["protected"] for player in players]
        spies = [s in beliefs.spies for s in range(len(players))]
        discard_sums = [sum(values[INDEX[c]] for c in player["discards"]) for player in players]
        seen_by_all = World(
            hands=[GUARD if player["in_round"] else OUT for player in players],  # only who is in matters
            deck=[GUARD] * message["deck"],
            set_aside=OUT,
            protected=protected,
            spies=spies,
            discard_sums=discard_sums,
            unseen=public,
            knows={},
        )
        under = beliefs.under_deck()
        opponents = []
        for seat in beliefs.opponents_in():
            known = beliefs.known.get(seat)
            ruled_out = frozenset(INDEX[card] for card in beliefs.ruled_out.get(seat, ()))
            weights = None
            if seat in beliefs.last_played and beliefs.infer:
                guess = beliefs.last_guess.get(seat)
                named = None if guess is None else INDEX[guess]
                weights = self._kept_weights(seen_by_all, seat, INDEX[beliefs.last_played[seat]], named)
            held: str | None = None
            drew = 0
            slots: tuple[int, ...] = ()
            if seat in beliefs.chancellors:
                held, drew, returned, depth = beliefs.chancellors[seat]
                first = len(beliefs.under) - depth  # cards put under since lie below its own
                slots = tuple(slot for slot in range(first, first + returned) if slot < len(under))
                if held is not None:
                    unseen[held] -= 1  # one of its three, not to be dealt again
            opponents.append(
                Opponent(
                    seat,
                    OUT if known is None else INDEX[known],
                    ruled_out,
                    weights,
                    drew=drew,
                    held=OUT if held is None else INDEX[held],
                    slots=slots,
                )
            )
        unseen.subtract(card for card in under if card is not None)
        return Table(
            seat=beliefs.seat,
            pool=[INDEX[card] for card, count in unseen.items() for _ in range(count)],
            opponents=opponents,
            deck=message["deck"],
            under=[OUT if card is None else INDEX[card] for card in under],
            protected=protected,
            spies=spies,
            discard_sums=discard_sums,
            public=public,
            mine_known=[(seat, INDEX[card]) for seat, card in beliefs.known.items()],
            watchers=[(seat, tuple(viewers)) for seat, viewers in beliefs.watchers.items() if seat != beliefs.seat],
        )

    def _kept_weights(self, world: World, seat: int, played: int, guess: int | None) -> tuple[float, ...]:
        """How likely `seat` kept each card, from the card it chose to play (and the card its Guard named): as
        likely as the counts say where a player that chooses as the playouts' policy does (heuristic's scoring, on
        what everyone sees) would have played that card beside it, naming the same card, MISCHOSEN times that where
        it would have played the other or named another (a player names the likeliest card it does not hold)."""
        policy = Playout(self.rules, seat, random.Random(0))  # its choice of card needs no luck
        weights = []
        for card in range(len(self.rules.values)):
            if self.rules.counts[card] == 0:
                weights.append(0.0)
                continue
            chosen = (policy.choose(world, seat, card, played), policy.choose(world, seat, played, card))
            alike = any(play == played and guess in (None, named) for play, named in chosen)
            weights.append(1.0 if alike else MISCHOSEN)
        return tuple(weights)


def playouts_compiled() -> bool:
    """Whether the playouts run compiled (setup.py: a wheel built where a C compiler is at hand), or as plain
    Python, with the same moves at about 2.5 times the CPU."""
    return all(str(module.__file__).endswith(tuple(EXTENSION_SUFFIXES)) for module in (simulator, sampling, equity))


def _leaders(active: list[int], totals: list[float], squares: list[float], tries: list[int]) -> list[int]:
    means = {i: totals[i] / tries[i] for i in active}
    errors = {i: max(squares[i] / tries[i] - means[i] ** 2, 0.0) ** 0.5 / tries[i] ** 0.5 for i in active}
    best = max(active, key=means.__getitem__)
    keep = [i for i in active if means[i] + 2 * errors[i] >= means[best] - 2 * errors[best]]
    if len(keep) < 2:
        keep = sorted(active, key=means.__getitem__, reverse=True)[:2]
    return sorted(keep)


def main(playouts: int = PLAYOUTS, name: str = "search") -> None:
    parser = argparse.ArgumentParser(description="The search bot, speaking the arena's protocol.")
    parser.add_argument("--playouts", type=int, default=playouts, help="playouts a decision (reproducible)")
    parser.add_argument("--share", type=float, help="search for this share of each deadline instead (not reproducible)")
    parser.add_argument("--seed", type=int, default=0, help="varies the sampling")
    parser.add_argument("--name", default=name, help="the name it says in its hello")
    known, _ = parser.parse_known_args()  # other arguments are ignored, as the other bots ignore theirs
    if known.playouts < 1:
        parser.error(f"--playouts must be at least 1, not {known.playouts}")
    run(SearchBot(playouts=known.playouts, share=known.share, seed=known.seed), name=known.name)


if __name__ == "__main__":
    main()

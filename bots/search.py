"""search: a determinization search bot (perfect-information Monte Carlo).

At each decision it samples complete hidden states consistent with everything it has observed (the
card counting of `heuristic`: known hands, Guard misses, unseen cards), plays every candidate answer in
each sampled state and finishes the round with a quick playout policy, and answers with the candidate
that gained the most tokens on average. Every candidate is tried in the same sampled states, so their
averages differ by the answer, not by the luck of the sample. It stops at its time budget, a share of
`deadline_ms` (10% unless configured), after at least a few samples; `heuristic`'s score breaks ties.
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

from arena.engine.cards import Card
from arena.sdk import run
from bots.beliefs import Beliefs, Message
from bots.heuristic import HeuristicBot
from bots.simulator import OUT, Playout, Rules, World

INDEX = {card.label: int(card) for card in Card}
GUESSES_PER_TARGET = 3
"""Guard answers kept per target: its likeliest guesses (naming an unlikely card never pays)."""
MIN_SAMPLES = 8


class SearchBot:
    def __init__(self, share: float = 0.1, samples: int | None = None) -> None:
        """`share` of each deadline is the time budget; `samples`, when given, fixes the number of
        sampled states instead (for reproducible play)."""
        self.share = share
        self.samples = samples
        self.heuristic = HeuristicBot()
        self.rules = Rules.of("2019")
        self.rng = random.Random(0)

    @property
    def beliefs(self) -> Beliefs:
        return self.heuristic.beliefs

    def match_start(self, message: Message) -> None:
        self.heuristic.match_start(message)
        self.rules = Rules.of(message["ruleset"])
        self.rng = random.Random(f"search/{message['match_id']}/{message['seat']}")

    def act(self, message: Message) -> dict[str, Any]:
        started = time.perf_counter()
        beliefs = self.beliefs
        beliefs.act(message)
        candidates = self._candidates(message)
        if len(candidates) == 1:
            answer = candidates[0]
        else:
            budget = self.share * message["deadline_ms"] / 1000
            totals = self._search(message, candidates, started + budget)
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
        safe = [a for a in legal if a["card"] != "princess"] or legal
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
            actions.sort(key=lambda a: -odds.get(a["guess"], 0.0))
            others += actions[:GUESSES_PER_TARGET]
        return others

    def _search(self, message: Message, candidates: list[dict[str, Any]], deadline: float) -> list[float]:
        totals = [0.0] * len(candidates)
        playout = Playout(self.rules, self.beliefs.seat, random.Random())
        samples = 0
        while True:
            if self.samples is not None:
                if samples >= self.samples:
                    break
            elif samples >= MIN_SAMPLES and time.perf_counter() >= deadline:
                break
            world = self._sample(message)
            luck = self.rng.random()
            for i, action in enumerate(candidates):
                playout.rng.seed(luck)  # the same playout luck for every candidate, too
                totals[i] += self._try(playout, world.copy(), message, action)
            samples += 1
        return totals

    def _try(self, playout: Playout, world: World, message: Message, action: dict[str, Any]) -> float:
        seat = self.beliefs.seat
        if "keep" in action:
            return playout.after_chancellor(world, seat, INDEX[action["keep"]], [INDEX[c] for c in action["bottom"]])
        hand = list(message["hand"])
        hand.remove(action["card"])
        kept = hand[0]
        if kept == self.beliefs.my_card:  # those who knew my card still do
            for viewer in self.beliefs.watchers.get(seat, ()):
                world.knows[viewer, seat] = INDEX[kept]
        guess = action.get("guess")
        return playout.finish(
            world,
            seat,
            INDEX[action["card"]],
            INDEX[kept],
            action.get("target"),
            None if guess is None else INDEX[guess],
        )

    def _sample(self, message: Message) -> World:
        """One hidden state consistent with what this seat knows."""
        beliefs, rng = self.beliefs, self.rng
        unseen = beliefs.unseen()
        pool = [INDEX[card] for card, count in unseen.items() for _ in range(count)]
        rng.shuffle(pool)
        players = message["players"]
        hands = [OUT] * len(players)
        for seat in beliefs.opponents_in():
            known = beliefs.known.get(seat)
            if known is not None:
                hands[seat] = INDEX[known]
                continue
            ruled_out = {INDEX[card] for card in beliefs.ruled_out.get(seat, ())}
            pick = next((i for i, card in enumerate(pool) if card not in ruled_out), 0 if pool else None)
            hands[seat] = pool.pop(pick) if pick is not None else INDEX["guard"]
        deck_size = message["deck"]
        deck = pool[:deck_size]
        set_aside = pool[deck_size] if len(pool) > deck_size else OUT
        public = list(self.rules.counts)
        for card in message["removed_face_up"]:
            public[INDEX[card]] -= 1
        for player in players:
            for card in player["discards"]:
                public[INDEX[card]] -= 1
        return World(  # my own hand stays OUT here: each candidate sets the card it keeps
            hands=hands,
            deck=deck,
            set_aside=set_aside,
            protected=[player["protected"] for player in players],
            spies=[s in beliefs.spies for s in range(len(players))],
            discard_sums=[sum(self.rules.values[INDEX[c]] for c in player["discards"]) for player in players],
            unseen=public,
            knows=self._knowledge(hands),
        )

    def _knowledge(self, hands: list[int]) -> dict[tuple[int, int], int]:
        """Who knows whose card in a sampled state: mine from my beliefs, the others' from what they saw."""
        beliefs = self.beliefs
        knows = {(beliefs.seat, seat): INDEX[card] for seat, card in beliefs.known.items() if hands[seat] != OUT}
        for seat, viewers in beliefs.watchers.items():
            if seat != beliefs.seat and hands[seat] != OUT:
                for viewer in viewers:
                    if hands[viewer] != OUT or viewer == beliefs.seat:
                        knows[viewer, seat] = hands[seat]
        return knows


def main() -> None:
    parser = argparse.ArgumentParser(description="The search bot, speaking the arena's protocol.")
    parser.add_argument("--share", type=float, default=0.1, help="share of each move's deadline to search for")
    run(SearchBot(share=parser.parse_args().share), name="search")


if __name__ == "__main__":
    main()

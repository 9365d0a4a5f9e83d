"""heuristic: a card-counting bot that scores every legal answer by its odds.

It counts every card it has seen (discards, the face-up set-aside, its Priest's look, Baron ties and
King trades it took part in, Guard misses) and scores each legal answer by what it is likely to gain:
the Guard names the likeliest card of the best target, the Baron and the King are played when the odds
favour them, the Prince goes where the Princess probably is, the Handmaid shields a strong hand, the
Princess is never played, and after a Chancellor it keeps its best card and buries the strongest of the
rest deepest.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from arena.sdk import run

from .beliefs import Beliefs, Message

ELIMINATION = 1.0
"""The worth of putting an opponent out, the unit of every other score."""


class HeuristicBot:
    def __init__(self) -> None:
        self.beliefs = Beliefs()

    def match_start(self, message: Message) -> None:
        self.beliefs.match_start(message)

    def act(self, message: Message) -> dict[str, Any]:
        beliefs = self.beliefs
        beliefs.act(message)
        if message["decision"] == "chancellor":
            answer = self.keep(message)
        else:
            unseen = beliefs.unseen()
            answer = max(message["legal"], key=lambda action: self.score(action, message, unseen))
        beliefs.chose(answer)
        return answer

    # -- play ----------------------------------------------------------------------------------

    def score(self, action: Message, message: Message, unseen: Counter[str]) -> float:
        beliefs, values = self.beliefs, self.beliefs.values
        card, target = action["card"], action.get("target")
        hand = list(message["hand"])
        hand.remove(card)
        kept = hand[0]
        late = 1 - message["deck"] / max(1, sum(self.beliefs.counts.values()))
        base = 0.02 * late * values[kept]  # a strong card kept wins showdowns
        if card == "princess":
            return -10.0
        leader_bonus = 0.0
        if target is not None and target != beliefs.seat:
            leader_bonus = 0.01 * message["players"][target]["tokens"]
        odds = beliefs.hand_odds(target, unseen) if target is not None and target != beliefs.seat else {}
        if card == "guard":
            if target is None:
                return base
            guess = action["guess"]
            # at equal odds (none: a target known to hold a Guard), a card still unseen, then one not all of whose
            # copies are in sight (a card whose place I know is out of sight all the same)
            in_play = 1e-9 * beliefs.out_of_sight().get(guess, 0)
            return base + leader_bonus + ELIMINATION * odds.get(guess, 0.0) + 1e-6 * unseen.get(guess, 0) + in_play
        if card == "priest":
            return base + leader_bonus + (0.05 if target in beliefs.known or target is None else 0.3)
        if card == "baron":
            if target is None:
                return base
            mine = values[kept]
            win = sum(p for c, p in odds.items() if values[c] < mine)
            lose = sum(p for c, p in odds.items() if values[c] > mine)
            if lose > 1 - 1e-9:
                return -10.0  # a sure loss, like the Princess: never while another answer is none
            return base + leader_bonus + ELIMINATION * (win - 1.2 * lose)
        if card == "prince":
            if target == beliefs.seat:
                return -10.0 if kept == "princess" else base - 0.1 + 0.02 * (5 - values[kept])
            princess = odds.get("princess", 0.0)
            expected = sum(p * values[c] for c, p in odds.items())
            return base + leader_bonus + ELIMINATION * princess + 0.02 * expected
        if card == "king":
            if target is None:
                return base
            expected = sum(p * values[c] for c, p in odds.items())
            return 0.03 * (expected - values[kept]) + leader_bonus - 0.05
        if card == "handmaid":
            return base + 0.2 + 0.03 * values[kept]
        if card == "countess":
            return base + 0.05
        if card == "chancellor":
            return base + (0.15 if message["deck"] >= 2 else 0.0)
        if card == "spy":
            others = beliefs.spies - {beliefs.seat}
            return base + (0.25 if not others else 0.05)
        return base

    # -- chancellor ----------------------------------------------------------------------------

    def keep(self, message: Message) -> dict[str, Any]:
        """Keep the strongest card; bury the strongest of the rest deepest, out of the others' reach."""
        values = self.beliefs.values
        hand = sorted(message["hand"], key=lambda card: values[card])
        best = hand[-1]
        rest = hand[:-1]  # weakest first: it is put under first, the stronger one ends at the very bottom
        for action in message["legal"]:
            if action["keep"] == best and action["bottom"] == rest:
                return action
        return next(action for action in message["legal"] if action["keep"] == best)


if __name__ == "__main__":
    run(HeuristicBot(), name="heuristic")

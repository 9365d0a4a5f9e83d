"""A player that answers uniformly at random among the legal answers: the baseline opponent."""

from __future__ import annotations

import random

from arena.engine import Action, Decision, MatchResult, Observer
from arena.players.base import MatchInfo


class RandomPlayer:
    def __init__(self, seed: int | str | None = None) -> None:
        self._seed = seed
        self._rng = random.Random(seed)

    def start_match(self, info: MatchInfo, observer: Observer) -> None:
        """Reseed per match, so a match's moves depend only on its own identity."""
        self._rng = random.Random(f"{self._seed}/{info.match_id}/{info.seat}")

    def act(self, decision: Decision, observer: Observer) -> Action:
        legal = decision.legal
        return legal[int(self._rng.random() * len(legal))]

    def end_match(self, result: MatchResult, observer: Observer) -> None:
        pass

    def check(self) -> None:
        pass

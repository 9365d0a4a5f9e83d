"""The seam between a match and whoever answers for a seat (like an HTTP transport).

A referee hands each player only its seat's Observer, so a player sees what its seat may know.
In-process players are trusted code; remote players (bots in subprocesses) come with the runtime.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from arena.engine import Action, Decision, MatchResult, Observer


@dataclass(frozen=True, slots=True)
class MatchInfo:
    match_id: str
    ruleset: str
    seat: int
    players: tuple[str, ...]
    target: int


class Player(Protocol):
    def start_match(self, info: MatchInfo, observer: Observer) -> None: ...

    def act(self, decision: Decision, observer: Observer) -> Action:
        """An answer from `decision.legal`; raise PlayerFault when the player has failed."""
        ...

    def end_match(self, result: MatchResult, observer: Observer) -> None: ...

    def check(self) -> None:
        """Raise PlayerFault if the player failed while it was not asked anything (e.g. it exited)."""
        ...

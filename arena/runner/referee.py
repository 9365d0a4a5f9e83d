"""Plays one match between players: deals, asks whoever is to decide, turns failures into faults."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from arena.engine import EventFeed, FaultReason, IllegalAction, Match, MatchResult, Observer, Phase
from arena.errors import PlayerFault
from arena.players.base import MatchInfo, Player
from arena.protocol import action_json


@dataclass(frozen=True, slots=True)
class FaultReport:
    seat: int
    reason: FaultReason
    detail: str
    stderr_tail: str
    after_match: bool = False
    """The match was over (the bot failed on match_end): the fault is recorded, the result stands."""


@dataclass(frozen=True, slots=True)
class MatchOutcome:
    result: MatchResult
    faults: tuple[FaultReport, ...]


class _Referee:
    def __init__(self, match: Match, players: Sequence[Player], match_id: str) -> None:
        if len(players) != len(match.players):
            raise ValueError(f"{len(players)} players for a match of {len(match.players)} seats")
        self.match = match
        self.players = players
        self.match_id = match_id
        feed = EventFeed(match)
        self.observers = [Observer(match, seat, feed) for seat in range(len(players))]
        self.faults: list[FaultReport] = []
        self.faulted: set[int] = set()
        """Seats that faulted, in the match or after it: a player that failed is asked nothing more (a bot's
        process is gone with its fault)."""

    def disqualify(self, seat: int, fault: PlayerFault) -> None:
        after = self.match.phase is Phase.OVER
        self.faults.append(FaultReport(seat, fault.reason, fault.detail, fault.stderr_tail, after))
        self.faulted.add(seat)
        if not after:
            self.match.disqualify(seat, fault.reason, fault.detail)

    def playing(self) -> list[int]:
        return [seat for seat in range(len(self.players)) if seat not in self.faulted]

    def run(self) -> MatchOutcome:
        match = self.match
        for seat, player in enumerate(self.players):
            info = MatchInfo(self.match_id, match.ruleset.name, seat, match.players, match.target)
            try:
                player.start_match(info, self.observers[seat])
            except PlayerFault as fault:
                self.disqualify(seat, fault)
        while match.phase is not Phase.OVER:
            self.check_idle_players(match.decision.seat if match.decision else None)
            if match.phase is Phase.OVER:
                break
            decision = match.decision
            if decision is None:
                match.deal_round()
                continue
            seat = decision.seat
            try:
                action = self.players[seat].act(decision, self.observers[seat])
            except PlayerFault as fault:
                self.disqualify(seat, fault)
                continue
            try:
                match.apply(action)
            except IllegalAction as error:
                self.disqualify(seat, PlayerFault(FaultReason.ILLEGAL, f"{json.dumps(action_json(action))}: {error}"))
        result = match.result
        assert result is not None
        for seat in self.playing():
            try:
                self.players[seat].end_match(result, self.observers[seat])
            except PlayerFault as fault:
                self.disqualify(seat, fault)
        return MatchOutcome(result, tuple(self.faults))

    def check_idle_players(self, deciding: int | None) -> None:
        """Bots found dead between their turns are disqualified before the next decision is asked (how often
        a player looks is its own affair: see BotHost.check_alive)."""
        for seat in self.playing():
            if seat == deciding:
                continue  # asked at once: its own reply or exit tells
            try:
                self.players[seat].check()
            except PlayerFault as fault:
                self.disqualify(seat, fault)
                if self.match.phase is Phase.OVER:
                    return


def play_match(match: Match, players: Sequence[Player], match_id: str) -> MatchOutcome:
    return _Referee(match, players, match_id).run()

"""Plays one match between players: deals, asks whoever is to decide, turns failures into faults."""

from __future__ import annotations

import json
from collections.abc import Sequence

from arena.engine import FaultReason, IllegalAction, Match, MatchResult, Observer, Phase
from arena.players.base import MatchInfo, Player, PlayerFault
from arena.protocol import action_json


def play_match(match: Match, players: Sequence[Player], match_id: str) -> MatchResult:
    if len(players) != len(match.players):
        raise ValueError(f"{len(players)} players for a match of {len(match.players)} seats")
    observers = [Observer(match, seat) for seat in range(len(players))]
    for seat, player in enumerate(players):
        info = MatchInfo(match_id, match.ruleset.name, seat, match.players, match.target)
        try:
            player.start_match(info, observers[seat])
        except PlayerFault as fault:
            if match.phase is not Phase.OVER:
                match.disqualify(seat, fault.reason, fault.detail)
    while match.phase is not Phase.OVER:
        decision = match.decision
        if decision is None:
            match.deal_round()
            continue
        seat = decision.seat
        try:
            action = players[seat].act(decision, observers[seat])
        except PlayerFault as fault:
            match.disqualify(seat, fault.reason, fault.detail)
            continue
        try:
            match.apply(action)
        except IllegalAction as error:
            match.disqualify(seat, FaultReason.ILLEGAL, f"{json.dumps(action_json(action))}: {error}")
    result = match.result
    assert result is not None
    for seat, player in enumerate(players):
        if seat not in result.disqualified:
            player.end_match(result, observers[seat])
    return result

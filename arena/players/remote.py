"""A player whose decisions come from a bot process, over the wire protocol."""

from __future__ import annotations

import json

from arena.engine import Action, Decision, FaultReason, MatchResult, Observer
from arena.engine.explain import explain_illegal
from arena.players.base import MatchInfo, PlayerFault
from arena.players.host import BotHost
from arena.protocol import MalformedAction, act_message, match_end_message, match_start_message, parse_action


class RemotePlayer:
    """The Player seam for a bot in a subprocess; the host keeps the process across matches."""

    def __init__(self, host: BotHost) -> None:
        self.host = host
        self._info: MatchInfo | None = None

    def start_match(self, info: MatchInfo, observer: Observer) -> None:
        self._info = info
        self.host.ensure_running()
        message = match_start_message(
            info.match_id, info.ruleset, info.seat, info.players, info.target, observer.take_events()
        )
        self.host.request(message)

    def act(self, decision: Decision, observer: Observer) -> Action:
        assert self._info is not None
        view = observer.view()
        message = act_message(self._info.match_id, view, self.host.timing.move_ms, observer.take_events())
        reply = self.host.request(message)
        has_action, has_index = "action" in reply, "index" in reply
        if has_action == has_index:
            which = "both" if has_action else "neither"
            raise self._fail(
                FaultReason.MALFORMED, f'an action reply has exactly one of "action" and "index", not {which}'
            )
        if has_index:
            index = reply["index"]
            if not isinstance(index, int) or isinstance(index, bool):
                raise self._fail(FaultReason.MALFORMED, f'"index" must be an integer, not {json.dumps(index)}')
            if not 0 <= index < len(decision.legal):
                raise self._fail(
                    FaultReason.ILLEGAL, f"index {index} is outside legal (0 to {len(decision.legal) - 1})"
                )
            return decision.legal[index]
        try:
            action = parse_action(reply["action"])
        except MalformedAction as error:
            raise self._fail(FaultReason.ILLEGAL, f"{json.dumps(reply['action'])}: {error}") from None
        if not decision.accepts(action):
            why = explain_illegal(action, decision, view.hand, view)
            raise self._fail(FaultReason.ILLEGAL, f"{json.dumps(reply['action'])}: {why}")
        return action

    def end_match(self, result: MatchResult, observer: Observer) -> None:
        assert self._info is not None
        self.host.request(match_end_message(self._info.match_id, result, observer.take_events()))

    def check(self) -> None:
        self.host.check_alive()

    def _fail(self, reason: FaultReason, detail: str) -> PlayerFault:
        return self.host.fault(PlayerFault(reason, detail))

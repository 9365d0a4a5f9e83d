"""A player whose decisions come from a bot process, over the wire protocol."""

from __future__ import annotations

from arena.engine import Action, Decision, MatchResult, Observer
from arena.errors import PlayerFault
from arena.players.base import MatchInfo
from arena.players.host import BotHost
from arena.protocol import act_message, match_end_message, match_start_message
from arena.protocol.replies import chosen_action


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
        try:
            return chosen_action(reply, decision, view)
        except PlayerFault as fault:
            raise self.host.fault(fault) from None

    def end_match(self, result: MatchResult, observer: Observer) -> None:
        assert self._info is not None
        self.host.request(match_end_message(self._info.match_id, result, observer.take_events()))

    def check(self) -> None:
        self.host.check_alive()

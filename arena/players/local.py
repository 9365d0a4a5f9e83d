"""A trusted in-process player for a bot written against the protocol's messages (see `arena.sdk`).

The bot gets exactly the objects a subprocess would decode from the wire, so the same bot class plays
the same moves in-process and as a sandboxed subprocess; only the process and the sockets are saved.
"""

from __future__ import annotations

from typing import Any

import orjson

from arena.engine import Action, Decision, MatchResult, Observer
from arena.players.base import MatchInfo
from arena.protocol import act_message, answered_action, match_end_message, match_start_message


class MessagePlayer:
    """Adapts an SDK-style bot (an `act(message)` method, optional `match_start` / `match_end`)."""

    def __init__(self, bot: Any, move_ms: int = 1000) -> None:
        self.bot = bot
        self.move_ms = move_ms
        self._match_id = ""

    def start_match(self, info: MatchInfo, observer: Observer) -> None:
        self._match_id = info.match_id
        message = match_start_message(
            info.match_id, info.ruleset, info.seat, info.players, info.target, observer.take_events()
        )
        self._tell("match_start", message)

    def act(self, decision: Decision, observer: Observer) -> Action:
        view = observer.view()
        message = act_message(self._match_id, view, self.move_ms, observer.take_events())
        return answered_action(self.bot.act(_wire(message)), decision, view)

    def end_match(self, result: MatchResult, observer: Observer) -> None:
        self._tell("match_end", match_end_message(self._match_id, result, observer.take_events()))

    def check(self) -> None:
        pass

    def _tell(self, hook: str, message: dict[str, Any]) -> None:
        method = getattr(self.bot, hook, None)
        if method is not None:
            method(_wire(message))


def _wire(message: dict[str, Any]) -> dict[str, Any]:
    """A private copy, as decoded from the wire: the encoder shares cached lists between messages."""
    return orjson.loads(orjson.dumps(message))

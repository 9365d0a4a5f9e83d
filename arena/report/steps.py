"""A replay re-simulated into the positions a viewer steps through: each as the full table and as every seat saw it.

The engine computes every state: the full table from `Match.state()`, a seat's table from `Match.view(seat)`
and a seat's account of the moves from `arena.engine.project`, so what the page shows "as seat N" is exactly
what the arena would have told that seat's bot, never something re-derived in the browser. One step per
replay line the re-simulation uses (match start, a deal, a decision, a fault, a round end, the match end).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena.engine import (
    Card,
    Decided,
    DecisionKind,
    Faulted,
    Match,
    MatchEnded,
    Play,
    Record,
    RoundEnded,
    project,
)
from arena.errors import ReplayMismatch
from arena.replay import ReplayLine, Resimulation
from arena.report.narrate import Line, card, record_lines, seat

JSON = dict[str, Any]
KINDS = ("match_start", "round_start", "decision", "fault", "round_end", "match_end")
"""The replay lines that make a step; others (events for a viewer) are skipped, as the re-simulation does."""


@dataclass(frozen=True, slots=True)
class Step:
    line: int
    """The replay line (1-based) this step is the position after."""
    kind: str
    title: str
    """A few public words: what happened at this step."""
    full: JSON
    seats: tuple[JSON, ...]
    """Per seat: what that seat knew at this step."""
    fault_seat: int | None = None


@dataclass(frozen=True, slots=True)
class ReplaySteps:
    match_id: str
    ruleset: str
    seed: int
    players: tuple[str, ...]
    """Display names: the configured names, made unique with @seat where two seats share one."""
    target: int
    values: dict[str, int]
    """Each card's value in this ruleset."""
    steps: tuple[Step, ...]
    error: str | None
    """Where the replay disagrees with the rules; the steps stop just before that line."""

    def fault_step(self, seat: int) -> int | None:
        """The step at which `seat` faulted (a seat faults at most once a match), or None."""
        return next((index for index, step in enumerate(self.steps) if step.fault_seat == seat), None)

    def to_json(self) -> JSON:
        return {
            "match_id": self.match_id,
            "ruleset": self.ruleset,
            "seed": self.seed,
            "players": list(self.players),
            "target": self.target,
            "values": self.values,
            "error": self.error,
            "steps": [
                {
                    "line": step.line,
                    "kind": step.kind,
                    "title": step.title,
                    "full": step.full,
                    "seats": list(step.seats),
                }
                for step in self.steps
            ],
        }


def display_names(players: Sequence[str]) -> tuple[str, ...]:
    """As the Narrator names seats: the configured name, with @seat only when two seats share it."""
    unique = len(set(players)) == len(players)
    return tuple(name if unique else f"{name}@{index}" for index, name in enumerate(players))


def replay_steps(lines: Sequence[ReplayLine]) -> ReplaySteps:
    """Every position of the match; a replay that breaks the rules gives the steps before the bad line."""
    resimulation = Resimulation(lines)
    steps: list[Step] = []
    outcomes: deque[Record] = deque()
    seen = 0
    previous: tuple[int, int | None] = (0, None)
    error = None
    try:
        for line, match in resimulation.steps():
            kind = line.data["type"]
            new = list(match.records[seen:])
            seen = len(match.records)
            if kind not in KINDS:
                continue
            now: list[Record] = [record for record in new if not isinstance(record, RoundEnded | MatchEnded)]
            outcomes.extend(record for record in new if isinstance(record, RoundEnded | MatchEnded))
            if kind in ("round_end", "match_end") and outcomes:
                now.append(outcomes.popleft())  # told at its own line, not at the move that caused it
            decision = match.decision
            turn = (match.round, decision.seat if decision else None)
            drew = decision is not None and decision.kind is DecisionKind.PLAY and turn != previous
            previous = turn
            steps.append(_step(line, kind, match, now, drew))
    except ReplayMismatch as mismatch:
        where = "end of file" if mismatch.line is None else f"line {mismatch.line}"
        error = f"{where}: {mismatch.message}"
    final = resimulation.match
    if final is None:
        data = lines[0].data
        players = tuple(str(name) for name in data.get("players", ()) if isinstance(name, str))
        return ReplaySteps(str(data.get("match_id", "")), str(data.get("ruleset", "?")), 0, players, 0, {}, (), error)
    values = {c.label: value for c, value in final.ruleset.values.items()}
    return ReplaySteps(
        resimulation.match_id,
        final.ruleset.name,
        final.seed,
        display_names(final.players),
        final.target,
        dict(sorted(values.items(), key=lambda item: item[1])),
        tuple(steps),
        error,
    )


def _step(line: ReplayLine, kind: str, match: Match, records: Sequence[Record], drew: bool) -> Step:
    names = display_names(match.players)
    full = _table(match)
    full.update(_told(records, None))
    if drew:
        full["says"].append(_draw(match, None))
    views = []
    for viewer in range(len(match.players)):
        view = _seat_table(match, viewer)
        view.update(_told(records, viewer))
        if drew:
            view["says"].append(_draw(match, viewer))
        views.append(view)
    fault = next((record.seat for record in records if isinstance(record, Faulted)), None)
    return Step(line.number, kind, _title(kind, match, records, names), full, tuple(views), fault)


def _labels(cards: Sequence[Card]) -> list[str]:
    return [c.label for c in cards]


def _table(match: Match) -> JSON:
    """The whole table, secrets included (the full-information view)."""
    state = match.state()
    decision = match.decision
    return {
        "round": state.round,
        "phase": match.phase.value,
        "current": state.current,
        "decision": decision.kind.value if decision else None,
        "deck": len(state.deck),
        "deck_cards": _labels(state.deck),
        "set_aside": state.set_aside.label if state.set_aside else None,
        "face_up": _labels(state.removed_face_up),
        "players": [
            {
                "hand": _labels(state.hands[s]),
                "discards": _labels(state.discards[s]),
                "tokens": state.tokens[s],
                "in_round": state.in_round[s],
                "protected": state.protected[s],
                "disqualified": state.disqualified[s],
            }
            for s in range(len(match.players))
        ],
    }


def _seat_table(match: Match, viewer: int) -> JSON:
    """The table as `viewer` saw it: the engine's view for that seat, and whose turn it is (public)."""
    view = match.view(viewer)
    decision = match.decision
    return {
        "round": view.round,
        "phase": match.phase.value,
        "current": decision.seat if decision else None,
        "decision": view.decision.value if view.decision else None,
        "deck": view.deck,
        "deck_cards": None,
        "set_aside": None,
        "face_up": _labels(view.removed_face_up),
        "players": [
            {
                "hand": _labels(view.hand) if s == viewer else None,
                "discards": _labels(player.discards),
                "tokens": player.tokens,
                "in_round": player.in_round,
                "protected": player.protected,
                "disqualified": player.disqualified,
            }
            for s, player in enumerate(view.players)
        ],
    }


def _told(records: Sequence[Record], viewer: int | None) -> JSON:
    """The step's account, its showdown and result, for the full view (None) or one seat."""
    says: list[Line] = []
    showdown = result = None
    for record in records:
        says += record_lines(record, viewer)
        if isinstance(record, RoundEnded):
            event = record if viewer is None else project(record, viewer)
            assert isinstance(event, RoundEnded)  # public: every seat gets it whole
            showdown = {
                "round": event.round,
                "winners": list(event.winners),
                "revealed": {str(s): c.label for s, c in sorted(event.revealed.items())},
                "set_aside": event.set_aside.label if event.set_aside else None,
                "spy_bonus": event.spy_bonus,
                "tokens": list(event.tokens),
            }
        elif isinstance(record, MatchEnded):
            result = {
                "winners": list(record.winners),
                "tokens": list(record.tokens),
                "ranking": [list(place) for place in record.ranking],
            }
    return {"says": says, "showdown": showdown, "result": result}


def _draw(match: Match, viewer: int | None) -> Line:
    """The turn's draw: the card for the full view and for the drawer, "a card" for everyone else."""
    decision = match.decision
    assert decision is not None
    drawer = decision.seat
    if viewer is None:
        return [seat(drawer), " draws ", card(match.state().hands[drawer][-1])]
    if viewer == drawer:
        return [seat(drawer), " draws ", card(match.view(viewer).hand[-1])]
    return [seat(drawer), " draws a card"]


def _title(kind: str, match: Match, records: Sequence[Record], names: Sequence[str]) -> str:
    if kind == "match_start":
        return "match start"
    if kind == "round_start":
        return f"round {match.round} dealt"
    if kind == "round_end":
        return f"round {match.round} ends"
    if kind == "match_end":
        return "match over"
    if kind == "fault":
        fault = next((r for r in records if isinstance(r, Faulted)), None)
        return f"{names[fault.seat]} faults ({fault.reason.value})" if fault else "fault"
    decided = next((r for r in records if isinstance(r, Decided)), None)
    if decided is None:
        return "decision"
    if isinstance(decided.action, Play):
        return f"{names[decided.seat]} plays {decided.action.card.label}"
    return f"{names[decided.seat]} keeps a card (chancellor)"

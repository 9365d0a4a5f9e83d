"""Re-simulate a match from its replay lines and name the first line that breaks the rules.

The replay's deals are taken as given (checked to be a legal deal: the right cards, the right
first player); every decision, fault and outcome is then checked against the engine.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any

from arena.engine import (
    Card,
    Deal,
    FaultReason,
    IllegalAction,
    Match,
    MatchEnded,
    Phase,
    RoundEnded,
    RulesError,
    get_ruleset,
)
from arena.errors import ReplayMismatch
from arena.protocol import MalformedAction, parse_action, seat_map_json
from arena.replay.lines import ReplayLine


class Resimulation:
    """Drives an engine match line by line; `match` holds the simulated match so far."""

    def __init__(self, lines: Sequence[ReplayLine]) -> None:
        self.lines = lines
        self.warnings: list[str] = []
        self.match_id = ""
        self.match: Match | None = None
        self._outcomes: deque[RoundEnded | MatchEnded] = deque()
        self._seen_records = 0

    def run(self) -> Match:
        """The re-simulated match; ReplayMismatch at the first line that disagrees."""
        for _ in self.steps():
            pass
        assert self.match is not None
        return self.match

    def steps(self) -> Iterator[tuple[ReplayLine, Match]]:
        """Each line with the match just after it, for viewers that show every position; raises as `run`."""
        first, *rest = self.lines
        match = self._start(first)
        yield first, match
        for line in rest:
            self._line(match, line)
            yield line, match
        if self._outcomes or match.phase is not Phase.OVER:
            raise ReplayMismatch(None, f"the replay stops before the match is over ({_where(match)})")

    def _start(self, line: ReplayLine) -> Match:
        data = line.data
        if data["type"] != "match_start":
            raise ReplayMismatch(line.number, f'a replay begins with "match_start", not "{data["type"]}"')
        try:
            ruleset = get_ruleset(_get(line, "ruleset", str))
        except ValueError as error:
            raise ReplayMismatch(line.number, str(error)) from None
        players = _get(line, "players", list)
        if not all(isinstance(name, str) for name in players):
            raise ReplayMismatch(line.number, '"players" must be a list of names')
        seed = _get(line, "seed", int)
        try:
            match = Match(ruleset, players, seed)
        except ValueError as error:
            raise ReplayMismatch(line.number, str(error)) from None
        target = _get(line, "target", int)
        if target != match.target:
            raise ReplayMismatch(
                line.number,
                f"a {len(players)}-player {ruleset.name} match is played to {match.target} tokens, not {target}",
            )
        self.match_id = str(data.get("match_id", ""))
        self.match = match
        return match

    def _line(self, match: Match, line: ReplayLine) -> None:
        kind = line.data["type"]
        handler = {
            "round_start": self._round_start,
            "decision": self._decision,
            "fault": self._fault,
            "round_end": self._round_end,
            "match_end": self._match_end,
        }.get(kind)
        if handler is None:
            return  # other lines (events for a viewer) are not part of the contract
        if self._outcomes and kind not in ("round_end", "match_end"):
            raise ReplayMismatch(line.number, f"{_describe_outcome(self._outcomes[0])}, but the replay has {kind}")
        if match.phase is Phase.OVER and not self._outcomes:
            raise ReplayMismatch(line.number, f"{kind} after the match is over")
        handler(match, line)
        self._collect_outcomes(match)

    def _collect_outcomes(self, match: Match) -> None:
        records = match.records
        for record in records[self._seen_records :]:
            if isinstance(record, (RoundEnded, MatchEnded)):
                self._outcomes.append(record)
        self._seen_records = len(records)

    def _round_start(self, match: Match, line: ReplayLine) -> None:
        if match.phase is not Phase.DEAL:
            raise ReplayMismatch(line.number, f"round {match.round} is not over ({_where(match)})")
        number = _get(line, "round", int)
        if number != match.round + 1:
            raise ReplayMismatch(
                line.number, f"round {number} follows round {match.round}; expected round {match.round + 1}"
            )
        tokens = _get(line, "tokens", list)
        if tokens != list(match.tokens):
            raise ReplayMismatch(
                line.number,
                f"round {number} starts with tokens {tokens}, but round {match.round} ended with {list(match.tokens)}"
                if match.round
                else f"the match starts with tokens {tokens}, not {list(match.tokens)}",
            )
        hands = _get(line, "hands", list)
        if not all(isinstance(hand, list) for hand in hands):
            raise ReplayMismatch(line.number, '"hands" must be a list of lists of cards')
        deal = Deal(
            first=_get(line, "first", int),
            set_aside=_card(line, "set_aside", _get(line, "set_aside", str)),
            removed_face_up=_cards(line, "removed_face_up"),
            hands=tuple(tuple(_card(line, "hands", c) for c in hand) for hand in hands),
            deck=_cards(line, "deck"),
        )
        try:
            match.deal_round(deal)
        except RulesError as error:
            raise ReplayMismatch(line.number, f"round {number}: {error}") from None

    def _decision(self, match: Match, line: ReplayLine) -> None:
        decision = match.decision
        if decision is None:
            raise ReplayMismatch(line.number, f"no decision is due ({_where(match)})")
        seat = _get(line, "seat", int)
        kind = _get(line, "decision", str)
        if seat != decision.seat:
            raise ReplayMismatch(line.number, f"seat {decision.seat} is to decide, not seat {seat}")
        if kind != decision.kind.value:
            raise ReplayMismatch(line.number, f'a "{decision.kind.value}" decision is due, not "{kind}"')
        try:
            action = parse_action(line.data.get("action"))
            match.apply(action)
        except (MalformedAction, IllegalAction) as error:
            raise ReplayMismatch(line.number, f"seat {seat}: illegal {kind}: {error}") from None

    def _fault(self, match: Match, line: ReplayLine) -> None:
        seat = _get(line, "seat", int)
        try:
            reason = FaultReason(_get(line, "reason", str))
        except ValueError:
            known = ", ".join(r.value for r in FaultReason)
            raise ReplayMismatch(
                line.number, f"unknown fault reason {line.data['reason']!r} (known: {known})"
            ) from None
        try:
            match.disqualify(seat, reason, str(line.data.get("detail", "")))
        except RulesError as error:
            raise ReplayMismatch(line.number, str(error)) from None

    def _round_end(self, match: Match, line: ReplayLine) -> None:
        if not self._outcomes or not isinstance(self._outcomes[0], RoundEnded):
            raise ReplayMismatch(line.number, f"round {match.round} is not over ({_where(match)})")
        expected = self._outcomes.popleft()
        assert isinstance(expected, RoundEnded)
        data, r = line.data, expected.round
        if _get(line, "round", int) != r:
            raise ReplayMismatch(line.number, f"round {r} ended, not round {data['round']}")
        winners = sorted(_get(line, "winners", list))
        set_aside = None if expected.set_aside is None else expected.set_aside.label
        revealed = seat_map_json(expected.revealed)
        problem = None
        if winners != sorted(expected.winners):
            problem = f"won by {_seats(expected.winners)}{_why(expected)}, not by {_seats(winners)}"
        elif data.get("spy_bonus") != expected.spy_bonus:
            wrong = _seats_or_none(data.get("spy_bonus"))
            problem = f"the spy bonus goes to {_seats_or_none(expected.spy_bonus)}, not to {wrong}"
        elif _get(line, "tokens", list) != list(expected.tokens):
            problem = f"ends with tokens {list(expected.tokens)}, not {data['tokens']}"
        elif "revealed" in data and data["revealed"] != revealed:
            problem = f"the showdown reveals {revealed}, not {data['revealed']}"
        elif "set_aside" in data and data["set_aside"] != set_aside:
            problem = f"the set-aside card is {set_aside}, not {data['set_aside']}"
        if problem:
            raise ReplayMismatch(line.number, f"round {r}: {problem}")

    def _match_end(self, match: Match, line: ReplayLine) -> None:
        if not self._outcomes or not isinstance(self._outcomes[0], MatchEnded):
            raise ReplayMismatch(line.number, f"the match is not over ({_where(match)})")
        expected = self._outcomes.popleft()
        assert isinstance(expected, MatchEnded)
        winners = sorted(_get(line, "winners", list))
        if winners != sorted(expected.winners):
            raise ReplayMismatch(
                line.number, f"the match was won by {_seats(expected.winners)}, not by {_seats(winners)}"
            )
        if _get(line, "tokens", list) != list(expected.tokens):
            raise ReplayMismatch(
                line.number, f"the match ends with tokens {list(expected.tokens)}, not {line.data['tokens']}"
            )
        ranking = _get(line, "ranking", list)
        places = [sorted(place) if isinstance(place, list) else place for place in ranking]
        wanted = [sorted(place) for place in expected.ranking]
        if places == wanted:
            return
        disqualified = set(match.disqualified)
        finishers = wanted[:-1] if disqualified else wanted
        tail = places[len(finishers) :]
        if (
            disqualified
            and places[: len(finishers)] == finishers
            and all(isinstance(place, list) for place in tail)
            and sorted(seat for place in tail for seat in place) == sorted(disqualified)
        ):
            self.warnings.append(
                f"line {line.number}: the ranking splits the disqualified seats into {tail};"
                " RULES.md has them share last place"
            )
            return
        raise ReplayMismatch(line.number, f"the final ranking is {wanted}, not {ranking}")


def verify(lines: Sequence[ReplayLine]) -> Resimulation:
    """Re-simulate; raises ReplayMismatch at the first disagreement. Warnings are on the result."""
    resimulation = Resimulation(lines)
    resimulation.run()
    return resimulation


def _get(line: ReplayLine, field: str, kind: type) -> Any:
    value = line.data.get(field)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        what = {int: "an integer", str: "a string", list: "a list"}[kind]
        raise ReplayMismatch(line.number, f'{line.data["type"]}: "{field}" must be {what}, not {value!r}')
    return value


def _card(line: ReplayLine, field: str, value: object) -> Card:
    try:
        return Card.from_label(value)  # type: ignore[arg-type]
    except ValueError:
        raise ReplayMismatch(line.number, f'{line.data["type"]}: "{field}": unknown card {value!r}') from None


def _cards(line: ReplayLine, field: str) -> tuple[Card, ...]:
    return tuple(_card(line, field, value) for value in _get(line, field, list))


def _seats(seats: Sequence[int]) -> str:
    return ("seat " if len(seats) == 1 else "seats ") + ", ".join(map(str, seats)) if seats else "nobody"


def _seats_or_none(seat: object) -> str:
    return "nobody" if seat is None else f"seat {seat}"


def _why(outcome: RoundEnded) -> str:
    if not outcome.revealed:
        return " (the last player in the round)"
    shown = ", ".join(f"{seat} {card.label}" for seat, card in sorted(outcome.revealed.items()))
    return f" (showdown: {shown})"


def _where(match: Match) -> str:
    decision = match.decision
    if decision is not None:
        return f"round {match.round}: seat {decision.seat} is to make a {decision.kind.value} decision"
    if match.phase is Phase.DEAL:
        return f"round {match.round + 1} is to be dealt"
    return "the match is over"


def _describe_outcome(outcome: RoundEnded | MatchEnded) -> str:
    if isinstance(outcome, RoundEnded):
        return f"round {outcome.round} is over, won by {_seats(outcome.winners)}{_why(outcome)}"
    return f"the match is over, won by {_seats(outcome.winners)}"

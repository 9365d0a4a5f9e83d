"""Judging every decision of a match as it is played, or again from its replay: the same judge, fed the same
events and views the bots were sent (arena.analysis.mistakes)."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field

from arena.analysis.fairplay import MatchFairPlay, Witness, notes_json
from arena.analysis.fairplay.notes import Outcomes
from arena.analysis.mistakes import Category, Seat
from arena.engine import Action, Decision, EventFeed, Match, MatchResult, Observer
from arena.errors import ReplayMismatch
from arena.players import MatchInfo, Player
from arena.protocol import MalformedAction, parse_action
from arena.replay import Resimulation
from arena.replay.lines import ReplayLine


@dataclass(slots=True)
class SeatDiagnosis:
    """One seat's decisions in one match, and the provable mistakes among them."""

    decisions: int = 0
    mistakes: list[tuple[int, Category]] = field(default_factory=list)
    """(replay line of the decision, category), in the order played."""


class Watch:
    """The judges of one match's seats, and what they found: the provable mistakes, and with `fair_play` the notes
    of each seat's chances and choices (arena.analysis.fairplay), fed the same events and views."""

    def __init__(self, match: Match, fair_play: bool = True, noted: Collection[int] | None = None) -> None:
        """`noted`: the seats whose fair play is noted (every seat by default; see fairplay.Witness)."""
        feed = EventFeed(match)
        self._match = match
        self._observers = [Observer(match, seat, feed) for seat in range(len(match.players))]
        """Each seat's judge's window; a wrapped player's is replaced by a twin of the referee's observer, whose
        feed projects each record once for both."""
        self._seats = [Seat(seat, match.ruleset) for seat in range(len(match.players))]
        self._judged: list[tuple[int, Category | None]] = []
        """(seat, mistake) of every decision of the match so far, in order."""
        self._witness = Witness(match, noted) if fair_play else None
        self._outcomes: Outcomes | None = None
        self._outcomes_read = 0
        """The records read into `_outcomes`."""

    def wrap(self, players: Sequence[Player]) -> list[Player]:
        """The players, each with its decisions judged as it answers them."""
        return [_Judged(player, self, seat) for seat, player in enumerate(players)]

    def share_feed(self, seat: int, observer: Observer) -> None:
        """Read the seat's events from the referee's feed, before any is taken (at the match's start)."""
        self._observers[seat] = observer.twin()

    def judge(self, seat: int, action: Action) -> None:
        """Judge the answer `seat` gives now, from all it was told until now."""
        observer = self._observers[seat]
        judge = self._seats[seat]
        events, view = observer.take_events(), observer.view()
        judge.observe(events)
        self._judged.append((seat, judge.judge(view, action)))
        if self._witness is not None:
            self._witness.note(seat, events, view, action)

    def diagnoses(self) -> list[SeatDiagnosis]:
        """Per seat, once the match is over (or as far as it went)."""
        lines = self._outcomes_now().lines
        found = [SeatDiagnosis() for _ in self._seats]
        for (seat, mistake), line in zip(self._judged, lines, strict=False):
            found[seat].decisions += 1
            if mistake is not None:
                found[seat].mistakes.append((line, mistake))
        return found

    def fair_play(self, match_id: str) -> MatchFairPlay | None:
        """The fair-play notes of the match (None without `fair_play`)."""
        return None if self._witness is None else self._witness.findings(match_id)

    def fair_play_json(self) -> bytes | None:
        """The same notes as the store keeps them (arena.analysis.fairplay.notes_json)."""
        return None if self._witness is None else notes_json(self._witness.columns(self._outcomes_now()))

    def _outcomes_now(self) -> Outcomes:
        """The match's decisions and their outcomes so far, read once for both the judge and the witness."""
        records = self._match.records
        if self._outcomes is None or self._outcomes_read != len(records):
            self._outcomes, self._outcomes_read = Outcomes.of(records), len(records)
        return self._outcomes


class _Judged:
    """A player whose answers the watch judges before the referee applies them."""

    def __init__(self, player: Player, watch: Watch, seat: int) -> None:
        self._player = player
        self._watch = watch
        self._seat = seat

    def start_match(self, info: MatchInfo, observer: Observer) -> None:
        self._watch.share_feed(self._seat, observer)
        self._player.start_match(info, observer)

    def act(self, decision: Decision, observer: Observer) -> Action:
        action = self._player.act(decision, observer)
        if decision.accepts(action):  # an illegal answer is a fault, not a move
            self._watch.judge(self._seat, action)
        return action

    def end_match(self, result: MatchResult, observer: Observer) -> None:
        self._player.end_match(result, observer)

    def check(self) -> None:
        self._player.check()


def replayed_decisions(lines: Sequence[ReplayLine]) -> Iterator[tuple[Match, int, Action]]:
    """A replay re-simulated: the match before each decision its lines keep, the seat and the answer, as far as
    the replay keeps the rules (a mismatch ends it: the re-simulation names the line)."""
    resimulation = Resimulation(lines)
    try:
        for index, (_, match) in enumerate(resimulation.steps()):
            following = lines[index + 1].data if index + 1 < len(lines) else {}
            decision = match.decision
            if following.get("type") != "decision" or decision is None or following.get("seat") != decision.seat:
                continue
            try:
                action = parse_action(following.get("action"))
            except MalformedAction:
                continue
            if decision.accepts(action):
                yield match, decision.seat, action
    except ReplayMismatch:
        return


def diagnose_replay(lines: Sequence[ReplayLine]) -> list[SeatDiagnosis]:
    """The same diagnosis from a replay, re-simulated: each decision judged from the events and the view its seat
    had, as far as the replay keeps the rules."""
    watch: Watch | None = None
    for match, seat, action in replayed_decisions(lines):
        watch = watch or Watch(match, fair_play=False)
        watch.judge(seat, action)
    return watch.diagnoses() if watch is not None else []


def fair_play_of_replay(lines: Sequence[ReplayLine], trusted: Collection[str] = ()) -> MatchFairPlay | None:
    """The fair-play notes from a replay, re-simulated: each decision from the events and the view its seat had, as
    far as the replay keeps the rules (None for a replay that starts wrong); the seats of the `trusted` bots (the
    arena's own played in-process) are not followed, as in the worker."""
    witness: Witness | None = None
    for match, seat, action in replayed_decisions(lines):
        if witness is None:
            noted = [seat for seat, name in enumerate(match.players) if name not in trusted]
            witness = Witness(match, noted)
        witness.judge(seat, action)
    if witness is None:
        return None
    return witness.findings(str(lines[0].data.get("match_id", "")))  # the match_start line: replayed_decisions read it

"""Properties of random matches: cards are conserved, matches end, nothing leaks, replays verify.

Hypothesis draws every answer of a match (and its faults), so a failing match shrinks to one of few
steps and first answers, not just to another seed."""

from __future__ import annotations

import copy
import dataclasses
import functools
import itertools
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.engine import (
    RULESETS,
    Card,
    ChancellorResolved,
    Discarded,
    EventFeed,
    FaultReason,
    Keep,
    Match,
    Observer,
    Phase,
    Play,
    Played,
    PlayerView,
    Record,
    RoundEnded,
    RoundStarted,
    project,
)
from arena.engine.actions import ActionTable, keep_legal
from arena.errors import ReplayMismatch
from arena.protocol import action_json
from arena.replay import parse_replay, replay_lines, verify
from arena.replay.lines import dump_line

MAX_STEPS = 20_000


@dataclass(frozen=True, slots=True)
class Fault:
    """A seat disqualified: the `seat`-th of those still in, for `reason`."""

    seat: int
    reason: FaultReason


Step = int | Fault
"""An answer, as its index in the decision's legal list, or a fault."""


@dataclass(frozen=True, slots=True)
class MatchPlan:
    """A whole match: its deals come from the seed, every answer and fault from `steps`."""

    ruleset: str
    players: int
    seed: int
    steps: tuple[Step, ...]


def script(
    ruleset: str,
    players: int,
    seed: int,
    fault_steps: list[int],
    answer: Callable[[int], int],
    fault: Callable[[int], Fault],
) -> MatchPlan:
    """Play a match to its end, asking `answer(len(legal))` for each answer and `fault(seats left)` at each of
    `fault_steps`: the plan that replays it."""
    match = Match(RULESETS[ruleset], [f"bot{s}" for s in range(players)], seed)
    steps: list[Step] = []
    faults = sorted(fault_steps)
    while match.phase is not Phase.OVER:
        if len(steps) >= MAX_STEPS:
            raise AssertionError(f"the match did not end within {MAX_STEPS} steps")
        if match.phase is Phase.DEAL:
            match.deal_round()
            continue
        step: Step
        if faults and faults[0] <= len(steps):
            faults.pop(0)
            step = fault(players - len(match.disqualified))
        else:
            step = answer(len(match.decision.legal))  # type: ignore[union-attr]
        _take(match, step)
        steps.append(step)
    return MatchPlan(ruleset, players, seed, tuple(steps))


def _take(match: Match, step: Step) -> None:
    if isinstance(step, Fault):
        seat = [s for s in range(len(match.players)) if s not in match.disqualified][step.seat]
        match.disqualify(seat, step.reason, "injected")
    else:
        match.apply(match.decision.legal[step])  # type: ignore[union-attr]


@st.composite
def match_plans(draw: st.DrawFn) -> MatchPlan:
    """A match whose every answer Hypothesis draws (an index into legal, which shrinks to the first answer),
    with up to one fault a seat (which shrinks to none)."""
    ruleset = draw(st.sampled_from(sorted(RULESETS)))
    rules = RULESETS[ruleset]
    players = draw(st.integers(rules.min_players, rules.max_players))
    seed = draw(st.integers(0, 2**32 - 1))
    fault_steps = draw(st.lists(st.integers(0, 300), max_size=players))
    return script(
        ruleset,
        players,
        seed,
        fault_steps,
        answer=lambda count: draw(st.integers(0, count - 1)),
        fault=lambda left: Fault(draw(st.integers(0, left - 1)), draw(st.sampled_from(list(FaultReason)))),
    )


def random_plan(ruleset: str, players: int, seed: int, fault_steps: Sequence[int] = ()) -> MatchPlan:
    """A match of random answers and faults from a seed: for a test that needs one match, not many."""
    chooser = random.Random(seed ^ 0x5EED)
    return script(
        ruleset,
        players,
        seed,
        list(fault_steps),
        chooser.randrange,
        lambda left: Fault(chooser.randrange(left), chooser.choice(list(FaultReason))),
    )


def play_random(plan: MatchPlan, check=None, legal_lists: list | None = None) -> Match:
    """The match of `plan`, played again; `check` after every step.

    `legal_lists` collects the legal answers of every decision, in order.
    """
    match = Match(RULESETS[plan.ruleset], [f"bot{s}" for s in range(plan.players)], plan.seed)
    steps = iter(plan.steps)
    while match.phase is not Phase.OVER:
        if match.phase is Phase.DEAL:
            match.deal_round()
        else:
            step = next(steps)
            if legal_lists is not None and not isinstance(step, Fault):
                legal_lists.append(match.decision.legal)  # type: ignore[union-attr]
            _take(match, step)
        if check is not None:
            check(match)
    assert next(steps, None) is None, "the plan has steps past the end of its match"
    return match


def cards_on_table(match: Match) -> Counter[Card]:
    state = match.state()
    cards: Counter[Card] = Counter(state.deck)
    cards.update(state.removed_face_up)
    for seat_cards in (*state.hands, *state.discards):
        cards.update(seat_cards)
    if state.set_aside is not None:
        cards[state.set_aside] += 1
    return cards


@settings(max_examples=60, deadline=None)
@given(match_plans())
def test_every_card_is_in_exactly_one_place_at_every_step(plan: MatchPlan) -> None:
    full_deck = Counter(RULESETS[plan.ruleset].deck)

    def conserved(match: Match) -> None:
        if match.round:
            assert cards_on_table(match) == full_deck

    play_random(plan, conserved)


@settings(max_examples=60, deadline=None)
@given(match_plans())
def test_every_match_ends_with_a_ranking_of_every_seat(plan: MatchPlan) -> None:
    match = play_random(plan)
    result = match.result
    assert result is not None
    ranked = [seat for place in result.ranking for seat in place]
    assert sorted(ranked) == list(range(len(match.players)))
    remaining = [s for s in range(len(match.players)) if s not in result.disqualified]
    if len(remaining) == 1:
        assert result.winners == result.ranking[0] == (remaining[0],)
    else:
        assert result.winners == tuple(s for s in remaining if result.tokens[s] >= match.target)
        assert result.winners and set(result.ranking[0]) <= set(result.winners)
    if result.disqualified:
        assert result.ranking[-1] == result.disqualified


# -- no leaks -----------------------------------------------------------------------------

SENTINEL = Card.PRINCESS


def _other(card: Card | None) -> Card:
    return Card.GUARD if card is SENTINEL else SENTINEL


def scramble_secrets(record: Record, seat: int) -> Record:
    """The record with everything `seat` may not know replaced: its projection must not change."""
    if isinstance(record, RoundStarted):
        hands = tuple(h if s == seat else tuple(_other(c) for c in h) for s, h in enumerate(record.hands))
        deck = tuple(_other(c) for c in record.deck)
        return dataclasses.replace(record, hands=hands, deck=deck, set_aside=_other(record.set_aside))
    if isinstance(record, Played):
        changes: dict[str, object] = {}
        if record.seen is not None and record.seat != seat:
            changes["seen"] = _other(record.seen)
        if record.compared and seat not in dict(record.compared):
            changes["compared"] = tuple((s, _other(c)) for s, c in record.compared)
        if record.received:
            changes["received"] = tuple((s, c if s == seat else _other(c)) for s, c in record.received)
        return dataclasses.replace(record, **changes)
    if isinstance(record, Discarded):
        return dataclasses.replace(record, drew=_other(record.drew))
    if isinstance(record, ChancellorResolved):
        return dataclasses.replace(
            record,
            drawn=tuple(_other(c) for c in record.drawn),
            kept=None if record.kept is None else _other(record.kept),
            bottom=tuple(_other(c) for c in record.bottom),
        )
    return record


@settings(max_examples=60, deadline=None)
@given(match_plans())
def test_no_event_or_view_shows_a_seat_what_it_may_not_know(plan: MatchPlan) -> None:
    players = plan.players

    def views_show_own_hand_only(match: Match) -> None:
        state = match.state()
        for seat in range(players):
            view = match.view(seat)
            assert view.hand == state.hands[seat]
            assert [p.discards for p in view.players] == list(state.discards)
            assert bool(view.legal) == (match.decision is not None and match.decision.seat == seat)
            assert view.deck == len(state.deck)

    match = play_random(plan, views_show_own_hand_only)
    for record in match.records:
        for seat in range(players):
            assert project(record, seat) == project(scramble_secrets(record, seat), seat), (record, seat)
    for record in match.records:
        if isinstance(record, Played) and record.seen is not None:
            assert project(record, record.seat).seen is record.seen


@settings(max_examples=60, deadline=None)
@given(match_plans())
def test_every_view_shows_the_table_as_it_is_and_makes_a_seat_again_only_when_it_changed(plan: MatchPlan) -> None:
    """A stale PlayerView would differ from the table here; a needless new one would cost its consumers (the
    protocol, the environment) an encoding at every turn. Only a round's end and start remake every seat."""
    shown: dict[int, tuple[tuple[object, ...], PlayerView]] = {}
    checked = [0]

    def public_fields_are_current(match: Match) -> None:
        state = match.state()
        new_round = any(isinstance(r, RoundStarted | RoundEnded) for r in match.records[checked[0] :])
        checked[0] = len(match.records)
        for seat, player in enumerate(match.view(0).players):
            fields = (
                state.tokens[seat],
                state.in_round[seat],
                state.protected[seat],
                state.disqualified[seat],
                state.discards[seat],
            )
            assert (player.tokens, player.in_round, player.protected, player.disqualified, player.discards) == fields
            before = shown.get(seat)
            if before is not None and before[0] == fields and not new_round:
                assert before[1] is player, f"seat {seat} was made again with nothing changed"
            shown[seat] = (fields, player)

    play_random(plan, public_fields_are_current)


def test_scrambling_does_change_what_a_leaky_projection_would_show() -> None:
    """The leak check can fail: a record's secrets do differ once scrambled."""
    match = play_random(random_plan("2019", 4, 99))
    started = next(r for r in match.records if isinstance(r, RoundStarted))
    assert scramble_secrets(started, 0).hands[1] != started.hands[1]
    assert scramble_secrets(started, 0).hands[0] == started.hands[0]


# -- replays ------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(match_plans(), st.data())
def test_replays_verify_and_fail_at_an_altered_decision_or_outcome(plan: MatchPlan, data: st.DataObject) -> None:
    legal_lists: list = []
    match = play_random(plan, legal_lists=legal_lists)
    lines = list(replay_lines(match, "prop"))
    assert verify(parse_replay([dump_line(line) for line in lines])).match is not None

    decisions = [i for i, line in enumerate(lines) if line["type"] == "decision"]
    outcomes = [i for i, line in enumerate(lines) if line["type"] in ("round_end", "match_end")]
    altered = copy.deepcopy(lines)
    if decisions and data.draw(st.booleans(), label="alter a decision"):
        k = data.draw(st.integers(0, len(decisions) - 1), label="decision")
        legal = legal_lists[k]
        universe = (
            ActionTable(RULESETS[plan.ruleset], plan.players).plays if isinstance(legal[0], Play) else _all_keeps()
        )
        wrong = data.draw(st.sampled_from(sorted(universe - set(legal), key=repr)), label="illegal answer")
        altered[decisions[k]]["action"] = action_json(wrong)
        index = decisions[k]
    else:
        index = data.draw(st.sampled_from(outcomes), label="outcome")
        altered[index]["tokens"] = [t + 1 for t in altered[index]["tokens"]]
    with pytest.raises(ReplayMismatch) as failure:
        verify(parse_replay([dump_line(line) for line in altered]))
    assert failure.value.line == index + 1


@functools.cache
def _all_keeps() -> frozenset[Keep]:
    cards = list(Card)
    return frozenset(keep for hand in itertools.product(cards, repeat=3) for keep in keep_legal(hand)) | frozenset(
        keep for hand in itertools.product(cards, repeat=2) for keep in keep_legal(hand)
    )


@settings(max_examples=30, deadline=None)
@given(match_plans())
def test_a_shared_event_feed_gives_each_seat_exactly_its_own_projection(plan: MatchPlan) -> None:
    match = play_random(plan)
    feed = EventFeed(match)
    for seat in range(plan.players):
        expected = [event for record in match.records if (event := project(record, seat)) is not None]
        assert Observer(match, seat, feed).take_events() == expected

"""Properties of random matches: cards are conserved, matches end, nothing leaks, replays verify."""

from __future__ import annotations

import copy
import dataclasses
import functools
import itertools
import random
from collections import Counter

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
    Record,
    RoundStarted,
    project,
)
from arena.engine.actions import ActionTable, keep_legal
from arena.errors import ReplayMismatch
from arena.protocol import action_json
from arena.replay import parse_replay, replay_lines, verify
from arena.replay.lines import dump_line

MAX_STEPS = 20_000


@st.composite
def match_plans(draw: st.DrawFn) -> tuple[str, int, int, list[int]]:
    ruleset = draw(st.sampled_from(sorted(RULESETS)))
    rules = RULESETS[ruleset]
    players = draw(st.integers(rules.min_players, rules.max_players))
    seed = draw(st.integers(0, 2**32 - 1))
    faults = draw(st.lists(st.integers(0, 300), max_size=players))
    return ruleset, players, seed, faults


def play_random(
    ruleset: str, players: int, seed: int, fault_steps: list[int], check=None, legal_lists: list | None = None
) -> Match:
    """Random legal play, a seat disqualified at each of `fault_steps`; `check` after every step.

    `legal_lists` collects the legal answers of every decision, in order.
    """
    match = Match(RULESETS[ruleset], [f"bot{s}" for s in range(players)], seed)
    rng = random.Random(seed ^ 0x5EED)
    faults = sorted(fault_steps)
    for step in range(MAX_STEPS):
        if match.phase is Phase.OVER:
            return match
        if faults and faults[0] <= step:
            faults.pop(0)
            seat = rng.choice([s for s in range(players) if s not in match.disqualified])
            match.disqualify(seat, rng.choice(list(FaultReason)), f"injected at step {step}")
        elif match.phase is Phase.DEAL:
            match.deal_round()
        else:
            legal = match.decision.legal  # type: ignore[union-attr]
            if legal_lists is not None:
                legal_lists.append(legal)
            match.apply(legal[rng.randrange(len(legal))])
        if check is not None:
            check(match)
    raise AssertionError(f"the match did not end within {MAX_STEPS} steps")


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
def test_every_card_is_in_exactly_one_place_at_every_step(plan: tuple[str, int, int, list[int]]) -> None:
    ruleset, players, seed, faults = plan
    full_deck = Counter(RULESETS[ruleset].deck)

    def conserved(match: Match) -> None:
        if match.round:
            assert cards_on_table(match) == full_deck

    play_random(ruleset, players, seed, faults, conserved)


@settings(max_examples=60, deadline=None)
@given(match_plans())
def test_every_match_ends_with_a_ranking_of_every_seat(plan: tuple[str, int, int, list[int]]) -> None:
    match = play_random(*plan)
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
def test_no_event_or_view_shows_a_seat_what_it_may_not_know(plan: tuple[str, int, int, list[int]]) -> None:
    ruleset, players, seed, faults = plan

    def views_show_own_hand_only(match: Match) -> None:
        state = match.state()
        for seat in range(players):
            view = match.view(seat)
            assert view.hand == state.hands[seat]
            assert [p.discards for p in view.players] == list(state.discards)
            assert bool(view.legal) == (match.decision is not None and match.decision.seat == seat)
            assert view.deck == len(state.deck)

    match = play_random(ruleset, players, seed, faults, views_show_own_hand_only)
    for record in match.records:
        for seat in range(players):
            assert project(record, seat) == project(scramble_secrets(record, seat), seat), (record, seat)
    for record in match.records:
        if isinstance(record, Played) and record.seen is not None:
            assert project(record, record.seat).seen is record.seen


def test_scrambling_does_change_what_a_leaky_projection_would_show() -> None:
    """The leak check can fail: a record's secrets do differ once scrambled."""
    match = play_random("2019", 4, 99, [])
    started = next(r for r in match.records if isinstance(r, RoundStarted))
    assert scramble_secrets(started, 0).hands[1] != started.hands[1]
    assert scramble_secrets(started, 0).hands[0] == started.hands[0]


# -- replays ------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(match_plans(), st.data())
def test_replays_verify_and_fail_at_an_altered_decision_or_outcome(
    plan: tuple[str, int, int, list[int]], data: st.DataObject
) -> None:
    legal_lists: list = []
    match = play_random(*plan, legal_lists=legal_lists)
    lines = list(replay_lines(match, "prop"))
    assert verify(parse_replay([dump_line(line) for line in lines])).match is not None

    decisions = [i for i, line in enumerate(lines) if line["type"] == "decision"]
    outcomes = [i for i, line in enumerate(lines) if line["type"] in ("round_end", "match_end")]
    altered = copy.deepcopy(lines)
    if decisions and data.draw(st.booleans(), label="alter a decision"):
        k = data.draw(st.integers(0, len(decisions) - 1), label="decision")
        legal = legal_lists[k]
        universe = ActionTable(RULESETS[plan[0]], plan[1]).plays if isinstance(legal[0], Play) else _all_keeps()
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
def test_a_shared_event_feed_gives_each_seat_exactly_its_own_projection(plan: tuple[str, int, int, list[int]]) -> None:
    match = play_random(*plan)
    feed = EventFeed(match)
    for seat in range(plan[1]):
        expected = [event for record in match.records if (event := project(record, seat)) is not None]
        assert Observer(match, seat, feed).take_events() == expected

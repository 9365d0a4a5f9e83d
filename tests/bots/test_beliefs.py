"""What the card-counting bots know, fed with the messages the arena sends their seat."""

from __future__ import annotations

import subprocess
import sys
import time
from collections import Counter
from itertools import combinations
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

from arena.bots import search, simulator
from arena.bots.heuristic import HeuristicBot
from arena.bots.search import SearchBot
from arena.engine import Match, Observer
from arena.protocol import act_message, events_json, match_start_message
from tests.engine.scenario import keep, play, start


def wire(message: dict[str, Any]) -> dict[str, Any]:
    return orjson.loads(orjson.dumps(message))


class Seat:
    """Seat 0's side of a scripted match: the messages it would get, given to a bot."""

    def __init__(self, match: Match, bot: HeuristicBot | SearchBot) -> None:
        self.match, self.bot = match, bot
        self.observer = Observer(match, 0)
        players = tuple(match.players)
        bot.match_start(wire(match_start_message("m", "2019", 0, players, match.target, self.observer.take_events())))

    def act(self) -> dict[str, Any]:
        """The bot's answer to an act message now (seat 0 must be deciding)."""
        message = act_message("m", self.observer.view(), 1000, self.observer.take_events())
        return self.bot.act(wire(message))

    def catch_up(self) -> None:
        self.bot.beliefs.observe(wire({"events": events_json(self.observer.take_events())})["events"])


def test_after_its_priest_it_knows_the_card_until_that_card_is_played() -> None:
    match = start("2019", ["priest", "countess", "spy"], top=["guard", "guard", "spy"])
    seat = Seat(match, HeuristicBot())
    seat.observer.take_events()
    play(match, "priest", 1)
    seat.catch_up()
    assert seat.bot.beliefs.known == {1: "countess"}
    play(match, "guard", 2, "priest")  # seat 1 plays the card it drew: it still holds the countess
    seat.catch_up()
    assert seat.bot.beliefs.known == {1: "countess"}


def test_after_its_king_it_knows_what_it_gave_away() -> None:
    match = start("2019", ["king", "handmaid", "spy"], top=["baron"])
    seat = Seat(match, HeuristicBot())
    answer = seat.act()
    assert answer.get("card") != "princess"
    if answer != {"card": "king", "target": 1}:  # make the trade happen whatever the bot preferred
        seat.bot.beliefs.chose({"card": "king", "target": 1})
    play(match, "king", 1)
    seat.catch_up()
    assert seat.bot.beliefs.known == {1: "baron"}
    assert seat.bot.beliefs.my_card == "handmaid"


def test_when_a_king_takes_its_card_it_knows_who_holds_it() -> None:
    match = start("2019", ["guard", "king", "spy"], top=["handmaid", "priest"])
    seat = Seat(match, HeuristicBot())
    play(match, "handmaid")  # seat 0 keeps its guard
    seat.bot.beliefs.my_card = "guard"
    play(match, "king", 2)  # seat 1 trades with seat 2: seat 0 learns nothing of either hand
    seat.catch_up()
    assert seat.bot.beliefs.known == {}


def test_a_missed_guard_rules_the_named_card_out_until_the_hand_changes() -> None:
    match = start("2019", ["guard", "baron", "spy"], top=["guard", "priest", "handmaid", "guard"])
    seat = Seat(match, HeuristicBot())
    play(match, "guard", 1, "priest")
    seat.catch_up()
    assert seat.bot.beliefs.ruled_out == {1: {"priest"}}
    play(match, "priest", 2)  # seat 1 draws a priest and plays it: its hand may hold anything again
    play(match, "spy")
    seat.act()
    assert seat.bot.beliefs.ruled_out == {}


def test_the_heuristic_never_plays_the_princess_and_names_a_card_it_knows() -> None:
    match = start("2019", ["priest", "prince", "spy"], top=["princess", "guard", "guard", "guard"])
    seat = Seat(match, HeuristicBot())
    play(match, "priest", 1)
    play(match, "guard", 2, "baron")
    play(match, "guard", 0, "king")
    # seat 0 holds princess + guard now and knows seat 1 holds the prince
    assert seat.act() == {"card": "guard", "target": 1, "guess": "prince"}


def test_the_search_bot_searches_for_its_share_of_the_deadline_and_no_longer(monkeypatch: pytest.MonkeyPatch) -> None:
    """It stops at the first look at the clock past its budget, however fast the machine: every reading but the
    first (the start) and the last is within the budget, and the last is past it."""
    readings: list[float] = []

    def perf_counter() -> float:
        readings.append(time.perf_counter())
        return readings[-1]

    monkeypatch.setattr(search, "time", SimpleNamespace(perf_counter=perf_counter))
    match = start("2019", ["guard", "baron", "spy", "priest"], top=["handmaid"])
    seat = Seat(match, SearchBot(share=0.1))
    message = wire(act_message("m", seat.observer.view(), 2000, seat.observer.take_events()))
    answer = seat.bot.act(message)
    assert answer in message["legal"]
    budget_end = readings[0] + 0.1 * 2000 / 1000
    assert len(readings) >= 2
    assert all(reading < budget_end for reading in readings[1:-1])
    assert readings[-1] >= budget_end


def test_the_search_bots_longest_decisions_take_fewer_playouts_as_many_turns_as_its_budget_allows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At a 4-player round's start a playout plays a dozen turns: the turns, not the playouts, end its search, so a
    decision there costs about what one near a round's end does (BENCHMARKS.md, Bot strength: the 99th percentile)."""
    samplers: list[search.Sampler] = []
    real_sampler = search.Sampler

    def kept_sampler(*args: Any) -> search.Sampler:
        samplers.append(real_sampler(*args))
        return samplers[-1]

    monkeypatch.setattr(search, "Sampler", kept_sampler)
    match = start("2019", ["guard", "baron", "spy", "priest"], top=["handmaid"])
    bot = SearchBot(playouts=600)
    seat = Seat(match, bot)
    message = wire(act_message("m", seat.observer.view(), 1000, seat.observer.take_events()))
    assert seat.bot.act(message) in message["legal"]
    (searched,) = samplers
    longest_sample = len(message["legal"]) * (message["deck"] + 1)
    assert bot.turns == round(600 * search.TURNS_A_PLAYOUT)
    assert bot.turns <= searched.playout.turns < bot.turns + longest_sample
    assert searched.played < 600


def test_an_opponents_blind_guard_guess_is_kept_and_a_guess_at_a_card_it_knew_is_not() -> None:
    blind = start("2019", ["guard", "priest"], top=["handmaid", "guard"])
    seat = Seat(blind, SearchBot())
    play(blind, "guard", 1, "spy")
    play(blind, "guard", 0, "baron")  # seat 1 names a card blind, keeping its Priest
    seat.catch_up()
    assert seat.bot.beliefs.last_played[1] == "guard" and seat.bot.beliefs.last_guess[1] == "baron"
    knowing = start("2019", ["guard", "priest"], top=["handmaid", "guard", "guard", "guard"])
    seat = Seat(knowing, SearchBot())
    play(knowing, "guard", 1, "spy")
    play(knowing, "priest", 0)  # seat 1 sees my Handmaid
    play(knowing, "guard", 1, "spy")
    play(knowing, "guard", 0, "baron")  # what it names, knowing my card, says nothing of its own
    seat.catch_up()
    assert seat.bot.beliefs.last_played[1] == "guard" and seat.bot.beliefs.last_guess[1] is None


def test_an_opponents_guard_guess_says_which_card_it_kept() -> None:
    """A player names the likeliest card it does not hold: where the Priest and the Baron are as likely, one that
    names the Baron holds the Priest."""
    rules = simulator.Rules.of("2019")
    unseen = list(rules.counts)
    seen = {"spy": 2, "handmaid": 2, "prince": 2, "chancellor": 2, "king": 1, "countess": 1, "guard": 3}
    for label, count in seen.items():
        unseen[search.INDEX[label]] -= count
    world = simulator.World(
        hands=[simulator.GUARD] * 2,
        deck=[simulator.GUARD] * 5,
        set_aside=simulator.OUT,
        protected=[False, False],
        spies=[False, False],
        discard_sums=[0, 0],
        unseen=unseen,
        knows={},
    )
    bot, guard, priest, baron = SearchBot(), simulator.GUARD, simulator.PRIEST, simulator.BARON
    assert {bot._kept_weights(world, 1, guard, None)[card] for card in rules.cards} == {1.0}
    named_baron = bot._kept_weights(world, 1, guard, baron)
    assert named_baron[priest] == 1.0
    assert {named_baron[card] for card in rules.cards if card != priest} == {search.MISCHOSEN}
    assert bot._kept_weights(world, 1, guard, priest)[priest] == search.MISCHOSEN


def test_the_cards_it_put_under_the_deck_stay_there_in_its_samples_and_out_of_every_hand() -> None:
    """After its Chancellor it knows the deck's bottom cards: no sampled state gives them to an opponent, and its
    Guard's odds leave them out, until another Chancellor buries them deeper (its cards unseen) or the deck runs
    down to them."""
    match = start("2019", ["guard", "priest"], top=["chancellor", "king", "countess"])
    bot = SearchBot()
    seat = Seat(match, bot)

    def message() -> dict[str, Any]:
        act = wire(act_message("m", seat.observer.view(), 1000, seat.observer.take_events()))
        bot.beliefs.act(act)
        return act

    message()
    play(match, "chancellor")
    bot.beliefs.chose({"card": "chancellor"})
    assert message()["hand"] == ["guard", "king", "countess"]
    bot.beliefs.chose({"keep": "guard", "bottom": ["king", "countess"]})
    keep(match, "guard", ["king", "countess"])
    play(match, "spy")  # seat 1 draws a Spy beside its Priest
    act = message()
    assert bot.beliefs.under_deck() == ["countess", "king"]  # the last put under is at the very bottom
    odds = bot.beliefs.hand_odds(1)
    assert odds.get("king", 0.0) == odds.get("countess", 0.0) == 0.0 and odds["priest"] > 0
    table = bot._table(act)
    assert table.under == [simulator.COUNTESS, simulator.KING]
    assert simulator.KING not in table.pool and simulator.COUNTESS not in table.pool
    sampler = search.Sampler(table, [], simulator.Playout(bot.rules, 0, bot.rng), bot.rng)
    for _ in range(50):
        world = sampler.sample()
        assert world.deck[:2] == [simulator.COUNTESS, simulator.KING] and len(world.deck) == act["deck"]
        assert world.hands[1] not in (simulator.KING, simulator.COUNTESS, simulator.OUT)
    bot.beliefs.observe([{"event": "chancellor", "seat": 1, "drew": 2, "returned": 2}])
    assert bot.beliefs.under_deck() == [None, None, "countess", "king"]
    bot.beliefs.message = {**act, "deck": 3}  # drawn down to the last three
    assert bot.beliefs.under_deck() == [None, None, "countess"]


def test_after_an_opponents_chancellor_it_holds_the_best_of_three_and_the_others_are_under_the_deck() -> None:
    """Every bot keeps the best of the three cards a Chancellor leaves it and puts the stronger of the others at the
    very bottom: the search's odds and samples say so, until that opponent plays again."""
    match = start("2019", ["guard", "priest"], top=["handmaid", "chancellor", "spy", "king"])
    bot = SearchBot()
    seat = Seat(match, bot)
    bot.beliefs.act(wire(act_message("m", seat.observer.view(), 1000, seat.observer.take_events())))
    bot.beliefs.chose({"card": "handmaid"})
    play(match, "handmaid")
    play(match, "chancellor")
    keep(match, "king", ["spy", "priest"])
    act = wire(act_message("m", seat.observer.view(), 1000, seat.observer.take_events()))
    bot.beliefs.act(act)
    assert bot.beliefs.chancellors[1] == (None, 2, 2, 2)
    odds, plain = bot.beliefs.hand_odds(1), bot.beliefs.unseen()
    assert sum(odds.values()) == pytest.approx(1.0)
    values = bot.beliefs.values
    mean = sum(values[card] * p for card, p in odds.items())
    assert mean > sum(values[card] * n for card, n in plain.items()) / sum(plain.values()) + 1
    assert odds["princess"] > 2.5 * plain["princess"] / sum(plain.values())  # three times the chance, nearly
    table = bot._table(act)
    assert [(o.seat, o.drew, o.held, o.slots) for o in table.opponents] == [(1, 2, simulator.OUT, (0, 1))]
    sampler = search.Sampler(table, [], simulator.Playout(bot.rules, 0, bot.rng), bot.rng)
    rank = bot.rules.values.__getitem__
    for _ in range(100):
        world = sampler.sample()
        assert rank(world.hands[1]) >= rank(world.deck[0]) >= rank(world.deck[1])
        assert sorted([world.hands[1], *world.deck, world.set_aside]) == sorted(table.pool)
    bot.beliefs.observe([{"event": "play", "seat": 1, "card": "spy"}])
    assert 1 not in bot.beliefs.chancellors  # the card it played may be the one it kept


def test_a_king_trade_between_others_moves_what_a_chancellor_kept_with_the_hand() -> None:
    beliefs = SearchBot().beliefs
    beliefs.chancellors[2] = (None, 2, 2, 2)
    beliefs.observe([{"event": "play", "seat": 1, "card": "king", "target": 2}])
    assert beliefs.chancellors == {1: (None, 2, 2, 2)}


def test_the_odds_of_what_a_chancellor_kept_are_those_of_every_three_cards_whose_best_it_may_hold() -> None:
    """Counted over every three cards it could have had: a Guard that missed since rules out the draws whose best
    is the card it named, and a card I saw it hold is one of its three."""
    beliefs = SearchBot().beliefs
    values = simulator.Rules.of("2019").values
    beliefs.values = {label: values[index] for label, index in search.INDEX.items()}
    beliefs.message = {"deck": 0}
    beliefs.infer = True
    unseen = Counter(guard=5, priest=2, baron=2, handmaid=1, prince=1)
    for held, ruled_out in ((None, {"priest"}), ("baron", {"baron", "prince"})):
        beliefs.chancellors[1] = (held, 2, 2, 2)
        beliefs.ruled_out[1] = ruled_out
        pool = list((unseen - Counter([held] if held else [])).elements())
        tally: Counter[str] = Counter()
        for cards in combinations(range(len(pool)), 3 if held is None else 2):
            best = max([pool[i] for i in cards] + ([held] if held else []), key=beliefs.values.__getitem__)
            if best not in ruled_out:
                tally[best] += 1
        odds = beliefs.hand_odds(1, unseen)
        assert odds.keys() == tally.keys()
        assert all(odds[card] == pytest.approx(n / sum(tally.values())) for card, n in tally.items())


def test_a_card_it_saw_an_opponent_hold_before_its_chancellor_is_dealt_once() -> None:
    match = start("2019", ["priest", "countess", "spy"], top=["guard", "chancellor", "guard", "baron", "handmaid"])
    bot = SearchBot()
    seat = Seat(match, bot)
    bot.beliefs.act(wire(act_message("m", seat.observer.view(), 1000, seat.observer.take_events())))
    play(match, "priest", 1)  # I see its Countess
    bot.beliefs.chose({"card": "priest", "target": 1})
    play(match, "chancellor")
    keep(match, "countess", ["guard", "baron"])
    play(match, "handmaid")
    act = wire(act_message("m", seat.observer.view(), 1000, seat.observer.take_events()))
    bot.beliefs.act(act)
    assert bot.beliefs.chancellors[1][0] == "countess"
    table = bot._table(act)
    assert simulator.COUNTESS not in table.pool and table.opponents[0].held == simulator.COUNTESS
    sampler = search.Sampler(table, [], simulator.Playout(bot.rules, 0, bot.rng), bot.rng)
    for _ in range(50):
        world = sampler.sample()
        dealt = [card for card in world.hands if card != simulator.OUT] + world.deck + [world.set_aside]
        assert sorted(dealt) == sorted([*table.pool, simulator.COUNTESS])


def test_a_search_without_playouts_is_refused_where_it_is_configured() -> None:
    with pytest.raises(ValueError, match="playouts must be at least 1, not 0"):
        SearchBot(playouts=0)
    done = subprocess.run(
        [sys.executable, "-m", "arena.bots.search", "--playouts", "0"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and "--playouts must be at least 1, not 0" in done.stderr

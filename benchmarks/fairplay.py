"""Fair play: how often honest bots are flagged, how soon cheats are, and what the analysis costs a match.

Every match is played in this process (2019 rules, whole matches, no subprocesses), each seat's answers noted by
`arena.analysis.fairplay.Witness` as the referee takes them; the flags are those of `tally` with the default
`Criteria` (alpha 0.001 per detector, calibrated).

false flags  Tournaments of honest bots at 2, 3, 4 and 6 players: --matches matches in all, split equally over
             the table sizes, each size's share cut into tournaments of --tournament matches; each table seats
             bots drawn (with repeats) from `random` (the built-in SDK bot), `heuristic`, `search` (with
             --search-playouts playouts a decision, a small share of its default budget, for time) and
             `uniform` (arena's RandomPlayer: uniform among the legal answers). Each tournament is tallied alone,
             and each size's matches once more as one tournament. Every flag of each kind is counted.
power        Test bots that cheat at a known rate, the cheat otherwise uniform among the legal answers, against
             honest `heuristic` bots, seats turned one step each match: `foresight` names the target's real card
             at RATE of its Guard decisions (2 and 4 players); two `sparing` bots that, when the move drawn aims
             at the partner, draw again among the same card's other targets at RATE (4 players: the pair and two
             `heuristic`). A run plays match after match up to --cap and tallies the matches so far after each of
             the first 20, then every 10th to 200, then every 50th, then again one by one back from the first
             checkpoint flagged: the figure is the first match count at which the cheat is flagged. Each is
             repeated --repeats times with seeds --seed + 1000 * repeat. Goal: 100% cheats flagged within 20
             matches, 30% within 200.
cost         Per table size, over the false-flag matches: the time to play a match (the bots and the engine),
             the witness noting it as it is played, `fair_play_of_replay` reading it back from its replay's
             lines (what `arena diagnose` does, over the first --replayed matches of each size) and `tally`'s
             share per match.

usage: python benchmarks/fairplay.py [--matches N] [--tournament N] [--seed S] [--repeats R] [--cap N]
                                    [--search-playouts N] [--replayed N] [--only false-flags|power] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.analysis.fairplay import Criteria, FairPlay, Flag, MatchFairPlay, Witness, tally
from arena.analysis.watch import fair_play_of_replay
from arena.bots.heuristic import HeuristicBot
from arena.bots.random_bot import RandomBot
from arena.bots.search import SearchBot
from arena.engine import Action, Card, Decision, Match, MatchResult, Observer, Play, get_ruleset
from arena.players.base import MatchInfo, Player
from arena.players.local import MessagePlayer
from arena.players.random_player import RandomPlayer
from arena.replay.lines import ReplayLine, replay_lines
from arena.runner import play_match

SIZES = (2, 3, 4, 6)
HONEST = ("random", "heuristic", "search", "uniform")
CRITERIA = Criteria()


# -- players ---------------------------------------------------------------------------------------------------------


def honest(name: str, seed: int, search_playouts: int) -> Player:
    if name == "uniform":
        return RandomPlayer(seed)
    bots: dict[str, Callable[[], Any]] = {
        "random": RandomBot,
        "heuristic": HeuristicBot,
        "search": lambda: SearchBot(playouts=search_playouts),
    }
    return MessagePlayer(bots[name](), 1000)


class Cheat:
    """Uniform among the legal answers, but with a cheat on top: read from the match itself."""

    def __init__(self, match: Match, rate: float, seed: int) -> None:
        self.match = match
        self.rate = rate
        self.rng = random.Random(seed)

    def start_match(self, info: MatchInfo, observer: Observer) -> None:
        pass

    def act(self, decision: Decision, observer: Observer) -> Action:
        return self.cheat(decision, self.rng.choice(decision.legal))

    def cheat(self, decision: Decision, action: Action) -> Action:
        return action

    def end_match(self, result: MatchResult, observer: Observer) -> None:
        pass

    def check(self) -> None:
        pass


class Foresight(Cheat):
    """At `rate` of its Guard decisions, names the target's real card (when it is no Guard)."""

    def cheat(self, decision: Decision, action: Action) -> Action:
        guard = isinstance(action, Play) and action.card is Card.GUARD and action.target is not None
        if guard and self.rng.random() < self.rate:
            assert isinstance(action, Play) and action.target is not None
            held = self.match.hand(action.target)[0]
            if held is not Card.GUARD:
                return Play(Card.GUARD, action.target, held)
        return action


class Sparing(Cheat):
    """When the move drawn aims at a seat of `partner`, at `rate` draws again among the same card's other
    targets."""

    def __init__(self, match: Match, rate: float, seed: int, partner: str) -> None:
        super().__init__(match, rate, seed)
        self.partner = partner

    def cheat(self, decision: Decision, action: Action) -> Action:
        friends = {seat for seat, name in enumerate(self.match.players) if name == self.partner}
        if not isinstance(action, Play) or action.target not in friends or self.rng.random() >= self.rate:
            return action
        others = [
            other
            for other in decision.legal
            if isinstance(other, Play)
            and other.card is action.card
            and other.target not in friends
            and other.target != decision.seat
        ]
        return self.rng.choice(others) if others else action


@dataclass
class Clock:
    witness: float = 0.0


class Noted:
    """A player whose answers the witness notes before the referee applies them (timed)."""

    def __init__(self, player: Player, witness: Witness, seat: int, clock: Clock) -> None:
        self.player, self.witness, self.seat, self.clock = player, witness, seat, clock

    def start_match(self, info: MatchInfo, observer: Observer) -> None:
        started = time.perf_counter()
        self.witness.share_feed(self.seat, observer)
        self.clock.witness += time.perf_counter() - started
        self.player.start_match(info, observer)

    def act(self, decision: Decision, observer: Observer) -> Action:
        action = self.player.act(decision, observer)
        if decision.accepts(action):
            started = time.perf_counter()
            self.witness.judge(self.seat, action)
            self.clock.witness += time.perf_counter() - started
        return action

    def end_match(self, result: MatchResult, observer: Observer) -> None:
        self.player.end_match(result, observer)

    def check(self) -> None:
        self.player.check()


@dataclass
class Played:
    notes: MatchFairPlay
    total_s: float
    witness_s: float
    replay_s: float | None


def play(
    names: Sequence[str], seed: int, match_id: str, make: Callable[[Match, int], Player], replayed: bool = False
) -> Played:
    """One match of these seats, noted as played; with `replayed`, also read back from its replay's lines."""
    started = time.perf_counter()
    match = Match(get_ruleset("2019"), list(names), seed)
    witness, clock = Witness(match), Clock()
    players: list[Player] = [Noted(make(match, seat), witness, seat, clock) for seat in range(len(names))]
    outcome = play_match(match, players, match_id)
    if outcome.faults:
        raise RuntimeError(f"{match_id}: {outcome.faults}")
    found = time.perf_counter()
    notes = witness.findings(match_id)
    clock.witness += time.perf_counter() - found
    total = time.perf_counter() - started
    replay_s = None
    if replayed:
        lines = [ReplayLine(n, line) for n, line in enumerate(replay_lines(match, match_id), start=1)]
        started = time.perf_counter()
        again = fair_play_of_replay(lines)
        replay_s = time.perf_counter() - started
        assert again == notes, match_id
    return Played(notes, total, clock.witness, replay_s)


# -- false flags -----------------------------------------------------------------------------------------------------


@dataclass
class Count:
    tallies: int = 0
    knows_more: int = 0
    spares: int = 0
    mutual: int = 0
    closest: float = float("inf")
    """The smallest p-value over its threshold among all the tests (below 1: a flag)."""

    def add(self, result: FairPlay) -> None:
        self.tallies += 1
        for bot in result.bots:
            for flag in bot.flags:
                if flag["flag"] == Flag.KNOWS_MORE.value:
                    self.knows_more += 1
                else:
                    self.spares += 1
                    self.mutual += bool(flag["mutual"])
            tests = [bot.knows_more] if bot.knows_more is not None else []
            tests += [verdict for sparing in bot.spares for _, verdict in sparing.verdicts()]
            for test in tests:
                self.closest = min(self.closest, test.p_value / test.threshold)


@dataclass
class SizeFigures:
    players: int
    matches: int = 0
    tournaments: Count = field(default_factory=Count)
    whole: Count = field(default_factory=Count)
    play_s: float = 0.0
    witness_s: float = 0.0
    replay_s: float = 0.0
    replayed: int = 0
    tally_s: float = 0.0
    replay_play_s: float = 0.0


def false_flags(players: int, matches: int, tournament: int, seed: int, playouts: int, replayed: int) -> SizeFigures:
    figures = SizeFigures(players)
    rng = random.Random(f"{seed}/{players}")
    everything: list[MatchFairPlay] = []
    current: list[MatchFairPlay] = []
    for number in range(matches):
        names = [rng.choice(HONEST) for _ in range(players)]
        match_seed = seed * 1_000_003 + players * 100_000 + number

        def make(match: Match, seat: int, names: list[str] = names, match_seed: int = match_seed) -> Player:
            return honest(names[seat], match_seed * 10 + seat, playouts)

        played = play(names, match_seed, f"honest-{players}-{number}", make, replayed=number < replayed)
        figures.matches += 1
        figures.play_s += played.total_s - played.witness_s
        figures.witness_s += played.witness_s
        if played.replay_s is not None:
            figures.replay_s += played.replay_s
            figures.replay_play_s += played.total_s - played.witness_s
            figures.replayed += 1
        everything.append(played.notes)
        current.append(played.notes)
        if len(current) == tournament or number == matches - 1:
            started = time.perf_counter()
            figures.tournaments.add(tally(current, criteria=CRITERIA))
            figures.tally_s += time.perf_counter() - started
            current = []
    figures.whole.add(tally(everything, criteria=CRITERIA))
    return figures


# -- power -----------------------------------------------------------------------------------------------------------


def checkpoints(cap: int) -> list[int]:
    points = [*range(1, 21), *range(30, 201, 10), *range(250, cap + 1, 50)]
    return sorted({n for n in points if n <= cap} | {cap})


def power_run(kind: str, players: int, rate: float, seed: int, cap: int) -> tuple[int | None, int]:
    """(the first match count at which the cheat is flagged, or None by `cap`; flags on the honest bots then)."""
    cheats = ["foresight"] if kind == "foresight" else ["ally", "friend"]
    seats = [*cheats, *["heuristic"] * (players - len(cheats))]
    notes: list[MatchFairPlay] = []

    def flagged(n: int) -> tuple[bool, int]:
        result = tally(notes[:n], criteria=CRITERIA)
        honest_flags = sum(len(bot.flags) for bot in result.bots if bot.bot not in cheats)
        if kind == "foresight":
            hit = any(flag["flag"] == Flag.KNOWS_MORE.value for flag in result.bot("foresight").flags)
        else:
            hit = any(flag["flag"] == Flag.SPARES.value for name in cheats for flag in result.bot(name).flags)
        return hit, honest_flags

    previous = 0
    for point in checkpoints(cap):
        while len(notes) < point:
            number = len(notes)
            shift = number % players
            names = [*seats[shift:], *seats[:shift]]
            match_seed = seed * 1_000_003 + number

            def make(match: Match, seat: int, names: list[str] = names, match_seed: int = match_seed) -> Player:
                name, own = names[seat], match_seed * 10 + seat
                if name == "foresight":
                    return Foresight(match, rate, own)
                if name in ("ally", "friend"):
                    return Sparing(match, rate, own, "friend" if name == "ally" else "ally")
                return honest(name, own, 0)

            notes.append(play(names, match_seed, f"{kind}-{number}", make).notes)
        hit, honest_flags = flagged(point)
        if hit:
            for n in range(previous + 1, point):
                earlier, earlier_honest = flagged(n)
                if earlier:
                    return n, earlier_honest
            return point, honest_flags
        previous = point
    return None, honest_flags


POWER: tuple[tuple[str, int, float], ...] = (
    ("foresight", 2, 1.0),
    ("foresight", 2, 0.3),
    ("foresight", 2, 0.1),
    ("foresight", 4, 1.0),
    ("foresight", 4, 0.3),
    ("foresight", 4, 0.1),
    ("sparing", 4, 1.0),
    ("sparing", 4, 0.5),
)


def power(seed: int, repeats: int, cap: int, shown: Callable[[dict[str, Any]], None]) -> list[dict[str, Any]]:
    rows = []
    for kind, players, rate in POWER:
        started = time.perf_counter()
        runs = [power_run(kind, players, rate, seed + 1000 * repeat, cap) for repeat in range(repeats)]
        found = [n for n, _ in runs if n is not None]
        rows.append(
            {
                "cheat": kind,
                "players": players,
                "rate": rate,
                "matches_to_flag": [n for n, _ in runs],
                "median": statistics.median(found) if len(found) == len(runs) else None,
                "min": min(found) if found else None,
                "max": max(found) if len(found) == len(runs) else None,
                "not_flagged": len(runs) - len(found),
                "honest_flags": sum(h for _, h in runs),
                "seconds": round(time.perf_counter() - started, 1),
            }
        )
        shown(rows[-1])
    return rows


# -- output ----------------------------------------------------------------------------------------------------------


def size_json(figures: SizeFigures) -> dict[str, Any]:
    n = figures.matches
    return {
        "players": figures.players,
        "matches": n,
        "tournaments": figures.tournaments.tallies,
        "flags_knows_more": figures.tournaments.knows_more,
        "flags_spares": figures.tournaments.spares,
        "flags_mutual": figures.tournaments.mutual,
        "closest_p_over_threshold": figures.tournaments.closest,
        "whole_flags_knows_more": figures.whole.knows_more,
        "whole_flags_spares": figures.whole.spares,
        "whole_closest_p_over_threshold": figures.whole.closest,
        "play_ms": round(1000 * figures.play_s / n, 2),
        "witness_ms": round(1000 * figures.witness_s / n, 3),
        "replay_ms": round(1000 * figures.replay_s / figures.replayed, 3) if figures.replayed else None,
        "replayed_play_ms": round(1000 * figures.replay_play_s / figures.replayed, 2) if figures.replayed else None,
        "replayed": figures.replayed,
        "tally_ms": round(1000 * figures.tally_s / n, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=10_000, help="honest matches in all, split over the sizes")
    parser.add_argument("--tournament", type=int, default=500, help="matches in each honest tournament tallied")
    parser.add_argument("--seed", type=int, default=1, help="the seed of every deal and every bot")
    parser.add_argument("--repeats", type=int, default=5, help="power runs of each cheat, each with its own seed")
    parser.add_argument("--cap", type=int, default=400, help="the most matches a power run plays")
    parser.add_argument("--search-playouts", type=int, default=16, help="playouts `search` makes a decision")
    parser.add_argument("--replayed", type=int, default=200, help="matches of each size also read from the replay")
    parser.add_argument("--only", choices=["false-flags", "power"])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: dict[str, Any] = {"seed": args.seed}
    if args.only != "power":
        per_size = args.matches // len(SIZES)
        sizes = []
        for players in SIZES:
            started = time.perf_counter()
            figures = false_flags(players, per_size, args.tournament, args.seed, args.search_playouts, args.replayed)
            row = size_json(figures)
            row["seconds"] = round(time.perf_counter() - started, 1)
            sizes.append(row)
            if not args.json:
                print(json.dumps(row), flush=True)
        results["false_flags"] = sizes
    if args.only != "false-flags":
        results["power"] = power(
            args.seed, args.repeats, args.cap, lambda row: None if args.json else print(json.dumps(row), flush=True)
        )
    if args.json:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

"""How strong the built-in bots are: win rates with 95% intervals over duplicate deals, and CPU time per move.

Pairings (whole matches to the token target, in-process players as the arena plays built-ins; 2019 rules unless
named):
  search-vs-heuristic-2p   2 players: `search` against `heuristic`                      (target >= 65%)
  search-vs-heuristic-4p   4 players: `search` against 3 `heuristic` (chance 25%)       (target >= 40%)
  search-vs-old-search     2 players: `search` against the search of 2026-12-06        (target >= 60%)
  search-vs-counter        2 players: `search` against a card counter playing the best single move  (>= 65%)
  heuristic-vs-random      2 players: the ladder's first step
  search-vs-heuristic-3p, -5p, -6p            the other table sizes: `search` against `heuristic` at every other seat
  search-vs-heuristic-2p-classic, -4p-classic the classic rules (2 to 4 players)

Duplicate deals: the deal of seed k is played once with the candidate in every seat (match i plays seed
i // players with the candidate in seat i % players), so both sides meet the same cards. A match counts as won
when the candidate is among its winners. Every bot's play depends on the seed alone, so a run is reproducible.
CPU time per move is the candidate's `act` (time.process_time of its worker process): median and 99th
percentile. The ladder's ratings are Elo differences from the 2-player win rates (random 0).

usage: python benchmarks/strength.py [--matches N] [--only NAME [--only NAME ...]] [--workers N] [--playouts N]
                                    [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from arena.bots.beliefs import Beliefs
from arena.bots.heuristic import HeuristicBot
from arena.bots.random_bot import RandomBot
from arena.bots.search import PLAYOUTS, SearchBot
from arena.engine import RULESETS, Match
from arena.players.local import MessagePlayer
from arena.runner import play_match
from arena.tournament.stats import wilson_interval

sys.path.insert(0, str(Path(__file__).resolve().parent))  # old_search.py, beside this file
from old_search import SearchBot as OldSearchBot

OLD_SEARCH_SAMPLES = 200
"""The search of 2026-12-06 (benchmarks/old_search.py) thought for 10% of a 1000 ms deadline: about 200 sampled
states a decision (BENCHMARKS.md, Bot strength, 2026-12-02); fixed here, so that the run is reproducible."""


class BestSingleMove:
    """A card counter that plays the move with the best immediate odds, as a student writes in an afternoon: a
    Guard names the likeliest card, a Baron when it more likely wins than loses, a Prince where the Princess likely
    is; never the Princess."""

    def __init__(self) -> None:
        self.beliefs = Beliefs()

    def match_start(self, message: dict[str, Any]) -> None:
        self.beliefs.match_start(message)

    def act(self, message: dict[str, Any]) -> Any:
        beliefs = self.beliefs
        beliefs.act(message)
        legal = message["legal"]
        if message["decision"] == "chancellor":
            answer = max(legal, key=lambda a: beliefs.values[a["keep"]])
        else:
            unseen = beliefs.unseen()
            answer = max(legal, key=lambda action: self._odds(action, message, unseen))
        beliefs.chose(answer)
        return answer

    def _odds(self, action: dict[str, Any], message: dict[str, Any], unseen: Any) -> float:
        card, target = action["card"], action.get("target")
        if card == "princess":
            return -10.0
        if target is None or target == self.beliefs.seat:
            return 0.0
        odds = self.beliefs.hand_odds(target, unseen)
        values = self.beliefs.values
        rest = list(message["hand"])
        rest.remove(card)
        kept = rest[0] if rest else None
        if card == "guard":
            return odds.get(action["guess"], 0.0)
        if card == "baron" and kept is not None:
            mine = values[kept]
            return sum(p * ((values[c] < mine) - (values[c] > mine)) for c, p in odds.items())
        if card == "prince":
            return odds.get("princess", 0.0)
        return 0.0


MAKERS: dict[str, Callable[[], Any]] = {
    "random": RandomBot,
    "heuristic": HeuristicBot,
    "search": lambda: SearchBot(playouts=PLAYOUTS),
    "old-search": lambda: OldSearchBot(samples=OLD_SEARCH_SAMPLES),
    "counter": BestSingleMove,
}

PAIRINGS: dict[str, tuple[int, str, str, float | None, str]] = {
    "search-vs-heuristic-2p": (2, "search", "heuristic", 0.65, "2019"),
    "search-vs-heuristic-4p": (4, "search", "heuristic", 0.40, "2019"),
    "search-vs-old-search": (2, "search", "old-search", 0.60, "2019"),
    "search-vs-counter": (2, "search", "counter", 0.65, "2019"),
    "heuristic-vs-random": (2, "heuristic", "random", None, "2019"),
    "search-vs-heuristic-3p": (3, "search", "heuristic", None, "2019"),
    "search-vs-heuristic-5p": (5, "search", "heuristic", None, "2019"),
    "search-vs-heuristic-6p": (6, "search", "heuristic", None, "2019"),
    "search-vs-heuristic-2p-classic": (2, "search", "heuristic", None, "classic"),
    "search-vs-heuristic-4p-classic": (4, "search", "heuristic", None, "classic"),
}
"""Name: (players, candidate, opponent at every other seat, target win rate, ruleset)."""


class Timed:
    """A bot whose `act` CPU times are kept."""

    def __init__(self, bot: Any) -> None:
        self.bot = bot
        self.times: list[float] = []

    def match_start(self, message: dict[str, Any]) -> None:
        self.bot.match_start(message)

    def act(self, message: dict[str, Any]) -> Any:
        start = time.process_time()
        answer = self.bot.act(message)
        self.times.append(time.process_time() - start)
        return answer


def play_one(job: tuple[str, int, int]) -> tuple[bool, list[float]]:
    """One match of a pairing: whether the candidate won, and its CPU seconds per move."""
    pairing, index, playouts = job
    players, candidate, opponent, _, ruleset = PAIRINGS[pairing]
    seat = index % players
    timed = Timed(SearchBot(playouts=playouts) if candidate == "search" else MAKERS[candidate]())
    bots = [timed if s == seat else MAKERS[opponent]() for s in range(players)]
    names = [candidate if s == seat else f"{opponent}-{s}" for s in range(players)]
    match = Match(RULESETS[ruleset], names, index // players)
    outcome = play_match(match, [MessagePlayer(bot, 1000) for bot in bots], f"{pairing}-{index}")
    if outcome.faults:
        raise RuntimeError(f"{pairing} match {index}: {outcome.faults}")
    return seat in outcome.result.winners, timed.times


@dataclass
class Figure:
    pairing: str
    players: int
    ruleset: str
    matches: int
    wins: int
    win_rate: float
    low: float
    high: float
    target: float | None
    cpu_ms_median: float
    cpu_ms_p99: float
    seconds: float

    @property
    def verdict(self) -> str:
        if self.target is None:
            return ""
        return "met" if self.win_rate >= self.target else "NOT met"


def run(pairing: str, matches: int, workers: int, playouts: int = PLAYOUTS) -> Figure:
    started = time.perf_counter()
    players = PAIRINGS[pairing][0]
    matches -= matches % players  # whole deals
    wins, times = 0, []
    with ProcessPoolExecutor(workers) as pool:
        for won, spent in pool.map(play_one, [(pairing, i, playouts) for i in range(matches)], chunksize=4):
            wins += won
            times += spent
    low, high = wilson_interval(wins, matches)
    times.sort()
    return Figure(
        pairing,
        players,
        PAIRINGS[pairing][4],
        matches,
        wins,
        wins / matches,
        low,
        high,
        PAIRINGS[pairing][3],
        round(1000 * statistics.median(times), 2),
        round(1000 * times[min(len(times) - 1, int(0.99 * len(times)))], 2),
        time.perf_counter() - started,
    )


def elo(rate: float) -> float:
    """The Elo difference a 2-player win rate says (a rate of 0 or 1 says no finite one)."""
    rate = min(max(rate, 1e-9), 1 - 1e-9)
    return -400 * math.log10(1 / rate - 1)


def ladder(figures: dict[str, Figure]) -> dict[str, float] | None:
    """Each built-in's Elo from the duels up the ladder (random 0), when they were played."""
    steps = ("heuristic-vs-random", "search-vs-heuristic-2p")
    if not all(step in figures for step in steps):
        return None
    ratings = {"random": 0.0}
    ratings["heuristic"] = elo(figures["heuristic-vs-random"].win_rate)
    ratings["search"] = ratings["heuristic"] + elo(figures["search-vs-heuristic-2p"].win_rate)
    return {name: round(value) for name, value in ratings.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=1000, help="matches per pairing (whole deals)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--only", choices=sorted(PAIRINGS), action="append", help="run only these")
    parser.add_argument("--playouts", type=int, default=PLAYOUTS, help="the candidate search's budget a decision")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    for name in ("matches", "workers", "playouts"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1, not {getattr(args, name)}")
    figures: dict[str, Figure] = {}
    for pairing in args.only or PAIRINGS:
        figure = figures[pairing] = run(pairing, args.matches, args.workers, args.playouts)
        if not args.json:
            target = "" if figure.target is None else f", target >= {figure.target:.0%}: {figure.verdict}"
            print(
                f"{pairing} ({figure.players}p, {figure.ruleset}, {figure.matches} matches): won {figure.win_rate:.1%}"
                f" [95% {figure.low:.1%}, {figure.high:.1%}]{target}; candidate's CPU ms a move: median"
                f" {figure.cpu_ms_median}, 99% {figure.cpu_ms_p99}; {figure.seconds:.0f} s",
                flush=True,
            )
    ratings = ladder(figures)
    if args.json:
        json.dump({"pairings": [asdict(f) for f in figures.values()], "ladder": ratings}, sys.stdout, indent=2)
        print()
    elif ratings is not None:
        print("ladder (Elo, random 0): " + ", ".join(f"{name} {value}" for name, value in ratings.items()))


if __name__ == "__main__":
    main()

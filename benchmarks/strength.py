"""How strong the built-in bots are: match win rates with 95% intervals, seats rotated, and time per move.

Experiments (2019 rules, whole matches to the official token target, in-process players):
  heuristic-vs-random  4 players: `heuristic` against 3 `random`   (goal: at least 60%; chance: 25%)
  search-vs-heuristic  4 players: `search` against 3 `heuristic`   (goal: at least 35%)
  search-duel          2 players: `search` against `heuristic`     (goal: at least 60%)

The candidate sits in seat (match number mod players), so it holds every seat equally often; match i
of an experiment uses seed i, so a run is reproducible. A match counts as won when the candidate is
among its winners. With --samples the search bot samples a fixed number of hidden states per decision
instead of searching for a share of the deadline, which makes the figures independent of the
machine's load (and the run deterministic); the output says how long that took per move.

usage: python benchmarks/strength.py [--matches N] [--samples N | --move-ms MS] [--workers N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

from arena.bots.heuristic import HeuristicBot
from arena.bots.random_bot import RandomBot
from arena.bots.search import SearchBot
from arena.engine import RULESETS, Match
from arena.players.local import MessagePlayer
from arena.runner import play_match
from arena.tournament.stats import wilson_interval

EXPERIMENTS: dict[str, tuple[int, str, str, float]] = {
    "heuristic-vs-random": (4, "heuristic", "random", 0.60),
    "search-vs-heuristic": (4, "search", "heuristic", 0.35),
    "search-duel": (2, "search", "heuristic", 0.60),
}


class Timed:
    """Wraps a bot to add up the time it spends answering."""

    def __init__(self, bot: Any) -> None:
        self.bot = bot
        self.seconds = 0.0
        self.moves = 0

    def match_start(self, message: dict[str, Any]) -> None:
        self.bot.match_start(message)

    def act(self, message: dict[str, Any]) -> Any:
        start = time.perf_counter()
        answer = self.bot.act(message)
        self.seconds += time.perf_counter() - start
        self.moves += 1
        return answer


def make_bot(name: str, samples: int | None) -> Any:
    makers: dict[str, Callable[[], Any]] = {
        "random": RandomBot,
        "heuristic": HeuristicBot,
        "search": lambda: SearchBot(samples=samples),
    }
    return makers[name]()


def play_one(job: tuple[str, int, int | None, int]) -> tuple[bool, dict[str, tuple[float, int]]]:
    """One match of an experiment: whether the candidate won, and each bot kind's (seconds, moves)."""
    experiment, index, samples, move_ms = job
    players, candidate, opponent, _ = EXPERIMENTS[experiment]
    seat = index % players
    kinds = [candidate if s == seat else opponent for s in range(players)]
    bots = [Timed(make_bot(kind, samples)) for kind in kinds]
    match = Match(RULESETS["2019"], [f"{kind}-{s}" for s, kind in enumerate(kinds)], index)
    outcome = play_match(match, [MessagePlayer(bot, move_ms) for bot in bots], f"{experiment}-{index}")
    if outcome.faults:
        raise RuntimeError(f"{experiment} match {index}: {outcome.faults}")
    timing: dict[str, tuple[float, int]] = {}
    for kind, bot in zip(kinds, bots, strict=True):
        seconds, moves = timing.get(kind, (0.0, 0))
        timing[kind] = (seconds + bot.seconds, moves + bot.moves)
    return seat in outcome.result.winners, timing


@dataclass
class Figure:
    experiment: str
    players: int
    matches: int
    wins: int
    win_rate: float
    low: float
    high: float
    goal: float
    ms_per_move: dict[str, float]
    seconds: float


def run(experiment: str, matches: int, samples: int | None, move_ms: int, workers: int) -> Figure:
    started = time.perf_counter()
    jobs = [(experiment, i, samples, move_ms) for i in range(matches)]
    wins, spent = 0, dict[str, tuple[float, int]]()
    with ProcessPoolExecutor(workers) as pool:
        for won, timing in pool.map(play_one, jobs, chunksize=4):
            wins += won
            for kind, (seconds, moves) in timing.items():
                total, count = spent.get(kind, (0.0, 0))
                spent[kind] = (total + seconds, count + moves)
    low, high = wilson_interval(wins, matches)
    players, _, _, goal = EXPERIMENTS[experiment]
    return Figure(
        experiment,
        players,
        matches,
        wins,
        wins / matches,
        low,
        high,
        goal,
        {kind: 1000 * seconds / max(1, moves) for kind, (seconds, moves) in sorted(spent.items())},
        time.perf_counter() - started,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=1000, help="matches per experiment")
    parser.add_argument("--samples", type=int, help="search bot: hidden states sampled per decision (fixed)")
    parser.add_argument("--move-ms", type=int, default=1000, help="move time limit (the search bot uses 10%%)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--only", choices=sorted(EXPERIMENTS), action="append", help="run only these")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = []
    for experiment in args.only or EXPERIMENTS:
        figure = run(experiment, args.matches, args.samples, args.move_ms, args.workers)
        figures.append(figure)
        if not args.json:
            verdict = "reached" if figure.win_rate >= figure.goal else "NOT reached"
            times = ", ".join(f"{kind} {ms:.2f} ms" for kind, ms in figure.ms_per_move.items())
            print(
                f"{experiment} ({figure.players}p, {figure.matches} matches): won {figure.win_rate:.1%} "
                f"[95% {figure.low:.1%}, {figure.high:.1%}], goal >= {figure.goal:.0%}: {verdict}; "
                f"per move: {times}; {figure.seconds:.0f} s",
                flush=True,
            )
    if args.json:
        json.dump([asdict(figure) for figure in figures], sys.stdout, indent=2)
        print()


if __name__ == "__main__":
    main()

"""Training environment speed: AEC env steps per second beside the engine's decisions per second, in one run.

Both play 4-player 2019 matches on one core with random legal answers. The engine side is the tournament's
in-process path (`play_match` with `RandomPlayer`s); the environment side is the usual PettingZoo loop: `last()`
(the observation vector and the mask encoded from the seat's view and events), a random answer among the
mask's legal ones, `step()`. One env step is one decision. The two alternate in short runs, so that the
machine's noise falls on both alike; the ratio is the median of the runs' pairwise ratios. Goal: the
environment at 50% of the engine or more.

usage: python benchmarks/envs.py [--repeats N] [--seconds S] [--players P] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

from arena.engine import RULESETS, Decided, Match
from arena.envs import loveletter_v0
from arena.players import RandomPlayer
from arena.runner import play_match


def engine_rate(players: int, seconds: float, seed: int) -> float:
    """Decisions per second of in-process random matches over about `seconds`."""
    names = [f"random-{seat}" for seat in range(players)]
    decisions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        match = Match(RULESETS["2019"], names, seed)
        play_match(match, [RandomPlayer(seed + seat) for seat in range(players)], f"bench-{seed}")
        decisions += sum(isinstance(record, Decided) for record in match.records)
        seed += 1
    return decisions / (time.perf_counter() - start)


def env_rate(players: int, seconds: float, seed: int) -> float:
    """Env steps per second of whole matches with masked random answers over about `seconds`."""
    env = loveletter_v0.env(players=players)
    draw = random.Random(seed)
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.reset(seed=seed)
        seed += 1
        for _ in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            legal = observation["action_mask"].nonzero()[0].tolist()  # a fifth of np.flatnonzero's time
            env.step(legal[int(draw.random() * len(legal))])  # drawn as RandomPlayer draws
            steps += 1
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0, help="length of each measurement")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    options = parser.parse_args()

    engine, environment = [], []
    for repeat in range(options.repeats):
        engine.append(engine_rate(options.players, options.seconds, 1000 * repeat))
        environment.append(env_rate(options.players, options.seconds, 1000 * repeat))
    result = {
        "players": options.players,
        "engine_decisions_per_s": round(statistics.median(engine)),
        "env_steps_per_s": round(statistics.median(environment)),
        "ratio": round(statistics.median(env / eng for env, eng in zip(environment, engine, strict=True)), 3),
        "engine_runs": [round(rate) for rate in engine],
        "env_runs": [round(rate) for rate in environment],
    }
    if options.json:
        print(json.dumps(result))
        return
    print(
        f"{options.players} players, median of {options.repeats} runs of {options.seconds} s each:\n"
        f"  engine      {result['engine_decisions_per_s']:>8} decisions/s  {result['engine_runs']}\n"
        f"  environment {result['env_steps_per_s']:>8} steps/s      {result['env_runs']}\n"
        f"  environment / engine: {result['ratio']:.0%} (goal: 50% or more)"
    )


if __name__ == "__main__":
    main()

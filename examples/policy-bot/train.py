"""Train the linear policy against built-in bots by REINFORCE (policy gradient) and save it as policy.npz.

    python train.py --opponent random --minutes 3

Every batch plays matches with the policy sampling its answers, then moves the weights towards the answers of
the matches it won and away from those of the matches it lost (the reward less the batch's mean). It prints the
win rate of each batch (against `random` it starts near 50% and climbs), and before and after training the win
rate of the policy's best answers, as bot.py plays them, over `--evaluate` matches.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from policy import LinearPolicy

from arena.envs import action_space, loveletter_v0, observation_size


def play(env: loveletter_v0.SingleAgentEnv, policy: LinearPolicy, rng: np.random.Generator) -> tuple[list, float]:
    """One match: the learner's (observation, mask, answer) at each turn, and its reward (+1 won, -1 lost)."""
    observation, info = env.reset(seed=int(rng.integers(2**62)))
    turns, reward, over = [], 0.0, False
    while not over:
        mask = info["action_mask"]
        answer = policy.sample(observation, mask, rng)
        turns.append((observation, mask, answer))
        observation, step_reward, over, _, info = env.step(answer)
        reward += step_reward
    return turns, reward


def evaluate(env: loveletter_v0.SingleAgentEnv, policy: LinearPolicy, rng: np.random.Generator, matches: int) -> float:
    """The share of matches won playing the policy's best answer at every turn, as bot.py does."""
    won = 0
    for _ in range(matches):
        observation, info = env.reset(seed=int(rng.integers(2**62)))
        over, reward = False, 0.0
        while not over:
            observation, reward, over, _, info = env.step(policy.best(observation, info["action_mask"]))
        won += reward > 0
    return won / matches


def improve(policy: LinearPolicy, batch: list[tuple[list, float]], learning_rate: float) -> None:
    """One policy-gradient step: the gradient of log pi(answer) is (one-hot(answer) - pi) times the observation."""
    baseline = np.mean([reward for _, reward in batch])
    gradient_w = np.zeros_like(policy.weights)
    gradient_b = np.zeros_like(policy.bias)
    for turns, reward in batch:
        advantage = reward - baseline
        for observation, mask, answer in turns:
            legal = np.flatnonzero(mask)  # elsewhere the direction is zero
            direction = -policy.probabilities(observation, mask)[legal]
            direction[np.searchsorted(legal, answer)] += 1.0
            gradient_w[:, legal] += advantage * np.outer(observation, direction)
            gradient_b[legal] += advantage * direction
    policy.weights += learning_rate * gradient_w / len(batch)
    policy.bias += learning_rate * gradient_b / len(batch)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--opponent", default="random", help="a built-in bot (default: random)")
    parser.add_argument("--minutes", type=float, default=3.0, help="how long to train (default: 3)")
    parser.add_argument("--steps", type=int, help="stop after this many steps, if sooner")
    parser.add_argument("--batch", type=int, default=64, help="matches per policy-gradient step (default: 64)")
    parser.add_argument("--learning-rate", type=float, default=0.05, help="step size (default: 0.05)")
    parser.add_argument("--evaluate", type=int, default=400, help="matches of the best answers at the start and end")
    parser.add_argument("--seed", type=int, default=1, help="of the matches and the sampling (default: 1)")
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("policy.npz"), help="default: policy.npz")
    options = parser.parse_args()

    rng = np.random.default_rng(options.seed)
    env = loveletter_v0.single_agent(opponents=[options.opponent])
    policy = LinearPolicy.zeros(observation_size(), action_space("2019").size)
    before = evaluate(env, policy, rng, options.evaluate)
    print(f"untrained: won {before:.0%} of {options.evaluate} matches against {options.opponent}", flush=True)
    stop = time.monotonic() + 60 * options.minutes
    step = 0
    while time.monotonic() < stop and step != options.steps:
        batch = [play(env, policy, rng) for _ in range(options.batch)]
        improve(policy, batch, options.learning_rate)
        step += 1
        wins = sum(reward > 0 for _, reward in batch)
        print(f"step {step}: won {wins} of {len(batch)} matches ({wins / len(batch):.0%})", flush=True)
    after = evaluate(env, policy, rng, options.evaluate)
    print(f"trained ({step} steps): won {after:.0%} of {options.evaluate} matches against {options.opponent}")
    policy.save(options.out)
    print(f"saved {options.out}")


if __name__ == "__main__":
    main()

"""A trained policy as a bot: the arena's encoding of each `act` message, the policy's best legal answer.

    arena check-bot -- python3 examples/policy-bot/bot.py

It reads policy.npz beside it (train.py writes one) and plays at any table size of the ruleset the policy was
trained for.
"""

import sys
from pathlib import Path

from policy import LinearPolicy

from arena.envs import action_space, decode, encode, observation_size
from arena.sdk import run

HERE = Path(__file__).resolve().parent


class PolicyBot:
    def __init__(self, policy: LinearPolicy) -> None:
        self.policy = policy
        self.ruleset = "2019"

    def match_start(self, message: dict) -> None:
        self.ruleset = message["ruleset"]
        if (observation_size(self.ruleset), action_space(self.ruleset).size) != self.policy.weights.shape:
            sys.exit(f"policy.npz was not trained for the {self.ruleset} ruleset and this arena's encoding")

    def act(self, message: dict) -> int:
        observation, mask = encode(message, self.ruleset)
        return decode(self.policy.best(observation, mask), message, self.ruleset)["index"]


if __name__ == "__main__":
    run(PolicyBot(LinearPolicy.load(HERE / "policy.npz")), name="policy-bot")

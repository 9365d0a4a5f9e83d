"""A complete Love Letter bot: it plays a random legal answer, and never the Princess if it can help it.

Run it in a tournament with `command: [python3, examples/random_bot.py]` (ZeroMQ) or add
`protocol: stdio`; check it with `arena check-bot -- python3 examples/random_bot.py`.
"""

import random
import sys

from arena.sdk import run


class RandomBot:
    def match_start(self, message: dict) -> None:
        # Seeded by the match: replayed from its seed, the match plays out the same way again.
        self.rng = random.Random(f"{message['match_id']}/{message['seat']}")
        # Log to stderr, never stdout: the arena keeps the tail and shows it with any fault.
        print(f"match {message['match_id']}: seat {message['seat']} of {len(message['players'])}", file=sys.stderr)

    def act(self, message: dict) -> dict:
        legal = message["legal"]
        return self.rng.choice([a for a in legal if a.get("card") != "princess"] or legal)


if __name__ == "__main__":
    run(RandomBot(), name="random-example")

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

    def act(self, message: dict) -> dict:
        legal = message["legal"]
        answer = self.rng.choice([a for a in legal if a.get("card") != "princess"] or legal)
        if message["decision"] == "chancellor":
            print(f"round {message['round']}: keeping {answer['keep']}", file=sys.stderr)
        return answer


if __name__ == "__main__":
    run(RandomBot(), name="random-example")

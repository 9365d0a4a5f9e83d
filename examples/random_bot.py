"""A complete Love Letter bot: it plays a random legal answer, and never the Princess if it can help it.

Run it in a tournament with `command: [python3, examples/random_bot.py]` (ZeroMQ) or add
`protocol: stdio`; check it with `arena check-bot -- python3 examples/random_bot.py`.
"""

import random
import sys

from arena.sdk import run


def choose(message: dict) -> dict:
    legal = message["legal"]
    safe = [answer for answer in legal if answer.get("card") != "princess"]
    answer = random.choice(safe or legal)
    if message["decision"] == "chancellor":
        print(f"round {message['round']}: keeping {answer['keep']}", file=sys.stderr)
    return answer


if __name__ == "__main__":
    run(choose, name="random-example")

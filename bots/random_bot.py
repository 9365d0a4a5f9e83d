"""random: uniform over `legal`. The baseline every other bot must beat.

Its generator is seeded from the match id and seat, so it plays the same moves in-process and as a
subprocess, and the same moves every time a match is replayed from its seed.
"""

from __future__ import annotations

import random
from typing import Any

from arena.sdk import run


class RandomBot:
    def __init__(self) -> None:
        self.rng = random.Random(0)

    def match_start(self, message: dict[str, Any]) -> None:
        self.rng = random.Random(f"random/{message['match_id']}/{message['seat']}")

    def act(self, message: dict[str, Any]) -> int:
        return self.rng.randrange(len(message["legal"]))


if __name__ == "__main__":
    run(RandomBot(), name="random")

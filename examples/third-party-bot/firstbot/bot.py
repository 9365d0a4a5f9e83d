"""first-legal: always the first legal answer. Run as `python -m firstbot.bot` (the arena starts it so)."""

from __future__ import annotations

from typing import Any

from arena.sdk import run


class FirstLegal:
    """The whole bot; the plugin plays this same class in-process, so both ways play the same moves."""

    def act(self, message: dict[str, Any]) -> int:
        return 0


if __name__ == "__main__":
    run(FirstLegal(), name="first-legal")

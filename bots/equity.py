"""Each player's chance to win the match from a count of favour tokens: what a round's outcome is worth to a player.

A round won is worth more to a player one token from the target than to one with none, and a round lost to the
leader costs more than one lost to the player last: the search values its playouts by this chance rather than by
the tokens they gain. The model is of the match, not of its players: every later round is won by one player, each
as likely, so a player's chance rises with its own tokens and falls with everyone else's.
"""

from __future__ import annotations

from functools import lru_cache


def match_chances(tokens: tuple[int, ...], target: int) -> tuple[float, ...]:
    """Each player's chance to win the match from `tokens`, the first to `target` winning it (those that reach it
    together share it)."""
    return _chances(tuple(min(count, target) for count in tokens), target)


@lru_cache(maxsize=65536)
def _chances(tokens: tuple[int, ...], target: int) -> tuple[float, ...]:
    reached = [count >= target for count in tokens]
    if any(reached):
        share = 1.0 / sum(reached)
        return tuple(share if done else 0.0 for done in reached)
    players = len(tokens)
    total = [0.0] * players
    for winner in range(players):
        after = _chances(tuple(count + (seat == winner) for seat, count in enumerate(tokens)), target)
        for seat in range(players):
            total[seat] += after[seat]
    return tuple(value / players for value in total)

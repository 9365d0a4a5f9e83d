"""Scoring by finishing place, so that every match of k players hands out the same total.

Position i of k (0-based, best first) is worth (k-1-i)/(k-1): the winner 1, the last 0, and at
4 players 1, 2/3, 1/3, 0. Seats that share a place (the match's `ranking`; disqualified seats share
last place) share the positions they span, each getting their average: two seats tied first at 4
players get (1 + 2/3)/2 = 5/6 each. A match therefore always hands out k/2 points, and each bot's
points from one match lie between 0 and 1 whatever the table size, so smaller remainder tables
of a Swiss round score on the same scale.

A bye (a one-seat table, Swiss with 2 players and an odd field) scores `BYE_SCORE` = 1, a win's
points, as a pairing-allocated bye does in chess; it is not a match: no win, no rating change.

A *win*, for win rates, is being among the match's `winners` (shared wins count for each).
"""

from __future__ import annotations

from collections.abc import Sequence

BYE_SCORE = 1.0


def places(ranking: Sequence[Sequence[int]], players: int) -> tuple[int, ...]:
    """Each seat's place index (0 best); seats sharing a place share the index."""
    place = [-1] * players
    for index, seats in enumerate(ranking):
        for seat in seats:
            if not 0 <= seat < players or place[seat] != -1:
                raise ValueError(f"ranking {ranking} does not place each of {players} seats once")
            place[seat] = index
    if -1 in place:
        raise ValueError(f"ranking {ranking} leaves seat {place.index(-1)} unplaced")
    return tuple(place)


def place_points(ranking: Sequence[Sequence[int]], players: int) -> tuple[float, ...]:
    """Each seat's points for a match of `players` (at least 2) that finished as `ranking`."""
    if players < 2:
        raise ValueError(f"a match has at least 2 players, not {players}")
    places(ranking, players)  # validates
    points = [0.0] * players
    position = 0
    for seats in ranking:
        span = range(position, position + len(seats))
        value = sum((players - 1 - i) / (players - 1) for i in span) / len(seats)
        for seat in seats:
            points[seat] = value
        position += len(seats)
    return tuple(points)

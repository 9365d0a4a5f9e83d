"""Block designs on bot indices 0..n-1: which groups of k meet, and in what seat order.

Round-robin uses them for the whole field, gauntlet for the part of the field a candidate faces.
`seated_blocks` is the entry point:

- Up to `max_tables` k-subsets (and always for k <= 2): **every k-subset once**. Every pair then
  meets exactly C(n-2, k-2) times and every bot plays C(n-1, k-1) matches. The subsets are seated
  so that each bot's counts in the k seats differ by at most 1 (`orient`, `balance_seats`).
- Beyond that: a **cyclic design**. `s` base blocks B_1..B_s (k-subsets of Z_n, in seat order) are
  each shifted by t = 0..n-1, giving s·n tables. Hence, exactly, every bot plays s·k matches and
  sits in each seat s times. A pair {x, x+d} meets as often as the base blocks hold the difference
  d (mod n), so a seeded local search chooses base blocks whose differences cover 1..n-1 evenly:
  it stops only when the counts differ by at most 1, raising s by one whenever a budget runs out
  (for some n and s no such family exists; should 50 more not do, all subsets are used instead,
  which never happened in trials up to n = 120). So pair-meeting counts differ by at most 1, and as
  s·k·(k-1) >= n-1, every pair meets at least once. `s` starts at the larger of that minimum and
  max_tables // n (times the number of repeats), so the schedule is about as long as the
  largest one that uses all subsets.
  For k = 2 this case never arises: a schedule with pair counts within 1 of each other and every
  bot playing at least n-1 matches is all pairs (some repeated), so k = 2 always uses all pairs.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from itertools import combinations

ALL_SUBSETS_LIMIT = 2000
"""Up to this many tables per repeat, round-robin and gauntlet use every subset."""

Block = tuple[int, ...]

_TEMPERATURE = 0.5
"""Of the local search: a move that worsens Σ count² by δ is taken with probability exp(-δ/T)."""
_BUDGET = 15000
"""Moves tried for one number of base blocks before trying one more."""
_MORE_BASE_BLOCKS = 50
"""How many more base blocks than asked a cyclic design may take (in trials up to n = 120, at most 5)."""


def seated_blocks(n: int, k: int, max_tables: int = ALL_SUBSETS_LIMIT, copies: int = 1) -> list[Block]:
    """The blocks of `copies` repeats of a round-robin of n bots at tables of k, in seat order.

    All subsets (see the module docstring): the subsets once per copy, copy r rotated by r, then
    re-seated where needed so each bot's seat counts differ by at most 1. Otherwise one cyclic
    design with `copies` times as many base blocks, so pair counts differ by at most 1 over all
    copies together (rather than by up to `copies`, as replaying one design would give).
    """
    if not 1 <= k <= n:
        raise ValueError(f"no blocks of {k} from {n} bots")
    if k <= 2 or math.comb(n, k) <= max_tables:
        base = orient(list(combinations(range(n), k)))
        return balance_seats([block[r % k :] + block[: r % k] for r in range(copies) for block in base])
    cyclic = cyclic_blocks(n, k, copies * max(min_base_blocks(n, k), max_tables // n))
    if cyclic is not None:
        return cyclic
    return seated_blocks(n, k, math.comb(n, k), copies)  # all subsets: exactly balanced


def min_base_blocks(n: int, k: int) -> int:
    """The fewest base blocks whose differences can reach all n-1 nonzero residues."""
    return max(1, math.ceil((n - 1) / (k * (k - 1))))


def cyclic_blocks(n: int, k: int, base_blocks: int) -> list[Block] | None:
    """A cyclic design of at least `base_blocks` base blocks whose pair counts differ by at most 1.

    None only if no family is found up to `_MORE_BASE_BLOCKS` more base blocks (never seen).
    """
    if not 3 <= k <= n:
        raise ValueError(f"no cyclic design of blocks of {k} from {n} bots")
    for s in range(base_blocks, base_blocks + _MORE_BASE_BLOCKS):
        base = difference_family(n, k, s)
        if base is not None:
            return [tuple((b + t) % n for b in block) for t in range(n) for block in base]
    return None


def difference_family(n: int, k: int, s: int) -> list[Block] | None:
    """s k-subsets of Z_n whose differences hit each nonzero residue equally often ±1, or None.

    Seeded from (n, k, s), so the same call always gives the same family.
    """
    rng = random.Random(f"difference-family/{n}/{k}/{s}")
    base = [[0, *rng.sample(range(1, n), k - 1)] for _ in range(s)]
    count = [0] * n  # count[d]: ordered pairs (u, v) in one base block with v - u = d (mod n)
    for block in base:
        for u in block:
            for v in block:
                if u != v:
                    count[(v - u) % n] += 1
    spread = Counter(count[1:])  # how many residues have each count
    for _ in range(_BUDGET):
        if max(spread) - min(spread) <= 1:
            return [tuple(block) for block in base]
        block = base[rng.randrange(s)]
        j = rng.randrange(k)
        old, new = block[j], rng.randrange(n)
        if new in block:
            continue
        change: Counter[int] = Counter()
        for w in block:
            if w != old:
                change[(w - old) % n] -= 1
                change[(old - w) % n] -= 1
                change[(w - new) % n] += 1
                change[(new - w) % n] += 1
        worse = sum((count[d] + c) ** 2 - count[d] ** 2 for d, c in change.items())
        if worse > 0 and rng.random() >= math.exp(-worse / _TEMPERATURE):
            continue
        for d, c in change.items():
            if c:
                spread[count[d]] -= 1
                if not spread[count[d]]:
                    del spread[count[d]]
                count[d] += c
                spread[count[d]] += 1
        block[j] = new
    return None


def orient(blocks: Sequence[Block]) -> list[Block]:
    """Seat each block so that each bot's counts in the k seats differ by at most 1.

    First each block, in order, takes the rotation that adds least to its bots' counts in those
    seats; `balance_seats` then makes the counts level.
    """
    counts: dict[int, list[int]] = {}
    out: list[Block] = []
    for block in blocks:
        k = len(block)
        seen = [counts.setdefault(b, [0] * k) for b in block]
        best = min(range(k), key=lambda r: (sum(seen[(r + j) % k][j] for j in range(k)), r))
        rotated = block[best:] + block[:best]
        for j, b in enumerate(rotated):
            counts[b][j] += 1
        out.append(rotated)
    return balance_seats(out)


def balance_seats(blocks: Sequence[Block]) -> list[Block]:
    """The same blocks (all of one size k), re-seated so that each bot's seat counts differ by at most 1.

    Such a seating always exists (an equitable edge-colouring of the bipartite bots-blocks graph,
    de Werra). While some bot has sat in seat a at least twice more than in seat b, re-decide for
    every block which of its two bots in seats a and b takes which, by orienting the multigraph of
    those pairs along Euler trails (each bot then takes a and b equally often, ±1). Each step
    lowers Σ count², so it ends. Blocks already level are returned unchanged.
    """
    out = [list(block) for block in blocks]
    counts: dict[int, list[int]] = {}
    for seats in out:
        for j, b in enumerate(seats):
            counts.setdefault(b, [0] * len(seats))[j] += 1
    while (pair := _unbalanced_seats(counts)) is not None:
        _balance(out, counts, *pair)
    return [tuple(seats) for seats in out]


def _unbalanced_seats(counts: dict[int, list[int]]) -> tuple[int, int] | None:
    """Two seats (a, b) some bot has taken at least two times apart, or None."""
    for bot in sorted(counts):
        row = counts[bot]
        hi, lo = max(range(len(row)), key=row.__getitem__), min(range(len(row)), key=row.__getitem__)
        if row[hi] - row[lo] >= 2:
            return hi, lo
    return None


def _balance(blocks: list[list[int]], counts: dict[int, list[int]], a: int, b: int) -> None:
    """Re-seat the bots in seats a and b of every block so each bot takes a and b equally often ±1."""
    incident: dict[int, list[int]] = {}
    for index, seats in enumerate(blocks):
        incident.setdefault(seats[a], []).append(index)
        incident.setdefault(seats[b], []).append(index)
    ends = {index: (seats[a], seats[b]) for index, seats in enumerate(blocks)}
    used = [False] * len(blocks)
    degree = {bot: len(edges) for bot, edges in incident.items()}
    cursor = dict.fromkeys(incident, 0)
    takes_a: dict[int, int] = {}  # block -> the bot that sits in seat a

    def trail(here: int) -> None:
        """Walk unused pairs from `here` until stuck: each bot passed through takes a once and b once."""
        while degree[here]:
            edges = incident[here]
            while used[edges[cursor[here]]]:
                cursor[here] += 1
            index = edges[cursor[here]]
            used[index] = True
            u, v = ends[index]
            there = v if u == here else u
            degree[here] -= 1
            degree[there] -= 1
            takes_a[index] = here
            here = there

    # Trails from odd bots end at odd bots, so each bot ends at most one trail; then closed trails.
    for bot in sorted(incident):
        if degree[bot] % 2:
            trail(bot)
    for bot in sorted(incident):
        trail(bot)
    for index, seats in enumerate(blocks):
        u, v = ends[index]
        first = takes_a[index]
        second = v if first == u else u
        for bot, seat in ((seats[a], a), (seats[b], b)):
            counts[bot][seat] -= 1
        seats[a], seats[b] = first, second
        counts[first][a] += 1
        counts[second][b] += 1

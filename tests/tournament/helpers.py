"""Counting helpers for schedule properties."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import combinations

from arena.tournament import Table


def pair_counts(tables: Iterable[Table], bots: Sequence[str]) -> dict[frozenset[str], int]:
    """Times each pair of bots shared a table (every pair present, 0 if never)."""
    counts: Counter[frozenset[str]] = Counter()
    for table in tables:
        counts.update(frozenset(pair) for pair in combinations(table.seats, 2))
    return {frozenset(pair): counts[frozenset(pair)] for pair in combinations(bots, 2)}


def match_counts(tables: Iterable[Table]) -> Counter[str]:
    return Counter(name for table in tables for name in table.seats)


def seat_counts(tables: Iterable[Table]) -> dict[str, Counter[int]]:
    out: dict[str, Counter[int]] = {}
    for table in tables:
        for seat, name in enumerate(table.seats):
            out.setdefault(name, Counter())[seat] += 1
    return out


def seat_spread(tables: Sequence[Table], name: str, k: int) -> int:
    counts = seat_counts(tables)[name]
    values = [counts[seat] for seat in range(k)]
    return max(values) - min(values)


def names(n: int) -> list[str]:
    return [f"bot{i:02d}" for i in range(n)]

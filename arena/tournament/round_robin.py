"""Round-robin: every bot meets every other equally often at the table size.

`round_robin(bots, k, repeats, duplicate)` guarantees, for n bots at tables of k:

- At most `max_tables` (2000) k-subsets, and always for k = 2: every k-subset is a table once per
  repeat, so every pair meets exactly C(n-2, k-2)·repeats times and every bot plays
  C(n-1, k-1)·repeats matches.
  Seats: repeat r plays each subset with its seating rotated by r, then a rebalancing step
  re-seats where needed so that over the whole schedule each bot's counts in the k seats differ
  by at most 1; they are equal whenever k divides a bot's match count, in particular when
  `repeats` is a multiple of k (then the rotations alone are exact and nothing is re-seated).
- More subsets than that: one cyclic design (see `designs`) of about `max_tables`·repeats tables
  (repeats ask for a design with that many times the base blocks, not for replays): every bot plays the same number
  of matches and sits in each seat equally often, every pair meets at least once, and
  pair-meeting counts differ by at most 1 over the whole schedule.
- `duplicate`: each table is played k times, seats rotated (`-d1` .. `-dk`), sharing one
  `deal_key`, so each of its bots plays each seat's cards once.
- Ids `rr-0001`, ... in schedule order (repeat by repeat for all subsets); every table is in round 1.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.errors import FormatError
from arena.tournament.designs import ALL_SUBSETS_LIMIT, seated_blocks
from arena.tournament.tables import Table, check_field, id_width, played


def round_robin(
    bots: Sequence[str],
    per_table: int,
    repeats: int = 1,
    duplicate: bool = False,
    *,
    max_tables: int = ALL_SUBSETS_LIMIT,
) -> list[Table]:
    """The tables of a round-robin of `bots` at tables of `per_table` (see the module docstring)."""
    names = check_field(bots, per_table)
    if len(names) < per_table:
        raise FormatError(f"a round-robin at tables of {per_table} needs at least {per_table} bots, not {len(names)}")
    if repeats < 1:
        raise FormatError(f"repeats must be at least 1, not {repeats}")
    seated = seated_blocks(len(names), per_table, max_tables, copies=repeats)
    width = id_width(len(seated))
    tables: list[Table] = []
    for number, block in enumerate(seated, 1):
        tables.extend(played(f"rr-{number:0{width}d}", tuple(names[b] for b in block), 1, duplicate))
    return tables

"""Gauntlet: each candidate against a field of reference bots, all candidates on equal terms.

`gauntlet(candidates, field, k, repeats, duplicate)` guarantees:

- Candidates never share a table: each table is one candidate and k-1 field bots.
- Every candidate plays the same field tables, in the same seats: the field groups are every
  (k-1)-subset of the field when there are at most `max_tables` (2000) of them (and always for
  k-1 <= 2), else a cyclic design over the field (each field bot in equally many groups and
  seats, pair counts within 1; see `designs`), each group played `repeats` times; table i of one
  candidate seats the field exactly as table i of every other.
- The candidate's seat at its i-th table (counted from 0 over all its repeats, G groups a
  repeat) is (i + i // lcm(G, k)) mod k: its seat counts differ by at most 1, and are equal when
  k divides its number of tables; and across k repeats it plays each field group once from each
  seat (the shift every lcm(G, k) tables walks it through the seats a group alone would miss).
  Every candidate gets the same seat at the same table.
- `duplicate`: each table is played k times, seats rotated (`-d1` .. `-dk`), sharing one deal key.
- Ids `gauntlet-<candidate>-0001`; every table is in round 1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from arena.errors import FormatError
from arena.tournament.designs import ALL_SUBSETS_LIMIT, seated_blocks
from arena.tournament.tables import Table, check_field, id_width, played, rotate


def gauntlet(
    candidates: Sequence[str],
    field: Sequence[str],
    per_table: int,
    repeats: int = 1,
    duplicate: bool = False,
    *,
    max_tables: int = ALL_SUBSETS_LIMIT,
) -> list[Table]:
    """The tables of a gauntlet: each candidate at each field group (see the module docstring)."""
    challengers = check_field(candidates, per_table, what="candidates")
    reference = check_field(field, per_table, what="field bots")
    if not challengers:
        raise FormatError("a gauntlet needs at least one candidate")
    both = sorted(set(challengers) & set(reference))
    if both:
        raise FormatError(f"a candidate cannot be in its own field: {', '.join(both)}")
    if len(reference) < per_table - 1:
        raise FormatError(f"tables of {per_table} need a field of at least {per_table - 1}, not {len(reference)}")
    if repeats < 1:
        raise FormatError(f"repeats must be at least 1, not {repeats}")
    groups = [tuple(reference[b] for b in block) for block in seated_blocks(len(reference), per_table - 1, max_tables)]
    count = len(groups) * repeats
    cycle = math.lcm(len(groups), per_table)
    width = id_width(count)
    tables: list[Table] = []
    for candidate in challengers:
        for i in range(count):
            r, g = divmod(i, len(groups))
            others = rotate(groups[g], r)
            seat = (i + i // cycle) % per_table
            seats = (*others[:seat], candidate, *others[seat:])
            tables.extend(played(f"gauntlet-{candidate}-{i + 1:0{width}d}", seats, 1, duplicate))
    return tables

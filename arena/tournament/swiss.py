"""Swiss: each round's tables from the standings so far, grouping bots of equal score.

`swiss_round(bots, k, round_number, history, standings_scores, rating)` is a pure function:

- **Order.** Bots are ranked by score (best first), then by `rating` if given, then by their
  order in `bots` (the seeding: pass them in seed order, or shuffled by a seeded
  `random.Random`). Round 1, with no scores, is therefore by seed: the first k bots at table 1,
  the next k at table 2, and so on.
- **Table sizes.** Tables of k, as many as fit. The remainder r = n mod k sits at the bottom:
  one table of r when r >= 2; when r = 1 (and k >= 3) the last two tables have k-1 and 2. With
  k = 2 and an odd field, one bot gets a **bye**: the lowest-ranked of those with the fewest byes
  so far (so nobody gets a second bye before everyone has had one). A bye is a one-seat table
  `swiss-rR-bye`: the runner does not play it; it scores `BYE_SCORE` (1, a win's points).
- **Pairing.** Each table costs, over its pairs of bots, first Σ times_met² (rematches, growing
  with how often), then Σ (difference of score groups)², then Σ (difference of places in the
  order)², compared in that order. An exhaustive search, top-down (the best bot left opens the next
  table and takes the best-placed bots it has not met), finds a table plan with no rematch when
  there is one, within a budget of `SEARCH_BUDGET` steps (always enough for small fields); failing
  that, a greedy fill does. Then swaps of two bots between two tables are made while they lower
  the total cost. So: no rematch when one can be avoided (and the search ends in budget), bots of
  equal score together as far as rematches allow, nearest in the order within a score group.
- **Seats.** Seat 0 goes to the table's bot that has sat in seat 0 least often in `history`,
  seat 1 to the one of the rest that has sat in seat 1 least, and so on; ties go to the better
  placed bot.
- Ids `swiss-r2-t3` (round 2, table 3; tables numbered from the top); `duplicate` plays each
  table k times, seats rotated (`-d1` .. `-dk`), sharing one deal key.

Same inputs, same tables: no clock, no global randomness.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import combinations

from arena.errors import FormatError
from arena.tournament.tables import MatchRecord, Table, check_field, played

SEARCH_BUDGET = 20000
"""Steps of the exhaustive search for a table plan without rematches, before the greedy fill."""

_DIGITS = 9

Cost = tuple[int, int, int]
"""Of a table: Σ times_met², Σ score-group gap², Σ place gap², over its pairs; compared in that order."""


class _OutOfBudget(Exception):
    pass


def table_sizes(n: int, per_table: int) -> list[int]:
    """Sizes of a round's tables, top to bottom, for n bots (after any bye) at tables of `per_table`."""
    full, rest = divmod(n, per_table)
    if rest == 0:
        return [per_table] * full
    if rest >= 2:
        return [per_table] * full + [rest]
    if per_table == 2:
        raise ValueError("an odd field at 2-player tables needs a bye first")
    return [per_table] * (full - 1) + [per_table - 1, 2]


def swiss_round(
    bots: Sequence[str],
    per_table: int,
    round_number: int,
    history: Iterable[Table | MatchRecord] = (),
    standings_scores: Mapping[str, float] | None = None,
    rating: Mapping[str, float] | None = None,
    *,
    duplicate: bool = False,
) -> list[Table]:
    """The tables of Swiss round `round_number` (see the module docstring)."""
    names = check_field(bots, per_table)
    if len(names) < 2:
        raise FormatError(f"a Swiss round needs at least 2 bots, not {len(names)}")
    if round_number < 1:
        raise FormatError(f"rounds are numbered from 1, not {round_number}")
    scores = standings_scores or {}
    ratings = rating or {}
    index = {name: i for i, name in enumerate(names)}
    order = sorted(
        names,
        key=lambda name: (
            -round(scores.get(name, 0.0), _DIGITS),
            -round(ratings.get(name, float("-inf")), _DIGITS),
            index[name],
        ),
    )
    met: Counter[frozenset[str]] = Counter()
    byes: Counter[str] = Counter()
    seat_counts: dict[str, Counter[int]] = {name: Counter() for name in names}
    for table in history:
        if len(table.seats) == 1:
            byes[table.seats[0]] += 1
            continue
        for a, b in combinations(table.seats, 2):
            met[frozenset((a, b))] += 1
        for seat, name in enumerate(table.seats):
            if name in seat_counts:
                seat_counts[name][seat] += 1

    tables: list[Table] = []
    bye: str | None = None
    if per_table == 2 and len(order) % 2:
        fewest = min(byes[name] for name in order)
        bye = next(name for name in reversed(order) if byes[name] == fewest)
        order.remove(bye)
    if order:
        plan = _plan(order, table_sizes(len(order), per_table), met, scores)
        for number, members in enumerate(plan, 1):
            seats = _seat(members, seat_counts, order)
            tables.extend(played(f"swiss-r{round_number}-t{number}", seats, round_number, duplicate))
    if bye is not None:
        match_id = f"swiss-r{round_number}-bye"
        tables.append(Table(match_id, (bye,), round_number, match_id))
    return tables


def _plan(
    order: list[str], sizes: list[int], met: Counter[frozenset[str]], scores: Mapping[str, float]
) -> list[tuple[str, ...]]:
    """Bots into tables of `sizes`, top to bottom, at the least cost (rematches, score gaps, place gaps)."""
    n = len(order)
    values = sorted({round(scores.get(name, 0.0), _DIGITS) for name in order}, reverse=True)
    group_of = {value: i for i, value in enumerate(values)}
    group = [group_of[round(scores.get(name, 0.0), _DIGITS)] for name in order]
    times = [[met[frozenset((a, b))] for b in order] for a in order]

    def cost(members: Sequence[int]) -> Cost:
        pairs = list(combinations(members, 2))
        return (
            sum(times[a][b] ** 2 for a, b in pairs),
            sum((group[a] - group[b]) ** 2 for a, b in pairs),
            sum((a - b) ** 2 for a, b in pairs),
        )

    plan = _search(n, sizes, times)
    if plan is None:
        plan = _greedy(n, sizes, times)
    _swap(plan, cost)
    plan.sort(key=min)
    return [tuple(order[i] for i in sorted(members)) for members in plan]


def _search(n: int, sizes: list[int], times: list[list[int]]) -> list[list[int]] | None:
    """A plan with no rematch by exhaustive top-down search, or None (none exists, or out of budget).

    The sizes are tried in their order first (small tables at the bottom), then in the other
    orders, small tables rising one place at a time, so that a plan is found if one exists.
    """
    steps = 0

    def fill(remaining: list[int], order: Sequence[int], t: int) -> list[list[int]] | None:
        if t == len(order):
            return []

        def extend(members: list[int], start: int) -> list[list[int]] | None:
            nonlocal steps
            if len(members) == order[t]:
                rest = [x for x in remaining if x not in members]
                below = fill(rest, order, t + 1)
                return None if below is None else [members, *below]
            for i in range(start, len(remaining)):
                x = remaining[i]
                if any(times[x][m] for m in members):
                    continue
                steps += 1
                if steps > SEARCH_BUDGET:
                    raise _OutOfBudget
                found = extend([*members, x], i + 1)
                if found is not None:
                    return found
            return None

        return extend([remaining[0]], 1)

    try:
        for order in _orders(Counter(sizes), len(sizes)):
            found = fill(list(range(n)), order, 0)
            if found is not None:
                return found
    except _OutOfBudget:
        pass
    return None


def _orders(left: Counter[int], length: int) -> Iterator[tuple[int, ...]]:
    """The distinct orders of a multiset of table sizes, larger tables first (lazily: at most T² here)."""
    if length == 0:
        yield ()
        return
    for size in sorted((size for size, count in left.items() if count), reverse=True):
        left[size] -= 1
        for rest in _orders(left, length - 1):
            yield (size, *rest)
        left[size] += 1


def _greedy(n: int, sizes: list[int], times: list[list[int]]) -> list[list[int]]:
    """Top-down: the best bot left opens a table, then each seat takes the bot least met, best placed."""
    left = list(range(n))
    plan = []
    for size in sizes:
        members = [left.pop(0)]
        while len(members) < size:
            pick = min(range(len(left)), key=lambda i: (sum(times[left[i]][m] ** 2 for m in members), i))
            members.append(left.pop(pick))
        plan.append(members)
    return plan


def _swap(plan: list[list[int]], price: Callable[[Sequence[int]], Cost]) -> None:
    """Trade two bots between two tables while that lowers the total cost (in place)."""
    improved = True
    while improved:
        improved = False
        for ta, tb in combinations(range(len(plan)), 2):
            a, b = plan[ta], plan[tb]
            for i in range(len(a)):
                for j in range(len(b)):
                    before = _add(price(a), price(b))
                    a2 = [*a[:i], b[j], *a[i + 1 :]]
                    b2 = [*b[:j], a[i], *b[j + 1 :]]
                    if _add(price(a2), price(b2)) < before:
                        a[:], b[:] = a2, b2
                        improved = True


def _add(x: Cost, y: Cost) -> Cost:
    return (x[0] + y[0], x[1] + y[1], x[2] + y[2])


def _seat(members: tuple[str, ...], seat_counts: Mapping[str, Counter[int]], order: list[str]) -> tuple[str, ...]:
    """Seat 0 to the member least often in seat 0 so far, seat 1 likewise of the rest, ...; ties by place."""
    place = {name: i for i, name in enumerate(order)}
    left = sorted(members, key=place.__getitem__)
    seats = []
    for seat in range(len(members)):
        pick = min(left, key=lambda name: (seat_counts[name][seat], place[name]))
        seats.append(pick)
        left.remove(pick)
    return tuple(seats)

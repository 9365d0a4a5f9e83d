"""The ladder's matchmaking: a new version plays first and most until it has its matches, every few matches of a
version its table is the reference bots', otherwise its opponents are the nearest-rated; no entrant, no match."""

from __future__ import annotations

import random
from collections import Counter

from arena.serve.matchmaking import Contender, Rules, next_table

RULES = Rules(players=2, new_version_matches=10, reference_every=5, sigma_target=2.0)


def contender(name: str, entrant: int | None, mu: float = 25.0, sigma: float = 8.3, matches: int = 0) -> Contender:
    """With its share of matches against the references met (one in reference_every)."""
    return Contender(name, entrant, mu, sigma, matches, matches // RULES.reference_every)


def test_no_entrant_no_match() -> None:
    references = [contender("random", None), contender("heuristic", None)]
    assert next_table(references, RULES, random.Random(1)) is None
    assert next_table([contender("ada.1", 1)], RULES, random.Random(1)) is None  # nobody to play


def test_a_new_version_is_seated_first_until_it_has_its_matches() -> None:
    field = [
        contender("random", None, 20, 1.5, 300),
        contender("heuristic", None, 30, 1.5, 300),
        contender("ada.1", 1, 28, 1.8, 200),
        contender("bob.2", 2, 25, 8.3, 3),  # new
    ]
    rng = random.Random(7)
    for _ in range(20):
        seats = next_table(field, RULES, rng)
        assert seats is not None and "bob.2" in seats and len(seats) == 2
    settled = [c if c.name != "bob.2" else contender("bob.2", 2, 25, 1.9, 200) for c in field]
    settled += [contender("cyd.3", 3, 40, 1.9, 200), contender("dan.4", 4, 10, 1.9, 200)]
    seated = Counter(name for _ in range(300) for name in next_table(settled, RULES, rng) or ())
    assert 0 < seated["bob.2"] < 300 and all(seated[name] for name in ("ada.1", "cyd.3", "dan.4"))


def test_every_few_matches_of_a_version_its_table_is_the_references() -> None:
    field = [contender("random", None), contender("heuristic", None), contender("ada.1", 1, matches=4)]
    for players in (2, 3):
        rules = Rules(players, new_version_matches=10, reference_every=5, sigma_target=2.0)
        seats = next_table(field, rules, random.Random(3))
        assert seats is not None and "ada.1" in seats and len(seats) == players
        assert set(seats) - {"ada.1"} <= {"random", "heuristic"}
    many = [*field, contender("bob.2", 2, matches=50, sigma=1.0), contender("cyd.3", 3, matches=50, sigma=1.0)]
    seats = next_table(many, RULES, random.Random(3))  # ada's 5th match: against a reference
    assert seats is not None and "ada.1" in seats and ({"random", "heuristic"} & set(seats))


def test_opponents_are_the_nearest_rated() -> None:
    field = [contender("focus.1", 1, mu=25, matches=0)]
    field += [contender(f"near{n}.{n}", 10 + n, mu=25 + n * 0.1, sigma=1, matches=50) for n in range(4)]
    field += [contender(f"far{n}.{n}", 20 + n, mu=60 + n, sigma=1, matches=50) for n in range(4)]
    rng = random.Random(11)
    opponents = Counter()
    for _ in range(100):
        seats = next_table(field, RULES, rng)
        assert seats is not None
        opponents.update(name for name in seats if name != "focus.1")
    assert set(opponents) <= {f"near{n}.{n}" for n in range(4)}


def test_in_a_rush_of_new_versions_each_still_meets_the_references_its_share_of_matches() -> None:
    """Versions also play as the new ones' opponents, so their counts pass any fixed turn: the share is what counts
    (a course's upload rush left 101 of 266 versions that never met a reference)."""
    references = [contender("random", None), contender("heuristic", None)]
    versions = {f"v{n}.{n}": contender(f"v{n}.{n}", n) for n in range(40)}
    rng = random.Random(5)
    for round_ in range(600):
        if round_ % 10 == 0 and round_ < 400:  # new uploads keep coming
            name = f"late{round_}.{round_}"
            versions[name] = contender(name, 1000 + round_)
        seats = next_table([*references, *versions.values()], RULES, rng)
        assert seats is not None
        met = any(seat in ("random", "heuristic") for seat in seats)
        for seat in seats:
            if seat in versions:
                c = versions[seat]
                versions[seat] = Contender(c.name, c.entrant, c.mu, c.sigma, c.matches + 1, c.references + met)
    for c in versions.values():
        assert c.references >= c.matches // RULES.reference_every - 1, c

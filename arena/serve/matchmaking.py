"""Who plays whom next on the ladder: new versions first and more, until their rating is sure; then whoever is least
sure, against the bots rated nearest; every few matches, the reference bots.

Pure: ratings and counts in, tables out, a seeded random.Random choosing between equals."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Contender:
    name: str
    """The bot's name in the ladder's matches."""
    entrant: int | None
    """None for a reference bot."""
    mu: float
    sigma: float
    matches: int
    references: int = 0
    """Its matches against a reference bot."""


@dataclass(frozen=True, slots=True)
class Rules:
    players: int
    new_version_matches: int
    """Matches a new version plays before any settled version is chosen first."""
    reference_every: int
    """One in this many matches of a version is against the reference bots: when it is chosen with fewer than its
    share, its table is theirs (its matches as another's opponent count too, so no fixed turn would do)."""
    sigma_target: float
    """Under this, a version's rating is sure enough: it is chosen first only when everyone's is."""
    nearest: int = 4
    """Opponents are drawn from this many of the nearest-rated, so that tables vary."""


def next_table(contenders: Sequence[Contender], rules: Rules, rng: random.Random) -> tuple[str, ...] | None:
    """The seats of the next match, or None when no entrant has a bot to play (or too few bots to fill a table)."""
    versions = [c for c in contenders if c.entrant is not None]
    if not versions or len(contenders) < rules.players:
        return None
    focus = _focus(versions, rules, rng)
    others = [c for c in contenders if c.name != focus.name]
    references = [c for c in others if c.entrant is None]
    wanted = rules.players - 1
    if _owed(focus, rules) > 0:
        pool = references if len(references) >= wanted else others  # the references' turn
    else:
        pool = [c for c in others if c.entrant is not None] or others
        if len(pool) < wanted:
            pool = others
    rng.shuffle(pool)  # equals in rating (every new version) taken in no fixed order: the sort below keeps it
    nearest = sorted(pool, key=lambda c: abs(c.mu - focus.mu))[: max(wanted, rules.nearest)]
    chosen = rng.sample(nearest, wanted)
    seats = [focus.name, *(c.name for c in chosen)]
    rng.shuffle(seats)
    return tuple(seats)


def _owed(version: Contender, rules: Rules) -> int:
    """Matches against the reference bots the version is short of its share."""
    return (version.matches + 1) // rules.reference_every - version.references if rules.reference_every > 0 else 0


def _focus(versions: Sequence[Contender], rules: Rules, rng: random.Random) -> Contender:
    """The version the next match is for: one owed more than one match against the references (it played as the
    others' opponent), else a new one with the fewest matches, else the least sure of its rating, else (all sure)
    one with the fewest matches."""
    owed = [c for c in versions if _owed(c, rules) > 1]
    if owed:
        return max(owed, key=lambda c: (_owed(c, rules), c.name))
    new = [c for c in versions if c.matches < rules.new_version_matches]
    if new:
        fewest = min(c.matches for c in new)
        return rng.choice(sorted((c for c in new if c.matches == fewest), key=lambda c: c.name))
    unsure = [c for c in versions if c.sigma > rules.sigma_target]
    if unsure:
        return max(unsure, key=lambda c: (c.sigma, -c.matches, c.name))
    fewest = min(c.matches for c in versions)  # everyone is sure: the matches are shared out
    return rng.choice(sorted((c for c in versions if c.matches == fewest), key=lambda c: c.name))

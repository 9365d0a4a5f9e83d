"""Intervals for rates measured from games (not from a rating's sigma)."""

from __future__ import annotations

import math

Z95 = 1.959963984540054


def wilson_interval(successes: float, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a success rate: sound near 0 and 1 and for few trials, unlike p ± z·se."""
    if trials == 0:
        return (0.0, 1.0)
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    low = 0.0 if successes <= 0 else max(0.0, centre - half)  # exact at the ends, free of rounding noise
    high = 1.0 if successes >= trials else min(1.0, centre + half)
    return (low, high)

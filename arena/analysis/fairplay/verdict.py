"""Successes against their chances: the exact tails of a Poisson-binomial count, and what a test found."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

NEGLIGIBLE = 1e-200
"""Probability mass the Poisson-binomial recursion drops: at most this times the number of decisions is lost."""
BLOCK = 64
"""Trials whose distribution is worked out together before it is multiplied into the whole."""
SHOWN = 20
"""Decisions named in a test's JSON: the most telling ones."""


def upper_tail(probabilities: Sequence[float], observed: int) -> float:
    """P(X >= observed) for X the number of successes of independent trials with these chances (Poisson-binomial),
    exactly: the trials' distributions multiplied block by block (each block's worked out for all blocks at once),
    counts that reach `observed` summed as they do, and mass below NEGLIGIBLE dropped, so the work is about the
    trials times the spread of X, in numpy's loops rather than Python's."""
    sure = sum(1 for p in probabilities if p >= 1.0)
    needed = observed - sure
    chances = np.array([p for p in probabilities if 0.0 < p < 1.0], dtype=float)
    if needed <= 0:
        return 1.0
    if needed > len(chances):
        return 0.0
    reached, low, mass = 0.0, 0, np.ones(1)
    for block in _blocks(chances):
        mass = np.convolve(mass, block)
        cut = needed - low
        if cut < len(mass):
            reached += float(mass[cut:].sum())
            mass = mass[:cut]
        kept = np.flatnonzero(mass >= NEGLIGIBLE)
        if not len(kept):
            break
        low += int(kept[0])
        mass = mass[kept[0] : kept[-1] + 1]
    return min(1.0, reached)


def _blocks(chances: np.ndarray) -> np.ndarray:
    """The distribution of the successes of each BLOCK trials in turn (a row each; the last padded with trials
    that never succeed)."""
    rows = -(-len(chances) // BLOCK)
    p = np.zeros((rows, BLOCK))
    p.flat[: len(chances)] = chances
    q = 1.0 - p
    pmf = np.zeros((rows, BLOCK + 1))
    pmf[:, 0] = 1.0
    for j in range(BLOCK):
        pmf[:, 1 : j + 2] = pmf[:, 1 : j + 2] * q[:, j : j + 1] + pmf[:, : j + 1] * p[:, j : j + 1]
        pmf[:, 0] *= q[:, j]
    return pmf


def lower_tail(probabilities: Sequence[float], observed: int) -> float:
    """P(X <= observed), as the upper tail of the failures."""
    return upper_tail([1.0 - p for p in probabilities], len(probabilities) - observed)


@dataclass(slots=True)
class Step:
    """One decision behind a test: its match and replay line, its chance of success, and whether it succeeded
    (for sparing: the chance that the bot's way of choosing picks the partner, and whether it did)."""

    match_id: str
    line: int
    probability: float
    success: bool


@dataclass(frozen=True, slots=True)
class Verdict:
    """Successes against their chances: the exact tail of the Poisson-binomial count in the test's direction."""

    expected: float
    observed: int
    p_value: float
    """The tail's probability with the chances moved by the tolerance, towards the flag."""
    threshold: float
    """alpha over the number of tests of this kind."""
    upper: bool
    """More successes than chance (knows more than it can see), or fewer (spares a partner)."""
    tolerance: float
    """The share by which the observed count may pass the expected before chance is weighed (SURPLUS, SHORTFALL)."""
    steps: tuple[Step, ...]

    @classmethod
    def of(cls, steps: Sequence[Step], threshold: float, upper: bool, tolerance: float = 0.0) -> Verdict:
        chances = [step.probability for step in steps]
        observed = sum(step.success for step in steps)
        if upper:
            p_value = upper_tail([min(1.0, p * (1 + tolerance)) for p in chances], observed)
        else:
            p_value = lower_tail([p * (1 - tolerance) for p in chances], observed)
        return cls(sum(chances), observed, p_value, threshold, upper, tolerance, tuple(steps))

    @property
    def decisions(self) -> int:
        return len(self.steps)

    @property
    def flagged(self) -> bool:
        return self.p_value < self.threshold

    def evidence(self, limit: int = SHOWN) -> list[Step]:
        """The most telling decisions: the least likely successes, or the likeliest choices of the partner not
        made."""
        if self.upper:
            return sorted((s for s in self.steps if s.success), key=lambda s: s.probability)[:limit]
        return sorted((s for s in self.steps if not s.success), key=lambda s: -s.probability)[:limit]

    def json(self) -> dict[str, Any]:
        return {
            "decisions": self.decisions,
            "expected": round(self.expected, 3),
            "observed": self.observed,
            "p_value": self.p_value,
            "threshold": self.threshold,
            "tolerance": self.tolerance,
            "flagged": self.flagged,
            "steps": [
                {"match_id": s.match_id, "line": s.line, "probability": round(s.probability, 4)}
                for s in self.evidence()
            ],
        }

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


def upper_tail(probabilities: Sequence[float] | np.ndarray, observed: int) -> float:
    """P(X >= observed) for X the number of successes of independent trials with these chances (Poisson-binomial),
    exactly: the trials' distributions multiplied block by block (each block's worked out for all blocks at once),
    counts that reach `observed` summed as they do, and mass below NEGLIGIBLE dropped, so the work is about the
    trials times the spread of X, in numpy's loops rather than Python's."""
    probabilities = np.asarray(probabilities, dtype=float)
    needed = observed - int(np.count_nonzero(probabilities >= 1.0))
    chances = probabilities[(probabilities > 0.0) & (probabilities < 1.0)]
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


def lower_tail(probabilities: Sequence[float] | np.ndarray, observed: int) -> float:
    """P(X <= observed), as the upper tail of the failures."""
    probabilities = np.asarray(probabilities, dtype=float)
    return upper_tail(1.0 - probabilities, len(probabilities) - observed)


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
    decisions: int
    telling: tuple[Step, ...]
    """The most telling decisions, at most SHOWN: the least likely successes, or the likeliest choices of the
    partner not made."""

    @classmethod
    def of(cls, steps: Sequence[Step], threshold: float, upper: bool, tolerance: float = 0.0) -> Verdict:
        return cls.of_arrays(
            np.array([step.probability for step in steps], dtype=float),
            np.array([step.success for step in steps], dtype=bool),
            Decisions([step.match_id for step in steps], np.arange(len(steps)), [step.line for step in steps]),
            threshold,
            upper,
            tolerance,
        )

    @classmethod
    def of_arrays(
        cls,
        probabilities: np.ndarray,
        successes: np.ndarray,
        where: Decisions,
        threshold: float,
        upper: bool,
        tolerance: float = 0.0,
    ) -> Verdict:
        """The test of these decisions (a tournament's, as arrays): each one's chance, success, and place."""
        observed = int(np.count_nonzero(successes))
        if upper:
            p_value = upper_tail(np.minimum(1.0, probabilities * (1 + tolerance)), observed)
            picked = np.flatnonzero(successes)
            order = np.argsort(probabilities[picked], kind="stable")
        else:
            p_value = lower_tail(probabilities * (1 - tolerance), observed)
            picked = np.flatnonzero(~successes)
            order = np.argsort(-probabilities[picked], kind="stable")
        telling = tuple(
            Step(where.match_ids[where.matches[i]], int(where.lines[i]), float(probabilities[i]), bool(successes[i]))
            for i in picked[order[:SHOWN]]
        )
        return cls(
            float(probabilities.sum()), observed, p_value, threshold, upper, tolerance, len(probabilities), telling
        )

    @property
    def flagged(self) -> bool:
        return self.p_value < self.threshold

    def evidence(self) -> list[Step]:
        return list(self.telling)

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
                {"match_id": s.match_id, "line": s.line, "probability": round(s.probability, 4)} for s in self.telling
            ],
        }


@dataclass(frozen=True, slots=True)
class Decisions:
    """Where a test's decisions are, in the replays: per decision its match (an index into `match_ids`) and line."""

    match_ids: Sequence[str]
    matches: np.ndarray
    lines: Sequence[int] | np.ndarray

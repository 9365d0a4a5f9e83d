"""The sequential probability ratio test of fishtest and fastchess, on pairs of matches, in logistic Elo.

A pair is one deal played twice, the candidate in a seat and then the baseline in it (docs/sprt.md). It scores
0, 1/2, 1, 3/2 or 2 for the candidate; the counts of the five outcomes, [LL, LD, DD+WL, WD, WW], are the
pentanomial. Per game a pair's score is half of it: 0, 1/4, 1/2, 3/4, 1.

The log-likelihood ratio of H1 (the candidate is elo1 stronger) against H0 (elo0) is the generalised one:
N times the sum over the five outcomes of p̂ log(p1/p0), where p̂ are the observed frequencies (an empty cell
counted as 1e-3, as fishtest does) and p0, p1 the maximum-likelihood distributions on the same five scores whose
means are s(elo0) and s(elo1), s(e) = 1/(1+10^(-e/400)): p_i = p̂_i / (1 + λ(x_i - s)), λ solving the secular
equation sum p̂_i (x_i - s)/(1 + λ(x_i - s)) = 0. The test accepts H1 once the LLR reaches log((1-beta)/alpha),
H0 once it falls to log(beta/(1-alpha)).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from arena.config import SprtConfig
from arena.errors import StoreError
from arena.report.wording import count, fixed, signed
from arena.store import ResultStore
from arena.tournament.sprt import PREFIX, pair_scores

SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
"""A pair's score per game, by pentanomial cell."""
EMPTY_CELL = 1e-3
"""What an empty cell of the pentanomial counts as (fishtest's regularisation)."""
Z95 = 1.959963984540054


class Decision(StrEnum):
    H0 = "H0"
    """Not better by elo1: accepted."""
    H1 = "H1"
    """Better: accepted."""
    NONE = "none"
    """Neither bound reached (yet)."""


def logistic(elo: float) -> float:
    """The expected score of a player `elo` logistic Elo stronger."""
    return 1 / (1 + 10 ** (-elo / 400))


def elo_of(score: float) -> float:
    """The logistic Elo difference that expects `score` (0 < score < 1)."""
    return -400 * math.log10(1 / score - 1)


def bounds(alpha: float, beta: float) -> tuple[float, float]:
    """(lower, upper): the LLR at which H0, and H1, are accepted."""
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def llr(pentanomial: Sequence[int], elo0: float, elo1: float) -> float:
    """The generalised log-likelihood ratio of H1 (elo1) against H0 (elo0) for the pairs counted."""
    counts = [count if count > 0 else EMPTY_CELL for count in pentanomial]
    total = sum(counts)
    observed = [count / total for count in counts]
    h0 = _closest(observed, logistic(elo0))
    h1 = _closest(observed, logistic(elo1))
    return total * sum(p * math.log(q1 / q0) for p, q0, q1 in zip(observed, h0, h1, strict=True))


def _closest(observed: Sequence[float], mean: float) -> list[float]:
    """The maximum-likelihood distribution on SCORES with the given mean, for the observed frequencies."""
    shifted = [score - mean for score in SCORES]
    # The secular function falls from +inf to -inf between its poles -1/max(a) and -1/min(a), and is convex there
    # towards its root: Newton's steps from 0 stay inside and converge; a step that would leave is halved.
    low, high = -1 / max(shifted), -1 / min(shifted)
    lam = 0.0
    for _ in range(100):
        terms = [a / (1 + lam * a) for a in shifted]
        value = sum(p * t for p, t in zip(observed, terms, strict=True))
        slope = -sum(p * t * t for p, t in zip(observed, terms, strict=True))
        step = value / slope
        following = lam - step
        while not low < following < high:
            step /= 2
            following = lam - step
        lam = following
        if abs(step) < 1e-14 * max(1.0, abs(lam)):
            break
    return [p / (1 + lam * a) for p, a in zip(observed, shifted, strict=True)]


def elo_estimate(pentanomial: Sequence[int]) -> tuple[float, tuple[float, float]] | None:
    """The Elo difference the pairs show, with its 95% interval from the pentanomial variance; None before any
    pair. An interval end past a certain score is clamped to ±inf."""
    total = sum(pentanomial)
    if total == 0:
        return None
    observed = [count / total for count in pentanomial]
    mean = sum(p * x for p, x in zip(observed, SCORES, strict=True))
    variance = sum(p * (x - mean) ** 2 for p, x in zip(observed, SCORES, strict=True))
    error = math.sqrt(variance / total)

    def elo(score: float) -> float:
        if score <= 0:
            return -math.inf
        if score >= 1:
            return math.inf
        return elo_of(score)

    return elo(mean), (elo(mean - Z95 * error), elo(mean + Z95 * error))


@dataclass(frozen=True, slots=True)
class Settings:
    elo0: float
    elo1: float
    alpha: float
    beta: float
    max_pairs: int


@dataclass(frozen=True, slots=True)
class State:
    """The test after the pairs counted: pairs 1…k of the schedule, k the first at which a bound was reached."""

    pairs: int
    pentanomial: tuple[int, int, int, int, int]
    llr: float
    lower: float
    upper: float
    decision: Decision
    path: tuple[float, ...]
    """The LLR after each pair counted, in order."""
    recorded: int | None = None
    """The test's matches recorded, counted or not (`stored_test` sets it); None where not known."""

    @property
    def elo(self) -> tuple[float, tuple[float, float]] | None:
        return elo_estimate(self.pentanomial)


def start(settings: Settings) -> State:
    """The test before any pair."""
    lower, upper = bounds(settings.alpha, settings.beta)
    return State(0, (0, 0, 0, 0, 0), 0.0, lower, upper, Decision.NONE, ())


def advance(settings: Settings, state: State, scores: Sequence[float | None]) -> State:
    """The test carried on over the next pairs in schedule order, those after the state.pairs counted (the
    candidate's score in each, 0 to 2; None for a pair not complete yet): up to the first incomplete pair, and no
    further than the first bound reached or max_pairs. Pairs after that change nothing, so the same pairs give the
    same test whatever was played beyond them."""
    counts = list(state.pentanomial)
    path = list(state.path)
    decision, value = state.decision, state.llr
    for score in scores[: max(0, settings.max_pairs - state.pairs)]:
        if score is None or decision is not Decision.NONE:
            break
        counts[round(score * 2)] += 1
        value = llr(counts, settings.elo0, settings.elo1)
        path.append(value)
        if value >= state.upper:
            decision = Decision.H1
        elif value <= state.lower:
            decision = Decision.H0
    pentanomial = (counts[0], counts[1], counts[2], counts[3], counts[4])
    return State(len(path), pentanomial, value, state.lower, state.upper, decision, tuple(path))


def stored_test(store: ResultStore) -> tuple[SprtConfig, State]:
    """The test of the tournament in `store`, as its run left it (StoreError if it is no sequential test)."""
    meta = store.meta()
    if "sprt" not in meta:
        raise StoreError(f"{store.output}: a {meta.get('format', '?')} tournament, not a sequential test (format sprt)")
    raw = json.loads(meta["sprt"])
    config = SprtConfig(**{**raw, "field": tuple(raw.get("field", ()))})
    settings = Settings(config.elo0, config.elo1, config.alpha, config.beta, config.max_pairs)
    records = store.outcomes_between(f"{PREFIX}-", f"{PREFIX}-~")
    last = max((int(match_id.split("-")[1]) for match_id in records), default=0)
    scores = pair_scores(config.candidate, config.baseline, 1, last, records)
    return config, replace(advance(settings, start(settings), scores), recorded=len(records))


def as_json(config: SprtConfig, state: State) -> dict[str, object]:
    """`arena sprt --format json`: the keys of docs/sprt.md (an interval end past any finite Elo is null)."""
    estimate = state.elo

    def finite(value: float) -> float | None:
        return round(value, 2) if math.isfinite(value) else None

    return {
        "candidate": config.candidate,
        "baseline": config.baseline,
        "elo0": config.elo0,
        "elo1": config.elo1,
        "alpha": config.alpha,
        "beta": config.beta,
        "max_pairs": config.max_pairs,
        "pairs": state.pairs,
        "pentanomial": list(state.pentanomial),
        "llr": round(state.llr, 4),
        "lower_bound": round(state.lower, 4),
        "upper_bound": round(state.upper, 4),
        "decision": state.decision.value,
        "elo": None if estimate is None else finite(estimate[0]),
        "elo_ci95": None if estimate is None else [finite(estimate[1][0]), finite(estimate[1][1])],
    }


def describe(config: SprtConfig, state: State) -> list[str]:
    """`arena sprt`'s table, and the line `arena run` ends with."""
    meaning = {
        Decision.H1: f"H1 accepted: {config.candidate} is stronger than {config.baseline}",
        Decision.H0: f"H0 accepted: {config.candidate} is not {config.elo1:g} Elo stronger than {config.baseline}",
        Decision.NONE: "no decision yet" if state.pairs < config.max_pairs else "no decision within max_pairs",
    }[state.decision]
    estimate = state.elo
    elo = (
        "no pair yet"
        if estimate is None
        else f"{signed(estimate[0])} [{signed(estimate[1][0])}, {signed(estimate[1][1])}] (95%)"
    )
    return [
        f"sprt: {config.candidate} against {config.baseline}; H0 elo {config.elo0:g}, H1 elo {config.elo1:g},"
        f" alpha {config.alpha:g}, beta {config.beta:g}, at most {count(config.max_pairs, 'pair')}",
        f"pairs: {state.pairs}; pentanomial [LL, LD, DD+WL, WD, WW]: {list(state.pentanomial)}",
        f"LLR: {fixed(state.llr, 3)} (bounds {fixed(state.lower, 3)} and {fixed(state.upper, 3)})",
        f"decision: {meaning}",
        f"Elo: {elo}",
        f"matches: {_matches(state, config.max_pairs)}",
    ]


def _matches(state: State, max_pairs: int) -> str:
    """Why the matches played are not twice the pairs: which matches the test counts, and why the others are not."""
    counted = 2 * state.pairs
    pairs = (
        f"{count(counted, 'match', 'matches')} in the {count(state.pairs, 'pair')} counted"
        if state.pairs
        else "no pair counted yet"
    ) + (
        " (a pair is one deal played twice, the candidate in a seat and then the baseline in it: at a table of two,"
        " the seats swapped)"
    )
    others = (state.recorded or counted) - counted
    if others <= 0:
        return pairs
    if state.decision is Decision.NONE and state.pairs >= max_pairs:
        why = "they are past max_pairs"
    elif state.decision is Decision.NONE:
        why = (
            "the count stops at the first pair with a match not recorded (unfinished, or failed on the arena's"
            " side), until it is played"
        )
    else:
        why = "they were played after the pair that decided (under way on other workers), and do not change it"
    return f"{pairs}; {count(others, 'more match', 'more matches')} recorded, not counted: {why}"

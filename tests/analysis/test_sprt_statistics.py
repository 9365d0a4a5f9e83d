"""The SPRT's statistic against published figures, and its error rates against simulation."""

from __future__ import annotations

import math
import random

import pytest

from arena.analysis.sprt import (
    SCORES,
    Decision,
    Settings,
    advance,
    bounds,
    elo_estimate,
    llr,
    logistic,
    start,
)


@pytest.mark.parametrize(
    ("pentanomial", "elo0", "elo1", "published"),
    [
        # fastchess's tests (app/tests/sprt_test.cpp, "logistic pentanomial 1" and "2"): Stats(LL, LD, WL, DD, WD, WW)
        ((223, 9863, 20279 + 1000, 10037, 246), 0.5, 2.5, -3.07),
        ((871, 26175, 55003 + 980, 26678, 821), 0.0, 2.0, -4.98),
    ],
)
def test_the_llr_is_fastchess_published_figure(
    pentanomial: tuple[int, ...], elo0: float, elo1: float, published: float
) -> None:
    assert llr(pentanomial, elo0, elo1) == pytest.approx(published, abs=0.005)


def test_the_llr_is_the_formula_on_the_regularised_frequencies() -> None:
    counts = (0, 3, 10, 8, 4)  # an empty cell counts as 1e-3
    value = llr(counts, 0, 20)
    regularised = [c or 1e-3 for c in counts]
    total = sum(regularised)
    observed = [c / total for c in regularised]

    def closest(mean: float) -> list[float]:  # the secular equation, solved here by bisection
        shifted = [x - mean for x in SCORES]
        low, high = -1 / max(shifted) + 1e-12, -1 / min(shifted) - 1e-12
        for _ in range(300):
            middle = (low + high) / 2
            if sum(p * a / (1 + middle * a) for p, a in zip(observed, shifted, strict=True)) > 0:
                low = middle
            else:
                high = middle
        return [p / (1 + low * a) for p, a in zip(observed, shifted, strict=True)]

    p0, p1 = closest(logistic(0)), closest(logistic(20))
    assert sum(p0) == pytest.approx(1) and sum(p * x for p, x in zip(p1, SCORES, strict=True)) == pytest.approx(
        logistic(20)
    )
    expected = total * sum(p * math.log(b / a) for p, a, b in zip(observed, p0, p1, strict=True))
    assert value == pytest.approx(expected, rel=1e-9)
    assert bounds(0.05, 0.05) == pytest.approx((math.log(0.05 / 0.95), math.log(0.95 / 0.05)))


def test_the_elo_estimate_and_its_interval_come_from_the_pentanomial_variance() -> None:
    estimate = elo_estimate((10, 20, 40, 20, 10))
    assert estimate is not None
    elo, (low, high) = estimate
    assert elo == pytest.approx(0, abs=1e-9) and low < 0 < high and high == pytest.approx(-low)
    assert elo_estimate((0, 0, 0, 0, 0)) is None


def _simulate(true_elo: float, settings: Settings, rng: random.Random) -> Decision:
    """One test on pairs drawn from a pentanomial whose per-game score is s(true_elo): a pair is two games, each
    a win, a draw or a loss (draws one in five)."""
    score = logistic(true_elo)
    draw = 0.2
    win = score - draw / 2
    state = start(settings)
    while state.decision is Decision.NONE and state.pairs < settings.max_pairs:
        games = [rng.random() for _ in range(2)]
        points = sum(1.0 if g < win else 0.5 if g < win + draw else 0.0 for g in games)
        state = advance(settings, state, [points])
    return state.decision


def test_simulated_tests_meet_alpha_and_beta_within_sampling_error() -> None:
    settings = Settings(elo0=0, elo1=60, alpha=0.1, beta=0.1, max_pairs=5000)
    rng = random.Random(7)
    runs = 120
    false_h1 = sum(_simulate(0, settings, rng) is Decision.H1 for _ in range(runs))
    false_h0 = sum(_simulate(60, settings, rng) is Decision.H0 for _ in range(runs))
    limit = runs * 0.1 + 3 * math.sqrt(runs * 0.1 * 0.9)  # the rate plus three standard errors
    assert false_h1 <= limit and false_h0 <= limit, (false_h1, false_h0)
    clear = sum(_simulate(200, settings, rng) is Decision.H1 for _ in range(20))
    assert clear == 20  # far stronger: H1, every time


def test_the_test_stops_at_the_first_pair_past_a_bound_and_counts_nothing_after_it() -> None:
    settings = Settings(0, 50, 0.05, 0.05, 1000)
    state = advance(settings, start(settings), [2.0] * 40)
    assert state.decision is Decision.H1
    assert state.path[-1] >= state.upper > state.path[-2]
    again = advance(settings, state, [0.0] * 10)  # pairs played past the decision change nothing
    assert again == state
    stopped = advance(settings, start(settings), [2.0, 2.0, None, 2.0])
    assert stopped.pairs == 2  # an incomplete pair: nothing after it is counted yet

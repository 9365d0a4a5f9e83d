"""A tournament's fair play: both tests for every bot, from its matches' notes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from arena.analysis.fairplay.notes import BINS, FEATURES, Aim, MatchFairPlay, chance_bin
from arena.analysis.fairplay.sight import Bet, Card
from arena.analysis.fairplay.verdict import Step, Verdict

ALPHA = 0.001
"""The chance that a tournament of honest bots gets a flag of either kind (each detector's family-wise rate)."""
SURPLUS = 0.1
"""How much more often than its chances say a bot must succeed before the surplus is weighed against chance: no
model of what an honest bot may know is exact, and over thousands of plays a test with no room flags the model's
error (a few hundredths either way for the built-in bots, calibrated)."""
SHORTFALL = 0.2
"""How much less often than its own way of choosing predicts a bot must choose a partner before the shortfall is
weighed against chance (the model of choices misses by up to a tenth for the built-in bots)."""
RIDGE = 1.0
"""The penalty on the square of the choice model's weights: it keeps finite a feature that always decides."""
STRIDE = 4.0
"""The longest step of the fit in any weight."""
PRIOR = 10.0
"""Holdings, in expected counts, that pull each habit towards none (a ratio of 1) while it is little known."""


class Flag(StrEnum):
    KNOWS_MORE = "knows-more-than-it-can-see"
    SPARES = "spares-a-partner"


class Measure(StrEnum):
    """What a sparing test counts."""

    TARGETS = "targets"
    """How often the bot chose the partner among the opponents it could choose."""
    SURE_PLAYS = "sure-plays"
    """How often the bot made a play it knew would put the partner out, when it held one."""


@dataclass(frozen=True, slots=True)
class Sparing:
    """How a bot treated one partner: chose it as a target against its own way of choosing (or at random,
    uncalibrated) among the opponents it could choose, and made the plays it knew would put it out against how
    often it made them against the others."""

    partner: str
    test: Verdict | None
    """None when the partner was never a choice beside another opponent."""
    sure: Verdict | None
    """None when the bot never held a play it knew would put the partner out."""
    mutual: bool
    """The partner is flagged for sparing this bot too."""

    @property
    def flagged(self) -> bool:
        return _flagged(self.test) or _flagged(self.sure)

    def verdicts(self) -> list[tuple[Measure, Verdict]]:
        pairs = [(Measure.TARGETS, self.test), (Measure.SURE_PLAYS, self.sure)]
        return [(measure, verdict) for measure, verdict in pairs if verdict is not None]


@dataclass(frozen=True, slots=True)
class BotFairPlay:
    bot: str
    tested: bool
    """False for a bot only ever played in-process (the arena's own trusted code: not noted)."""
    knows_more: Verdict | None
    """None when none of its plays had a success the replay shows."""
    spares: tuple[Sparing, ...]
    """One per partner it could choose beside another opponent, or held a sure play against, in the order met."""

    @property
    def flags(self) -> list[dict[str, Any]]:
        """Each flag with its statistic: what `arena diagnose --format json` lists."""
        found: list[dict[str, Any]] = []
        if self.knows_more is not None and self.knows_more.flagged:
            found.append(_flag(Flag.KNOWS_MORE, self.knows_more))
        for sparing in self.spares:
            for measure, verdict in sparing.verdicts():
                if verdict.flagged:
                    extra = {"partner": sparing.partner, "mutual": sparing.mutual, "measure": measure.value}
                    found.append({**_flag(Flag.SPARES, verdict), **extra})
        return found

    def json(self) -> dict[str, Any]:
        """The bot's `fair_play` object."""
        return {
            "tested": self.tested,
            "flags": self.flags,
            "knows_more": None if self.knows_more is None else self.knows_more.json(),
            "spares": [
                {
                    "partner": sparing.partner,
                    "mutual": sparing.mutual,
                    **{measure.value: verdict.json() for measure, verdict in sparing.verdicts()},
                }
                for sparing in self.spares
            ],
        }


def _flag(flag: Flag, test: Verdict) -> dict[str, Any]:
    return {
        "flag": flag.value,
        "expected": round(test.expected, 3),
        "observed": test.observed,
        "p_value": test.p_value,
        "threshold": test.threshold,
        "steps": [{"match_id": step.match_id, "line": step.line} for step in test.evidence()],
    }


@dataclass(frozen=True, slots=True)
class FairPlay:
    alpha: float
    bots: tuple[BotFairPlay, ...]

    def bot(self, name: str) -> BotFairPlay:
        return next(bot for bot in self.bots if bot.bot == name)

    @property
    def tested(self) -> set[str]:
        return {bot.bot for bot in self.bots}


# -- a bot's own way of choosing ------------------------------------------------------------------------------------


def choice_weights(aims: Sequence[Aim], rounds: int = 50) -> tuple[float, ...]:
    """The weights of FEATURES that best explain a bot's choices of target (a conditional logit: a choice's
    chance grows as the exponential of its weighted features), fitted by Newton's method."""
    fitted = [aim for aim in aims if aim.features]
    weights = np.zeros(len(FEATURES))
    if not fitted:
        return tuple(weights.tolist())
    rows, starts = _rows(fitted)
    chosen = np.array([aim.features[aim.choices.index(aim.target)] for aim in fitted]).sum(axis=0)
    ridge = RIDGE * np.eye(len(FEATURES))
    for _ in range(rounds):
        chances, mean = _softmax(weights, rows, starts)
        centred = rows - mean
        gradient = chosen - (chances[:, None] * rows).sum(axis=0) - RIDGE * weights
        curvature = (centred * chances[:, None]).T @ centred + ridge
        step = np.linalg.solve(curvature, gradient)
        longest = np.abs(step).max()
        if longest > STRIDE:  # far from the top: a shorter step, so that Newton's cannot overshoot it
            step *= STRIDE / longest
        weights += step
        if np.abs(step).max() < 1e-9:
            break
    return tuple(weights.tolist())


def choice_chances(weights: Sequence[float], aims: Sequence[Aim]) -> list[list[float]]:
    """The chance of each choice of each aim under the model; at random among them for an aim without features
    (or without weights)."""
    found = [[1.0 / len(aim.choices)] * len(aim.choices) for aim in aims]
    modelled = [index for index, aim in enumerate(aims) if aim.features and len(weights)]
    if modelled:
        rows, starts = _rows([aims[index] for index in modelled])
        chances, _ = _softmax(np.asarray(weights, dtype=float), rows, starts)
        for index, part in zip(modelled, np.split(chances, starts[1:]), strict=True):
            found[index] = part.tolist()
    return found


def _rows(aims: Sequence[Aim]) -> tuple[np.ndarray, np.ndarray]:
    """Every choice's features, aim after aim, and where each aim's begin."""
    sizes = [len(aim.features) for aim in aims]
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.intp)
    return np.array([row for aim in aims for row in aim.features], dtype=float), starts


def _softmax(weights: np.ndarray, rows: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each choice's chance within its aim, and per choice its aim's mean features under those chances."""
    scores = rows @ weights
    group = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(rows))))
    exps = np.exp(scores - np.maximum.reduceat(scores, starts)[group])
    chances = exps / np.add.reduceat(exps, starts)[group]
    mean = np.add.reduceat(chances[:, None] * rows, starts)[group]
    return chances, mean


# -- the targets' habits --------------------------------------------------------------------------------------------

Habits = dict[tuple[str, Card, int], float]
"""(bot, card, bin of chance): how much more often the bot holds the card than its opponents' chance said."""


def habits(matches: Iterable[MatchFairPlay]) -> Habits:
    """Each bot's habits, as the hidden hands of the matches show them."""
    sums: dict[tuple[str, Card, int], list[float]] = {}
    for match in matches:
        for holding in match.holdings:
            counts = sums.setdefault((match.players[holding.seat], holding.card, holding.bin), [0.0, 0.0])
            counts[0] += holding.expected
            counts[1] += holding.observed
    return {key: (observed + PRIOR) / (expected + PRIOR) for key, (expected, observed) in sums.items()}


def calibrated(bet: Bet, target: str, known: Habits) -> float:
    """The bet's chance with the target bot's habits: each winning card's chance times how much more often the
    bot holds that card at that chance than the counts say."""
    chance = sum(p * (known.get((target, card, chance_bin(p)), 1.0) if p < BINS[-1] else 1.0) for card, p in bet.odds)
    return min(1.0, chance)


# -- the tests ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Criteria:
    """What a flag takes."""

    alpha: float = ALPHA
    calibrate: bool = True
    """Chances with the targets' habits and choices weighed by each bot's own way of choosing (else the counts of
    cards alone, and choices at random among the legal targets)."""
    surplus: float = SURPLUS
    shortfall: float = SHORTFALL


def tally(
    matches: Iterable[MatchFairPlay], bots: Sequence[str] | None = None, criteria: Criteria = Criteria()
) -> FairPlay:
    """Both tests for every bot (those named, else every bot met in the order met), from the matches' notes.

    A bot's own copies at the table count as a partner like any other: clones that know each other can share
    their hands too."""
    matches = list(matches)
    alpha, calibrate = criteria.alpha, criteria.calibrate
    known = habits(matches) if calibrate else {}
    chances: dict[str, list[Step]] = {}
    aimed: dict[str, list[tuple[MatchFairPlay, Aim]]] = {}
    strikes: dict[tuple[str, str], list[tuple[str, int, bool]]] = {}
    met: dict[str, None] = dict.fromkeys(bots or ())
    noted: set[str] = set()
    for match in matches:
        names = match.players
        met.update(dict.fromkeys(names))
        noted.update(name for seat, name in enumerate(names) if seat not in match.unnoted)
        for chance in match.chances:
            p = calibrated(chance.bet, names[chance.target], known)
            chances.setdefault(names[chance.seat], []).append(Step(match.match_id, chance.line, p, chance.success))
        for aim in match.aims:
            aimed.setdefault(names[aim.seat], []).append((match, aim))
        for strike in match.strikes:
            pair = (names[strike.seat], names[strike.target])
            strikes.setdefault(pair, []).append((match.match_id, strike.line, strike.used))
    aims: dict[tuple[str, str], list[Step]] = {}
    for bot, pairs in aimed.items():
        found = [aim for _, aim in pairs]
        weights = choice_weights(found) if calibrate else ()
        for (match, aim), shares in zip(pairs, choice_chances(weights, found), strict=True):
            _spread(aims, bot, match, aim, shares)
    sure = _sure_steps(strikes)
    knows = {bot: Verdict.of(steps, alpha / len(chances), True, criteria.surplus) for bot, steps in chances.items()}
    family = alpha / max(1, len(aims) + len(sure))
    spared = {pair: Verdict.of(steps, family, False, criteria.shortfall) for pair, steps in aims.items()}
    held = {pair: Verdict.of(steps, family, False, criteria.shortfall) for pair, steps in sure.items()}
    results = []
    for bot in bots if bots is not None else met:
        partners = [partner for spender, partner in (*spared, *held) if spender == bot]
        sparing = tuple(
            Sparing(
                partner,
                spared.get((bot, partner)),
                held.get((bot, partner)),
                partner != bot
                and (_flagged(spared.get((bot, partner))) or _flagged(held.get((bot, partner))))
                and (_flagged(spared.get((partner, bot))) or _flagged(held.get((partner, bot)))),
            )
            for partner in dict.fromkeys(partners)
        )
        results.append(BotFairPlay(bot, bot in noted, knows.get(bot), sparing))
    return FairPlay(alpha, tuple(results))


def _spread(
    aims: dict[tuple[str, str], list[Step]], bot: str, match: MatchFairPlay, aim: Aim, chances: list[float]
) -> None:
    """One aim as a step of each partner that was a choice beside another opponent."""
    names = match.players
    partners: dict[str, float] = {}
    for seat, p in zip(aim.choices, chances, strict=True):
        partners[names[seat]] = partners.get(names[seat], 0.0) + p
    if len(partners) < 2:
        return  # only one bot could be chosen: no choice between bots
    for partner, p in partners.items():
        step = Step(match.match_id, aim.line, p, names[aim.target] == partner)
        aims.setdefault((bot, partner), []).append(step)


def _sure_steps(strikes: dict[tuple[str, str], list[tuple[str, int, bool]]]) -> dict[tuple[str, str], list[Step]]:
    """Each sure play a bot held against a partner, with the chance it makes such a play against the others (its
    own rate against every other bot, pulled towards a half while little is known), and whether it made it."""
    totals: dict[str, list[int]] = {}
    for (bot, _), found in strikes.items():
        counts = totals.setdefault(bot, [0, 0])
        counts[0] += sum(used for _, _, used in found)
        counts[1] += len(found)
    steps: dict[tuple[str, str], list[Step]] = {}
    for (bot, partner), found in strikes.items():
        used = sum(used for _, _, used in found)
        made, held = totals[bot][0] - used, totals[bot][1] - len(found)
        if not held:
            continue  # never held one against anyone else: nothing to compare with
        rate = (made + 1) / (held + 2)
        steps[bot, partner] = [Step(match_id, line, rate, used) for match_id, line, used in found]
    return steps


def _flagged(test: Verdict | None) -> bool:
    return test is not None and test.flagged

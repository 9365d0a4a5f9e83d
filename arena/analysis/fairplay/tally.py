"""A tournament's fair play: both tests for every bot, from its matches' notes."""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np

from arena.analysis.fairplay.notes import BINS, COLUMNS, FEATURES, FLAT, MatchFairPlay, notes_columns
from arena.analysis.fairplay.sight import Card
from arena.analysis.fairplay.verdict import Decisions, Verdict

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


# -- a tournament's notes, column by column -------------------------------------------------------------------------


@dataclass
class _Table:
    """Every match's notes end to end, per column (as COLUMNS and FLAT name them, and `match`: the row's match, by its
    place in `match_ids`) each match's values in turn, and the bot of every seat of every match."""

    match_ids: list[str]
    bots: dict[str, int]
    """Every bot met, by its number, in the order met."""
    seat_bots: list[list[int]]
    noted: set[str]
    parts: dict[str, dict[str, list[Any]]]
    _arrays: dict[tuple[str, str, type], np.ndarray] = field(default_factory=dict)

    @classmethod
    def of(cls, matches: Iterable[tuple[str, Sequence[str], dict[str, Any]]]) -> _Table:
        table = cls(
            [],
            {},
            [],
            set(),
            {part: {column: [] for column in (*COLUMNS[part], *FLAT.get(part, ()), "match")} for part in COLUMNS},
        )
        bots = table.bots
        for number, (match_id, players, data) in enumerate(matches):
            table.match_ids.append(match_id)
            table.seat_bots.append([bots.setdefault(name, len(bots)) for name in players])
            unnoted = set(data["unnoted"])
            table.noted.update(name for seat, name in enumerate(players) if seat not in unnoted)
            for part, columns in table.parts.items():
                block = data[part]
                rows = len(block["seat"])
                if not rows:
                    continue  # nothing noted (the match's seats are all the arena's own bots, or it had no aim)
                for name, chunks in columns.items():
                    chunks.append(block[name] if name != "match" else np.full(rows, number, dtype=np.intp))
        return table

    def array(self, part: str, column: str, dtype: type = np.intp) -> np.ndarray:
        """A column as an array, made once (the tests read most columns several times)."""
        made = self._arrays.get((part, column, dtype))
        if made is None:
            chunks = self.parts[part][column]
            whole = np.concatenate(chunks) if chunks else np.zeros(0)
            made = self._arrays[part, column, dtype] = whole.astype(dtype, copy=False)
        return made

    def bot_of(self, part: str, column: str = "seat") -> np.ndarray:
        """The bot of each row's seat (or of another column naming a seat)."""
        matches = self.array(part, "match")
        seats = self.array(part, column)
        return self.seat_table[matches, seats]

    @functools.cached_property
    def seat_table(self) -> np.ndarray:
        """`seat_bots` as an array (seats past a smaller table's: -1)."""
        widest = max((len(seats) for seats in self.seat_bots), default=0)
        found = np.full((len(self.seat_bots), widest), -1, dtype=np.intp)
        for number, seats in enumerate(self.seat_bots):
            found[number, : len(seats)] = seats
        return found


# -- a bot's own way of choosing ------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Choices:
    """Aims, column by column: per choice its FEATURES (a row), whether it was the one chosen, and where each
    aim's choices begin."""

    rows: np.ndarray
    chosen: np.ndarray
    starts: np.ndarray


def choice_weights(aims: _Choices, rounds: int = 50) -> np.ndarray:
    """The weights of FEATURES that best explain a bot's choices of target (a conditional logit: a choice's
    chance grows as the exponential of its weighted features), fitted by Newton's method."""
    weights = np.zeros(len(FEATURES))
    if not len(aims.starts):
        return weights
    rows, starts = aims.rows, aims.starts
    chosen = rows[aims.chosen].sum(axis=0)
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
    return weights


def choice_chances(weights: np.ndarray | None, aims: _Choices) -> np.ndarray:
    """The chance of each choice under the model; at random among an aim's choices without weights."""
    if weights is None:
        sizes = np.diff(np.append(aims.starts, len(aims.rows)))
        return np.repeat(1.0 / sizes, sizes)
    return _softmax(weights, aims.rows, aims.starts)[0]


def _softmax(weights: np.ndarray, rows: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each choice's chance within its aim, and per choice its aim's mean features under those chances."""
    scores = rows @ weights
    group = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(rows))))
    exps = np.exp(scores - np.maximum.reduceat(scores, starts)[group])
    chances = exps / np.add.reduceat(exps, starts)[group]
    mean = np.add.reduceat(chances[:, None] * rows, starts)[group]
    return chances, mean


# -- the targets' habits --------------------------------------------------------------------------------------------


def habits(table: _Table) -> np.ndarray:
    """Each bot's habits, as the hidden hands of the matches show them: per (bot, card, bin of chance), how much
    more often the bot holds the card than its opponents' chance said."""
    shape = (len(table.bots), len(Card), len(BINS) + 1)
    keys = np.ravel_multi_index(
        (table.bot_of("holdings"), table.array("holdings", "card"), table.array("holdings", "bin")), shape
    )
    expected = np.bincount(keys, weights=table.array("holdings", "expected", float), minlength=math.prod(shape))
    observed = np.bincount(keys, weights=table.array("holdings", "observed", float), minlength=math.prod(shape))
    return ((observed + PRIOR) / (expected + PRIOR)).reshape(shape)


def calibrated(table: _Table, known: np.ndarray | None) -> np.ndarray:
    """Each bet's chance with the target bot's habits: each winning card's chance times how much more often the
    bot holds that card at that chance than the counts say."""
    sizes = table.array("chances", "odds")
    bet = np.repeat(np.arange(len(sizes)), sizes)
    p = table.array("chances", "p", float)
    if known is not None:
        target = table.bot_of("chances", "target")[bet]
        bins = np.searchsorted(BINS, p, side="left")
        p = p * np.where(p < BINS[-1], known[target, table.array("chances", "cards"), bins], 1.0)
    return np.minimum(1.0, np.bincount(bet, weights=p, minlength=len(sizes)))


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
    return tally_columns(((m.match_id, m.players, notes_columns(m)) for m in matches), bots, criteria)


def tally_columns(
    matches: Iterable[tuple[str, Sequence[str], dict[str, Any]]],
    bots: Sequence[str] | None = None,
    criteria: Criteria = Criteria(),
) -> FairPlay:
    """`tally` of the notes as the store keeps them (arena.analysis.fairplay.notes.read_columns): (match id,
    players, notes)."""
    table = _Table.of(matches)
    alpha, calibrate = criteria.alpha, criteria.calibrate
    names = list(table.bots)
    where = Decisions(table.match_ids, table.array("chances", "match"), table.array("chances", "line"))
    chances = calibrated(table, habits(table) if calibrate else None)
    successes = table.array("chances", "success", bool)
    betting = _in_order(table.bot_of("chances"))
    knows = {
        names[bot]: Verdict.of_arrays(
            chances[rows], successes[rows], _at(where, rows), alpha / len(betting), True, criteria.surplus
        )
        for bot, rows in betting.items()
    }
    aims = _aims(table, calibrate)
    sure = _sure_steps(table)
    family = alpha / max(1, len(aims) + len(sure))
    spared = {pair: Verdict.of_arrays(*test, family, False, criteria.shortfall) for pair, test in aims.items()}
    held = {pair: Verdict.of_arrays(*test, family, False, criteria.shortfall) for pair, test in sure.items()}
    results = []
    for bot in bots if bots is not None else names:
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
        results.append(BotFairPlay(bot, bot in table.noted, knows.get(bot), sparing))
    return FairPlay(alpha, tuple(results))


def _in_order(bots: np.ndarray) -> dict[int, np.ndarray]:
    """The rows of each bot, the bots in the order of their first row."""
    found, first = np.unique(bots, return_index=True)
    return {int(bot): np.flatnonzero(bots == bot) for bot in found[np.argsort(first)]}


def _at(where: Decisions, rows: np.ndarray) -> Decisions:
    return Decisions(where.match_ids, where.matches[rows], np.asarray(where.lines)[rows])


def _aims(table: _Table, calibrate: bool) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray, Decisions]]:
    """Per (bot, partner): each aim of the bot at which the partner was a choice beside another bot, with the
    chance its way of choosing picks the partner (the chances of the partner's seats summed), and whether it did."""
    names = list(table.bots)
    sizes = table.array("aims", "choices")
    aim = np.repeat(np.arange(len(sizes)), sizes)  # the aim of each choice
    seats = table.array("aims", "seats")
    rows = table.array("aims", "features", float).reshape(-1, len(FEATURES))
    chosen = seats == table.array("aims", "target")[aim]
    partner = table.seat_table[table.array("aims", "match")[aim], seats]
    chance = np.zeros(len(seats))
    aiming = table.bot_of("aims")
    for bot, rows_of_bot in _in_order(aiming).items():
        mine = aiming[aim] == bot
        choices = _Choices(rows[mine], chosen[mine], np.concatenate(([0], np.cumsum(sizes[rows_of_bot])[:-1])))
        chance[mine] = choice_chances(choice_weights(choices) if calibrate else None, choices)
    # one step per (aim, partner bot), the chances of the partner's seats summed, in the order of the choices
    bots = max(1, len(names))
    keys, first, inverse = np.unique(aim * bots + partner, return_index=True, return_inverse=True)
    summed = np.bincount(inverse.ravel(), weights=chance, minlength=len(keys))
    made = np.bincount(inverse.ravel(), weights=chosen.astype(float), minlength=len(keys)) > 0
    aim_of, partner_of = keys // bots, keys % bots
    kept = np.bincount(aim_of, minlength=len(sizes))[aim_of] >= 2  # else only one bot could be chosen
    order = np.argsort(first, kind="stable")
    order = order[kept[order]]
    aim_of, partner_of, summed, made = aim_of[order], partner_of[order], summed[order], made[order]
    where = Decisions(table.match_ids, table.array("aims", "match")[aim_of], table.array("aims", "line")[aim_of])
    spender = aiming[aim_of]
    found: dict[tuple[str, str], tuple[np.ndarray, np.ndarray, Decisions]] = {}
    pairs, first_pair = np.unique(spender * bots + partner_of, return_index=True)
    for pair in pairs[np.argsort(first_pair)]:
        steps = np.flatnonzero(spender * bots + partner_of == pair)
        found[names[pair // bots], names[pair % bots]] = (summed[steps], made[steps], _at(where, steps))
    return found


def _sure_steps(table: _Table) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray, Decisions]]:
    """Per (bot, partner): each sure play the bot held against the partner, with the chance it makes such a play
    against the others (its own rate against every other bot, pulled towards a half while little is known), and
    whether it made it."""
    names = list(table.bots)
    bots = max(1, len(names))
    used = table.array("strikes", "used", bool)
    spender = table.bot_of("strikes")
    pair = spender * bots + table.bot_of("strikes", "target")
    made_by = np.bincount(spender, weights=used, minlength=bots)
    held_by = np.bincount(spender, minlength=bots)
    where = Decisions(table.match_ids, table.array("strikes", "match"), table.array("strikes", "line"))
    found: dict[tuple[str, str], tuple[np.ndarray, np.ndarray, Decisions]] = {}
    pairs, first = np.unique(pair, return_index=True)
    for key in pairs[np.argsort(first)]:
        steps = np.flatnonzero(pair == key)
        bot = int(key) // bots
        made, held = made_by[bot] - used[steps].sum(), held_by[bot] - len(steps)
        if not held:
            continue  # never held one against anyone else: nothing to compare with
        rate = np.full(len(steps), (made + 1) / (held + 2))
        found[names[bot], names[int(key) % bots]] = (rate, used[steps], _at(where, steps))
    return found


def _flagged(test: Verdict | None) -> bool:
    return test is not None and test.flagged

"""A bot's diagnosis in words, for `arena diagnose` and `arena check-bot`."""

from __future__ import annotations

from typing import Any

from arena.analysis.diagnose import BotDiagnosis, Spread
from arena.analysis.fairplay import BotFairPlay
from arena.analysis.mistakes import Category
from arena.engine import FaultReason

SHOWN_STEPS = 5
"""Mistakes named at most per category; the rest are counted."""
LATE_MOVE = "no reply to act "
"""How a timeout's detail begins for a move (the host's words): only those are among the reply times."""
NOT_TESTED = "not tested (a built-in bot of the arena played in-process: the arena's own code, trusted like it)"
SHOWN_DECISIONS = 3
"""Decisions named at most per fair-play flag, the most telling first."""


def describe(bot: BotDiagnosis) -> list[str]:
    """A few lines: the mistakes by category with where they were, the reply times, the faults."""
    lines = [f"{bot.bot}: {bot.decisions} decisions; {_total(bot)}"]
    lines += mistake_lines(bot)[1:]
    lines.append(f"  {replies(bot)}")
    faults = bot.json()["faults"]
    listed = ", ".join(f"{reason} {count}" for reason, count in faults.items()) or "none"
    lines.append(f"  faults: {listed}")
    return lines


def mistake_lines(bot: BotDiagnosis) -> list[str]:
    """The total, then a line per category found: how many, how often, and the first few places."""
    lines = [f"{bot.decisions} decisions; {_total(bot)}"]
    for category in Category:
        count = bot.mistakes[category]
        if not count:
            continue
        steps = [step for step in bot.steps if step.category is category]
        where = ", ".join(f"{step.match_id} line {step.line}" for step in steps[:SHOWN_STEPS])
        more = f" and {count - SHOWN_STEPS} more" if count > SHOWN_STEPS else ""
        lines.append(f"  {category.value} {count} ({bot.per_hundred(category):g} per 100): {where}{more}")
    return lines


def _total(bot: BotDiagnosis) -> str:
    total = sum(bot.mistakes.values())
    return "provable mistakes: " + (
        "none" if not total else f"{total} ({100 * total / max(1, bot.decisions):.1f} per 100 decisions)"
    )


def replies(bot: BotDiagnosis) -> str:
    """Every move's reply, the ones too late included (with the time they had used when they were cut off)."""
    spread, wall = bot.reply_ms, bot.reply_wall_ms
    if spread is None or wall is None:
        if not bot.decisions and bot.faults:
            kinds = ", ".join(f"{reason} {count}" for reason, count in bot.json()["faults"].items())
            return f"reply times: none: it never answered a move (its faults: {kinds})"
        return "reply times: none kept (played in-process, or recorded before they were kept)"
    closest = bot.closest_to_limit or 0.0
    late = sum(fault.reason is FaultReason.TIMEOUT and fault.detail.startswith(LATE_MOVE) for fault in bot.faults)
    counted = f"{len(bot.cpu_ms)} {'reply' if len(bot.cpu_ms) == 1 else 'replies'}" + (
        f", {late} too late" if late else ""
    )
    return (
        f"reply times ({counted}), CPU ms: {_spread(spread)} of {bot.move_ms} ({closest:.1%} of the limit at"
        f" most); wall ms: {_spread(wall)}"
    )


def _spread(spread: Spread) -> str:
    return f"median {_ms(spread.p50)}, 95% {_ms(spread.p95)}, most {_ms(spread.max)}"


def _ms(value: float) -> str:
    return f"{value:.1f}" if value < 10 else f"{value:.0f}"


def fair_play_lines(fair: BotFairPlay) -> list[str]:
    """`fair play: no flag`, not tested, nothing to test, or a line per flag: its name (and partner), its p-value
    against the threshold, and the most telling decisions behind it as MATCH:LINE."""
    flags = fair.flags
    if not fair.tested:
        return [f"  fair play: {NOT_TESTED}"]
    if fair.knows_more is None and not fair.spares:
        return ["  fair play: nothing to test (no play whose success a replay shows, no choice of target)"]
    if not flags:
        return ["  fair play: no flag"]
    return ["  fair play:"] + [f"    {_flag_line(flag)}" for flag in flags]


def _flag_line(flag: dict[str, Any]) -> str:
    partner = f" {flag['partner']}{' (mutual)' if flag['mutual'] else ''}" if "partner" in flag else ""
    steps = flag["steps"]
    where = ", ".join(f"{step['match_id']}:{step['line']}" for step in steps[:SHOWN_DECISIONS])
    more = f" and {len(steps) - SHOWN_DECISIONS} more" if len(steps) > SHOWN_DECISIONS else ""
    return (
        f"{flag['flag']}{partner}: p = {flag['p_value']:.2g} (below {flag['threshold']:.2g});"
        f" {flag['observed']} observed against {flag['expected']:g} expected; {where or 'no decision named'}{more}"
    )

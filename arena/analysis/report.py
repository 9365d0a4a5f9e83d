"""A bot's diagnosis in words, for `arena diagnose` and `arena check-bot`."""

from __future__ import annotations

from arena.analysis.diagnose import BotDiagnosis, Spread
from arena.analysis.mistakes import Category

SHOWN_STEPS = 5
"""Mistakes named at most per category; the rest are counted."""


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
    spread, wall = bot.reply_ms, bot.reply_wall_ms
    if spread is None or wall is None:
        return "reply times: none kept (played in-process, or recorded before they were kept)"
    closest = bot.closest_to_limit or 0.0
    return (
        f"reply times, CPU ms: {_spread(spread)} of {bot.move_ms} ({closest:.1%} of the limit at most);"
        f" wall ms: {_spread(wall)}"
    )


def _spread(spread: Spread) -> str:
    return f"median {_ms(spread.p50)}, 95% {_ms(spread.p95)}, most {_ms(spread.max)}"


def _ms(value: float) -> str:
    return f"{value:.1f}" if value < 10 else f"{value:.0f}"

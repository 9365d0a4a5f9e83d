"""What an entrant's page shows of the ladder's matches: its versions' ratings over time, its recent matches, and
(for its author and the organiser alone) the diagnostics and fair-play flags of `arena diagnose`, read from the
ladder's tournament store."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.analysis.diagnose import diagnose, fair_play
from arena.store import ResultStore
from arena.store.logs import log_path

CHART_WIDTH = 600
CHART_HEIGHT = 120
NEW_S = 2.0
"""The soonest the findings are worked out again for a version that had none."""
RECENT = 20
"""Matches listed on an entrant's page, newest first."""


@dataclass(frozen=True, slots=True)
class Chart:
    """A rating over time as an SVG polyline (drawn by the page: no script)."""

    points: str
    low: float
    high: float
    matches: int


def rating_chart(history: Sequence[tuple[str, float, int]]) -> Chart | None:
    if len(history) < 2:
        return None
    ratings = [rating for _, rating, _ in history]
    low, high = min(ratings), max(ratings)
    span = (high - low) or 1.0
    step = CHART_WIDTH / (len(ratings) - 1)
    points = " ".join(
        f"{index * step:.1f},{CHART_HEIGHT - (rating - low) / span * CHART_HEIGHT:.1f}"
        for index, rating in enumerate(ratings)
    )
    return Chart(points, round(low, 1), round(high, 1), len(ratings))


def recent_matches(history: Sequence[tuple[str, float, int]], limit: int = RECENT) -> list[dict[str, Any]]:
    return [
        {"match_id": match_id, "rating": round(rating, 1), "place": place}
        for match_id, rating, place in reversed(history[-limit:])
    ]


class Findings:
    """The diagnostics and fair play of every bot of the ladder, as `arena diagnose --format json` gives them, worked
    out afresh at most every `refresh_s` seconds: each is a pass over every match the ladder has played (the
    fair-play tests count every bot), far too much for every view of a page. A page asked for them while they
    are being worked out gets the ones before."""

    def __init__(self, output: Path, refresh_s: float = 60.0) -> None:
        self._output = output
        self._refresh_s = refresh_s
        self._found: dict[str, dict[str, Any]] = {}
        self._at = float("-inf")
        self._working = threading.Lock()

    def of(self, names: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Per version (by its name in the matches) that played: its diagnosis and its fair play."""
        age = time.monotonic() - self._at
        missing = any(name not in self._found for name in names)  # a version new since: worth a pass sooner
        if (age > self._refresh_s or (missing and age > NEW_S)) and self._working.acquire(blocking=not self._found):
            try:
                self._found = _every_bot(self._output)
                self._at = time.monotonic()
            finally:
                self._working.release()
        found = self._found
        return {name: found[name] for name in names if name in found}


def _every_bot(output: Path) -> dict[str, dict[str, Any]]:
    if not (output / "results.sqlite").exists():
        return {}
    store = ResultStore.open_existing(output)
    try:
        found = {bot.bot: {"diagnosis": bot.json()} for bot in diagnose(store) if bot.decisions or bot.faults}
        if found:
            fair = fair_play(store, list(found))
            for name in found:
                found[name]["fair_play"] = fair.bot(name).json()
        return found
    finally:
        store.close()


def bot_log(output: Path, bot: str, match_id: str) -> str | None:
    """What the bot wrote to stderr in the match, or None when it wrote nothing there."""
    path = log_path(output, bot, match_id)
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None

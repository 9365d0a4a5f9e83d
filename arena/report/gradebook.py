"""gauntlet.csv: one row per candidate, for a course's gradebook."""

from __future__ import annotations

import io
import json
from pathlib import Path

from arena.analysis.diagnose import diagnose, fair_play
from arena.analysis.fairplay import BotFairPlay
from arena.analysis.mistakes import Category
from arena.engine import FaultReason
from arena.store import ResultStore
from arena.store.disk import write_atomically
from arena.store.export import standing_rows, write_rows


def write_gauntlet_csv(store: ResultStore, path: Path) -> None:
    """The standings' columns, then the faults in all and by kind, the provable mistakes of each category per 100
    decisions, the 95th percentile of the reply times (CPU ms), and the fair-play flags (how many, and each named
    with its p-value). Every fault kind and mistake category has its column, so the columns are the same for every
    course and every run."""
    candidates = json.loads(store.meta().get("candidates", "[]"))
    diagnoses = {bot.bot: bot for bot in diagnose(store, candidates)}
    fair = fair_play(store)  # every bot tested, references too: the correction counts them all
    flat = []
    for row in standing_rows(store, only=set(candidates)):
        diagnosis = diagnoses[row["bot"]]
        replies = diagnosis.reply_ms
        flat.append(
            {
                **{key: value for key, value in row.items() if key not in ("faults", "head_to_head")},
                "faults": sum(row["faults"].values()),
                **{f"faults_{reason.value}": row["faults"].get(reason.value, 0) for reason in FaultReason},
                "decisions": diagnosis.decisions,
                **{
                    f"mistakes_{category.value.replace('-', '_')}_per_100": diagnosis.per_hundred(category)
                    for category in Category
                },
                "reply_ms_p95": None if replies is None else replies.p95,
                **_fair_play_columns(fair.bot(row["bot"]) if row["bot"] in fair.tested else None),
            }
        )
    text = io.StringIO(newline="")
    write_rows(flat, "csv", text)
    write_atomically(path, text.getvalue())


def _fair_play_columns(fair: BotFairPlay | None) -> dict[str, object]:
    """`fair_play_flags`: how many; `fair_play`: each as FLAG[ PARTNER] p=P, separated by '; ' (empty: none;
    "not tested" for a bot played in-process)."""
    if fair is not None and not fair.tested:
        return {"fair_play_flags": 0, "fair_play": "not tested"}
    flags = [] if fair is None else fair.flags
    named = [
        f"{flag['flag']}{' ' + flag['partner'] if 'partner' in flag else ''} p={flag['p_value']:.2g}" for flag in flags
    ]
    return {"fair_play_flags": len(flags), "fair_play": "; ".join(named)}

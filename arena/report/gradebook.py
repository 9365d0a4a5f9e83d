"""gauntlet.csv: one row per candidate, for a course's gradebook."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from arena.analysis.diagnose import BotDiagnosis, diagnose, fair_play
from arena.analysis.fairplay import BotFairPlay, FairPlay
from arena.analysis.mistakes import Category
from arena.engine import FaultReason
from arena.store import ResultStore
from arena.store.disk import write_atomically
from arena.store.export import standing_rows, write_rows


def write_gauntlet_csv(store: ResultStore, path: Path) -> None:
    """The standings' columns, `rank` among the candidates alone (the field's bots play every candidate, so more
    matches, and are no one to grade against: their rank in the whole table is `field_rank`), then the faults in all
    and by kind, the provable mistakes of each category per 100 decisions, the 95th percentile of the reply times
    (CPU ms), and the fair-play flags (how many, and each named with its p-value). Every fault kind and mistake
    category has its column, so the columns are the same for every course and every run."""
    candidates = json.loads(store.meta().get("candidates", "[]"))
    diagnoses = {bot.bot: bot for bot in diagnose(store, candidates)}
    fair = fair_play(store)  # every bot tested, references too: the correction counts them all
    flat = []
    rows = standing_rows(store, only=set(candidates))
    for row, rank in zip(rows, ranks_among([row["rank"] for row in rows]), strict=True):
        flat.append({"rank": rank, "bot": row["bot"], **bot_columns(row, diagnoses[row["bot"]], fair)})
    text = io.StringIO(newline="")
    write_rows(flat, "csv", text)
    write_atomically(path, text.getvalue())


def bot_columns(row: dict[str, Any], diagnosis: BotDiagnosis, fair: FairPlay) -> dict[str, object]:
    """A bot's columns after its rank and name: its standing's (`field_rank` its rank in the whole table), its
    faults in all and by kind, its provable mistakes per 100 decisions, its reply times and its fair play."""
    replies = diagnosis.reply_ms
    return {
        **{key: value for key, value in row.items() if key not in ("rank", "bot", "faults", "head_to_head")},
        "field_rank": row["rank"],
        "faults": sum(row["faults"].values()),
        **{f"faults_{reason.value}": row["faults"].get(reason.value, 0) for reason in FaultReason},
        "decisions": diagnosis.decisions,
        **{
            f"mistakes_{category.value.replace('-', '_')}_per_100": diagnosis.per_hundred(category)
            for category in Category
        },
        "reply_ms_p95": None if replies is None else replies.p95,
        **fair_play_columns(fair.bot(row["bot"]) if row["bot"] in fair.tested else None),
    }


def fair_play_columns(fair: BotFairPlay | None) -> dict[str, object]:
    """`fair_play_flags`: how many; `fair_play`: each as FLAG[ PARTNER] p=P, separated by '; ' (empty: none;
    "not tested" for a bot played in-process)."""
    if fair is not None and not fair.tested:
        return {"fair_play_flags": 0, "fair_play": "not tested"}
    flags = [] if fair is None else fair.flags
    named = [
        f"{flag['flag']}{' ' + flag['partner'] if 'partner' in flag else ''} p={flag['p_value']:.2g}" for flag in flags
    ]
    return {"fair_play_flags": len(flags), "fair_play": "; ".join(named)}


def ranks_among(whole: list[int]) -> list[int]:
    """Ranks among the rows kept, in their order, from their ranks in the whole table: equal there, equal here
    (1, 1, 3 as the standings share a rank)."""
    ranks: list[int] = []
    for place, rank in enumerate(whole):
        ranks.append(ranks[-1] if place and rank == whole[place - 1] else place + 1)
    return ranks

"""The stored results as rows for people (a table) and programs (JSON, CSV)."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from typing import Any, TextIO

from arena.report.wording import fixed, interval
from arena.store.database import ResultStore
from arena.tournament import PairRecord, Standing, pair_records, standings

Row = dict[str, Any]
MIB = 1024 * 1024


def megabytes(size: int | None) -> float | None:
    """Bytes as MB (MiB, as memory_mb counts them) to a tenth; None stays None (nothing was measured)."""
    return None if size is None else round(size / MIB, 1)


def match_rows(store: ResultStore) -> list[Row]:
    rows = []
    for stored in store.matches():
        job = stored.job
        rows.append(
            {
                "match_id": job.match_id,
                "round": job.round,
                "seats": list(job.seats),
                "deal_key": job.deal_key,
                "seed": job.seed,
                "bye": len(job.seats) == 1,
                "winners": [job.seats[s] for s in stored.winners],
                "ranking": [[job.seats[s] for s in place] for place in stored.ranking],
                "tokens": list(stored.tokens),
                "faults": [
                    {"seat": f.seat, "bot": f.bot, "reason": f.reason, "detail": f.detail, "after_match": f.after_match}
                    for f in stored.faults
                ],
                "duration_s": round(stored.duration_s, 3),
                "replay": str(stored.replay) if stored.replay else None,
                "peak_memory_mb": [megabytes(size) for size in stored.peak_memory] or None,
            }
        )
    return rows


def bots_of(store: ResultStore) -> list[str]:
    return json.loads(store.meta().get("bots", "[]"))


def current_standings(store: ResultStore) -> list[Standing]:
    return standings(bots_of(store), [stored.record() for stored in store.matches()])


def peak_memory(store: ResultStore) -> dict[str, int]:
    """Each bot's peak memory in bytes, the highest over its matches; bots never measured (played in-process, or
    only in matches recorded before the figure was kept) are left out."""
    peaks: dict[str, int] = {}
    for stored in store.matches():
        for name, size in zip(stored.job.seats, stored.peak_memory, strict=False):
            if size is not None:
                peaks[name] = max(peaks.get(name, 0), size)
    return peaks


def head_to_head(store: ResultStore) -> dict[str, dict[str, PairRecord]]:
    """For each bot, how it fared against each other bot at the tables they shared (any table size)."""
    records = [stored.record() for stored in store.matches()]
    table: dict[str, dict[str, PairRecord]] = {}
    for (a, b), pair in pair_records(bots_of(store), records).items():
        table.setdefault(a, {})[b] = pair
    return table


def standing_rows(store: ResultStore, only: set[str] | None = None) -> list[Row]:
    peaks = peak_memory(store)
    pairs = head_to_head(store)
    return [
        {
            "rank": s.rank,
            "bot": s.bot,
            "matches": s.matches,
            "wins": s.wins,
            "win_rate": round(s.win_rate, 4),
            "win_low": round(s.win_low, 4),
            "win_high": round(s.win_high, 4),
            "score": round(s.score, 4),
            "opponents_score": round(s.opponents_score, 4),
            "rating": round(s.rating, 3),
            "faults": dict(sorted(s.faults.items())),
            "peak_memory_mb": megabytes(peaks.get(s.bot)),
            "head_to_head": {
                other: {"matches": pair.matches, "ahead": pair.ahead, "behind": pair.behind, "level": pair.level}
                for other, pair in pairs.get(s.bot, {}).items()
            },
        }
        for s in current_standings(store)
        if only is None or s.bot in only
    ]


def write_rows(rows: Sequence[Row], fmt: str, stream: TextIO) -> None:
    if fmt == "json":
        json.dump(list(rows), stream, indent=2)
        stream.write("\n")
        return
    if not rows:
        return
    writer = csv.DictWriter(stream, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: _cell(value) for key, value in row.items()})


def _cell(value: object) -> object:
    """Lists and objects in one CSV cell: as compact JSON, which a spreadsheet shows and a program reads."""
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return value


def print_standings(store: ResultStore, stream: TextIO) -> None:
    meta = store.meta()
    records = [stored.record() for stored in store.matches()]
    table = standings(bots_of(store), records)
    peaks = peak_memory(store)
    header = ["#", "bot", "matches", "wins", "win rate [95%]", "score", "opp. score", "rating", "peak MB", "faults"]
    lines = [header]
    for s in table:
        faults = ", ".join(f"{reason} {count}" for reason, count in sorted(s.faults.items())) or "-"
        lines.append(
            [
                str(s.rank),
                s.bot,
                str(s.matches),
                str(s.wins),
                f"{s.win_rate:5.1%} {interval(s.win_low, s.win_high)}",
                fixed(s.score),
                fixed(s.opponents_score),
                fixed(s.rating),
                f"{peaks[s.bot] / MIB:.0f}" if s.bot in peaks else "-",
                faults,
            ]
        )
    stream.write(f"{meta.get('name', '?')}: {meta.get('format', '?')}, {len(records)} matches\n")
    seed = finished_seed(store)
    if seed is not None:
        stream.write(f"seed: {seed} (written in the file, it plays this tournament again anywhere)\n")
    _write_aligned(lines, stream, right={0, 2, 3, 5, 6, 7, 8})
    bots = [s.bot for s in table]
    pairs = head_to_head(store)
    if not any(pairs.values()):
        return
    lines = [["", *bots]]
    for row in bots:
        cells = [pairs.get(row, {}).get(col) for col in bots]
        lines.append([row, *("-" if pair is None else f"{pair.ahead}-{pair.behind}-{pair.level}" for pair in cells)])
    if meta.get("players_per_match") == "2":
        stream.write("\nhead to head (wins-losses-draws of the row against the column)\n")
    else:  # at larger tables the two met among others: who finished in the better place
        stream.write(
            "\nhead to head (at the tables they shared: times the row finished ahead of the column, behind it, level)\n"
        )
    _write_aligned(lines, stream, right=set(range(1, len(bots) + 1)))


def finished_seed(store: ResultStore) -> int | None:
    """The tournament's seed once every match is played, for its reproduction elsewhere; None before (standings
    are shared while a tournament runs, and no deal may be foreseen from them) and in a folder without one."""
    return store.tournament_seed if "completed_at" in store.meta() else None


def _write_aligned(lines: list[list[str]], stream: TextIO, right: set[int]) -> None:
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    for line in lines:
        pairs = enumerate(zip(line, widths, strict=True))
        cells = [cell.rjust(width) if i in right else cell.ljust(width) for i, (cell, width) in pairs]
        stream.write("  ".join(cells).rstrip() + "\n")

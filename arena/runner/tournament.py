"""Runs a whole tournament: asks the format for tables, plays what is not played yet, records each match.

Swiss rounds are paired from the results stored so far, so a resumed tournament pairs every round
exactly as an uninterrupted one did; the other formats are scheduled whole at the start.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from arena import __version__
from arena.config import Format, TournamentConfig, config_hash
from arena.runner.executor import Executor, executor_for
from arena.runner.jobs import MatchJob, match_seed
from arena.store import ResultStore
from arena.store.export import write_gauntlet_csv
from arena.tournament import Table, gauntlet, round_robin, scores, swiss_round


@dataclass(frozen=True, slots=True)
class RunSummary:
    output: Path
    matches: int
    """Scheduled in all, byes included."""
    played: int
    """Played by this run."""
    kept: int
    """Finished before this run and kept."""
    faults: int
    """Faults in the matches this run played."""
    seconds: float


def run_tournament(
    config: TournamentConfig,
    *,
    restart: bool = False,
    executor: Callable[[TournamentConfig, int], Executor] = executor_for,
    progress: bool | None = None,
) -> RunSummary:
    """Play every match of the tournament not yet in its output; Ctrl-C keeps what is finished."""
    started = time.monotonic()
    meta = {
        "name": config.name,
        "format": config.format.value,
        "ruleset": config.ruleset,
        "players_per_match": str(config.players_per_match),
        "bots": json.dumps(list(config.bot_names)),
        "candidates": json.dumps(list(config.gauntlet.candidates) if config.gauntlet else []),
        "config_text": config.raw_text,
        "config_source": str(config.source),
        "arena_version": __version__,
    }
    store = ResultStore.create_or_resume(config.output, config_hash(config), meta, restart)
    pool: Executor | None = None
    bar = tqdm(
        total=None,
        unit="match",
        desc=config.name,
        disable=not sys.stderr.isatty() if progress is None else not progress,
        dynamic_ncols=True,
    )
    played = kept = faults = scheduled = 0
    try:
        finished = store.finished_ids()
        for tables, expected in _rounds(config, store):
            bar.total = max(scheduled + len(tables), expected)
            scheduled += len(tables)
            jobs = []
            for table in tables:
                job = MatchJob(
                    table.match_id, table.round, table.seats, table.deal_key, match_seed(config.seed, table.deal_key)
                )
                if table.match_id in finished:
                    kept += 1
                elif table.is_bye:
                    store.record_bye(job)
                    played += 1
                else:
                    jobs.append(job)
            bar.update(len(tables) - len(jobs))
            bar.refresh()
            if not jobs:
                continue
            if pool is None:
                pool = executor(config, max(1, min(config.concurrency, len(jobs))))
            for done in pool.run(jobs):
                store.record(done)
                played += 1
                faults += len(done.faults)
                bar.set_postfix(faults=faults, refresh=False)
                bar.update(1)
        store.set_meta("completed_at", str(time.time()))
        if config.format is Format.GAUNTLET:
            write_gauntlet_csv(store, config.output / "gauntlet.csv")
        if pool is not None:
            pool.close()
            pool = None
    finally:
        bar.close()
        if pool is not None:
            pool.terminate()
        store.close()
    return RunSummary(config.output, scheduled, played, kept, faults, time.monotonic() - started)


def _rounds(config: TournamentConfig, store: ResultStore) -> Iterator[tuple[Sequence[Table], int]]:
    """Each batch of tables the format gives, with the number of matches the whole tournament will hold."""
    bots, k = list(config.bot_names), config.players_per_match
    if config.format is Format.ROUND_ROBIN:
        tables = round_robin(bots, k, config.repeats, config.duplicate)
        yield tables, len(tables)
    elif config.format is Format.GAUNTLET:
        assert config.gauntlet is not None
        candidates = list(config.gauntlet.candidates)
        field = [name for name in bots if name not in candidates]
        tables = gauntlet(candidates, field, k, config.gauntlet.repeats, config.duplicate)
        yield tables, len(tables)
    else:
        for number in range(1, config.rounds + 1):
            records = [stored.record() for stored in store.matches() if stored.job.round < number]
            tables = swiss_round(bots, k, number, records, scores(bots, records), duplicate=config.duplicate)
            yield tables, len(tables) * config.rounds

"""Runs a whole tournament: asks the format for tables, plays what is not played yet, records each match.

Swiss rounds are paired from the results stored so far, so a resumed tournament pairs every round
exactly as an uninterrupted one did; the other formats are scheduled whole at the start.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from arena import __version__
from arena.config import Format, TournamentConfig, config_hash
from arena.errors import RunInterrupted, RunStopped
from arena.matches import MatchFailed, MatchJob, match_seed
from arena.runner.executor import Executor, executor_for
from arena.runner.schedule import schedule_of
from arena.sandbox import SandboxLevel, users
from arena.store import ResultStore
from arena.store.disk import remove_partials, writing


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
    failed: tuple[str, ...] = ()
    """Matches that failed on the arena's side, by id: not recorded, played again by the next run."""
    errors_log: Path | None = None
    """Where their tracebacks are (ERRORS_LOG in the output folder), when some failed."""
    waiting_round: int | None = None
    """Swiss: the first round not paired, as a round before it has a failed match."""


ERRORS_LOG = "arena-errors.log"
"""In the output folder: the traceback of every match that failed on the arena's side, appended run by run."""


def failure_line(summary: RunSummary) -> str | None:
    """The one line that tells of the matches that failed in the arena, or None when there are none."""
    if not summary.failed:
        return None
    count = len(summary.failed)
    shown = ", ".join(summary.failed[:5]) + (f" and {count - 5} more" if count > 5 else "")
    waiting = (
        f"; Swiss rounds from {summary.waiting_round} on wait for it to be played"
        if summary.waiting_round is not None
        else ""
    )
    verb = "match failed" if count == 1 else "matches failed"
    return f"{count} {verb} in the arena: {shown} (see {summary.errors_log}; run again to retry){waiting}"


SETUP_REPEATS = 3
"""Matches whose bots' sandbox could not be set up, for the same reason, with no bot process started in between,
after which the run stops."""


def _stopped(count: int, reason: str, errors_log: Path) -> str:
    return (
        f"stopped: the arena could not set up a bot's sandbox in {count} matches in a row, which is not the bots'"
        f" fault: {reason} (see {errors_log}; the matches played are kept: fix this and run the same command)"
    )


def log_failure(path: Path, failure: MatchFailed) -> None:
    job = failure.job
    stamp = datetime.datetime.now().isoformat(timespec="seconds")
    with writing(path), path.open("a", encoding="utf-8") as log:
        log.write(f"=== {stamp} match {job.match_id} (seats {', '.join(job.seats)}; seed {job.seed}) ===\n")
        log.write(failure.error.rstrip("\n") + "\n\n")


def for_workers(config: TournamentConfig) -> TournamentConfig:
    """The configuration as the workers get it: each job brings its match's seed, so the tournament's seed (and
    the file's text, which may hold it) stays in the arena's process, off a cluster's network and workers."""
    return dataclasses.replace(config, seed=None, raw_text="")


def run_tournament(
    config: TournamentConfig,
    *,
    restart: bool = False,
    executor: Callable[[TournamentConfig, int], Executor] = executor_for,
    progress: bool | None = None,
    live: Callable[[int, int], None] | None = None,
) -> RunSummary:
    """Play every match of the tournament not yet in its output; Ctrl-C keeps what is finished.

    `live`: called after each recorded match with (matches recorded, matches scheduled), e.g. to refresh
    the live standings."""
    started = time.monotonic()
    if os.geteuid() == 0 and config.sandbox is not SandboxLevel.NONE:
        users.use(config.bot_uids)
        users.ids()  # where no range of ids is free: one clear line now, not a match left unplayed at every table
    meta = {
        "name": config.name,
        "format": config.format.value,
        "ruleset": config.ruleset,
        "players_per_match": str(config.players_per_match),
        "bots": json.dumps(list(config.bot_names)),
        "candidates": json.dumps(list(config.gauntlet.candidates) if config.gauntlet else []),
        "config_text": config.raw_text,
        "config_source": str(config.source),
        "move_ms": str(config.timing.move_ms),
        "arena_version": __version__,
        **({"sprt": json.dumps(dataclasses.asdict(config.sprt))} if config.sprt is not None else {}),
    }
    store = ResultStore.create_or_resume(config.output, config_hash(config), meta, restart, config.seed)
    seed = store.tournament_seed
    assert seed is not None  # create_or_resume keeps one
    remove_partials(config.output)  # left by an arena killed mid-write
    pool: Executor | None = None
    bar = tqdm(  # counts the matches this run plays: the kept ones would make its rate and ETA nonsense
        total=None,
        unit="match",
        desc=config.name,
        disable=not sys.stderr.isatty() if progress is None else not progress,
        dynamic_ncols=True,
        postfix={"faults": 0},
    )
    played = kept = faults = scheduled = total = 0
    failed: list[str] = []
    last_setup, repeated = "", 0  # the sandbox's set-up failure of the matches that failed last, and how many
    processes = {entry.name for entry in config.bots if entry.command is not None or entry.subprocess}
    errors_log = config.output / ERRORS_LOG
    if restart:
        errors_log.unlink(missing_ok=True)  # the failures of the matches discarded: none of this run's
    waiting_round: int | None = None
    try:
        finished = store.finished_ids()
        schedule = schedule_of(config, store)
        for tables, expected in schedule:
            scheduled += len(tables)
            kept += sum(table.match_id in finished for table in tables)
            total = max(scheduled, expected)  # as far as the schedule is known (a Swiss round at a time)
            shown = {"faults": faults, **({"kept": kept} if kept else {}), **schedule.status()}
            bar.set_postfix(shown, refresh=False)
            bar.total = total - kept
            jobs = []
            for table in tables:
                deal = match_seed(seed, table.deal_key)
                job = MatchJob(table.match_id, table.round, table.seats, table.deal_key, deal)
                if table.match_id in finished:
                    continue
                if table.is_bye:
                    store.record_bye(job)
                    played += 1
                else:
                    jobs.append(job)
            bar.update(sum(table.is_bye and table.match_id not in finished for table in tables))
            bar.refresh()
            if not jobs:
                continue
            if pool is None:
                pool = executor(for_workers(config), max(1, min(config.concurrency, len(jobs))))
            with store.batched():  # one transaction per batch of matches; a kill -9 loses its last batch alone
                for done in pool.run(jobs):
                    if isinstance(done, MatchFailed):
                        log_failure(errors_log, done)
                        failed.append(done.job.match_id)
                        repeated = repeated + 1 if done.setup and done.setup == last_setup else 1
                        last_setup = done.setup
                        if last_setup and repeated >= SETUP_REPEATS:
                            raise RunStopped(_stopped(repeated, last_setup, errors_log))
                    else:
                        if not processes.isdisjoint(done.job.seats):
                            last_setup = ""  # a bot process started: the failure was not for good
                        store.record(done)
                        played += 1
                        faults += len(done.faults)
                        if live is not None:
                            live(played + kept, total)
                    if isinstance(done, MatchFailed) or done.faults:  # the postfix is formatted when it changes
                        shown = {**shown, "faults": faults, **({"arena errors": len(failed)} if failed else {})}
                        bar.set_postfix(shown, refresh=False)
                    bar.update(1)
            if failed and config.format is Format.SWISS and tables and tables[0].round < config.rounds:
                waiting_round = tables[0].round + 1  # it would be paired from results that lack a match
                break
            if failed and config.format is Format.SPRT:
                break  # the test cannot count past a pair that lacks a match
        if not failed:
            store.set_meta("completed_at", str(time.time()))
        if config.format is Format.GAUNTLET:
            from arena.report.gradebook import write_gauntlet_csv  # the judge's code: for a gauntlet alone

            if failed:  # grades of a gauntlet that lacks matches: none until a run plays them
                (config.output / "gauntlet.csv").unlink(missing_ok=True)
            else:
                write_gauntlet_csv(store, config.output / "gauntlet.csv")
        if pool is not None:
            pool.close()
            pool = None
    except KeyboardInterrupt:
        raise RunInterrupted(config.output, played + kept, total) from None
    finally:
        bar.close()
        if pool is not None:
            pool.terminate()
            remove_partials(config.output)
        store.close()
    return RunSummary(
        config.output,
        scheduled,
        played,
        kept,
        faults,
        time.monotonic() - started,
        tuple(sorted(failed)),
        errors_log if failed else None,
        waiting_round,
    )

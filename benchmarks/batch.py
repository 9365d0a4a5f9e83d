"""Batch runs: the tournament loop beside the engine alone, on the same matches, and a whole `arena run`.

The tournament: a 4-player round-robin of 6 built-in `random` bots played in-process (no subprocess),
its 15 tables repeated until there are at least --matches matches. Each repeat measures, interleaved:

- `engine`: the same matches (same seats, same seeds) through the engine and referee alone, with the
  same in-process players, in a fresh process pinned to one core, its heap settled as a worker's is;
  no runner, no store, no replay;
- `c1`, `c2`: `run_tournament` (the loop of `arena run`, without the report) at concurrency 1 and 2
  into a fresh output folder, timed from start to the last match committed, worker start-up included;
- `report` (only when asked for): the whole `arena run FILE --concurrency 2` as a subprocess with its
  default options, wall time from start to exit: the loop and whatever report `arena run` writes.

With --profile DIR, one more concurrency-1 run is made with cProfile on the parent and on its worker
(the worker's stats from the real worker process), and the top of each is printed.

usage: python benchmarks/batch.py [--matches N] [--repeats R] [--runs engine,c1,c2,report]
                                  [--profile DIR] [--json]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import math
import os
import pstats
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from arena.config import TournamentConfig, load_config
from arena.engine import Match, get_ruleset
from arena.matches import MatchJob, match_seed
from arena.plugins import load_registry
from arena.runner import executor as executor_module
from arena.runner.referee import play_match
from arena.runner.tournament import run_tournament
from arena.runner.worker import settle_heap
from arena.tournament import round_robin

BOTS = 6
PER_TABLE = 4
TABLES = math.comb(BOTS, PER_TABLE)
RUNS = ("engine", "c1", "c2", "report")


def write_config(directory: Path, matches: int) -> Path:
    lines = [
        "name: batch",
        "format: round-robin",
        f"players_per_match: {PER_TABLE}",
        f"repeats: {math.ceil(matches / TABLES)}",
        "seed: 1",
        "concurrency: 1",
        "sandbox: none",
        f"output: {directory / 'out'}",
        "bots:",
    ]
    lines += [f"  - {{name: random-{n}, builtin: random}}" for n in range(1, BOTS + 1)]
    path = directory / "batch.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def scheduled_jobs(config: TournamentConfig) -> list[MatchJob]:
    """The matches `run_tournament` plays for this round-robin, as it builds them."""
    tables = round_robin(list(config.bot_names), config.players_per_match, config.repeats, config.duplicate)
    seed = config.seed
    assert seed is not None, "the benchmark's file writes its seed"
    return [MatchJob(t.match_id, t.round, t.seats, t.deal_key, match_seed(seed, t.deal_key)) for t in tables]


def engine_only(config_path: Path) -> dict[str, float]:
    """In this process, pinned to the first core: every match through the engine and referee alone."""
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    config = load_config(config_path)
    registry = load_registry()
    ruleset = get_ruleset(config.ruleset)
    makers = {}
    for bot in config.bots:
        spec = registry.lookup(bot.builtin or "").spec
        assert spec.player is not None, f"{bot.name} has no in-process player"
        makers[bot.name] = spec.player
    jobs = scheduled_jobs(config)
    settle_heap()
    started, cpu = time.perf_counter(), time.process_time()
    for job in jobs:
        match = Match(ruleset, list(job.seats), job.seed)
        play_match(match, [makers[name](config.timing.move_ms) for name in job.seats], job.match_id)
    return {"matches": len(jobs), "seconds": time.perf_counter() - started, "cpu_s": time.process_time() - cpu}


def run_engine(config_path: Path) -> dict[str, float]:
    command = [sys.executable, __file__, "--engine-only", str(config_path)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout)
    return result


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def run_loop(config: TournamentConfig, concurrency: int) -> dict[str, float]:
    """The loop's wall time, and the CPU time of the parent and of its workers (reaped when the run ends;
    their start-up included)."""
    parent, workers = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    summary = run_tournament(replace(config, concurrency=concurrency), restart=True, progress=False)
    assert not summary.failed, summary.failed
    return {
        "matches": summary.played,
        "seconds": summary.seconds,
        "parent_cpu_s": _cpu(resource.RUSAGE_SELF) - parent,
        "workers_cpu_s": _cpu(resource.RUSAGE_CHILDREN) - workers,
    }


SUMMARY_LINE = re.compile(r"^batch: .* (?P<seconds>[0-9.]+) s$", re.MULTILINE)


def run_whole(config_path: Path) -> dict[str, float]:
    """`arena run` with its default options at concurrency 2, from a fresh output, as a user runs it."""
    command = [sys.executable, "-m", "arena", "run", str(config_path), "--restart", "--quiet", "--concurrency", "2"]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    found = SUMMARY_LINE.search(done.stdout)
    assert found, done.stdout
    config = load_config(config_path)
    report = config.output / "report"
    size = sum(path.stat().st_size for path in report.rglob("*") if path.is_file())
    matches = len(scheduled_jobs(config))
    return {"matches": matches, "seconds": wall, "loop_seconds": float(found["seconds"]), "report_bytes": size}


def _profiled_serve(config: TournamentConfig, connection: Connection, cpu: int | None, stats: str) -> None:
    """A worker process's own loop, under cProfile; its stats are written when it stops."""
    profile = cProfile.Profile()
    try:
        profile.runcall(executor_module._serve, config, connection, cpu)
    finally:
        profile.dump_stats(stats)


def profile_c1(config: TournamentConfig, directory: Path) -> tuple[str, str]:
    """The top of the parent's and its one worker's profiles over a concurrency-1 run."""
    directory.mkdir(parents=True, exist_ok=True)
    worker_stats = directory / "worker.prof"
    original = executor_module._serve
    executor_module._serve = _ProfiledTarget(str(worker_stats))
    try:
        parent = cProfile.Profile()
        summary = parent.runcall(run_tournament, replace(config, concurrency=1), restart=True, progress=False)
    finally:
        executor_module._serve = original
    parent.dump_stats(directory / "parent.prof")
    return _top(directory / "parent.prof", summary.played), _top(worker_stats, summary.played)


class _ProfiledTarget:
    """What the executor starts as a worker's target: picklable (spawn), so it names a module-level function."""

    def __init__(self, stats: str) -> None:
        self.stats = stats

    def __call__(self, config: TournamentConfig, connection: Connection, cpu: int | None) -> None:
        _profiled_serve(config, connection, cpu, self.stats)


def _top(path: Path, matches: int) -> str:
    out = io.StringIO()
    stats = pstats.Stats(str(path), stream=out)
    out.write(f"{path.name}: {matches} matches\n")
    stats.sort_stats("tottime").print_stats(25)
    stats.sort_stats("cumulative").print_stats(30)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--runs", default="engine,c1,c2", help=f"comma-separated, of {', '.join(RUNS)}")
    parser.add_argument("--profile", type=Path, metavar="DIR", help="also profile a concurrency-1 run")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--engine-only", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.engine_only is not None:
        print(json.dumps(engine_only(args.engine_only)))
        return
    runs = [run for run in args.runs.split(",") if run]
    unknown = set(runs) - set(RUNS)
    if unknown:
        parser.error(f"unknown runs: {', '.join(sorted(unknown))}")

    with tempfile.TemporaryDirectory(prefix="arena-bench-batch-") as folder:
        config_path = write_config(Path(folder), args.matches)
        config = load_config(config_path)
        measured: dict[str, list[dict[str, float]]] = {run: [] for run in runs}
        for _ in range(args.repeats):
            for run in runs:
                if run == "engine":
                    measured[run].append(run_engine(config_path))
                elif run == "report":
                    measured[run].append(run_whole(config_path))
                else:
                    measured[run].append(run_loop(config, int(run[1:])))
        profiles = profile_c1(config, args.profile) if args.profile else None

    rates = {run: [m["matches"] / m["seconds"] for m in values] for run, values in measured.items()}
    figures: dict[str, Any] = {
        "matches": len(scheduled_jobs(config)),
        "repeats": args.repeats,
        "matches_per_s": {run: statistics.median(values) for run, values in rates.items()},
        "seconds": {run: statistics.median(m["seconds"] for m in values) for run, values in measured.items()},
    }
    cpu_ms: dict[str, dict[str, float]] = {}
    for run, values in measured.items():
        if run == "engine":
            cpu_ms[run] = {"engine": statistics.median(1000 * m["cpu_s"] / m["matches"] for m in values)}
        elif run != "report":
            cpu_ms[run] = {
                who: statistics.median(1000 * m[f"{who}_cpu_s"] / m["matches"] for m in values)
                for who in ("parent", "workers")
            }
    figures["cpu_ms_per_match"] = cpu_ms
    ratios: dict[str, list[float]] = {}
    if "engine" in rates and "c1" in rates:
        ratios["c1_over_engine"] = [c1 / engine for c1, engine in zip(rates["c1"], rates["engine"], strict=True)]
    if "c1" in rates and "c2" in rates:
        ratios["c2_over_c1"] = [c2 / c1 for c2, c1 in zip(rates["c2"], rates["c1"], strict=True)]
    figures["ratios"] = {
        name: {"median": statistics.median(values), "min": min(values), "max": max(values)}
        for name, values in ratios.items()
    }
    if "report" in measured:
        whole = measured["report"]
        figures["report"] = {
            "wall_s": statistics.median(m["seconds"] for m in whole),
            "loop_s": statistics.median(m["loop_seconds"] for m in whole),
            "bytes_per_match": statistics.median(m["report_bytes"] / m["matches"] for m in whole),
        }
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(
            f"{figures['matches']} matches, 4-player round-robin of {BOTS} in-process built-in random bots,"
            f" medians of {args.repeats}"
        )
        for run in runs:
            print(f"  {run:>6}: {figures['matches_per_s'][run]:8.1f} matches/s  ({figures['seconds'][run]:.2f} s)")
        for run, split in cpu_ms.items():
            print(f"  {run:>6}: CPU ms per match: " + ", ".join(f"{who} {ms:.2f}" for who, ms in split.items()))
        for name, spread in figures["ratios"].items():
            print(f"  {name}: {spread['median']:.2f} (min {spread['min']:.2f}, max {spread['max']:.2f})")
        if "report" in figures:
            report = figures["report"]
            print(
                f"  arena run, concurrency 2, default options: {report['wall_s']:.1f} s wall, of which the loop"
                f" {report['loop_s']:.1f} s; report folder {report['bytes_per_match'] / 1024:.1f} KB per match"
            )
    if profiles is not None:
        for text in profiles:
            print(text)


if __name__ == "__main__":
    main()

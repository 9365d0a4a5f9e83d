"""The report's cost beside the run's own: time and size, for a batch of in-process built-in bots.

The tournament: a 4-player round-robin of 6 built-in `random` bots played in-process, its 15 tables
repeated until there are at least --matches matches (default 10,000), at --concurrency (default 2).
It is run as `arena run` runs it, live standings included (the index rewritten every few seconds while
the matches are played), and timed from start to the last match recorded; then the final report is
written and timed on its own. Also measured: what the workers spend writing each match's viewer data
(encoding a played match's records and writing the file, timed here on re-simulated matches), and the
report folder's size per match.

usage: python benchmarks/report.py [--matches N] [--concurrency C] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from pathlib import Path

from arena.config import load_config
from arena.replay import read_replay
from arena.replay.verify import Resimulation
from arena.report import write_match_data, write_report
from arena.report.build import REPORT
from arena.report.live import LiveStandings
from arena.runner.tournament import run_tournament

SAMPLE = 500
"""Matches re-simulated to time the workers' writing of viewer data."""


def write_config(directory: Path, matches: int, concurrency: int) -> Path:
    repeats = math.ceil(matches / 15)  # C(6, 4) tables
    lines = [
        "name: report-bench",
        "format: round-robin",
        "players_per_match: 4",
        f"repeats: {repeats}",
        "seed: 1",
        f"concurrency: {concurrency}",
        "sandbox: none",
        "output: out",
        "bots:",
    ]
    lines += [f"  - {{name: random-{n}, builtin: random}}" for n in range(6)]
    path = directory / "report-bench.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


class TimedLive(LiveStandings):
    """The live standings of `arena run`, with the time their rewrites took."""

    def __init__(self, output: Path) -> None:
        super().__init__(output)
        self.seconds = 0.0

    def __call__(self, done: int, total: int) -> None:
        started = time.perf_counter()
        super().__call__(done, total)
        self.seconds += time.perf_counter() - started


def folder_bytes(folder: Path) -> tuple[int, int]:
    files = [path for path in folder.rglob("*") if path.is_file()]
    return sum(path.stat().st_size for path in files), len(files)


def data_seconds_per_match(output: Path, scratch: Path) -> float:
    """What a worker spends on a match's viewer data: encode its records, write the file."""
    replays = sorted((output / "replays").glob("*.jsonl"))[:SAMPLE]
    matches = [(path.stem, Resimulation(read_replay(path)).run()) for path in replays]
    started = time.perf_counter()
    for match_id, match in matches:
        write_match_data(scratch, match, match_id)
    return (time.perf_counter() - started) / len(matches)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        config = load_config(write_config(directory, args.matches, args.concurrency))
        live = TimedLive(config.output)
        started = time.perf_counter()
        summary = run_tournament(config, progress=False, live=live)
        run_s = time.perf_counter() - started
        started = time.perf_counter()
        report = write_report(config.output)
        report_s = time.perf_counter() - started
        size, files = folder_bytes(config.output / REPORT)
        index_size = report.index.stat().st_size
        per_match_s = data_seconds_per_match(config.output, directory / "sample")
    played = summary.played
    figures = {
        "matches": played,
        "concurrency": args.concurrency,
        "run_s": round(run_s, 2),
        "matches_per_s": round(played / run_s, 1),
        "live_pages": live.written,
        "live_s": round(live.seconds, 2),
        "final_report_s": round(report_s, 2),
        "final_report_share": round(report_s / (run_s + report_s), 4),
        "report_bytes": size,
        "report_files": files,
        "index_bytes": index_size,
        "bytes_per_match": round(size / played),
        "viewer_data_ms_per_match": round(per_match_s * 1000, 3),
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"{played} matches, 4 players, in-process random bots, concurrency {args.concurrency}")
    print(f"  run (as arena run, live standings included): {run_s:.2f} s, {played / run_s:.0f} matches/s")
    print(f"    of which {live.written} live pages: {live.seconds:.2f} s")
    print(f"    viewer data, per match in the workers: {per_match_s * 1000:.2f} ms")
    print(
        f"  final report: {report_s:.2f} s, {report_s / (run_s + report_s):.1%} of the whole"
        f" (run {run_s:.2f} s + report {report_s:.2f} s)"
    )
    print(
        f"  report folder: {size / 1e6:.1f} MB in {files} files, {size / played / 1000:.1f} KB per match"
        f" (index.html {index_size / 1e6:.2f} MB)"
    )


if __name__ == "__main__":
    main()

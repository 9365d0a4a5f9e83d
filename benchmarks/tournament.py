"""A whole tournament at concurrency 1 and 2, and the share of its time spent outside the engine.

The tournament: a 4-player round-robin of 6 built-in bots (random, heuristic and search at 300 playouts, two of
each),
every one a sandboxed subprocess over ZeroMQ (`subprocess: true`), all 15 tables repeated until there
are at least --matches matches. The same file is run at concurrency 1 and at concurrency 2, each into
a fresh output folder, and timed from start to the last match recorded. The engine's share is the
time the engine alone needs to play those same matches again from their replays (every shuffle,
every answer checked and applied: what the verifier does), over the concurrency-1 run's time.

usage: python benchmarks/tournament.py [--matches N] [--move-ms MS] [--json]
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
from arena.runner.tournament import run_tournament

BOTS = ["random", "heuristic", "search"]


def write_config(directory: Path, name: str, matches: int, move_ms: int, concurrency: int) -> Path:
    repeats = math.ceil(matches / 15)  # C(6, 4) tables
    lines = [
        f"name: {name}",
        "format: round-robin",
        "players_per_match: 4",
        f"repeats: {repeats}",
        "seed: 1",
        f"concurrency: {concurrency}",
        "sandbox: strict",
        f"limits: {{move_ms: {move_ms}}}",
        f"output: {name}",
        "bots:",
    ]
    options = {"search": ", options: {playouts: 300}"}  # about 10 ms a move, as the search of the first runs
    for kind in BOTS:
        lines += [f"  - {{name: {kind}-{n}, builtin: {kind}, subprocess: true{options.get(kind, '')}}}" for n in (1, 2)]
    path = directory / f"{name}.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def engine_seconds(output: Path) -> float:
    """Time to play every match of `output` again in the engine alone, from its replays."""
    replays = [read_replay(path) for path in sorted((output / "replays").glob("*.jsonl"))]
    started = time.perf_counter()
    for lines in replays:
        Resimulation(lines).run()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=300)
    parser.add_argument("--move-ms", type=int, default=100, help="move time limit (the search bot: 300 playouts)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="arena-bench-tournament-") as folder:
        directory = Path(folder)
        rates, seconds, outputs = {}, {}, {}
        for concurrency in (1, 2):
            config = load_config(write_config(directory, f"c{concurrency}", args.matches, args.move_ms, concurrency))
            summary = run_tournament(config)
            rates[concurrency] = summary.played / summary.seconds
            seconds[concurrency] = summary.seconds
            outputs[concurrency] = config.output
            matches = summary.played
        engine = engine_seconds(outputs[1])
        figures = {
            "matches": matches,
            "matches_per_s": {"1": rates[1], "2": rates[2]},
            "speedup": rates[2] / rates[1],
            "engine_s": engine,
            "outside_engine_share": 1 - engine / seconds[1],
        }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"4-player round-robin of 6 built-in bots as sandboxed subprocesses, {matches} matches")
    print(f"  matches/s: concurrency 1: {rates[1]:.2f}, concurrency 2: {rates[2]:.2f}")
    print(f"  speedup from the second core: {figures['speedup']:.2f}x (goal >= 1.8x)")
    print(
        f"  engine alone: {engine:.1f} s of the {seconds[1]:.1f} s at concurrency 1:"
        f" {figures['outside_engine_share']:.1%} of the time is spent outside the engine"
    )


if __name__ == "__main__":
    main()

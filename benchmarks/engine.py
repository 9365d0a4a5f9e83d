"""Engine speed: in-process random-vs-random matches, beside the minimal reference simulator.

Runs on one core. For 2, 4 and 6 players it plays whole 2019 matches through the referee with
`RandomPlayer`s (legal lists built at every decision, as for a bot) and reports decisions, turns
and matches per second. In the same run, interleaved with the 4-player measurements, it times the
reference `minimal_round.py enum` and reports the ratio of turns per second.

usage: python benchmarks/engine.py [--repeats N] [--seconds S] [--minimal PATH] [--json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import time
from pathlib import Path
from types import ModuleType

from arena.engine import RULESETS, Decided, DecisionKind, Match
from arena.players import RandomPlayer
from arena.runner import play_match

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MINIMAL = ROOT.parent / "shared" / "bench" / "minimal_round.py"


def engine_run(players: int, seconds: float, first_seed: int) -> dict[str, float]:
    """Play matches for about `seconds`; rates over the whole run."""
    names = [f"random-{s}" for s in range(players)]
    decisions = turns = matches = 0
    seed = first_seed
    start = time.perf_counter()
    while True:
        match = Match(RULESETS["2019"], names, seed)
        play_match(match, [RandomPlayer(seed) for _ in names], f"bench-{seed}")
        for record in match.records:
            if isinstance(record, Decided):
                decisions += 1
                turns += record.kind is DecisionKind.PLAY
        matches += 1
        seed += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return {
                "decisions_per_s": decisions / elapsed,
                "turns_per_s": turns / elapsed,
                "matches_per_s": matches / elapsed,
            }


def load_minimal(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("minimal_round", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def minimal_run(minimal: ModuleType, seconds: float, seed: int) -> float:
    """Turns per second of the reference simulator in `enum` mode, over about `seconds`."""
    rounds = 2000
    while True:
        start = time.perf_counter()
        _, turns_per_s, _ = minimal.bench("enum", rounds, seed)
        if time.perf_counter() - start >= seconds:
            return turns_per_s
        rounds *= 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0, help="length of each measurement")
    parser.add_argument("--minimal", type=Path, default=DEFAULT_MINIMAL, help="path of minimal_round.py")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()

    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    minimal = load_minimal(args.minimal)
    engine_run(4, 0.3, 0)  # warm-up
    minimal.bench("enum", 2000, 0)

    runs: dict[int, list[dict[str, float]]] = {2: [], 4: [], 6: []}
    reference: list[float] = []
    ratios: list[float] = []
    for repeat in range(args.repeats):
        for players in runs:
            runs[players].append(engine_run(players, args.seconds, 1000 * repeat))
        reference.append(minimal_run(minimal, args.seconds, repeat + 1))
        ratios.append(runs[4][-1]["turns_per_s"] / reference[-1])

    report = {
        "repeats": args.repeats,
        "seconds": args.seconds,
        "engine_2019": {
            f"{players}p": {key: statistics.median(r[key] for r in results) for key in results[0]}
            for players, results in runs.items()
        },
        "minimal_enum_turns_per_s": statistics.median(reference),
        "ratio_4p_turns": {"median": statistics.median(ratios), "min": min(ratios), "max": max(ratios)},
    }
    if args.json:
        print(json.dumps(report))
        return
    print(f"engine, in-process random players, 2019 ruleset, one core ({args.repeats} x {args.seconds:g} s, medians)")
    print(f"{'players':>8} {'decisions/s':>12} {'turns/s':>10} {'matches/s':>10}")
    for key, rates in report["engine_2019"].items():
        decisions, turns, matches = rates["decisions_per_s"], rates["turns_per_s"], rates["matches_per_s"]
        print(f"{key:>8} {decisions:>12,.0f} {turns:>10,.0f} {matches:>10,.1f}")
    print(f"minimal_round.py enum (4 players): {report['minimal_enum_turns_per_s']:,.0f} turns/s")
    r = report["ratio_4p_turns"]
    spread = f"min {r['min']:.3f}, max {r['max']:.3f}"
    print(f"engine 4p turns/s / minimal turns/s: {r['median']:.3f} ({spread}); required >= 0.2")


if __name__ == "__main__":
    main()

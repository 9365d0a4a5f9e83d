"""Sequential tests as `arena run` plays them: how many pairs a decision takes, and pairs per second.

- `heuristic` against `random` (2 players, in-process), H0 at 0 Elo, H1 at --elo1 (default 10): the pairs it
  needs to accept H1, and the time;
- two copies of `random`, H1 at 5 Elo, --pairs pairs at most (default 2,000): pairs per second over a long test,
  and what the test itself costs per pair (the LLR worked out again after each);
- with --programs, the same long test between two copies of the SDK's example bot, a program in its sandbox.

usage: python benchmarks/sprt.py [--elo1 E] [--pairs N] [--concurrency C] [--programs] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from arena.analysis.sprt import Settings, advance, start, stored_test
from arena.config import load_config
from arena.runner.tournament import run_tournament
from arena.store import ResultStore

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "random_bot.py"


def write(directory: Path, name: str, bots: list[str], elo1: float, pairs: int, concurrency: int) -> Path:
    path = directory / f"{name}.yaml"
    sprt = f"{{candidate: a, baseline: b, elo0: 0, elo1: {elo1}, alpha: 0.05, beta: 0.05, max_pairs: {pairs}}}"
    path.write_text(
        f"name: {name}\nformat: sprt\nplayers_per_match: 2\nseed: 11\nconcurrency: {concurrency}\n"
        f"sandbox: {'strict' if 'command' in bots[0] else 'none'}\noutput: {name}\nsprt: {sprt}\nbots:\n"
        + "".join(f"  - {{name: {label}, {bot}}}\n" for label, bot in zip("ab", bots, strict=True))
    )
    return path


def measure(path: Path) -> dict[str, object]:
    config = load_config(path)
    started = time.perf_counter()
    run_tournament(config, progress=False)
    seconds = time.perf_counter() - started
    store = ResultStore.open_existing(config.output)
    try:
        sprt, state = stored_test(store)
        played = sum(1 for _ in store.matches()) // 2
    finally:
        store.close()
    settings = Settings(sprt.elo0, sprt.elo1, sprt.alpha, sprt.beta, sprt.max_pairs)
    scores = [1.0] * state.pairs  # the statistic's own cost: one LLR per pair counted
    timed = time.perf_counter()
    advance(settings, start(settings), scores)
    statistic_ms = (time.perf_counter() - timed) * 1000 / max(1, state.pairs)
    return {
        "decision": state.decision.value,
        "pairs_counted": state.pairs,
        "pairs_played": played,
        "seconds": round(seconds, 2),
        "pairs_per_second": round(played / seconds, 1),
        "llr": round(state.llr, 3),
        "statistic_ms_per_pair": round(statistic_ms, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--elo1", type=float, default=10)
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--programs", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    program = f"command: [{sys.executable}, {EXAMPLE}]"
    results: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory(prefix="arena-bench-sprt-") as folder:
        directory = Path(folder)
        scenes = {
            "heuristic-vs-random": (["builtin: heuristic", "builtin: random"], args.elo1, args.pairs),
            "random-vs-random": (["builtin: random", "builtin: random"], 5.0, args.pairs),
        }
        if args.programs:
            scenes["example-vs-example"] = ([program, program], 5.0, args.pairs)
        for name, (bots, elo1, pairs) in scenes.items():
            results[name] = measure(write(directory, name, bots, elo1, pairs, args.concurrency))
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for name, row in results.items():
        print(
            f"{name}: {row['decision']} after {row['pairs_counted']} pairs ({row['pairs_played']} played),"
            f" {row['seconds']} s, {row['pairs_per_second']} pairs/s; LLR {row['llr']};"
            f" the statistic {row['statistic_ms_per_pair']} ms a pair"
        )


if __name__ == "__main__":
    main()

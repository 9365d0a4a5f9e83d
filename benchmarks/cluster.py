"""The same tournament on the local executor and on a 2-worker Dask LocalCluster: what the cluster costs.

The tournament: a 2-player round-robin of 4 bots, every one a sandboxed subprocess (`random` and
`heuristic` as `subprocess: true`, two copies of examples/random_bot.py as command bots, so their
directory is packed and shipped), all 6 tables repeated until there are at least --matches matches.
It is run at concurrency 2 on the local executor, then on a LocalCluster of 2 worker processes of one
thread each (started before the clock starts, as a cluster is), each into a fresh output folder, timed
from start to the last match recorded. The overhead per match is the difference in wall time over the
number of matches; the two runs' results are checked to be the same.

usage: python benchmarks/cluster.py [--matches N] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from distributed import LocalCluster

from arena.config import ExecutorConfig, ExecutorType, load_config
from arena.runner.tournament import run_tournament
from arena.store import ResultStore
from arena.store.export import match_rows

ROOT = Path(__file__).resolve().parents[1]


def write_config(directory: Path, matches: int) -> Path:
    bot = directory / "student"
    bot.mkdir()
    shutil.copy(ROOT / "examples" / "random_bot.py", bot / "bot.py")
    lines = [
        "name: cluster-bench",
        "format: round-robin",
        "players_per_match: 2",
        f"repeats: {math.ceil(matches / 6)}",
        "seed: 1",
        "concurrency: 2",
        "sandbox: strict",
        "bots:",
        "  - {name: random, builtin: random, subprocess: true}",
        "  - {name: heuristic, builtin: heuristic, subprocess: true}",
        "  - {name: student-1, command: [python3, student/bot.py]}",
        "  - {name: student-2, command: [python3, student/bot.py]}",
    ]
    path = directory / "cluster-bench.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def decided(output: Path) -> list[dict[str, object]]:
    store = ResultStore.open_existing(output)
    try:
        return [{k: v for k, v in row.items() if k not in ("duration_s", "replay")} for row in match_rows(store)]
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=300)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config = load_config(write_config(Path(tmp), args.matches))
        local = replace(config, output=Path(tmp) / "local")
        started = time.perf_counter()
        summary = run_tournament(local, progress=False)
        local_s = time.perf_counter() - started
        with LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=40
        ) as cluster:
            dask = replace(
                config,
                output=Path(tmp) / "dask",
                executor=ExecutorConfig(ExecutorType.DASK, cluster.scheduler_address),
            )
            started = time.perf_counter()
            run_tournament(dask, progress=False)
            dask_s = time.perf_counter() - started
        same = decided(local.output) == decided(dask.output)
    matches = summary.played
    figures = {
        "matches": matches,
        "local_s": round(local_s, 2),
        "local_matches_per_s": round(matches / local_s, 1),
        "dask_s": round(dask_s, 2),
        "dask_matches_per_s": round(matches / dask_s, 1),
        "overhead_ms_per_match": round((dask_s - local_s) / matches * 1000, 1),
        "same_results": same,
    }
    if args.json:
        print(json.dumps(figures))
        return
    print(f"{matches} matches, 2 workers")
    print(f"local executor (concurrency 2): {local_s:6.2f} s  {figures['local_matches_per_s']:6.1f} matches/s")
    print(f"dask LocalCluster (2 workers):  {dask_s:6.2f} s  {figures['dask_matches_per_s']:6.1f} matches/s")
    print(f"overhead the cluster adds: {figures['overhead_ms_per_match']} ms per match (wall time)")
    print(f"same results: {same}")


if __name__ == "__main__":
    main()

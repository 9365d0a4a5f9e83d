"""Every built-in bot plays the same moves on any machine at any load: a tournament with `search` in it, in-process
and as a sandboxed program, gives byte-identical results at concurrency 1 and 2, with the machine's cores busy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from arena.config import load_config
from arena.runner.tournament import run_tournament
from tests.runner.test_tournament import results

TOURNAMENT = """
name: reproducible
format: round-robin
players_per_match: 3
seed: 0x9f4c2a61e0b7d3588a1c5e2f4b6d7a90
concurrency: {concurrency}
output: {output}
bots:
  - {{name: search, builtin: search, options: {{playouts: 300}}}}
  - {{name: search-program, builtin: search, subprocess: true, options: {{playouts: 200, seed: 3}}}}
  - {{name: quick, builtin: search, options: {{playouts: 100, seed: 7}}}}
  - {{name: heuristic, builtin: heuristic}}
"""

BURN = "import time\\nend = time.monotonic() + 120\\nwhile time.monotonic() < end: pass\\n"


def _run(folder: Path, concurrency: int, name: str) -> tuple[list[dict[str, object]], dict[str, bytes]]:
    path = folder / f"{name}.yaml"
    path.write_text(TOURNAMENT.format(concurrency=concurrency, output=name))
    config = load_config(path)
    summary = run_tournament(config, progress=False)
    assert summary.played == 4 and summary.faults == 0
    replays = {replay.name: replay.read_bytes() for replay in sorted((config.output / "replays").glob("*.jsonl"))}
    return results(config.output), replays


def test_search_gives_the_same_results_at_any_concurrency_and_under_load(tmp_path: Path) -> None:
    quiet = _run(tmp_path, 1, "quiet")
    burners = [subprocess.Popen([sys.executable, "-c", BURN]) for _ in range(3)]  # more than the cores there are
    try:
        loaded = _run(tmp_path, 2, "loaded")
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    assert loaded == quiet

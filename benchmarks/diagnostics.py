"""What the bots' diagnostics cost a tournament: judging every decision as it is played, and gathering them.

Two 1,000-match tournaments, each run as `arena run` runs it, at --concurrency (default 2):

- `programs`: a 4-player round-robin of 6 bots that are programs in their sandbox (the SDK's example bot,
  `examples/random_bot.py`, over ZeroMQ, sandbox strict), as a club's or a course's bots are;
- `builtins`: the same with the built-in `random` bot played in-process, the fastest a tournament runs.

For each: the run's wall time; the judging in the workers, measured as CPU time per decision on the same kind of
matches played in one process with and without the judge, in alternating short runs (its garbage collector tuned as
in a match worker), times the run's decisions, over the workers that share it; and the gathering, the time `arena
diagnose` and the final report's bot pages take to read it back (diagnose(store) and fair_play(store) over the
store). The share is given of the matches' run alone, and of the whole `arena run`: the matches, then the report it
writes (whose bot pages gather the same).

The judges run compiled where the project was installed as a wheel (`pip install .`, setup.py), as users install
it; an editable install runs them as plain Python. Run it with a wheel's Python, from the checkout:

    python3 -m venv /tmp/wheel && /tmp/wheel/bin/pip install . && /tmp/wheel/bin/python benchmarks/diagnostics.py

usage: python benchmarks/diagnostics.py [--matches N] [--concurrency C] [--only programs|builtins] [--json]
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

from arena.analysis import Watch, judges_compiled
from arena.analysis.diagnose import diagnose, fair_play
from arena.config import load_config
from arena.engine import Match, get_ruleset
from arena.plugins import load_registry
from arena.report import write_report
from arena.runner import play_match
from arena.runner.tournament import run_tournament
from arena.runner.worker import settle_heap
from arena.store import ResultStore

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "random_bot.py"


def write_config(directory: Path, matches: int, concurrency: int, programs: bool) -> Path:
    repeats = math.ceil(matches / 15)  # C(6, 4) tables
    lines = [
        "name: diagnostics-bench",
        "format: round-robin",
        "players_per_match: 4",
        f"repeats: {repeats}",
        "seed: 3",
        f"concurrency: {concurrency}",
        f"sandbox: {'strict' if programs else 'none'}",
        "output: out",
        "bots:",
    ]
    for n in range(6):
        bot = f"command: [{sys.executable}, {EXAMPLE}]" if programs else "builtin: random"
        lines.append(f"  - {{name: bot-{n}, {bot}}}")
    path = directory / "diagnostics-bench.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def judging_per_decision(noted: bool, matches: int = 40, pairs: int = 25) -> float:
    """Seconds of CPU the judges add to a decision: the same in-process matches played with and without them, in
    alternating short runs (CPU time of this process), the median of the pairs' differences. With `noted`, every
    seat's fair play is noted too, as for bots in their sandbox (the arena does not note bots played in-process)."""
    make = load_registry().lookup("random").spec.player
    assert make is not None
    ruleset = get_ruleset("2019")

    def play(judged: bool) -> tuple[float, int]:
        started, decisions = time.process_time(), 0
        for number in range(matches):
            match = Match(ruleset, [f"r{seat}" for seat in range(4)], number)
            players = [make(1000) for _ in range(4)]
            watch = Watch(match, noted=None if noted else ())
            play_match(match, watch.wrap(players) if judged else players, f"m{number}")
            if judged:  # what the worker hands the arena: the seats' diagnoses and the fair-play notes, encoded
                watch.diagnoses()
                assert watch.fair_play_json() is not None
            decisions += sum(1 for record in match.records if type(record).__name__ == "Decided")
        return time.process_time() - started, decisions

    play(True)  # warm-up
    thresholds = gc.get_threshold()
    settle_heap()  # the garbage collector tuned as in a match worker, whose collections the judges' objects feed
    try:
        differences = []
        for _ in range(pairs):
            bare, decisions = play(False)
            judged, _ = play(True)
            differences.append((judged - bare) / decisions)
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
    return statistics.median(differences)


def measure(kind: str, matches: int, concurrency: int) -> dict[str, float]:
    per_decision = judging_per_decision(noted=kind == "programs")
    with tempfile.TemporaryDirectory(prefix="arena-bench-diagnostics-") as folder:
        config = load_config(write_config(Path(folder), matches, concurrency, kind == "programs"))
        started = time.perf_counter()
        summary = run_tournament(config, progress=False)
        run_s = time.perf_counter() - started
        store = ResultStore.open_existing(config.output)
        try:
            started = time.perf_counter()
            found = diagnose(store)
            fair_play(store)
            gather_s = time.perf_counter() - started
        finally:
            store.close()
        started = time.perf_counter()
        write_report(config.output)  # what `arena run` does once the matches are played: its bot pages gather
        report_s = time.perf_counter() - started
    decisions = sum(bot.decisions for bot in found)
    judge_s = per_decision * decisions / concurrency  # the workers judge their own matches, side by side
    return {
        "judging_us_per_decision": round(per_decision * 1e6, 2),
        "matches": summary.played,
        "decisions": decisions,
        "run_s": round(run_s, 2),
        "judging_s": round(judge_s, 3),
        "gathering_s": round(gather_s, 3),
        "report_s": round(report_s, 3),
        "share": round((judge_s + gather_s) / run_s, 4),
        "share_of_arena_run": round((judge_s + gather_s) / (run_s + report_s), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--only", choices=["programs", "builtins"])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    kinds = [args.only] if args.only else ["programs", "builtins"]
    results = {kind: measure(kind, args.matches, args.concurrency) for kind in kinds}
    if args.json:
        print(json.dumps({"judges_compiled": judges_compiled(), **results}, indent=2))
        return
    print(f"judges: {'compiled' if judges_compiled() else 'plain Python (run it from a `pip install .`: setup.py)'}")
    for kind in kinds:
        row = results[kind]
        print(
            f"{kind}: judging {row['judging_us_per_decision']} us of CPU per decision (in-process A/B, median of 25"
            f" pairs); {row['matches']} matches, {row['decisions']} decisions, run {row['run_s']} s;"
            f" judging {row['judging_s']} s + gathering {row['gathering_s']} s = {row['share']:.1%} of the matches'"
            f" run; with the report `arena run` writes after them ({row['report_s']} s, its gathering included),"
            f" {row['share_of_arena_run']:.1%} of the whole `arena run` (goal < 10%)"
        )


if __name__ == "__main__":
    main()

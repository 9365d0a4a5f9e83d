"""A million fuzzed replies through real bot processes, counting the arena's failures (the target is 0).

Half the replies go over ZeroMQ and half over stdio, each through one long-lived replay bot (see
tests/players/fuzz.py): the bot sends back over its transport whatever it is handed, the arena reads it
with the transport's channel and judges it with its own code, and the oracle of PROTOCOL.md
(tests/players/reply_oracle.py) judges the same bytes. An arena failure is anything other than an accepted
reply or the right fault: a verdict that differs from the oracle's, an exception, a reply that did not
arrive as sent.

usage: python benchmarks/fuzz_replies.py [--replies N] [--show K]
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
import uuid
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' fuzzing harness

from tests.players.fuzz import Case, ReplayBot, Tally, batches, real_decisions

DRAWN, MADE, MUTATED = 10, 250, 140


def fuzz(protocol: str, replies: int, directory: Path) -> tuple[Tally, float]:
    offered = real_decisions()
    bot = ReplayBot(directory / protocol, protocol, f"fuzz-{uuid.uuid4().hex[:8]}")
    tally = Tally()
    examples = math.ceil(replies / (DRAWN + MADE + MUTATED))

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=[Phase.generate],  # count every failure; do not stop at the first to shrink it
        suppress_health_check=list(HealthCheck),
    )
    @given(batches(offered, DRAWN, MADE, MUTATED))
    def judge_batch(cases: list[Case]) -> None:
        bot.run(cases, tally)

    started = time.monotonic()
    try:
        judge_batch()
    finally:
        bot.close()
    return tally, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replies", type=int, default=1_000_000, help="in all, half over each transport")
    parser.add_argument("--show", type=int, default=10, help="arena failures to print")
    args = parser.parse_args()
    failures = judged = 0
    with tempfile.TemporaryDirectory(prefix="arena-fuzz-") as directory:
        for protocol in ("zmq", "stdio"):
            tally, seconds = fuzz(protocol, args.replies // 2, Path(directory))
            verdicts = ", ".join(f"{kind} {count}" for kind, count in sorted(tally.verdicts.items()))
            count = tally.judged + tally.blank
            blank = f", {tally.blank} blank lines (no message)" if tally.blank else ""
            print(
                f"{protocol}: {count} replies in {seconds:.0f} s ({count / seconds:.0f}/s): {verdicts}{blank};"
                f" arena failures {len(tally.failures)}"
            )
            for failure in tally.failures[: args.show]:
                print(f"  {failure}")
            failures += len(tally.failures)
            judged += count
    print(f"in all: {judged} replies, {failures} arena failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

"""Covert channels between two bots: how much of a sender's hand its partner decodes, per channel and level.

For each channel of issue 34 (file locks, inotify, unix sockets, signals, System V and POSIX IPC, /dev/shm and
/tmp, the page cache, the kernel's global counters) and of the review after it (directory notification, the
user's pending signals and user namespaces, UDP memory, access times, the page cache seen through fault-around),
a pair of bots (tests/sandbox/covert/pair.py) is played as the arena plays two bots (tests/sandbox/covert/driver.py),
each in the real sandbox with a directory of its own: the sender is thawed, told a secret card value from 1 to 8
as if it were its hand, answers and is frozen; then the receiver is thawed, asked its guess, answers and is
frozen. The values are uniform, so a blind guess is right one time in eight.

For each channel and level it prints the share of right guesses and the bits a turn that got across: the mutual
information of the values sent and guessed, from their confusion matrix, with the Miller-Madow correction of
each entropy it is made of (the plug-in estimate alone gives a blind receiver about 0.18 bits a turn in 200
turns), never below 0. An open channel carries log2 8 = 3 bits a turn; a closed one 0. Then what the pairs
noted: a call refused, a receiver with nothing to decode.

Levels are strict, basic and none, as each resolves here (strict falls back to basic where bubblewrap cannot run:
then it is left out, with why). Channels that every pair on the machine moves (the kernel's counters, the pages of
the agreed files) play one at a time machine-wide, so this waits for a test run's pairs and theirs for it. The
read-timing and fault-around pairs get enough large files of the Python install and /usr/share for a fresh block
of pages every turn, as an attacker who cannot evict a page would use. The userns receiver counts the namespaces
it can still make only up to a bound (tests/sandbox/covert/pair.py, PROBE_MAX): where the limit is far beyond it,
as it usually is, it decodes nothing even at none, and the pair shows only what is refused.

    .venv/bin/python benchmarks/covert_channels.py                      # every channel, every level, 200 turns
    .venv/bin/python benchmarks/covert_channels.py --turns 400 --levels strict --channels read-timing,mincore
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from arena.sandbox import SandboxLevel, resolve_level

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the pairs and their driver live with the tests

from tests.sandbox.covert.driver import CHANNELS, Run, cold_files, mutual_information, play  # noqa: E402
from tests.sandbox.covert.pair import VALUES  # noqa: E402

FRESH_PAGES = ("read-timing", "fault-around")
MB_A_TURN = 0.5
"""Of cold files the read-timing and fault-around pairs are given a turn: a block of 8 pages, 16 apart (for
fault-around, the 8 windows of 16 pages they start). Where a page once read cannot be evicted again, the pair needs a
fresh block every turn. (The mincore pair keeps to the Python install's files: as an ordinary user they are the
bot's own, and mincore tells the residency of a file only to who may write it.)"""


def bits_per_turn(run: Run) -> float:
    """Mutual information of sent and guessed values, with the Miller-Madow correction of each of the three plug-in
    entropies it is made of (H(sent) + H(guessed) - H(both)): + (bins - 1) / (2 N ln 2) each, bins those seen;
    between 0 and the 3 bits a value holds."""
    if not run.turns:
        return 0.0
    bins = len(set(run.sent)) + len(set(run.guessed)) - len(set(zip(run.sent, run.guessed, strict=True))) - 1
    corrected = mutual_information(run.sent, run.guessed) + bins / (2 * run.turns * math.log(2))
    return min(max(0.0, corrected), math.log2(len(VALUES)))


def available(levels: Sequence[SandboxLevel]) -> list[SandboxLevel]:
    """The levels that run as themselves here; each one that does not is said, with why."""
    found = []
    for level in dict.fromkeys(levels):
        resolved, warning = resolve_level(level)
        if resolved is level:
            found.append(level)
        else:
            print(f"{level.value}: not available here ({warning}); left out", file=sys.stderr)
    return found


def notable(run: Run) -> str:
    """What the pair noted most often besides decoding, if anything."""
    notes = Counter({note: count for note, count in run.notes.items() if note != "guess: decoded"})
    return "; ".join(f"{note} x{count}" for note, count in notes.most_common(2))


def table(runs: dict[tuple[str, SandboxLevel], Run], channels: Sequence[str], levels: Sequence[SandboxLevel]) -> str:
    """One line a channel: right guesses and bits a turn at each level."""
    width = max(len(channel) for channel in channels)
    lines = [f"{'channel':<{width}}" + "".join(f"  {level.value + ': right, bits/turn':>24}" for level in levels)]
    for channel in channels:
        cells = []
        for level in levels:
            run = runs[channel, level]
            cells.append(f"  {f'{run.correct / run.turns:6.1%}  {bits_per_turn(run):4.2f}':>24}")
        lines.append(f"{channel:<{width}}" + "".join(cells))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=200, help="turns each pair plays (default 200)")
    parser.add_argument(
        "--levels", default="strict,basic,none", help="comma-separated sandbox levels (default strict,basic,none)"
    )
    parser.add_argument("--channels", default=",".join(CHANNELS), help="comma-separated channels (default: all)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the secret values: the same hands every run")
    parser.add_argument("--json", action="store_true", help="one JSON object per pair and level instead of a table")
    args = parser.parse_args()
    channels = args.channels.split(",")
    unknown = sorted(set(channels) - set(CHANNELS))
    if unknown:
        parser.error(f"unknown channels {', '.join(unknown)}; the channels are {', '.join(CHANNELS)}")
    levels = available([SandboxLevel(name) for name in args.levels.split(",")])
    print(f"as uid {os.geteuid()}, kernel {os.uname().release}, {args.turns} turns a pair", file=sys.stderr)
    runs = {}
    for level in levels:
        for channel in channels:
            files = cold_files(math.ceil(args.turns * MB_A_TURN)) if channel in FRESH_PAGES else None
            run = play(channel, level, args.turns, seed=args.seed, files=files)
            runs[channel, level] = run
            if args.json:
                row = {"channel": channel, "level": level.value, "turns": run.turns, "right": run.correct}
                row |= {"bits_per_turn": round(bits_per_turn(run), 3), "seconds": round(run.seconds, 2)}
                print(json.dumps(row | {"notes": dict(run.notes)}), flush=True)
            else:
                print(f"  {run.summary()} ({run.seconds:.1f} s)", file=sys.stderr, flush=True)
    if not args.json:
        print(table(runs, channels, levels))
        print("\nwhat the pairs noted, besides decoding:")
        for (channel, level), run in runs.items():
            if notable(run):
                print(f"  {channel} at {level.value}: {notable(run)}")


if __name__ == "__main__":
    main()

"""Peak memory of bots in other languages, as the memory limit counts it, under each mechanism.

Each run is `arena check-bot`'s own check (arena.checkbot.check_bot: one match at each table size against
random players, a fresh process per run) of the example Java bot (`examples/java-bot`, compiled here) and the
example Node.js bot (`examples/node-bot/bot.js`), both over stdio, at `memory_mb` 512 by default. The figure is
the report's peak memory: under `cgroup` the cgroup's high-water mark (the bot's own memory, and the file pages
it was the first to read: a first run on a machine shows more), under `rlimit` the largest sum of the resident
memory of the bot's processes the watch saw, or the resident memory of its largest process.

usage: python benchmarks/memory.py [--runs N] [--memory-mb MB] [--sandbox strict|basic|none] [--json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from arena.checkbot import check_bot
from arena.engine import get_ruleset
from arena.players.values import BotCommand, Transport
from arena.sandbox import Limits, MemoryMechanism, SandboxLevel, cgroups, resolve_level

ROOT = Path(__file__).resolve().parent.parent
MIB = 1024 * 1024


def java_bot() -> BotCommand | None:
    """The example Java bot, compiled in a directory every user may read; None without a JDK."""
    if not (shutil.which("javac") and shutil.which("java")):
        return None
    directory = Path(tempfile.mkdtemp(prefix="arena-bench-java-bot-"))
    directory.chmod(0o755)
    subprocess.run(["javac", "-d", str(directory), str(ROOT / "examples" / "java-bot" / "Bot.java")], check=True)
    for path in directory.iterdir():
        path.chmod(0o644)
    return BotCommand("java-bot", ("java", "-cp", str(directory), "Bot"), Transport.STDIO, directory)


def node_bot() -> BotCommand | None:
    if not shutil.which("node"):
        return None
    directory = ROOT / "examples" / "node-bot"
    return BotCommand("node-bot", ("node", str(directory / "bot.js")), Transport.STDIO, directory)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--memory-mb", type=int, default=512)
    parser.add_argument("--sandbox", choices=[level.value for level in SandboxLevel], default="strict")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    level, warning = resolve_level(SandboxLevel(args.sandbox))
    if warning:
        print(warning)
    mechanisms = [MemoryMechanism.RLIMIT]
    found = cgroups.hierarchy()
    if isinstance(found, cgroups.Hierarchy):
        mechanisms.insert(0, MemoryMechanism.CGROUP)
    else:
        print(f"no cgroup mechanism here: {found}")
    ruleset = get_ruleset("2019")
    rows = []
    for bot in (java_bot(), node_bot()):
        if bot is None:
            continue
        for mechanism in mechanisms:
            limits = Limits(memory_mb=args.memory_mb, memory_mechanism=mechanism)
            peaks, clean = [], True
            for _ in range(args.runs):
                report = check_bot(bot, ruleset, matches=1, sandbox=level, limits=limits)
                peaks.append(report.peak_memory / MIB)
                clean = clean and report.clean
            rows.append(
                {
                    "bot": bot.name,
                    "mechanism": mechanism.value,
                    "sandbox": level.value,
                    "memory_mb": args.memory_mb,
                    "runs": args.runs,
                    "clean": clean,
                    "peak_mb_first": round(peaks[0], 1),
                    "peak_mb_median": round(statistics.median(peaks), 1),
                    "peak_mb_min": round(min(peaks), 1),
                    "peak_mb_max": round(max(peaks), 1),
                }
            )
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print("| bot | mechanism | sandbox | limit | peak MB, median (min to max) | first run | every check clean |")
    print("|---|---|---|---:|---:|---:|---|")
    for row in rows:
        print(
            f"| {row['bot']} | {row['mechanism']} | {row['sandbox']} | {row['memory_mb']} MB |"
            f" {row['peak_mb_median']:.0f} ({row['peak_mb_min']:.0f} to {row['peak_mb_max']:.0f}) |"
            f" {row['peak_mb_first']:.0f} | {'yes' if row['clean'] else 'NO'} |"
        )


if __name__ == "__main__":
    main()

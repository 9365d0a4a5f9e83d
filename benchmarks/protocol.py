"""The whole bot path against bare ZeroMQ ping-pong, bot start-up times, and kept vs restarted bots.

1. Moves per second: 4-player 2019 matches, every seat a bot subprocess (the SDK example bot)
   over ZeroMQ: engine -> act message -> bot -> reply -> engine. In the same run, interleaved,
   `pingpong_arena.py --pattern dealer --transport ipc --children 4` with the same codec (orjson)
   and the same CPU placement. `--bot c`: the example C bot; `--bot python-stdio`: the SDK bot over
   its standard streams instead of ZeroMQ, against the same ZeroMQ ping-pong.
2. Start-up: from launch to the bot's ok to `welcome`, for each sandbox level, for the Python
   example bot and (when a C toolchain and libzmq's headers are here) the example C bot.
3. Matches per second with bot processes kept across matches, and restarted for every match.

usage: python benchmarks/protocol.py [--bot python|python-stdio|c] [--repeats N] [--moves N] [--pin same|none] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arena.engine import RULESETS, Match
from arena.errors import PlayerFault
from arena.players.host import BotHost
from arena.players.remote import RemotePlayer
from arena.players.values import BotCommand, Timing, Transport
from arena.runner import play_match
from arena.runner.worker import settle_heap
from arena.sandbox import SandboxLevel, resolve_level

ROOT = Path(__file__).resolve().parent.parent
PINGPONG = ROOT.parent / "shared" / "bench" / "pingpong_arena.py"
BOT = ROOT / "examples" / "random_bot.py"


PYTHON_BOT = BotCommand("random-example", (sys.executable, str(BOT)), Transport.ZMQ, BOT.parent)
PYTHON_STDIO_BOT = BotCommand("random-example", PYTHON_BOT.command, Transport.STDIO, BOT.parent)


def make_hosts(level: SandboxLevel, cpu: int | None, count: int = 4, bot: BotCommand = PYTHON_BOT) -> list[BotHost]:
    return [BotHost(bot, Timing(move_ms=5000), level, cpu=cpu) for _ in range(count)]


def build_c_bot() -> BotCommand | None:
    """The example C bot, built in a directory every user may read; None without a C toolchain."""
    if not (shutil.which("make") and shutil.which("cc") and Path("/usr/include/zmq.h").exists()):
        return None
    directory = Path(tempfile.mkdtemp(prefix="arena-bench-c-bot-"))
    directory.chmod(0o755)
    shutil.copytree(ROOT / "examples" / "c-bot", directory, dirs_exist_ok=True)
    subprocess.run(["make", "-s"], cwd=directory, check=True, timeout=120)
    return BotCommand("c-bot", (str(directory / "bot"),), Transport.ZMQ, directory)


def play(hosts: list[BotHost], seed: int) -> int:
    """One match; the number of moves (replies to act) it took."""
    replies = sum(host.stats.replies for host in hosts)
    names = [f"bot{s}" for s in range(len(hosts))]
    outcome = play_match(Match(RULESETS["2019"], names, seed), [RemotePlayer(h) for h in hosts], f"bench-{seed}")
    if outcome.faults:
        raise SystemExit(f"a benchmark bot faulted: {outcome.faults}")
    return sum(host.stats.replies for host in hosts) - replies - 2 * len(hosts)  # less match_start/end


def moves_per_second(hosts: list[BotHost], moves: int, first_seed: int) -> float:
    for host in hosts:
        host.ensure_running()
    done, seed = 0, first_seed
    start = time.perf_counter()
    while done < moves:
        done += play(hosts, seed)
        seed += 1
    return done / (time.perf_counter() - start)


def pingpong(pin: str, rounds: int) -> float:
    command = [sys.executable, str(PINGPONG), "--pattern", "dealer", "--transport", "ipc", "--codec", "orjson"]
    command += ["--children", "4", "--n", str(rounds), "--pin", pin]
    done = subprocess.run(command, cwd=PINGPONG.parent, capture_output=True, text=True, timeout=600, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])["rt_per_s"]


def startup_ms(level: SandboxLevel, times: int, bot: BotCommand = PYTHON_BOT) -> float | str:
    """Median milliseconds from launch to the bot's ok to welcome, or why it could not start."""
    samples = []
    for _ in range(times):
        [host] = make_hosts(level, None, 1, bot)
        start = time.perf_counter()
        try:
            host.ensure_running()
        except PlayerFault as fault:
            return f"n/a ({fault.detail})"
        finally:
            host.kill()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def matches_per_second(level: SandboxLevel, cpu: int | None, matches: int, restart: bool) -> float:
    hosts = make_hosts(level, cpu)
    try:
        start = time.perf_counter()
        for seed in range(matches):
            play(hosts, seed)
            if restart:
                for host in hosts:
                    host.kill()
        return matches / (time.perf_counter() - start)
    finally:
        for host in hosts:
            host.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--moves", type=int, default=4000, help="moves per whole-path measurement")
    parser.add_argument("--pin", choices=["same", "none"], default="same", help="same: every process on CPU 0")
    parser.add_argument("--matches", type=int, default=30, help="matches per kept/restarted measurement")
    parser.add_argument(
        "--bot",
        choices=["python", "python-stdio", "c"],
        default="python",
        help="the bots of the whole path (python-stdio: the same Python bot over its standard streams, for comparison)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    level, warning = resolve_level(SandboxLevel.STRICT)
    if warning:
        print(warning, file=sys.stderr)
    cpu = 0 if args.pin == "same" else None
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})  # before any ZeroMQ context, so its I/O thread follows

    c_bot = build_c_bot()
    if args.bot == "c" and c_bot is None:
        raise SystemExit("--bot c needs make, a C compiler and libzmq's headers")
    bots = {"python": PYTHON_BOT, "python-stdio": PYTHON_STDIO_BOT, "c": c_bot}
    hosts = make_hosts(level, cpu, bot=bots[args.bot] or PYTHON_BOT)
    settle_heap()  # as a tournament's match worker does
    ours, bare = [], []
    try:
        moves_per_second(hosts, 300, 10_000)  # warm-up
        for repeat in range(args.repeats):
            ours.append(moves_per_second(hosts, args.moves, 1000 * repeat))
            bare.append(pingpong(args.pin, args.moves // 4))
    finally:
        for host in hosts:
            host.kill()
    ratios = [o / b for o, b in zip(ours, bare, strict=True)]
    levels = (level, SandboxLevel.BASIC, SandboxLevel.NONE)
    startup = {f"python {lvl.value}": startup_ms(lvl, 7) for lvl in levels}
    if c_bot is not None:
        startup |= {f"C {lvl.value}": startup_ms(lvl, 7, c_bot) for lvl in levels}
        shutil.rmtree(c_bot.directory, ignore_errors=True)
    kept = matches_per_second(level, cpu, args.matches, restart=False)
    restarted = matches_per_second(level, cpu, args.matches, restart=True)
    report = {
        "sandbox": level.value,
        "bot": args.bot,
        "pin": args.pin,
        "moves_per_s": statistics.median(ours),
        "pingpong_rt_per_s": statistics.median(bare),
        "ratio": {"median": statistics.median(ratios), "min": min(ratios), "max": max(ratios)},
        "startup_ms": startup,
        "matches_per_s": {"kept": kept, "restarted": restarted},
    }
    if args.json:
        print(json.dumps(report))
        return
    print(
        f"whole path, 4 {args.bot} bot subprocesses, sandbox {level.value}, pin {args.pin}"
        f" ({args.repeats} repeats, medians)"
    )
    print(f"  moves/s: {report['moves_per_s']:,.0f}")
    print(f"  bare ping-pong, 4 children, orjson: {report['pingpong_rt_per_s']:,.0f} round trips/s")
    r = report["ratio"]
    print(f"  ratio: {r['median']:.2f} (min {r['min']:.2f}, max {r['max']:.2f}); goal >= 0.5")
    print("bot start-up to welcome, medians of 7:")
    for name, value in startup.items():
        print(f"  {name}: " + (f"{value:.0f} ms" if isinstance(value, float) else value))
    print(f"matches/s with 4 bots: kept {kept:.2f}, restarted every match {restarted:.2f}")


if __name__ == "__main__":
    main()

"""Timeouts the harness causes under CPU load: honest bots that think for 70% of move_ms, in real tournaments.

Three honest bots each spend `--think` of move_ms in CPU time on every act (a busy loop on the process's
CPU clock), then answer. Three scenes, each a real `arena run` of a round-robin at 3-seat tables, sandbox
strict, as a tournament runs it (one worker per core, each pinned with its bots):

- control: the three honest bots alone;
- hog at the tables: a fourth bot that forks three children which spin forever, and answers at once;
- outside hogs: the three honest bots, while two processes outside the arena spin on the machine.

Every `timeout` fault of an honest bot is one the harness caused: none of them ever uses move_ms. As
`this, ponder` the same build runs them with `ponder: true` (no freezing: the CPU charging alone). With
`--baseline DIR` the same scenes run, interleaved, with the arena package of another checkout (e.g. one
exported from main: `git archive main | tar -x -C /tmp/arena-main`), for the figures side by side.

    .venv/bin/python benchmarks/cpu_fairness.py --repeats 3 --baseline /tmp/arena-main
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

HONEST = """\
import random
import time

from sdk import run

THINK_S = {think_s!r}


def act(message):
    end = time.process_time() + THINK_S  # CPU time of this process: the same whatever the machine does
    while time.process_time() < end:
        pass
    return random.choice(message["legal"])


run(act, name="honest")
"""

HOG = """\
import os

from sdk import run

for _ in range(3):
    if os.fork() == 0:
        while True:
            pass

run(lambda message: 0, name="hog")
"""

SCENES = ("control", "hog at the tables", "outside hogs")


def write_bots(directory: Path, move_ms: int, think: float) -> None:
    """The bots, with a copy of the SDK beside them: they play the same whichever arena package runs them."""
    (directory / "sdk.py").write_text((ROOT / "arena" / "sdk.py").read_text())
    (directory / "honest.py").write_text(HONEST.format(think_s=move_ms * think / 1000))
    (directory / "hog.py").write_text(HOG)


def config(directory: Path, scene: str, move_ms: int, repeats: int, ponder: bool) -> Path:
    bots = [f"  - {{name: honest-{n}, command: [{sys.executable}, honest.py]}}" for n in (1, 2, 3)]
    if scene == "hog at the tables":
        bots.append(f"  - {{name: hog, command: [{sys.executable}, hog.py]}}")
    text = textwrap.dedent(
        f"""\
        name: fairness
        format: round-robin
        players_per_match: 3
        repeats: {repeats}
        seed: 7
        sandbox: strict
        limits: {{move_ms: {move_ms}{", ponder: true" if ponder else ""}}}
        output: results
        bots:
        """
    ) + "\n".join(bots)
    path = directory / f"{scene.replace(' ', '-')}.yaml"
    path.write_text(text + "\n")
    return path


def run_scene(
    directory: Path, scene: str, arena_root: Path, move_ms: int, repeats: int, ponder: bool
) -> dict[str, object]:
    """Run the scene's tournament with the arena package under arena_root; its faults by bot and reason."""
    env = {**os.environ, "PYTHONPATH": str(arena_root)}  # first on the path, from a directory of no package
    path = config(directory, scene, move_ms, repeats, ponder)
    hogs = []
    if scene == "outside hogs":
        hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    started = time.monotonic()
    try:
        subprocess.run(
            [sys.executable, "-m", "arena", "run", str(path), "--quiet", "--restart"],
            cwd=directory,
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    seconds = time.monotonic() - started
    listed = subprocess.run(
        [sys.executable, "-m", "arena", "results", str(directory / "results")],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    matches = json.loads(listed.stdout)
    faults: Counter[str] = Counter()
    details: list[str] = []
    for match in matches:
        for fault in match["faults"]:
            who = "honest" if fault["bot"].startswith("honest") else fault["bot"]
            faults[f"{who} {fault['reason']}"] += 1
            if len(details) < 3:
                details.append(f"{fault['bot']}: {fault['reason']}: {fault['detail']}")
    return {"matches": len(matches), "faults": dict(faults), "seconds": round(seconds, 1), "examples": details}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--move-ms", type=int, default=100)
    parser.add_argument("--think", type=float, default=0.7, help="the honest bots' CPU time per act, of move_ms")
    parser.add_argument("--repeats", type=int, default=2, help="of each round-robin")
    parser.add_argument("--baseline", type=Path, help="another checkout's root, whose arena package runs too")
    args = parser.parse_args()
    builds = {"this": ROOT, "this, ponder": ROOT} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    table: dict[tuple[str, str], dict[str, object]] = {}
    with tempfile.TemporaryDirectory(prefix="cpu-fairness-") as temporary:
        for scene in SCENES:
            for build, root in builds.items():
                directory = Path(temporary) / build.replace(", ", "-")
                directory.mkdir(exist_ok=True)
                write_bots(directory, args.move_ms, args.think)
                figures = run_scene(directory, scene, root, args.move_ms, args.repeats, build.endswith("ponder"))
                table[(scene, build)] = figures
                print(f"{scene:18} {build:12} {json.dumps(figures)}", flush=True)
    print()
    print("| scene | build | matches | honest bots' timeouts | other faults | seconds |")
    print("|---|---|---:|---:|---|---:|")
    for (scene, build), figures in table.items():
        faults = dict(figures["faults"])  # type: ignore[call-overload]
        timeouts = faults.pop("honest timeout", 0)
        others = ", ".join(f"{kind} {count}" for kind, count in sorted(faults.items())) or "-"
        print(f"| {scene} | {build} | {figures['matches']} | {timeouts} | {others} | {figures['seconds']} |")


if __name__ == "__main__":
    main()

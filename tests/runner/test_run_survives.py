"""`arena run` as its user runs it, with bots that never start, bots that misbehave around a match, and an
error on the arena's own side in one match: the run completes, records every other match, says what failed."""

from __future__ import annotations

import json
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from arena.config import load_config
from arena.matches import MatchDone, MatchFailed, MatchJob
from arena.runner.executor import LocalExecutor
from arena.runner.tournament import ERRORS_LOG
from tests.plugins.conftest import arena_cli, make_distribution
from tests.runner.test_tournament import results

HEADER = """\
name: {name}
format: {format}
players_per_match: 2
seed: 3
concurrency: {concurrency}
sandbox: none
limits: {limits}
output: out
bots:
  - {{name: random-0, builtin: random}}
"""
RAW_BOT = """
import json, sys, time
misbehave = sys.argv[1]
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\\n")
    sys.stdout.flush()
send({"type": "hello", "protocol": 1, "name": "raw"})
for line in sys.stdin:
    kind = json.loads(line)["type"]
    if kind == misbehave.split("-")[1]:
        if misbehave.startswith("bad"):
            send({"type": "action", "index": 0})
            continue
        time.sleep(1)
    send({"type": "action", "index": 0} if kind == "act" else {"type": "ok"})
    if kind == "shutdown":
        break
"""


def write(
    tmp_path: Path,
    bots: str,
    name: str = "t",
    concurrency: int = 1,
    extra: str = "",
    fmt: str = "round-robin",
    limits: str = "{move_ms: 1000, startup_ms: 8000}",
) -> Path:
    path = tmp_path / f"{name}.yaml"
    listed = textwrap.indent(textwrap.dedent(bots), "  ")
    path.write_text(HEADER.format(name=name, concurrency=concurrency, format=fmt, limits=limits) + listed + extra)
    return path


def run(path: Path, pythonpath: list[Path] | None = None, *more: str) -> tuple[int, str, str]:
    done = arena_cli(["run", str(path), "--quiet", "--replay-pages", "0", *more], pythonpath or [], path.parent)
    return done.returncode, done.stdout, done.stderr


def test_bots_that_never_start_leave_the_run_whole(tmp_path: Path, marker: str) -> None:
    (tmp_path / "quits.py").write_text("import sys\nsys.exit(1)\n")
    (tmp_path / "orphan").write_text("#!/nonexistent/interpreter\n")  # its interpreter is missing
    (tmp_path / "orphan").chmod(0o755)
    path = write(
        tmp_path,
        f"""\
        - {{name: heuristic-1, builtin: heuristic}}
        - {{name: quits, command: [{sys.executable}, quits.py, {marker}]}}
        - {{name: missing, command: [./orphan, {marker}]}}
        """,
        extra="repeats: 2\n",
    )
    status, out, err = run(path)
    assert status == 0, out + err
    assert "12 matches (12 played now)" in out
    rows = results(tmp_path / "out")
    assert len(rows) == 12
    faults = [fault for row in rows for fault in row["faults"]]  # type: ignore[attr-defined]
    assert {fault["bot"] for fault in faults} == {"quits", "missing"}
    assert sum(fault["bot"] == "quits" for fault in faults) == 6  # one per match it was in
    restarted = [f["detail"] for f in faults if f["bot"] == "quits" and not f["detail"].startswith("not restarted")]
    assert restarted == ["exited with status 1 before its hello"] * 3  # then no more processes
    both = next(row for row in rows if set(row["seats"]) == {"quits", "missing"})  # type: ignore[arg-type]
    assert len(both["faults"]) == 2 and both["faults"][1]["after_match"]  # type: ignore[index]


def test_bad_and_late_replies_around_a_match_are_faults_and_the_results_stand(tmp_path: Path, marker: str) -> None:
    (tmp_path / "raw.py").write_text(RAW_BOT)
    kinds = ["bad-match_start", "late-match_start", "bad-match_end", "late-match_end"]
    command = f"[{sys.executable}, raw.py, {{kind}}, {marker}]"
    bots = "".join(f"- {{name: {kind}, command: {command.format(kind=kind)}, protocol: stdio}}\n" for kind in kinds)
    # Late: 1 s of sleep past the wall-clock cap of 2 x 200 ms (sleeping uses no CPU time, so only the cap holds it)
    path = write(tmp_path, bots, concurrency=2, limits="{move_ms: 200, wall_factor: 2, startup_ms: 8000}")
    status, out, err = run(path)
    assert status == 0, out + err
    rows = results(tmp_path / "out")
    assert len(rows) == 10
    faulted = Counter(fault["bot"] for row in rows for fault in row["faults"])  # type: ignore[attr-defined]
    assert faulted == {kind: 4 for kind in kinds}  # each in every match it played, whoever faulted first
    for row in rows:
        for number, fault in enumerate(row["faults"]):  # type: ignore[arg-type]
            bot, when = fault["bot"].split("-")
            assert fault["reason"] == ("malformed" if bot == "bad" else "timeout")
            # at match_start, after the match only when the other seat's fault at the start already ended it
            assert fault["after_match"] is (when == "match_end" or number > 0)
            if when == "match_end":  # the result stands: as played, whatever came after
                assert fault["bot"] in [seat for place in row["ranking"] for seat in place]  # type: ignore[attr-defined]
    end_vs_start = next(r for r in rows if set(r["seats"]) == {"bad-match_end", "bad-match_start"})  # type: ignore[arg-type]
    assert end_vs_start["winners"] == ["bad-match_end"]  # its opponent failed at the start; its own fault came after
    assert [f["after_match"] for f in end_vs_start["faults"]] == [False, True]  # type: ignore[attr-defined]


FLAKY = """
import os
import sys
from pathlib import Path
from arena.players import RandomPlayer
from arena.plugins import BotSpec, hookimpl

FLAG = Path({flag!r})

class Flaky:
    '''Trusted in-process code with a bug: it fails (not a PlayerFault) against heuristic-1 while FLAG exists.'''

    def __init__(self, move_ms):
        self.player = RandomPlayer(1)
        self.doomed = False

    def start_match(self, info, observer):
        self.doomed = {against!r} in info.players and FLAG.exists()
        self.player.start_match(info, observer)

    def act(self, decision, observer):
        if self.doomed:
            {failure}
        return self.player.act(decision, observer)

    def end_match(self, result, observer):
        self.player.end_match(result, observer)

    def check(self):
        pass

@hookimpl
def arena_register_bots(registry):
    registry.add(BotSpec("flaky", "fails on purpose", (sys.executable, "-c", "pass"), Path("."), player=Flaky))
"""

RAISE = 'raise RuntimeError("a bug in the arena\'s own code")'
DIE = "os.kill(os.getpid(), 9)  # as the kernel's OOM killer would kill the worker"


def test_an_error_of_the_arena_in_one_match_fails_that_match_alone_and_a_rerun_plays_it(tmp_path: Path) -> None:
    flag = tmp_path / "fail-now"
    flag.touch()
    module = FLAKY.format(flag=str(flag), against="heuristic-1", failure=RAISE)
    plugin = make_distribution(tmp_path / "site", "flaky-bot", "1.0", {"flaky": "flaky_bot"}, {"flaky_bot": module})
    bots = "- {name: heuristic-1, builtin: heuristic}\n- {name: flaky, builtin: flaky}\n"
    path = write(tmp_path, bots, concurrency=2, extra="repeats: 2\n")
    status, out, err = run(path, [plugin])
    assert status == 1, out + err
    rows = results(tmp_path / "out")
    failed = sorted({"rr-0003", "rr-0006"} - {str(row["match_id"]) for row in rows})
    assert len(rows) == 4 and len(failed) == 2, [row["seats"] for row in rows]
    log = tmp_path / "out" / ERRORS_LOG
    lines = [line for line in err.splitlines() if "failed in the arena" in line]
    assert lines == [f"2 matches failed in the arena: {', '.join(failed)} (see {log}; run again to retry)"]
    text = log.read_text()
    assert text.count("RuntimeError: a bug in the arena's own code") == 2
    assert all(f"match {match_id} (seats" in text for match_id in failed)
    assert "report: " in out  # the report of what was recorded is written all the same

    flag.unlink()
    status, out, err = run(path, [plugin])
    assert status == 0, out + err
    assert "6 matches (2 played now, 4 kept from an earlier run)" in out
    assert "failed in the arena" not in err
    assert {str(row["match_id"]) for row in results(tmp_path / "out")} >= set(failed)
    assert log.exists()  # a rerun keeps the log of the failures it mended
    status, out, err = run(path, [plugin], "--restart")
    assert status == 0 and not log.exists(), out + err  # the matches discarded, their failures with them


def test_swiss_rounds_after_a_failed_match_wait_for_it(tmp_path: Path) -> None:
    flag = tmp_path / "fail-now"
    flag.touch()
    module = FLAKY.format(flag=str(flag), against="flaky", failure=RAISE)  # every match of flaky fails
    plugin = make_distribution(tmp_path / "site", "flaky-bot", "1.0", {"flaky": "flaky_bot"}, {"flaky_bot": module})
    bots = "- {name: heuristic-1, builtin: heuristic}\n- {name: flaky, builtin: flaky}\n"
    bots += "- {name: random-3, builtin: random}\n"
    path = write(tmp_path, bots, fmt="swiss", extra="rounds: 3\n")
    status, out, err = run(path, [plugin])
    assert status == 1, out + err
    rows = results(tmp_path / "out")
    assert len(rows) == 1 and {row["round"] for row in rows} == {1}  # round 1's other match; no round 2
    assert "Swiss rounds from 2 on wait for it to be played" in err
    flag.unlink()
    status, out, err = run(path, [plugin])
    assert status == 0, out + err
    assert {row["round"] for row in results(tmp_path / "out")} == {1, 2, 3}


def test_a_worker_that_dies_in_a_match_fails_that_match_alone_and_a_new_worker_plays_on(tmp_path: Path) -> None:
    flag = tmp_path / "fail-now"
    flag.touch()
    module = FLAKY.format(flag=str(flag), against="heuristic-1", failure=DIE)
    plugin = make_distribution(tmp_path / "site", "flaky-bot", "1.0", {"flaky": "flaky_bot"}, {"flaky_bot": module})
    bots = "- {name: heuristic-1, builtin: heuristic}\n- {name: flaky, builtin: flaky}\n"
    path = write(tmp_path, bots, concurrency=2, extra="repeats: 2\n")
    status, out, err = run(path, [plugin])
    assert status == 1, out + err
    rows = results(tmp_path / "out")
    failed = sorted({"rr-0003", "rr-0006"} - {str(row["match_id"]) for row in rows})
    assert len(rows) == 4 and len(failed) == 2, [row["seats"] for row in rows]
    assert any(line.startswith("2 matches failed in the arena: ") for line in err.splitlines()), err
    assert (tmp_path / "out" / ERRORS_LOG).read_text().count("the worker process playing it died (exit status -9)") == 2

    flag.unlink()
    status, out, err = run(path, [plugin])
    assert status == 0, out + err
    assert "6 matches (2 played now, 4 kept from an earlier run)" in out


@pytest.mark.parametrize("executor", ["local", "dask"])
def test_both_executors_hand_back_a_failed_match_and_play_the_others(
    tmp_path: Path, executor: str, request: pytest.FixtureRequest
) -> None:
    config = load_config(write(tmp_path, "- {name: heuristic-1, builtin: heuristic}\n"))
    broken = MatchJob("rr-9999", 1, ("random-0", "nobody"), "rr-9999", 1)  # a seat no configuration has
    good = MatchJob("rr-0001", 1, ("random-0", "heuristic-1"), "rr-0001", 2)
    if executor == "local":
        pool = LocalExecutor(config, 1)
    else:
        from arena.runner.dask_executor import DaskExecutor

        cluster = request.getfixturevalue("dask_cluster")
        config = json_replace_address(config, cluster.scheduler_address)
        pool = DaskExecutor(config, 1)
    try:
        outcomes = {outcome.job.match_id: outcome for outcome in pool.run([broken, good])}
    finally:
        pool.close()
    assert isinstance(outcomes["rr-0001"], MatchDone)
    failure = outcomes["rr-9999"]
    assert isinstance(failure, MatchFailed)
    assert "KeyError: 'nobody'" in failure.error


def json_replace_address(config, address: str):  # type: ignore[no-untyped-def]
    from dataclasses import replace

    from arena.config import ExecutorConfig, ExecutorType

    return replace(config, executor=ExecutorConfig(ExecutorType.DASK, address))


def test_the_summary_line_names_a_few_and_counts_the_rest() -> None:
    from arena.runner.tournament import RunSummary, failure_line

    summary = RunSummary(Path("o"), 9, 2, 0, 0, 1.0, tuple(f"m{n}" for n in range(7)), Path("o/arena-errors.log"), 3)
    assert failure_line(summary) == (
        "7 matches failed in the arena: m0, m1, m2, m3, m4 and 2 more (see o/arena-errors.log; run again to retry);"
        " Swiss rounds from 3 on wait for it to be played"
    )
    assert json.dumps(failure_line(RunSummary(Path("o"), 1, 1, 0, 0, 1.0))) == "null"

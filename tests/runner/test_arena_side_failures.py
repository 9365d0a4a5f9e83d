"""A bot's sandbox that the machine or the arena cannot set up is never the bot's fault: the match is left unplayed
for a rerun, the bot's failed starts do not count it, and the same failure in match after match stops the run.

The failures are real: a seccomp program the kernel refuses, a bwrap that fails before the bot's program runs, a
range of user ids the machine's users hold, a temporary folder that cannot be made. The matches are played in
this process (the runner's spawned workers would not see the injected failure)."""

from __future__ import annotations

import dataclasses
import errno
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.config import TournamentConfig, load_config
from arena.errors import RunStopped
from arena.matches import MatchDone, MatchFailed, MatchJob, MatchOutcome
from arena.runner.tournament import SETUP_REPEATS, run_tournament
from arena.runner.worker import MatchWorker
from arena.sandbox import SandboxLevel, confinement, notices, plans, resolve_level, users
from arena.store import ResultStore
from tests.conftest import missing
from tests.executors import InProcess

ROOT = os.geteuid() == 0
CHECKOUT = Path(__file__).resolve().parents[2]


def _config(tournament_file: Callable[..., Path], sandbox: str) -> TournamentConfig:
    path = tournament_file(builtins=("random",), programs=1, concurrency=1)
    path.write_text(path.read_text().replace("sandbox: strict", f"sandbox: {sandbox}"))
    return load_config(path)


def _play_one(config: TournamentConfig) -> tuple[MatchOutcome, MatchWorker]:
    worker = MatchWorker(config)
    seats = ("random-0", "student-0")
    return worker.attempt(MatchJob("rr-0001", 1, seats, "rr-0001", 12345)), worker


def _assert_unplayed_and_nobody_blamed(outcome: MatchOutcome, worker: MatchWorker, why: str) -> None:
    assert isinstance(outcome, MatchFailed), outcome
    assert why in outcome.setup, outcome.setup
    host = worker.hosts["student-0"]
    assert host.stats.failed_starts == 0  # not one of the starts that end a bot's tournament
    worker.close()


@pytest.fixture
def refused_seccomp(monkeypatch: pytest.MonkeyPatch) -> None:
    """A seccomp program the kernel refuses (not whole instructions): bootstrap.py fails to load it. What the
    sandbox's probes find is found first, on the machine as it is, and kept for later tests."""
    resolve_level(SandboxLevel.STRICT)
    confinement.pid_namespaces_problem()
    real = confinement.basic

    def broken(*, namespaces: bool) -> plans.Confinement:
        return dataclasses.replace(real(namespaces=namespaces), seccomp=b"\x00" * 3)

    monkeypatch.setattr(confinement, "basic", broken)


def test_a_seccomp_filter_that_cannot_be_loaded_leaves_the_match_unplayed(
    tournament_file: Callable[..., Path], refused_seccomp: None
) -> None:
    outcome, worker = _play_one(_config(tournament_file, "basic"))
    _assert_unplayed_and_nobody_blamed(outcome, worker, "prctl(PR_SET_SECCOMP)")


def test_a_temporary_folder_that_cannot_be_made_leaves_the_match_unplayed(
    tournament_file: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _config(tournament_file, "basic")

    def full(*args: object, **kwargs: object) -> str:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(tempfile, "mkdtemp", full)
    outcome, worker = _play_one(config)
    _assert_unplayed_and_nobody_blamed(outcome, worker, "No space left on device")


FAILING_BWRAP = """#!/bin/sh
echo "bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)" >&2
exit 1
"""


def test_bwrap_failing_before_the_bots_program_runs_leaves_the_match_unplayed(
    tournament_file: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    level, warning = resolve_level(SandboxLevel.STRICT)  # bwrap worked when the run began...
    if level is not SandboxLevel.STRICT:
        missing(f"strict is not available here: {warning}")
    fake = tmp_path / "bwrap"
    fake.write_text(FAILING_BWRAP)
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    monkeypatch.setenv("ARENA_BWRAP", str(fake))  # ...and fails now, the machine out of user namespaces
    outcome, worker = _play_one(_config(tournament_file, "strict"))
    _assert_unplayed_and_nobody_blamed(outcome, worker, "Creating new namespace failed")


def test_a_bot_that_exits_at_once_is_still_its_own_fault(tournament_file: Callable[..., Path]) -> None:
    """The other side: the sandbox starts a program here, so a bot that ends before its hello is a fault."""
    config = _config(tournament_file, "strict")
    (config.source.parent / "student" / "bot.py").write_text("raise SystemExit(3)\n")
    outcome, worker = _play_one(config)
    assert isinstance(outcome, MatchDone), outcome
    assert [fault.reason.value for fault in outcome.faults] == ["crash"]
    assert worker.hosts["student-0"].stats.failed_starts == 1
    worker.close()


@pytest.mark.skipif(not ROOT, reason="bot user ids are handed out only when the arena runs as root")
def test_no_free_user_id_leaves_the_match_unplayed(tournament_file: Callable[..., Path]) -> None:
    config = _config(tournament_file, "basic")
    held = dataclasses.replace(config, bot_uids=range(1, 2))  # daemon: /etc/passwd holds it
    try:
        outcome, worker = _play_one(held)
        _assert_unplayed_and_nobody_blamed(outcome, worker, "reserved by /etc/passwd: daemon 1")
    finally:
        users.use(None)


def test_the_same_setup_failure_in_match_after_match_stops_the_run_and_a_rerun_after_the_fix_completes(
    tournament_file: Callable[..., Path], refused_seccomp: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tournament_file(builtins=("random", "heuristic"), programs=1, concurrency=1, extra="repeats: 3\n")
    path.write_text(path.read_text().replace("sandbox: strict", "sandbox: basic"))  # 9 matches, 6 with a process
    config = load_config(path)
    with pytest.raises(RunStopped) as stopped:
        run_tournament(config, executor=InProcess, progress=False)
    message = str(stopped.value)
    assert f"in {SETUP_REPEATS} matches in a row, which is not the bots' fault" in message
    assert "prctl(PR_SET_SECCOMP)" in message and "run the same command" in message
    store = ResultStore.open_existing(config.output)
    try:
        assert all(not match.faults for match in store.matches())  # what was played before the stop: no fault
    finally:
        store.close()
    monkeypatch.undo()  # the machine fixed
    summary = run_tournament(load_config(path), executor=InProcess, progress=False)
    assert summary.failed == () and summary.faults == 0
    assert summary.played + summary.kept == summary.matches == 9


def _arena(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The arena as an organiser runs it, in a process of its own (no probe answers or id range inherited)."""
    env = {k: v for k, v in os.environ.items() if k not in (users.RANGE_VARIABLE, notices.SHARED_VARIABLE)}
    command = [sys.executable, "-m", "arena", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=CHECKOUT, env=env)


@pytest.mark.skipif(not ROOT, reason="bot user ids are handed out only when the arena runs as root")
def test_a_run_whose_bot_ids_are_held_stops_at_once_with_one_line_naming_the_holder(
    tournament_file: Callable[..., Path],
) -> None:
    path = tournament_file(programs=1, concurrency=1, extra="bot_uids: 1-10\n", seed=None)
    done = _arena("run", path)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "bot user ids 1\u201310 are reserved by /etc/passwd: daemon 1" in lines[0], done.stderr
    assert not (path.parent / "out" / "results.sqlite").exists()  # stopped before anything was written
    path.write_text(path.read_text().replace("bot_uids: 1-10\n", ""))
    done = _arena("run", path, "--quiet")
    assert done.returncode == 0, done.stderr


UID_BOT = """
import os, sys
sys.stderr.write(f"uid {os.getuid()}\\n")
sys.stderr.flush()
exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "play.py")).read())
"""


@pytest.mark.skipif(not ROOT, reason="bot user ids are handed out only when the arena runs as root")
def test_a_run_whose_old_bot_id_range_users_hold_finds_free_ids_and_plays_every_match(
    tournament_file: Callable[..., Path], tmp_path: Path
) -> None:
    """As after four `useradd`s: subordinate ranges from 100000 cover 200000-265535. The machine's own id files
    are shown so to the arena alone, in a mount namespace of its own."""
    if shutil.which("unshare") is None:
        missing("no unshare here (util-linux) to show the arena other id files")
    covering = "".join(f"user{n}:{100_000 + n * 65_536}:65536\n" for n in range(4))
    for name in ("subuid", "subgid"):
        (tmp_path / name).write_text(covering)
    path = tournament_file(programs=2, concurrency=1, seed=None)
    student = path.parent / "student"
    (student / "play.py").write_text((student / "bot.py").read_text())
    (student / "bot.py").write_text(UID_BOT)
    script = (
        f"mount --bind {tmp_path / 'subuid'} /etc/subuid && mount --bind {tmp_path / 'subgid'} /etc/subgid"
        f' && exec "$0" -m arena run {path} --quiet'
    )
    env = {k: v for k, v in os.environ.items() if k not in (users.RANGE_VARIABLE, notices.SHARED_VARIABLE)}
    command = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, sys.executable]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=CHECKOUT, env=env)
    assert done.returncode == 0, done.stderr
    assert ", 0 faults," in done.stdout, done.stdout
    seen = {
        int(line.split()[1])
        for log in (path.parent / "out" / "logs").rglob("*.log")
        for line in log.read_text().splitlines()
        if line.startswith("uid ")
    }
    assert seen and all(uid >= 100_000 + 4 * 65_536 for uid in seen), seen


def test_a_cluster_worker_that_cannot_unpack_a_bot_leaves_the_match_unplayed(
    tournament_file: Callable[..., Path],
) -> None:
    """The task as a Dask worker runs it, here: the bot's files arrive as a blob the worker cannot unpack (a torn
    transfer, a full disk)."""
    pytest.importorskip("distributed")
    from arena.runner import dask_executor

    config = _config(tournament_file, "basic")
    packed = dask_executor.pack_config(config)
    shipped = packed.bots["student-0"]
    torn = dataclasses.replace(shipped, digest="torn" + shipped.digest[4:], blob=shipped.blob[: len(shipped.blob) // 2])
    outcome = dask_executor.play_remote(
        MatchJob("rr-0001", 1, ("random-0", "student-0"), "rr-0001", 12345),
        dataclasses.replace(packed, token="torn-" + packed.token, bots={"student-0": torn}),
    )
    assert isinstance(outcome, MatchFailed), outcome
    assert outcome.setup.startswith("a cluster worker could not unpack a bot"), outcome.setup

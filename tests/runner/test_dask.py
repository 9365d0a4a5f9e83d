"""Tournaments on a real Dask cluster (a LocalCluster of worker processes): the same results as on one machine,
whatever happens to the workers."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main
from arena.config import ExecutorConfig, ExecutorType, TournamentConfig, load_config
from arena.errors import UsageError
from arena.matches import MatchDone, MatchFailed, MatchJob
from arena.runner.tournament import run_tournament
from tests.conftest import find_processes
from tests.runner.test_tournament import MakeFile, results


def on(config: TournamentConfig, address: str, output: str) -> TournamentConfig:
    return replace(
        config,
        executor=ExecutorConfig(ExecutorType.DASK, address),
        output=config.output.parent / output,
    )


def test_a_tournament_on_a_cluster_gives_exactly_the_local_results(
    tournament_file: MakeFile, dask_cluster: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tournament_file(programs=1, extra="repeats: 2\n")
    local = load_config(path)
    run_tournament(local, progress=False)
    cluster_output = tournament_file(programs=1, extra="repeats: 2\n", output="on-dask")
    assert main(["run", str(cluster_output), "--dask", dask_cluster.scheduler_address, "--quiet"]) == 0
    assert "12 matches (12 played now)" in capsys.readouterr().out
    assert results(load_config(cluster_output).output) == results(local.output)
    # the workers have no output folder: each match's stderr comes back with its result, and is kept the same
    assert logs(load_config(cluster_output).output) == logs(local.output) != {}


def logs(output: Path) -> dict[str, str]:
    return {str(path.relative_to(output)): path.read_text() for path in (output / "logs").rglob("*.log")}


def test_a_bot_directory_with_links_plays_on_a_cluster_as_it_does_locally(
    tournament_file: MakeFile, dask_cluster: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    student = tmp_path / "student"
    (student / "venv" / "bin").mkdir(parents=True)
    (student / "venv" / "bin" / "python").symlink_to(sys.executable)  # as a virtual environment has it
    (tmp_path / "grades.txt").write_text("private\n")
    (student / "grades").symlink_to("../grades.txt")
    (student / "code").symlink_to(".")
    path = tournament_file(programs=1)
    local = load_config(path)
    run_tournament(local, progress=False)
    config = on(local, dask_cluster.scheduler_address, "with-links")
    summary = run_tournament(config, progress=False)
    assert summary.played == summary.matches == 6
    assert summary.faults == 0
    assert results(config.output) == results(local.output)
    warnings = [r.getMessage() for r in caplog.records if "not shipped" in r.getMessage()]
    assert len(warnings) == 1
    assert "bot student-0" in warnings[0]
    assert "grades -> ../grades.txt" in warnings[0] and f"venv/bin/python -> {sys.executable}" in warnings[0]
    assert "code ->" not in warnings[0]


class KillAWorker:
    """A Dask executor that SIGKILLs a worker process busy with a match once the first result is in."""

    def __init__(self) -> None:
        self.killed: int | None = None

    def __call__(self, config: TournamentConfig, workers: int) -> Any:
        from arena.runner.dask_executor import DaskExecutor

        executor = DaskExecutor(config, workers)
        original = executor.run

        def run(jobs: Sequence[MatchJob]) -> Iterator[MatchDone]:
            for done in original(jobs):
                yield done
                if self.killed is None:
                    self.killed = self._kill(executor._client)

        executor.run = run  # type: ignore[method-assign]
        return executor

    @staticmethod
    def _kill(client: Any) -> int:
        busy = [address for address, keys in client.processing().items() if keys]
        pids = client.run(os.getpid, workers=busy[:1] or None)
        pid = next(iter(pids.values()))
        os.kill(pid, signal.SIGKILL)
        return pid


def test_a_worker_killed_mid_tournament_changes_nothing_in_the_results(
    tournament_file: MakeFile, dask_cluster: Any
) -> None:
    path = tournament_file(programs=1, extra="repeats: 2\n")  # 12 matches
    local = load_config(path)
    run_tournament(local, progress=False)
    config = on(local, dask_cluster.scheduler_address, "killed")
    killer = KillAWorker()
    summary = run_tournament(config, progress=False, executor=killer)
    assert killer.killed is not None
    assert summary.played == summary.matches == 12
    assert results(config.output) == results(local.output)


def test_a_bot_directory_over_the_cap_is_refused_clearly(tournament_file: MakeFile, tmp_path: Path) -> None:
    config = load_config(tournament_file(programs=1))
    (tmp_path / "student" / "weights.bin").write_bytes(os.urandom(2 * 1024 * 1024))
    config = replace(config, executor=ExecutorConfig(ExecutorType.DASK, "tcp://127.0.0.1:9", max_bot_mb=1))
    pytest.importorskip("distributed")
    with pytest.raises(UsageError, match=r"bot student-0: .*weights\.bin is 2 MB, over executor\.max_bot_mb \(1 MB\)"):
        run_tournament(config, progress=False)


def test_without_the_dask_extra_a_cluster_run_says_how_to_install_it(
    tournament_file: MakeFile, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed now raises ImportError
    config = load_config(tournament_file())
    config = replace(config, executor=ExecutorConfig(ExecutorType.DASK, "tcp://127.0.0.1:9"))
    with pytest.raises(UsageError, match=r"needs the dask extra.*pip install \"loveletter-arena\[dask\]\""):
        run_tournament(config, progress=False)


def test_a_match_that_reaches_a_worker_after_its_run_ended_starts_no_bot(tournament_file: MakeFile) -> None:
    """As when the scheduler plays a match again because the worker holding its result died: the run had its
    result already, and has released its bots on every worker."""
    from arena.runner import dask_executor

    config = load_config(tournament_file(programs=1))
    packed = dask_executor.pack_config(config)
    job = MatchJob("rr-0001", 1, ("student-0", "random-0"), "rr-0001", 7)
    dask_executor.release(packed.token)
    outcome = dask_executor.play_remote(job, packed)
    assert isinstance(outcome, MatchFailed)
    assert "already ended" in outcome.error
    assert packed.token not in dask_executor._workers


SLOW_FIRST_MOVE = """
import time
from arena.sdk import run
from random_bot import RandomBot


class SlowBot(RandomBot):
    thought = False

    def act(self, message):
        if not self.thought:
            self.thought = True
            time.sleep(1.5)  # wall time: its CPU time, which move_ms limits, stays small
        return super().act(message)


run(SlowBot(), name="slow")
"""


def test_a_run_released_while_a_match_of_it_plays_here_stops_its_bots_as_that_match_ends(
    tournament_file: MakeFile, tmp_path: Path, marker: str
) -> None:
    """As when the scheduler plays a match again after a worker died and the run ends meanwhile: its bots are not
    shut down under the match, which would start them again, with nobody left to stop them."""
    from arena.runner import dask_executor

    student = tmp_path / "student"
    shutil.copy(student / "bot.py", student / "random_bot.py")
    (student / "bot.py").write_text(SLOW_FIRST_MOVE)
    packed = dask_executor.pack_config(load_config(tournament_file(programs=1)))
    job = MatchJob("rr-0001", 1, ("student-0", "random-0"), "rr-0001", 7)
    outcomes: list[MatchDone | MatchFailed] = []
    playing = threading.Thread(target=lambda: outcomes.append(dask_executor.play_remote(job, packed)))
    playing.start()
    deadline = time.monotonic() + 20
    while not find_processes(marker) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert find_processes(marker), "the bot never started"
    dask_executor.release(packed.token)  # at once: the worker's event loop is not held up
    assert not outcomes and find_processes(marker), "the match should still be playing, its bot with it"
    playing.join()
    assert isinstance(outcomes[0], MatchDone) and outcomes[0].faults == ()
    assert not find_processes(marker)  # shut down as the match ended
    assert packed.token not in dask_executor._workers

"""Where matches run. The runner only needs `run(jobs)` yielding results as they finish; the local pool
of worker processes is one way, a cluster backend is another (arena.runner.dask_executor, docs/cluster.md)."""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
from collections.abc import Iterator, Sequence
from multiprocessing.process import BaseProcess
from typing import Protocol

from arena.config import ExecutorType, TournamentConfig
from arena.errors import WorkerFailed
from arena.runner.jobs import MatchDone, MatchFailed, MatchJob, MatchOutcome
from arena.runner.worker import MatchWorker, settle_heap
from arena.sandbox import kill_all, linux

STOP_GRACE_S = 5.0
"""At a normal end, how long workers get to shut their bots down."""


class Executor(Protocol):
    def run(self, jobs: Sequence[MatchJob]) -> Iterator[MatchOutcome]:
        """Play every job; yield each result as it is done, in any order: a MatchFailed for a match that
        failed on the arena's side, and the others go on."""
        ...

    def close(self) -> None:
        """Stop the workers and every bot process they kept."""
        ...

    def terminate(self) -> None:
        """Stop at once (Ctrl-C, SIGTERM)."""
        ...


class LocalExecutor:
    """`workers` processes on this machine, each keeping its bot processes from match to match."""

    def __init__(self, config: TournamentConfig, workers: int) -> None:
        context = multiprocessing.get_context("spawn")  # no inherited sockets, threads or locks
        self._tasks: multiprocessing.Queue[MatchJob | None] = context.Queue()
        self._results: multiprocessing.Queue[MatchOutcome] = context.Queue()
        cpus = sorted(os.sched_getaffinity(0))
        pin = len(cpus) >= workers  # with fewer cores than workers, the scheduler places them better
        self._processes: list[BaseProcess] = [
            context.Process(
                target=_serve,
                args=(config, self._tasks, self._results, cpus[n] if pin else None),
                name=f"arena-worker-{n}",
            )
            for n in range(workers)
        ]
        for process in self._processes:
            process.start()

    def run(self, jobs: Sequence[MatchJob]) -> Iterator[MatchOutcome]:
        for job in jobs:
            self._tasks.put(job)
        for _ in jobs:
            outcome = self._next()
            assert isinstance(outcome, MatchDone | MatchFailed)
            yield outcome

    def _next(self) -> object:
        while True:
            try:
                return self._results.get(timeout=0.5)
            except queue.Empty:
                dead = [p for p in self._processes if not p.is_alive()]
                if dead:
                    raise WorkerFailed(
                        f"worker {dead[0].name} died (exit status {dead[0].exitcode}); finished matches are kept:"
                        " run the same command again to resume"
                    ) from None

    def close(self) -> None:
        for _ in self._processes:
            self._tasks.put(None)
        for process in self._processes:
            process.join(STOP_GRACE_S)
        self.terminate()

    def terminate(self) -> None:
        """Stop at once (Ctrl-C): each worker kills its bots on SIGTERM; survivors are killed."""
        for process in self._processes:
            if process.is_alive():
                process.terminate()
        for process in self._processes:
            process.join(STOP_GRACE_S)
            if process.is_alive():
                process.kill()
                process.join(1)
        kill_all()


def executor_for(config: TournamentConfig, workers: int) -> Executor:
    """The executor the configuration names (executor.type); the Dask one is imported only when asked for."""
    if config.executor.type is ExecutorType.DASK:
        from arena.runner.dask_executor import DaskExecutor

        return DaskExecutor(config, workers)
    return LocalExecutor(config, workers)


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _serve(
    config: TournamentConfig,
    tasks: multiprocessing.Queue[MatchJob | None],
    results: multiprocessing.Queue[MatchOutcome],
    cpu: int | None,
) -> None:
    """A worker process: play jobs until told to stop; never leave a bot process behind. With `cpu`, the
    worker and its bots share that core: a match's processes take turns, and a message between them then
    needs no wake-up across cores."""
    signal.signal(signal.SIGTERM, _interrupted)
    linux.set_parent_death_signal(signal.SIGTERM)  # an arena killed outright takes its workers along
    parent = multiprocessing.parent_process()
    if parent is not None and os.getppid() != parent.pid:
        return  # the arena died before the line above took effect
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    worker = MatchWorker(config, cpu)
    settle_heap()
    try:
        while (job := tasks.get()) is not None:
            results.put(worker.attempt(job))
        worker.close()
    except KeyboardInterrupt:
        # Nobody may read the results any more (the arena stopped or died): exit without waiting for the
        # queue's feeder thread to push a last result into a full pipe, which would block for ever.
        results.cancel_join_thread()
    finally:
        for host in worker.hosts.values():
            host.kill()
        kill_all()

"""Where matches run. The runner only needs `run(jobs)` yielding results as they finish; the local pool
of worker processes is one way, a cluster backend is another (arena.runner.dask_executor, docs/cluster.md)."""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Iterator, Sequence
from multiprocessing import resource_tracker
from multiprocessing.connection import Connection, wait
from multiprocessing.context import SpawnContext
from typing import TYPE_CHECKING, Protocol

from arena.config import ExecutorType, TournamentConfig
from arena.errors import WorkerFailed
from arena.matches import MatchFailed, MatchJob, MatchOutcome
from arena.sandbox import kill_all, linux

if TYPE_CHECKING:
    from arena.runner.worker import MatchWorker

STOP_GRACE_S = 5.0
"""At a normal end, how long workers get to shut their bots down."""
PREFETCH = 2
"""Jobs handed to a worker at a time: the next one is there as soon as a match ends."""
MAX_DEATHS_IN_A_ROW = 3
"""Workers that may die one after another without a match finished in between before the run stops:
past that, something kills every worker, and replacing them would go on for ever."""

log = logging.getLogger(__name__)


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


class _Worker:
    """One worker process, its pipe, and the jobs it was handed and has not answered, oldest first."""

    def __init__(self, context: SpawnContext, config: TournamentConfig, number: int, cpu: int | None) -> None:
        self.connection, theirs = context.Pipe()
        self.process = context.Process(target=_serve, args=(config, theirs, cpu), name=f"arena-worker-{number}")
        # Born with the stops blocked, until _serve has its handlers: a Ctrl-C while it imports is no traceback.
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
        try:
            self.process.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        theirs.close()
        self.jobs: deque[MatchJob] = deque()
        self.gone = False
        """Its end of the pipe is closed: nothing more will come from it."""


class LocalExecutor:
    """`workers` processes on this machine, each keeping its bot processes from match to match.

    Each worker has a pipe of its own, so the arena knows which matches it holds: a worker that dies
    (an arena bug, the kernel's OOM killer) fails the match it was playing, is replaced, and the run goes on.
    """

    def __init__(self, config: TournamentConfig, workers: int) -> None:
        self._context = multiprocessing.get_context("spawn")  # no inherited sockets, threads or locks
        # Started by the first worker's start otherwise, and it unblocks SIGINT and SIGTERM when it has started,
        # while _Worker holds them blocked for the worker.
        resource_tracker.ensure_running()
        self._config = config
        cpus = sorted(os.sched_getaffinity(0))
        pin = len(cpus) >= workers  # with fewer cores than workers, the scheduler places them better
        self._cpus = [cpus[n] if pin else None for n in range(workers)]
        self._workers = [_Worker(self._context, config, n, cpu) for n, cpu in enumerate(self._cpus)]
        self._deaths_in_a_row = 0

    def run(self, jobs: Sequence[MatchJob]) -> Iterator[MatchOutcome]:
        waiting = deque(jobs)
        for _ in jobs:
            self._hand_out(waiting)
            yield self._next(waiting)

    def _hand_out(self, waiting: deque[MatchJob]) -> None:
        """Keep PREFETCH jobs with every worker, so that none waits for the arena between matches."""
        for worker in self._workers:
            while waiting and len(worker.jobs) < PREFETCH and not worker.gone:
                job = waiting.popleft()
                try:
                    worker.connection.send(job)
                except OSError:  # it died: its sentinel says so, and the job goes to another worker
                    waiting.appendleft(job)
                    worker.gone = True
                    break
                worker.jobs.append(job)

    def _next(self, waiting: deque[MatchJob]) -> MatchOutcome:
        """The next outcome: a result, or the failure of the match a worker died playing."""
        while True:
            sentinels = {w.process.sentinel: w for w in self._workers}
            pipes = {w.connection: w for w in self._workers if w.jobs and not w.gone}
            for ready in wait([*pipes, *sentinels]):
                if ready in pipes:
                    worker = pipes[ready]
                    try:
                        outcome: MatchOutcome = worker.connection.recv()
                    except (EOFError, OSError):
                        worker.gone = True
                        continue
                    worker.jobs.remove(outcome.job)
                    self._deaths_in_a_row = 0
                    return outcome
            for ready in wait(list(sentinels), timeout=0):
                dead = sentinels[ready]  # type: ignore[index]
                if dead.jobs and not dead.gone and dead.connection.poll(0):
                    continue  # a result it sent before it died is read first
                failed = self._replace(dead, waiting)
                self._hand_out(waiting)
                if failed is not None:
                    return failed

    def _replace(self, dead: _Worker, waiting: deque[MatchJob]) -> MatchFailed | None:
        """A new worker in place of a dead one. The match it was playing fails; what it was handed besides
        goes to the others."""
        dead.process.join()
        status = dead.process.exitcode
        self._deaths_in_a_row += 1
        if self._deaths_in_a_row >= MAX_DEATHS_IN_A_ROW:
            raise WorkerFailed(
                f"{self._deaths_in_a_row} worker processes died one after another (the last, {dead.process.name},"
                f" with exit status {status}); finished matches are kept: run the same command again to resume"
            )
        number = self._workers.index(dead)
        dead.connection.close()
        self._workers[number] = _Worker(self._context, self._config, number, self._cpus[number])
        if not dead.jobs:
            log.error("worker %s died (exit status %s) between matches", dead.process.name, status)
            return None
        playing, *handed = dead.jobs
        waiting.extendleft(reversed(handed))
        log.error("worker %s died (exit status %s) playing %s", dead.process.name, status, playing.match_id)
        return MatchFailed(playing, f"the worker process playing it died (exit status {status})\n")

    def close(self) -> None:
        for worker in self._workers:
            with contextlib.suppress(OSError):
                worker.connection.send(None)
        for worker in self._workers:
            worker.process.join(STOP_GRACE_S)
        self.terminate()

    def terminate(self) -> None:
        """Stop at once (Ctrl-C): each worker kills its bots on SIGTERM; survivors are killed."""
        processes = [worker.process for worker in self._workers]
        for process in processes:
            if process.is_alive():
                process.terminate()
        for process in processes:
            process.join(STOP_GRACE_S)
            if process.is_alive():
                process.kill()
                process.join(1)
        for worker in self._workers:
            worker.connection.close()
        kill_all()


def executor_for(config: TournamentConfig, workers: int) -> Executor:
    """The executor the configuration names (executor.type); the Dask one is imported only when asked for."""
    if config.executor.type is ExecutorType.DASK:
        from arena.runner.dask_executor import DaskExecutor

        return DaskExecutor(config, workers)
    return LocalExecutor(config, workers)


STOPS = {signal.SIGINT, signal.SIGTERM}


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _ignored(signum: int, frame: object) -> None:
    """A handler that does nothing: unlike SIG_IGN, the bots a worker starts do not inherit it."""


def _serve(config: TournamentConfig, connection: Connection, cpu: int | None) -> None:
    """A worker process: play jobs until told to stop; never leave a bot process behind. With `cpu`, the
    worker and its bots share that core: a match's processes take turns, and a message between them then
    needs no wake-up across cores."""
    # A Ctrl-C reaches the terminal's whole process group: the arena alone answers it, with one SIGTERM to each
    # worker. Heard here too, it would be a second stop, cutting the first one's cleanup short.
    signal.signal(signal.SIGINT, _ignored)
    signal.signal(signal.SIGTERM, _interrupted)
    linux.set_parent_death_signal(signal.SIGTERM)  # an arena killed outright takes its workers along
    worker: MatchWorker | None = None
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)
        parent = multiprocessing.parent_process()
        if parent is not None and os.getppid() != parent.pid:
            return  # the arena died before the death signal was armed
        from arena.runner.worker import MatchWorker, settle_heap  # in the worker process alone: bot hosts, ZeroMQ

        if cpu is not None:
            os.sched_setaffinity(0, {cpu})
        worker = MatchWorker(config, cpu, output=config.output)
        settle_heap()
        while (job := connection.recv()) is not None:
            connection.send(worker.attempt(job))
        worker.close()
    except (KeyboardInterrupt, EOFError, BrokenPipeError):
        pass  # the arena stopped us (even while we were starting), or is gone: nobody reads a result any more
    finally:
        signal.signal(signal.SIGTERM, _ignored)  # a second stop must not cut the cleanup short
        if worker is not None:
            for host in worker.hosts.values():
                host.kill()
        kill_all()

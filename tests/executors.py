"""An executor for the runner's tests: each match played in the test's own process, by the workers' own code, so
that what a test sets up (a failure injected, a cheat) reaches the bots' starts."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from arena.config import TournamentConfig
from arena.matches import MatchJob, MatchOutcome
from arena.runner.worker import MatchWorker


class InProcess:
    """The runner's executor seam (arena.runner.executor.Executor), played in this process."""

    def __init__(self, config: TournamentConfig, _workers: int) -> None:
        self.worker = MatchWorker(config)

    def run(self, jobs: Sequence[MatchJob]) -> Iterator[MatchOutcome]:
        for job in jobs:
            yield self.worker.attempt(job)

    def close(self) -> None:
        self.worker.close()

    def terminate(self) -> None:
        self.worker.close()

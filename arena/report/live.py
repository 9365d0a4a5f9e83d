"""Live standings: OUTPUT/report/index.html rewritten every few seconds while `arena run` plays.

The page says how far the run is ("in progress: 212/300") and reloads itself; the report written when the
run ends (or stops) has no reload. A rewrite reads the whole store, so for a big run it is spaced out to
take at most about a twentieth of the run's time, however long the rewrite gets.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

from arena.errors import ArenaError
from arena.report.build import write_index
from arena.report.index_page import Progress

EVERY_SECONDS = 2.5
"""The shortest wait between two rewrites of the live page."""
SHARE = 0.05
"""The most of the run's time the rewrites may take: the wait is at least (1 / SHARE - 1) rewrites long. A
rewrite reads every result (about 0.35 s for 3,000 matches, 1 s for 10,000), in the process that also
hands out the matches, so a big run refreshes less often rather than slowing down."""


class LiveStandings:
    """Called by the run loop after each recorded match; writes the index when the wait is over."""

    def __init__(self, output: Path, every: float = EVERY_SECONDS) -> None:
        self.output = output
        self.every = every
        self.written = 0
        """Live pages written so far."""
        self._due = 0.0  # the first recorded match shows at once

    def __call__(self, done: int, total: int) -> None:
        started = time.monotonic()
        if started < self._due:
            return
        write_index(self.output, Progress(done, total))
        self.written += 1
        took = time.monotonic() - started
        self._due = time.monotonic() + max(self.every, took * (1 / SHARE - 1))

    def stop(self) -> None:
        """A run that ends without its final report (interrupted, failed): the page stops reloading and says
        the tournament is not finished. Best effort: the run's own error is the one to show."""
        if not self.written:
            return
        with contextlib.suppress(ArenaError):
            write_index(self.output)

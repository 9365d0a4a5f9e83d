"""A worker keeps the bots it seated most recently between matches, and no more: a swiss of 150 programs would
otherwise keep 150 processes per worker, their memory and their descriptors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from arena.config import load_config
from arena.matches import MatchDone, MatchJob
from arena.runner import worker as worker_module
from arena.runner.worker import MatchWorker


def test_a_worker_keeps_its_most_recently_seated_bots_and_no_more(
    tournament_file: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker_module, "KEPT_BOTS", 3)
    path = tournament_file(builtins=(), programs=6, concurrency=1)
    path.write_text(path.read_text().replace("sandbox: strict", "sandbox: none"))
    worker = MatchWorker(load_config(path))
    tables = [
        ("student-0", "student-1"),
        ("student-2", "student-3"),
        ("student-0", "student-4"),
        ("student-5", "student-0"),
    ]
    kept_after = [
        ["student-0", "student-1"],
        ["student-1", "student-2", "student-3"],
        ["student-3", "student-0", "student-4"],
        ["student-4", "student-5", "student-0"],
    ]
    try:
        first = None
        for number, (seats, kept) in enumerate(zip(tables, kept_after, strict=True)):
            done = worker.attempt(MatchJob(f"m{number}", 1, seats, f"m{number}", number))
            assert isinstance(done, MatchDone) and not done.faults, done
            assert list(worker.hosts) == kept
            first = first or worker.hosts["student-0"]
            if number == 1:
                assert not first.running  # shut down when it was seated longest ago
        assert worker.hosts["student-0"].running and worker.hosts["student-0"] is not first  # started anew
    finally:
        worker.close()

"""Tournament files for the runner's tests: built-in bots in-process, and sandboxed bot programs."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def dask_cluster() -> Iterator[Any]:
    """Two worker processes of one thread each, shared by the tests of a test process (starting one takes
    seconds); a worker a test kills is restarted by its nanny. Its dashboard takes a free port, not 8787: two
    test runs side by side each have their own. Stopped with everything it started."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=40
    ) as local:
        yield local


@pytest.fixture
def tournament_file(tmp_path: Path, marker: str) -> Callable[..., Path]:
    """Write a tournament file; `programs` adds that many copies of the example bot as sandboxed programs; `seed`
    None leaves the seed out (drawn for the output folder)."""
    bot_dir = tmp_path / "student"
    bot_dir.mkdir()
    shutil.copy(ROOT / "examples" / "random_bot.py", bot_dir / "bot.py")

    def write(
        name: str = "t",
        fmt: str = "round-robin",
        builtins: tuple[str, ...] = ("random", "heuristic", "random"),
        programs: int = 0,
        extra: str = "",
        per_table: int = 2,
        output: str = "out",
        concurrency: int = 2,
        seed: int | str | None = 7,
    ) -> Path:
        lines = [
            f"name: {name}",
            f"format: {fmt}",
            f"players_per_match: {per_table}",
            *([] if seed is None else [f"seed: {seed}"]),
            f"concurrency: {concurrency}",
            "sandbox: strict",
            "limits: {move_ms: 2000, startup_ms: 20000}",
            f"output: {output}",
            "bots:",
        ]
        lines += [f"  - {{name: {kind}-{n}, builtin: {kind}}}" for n, kind in enumerate(builtins)]
        lines += [f"  - {{name: student-{n}, command: [python3, student/bot.py, {marker}]}}" for n in range(programs)]
        path = tmp_path / f"{name}.yaml"
        path.write_text("\n".join(lines) + "\n" + extra)
        return path

    return write

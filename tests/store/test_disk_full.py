"""A full output disk: a clean stop that keeps every recorded match, and a rerun that finishes the same.

The disk is a real one: a tmpfs mounted with a small size (root only; skipped elsewhere).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.store import ResultStore
from arena.store.export import match_rows, standing_rows

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("mount") is None, reason="mounting a small tmpfs needs root"
)

TOURNAMENT = """\
name: full
format: round-robin
players_per_match: 2
repeats: 3
seed: 11
concurrency: 2
output: {output}
bots:
  - {{name: a, builtin: random}}
  - {{name: b, builtin: heuristic}}
  - {{name: c, builtin: random}}
  - {{name: d, builtin: heuristic}}
"""


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount_point)], check=True)
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def resize(mount_point: Path, size: str) -> None:
    subprocess.run(["mount", "-o", f"remount,size={size}", str(mount_point)], check=True)


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=300, check=False
    )


def tournament(tmp_path: Path, output: Path) -> Path:
    path = tmp_path / f"{output.parent.name}-{output.name}.yaml"
    path.write_text(TOURNAMENT.format(output=output))
    return path


def decided(output: Path) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """The results and standings, without what differs from run to run (durations, paths)."""
    store = ResultStore.open_existing(output)
    try:
        rows = [{k: v for k, v in row.items() if k not in ("duration_s", "replay")} for row in match_rows(store)]
        return rows, standing_rows(store)
    finally:
        store.close()


def assert_clean_stop(run: subprocess.CompletedProcess[str]) -> None:
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr
    lines = [line for line in run.stderr.splitlines() if "disk is full" in line]
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("arena: the output disk is full: ")
    assert lines[0].endswith("free space and rerun to resume")


def test_a_full_disk_during_the_run_stops_it_cleanly_and_a_rerun_gives_the_same_results(
    tmp_path: Path, small_disk: Path
) -> None:
    control = tmp_path / "control" / "out"
    assert arena("run", str(tournament(tmp_path, control)), "--quiet", "--replay-pages", "0").returncode == 0
    expected = decided(control)
    replays = sum(path.stat().st_size for path in (control / "replays").glob("*.jsonl"))
    resize(small_disk, f"{(256 * 1024 + replays // 2) // 1024}k")  # the database and half the replays fit

    output = small_disk / "out"
    file = tournament(tmp_path, output)
    assert_clean_stop(arena("run", str(file), "--quiet", "--replay-pages", "0"))
    recorded, _ = decided(output)
    assert 0 < len(recorded) < len(expected[0])
    assert all(row in expected[0] for row in recorded)  # what was recorded is what an uninterrupted run records
    assert not list(output.rglob("*.partial"))
    for row in recorded:
        assert arena("replay", str(output / "replays" / f"{row['match_id']}.jsonl"), "--verify").returncode == 0

    resize(small_disk, "64m")
    rerun = arena("run", str(file), "--quiet", "--replay-pages", "0")
    assert rerun.returncode == 0, rerun.stderr
    assert f"{len(recorded)} kept from an earlier run" in rerun.stdout
    assert decided(output) == expected


def test_a_full_disk_while_writing_the_report_is_a_clean_stop_too(tmp_path: Path, small_disk: Path) -> None:
    resize(small_disk, "16m")
    output = small_disk / "out"
    assert arena("run", str(tournament(tmp_path, output)), "--quiet", "--replay-pages", "0").returncode == 0
    filler = small_disk / "filler"
    with filler.open("wb") as stream, pytest.raises(OSError):
        while True:
            stream.write(b"\0" * 65536)
            stream.flush()
    assert_clean_stop(arena("report", str(output)))
    assert not list(output.rglob("*.partial"))
    filler.unlink()
    report = arena("report", str(output))
    assert report.returncode == 0, report.stderr
    assert (output / "report" / "index.html").stat().st_size > 0

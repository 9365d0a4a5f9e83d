"""Properties of the results store, on a real SQLite file: what is recorded reads back equal, after a reopen
too; a write interrupted between the replay and the commit (an error SQLite raises in the transaction, or
the process killed there) leaves the store readable with the match wholly there or absent; a resumed run
then plays it, to the results of a run never interrupted.
"""

from __future__ import annotations

import dataclasses
import pickle
import signal
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.config import load_config
from arena.engine import FaultReason
from arena.matches import FaultRow, MatchDone, MatchJob
from arena.runner.tournament import run_tournament
from arena.store import ResultStore, StoredMatch
from arena.store.database import DATABASE, SCHEMA
from tests.executors import InProcess

NAMES = st.from_regex(r"[a-z][a-z0-9_-]{0,6}", fullmatch=True)
PLAYED_IDS = st.sampled_from([f"rr-{n:04d}" for n in range(1, 6)] + ["sw-r2-t1", "Z-1"])
"""Few, so that a match is recorded again (the last record stands, as when a rerun plays it)."""
BYE_IDS = st.sampled_from(["bye-1", "bye-2"])
TEXTS = st.text(max_size=40) | st.sampled_from(["", "\x00", "a\r\nb\rc", "\ufeff", "'; DROP TABLE matches; --"])


@st.composite
def jobs(draw: st.DrawFn, match_id: st.SearchStrategy[str], seats: int | None = None) -> MatchJob:
    count = seats if seats is not None else draw(st.integers(2, 6))
    names = draw(st.lists(NAMES, min_size=count, max_size=count, unique=True))
    return MatchJob(
        draw(match_id), draw(st.integers(0, 40)), tuple(names), draw(TEXTS), draw(st.integers(0, 2**63 - 1))
    )


@st.composite
def results(draw: st.DrawFn) -> MatchDone:
    job = draw(jobs(PLAYED_IDS))
    seats = list(range(len(job.seats)))
    order = draw(st.permutations(seats))
    cuts = sorted(draw(st.sets(st.integers(1, len(seats) - 1))))
    ranking = tuple(tuple(order[a:b]) for a, b in zip([0, *cuts], [*cuts, len(seats)], strict=True))
    fault = st.builds(
        FaultRow,
        st.just(job.match_id),
        st.sampled_from(seats),
        st.sampled_from(job.seats),
        st.sampled_from([reason.value for reason in FaultReason]),
        TEXTS,
        TEXTS,
        st.booleans(),
    )
    return MatchDone(
        job=job,
        winners=tuple(draw(st.sets(st.sampled_from(seats)))),
        ranking=ranking,
        tokens=tuple(draw(st.lists(st.integers(0, 7), min_size=len(seats), max_size=len(seats)))),
        faults=tuple(draw(st.lists(fault, max_size=3))),
        duration_s=draw(st.floats(0, 1e6)),
        replay=draw(TEXTS),
        peak_memory=tuple(draw(st.lists(st.none() | st.integers(0, 2**40), min_size=len(seats), max_size=len(seats))))
        if draw(st.booleans())
        else (),
    )


WRITES = st.lists(results() | jobs(BYE_IDS, seats=1), min_size=1, max_size=6)


def record(store: ResultStore, write: MatchDone | MatchJob) -> None:
    if isinstance(write, MatchDone):
        store.record(write)
    else:
        store.record_bye(write)


def expected(writes: Sequence[MatchDone | MatchJob]) -> list[MatchDone | MatchJob]:
    """The last write of each match, in the store's order: round, then id."""
    last = {(write.job if isinstance(write, MatchDone) else write).match_id: write for write in writes}
    return sorted(last.values(), key=lambda write: (job_of(write).round, job_of(write).match_id))


def job_of(write: MatchDone | MatchJob) -> MatchJob:
    return write.job if isinstance(write, MatchDone) else write


def read_back(output: Path) -> list[StoredMatch]:
    store = ResultStore.open_existing(output)
    try:
        return list(store.matches())
    finally:
        store.close()


def assert_reads_back(
    output: Path, writes: Sequence[MatchDone | MatchJob], overwritten: MatchDone | None = None
) -> None:
    """The store holds exactly the last write of each match. `overwritten`: a record that failed after its
    replay was written (the replay is written first, and stays for the rerun to write again)."""
    stored = read_back(output)
    wanted = expected(writes)
    assert [match.job for match in stored] == [job_of(write) for write in wanted]
    for match, write in zip(stored, wanted, strict=True):
        if isinstance(write, MatchJob):  # a bye
            assert (match.winners, match.ranking, match.tokens, match.replay) == ((), ((0,),), (0,), None)
            continue
        assert (match.winners, match.ranking, match.tokens, match.faults) == (
            write.winners,
            write.ranking,
            write.tokens,
            write.faults,
        )
        assert (match.duration_s, match.peak_memory) == (write.duration_s, write.peak_memory)
        assert match.replay == output / "replays" / f"{write.job.match_id}.jsonl"
        replay = overwritten.replay if overwritten and overwritten.job.match_id == write.job.match_id else write.replay
        assert match.replay.read_bytes() == replay.encode("utf-8")


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> Callable[[], Path]:
    """A new output folder for each example (pytest's tmp_path is one for all a test's examples)."""
    return lambda: tmp_path_factory.mktemp("store")


def new_store(output: Path) -> ResultStore:
    return ResultStore.create_or_resume(output, "hash", {"name": "property"}, restart=False)


@settings(max_examples=20)
@given(writes=WRITES)
def test_what_is_recorded_reads_back_equal(outputs: Callable[[], Path], writes: list[MatchDone | MatchJob]) -> None:
    output = outputs()
    store = new_store(output)
    try:
        for write in writes:
            record(store, write)
        assert store.finished_ids() == {job_of(write).match_id for write in writes}
    finally:
        store.close()
    assert_reads_back(output, writes)


def inject(output: Path, match_id: str, table: str) -> None:
    """An error SQLite raises inside the transaction that records `match_id`, after its row in `table` is
    written (by another connection, as a broken disk or a bug would: the store's code runs as it is)."""
    with sqlite3.connect(output / DATABASE) as connection:
        connection.execute(
            f"CREATE TRIGGER injected AFTER INSERT ON {table} WHEN NEW.match_id = '{match_id}'"
            " BEGIN SELECT RAISE(ABORT, 'injected'); END"
        )
    connection.close()


def uninject(output: Path) -> None:
    with sqlite3.connect(output / DATABASE) as connection:
        connection.execute("DROP TRIGGER injected")
    connection.close()


@settings(max_examples=20)
@given(writes=WRITES, failing=results(), table=st.sampled_from(["matches", "faults"]), data=st.data())
def test_a_write_interrupted_before_its_commit_leaves_the_match_whole_or_absent(
    outputs: Callable[[], Path],
    writes: list[MatchDone | MatchJob],
    failing: MatchDone,
    table: str,
    data: st.DataObject,
) -> None:
    if table == "faults" and not failing.faults:
        failing = dataclasses.replace(
            failing, faults=(FaultRow(failing.job.match_id, 0, failing.job.seats[0], "crash", "", "", False),)
        )
    before = data.draw(st.integers(0, len(writes)), label="writes before the failing one")
    output = outputs()
    store = new_store(output)
    try:
        for write in writes[:before]:
            record(store, write)
        inject(output, failing.job.match_id, table)
        with pytest.raises(sqlite3.IntegrityError, match="injected"):
            store.record(failing)
        uninject(output)
        assert_reads_back(output, writes[:before], overwritten=failing)  # the failed match as it was, or absent
        for write in [failing, *writes[before:]]:  # the rerun plays it, and the rest
            record(store, write)
    finally:
        store.close()
    assert not list(output.rglob("*.partial"))
    assert_reads_back(output, [*writes[:before], failing, *writes[before:]])


KILLED = """
import os, pathlib, pickle, signal, sys
from arena.store import ResultStore
output, kill_at = pathlib.Path(sys.argv[1]), sys.argv[2]
writes = pickle.load(sys.stdin.buffer)
store = ResultStore.create_or_resume(output, "hash", {"name": "property"}, restart=False)
recording = None
def trace(statement):
    if recording == kill_at and statement.startswith("DELETE FROM faults"):
        os.kill(os.getpid(), signal.SIGKILL)  # the match's row is written, its transaction not committed
store._db.set_trace_callback(trace)
for write in writes:
    recording = write.job.match_id
    store.record(write)
"""


@settings(max_examples=2)
@given(played=st.lists(results(), min_size=1, max_size=3, unique_by=lambda done: done.job.match_id))
def test_a_process_killed_in_the_middle_of_a_record_leaves_the_match_absent(
    outputs: Callable[[], Path], played: list[MatchDone]
) -> None:
    output = outputs()
    run = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(KILLED), str(output), played[-1].job.match_id],
        input=pickle.dumps(played),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == -signal.SIGKILL, run.stderr.decode()
    assert_reads_back(output, played[:-1], overwritten=played[-1])
    store = new_store(output)  # as a rerun opens it
    try:
        assert store.finished_ids() == {done.job.match_id for done in played[:-1]}
        store.record(played[-1])
    finally:
        store.close()
    assert_reads_back(output, played)


# ------------------------------------------------------------------------------------------------- a resume

TOURNAMENT = """\
name: resumed
format: round-robin
players_per_match: 2
seed: 3
concurrency: 1
output: out
bots:
  - {name: a, builtin: random}
  - {name: b, builtin: heuristic}
  - {name: c, builtin: random}
"""


def decided(output: Path) -> list[tuple[Any, ...]]:
    return [
        (match.job, match.winners, match.ranking, match.tokens, match.faults, match.replay and match.replay.read_text())
        for match in read_back(output)
    ]


def test_a_run_whose_record_fails_resumes_to_the_results_of_a_run_never_interrupted(tmp_path: Path) -> None:
    (tmp_path / "control").mkdir()
    (tmp_path / "control" / "t.yaml").write_text(TOURNAMENT)
    control = run_tournament(load_config(tmp_path / "control" / "t.yaml"), executor=InProcess, progress=False)
    assert control.played == 3

    path = tmp_path / "t.yaml"
    path.write_text(TOURNAMENT)
    config = load_config(path)
    config.output.mkdir()
    with sqlite3.connect(config.output / DATABASE) as connection:
        connection.executescript(SCHEMA)  # the store as a run makes it, with the failure waiting in it
    connection.close()
    second = decided(tmp_path / "control" / "out")[1][0].match_id
    inject(config.output, second, "matches")
    with pytest.raises(sqlite3.IntegrityError, match="injected"):
        run_tournament(config, executor=InProcess, progress=False)
    first = decided(tmp_path / "control" / "out")[0][0].match_id
    assert [match.job.match_id for match in read_back(config.output)] == [first]
    uninject(config.output)

    resumed = run_tournament(config, executor=InProcess, progress=False)
    assert (resumed.kept, resumed.played) == (1, 2)
    assert decided(config.output) == decided(tmp_path / "control" / "out")

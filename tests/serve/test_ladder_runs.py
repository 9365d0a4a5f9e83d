"""The ladder plays on its own: a version that passes its check plays the reference bots and the others, every match
recorded as `arena run` records it and rated; a server stopped and started again keeps every match and goes on; a
version that fails its check never plays; a crashing bot is its own fault alone."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

import arena
from arena.sandbox import kill_all
from arena.serve.scheduler import MATCHES, version_name
from arena.serve.store import Status
from arena.store import ResultStore
from tests.serve.conftest import RANDOM_BOT, Running, csrf, start_server, wait_for_check

CRASHING_BOT = b"import sys\nprint('no bot here', file=sys.stderr)\nsys.exit(3)\n"


def upload(running: Running, who: str, data: bytes) -> str:
    client = running.client(who)
    answer = client.post(
        "/upload",
        data={"csrftoken": csrf(client), "preset": "python"},
        files={"file": ("bot.py", data, "text/x-python")},
        follow_redirects=False,
    )
    assert answer.status_code == 303, answer.text
    return running.store.versions(running.id(who))[0].digest


def wait_for_matches(running: Running, bot: str, count: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if running.server.games.ratings().get(bot, (0, 0, 0))[2] >= count:
            return
        time.sleep(0.2)
    raise AssertionError(f"{bot} played fewer than {count} matches in {timeout} s: {running.server.games.ratings()}")


def recorded(folder: Path) -> dict[str, tuple[str, ...]]:
    store = ResultStore.open_existing(folder / "data" / MATCHES)
    try:
        return {match.job.match_id: match.job.seats for match in store.matches()}
    finally:
        store.close()


def test_a_checked_version_plays_is_rated_and_a_restarted_server_keeps_every_match(tmp_path: Path) -> None:
    first = start_server(tmp_path)
    running = next(first)
    good = upload(running, "ada", RANDOM_BOT)
    bad = upload(running, "bob", CRASHING_BOT)
    assert wait_for_check(running.store, running.id("ada"), good).status is Status.PASSED
    failed = wait_for_check(running.store, running.id("bob"), bad)
    assert failed.status is Status.FAILED and failed.report is not None
    assert any("no bot here" in fault["stderr"] for fault in failed.report["faults"])  # the entrant sees why
    ada = version_name("ada", good)
    running.server.games.resume()
    wait_for_matches(running, ada, 6)
    board = running.client().get("/api/leaderboard").json()
    (row,) = [row for row in board["rows"] if row["name"] == "ada"]
    assert row["version"] == good[:12] and row["matches"] >= 6 and row["rating"] != ""
    assert "bob" not in [row["name"] for row in board["rows"]]  # a version that failed its check never plays
    pages_of_a_ladder_match(running, ada)
    first.close()  # the server stops
    before = recorded(tmp_path)
    assert before and all(ada in seats for seats in before.values())  # ada is the only entrant with a bot
    assert not any(version_name("bob", bad) in seats for seats in before.values())

    second = start_server(tmp_path, people=False)
    running = next(second)
    kept = running.server.games.ratings()[ada][2]
    assert kept == len(before)  # every match is there again, and rated again
    running.server.games.resume()
    wait_for_matches(running, ada, kept + 2)
    second.close()
    after = recorded(tmp_path)
    assert before.items() <= after.items() and len(after) > len(before)
    assert min(set(after) - set(before)) > max(before)  # it goes on, numbering after the last


def test_a_bot_that_crashes_in_a_match_is_its_own_fault_alone(tmp_path: Path) -> None:
    """A version that passed its check and crashes later: its fault is recorded against it, the match stands for
    the others, and the ladder goes on."""
    flaky = (
        b"import os, sys\nfrom arena.sdk import run\n"
        b"class Bot:\n"
        b"    def match_start(self, message):\n"
        b"        self.moves = 0\n"
        b"        if not message['match_id'].startswith('check-') and message['match_id'].endswith(('1', '3')):\n"
        b"            os._exit(9)\n"
        b"    def act(self, message):\n"
        b"        return message['legal'][0]\n"
        b"run(Bot(), name='flaky')\n"
    )
    running_server = start_server(tmp_path)
    running = next(running_server)
    digest = upload(running, "ada", flaky)
    assert wait_for_check(running.store, running.id("ada"), digest).status is Status.PASSED
    running.server.games.resume()
    name = version_name("ada", digest)
    wait_for_matches(running, name, 8)
    faults = running.server.games.recent_faults()
    assert faults and {fault.bot for fault in faults} == {name}
    assert running.server.games.last_error is None
    running_server.close()


def pages_of_a_ladder_match(running: Running, ada: str) -> None:
    """Every signed-in entrant sees every match in the viewer; a bot's stderr and its diagnostics are its
    author's and the organiser's alone."""
    match_id, _, _ = running.server.games.history(ada)[0]
    viewer = f"/matches/{match_id}"
    for who, status in ((None, 401), ("ada", 200), ("bob", 200), ("olga", 200)):
        assert running.client(who).get(viewer).status_code == status
    assert match_id in running.client("bob").get(viewer).text
    for wrong in ("ladder-9999999", "..%2F..%2Fladder.sqlite", "%2Fetc%2Fpasswd"):
        assert running.client("bob").get(f"/matches/{wrong}").status_code == 404
    log = f"/entrants/ada/logs/{match_id}"
    for who, status in ((None, 401), ("ada", 200), ("bob", 403), ("olga", 200)):
        assert running.client(who).get(log).status_code == status
    assert f"match {match_id}: seat" in running.client("ada").get(log).text  # the example bot's stderr line
    deadline = time.monotonic() + 10  # the diagnostics are worked out afresh at most every few seconds
    while 'id="diagnostics"' not in (own := running.client("ada").get("/entrants/ada").text):
        assert time.monotonic() < deadline, "no diagnostics on ada's page"
        time.sleep(0.5)
    other = running.client("bob").get("/entrants/ada").text
    assert f"/matches/{match_id}" in own and f"/matches/{match_id}" in other and 'id="rating-chart"' in own
    assert 'id="diagnostics"' in own and "no flag" in own
    assert 'id="diagnostics"' not in other and "/logs/" not in other


def test_the_ladder_ending_a_batch_never_touches_a_check_under_way(tmp_path: Path) -> None:
    """Ending a batch kills every bot the ladder's process started: a check's bots are not among them."""
    slow = (
        b"import time\nfrom arena.sdk import run\n\n\nclass Bot:\n    def act(self, message):\n"
        b"        time.sleep(0.05)  # a check of a few seconds\n        return message['legal'][0]\n\n\nrun(Bot())\n"
    )
    server = start_server(tmp_path)
    running = next(server)
    try:
        digest = upload(running, "ada", slow)
        deadline = time.monotonic() + 30
        while running.server.checker.current is None:  # the check is under way
            assert time.monotonic() < deadline
            time.sleep(0.05)
        time.sleep(0.5)
        kill_all()  # what the ladder's executor does at the end of every batch, in the server's process
        assert wait_for_check(running.store, running.id("ada"), digest).status is Status.PASSED
    finally:
        server.close()


def test_the_ladder_plays_on_a_dask_cluster_as_arena_run_does(tmp_path: Path) -> None:
    """A cluster as a course starts one: `dask scheduler` and `dask worker`, processes of their own."""
    pytest.importorskip("distributed")
    dask = Path(sys.executable).with_name("dask")
    found = tmp_path / "scheduler.json"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    scheduler = subprocess.Popen(
        [dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", found], **quiet
    )
    worker = subprocess.Popen(
        [dask, "worker", "--scheduler-file", found, "--nworkers", "1", "--nthreads", "1", "--no-dashboard"], **quiet
    )
    try:
        address = scheduler_address(found, scheduler)
        server = start_server(tmp_path, extra="", executor=f'{{type: dask, address: "{address}"}}')
        running = next(server)
        try:
            digest = upload(running, "ada", RANDOM_BOT)
            assert wait_for_check(running.store, running.id("ada"), digest).status is Status.PASSED
            running.server.games.resume()
            wait_for_matches(running, version_name("ada", digest), 4)
            places = {place for _, _, place in running.server.games.history(version_name("ada", digest))}
            assert places and places <= {1, 2}  # its place in each match, the winner's 1, as its page shows it
        finally:
            server.close()
    finally:
        for process in (worker, scheduler):
            process.terminate()
            process.wait(timeout=30)
    played = recorded(tmp_path)
    assert len(played) >= 4
    logs = list((tmp_path / "data" / MATCHES / "logs").rglob("*.log"))
    assert logs  # the cluster's workers send each match's stderr back with its result


def scheduler_address(found: Path, scheduler: subprocess.Popen[bytes]) -> str:
    """The address the scheduler wrote, once it has written it whole."""
    deadline = time.monotonic() + 60
    while True:
        assert time.monotonic() < deadline and scheduler.poll() is None
        try:
            return str(json.loads(found.read_text())["address"])
        except (OSError, ValueError, KeyError):
            time.sleep(0.1)


def test_a_ladder_paused_by_the_organiser_stays_paused_after_a_restart(tmp_path: Path) -> None:
    server = start_server(tmp_path)
    running = next(server)
    running.server.games.resume()
    running.server.games.pause()
    server.close()
    again = start_server(tmp_path, people=False, paused=None)
    running = next(again)
    try:
        assert running.server.games.paused
        running.server.games.resume()
    finally:
        again.close()
    third = start_server(tmp_path, people=False, paused=None)
    assert not next(third).server.games.paused
    third.close()


def test_a_check_shows_its_entrant_no_path_of_the_server(tmp_path: Path) -> None:
    """A traceback names the files it passed through: the entrant sees their own file by its name, not where the
    server keeps the ladder, the arena or its Python."""
    server = start_server(tmp_path)
    running = next(server)
    try:
        digest = upload(running, "ada", b"from arena.sdk import run\nraise RuntimeError('boom')\n")
        version = wait_for_check(running.store, running.id("ada"), digest)
        shown = json.dumps(version.report)
        assert version.status is Status.FAILED and "boom" in shown and '\\"bot.py\\", line 2' in shown, shown
        for place in (str(running.ladder.data), sys.prefix, str(Path(arena.__file__).resolve().parent)):
            assert place not in shown, place
    finally:
        server.close()

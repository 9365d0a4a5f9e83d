"""`arena serve` as an organiser runs it: a real process on a loopback port, killed with SIGKILL in the middle of the
ladder and started again: every match finished before the kill is kept, and the ladder goes on."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from arena.serve.ladder import load_ladder
from arena.serve.scheduler import MATCHES
from arena.serve.server import open_ladder
from arena.serve.uploads import Preset, store_upload
from arena.store import ResultStore
from tests.serve.conftest import RANDOM_BOT, ladder_file

ARENA = Path(sys.executable).with_name("arena")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(path: Path, port: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [str(ARENA), "serve", str(path), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: the kill takes its workers and bots too
    )


def leaderboard(port: int) -> dict[str, object]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/leaderboard", timeout=5) as answer:
        return dict(json.load(answer))


def wait_for(port: int, matches: int, process: subprocess.Popen[bytes], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
        try:
            status = str(leaderboard(port)["status"])
            if int(status.split()[0]) >= matches:
                return
        except OSError:
            pass  # not listening yet
        time.sleep(0.3)
    raise AssertionError(f"fewer than {matches} matches within {timeout} s")


def recorded(data: Path) -> set[str]:
    store = ResultStore.open_existing(data / MATCHES)
    try:
        return {match.job.match_id for match in store.matches()}
    finally:
        store.close()


def test_a_server_killed_mid_ladder_keeps_every_finished_match_and_goes_on(tmp_path: Path) -> None:
    path = ladder_file(tmp_path)
    ladder = load_ladder(path)
    store, versions = open_ladder(ladder)
    for name in ("ada", "bob"):
        ((entrant, _),) = store.add_entrants([(name, f"{name}@uni.example")])
        version = store_upload(RANDOM_BOT + f"# {name}\n".encode(), "bot.py", Preset.PYTHON, versions)
        store.add_version(entrant.id, version.digest, "bot.py", "python", version.command, version.protocol)
        store.checked(entrant.id, version.digest, True, {"passed": True, "summary": []})
    port = free_port()
    process = start(path, port)
    try:
        wait_for(port, 6, process)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)
    before = recorded(ladder.data)
    assert len(before) >= 6
    process = start(path, port)
    try:
        wait_for(port, len(before), process)  # read back and rated again at the start
        wait_for(port, len(before) + 4, process)
        names = {row["name"] for row in leaderboard(port)["rows"]}  # type: ignore[attr-defined]
        assert {"ada", "bob", "random", "heuristic"} <= names
    finally:
        process.send_signal(signal.SIGINT)  # as Ctrl-C: a clean stop
        try:
            process.wait(30)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
    after = recorded(ladder.data)
    assert before < after


def test_a_second_server_on_the_same_ladder_is_refused(tmp_path: Path) -> None:
    path = ladder_file(tmp_path)
    ladder = load_ladder(path)
    open_ladder(ladder)
    with open(ladder.data / "server.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # as the running server holds it
        done = subprocess.run(
            [str(ARENA), "serve", str(path), "--port", str(free_port())], capture_output=True, text=True, timeout=60
        )
    assert done.returncode == 2
    assert "another arena serve is running this ladder" in done.stderr


def test_validate_reads_a_ladder_file(tmp_path: Path) -> None:
    path = ladder_file(tmp_path)
    done = subprocess.run([str(ARENA), "validate", str(path)], capture_output=True, text=True, timeout=60)
    assert (
        done.returncode == 0
        and "a ladder (test-ladder): 2 players a table, reference bots random, heuristic" in done.stdout
    )
    path.write_text(path.read_text().replace("ladder:\n  data: data\n", "ladder:\n  data: data\n  dat: x\n"))
    done = subprocess.run([str(ARENA), "validate", str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and f"{path}:13: ladder.dat: unknown key; did you mean 'data'?" in done.stderr

"""A bot uploaded through the page is contained as in a tournament (strict sandbox): it reads neither the ladder's
database, its signing key nor another entrant's code, cannot change its own stored version, and reaches no server
on the machine. Each hostile bot plays legally and exits with an error the moment one of its attacks works, so
its check passes only if every attack failed (and, if one worked, the check's report says which)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.sandbox.levels import probe_strict
from arena.serve.store import Status
from tests.serve.conftest import RANDOM_BOT, Running, csrf, start_server, wait_for_check

ATTACK = """
import os, socket, sys
from arena.sdk import run

TARGETS = {targets!r}
PORT = {port}


def attacks():
    for path in TARGETS:
        try:
            with open(path, "rb") as stream:
                yield f"read {{path}}: {{stream.read(16)!r}}"
        except OSError:
            pass
    for path in (os.path.abspath(__file__), os.path.join(os.path.dirname(os.path.abspath(__file__)), "planted.py")):
        try:
            with open(path, "a") as stream:
                stream.write("# changed")
            yield f"wrote {{path}}"
        except OSError:
            pass
    try:
        socket.create_connection(("127.0.0.1", PORT), timeout=2).close()
        yield f"connected to 127.0.0.1:{{PORT}}"
    except OSError:
        pass


class Bot:
    def match_start(self, message):
        worked = list(attacks())
        if worked:
            print("ATTACK WORKED: " + "; ".join(worked), file=sys.stderr, flush=True)
            os._exit(7)

    def act(self, message):
        return message["legal"][0]


run(Bot(), name="hostile")
"""


def strict_server(folder: Path, **options: str) -> Iterator[Running]:
    problem = probe_strict()
    if problem is not None:
        pytest.skip(f"the strict sandbox cannot run here: {problem}")
    yield from start_server(folder, sandbox="strict", **options)


def upload_as(running: Running, who: str, source: bytes) -> None:
    client = running.client(who)
    answer = client.post(
        "/upload",
        data={"csrftoken": csrf(client), "preset": "python"},
        files={"file": ("bot.py", source)},
        follow_redirects=False,
    )
    assert answer.status_code == 303


@pytest.fixture
def strict(tmp_path: Path) -> Iterator[Running]:
    yield from strict_server(tmp_path)


def test_a_hostile_upload_reaches_nothing_of_the_ladder_or_its_entrants(strict: Running) -> None:
    running = strict
    upload_as(running, "ada", RANDOM_BOT)
    (honest,) = running.store.versions(running.id("ada"))
    data = running.ladder.data
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    try:
        targets = [
            str(data / "ladder.sqlite"),
            str(data / "secret.key"),
            str(data / "versions" / honest.digest / "bot.py"),  # another entrant's code
            "/etc/shadow",
        ]
        source = ATTACK.format(targets=targets, port=port).encode()
        upload_as(running, "bob", source)
        (hostile,) = running.store.versions(running.id("bob"))
        checked = wait_for_check(running.store, running.id("bob"), hostile.digest)
        assert checked.report is not None
        assert checked.status is Status.PASSED, "\n".join(checked.report["summary"])
    finally:
        listener.close()
    stored = data / "versions" / hostile.digest
    assert sorted(path.name for path in stored.iterdir()) == ["bot.py"]
    assert (stored / "bot.py").read_bytes() == source  # the version as uploaded, unchanged


RESOURCE_ATTACKS = {
    "fork-bomb": "while True:\n            os.fork()\n",
    "memory": "hoard = [bytearray(16 << 20) for _ in range(64)]\n",
    "disk": "with open(os.path.join(os.environ.get('TMPDIR', '/tmp'), 'fill'), 'wb') as out:\n"
    "            while True:\n                out.write(b'x' * (1 << 20))\n",
    "spin": "while True:\n            pass\n",
}
RESOURCE_BOT = """
import os
from arena.sdk import run


class Bot:
    def act(self, message):
        {attack}
        return message["legal"][0]


run(Bot(), name="hog")
"""


@pytest.fixture
def tight(tmp_path: Path) -> Iterator[Running]:
    limits = "{move_ms: 300, startup_ms: 10000, memory_mb: 128, disk_mb: 16, processes: 16, cpu_s: 10}"
    yield from strict_server(tmp_path, limits=limits)


@pytest.mark.parametrize("attack", sorted(RESOURCE_ATTACKS))
def test_a_bot_that_attacks_the_machine_fails_its_check_and_hurts_nobody(tight: Running, attack: str) -> None:
    """Forking without end, hoarding memory, filling the disk or spinning: the check stops it at its limit, says
    which, and the server goes on answering."""
    running = tight
    upload_as(running, "bob", RESOURCE_BOT.format(attack=RESOURCE_ATTACKS[attack]).encode())
    (version,) = running.store.versions(running.id("bob"))
    checked = wait_for_check(running.store, running.id("bob"), version.digest, timeout=120)
    assert checked.status is Status.FAILED and checked.report is not None
    reasons = {fault["reason"] for fault in checked.report["faults"]}
    assert reasons and reasons <= {"limit", "timeout", "crash"}, reasons
    assert running.client("ada").get("/api/leaderboard").status_code == 200

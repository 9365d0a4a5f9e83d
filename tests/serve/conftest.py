"""A ladder server in the test's process: its real store, checker and ladder on a folder of the test's own,
driven through Starlette's TestClient (every middleware and route as uvicorn serves them)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from arena.serve.app import Server, create_app
from arena.serve.checks import Checker
from arena.serve.ladder import LadderConfig, load_ladder
from arena.serve.scheduler import Ladder
from arena.serve.server import open_ladder, standings
from arena.serve.store import Entrant, LadderStore, Role, Status, Version

ROOT = Path(__file__).resolve().parents[2]
RANDOM_BOT = (ROOT / "examples" / "random_bot.py").read_bytes()


def ladder_file(
    folder: Path,
    extra: str = "",
    sandbox: str = "none",
    players: int = 2,
    limits: str = "{move_ms: 2000, startup_ms: 20000}",
    executor: str = "",
) -> Path:
    path = folder / "ladder.yaml"
    path.write_text(
        "name: test-ladder\n"
        'ruleset: "2019"\n'
        f"players_per_match: {players}\n"
        f"sandbox: {sandbox}\n"
        f"limits: {limits}\n"
        "concurrency: 1\n" + (f"executor: {executor}\n" if executor else "") + "output: final\n"
        "bots:\n"
        "  - {name: random, builtin: random}\n"
        "  - {name: heuristic, builtin: heuristic}\n"
        "ladder:\n"
        "  data: data\n" + extra
    )
    return path


@dataclass
class Running:
    ladder: LadderConfig
    store: LadderStore
    server: Server
    app: Callable[..., object]
    people: dict[str, tuple[Entrant, str]]
    """name: (entrant, sign-in token) for ada and bob (entrants) and olga (the organiser)."""
    clock: list[float]
    """The server's clock, which a test moves (past the deadline)."""

    def client(self, who: str | None = None) -> TestClient:
        """A browser of its own (its own cookies), signed in as `who` (None: nobody)."""
        client = TestClient(self.app, base_url="http://127.0.0.1:8000")
        if who is not None:
            answer = client.get(f"/sign-in/{self.people[who][1]}", follow_redirects=False)
            assert answer.status_code == 303
        return client

    def id(self, who: str) -> int:
        return self.people[who][0].id


def csrf(client: TestClient, page: str = "/me") -> str:
    """The CSRF token a page's forms carry (it sets the cookie the token must match)."""
    found = re.search(r'name="csrftoken" value="([^"]+)"', client.get(page).text)
    assert found is not None, "no form on the page"
    return found.group(1)


def wait_for_check(store: LadderStore, entrant: int, digest: str, timeout: float = 90) -> Version:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        version = store.version(entrant, digest)
        assert version is not None
        if version.status is not Status.CHECKING:
            return version
        time.sleep(0.1)
    raise AssertionError(f"the check of {digest[:12]} did not end within {timeout} s")


@pytest.fixture
def running(tmp_path: Path) -> Iterator[Running]:
    yield from start_server(tmp_path)


def start_server(
    folder: Path,
    extra: str = "",
    sandbox: str = "none",
    players: int = 2,
    people: bool = True,
    limits: str = "{move_ms: 2000, startup_ms: 20000}",
    executor: str = "",
    paused: bool | None = True,
) -> Iterator[Running]:
    """A server on the folder's ladder; with `people`, ada and bob (entrants) and olga (the organiser) are added
    first (a server started again on the same folder finds them there, with new links)."""
    ladder = load_ladder(ladder_file(folder, extra, sandbox, players, limits, executor))
    store, versions = open_ladder(ladder)
    if people:
        store.add_entrants([("ada", "ada@uni.example"), ("bob", "bob@uni.example")])
        store.add_entrants([("olga", "olga@uni.example")], Role.ORGANISER)
    signed = {entrant.name: (entrant, store.new_link(entrant.id)) for entrant in store.entrants()}
    checker = Checker(store, versions, ladder)
    games = Ladder(ladder, store, versions)
    if paused is not None:  # None: as the server finds it
        games.pause() if paused else games.resume()  # the tests that play matches resume it
    clock = [time.time()]
    server = Server(
        ladder,
        store,
        checker,
        versions,
        games,
        clock=lambda: clock[0],
        standings=lambda: standings(ladder, store, games),
    )
    checker.start()
    games.start()
    try:
        yield Running(ladder, store, server, create_app(server), signed, clock)
    finally:
        games.stop(timeout=60)
        checker.stop(timeout=60)

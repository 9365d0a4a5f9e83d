"""`arena serve` and `arena serve-admin`: the ladder's server started from its file, and the organiser's commands."""

from __future__ import annotations

import fcntl
from pathlib import Path
from typing import Any

from arena.errors import UsageError
from arena.serve.checks import Checker
from arena.serve.ladder import LadderConfig
from arena.serve.scheduler import Ladder, version_name
from arena.serve.store import LadderStore

LOCK = "server.lock"
"""Locked by the running server: a second one on the same data folder is refused."""
VERSIONS = "versions"
"""The data folder's folder of uploaded versions, one folder each, named by its hash."""


def open_ladder(ladder: LadderConfig) -> tuple[LadderStore, Path]:
    """The ladder's store and versions folder, made on first use (the data folder readable by its owner only:
    it holds every entrant's code and the key that signs sessions)."""
    ladder.data.mkdir(mode=0o700, parents=True, exist_ok=True)
    versions = ladder.data / VERSIONS
    versions.mkdir(mode=0o700, exist_ok=True)
    return LadderStore(ladder.data), versions


def standings(ladder: LadderConfig, store: LadderStore, games: Ladder) -> dict[str, Any]:
    """The leaderboard: the reference bots and every entrant's active version, by rating (openskill's ordinal,
    mu - 3 sigma: a bot with few matches cannot top it by luck)."""
    rated = games.ratings()
    active = store.active()
    rows = []
    for bot in ladder.tournament.bots:
        rows.append(_row(bot.name, "reference", rated.get(bot.name)))
    for entrant in store.entrants():
        digest = active.get(entrant.id)
        if digest is not None:
            rows.append(_row(entrant.name, digest[:12], rated.get(version_name(entrant.name, digest))))
    rows.sort(key=lambda row: -row.pop("order"))
    played = sum(matches for _, _, matches in rated.values()) // max(1, ladder.tournament.players_per_match)
    state = "paused by the organiser" if games.paused else "running"
    return {"status": f"{played} matches played; the ladder is {state}.", "rows": rows}


def _row(name: str, version: str, rating: tuple[float, float, int] | None) -> dict[str, Any]:
    ordinal, _, matches = rating if rating is not None else (float("-inf"), 0.0, 0)
    shown = "" if rating is None else f"{ordinal:.1f}"
    return {"name": name, "version": version, "rating": shown, "matches": matches, "order": ordinal}


def serve(ladder: LadderConfig, host: str, port: int, secure_cookies: bool = False) -> None:
    """Run the server until interrupted; the check in progress is finished or taken again at the next start, and
    every finished match is kept."""
    import uvicorn

    from arena.serve.app import Server, create_app

    store, versions = open_ladder(ladder)
    with open(ladder.data / LOCK, "w") as lock:  # held while the server runs: one server per ladder
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(f"{ladder.data}: another arena serve is running this ladder (stop it first)") from None
        checker = Checker(store, versions, ladder)
        games = Ladder(ladder, store, versions)
        server = Server(ladder, store, checker, versions, games, standings=lambda: standings(ladder, store, games))
        checker.start()
        games.start()
        try:
            uvicorn.run(create_app(server, secure_cookies), host=host, port=port, log_level="warning")
        finally:
            games.stop(timeout=30)
            checker.stop(timeout=5)

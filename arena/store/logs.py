"""Each bot's stderr, match by match, in the output folder: OUTPUT/logs/BOT/MATCH.log, written as the match ends
(by the worker that played it, or by the arena for a cluster's match). A bot that wrote nothing has no file."""

from __future__ import annotations

from pathlib import Path

from arena.store.disk import write_atomically

LOGS = "logs"


def log_path(output: Path, bot: str, match_id: str) -> Path:
    return output / LOGS / bot / f"{match_id}.log"


def write_log(output: Path, bot: str, match_id: str, log: bytes) -> None:
    """Keep a bot's stderr of one match as text a person can read (bytes that are not UTF-8 shown as such)."""
    write_atomically(log_path(output, bot, match_id), log.decode("utf-8", errors="replace"))


def logged_bots(output: Path) -> list[str]:
    """The bots with at least one log, by name."""
    folder = output / LOGS
    return sorted(path.name for path in folder.iterdir() if path.is_dir()) if folder.is_dir() else []


def match_logs(output: Path, bot: str) -> list[Path]:
    """A bot's logs, in the order of their matches' ids."""
    return sorted((output / LOGS / bot).glob("*.log"))


def logs_by_match(output: Path) -> dict[str, tuple[str, ...]]:
    """For each match with a log, the bots that have one, by name."""
    found: dict[str, list[str]] = {}
    for bot in logged_bots(output):
        for path in match_logs(output, bot):
            found.setdefault(path.stem, []).append(bot)
    return {match_id: tuple(bots) for match_id, bots in found.items()}

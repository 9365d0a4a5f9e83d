"""Writes the report folder: OUTPUT/report/index.html, one viewer page, and a small data file per match.

The per-match files (matches/NAME.js, a few kilobytes) are written by the worker that played the match,
as it finishes (`arena.runner.worker`); the end of a run only writes the index. `write_report` also
writes any data file that is missing (a tournament played before there were any, a cluster's worker
without the output folder) or of an older layout from the stored replay, so `arena report OUTPUT` rebuilds
everything.
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from arena.analysis.diagnose import diagnose, fair_play
from arena.errors import ReplayError
from arena.replay import read_replay
from arena.report.bot_page import BOTS, bot_page_name, render_bot_page
from arena.report.compact import REPORT, file_stem, is_current, matches_folder, replay_data, script
from arena.report.data import TournamentData, gather
from arena.report.index_page import Progress, render_index
from arena.report.replay_page import VIEWER, render_viewer
from arena.report.sprt_section import sprt_section
from arena.store import ResultStore
from arena.store.disk import write_atomically, writing
from arena.store.logs import logs_by_match

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Report:
    index: Path
    matches: int
    """Matches the viewer can open."""
    problems: list[str] = field(default_factory=list)
    """Replays that could not be read: those matches cannot be opened in the viewer."""


def write_report(output: Path) -> Report:
    """The report of the tournament in `output`, from its stored results and replays only: the index, the
    viewer page, and each match's data file where it is missing or of an older layout. Files of matches no longer
    in the results (a restarted tournament) are removed, and so are the per-match pages of older reports."""
    data = _gather(output)
    folder = output / REPORT
    matches = matches_folder(output)
    with writing(matches):
        matches.mkdir(parents=True, exist_ok=True)
    viewable: set[str] = set()
    problems: list[str] = []
    for match in data.matches:
        if match.replay is None or match.bye:
            continue
        path = matches / f"{file_stem(match.match_id)}.js"
        if not is_current(path, match.match_id):  # missing, or of an older layout (its seed a rounded number)
            try:
                rebuilt = replay_data(read_replay(match.replay))
            except ReplayError as error:
                rebuilt, why = None, str(error)
            else:
                why = "its first line starts no match"
            if rebuilt is None:
                problems.append(f"{match.match_id}: {why}")
                log.warning("no viewer data for %s: %s", match.match_id, why)
                continue
            write_atomically(path, script(rebuilt))
        viewable.add(match.match_id)
    kept = {f"{file_stem(match_id)}.js" for match_id in viewable}
    for stale in matches.glob("*.js"):
        if stale.name not in kept:
            stale.unlink()
    shutil.rmtree(folder / "replays", ignore_errors=True)  # an older report's page per match
    _write_bot_pages(output, viewable)
    store = ResultStore.open_existing(output)
    try:
        extra = sprt_section(store)
    finally:
        store.close()
    index = _write(output, data, viewable, None, bot_pages=True, extra=extra)
    return Report(index, len(viewable), problems)


def _write_bot_pages(output: Path, viewable: set[str]) -> None:
    """A page per bot (report/bots/NAME.html): its diagnostics; pages of bots no longer in the results go."""
    store = ResultStore.open_existing(output)
    try:
        found = diagnose(store)
        fair = fair_play(store, [bot.bot for bot in found])
    finally:
        store.close()
    folder = output / REPORT / BOTS
    with writing(folder):
        folder.mkdir(parents=True, exist_ok=True)
    logs = logs_by_match(output)
    for bot in found:
        logged = {match_id for match_id, bots in logs.items() if bot.bot in bots}
        write_atomically(folder / bot_page_name(bot.bot), render_bot_page(bot, fair.bot(bot.bot), viewable, logged))
    kept = {bot_page_name(bot.bot) for bot in found}
    for stale in folder.glob("*.html"):
        if stale.name not in kept:
            stale.unlink()


def write_index(output: Path, progress: Progress | None = None) -> Path:
    """Only the index (and the viewer page): the live standings of a running tournament, cheap enough to
    write every few seconds. Every recorded match is linked; its data file is already there."""
    data = _gather(output)
    played = {match.match_id for match in data.matches if match.replay is not None and not match.bye}
    return _write(output, data, played, progress)


def write_replay_page(replay: Path, target: Path) -> str | None:
    """A viewer page for one replay file, its data inline; where the replay breaks the rules, the page stops
    there and the problem is returned (the page says it too)."""
    data = replay_data(read_replay(replay))
    if data is None:
        raise ReplayError(f"{replay}: its first line starts no match")
    write_atomically(target, render_viewer(script(data)))
    error = data["error"]
    return None if error is None else str(error)


def _gather(output: Path) -> TournamentData:
    store = ResultStore.open_existing(output)
    try:
        return gather(store)
    finally:
        store.close()


def _write(
    output: Path,
    data: TournamentData,
    viewable: set[str],
    progress: Progress | None,
    bot_pages: bool = False,
    extra: str = "",
) -> Path:
    folder = output / REPORT
    viewer = folder / VIEWER
    page = render_viewer(back="index.html")
    if not viewer.exists() or viewer.read_text(encoding="utf-8") != page:
        write_atomically(viewer, page)
    index = folder / "index.html"
    page = render_index(data, viewable, str(output), progress, logs_by_match(output), bot_pages=bot_pages, extra=extra)
    write_atomically(index, page)
    return index

"""Writes the report folder: OUTPUT/report/index.html and a viewer page per match under replays/."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arena.errors import ReplayError
from arena.replay import read_replay
from arena.report.data import MatchEntry, gather
from arena.report.index_page import render_index, replay_href
from arena.report.replay_page import render_replay
from arena.report.steps import replay_steps
from arena.runner.jobs import FaultRow
from arena.store import ResultStore
from arena.store.disk import write_atomically, writing

REPORT = "report"
REPLAY_PAGES: int | None = None
"""Viewer pages written by default: every match's. A batch of thousands of matches may ask for fewer
(about 30 ms and 100-400 KB a page); matches with faults get theirs first."""

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Report:
    index: Path
    pages: int
    """Viewer pages written."""
    problems: list[str] = field(default_factory=list)
    """Replays that could not be read: those matches have no viewer page."""


def write_report(output: Path, replay_pages: int | None = REPLAY_PAGES) -> Report:
    """The report of the tournament in `output`, from its stored results and replays only.

    `replay_pages`: how many matches get a viewer page (None: all of them).
    """
    store = ResultStore.open_existing(output)
    try:
        data = gather(store)
    finally:
        store.close()
    folder = output / REPORT
    replays = folder / "replays"
    with writing(replays):
        replays.mkdir(parents=True, exist_ok=True)
    pages: dict[str, str] = {}
    fault_steps: dict[FaultRow, int] = {}
    problems: list[str] = []
    written: set[Path] = set()
    for match in _with_pages(data.matches, replay_pages):
        assert match.replay is not None
        try:
            steps = replay_steps(read_replay(match.replay))
        except ReplayError as error:
            problems.append(f"{match.match_id}: {error}")
            log.warning("no viewer page for %s: %s", match.match_id, error)
            continue
        href = replay_href(match.match_id)
        page = folder / href
        write_atomically(page, render_replay(steps, back="../index.html"))
        written.add(page)
        pages[match.match_id] = href
        for fault in match.faults:
            step = None if fault.after_match else steps.fault_step(fault.seat)
            fault_steps[fault] = step if step is not None else max(0, len(steps.steps) - 1)
    for stale in replays.glob("*.html"):
        if stale not in written:
            stale.unlink()  # a page of a match no longer in the results (a restarted tournament)
    index = folder / "index.html"
    write_atomically(index, render_index(data, pages, fault_steps, str(output)))
    return Report(index, len(pages), problems)


def write_replay_page(replay: Path, target: Path) -> str | None:
    """A viewer page for one replay file; where the replay breaks the rules, the page stops there and
    the problem is returned (the page says it too)."""
    steps = replay_steps(read_replay(replay))
    write_atomically(target, render_replay(steps))
    return steps.error


def _with_pages(matches: Sequence[MatchEntry], most: int | None) -> list[MatchEntry]:
    """The matches that get a viewer page: all of them, or up to `most`, those with faults first."""
    played = [m for m in matches if m.replay is not None and not m.bye]
    if most is None or len(played) <= most:
        return played
    first = [m for m in played if m.faults]
    rest = [m for m in played if not m.faults]
    chosen = {m.match_id for m in (first + rest)[: max(0, most)]}
    return [m for m in played if m.match_id in chosen]

"""The report while a tournament runs and after it resumes: a real `arena run`, a real headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from arena.config import load_config
from arena.report import write_report
from arena.runner.tournament import run_tournament
from tests.report.conftest import ROOT, standings_json, write_tournament
from tests.report.test_replay_viewer import Viewer, check_full, open_at, positions, walk

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

SLOW_BOT = """import time
from arena.sdk import run


def answer(message):
    time.sleep(0.03)  # a thinking bot: the run lasts a few seconds, long enough to watch
    return 0


run(answer)
"""


def _status(browser: WebDriver) -> str:
    try:
        return str(browser.find_element("id", "status").text)
    except Exception:  # the page is reloading itself
        return ""


def _wait(browser: WebDriver, condition: str, until: float) -> str:
    """Poll the page's status until it matches `condition` (a regex); the status then."""
    while time.monotonic() < until:
        status = _status(browser)
        if re.fullmatch(condition, status):
            return status
        time.sleep(0.1)
    raise AssertionError(f"the page's status never matched {condition!r}; last {_status(browser)!r}")


def _refreshes(browser: WebDriver) -> bool:
    return bool(browser.find_elements("css selector", 'meta[http-equiv="refresh"]'))


def test_the_live_page_shows_progress_reloads_itself_and_ends_with_the_final_standings(
    browser: WebDriver, tmp_path: Path
) -> None:
    (tmp_path / "slow.py").write_text(SLOW_BOT)
    config = write_tournament(
        tmp_path,
        "club-night",
        "format: round-robin\nplayers_per_match: 2\nrepeats: 2\nbots:\n"
        f"  - {{name: slow, command: [{sys.executable}, slow.py]}}\n"
        "  - {name: random-1, builtin: random}\n"
        "  - {name: random-2, builtin: random}\n",
    )
    index = load_config(config).output / "report" / "index.html"
    run = subprocess.Popen(
        [sys.executable, "-m", "arena", "run", str(config), "--quiet"],
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not index.exists():
            assert run.poll() is None, "the run ended before any live page was written"
            assert time.monotonic() < deadline
            time.sleep(0.02)
        browser.get(index.as_uri())
        first = _wait(browser, r"in progress: [1-5]/6", deadline)
        assert run.poll() is None
        assert _refreshes(browser)
        assert browser.find_element("id", "status").get_attribute("data-running") == "true"
        assert browser.find_elements("css selector", "#standings-table tr[data-bot]")
        # the open page reloads itself: a later status shows with no request from here
        _wait(browser, rf"(?!{re.escape(first)}$)(in progress: [1-6]/6|complete)", deadline)
        out, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, err
    assert f"report: {index}" in out
    _wait(browser, "complete", time.monotonic() + 20)
    assert not _refreshes(browser)  # the final report stays put
    shown = [row.get_attribute("data-bot") for row in browser.find_elements("css selector", "#standings-table tr")]
    assert shown[1:] == [row["bot"] for row in standings_json(index.parents[1])]
    assert len(browser.find_elements("css selector", "#matches a.replay-link")) == 6


class Interrupted(Exception):
    """As Ctrl-C between two matches."""


def test_a_report_of_a_tournament_resumed_after_an_interruption_is_complete(browser: WebDriver, tmp_path: Path) -> None:
    body = "format: round-robin\nplayers_per_match: 3\nrepeats: 2\nbots:\n" + "".join(
        f"  - {{name: {kind}-{n}, builtin: {kind}}}\n" for n, kind in enumerate(("random", "heuristic") * 2)
    )
    config = load_config(write_tournament(tmp_path, "resumed", body))

    def stop_after_three(done: int, total: int) -> None:
        if done == 3:
            raise Interrupted

    try:
        run_tournament(config, progress=False, live=stop_after_three)
    except Interrupted:
        pass
    else:
        raise AssertionError("the run was not interrupted")
    # Three matches recorded (the rerun keeps them); a worker may have ended a fourth, its replay written before the
    # arena records it, and the rerun plays that one again.
    assert len(list((config.output / "replays").glob("*.jsonl"))) >= 3
    summary = run_tournament(config, progress=False)
    assert (summary.kept, summary.played) == (3, 5)
    report = write_report(config.output)
    assert report.matches == 8 and not report.problems

    whole = tmp_path / "whole"
    whole.mkdir()
    shutil.copy(tmp_path / "resumed.yaml", whole / "resumed.yaml")
    uninterrupted = load_config(whole / "resumed.yaml")
    run_tournament(uninterrupted, progress=False)
    write_report(uninterrupted.output)
    files = {p.name: p.read_bytes() for p in (config.output / "report" / "matches").glob("*.js")}
    assert files == {p.name: p.read_bytes() for p in (uninterrupted.output / "report" / "matches").glob("*.js")}
    assert len(files) == 8

    browser.get(report.index.as_uri())
    assert browser.find_element("id", "status").text == "complete"
    assert len(browser.find_elements("css selector", "#matches a.replay-link")) == 8
    for replay in sorted((config.output / "replays").glob("*.jsonl")):
        truth = positions(replay)
        viewer = Viewer(report.index.parent / "viewer.html", replay.stem)
        open_at(browser, viewer, 0)
        for shown, at in zip(walk(browser, len(truth)), truth, strict=True):
            check_full(shown, at)

"""Small real tournaments, their reports, and one headless Chromium per test module to look at them.

The browser is Debian's `chromium` driven by `chromium-driver` through Selenium, both given by path so
Selenium never looks for (or downloads) a driver of its own: no test touches the network. Without a
browser the tests are skipped with the reason, except under CI (`CI` set), where that is a failure.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from arena.cli import main
from arena.config import load_config
from arena.report import write_report
from arena.runner.tournament import run_tournament
from tests.conftest import missing

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

ROOT = Path(__file__).resolve().parents[2]
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
DRIVERS = ("chromedriver", "chromium-driver")
SCREENSHOTS_VARIABLE = "ARENA_UPDATE_SCREENSHOTS"
"""Set to 1 to copy the screenshots the tests take to docs/images/ (report.png, replay.png)."""


@dataclass(frozen=True, slots=True)
class Tournament:
    config: Path
    output: Path
    index: Path
    standings: list[dict[str, object]]
    """What `arena standings OUTPUT --format json` prints."""


def _find(names: tuple[str, ...], variable: str) -> str | None:
    given = os.environ.get(variable)
    if given and os.access(given, os.X_OK):
        return given
    return next((found for name in names if (found := shutil.which(name))), None)


def _no_browser(reason: str) -> None:
    missing(f"{reason} (Debian: apt-get install chromium chromium-driver)")


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    """One headless Chromium for the whole module (starting one costs about a second)."""
    yield from chromium(1280, 1000)


def chromium(width: int, height: int) -> Iterator[WebDriver]:
    """A headless Chromium with a window of this size, quit at the end; skipped (failed under CI) where there is
    none."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _no_browser("selenium is not installed (pip install -e '.[test]')")
    binary = _find(BROWSERS, "ARENA_CHROMIUM")
    driver_path = _find(DRIVERS, "ARENA_CHROMEDRIVER")
    if binary is None or driver_path is None:
        missing = " and ".join(name for name, path in (("chromium", binary), ("chromedriver", driver_path)) if not path)
        _no_browser(f"no {missing} found")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for argument in (
        "--headless=new",
        "--no-sandbox",  # root in a container: Chromium's own sandbox cannot start
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        f"--window-size={width},{height}",
        "--force-device-scale-factor=1",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def write_tournament(folder: Path, name: str, body: str) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(f"name: {name}\nseed: 7\nconcurrency: 1\nsandbox: none\noutput: out-{name}\n{body}")
    return path


def standings_json(output: Path) -> list[dict[str, object]]:
    stream = io.StringIO()
    with contextlib.redirect_stdout(stream):
        assert main(["standings", str(output), "--format", "json"]) == 0
    return json.loads(stream.getvalue())


def _finish(config_path: Path) -> Tournament:
    output = load_config(config_path).output
    report = write_report(output)
    return Tournament(config_path, output, report.index, standings_json(output))


@pytest.fixture(scope="session")
def two_player(tmp_path_factory: pytest.TempPathFactory) -> Tournament:
    """A round-robin of built-in bots, two a table, and a bot that logs a line to its stderr and answers an illegal
    index on its first turn."""
    folder = tmp_path_factory.mktemp("two-player")
    (folder / "bad.py").write_text(
        "import sys\nfrom arena.sdk import run\n"
        "print('bad: about to answer 999', file=sys.stderr)\nrun(lambda message: 999)\n"
    )
    config = write_tournament(
        folder,
        "pairs",
        "format: round-robin\nplayers_per_match: 2\nrepeats: 1\nbots:\n"
        "  - {name: random-0, builtin: random}\n"
        "  - {name: heuristic-1, builtin: heuristic}\n"
        "  - {name: random-2, builtin: random}\n"
        f"  - {{name: bad, command: [{sys.executable}, bad.py]}}\n",
    )
    run_tournament(load_config(config), progress=False)
    return _finish(config)


@pytest.fixture(scope="session")
def three_player(tmp_path_factory: pytest.TempPathFactory) -> Tournament:
    """Swiss, three a table, three rounds: a chart by round and head-to-head from shared tables."""
    folder = tmp_path_factory.mktemp("three-player")
    bots = "".join(
        f"  - {{name: {kind}-{n}, builtin: {kind}}}\n"
        for n, kind in enumerate(("random", "heuristic", "random", "heuristic", "random", "random"))
    )
    config = write_tournament(folder, "triples", f"format: swiss\nplayers_per_match: 3\nrounds: 3\nbots:\n{bots}")
    run_tournament(load_config(config), progress=False)
    return _finish(config)


@pytest.fixture(scope="session")
def gauntlet(tmp_path_factory: pytest.TempPathFactory) -> Tournament:
    """A course's gauntlet, duplicate: the longest match ids a report shows (`gauntlet-student-benedict-0001-d1`)."""
    folder = tmp_path_factory.mktemp("gauntlet")
    config = write_tournament(
        folder,
        "course",
        "format: gauntlet\nplayers_per_match: 2\nduplicate: true\n"
        "gauntlet: {candidates: [student-ann, student-benedict]}\nbots:\n"
        "  - {name: student-ann, builtin: random}\n"
        "  - {name: student-benedict, builtin: heuristic}\n"
        "  - {name: reference-heuristic, builtin: heuristic}\n"
        "  - {name: reference-random, builtin: random}\n",
    )
    run_tournament(load_config(config), progress=False)
    return _finish(config)


@pytest.fixture(scope="session")
def sequential(tmp_path_factory: pytest.TempPathFactory) -> Tournament:
    """A sequential test run to its max_pairs (6 pairs, 12 matches) without a decision."""
    folder = tmp_path_factory.mktemp("sprt")
    config = write_tournament(
        folder,
        "ab",
        "format: sprt\nplayers_per_match: 2\nsprt: {candidate: new, baseline: old, elo1: 10, max_pairs: 6}\nbots:\n"
        "  - {name: new, builtin: heuristic}\n"
        "  - {name: old, builtin: random}\n",
    )
    run_tournament(load_config(config), progress=False)
    return _finish(config)


def save_screenshot(driver: WebDriver, path: Path, docs_name: str) -> None:
    """A PNG of the whole page under tmp_path (a test artifact), and in docs/images/ when asked to."""
    height = driver.execute_script("return document.documentElement.scrollHeight")
    size = driver.get_window_size()
    driver.set_window_size(size["width"], min(max(int(height), 600), 4000))
    try:
        assert driver.save_screenshot(str(path))
    finally:
        driver.set_window_size(size["width"], size["height"])
    assert path.stat().st_size > 10_000
    if os.environ.get(SCREENSHOTS_VARIABLE) == "1":
        target = ROOT / "docs" / "images" / docs_name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)

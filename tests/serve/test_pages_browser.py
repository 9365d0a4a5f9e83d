"""The ladder's pages in a real browser: headless Chromium (found and started as tests/report/ does) against the app
served by a real uvicorn on a free loopback port, never the TestClient. The leaderboard refreshing itself on a
projector's screen, signing in and uploading through the form, a refused upload said on the page, the organiser's
switch for the ladder, and what another entrant is not shown.

Without selenium, Chromium or chromedriver the module is skipped with the reason (a failure under CI)."""

from __future__ import annotations

import contextlib
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import uvicorn

from arena.serve.store import Version
from arena.serve.uploads import Preset, store_upload
from tests.report.conftest import chromium
from tests.serve.conftest import ROOT, Running, start_server

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

RANDOM_BOT = ROOT / "examples" / "random_bot.py"
PROJECTOR = (1024, 768)
POLLED = 15.0
"""Seconds for the leaderboard's own poll (every 5 s) to show a change."""
CHECKED = 90.0
"""Seconds for a real check of an upload: a few with `sandbox: none`, more on a loaded machine."""
CHECK_OUTPUT = "a line of the check's output, for ada and the organiser only"


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    """One headless Chromium for the module, a projector's 1024x768; each test clears its cookies."""
    yield from chromium(*PROJECTOR)


@dataclass
class Site:
    """A ladder's server on loopback, seen through the module's browser."""

    running: Running
    base: str
    """http://127.0.0.1:PORT"""
    driver: WebDriver

    def open(self, path: str) -> None:
        self.driver.get(self.base + path)

    def sign_in(self, who: str) -> None:
        """The person's personal link, as the organiser mailed it: it lands on their own page."""
        self.open(f"/sign-in/{self.running.people[who][1]}")
        assert self.driver.current_url == f"{self.base}/entrants/{who}", self.driver.current_url

    def text(self, selector: str) -> str:
        """The element's text as shown, read in one script (never a reference gone stale by a navigation)."""
        found = self.driver.execute_script(
            "const found = document.querySelector(arguments[0]); return found === null ? null : found.innerText;",
            selector,
        )
        assert found is not None, f"nothing on {self.driver.current_url} matches {selector}"
        return str(found).strip()

    def count(self, selector: str) -> int:
        return int(self.driver.execute_script("return document.querySelectorAll(arguments[0]).length;", selector))

    def click(self, selector: str) -> None:
        """A click that loads a page (a link, a form's button): back once the new page has loaded."""
        from selenium.webdriver.common.by import By

        self.driver.execute_script("window.__old_page = 1")
        self.driver.find_element(By.CSS_SELECTOR, selector).click()
        self.wait(
            lambda: self.driver.execute_script(
                "return window.__old_page === undefined && document.readyState === 'complete'"
            ),
            30,
            f"no new page came after the click on {selector}",
        )

    def wait(self, condition: Callable[[], Any], timeout: float, message: str, every: float = 0.2) -> Any:
        """condition()'s first truthy answer within `timeout` seconds."""
        from selenium.webdriver.support.ui import WebDriverWait

        return WebDriverWait(self.driver, timeout, poll_frequency=every).until(lambda _: condition(), message)

    def upload(self, path: Path) -> None:
        """Ada's form, as a student fills it: the file chosen, the language and protocol left as they are."""
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import Select

        form = self.driver.find_element(By.ID, "upload")
        assert Select(form.find_element(By.NAME, "preset")).first_selected_option.get_attribute("value") == "python"
        assert Select(form.find_element(By.NAME, "protocol")).first_selected_option.get_attribute("value") == ""
        form.find_element(By.NAME, "file").send_keys(str(path.resolve()))
        self.click("#upload button[type=submit]")


@contextlib.contextmanager
def served(app: Any) -> Iterator[str]:
    """The app behind a real uvicorn on a free loopback port, in a thread of its own, until closed: its base URL."""
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", timeout_graceful_shutdown=5)
    )
    thread = threading.Thread(target=server.run, name="uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive(), "uvicorn stopped before it listened"
        assert time.monotonic() < deadline, "uvicorn did not start listening within 20 s"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(15)
        assert not thread.is_alive(), "uvicorn did not stop within 15 s"


@pytest.fixture
def site(tmp_path: Path, browser: WebDriver) -> Iterator[Site]:
    """A server of the test's own (ada and bob entrants, olga the organiser, the ladder paused) and the browser
    with none of an earlier test's cookies (a cookie is the host's whatever its port)."""
    started = start_server(tmp_path)
    running = next(started)
    try:
        with served(running.app) as base:
            browser.get(base + "/")
            browser.delete_all_cookies()
            yield Site(running, base, browser)
    finally:
        assert next(started, None) is None  # the rest of start_server: the checker and the ladder stopped


def passed_version(running: Running, who: str) -> Version:
    """examples/random_bot.py stored as the person's version and passed, as the checker would (no check run)."""
    stored = store_upload(RANDOM_BOT.read_bytes(), RANDOM_BOT.name, Preset.PYTHON, running.server.versions)
    entrant = running.id(who)
    running.store.add_version(entrant, stored.digest, RANDOM_BOT.name, "python", stored.command, stored.protocol)
    running.store.checked(entrant, stored.digest, True, {"passed": True, "summary": [CHECK_OUTPUT]})
    version = running.store.version(entrant, stored.digest)
    assert version is not None
    return version


LEADERBOARD_ROWS = (
    "return [...document.querySelectorAll('#leaderboard tbody tr')].map((r) => [...r.cells].map((c) => c.textContent))"
)


def test_the_leaderboard_shows_a_new_bot_without_a_reload_on_a_projector(site: Site) -> None:
    driver = site.driver
    site.open("/")
    assert driver.execute_script("return window.innerWidth") == PROJECTOR[0]
    names = [row[1] for row in driver.execute_script(LEADERBOARD_ROWS)]
    assert sorted(names) == ["heuristic", "random"]  # the reference bots, before any entrant has a version
    driver.execute_script("window.__marker = 1")

    version = passed_version(site.running, "ada")
    assert "ada" in [row["name"] for row in site.running.server.standings()["rows"]]

    def with_ada() -> list[list[str]] | None:
        rows: list[list[str]] = driver.execute_script(LEADERBOARD_ROWS)
        return rows if any(row[1] == "ada" for row in rows) else None

    rows = site.wait(with_ada, POLLED, "ada's row did not come into the leaderboard by its own poll")
    (ada,) = (row for row in rows if row[1] == "ada")
    assert ada[2] == version.label
    assert sorted(row[0] for row in rows) == ["1", "2", "3"]
    assert driver.execute_script("return window.__marker") == 1, "the page was loaded again"
    assert site.text("#status").endswith("the ladder is paused by the organiser.")
    width, scrolled = driver.execute_script("return [window.innerWidth, document.documentElement.scrollWidth]")
    assert scrolled <= width, f"the leaderboard scrolls sideways at {width} px: {scrolled} px wide"


def test_an_entrant_signs_in_uploads_and_reads_the_check_and_the_code(site: Site) -> None:
    driver = site.driver
    site.sign_in("ada")
    assert site.text("main h2") == "ada"
    assert "No version yet." in site.text("main")
    site.upload(RANDOM_BOT)

    assert driver.current_url == f"{site.base}/entrants/ada"
    assert site.count("#upload-error") == 0
    (version,) = site.running.store.versions(site.running.id("ada"))
    assert site.count("#versions tr[data-digest]") == 1
    row = f'#versions tr[data-digest="{version.digest}"]'
    assert site.text(f"{row} code") == version.label
    assert site.text(f"{row} td:nth-child(3)") == "python (zmq)"

    def checked() -> str | None:
        driver.refresh()  # the entrant's page does not refresh itself
        status = site.text(f"{row} td:nth-child(4)")
        return status if status in ("passed", "failed") else None

    status = site.wait(checked, CHECKED, "the check did not end", every=0.5)
    assert status == "passed", site.text("#versions")
    assert site.text(f"{row} td:nth-child(5)") == "yes"  # active
    assert site.count("pre.check") == 1 and site.text("pre.check")  # its own check's output

    site.click(f'{row} a[href="/entrants/ada/versions/{version.digest}"]')
    assert version.label in site.text("main h2")
    assert site.text("#files") == RANDOM_BOT.name and site.count("#files a") == 1
    site.click("#files a")
    code = site.text("#file")
    assert "class RandomBot" in code and "from arena.sdk import run" in code
    assert code == RANDOM_BOT.read_text().strip()


def test_a_refused_upload_is_said_on_the_page_and_adds_nothing(site: Site, tmp_path: Path) -> None:
    upload = tmp_path / "upload" / "bot.zip"
    upload.parent.mkdir()
    with zipfile.ZipFile(upload, "w") as archive:
        archive.writestr("bot.py", RANDOM_BOT.read_bytes())
        archive.writestr("../escape.py", "print('out of the folder')\n")
    site.sign_in("ada")
    site.upload(upload)

    error = site.text("#upload-error")
    assert error.startswith("Upload refused:") and "../escape.py" in error, error
    assert site.count("#upload") == 1  # the form, to try again
    assert "No version yet." in site.text("main") and site.count("#versions") == 0
    assert site.running.store.versions() == []
    assert [path.name for path in site.running.server.versions.iterdir()] == []
    assert list(tmp_path.rglob("escape.py")) == []  # nowhere, inside the data folder or out of it


def test_the_organiser_pauses_and_resumes_the_ladder_and_an_entrant_may_not(site: Site) -> None:
    games = site.running.server.games
    site.sign_in("olga")
    site.click('nav a[href="/organiser"]')
    assert site.driver.current_url == f"{site.base}/organiser"
    assert site.text("#ladder-state") == "Paused." and site.text("#ladder-toggle") == "Resume the ladder"

    site.click("#ladder-toggle")
    assert site.text("#ladder-state") == "Running."
    assert site.text("#ladder-toggle") == "Pause the ladder" and not games.paused
    assert site.driver.current_url == f"{site.base}/organiser"

    site.click("#ladder-toggle")
    assert site.text("#ladder-state") == "Paused."
    assert site.text("#ladder-toggle") == "Resume the ladder" and games.paused

    site.sign_in("ada")
    assert site.count('nav a[href="/organiser"]') == 0
    site.open("/organiser")
    assert site.text("main h2") == "Not allowed"
    assert site.text("#message") == "This page is the organiser's."
    assert site.count("#ladder-toggle") == 0 and site.count("#entrants") == 0
    assert "olga@uni.example" not in site.driver.page_source
    assert games.paused


def test_another_entrant_sees_the_active_version_but_not_its_files_or_check(site: Site) -> None:
    version = passed_version(site.running, "ada")
    row = f'#versions tr[data-digest="{version.digest}"]'
    site.sign_in("olga")  # the organiser sees both: what bob must not see is on the page
    site.open("/entrants/ada")
    assert site.count(f"{row} a") == 1 and CHECK_OUTPUT in site.text("pre.check")

    site.sign_in("bob")
    site.open("/entrants/ada")
    assert site.text("main h2") == "ada"
    assert site.text(f"{row} code") == version.label and site.text(f"{row} td:nth-child(5)") == "yes"
    assert site.count("#versions a") == 0, "bob is shown a link to ada's files"
    assert site.count("pre.check") == 0 and CHECK_OUTPUT not in site.driver.page_source
    assert site.count("#upload") == 0 and site.count("#diagnostics") == 0 and site.count("#no-diagnostics") == 0
    site.open(f"/entrants/ada/versions/{version.digest}")
    assert site.text("main h2") == "Not allowed" and "RandomBot" not in site.driver.page_source

"""The replay viewer in a real browser, checked against the engine re-simulating the same replay.

The expected states here come straight from the engine (`Match.state()`, `Match.view(seat)` and each
seat's `Observer`), not from the report's own step builder, so the page is checked against the rules
and the protocol's entitlements rather than against itself.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pytest

from arena.cli import main
from arena.engine import Card, Observer, TableState, View
from arena.protocol import event_json
from arena.replay import Resimulation, read_replay
from arena.report import replay_data, write_report
from arena.report.compact import KINDS, file_stem, script
from tests.report.conftest import Tournament, save_screenshot

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

SAMPLES = Path(__file__).resolve().parents[1] / "replay" / "samples"
CARDS = {card.label for card in Card}

SHOWN = """
const shown = () => {
const table = document.getElementById('table');
const cards = (root) => root ? [...root.querySelectorAll('.card')].map((c) => c.dataset.card) : [];
const visible = (id) => { const el = document.getElementById(id); return el.closest('[hidden]') ? null : el; };
return {
  step: Number(table.dataset.step), line: Number(table.dataset.line), view: table.dataset.view,
  kind: table.dataset.kind,
  deck: Number(document.getElementById('deck').dataset.count),
  deckCards: cards(visible('deck-cards')), setAside: cards(visible('set-aside')), faceUp: cards(visible('face-up')),
  tableCards: cards(table),
  says: cards(document.getElementById('says')),
  log: cards(document.getElementById('round-log')),
  panels: cards(visible('showdown')).concat(cards(visible('result'))),
  seats: [...document.querySelectorAll('#seats .seat')].map((s) => ({
    hidden: s.querySelector('.hand').dataset.hidden === 'true',
    hand: cards(s.querySelector('.hand')), discards: cards(s.querySelector('.discards')),
    tokens: Number(s.querySelector('.tokens').dataset.tokens),
    inRound: s.dataset.inRound === 'true', protected: s.dataset.protected === 'true',
    disqualified: s.dataset.disqualified === 'true',
  })),
};
};
"""
COLLECT = SHOWN + "return shown();"
WALK = (
    SHOWN
    + """
const states = [];
for (let i = 0; i < arguments[0]; i += 1) { states.push(shown()); document.getElementById('next').click(); }
return states;
"""
)
"""Every step from the current one on, each read from the page just after the page's own script drew it
(a click on "next" redraws synchronously): one round trip to the browser for a whole match."""


@dataclass(frozen=True, slots=True)
class Position:
    """The engine's truth just after one replay line."""

    line: int
    kind: str
    round: int
    full: TableState
    views: tuple[View, ...]
    events: tuple[list[dict[str, Any]], ...]
    """Per seat: the events its Observer took at this line, as the protocol sends them."""


def positions(replay: Path) -> list[Position]:
    """Re-simulate the replay with the engine; a Position per line the viewer makes a step of."""
    resimulation = Resimulation(read_replay(replay))
    observers: list[Observer] = []
    out = []
    for line, match in resimulation.steps():
        if not observers:
            observers = [Observer(match, seat) for seat in range(len(match.players))]
        events = tuple([event_json(e) for e in observer.take_events()] for observer in observers)
        if line.data["type"] in KINDS:
            views = tuple(match.view(seat) for seat in range(len(match.players)))
            out.append(Position(line.number, line.data["type"], match.round, match.state(), views, events))
    return out


def event_cards(value: object) -> Iterator[str]:
    """Every card name anywhere in an event (its card, guess, seen, cards, received, hand, revealed, ...)."""
    if isinstance(value, str) and value in CARDS:
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in ("event", "cause", "reason", "detail"):
                yield from event_cards(item)
    elif isinstance(value, list):
        for item in value:
            yield from event_cards(item)


def labels(cards: tuple[Card, ...]) -> list[str]:
    return [card.label for card in cards]


def collect(browser: WebDriver) -> dict[str, Any]:
    """What the page shows now."""
    return browser.execute_script(COLLECT)


def walk(browser: WebDriver, steps: int) -> list[dict[str, Any]]:
    return browser.execute_script(WALK, steps)


def check_full(shown: dict[str, Any], at: Position) -> None:
    state = at.full
    assert shown["line"] == at.line and shown["kind"] == at.kind and shown["view"] == "full"
    assert shown["deck"] == len(state.deck)
    assert shown["deckCards"] == labels(state.deck)
    assert shown["setAside"] == ([state.set_aside.label] if state.set_aside is not None else [])
    assert shown["faceUp"] == labels(state.removed_face_up)
    for seat, got in enumerate(shown["seats"]):
        assert not got["hidden"]
        assert got["hand"] == labels(state.hands[seat])
        assert got["discards"] == labels(state.discards[seat])
        assert got["tokens"] == state.tokens[seat]
        assert (got["inRound"], got["protected"], got["disqualified"]) == (
            state.in_round[seat],
            state.protected[seat],
            state.disqualified[seat],
        )


@dataclass(frozen=True, slots=True)
class Viewer:
    """A match in the viewer: the report's one page and the match's name, or a page with its match inline."""

    page: Path
    match_id: str | None = None

    @property
    def match(self) -> str | None:
        """The match as the viewer's address names it."""
        return None if self.match_id is None else quote(file_stem(self.match_id), safe="")

    def url(self, step: int, view: str = "full") -> str:
        chosen = "" if self.match is None else f"match={self.match}&"
        suffix = "" if view == "full" else f"&view={view}"
        return f"{self.page.resolve().as_uri()}#{chosen}step={step}{suffix}"


def open_at(browser: WebDriver, page: Viewer, step: int, view: str = "full") -> None:
    """Open the page at a step, and wait for the viewer to draw it: a match's data file loads after the page
    (and a new `#match=` in the same page is a new data file, not a new page)."""
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(page.url(step, view))
    drawn = (
        "const t = document.getElementById('table');"
        " return t.dataset.line !== undefined && Number(t.dataset.step) === arguments[0]"
        " && (arguments[1] === null || t.dataset.match === arguments[1]) && t.dataset.view === arguments[2];"
    )
    WebDriverWait(browser, 20, poll_frequency=0.02).until(
        lambda driver: driver.execute_script(drawn, step, page.match_id, view)
    )
    assert collect(browser)["step"] == step


@pytest.fixture(scope="module")
def three_player_match(three_player: Tournament) -> tuple[Path, Viewer, list[Position]]:
    """The longest match of the Swiss tournament: its replay, its place in the viewer, the engine's positions."""
    replays = sorted((three_player.output / "replays").glob("*.jsonl"), key=lambda p: len(p.read_text()))
    replay = replays[-1]
    return replay, Viewer(three_player.output / "report" / "viewer.html", replay.stem), positions(replay)


@pytest.fixture(scope="module")
def six_player_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Viewer, list[Position]]:
    """`arena replay FILE --html`: six seats, two faults, from the independent sample replays."""
    replay = SAMPLES / "valid" / "00000-2019-6p-1334274723.jsonl"
    page = tmp_path_factory.mktemp("viewer") / "six.html"
    stream = io.StringIO()
    with contextlib.redirect_stdout(stream):
        assert main(["replay", str(replay), "--html", str(page)]) == 0
    assert stream.getvalue().strip() == f"replay viewer: {page}"
    return Viewer(page), positions(replay)


def test_the_viewer_has_a_step_per_position_of_the_engine(
    browser: WebDriver, three_player_match: tuple[Path, Viewer, list[Position]]
) -> None:
    _, page, truth = three_player_match
    open_at(browser, page, 0)
    assert browser.find_element("id", "step-slider").get_attribute("max") == str(len(truth) - 1)
    states = walk(browser, len(truth))
    assert [shown["step"] for shown in states] == list(range(len(truth)))
    for shown, at in zip(states, truth, strict=True):
        check_full(shown, at)
    assert collect(browser)["kind"] == "match_end"


def test_keys_and_buttons_step_through_the_match(
    browser: WebDriver, three_player_match: tuple[Path, Viewer, list[Position]]
) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    _, page, truth = three_player_match
    open_at(browser, page, 0)
    keys = ActionChains(browser)
    expected = 0
    for key, move in ((Keys.ARROW_RIGHT, 1), (Keys.ARROW_RIGHT, 1), (Keys.PAGE_DOWN, 10), (Keys.ARROW_LEFT, -1)):
        keys.send_keys(key).perform()
        expected += move
        shown = collect(browser)
        assert shown["step"] == expected
        check_full(shown, truth[expected])
    keys.send_keys(Keys.END).perform()
    check_full(collect(browser), truth[-1])
    keys.send_keys(Keys.HOME).perform()
    check_full(collect(browser), truth[0])
    for _ in range(3):
        browser.find_element("id", "next").click()
    check_full(collect(browser), truth[3])
    browser.find_element("id", "prev").click()
    check_full(collect(browser), truth[2])
    assert browser.current_url.endswith(f"#match={page.match}&step=2")


def test_the_slider_moves_over_the_whole_match(
    browser: WebDriver, three_player_match: tuple[Path, Viewer, list[Position]]
) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    _, page, truth = three_player_match
    open_at(browser, page, 0)
    slider = browser.find_element("id", "step-slider")
    width = slider.size["width"]
    ActionChains(browser).click_and_hold(slider).move_by_offset(width // 4, 0).release().perform()
    dragged = collect(browser)
    assert 0 < dragged["step"] < len(truth) - 1
    check_full(dragged, truth[dragged["step"]])
    slider.send_keys(Keys.ARROW_RIGHT)  # the focused slider moves by itself: one step, not two
    check_full(collect(browser), truth[dragged["step"] + 1])
    slider.send_keys(Keys.END)
    check_full(collect(browser), truth[-1])
    assert slider.get_attribute("value") == str(len(truth) - 1)


def test_a_round_ends_with_its_showdown(
    browser: WebDriver, three_player_match: tuple[Path, Viewer, list[Position]], tmp_path: Path
) -> None:
    _, page, truth = three_player_match
    ends = [index for index, at in enumerate(truth) if at.kind == "round_end"]
    assert ends
    showdowns = []
    for index in ends:
        open_at(browser, page, index)
        assert browser.find_element("id", "showdown").is_displayed()
        text = browser.find_element("id", "showdown-body").text
        assert f"Round {truth[index].round} won by" in text
        told = truth[index - 1].events[0] + truth[index].events[0]  # the move that ends a round brings its event
        round_end = next(e for e in told if e["event"] == "round_end" and e["round"] == truth[index].round)
        revealed = browser.find_elements("css selector", "#showdown .revealed")
        assert {
            r.get_attribute("data-seat"): r.find_element("css selector", ".card").get_attribute("data-card")
            for r in revealed
        } == round_end["revealed"]
        if round_end["revealed"]:
            showdowns.append(index)
    open_at(browser, page, ends[0] - 1 if ends[0] > 0 else 0)
    assert not browser.find_element("id", "showdown").is_displayed()
    open_at(browser, page, showdowns[0] if showdowns else ends[0])  # the docs' picture: a round's showdown
    save_screenshot(browser, tmp_path / "replay.png", "replay.png")


def _check_seat_view(
    shown: dict[str, Any], at: Position, seat: int, told: Counter[str], before: Position | None
) -> None:
    """`told`: the cards the round's earlier steps told this seat; `before`: the previous position."""
    view = at.views[seat]
    assert shown["line"] == at.line and shown["view"] == str(seat)
    assert shown["deck"] == view.deck
    assert shown["deckCards"] == [] and shown["setAside"] == []
    assert shown["faceUp"] == labels(view.removed_face_up)
    for other, got in enumerate(shown["seats"]):
        player = view.players[other]
        assert got["hidden"] == (other != seat)
        assert got["hand"] == (labels(view.hand) if other == seat else [])
        assert got["discards"] == labels(player.discards)
        assert (got["tokens"], got["inRound"], got["protected"], got["disqualified"]) == (
            player.tokens,
            player.in_round,
            player.protected,
            player.disqualified,
        )
    on_table = Counter(labels(view.hand) + labels(view.removed_face_up))
    for player in view.players:
        on_table.update(labels(player.discards))
    assert Counter(shown["tableCards"]) == on_table  # nothing else on the table: no other hand, no set-aside
    events = list(at.events[seat])
    if at.kind in ("round_end", "match_end") and before is not None:
        events += before.events[seat]  # the round's end came with the move that ended it; the viewer tells it here
    entitled = {card for event in events for card in event_cards(event)} | set(labels(view.hand))
    assert set(shown["says"] + shown["panels"]) <= entitled
    assert set(shown["log"]) <= set(told) | entitled
    for event in at.events[seat]:  # what the seat was entitled to learn is shown, not only nothing more
        if event["event"] != "play":
            continue
        for key in ("seen", "received"):
            if key in event:
                assert event[key] in shown["says"]
        if "cards" in event:
            assert set(event["cards"].values()) <= set(shown["says"])


def test_as_seat_n_shows_exactly_what_that_seat_knew_at_every_step(
    browser: WebDriver, six_player_page: tuple[Viewer, list[Position]]
) -> None:
    page, truth = six_player_page
    private = 0
    for seat in range(len(truth[0].views)):
        open_at(browser, page, 0, str(seat))
        told: Counter[str] = Counter()
        for index, (shown, at) in enumerate(zip(walk(browser, len(truth)), truth, strict=True)):
            if at.kind == "round_start":
                told = Counter()
            _check_seat_view(shown, at, seat, told, truth[index - 1] if index else None)
            told.update(shown["says"])
            private += sum(
                e["event"] == "play" and bool({"seen", "cards", "received"} & set(e)) for e in at.events[seat]
            )
    assert private > 0  # the match holds private information to check


def test_the_view_switch_changes_only_what_is_shown(
    browser: WebDriver, three_player_match: tuple[Path, Viewer, list[Position]]
) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.support.ui import Select

    _, page, truth = three_player_match
    step = next(i for i, at in enumerate(truth) if at.kind == "decision" and i > 5)
    open_at(browser, page, step)
    Select(browser.find_element("id", "view-select")).select_by_value("1")
    shown = collect(browser)
    assert shown["step"] == step
    _check_seat_view(shown, truth[step], 1, Counter(shown["log"]), truth[step - 1])
    assert browser.current_url.endswith(f"step={step}&view=1")
    ActionChains(browser).send_keys("f").perform()
    check_full(collect(browser), truth[step])
    ActionChains(browser).send_keys("2").perform()
    shown = collect(browser)
    _check_seat_view(shown, truth[step], 2, Counter(shown["log"]), truth[step - 1])


def test_a_hostile_name_is_shown_as_text(browser: WebDriver, tmp_path: Path) -> None:
    hostile = "</script><b id=pwned>x</b>"
    lines = (SAMPLES / "valid" / "00026-2019-2p-1142141920.jsonl").read_text().splitlines()
    start = json.loads(lines[0])
    start["players"][0] = hostile
    replay = tmp_path / "hostile.jsonl"
    replay.write_text("\n".join([json.dumps(start), *lines[1:]]) + "\n")
    page = tmp_path / "hostile.html"
    assert main(["replay", str(replay), "--html", str(page)]) == 0
    open_at(browser, Viewer(page), 3)
    assert browser.find_elements("id", "pwned") == []
    assert browser.find_element("css selector", '.seat[data-seat="0"] .name').text == hostile
    assert hostile in browser.find_element("id", "round-log").text


def _shown_seed(browser: WebDriver) -> str:
    meta = browser.find_element("id", "meta").text
    found = re.search(r"· seed (.+?) · ", meta)
    assert found, meta
    return found.group(1)


def test_the_viewer_shows_every_digit_of_a_seed_past_2_53(
    browser: WebDriver, two_player: Tournament, tmp_path: Path
) -> None:
    """A JavaScript number keeps 53 bits, a match's seed up to 63: as a number, 2981501726225262015 showed as
    2981501726225262000. Every way a match reaches the viewer gives it every digit: the report's data file, a page of
    its own (`arena replay --html`), and the data file of an older layout (its seed a number), which `arena report`
    writes again."""
    seeds = {replay: read_replay(replay)[0].data["seed"] for replay in (two_player.output / "replays").glob("*.jsonl")}
    replay, seed = max(seeds.items(), key=lambda item: item[1])
    assert seed > 2**53 and float(seed) != seed  # a number would round it
    open_at(browser, Viewer(two_player.output / "report" / "viewer.html", replay.stem), 0)
    assert _shown_seed(browser) == str(seed)
    page = tmp_path / "own.html"
    assert main(["replay", str(replay), "--html", str(page)]) == 0
    open_at(browser, Viewer(page), 0)
    assert _shown_seed(browser) == str(seed)
    output = tmp_path / "older"
    shutil.copytree(two_player.output, output)
    data = output / "report" / "matches" / f"{file_stem(replay.stem)}.js"
    older = script(replay_data(read_replay(replay)) or {})
    older = older.replace('{"format":2,', '{"format":1,').replace(f'"seed":"{seed}"', f'"seed":{seed}')
    data.write_text(older, encoding="utf-8")
    viewer = Viewer(output / "report" / "viewer.html", replay.stem)
    open_at(browser, viewer, 0)
    assert _shown_seed(browser).startswith(f"about {float(seed):.0f}"[:12])  # not shown as if it were exact
    assert str(seed) not in browser.find_element("id", "meta").text
    write_report(output)
    browser.get("about:blank")  # the same address again would keep the page, and the data it loaded
    open_at(browser, viewer, 0)
    assert _shown_seed(browser) == str(seed)

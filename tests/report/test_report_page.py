"""The tournament report in a real browser: what it shows is what `arena standings` and the store say."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import sqlite3
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from arena.cli import main
from arena.config import load_config
from arena.report.bot_page import render_bot_page
from arena.report.build import write_index
from arena.report.data import rating_chart
from arena.report.page import document
from arena.report.svg import line_chart
from arena.report.wording import fixed
from arena.store import ResultStore
from arena.store.export import bots_of, match_rows
from arena.tournament import cross_table, pair_records
from tests.report.conftest import Tournament, save_screenshot, standings_json, write_tournament

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver


def _open(browser: WebDriver, page: Path) -> None:
    browser.get(page.resolve().as_uri())
    assert browser.find_element("id", "title").text  # loaded


def _shown_standings(browser: WebDriver) -> list[dict[str, object]]:
    rows = []
    for row in browser.find_elements("css selector", "#standings-table tbody tr"):
        cell = {name: row.find_element("css selector", f".{name}").text for name in ("rank", "matches", "wins")}
        rows.append(
            {
                "bot": row.find_element("css selector", "th.bot").text.removesuffix(" logs").removesuffix(" candidate"),
                "rank": int(cell["rank"]),
                "matches": int(cell["matches"]),
                "wins": int(cell["wins"]),
                "score": row.find_element("css selector", ".score").text,
                "data_score": float(row.get_attribute("data-score") or "nan"),
                "rating": row.find_element("css selector", ".rating").text,
                "faults": {
                    kind.get_attribute("data-reason"): int(kind.get_attribute("data-count") or 0)
                    for kind in row.find_elements("css selector", ".fault-kind")
                },
            }
        )
    return rows


def _records(output: Path) -> list[object]:
    store = ResultStore.open_existing(output)
    try:
        return [stored.record() for stored in store.matches()]
    finally:
        store.close()


def test_the_standings_shown_are_those_of_arena_standings_json(
    browser: WebDriver, two_player: Tournament, tmp_path: Path
) -> None:
    _open(browser, two_player.index)
    shown = _shown_standings(browser)
    expected = two_player.standings
    assert [row["bot"] for row in shown] == [row["bot"] for row in expected]
    for got, want in zip(shown, expected, strict=True):
        assert (got["rank"], got["matches"], got["wins"]) == (want["rank"], want["matches"], want["wins"])
        assert got["score"] == f"{want['score']:.2f}" and got["data_score"] == want["score"]
        assert got["rating"] == fixed(want["rating"])
        assert got["faults"] == want["faults"]
    assert {row["bot"]: row["faults"] for row in shown}["bad"] == {"illegal": 3}
    intervals = browser.find_elements("css selector", "#standings-table svg.interval")
    assert [
        (round(float(i.get_attribute("data-low")), 4), round(float(i.get_attribute("data-high")), 4)) for i in intervals
    ] == [(row["win_low"], row["win_high"]) for row in expected]
    save_screenshot(browser, tmp_path / "report.png", "report.png")


def test_a_two_player_event_shows_the_cross_table(browser: WebDriver, two_player: Tournament) -> None:
    _open(browser, two_player.index)
    bots = [str(row["bot"]) for row in two_player.standings]
    table = cross_table(bots, _records(two_player.output))  # type: ignore[arg-type]
    cells = browser.find_elements("css selector", "#head-to-head-table td[data-row]")
    shown = {(c.get_attribute("data-row"), c.get_attribute("data-col")): c.text for c in cells}
    assert len(shown) == len(bots) * (len(bots) - 1)
    for (row, col), text in shown.items():
        assert text == "{}-{}-{}".format(*table[row][col])


def test_larger_tables_show_each_pairs_record_where_they_met(browser: WebDriver, three_player: Tournament) -> None:
    _open(browser, three_player.index)
    bots = [str(row["bot"]) for row in three_player.standings]
    pairs = pair_records(bots, _records(three_player.output))  # type: ignore[arg-type]
    for (a, b), record in pairs.items():
        cell = browser.find_element("css selector", f'#head-to-head-table td[data-row="{a}"][data-col="{b}"]')
        assert cell.text == f"{record.ahead}-{record.behind}-{record.level}"
    never = browser.find_elements("css selector", "#head-to-head-table td.never")
    assert len(never) == len(bots) * (len(bots) - 1) - len(pairs)


def test_the_rating_chart_ends_at_the_ratings_of_the_standings(
    browser: WebDriver, two_player: Tournament, three_player: Tournament
) -> None:
    for tournament, by, points in ((two_player, "match", 6 + 1), (three_player, "round", 3 + 1)):
        _open(browser, tournament.index)
        assert browser.find_element("id", "ratings").get_attribute("data-by") == by
        lines = browser.find_elements("css selector", "#rating-chart polyline.series")
        finals = {line.get_attribute("data-bot"): line.get_attribute("data-final") for line in lines}
        assert finals == {row["bot"]: fixed(row["rating"]) for row in tournament.standings}
        assert all(len((line.get_attribute("points") or "").split()) == points for line in lines)
        note = browser.find_element("id", "chart-note").text
        assert ("after every match" in note) == (by == "match")


def test_every_fault_links_to_its_move_in_the_replay_viewer(browser: WebDriver, two_player: Tournament) -> None:
    _open(browser, two_player.index)
    rows = browser.find_elements("css selector", "#faults-table tr.fault")
    assert len(rows) == 3 and {row.get_attribute("data-bot") for row in rows} == {"bad"}
    first = rows[0]
    assert first.find_element("css selector", ".reason").text == "illegal"
    assert "index 999 is outside legal" in first.find_element("css selector", ".detail").text
    match_id = first.get_attribute("data-match")
    first.find_element("css selector", "a.move-link").click()
    assert browser.current_url.split("#")[0].endswith("/report/viewer.html")
    assert f"match={match_id}&" in browser.current_url
    table = browser.find_element("id", "table")
    assert table.get_attribute("data-kind") == "fault"
    assert browser.find_element("id", "step-title").text == "bad faults (illegal)"
    assert "faults (illegal): " in browser.find_element("id", "says").text


def test_every_match_links_to_its_replay_page(browser: WebDriver, two_player: Tournament) -> None:
    _open(browser, two_player.index)
    store = ResultStore.open_existing(two_player.output)
    try:
        ids = [row["match_id"] for row in match_rows(store)]
    finally:
        store.close()
    links = browser.find_elements("css selector", "#matches a.replay-link")
    assert [link.text for link in links] == ids
    for link, match_id in zip(links, ids, strict=True):
        href = (link.get_attribute("href") or "").removesuffix("&logs=bad")  # bad's matches name its log too
        assert href.endswith(f"/report/viewer.html#match={match_id}")
        assert (two_player.index.parent / "matches" / f"{match_id}.js").is_file()
    links[0].click()
    assert browser.find_element("id", "title").text == f"Match {ids[0]}"
    browser.find_element("css selector", "a.back").click()
    assert browser.find_element("id", "title").text == "pairs"


def test_the_report_fits_a_phone_screen(browser: WebDriver, three_player: Tournament) -> None:
    size = browser.get_window_size()
    browser.set_window_size(390, 844)
    try:
        _open(browser, three_player.index)
        width = browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1]  # wide tables scroll inside their own box, the page does not
        font = browser.execute_script("return parseFloat(getComputedStyle(document.body).fontSize)")
        assert font >= 16
    finally:
        browser.set_window_size(size["width"], size["height"])


def test_arena_run_writes_the_report_and_a_gauntlet_has_a_section_per_candidate(
    browser: WebDriver, tmp_path: Path
) -> None:
    config = write_tournament(
        tmp_path,
        "course",
        "format: gauntlet\nplayers_per_match: 2\ngauntlet: {candidates: [student-a, student-b]}\nbots:\n"
        "  - {name: student-a, builtin: random}\n"
        "  - {name: student-b, builtin: heuristic}\n"
        "  - {name: reference, builtin: heuristic}\n",
    )
    stream = io.StringIO()
    with contextlib.redirect_stdout(stream):
        assert main(["run", str(config), "--quiet"]) == 0
    output = load_config(config).output
    index = output / "report" / "index.html"
    assert f"report: {index}" in stream.getvalue().splitlines()
    _open(browser, index)
    sections = browser.find_elements("css selector", "#matches section.candidate")
    assert [s.get_attribute("data-candidate") for s in sections] == ["student-a", "student-b"]
    for section in sections:
        candidate = section.get_attribute("data-candidate")
        matches = section.find_elements("css selector", "tr.match")
        assert matches and all(candidate in row.text for row in matches)
    shown = [
        row.get_attribute("data-bot") for row in browser.find_elements("css selector", "#standings-table tr[data-bot]")
    ]
    assert shown == [row["bot"] for row in standings_json(output)]


def test_a_bots_logs_are_linked_from_the_standings_the_matches_and_the_viewer(
    browser: WebDriver, two_player: Tournament
) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    _open(browser, two_player.index)
    [folder] = browser.find_elements("css selector", "#standings-table tr[data-bot='bad'] a.log-link")
    assert folder.get_attribute("href") == (two_player.output / "logs" / "bad").as_uri() + "/"
    assert browser.find_elements("css selector", "#standings-table tr[data-bot='random-0'] a.log-link") == []
    rows = [
        row
        for row in browser.find_elements("css selector", "tr.match")
        if row.find_elements("css selector", "a.log-link")
    ]
    logged = {row.get_attribute("data-match") for row in rows}
    assert logged == {path.stem for path in (two_player.output / "logs" / "bad").glob("*.log")} != set()
    match_id = rows[0].get_attribute("data-match")
    rows[0].find_element("css selector", "a.replay-link").click()
    WebDriverWait(browser, 20, poll_frequency=0.02).until(
        lambda driver: driver.find_elements("css selector", "#seats .seat a.log-link")
    )
    [seat_link] = browser.find_elements("css selector", "#seats .seat a.log-link")  # bad's seat, no other
    log = two_player.output / "logs" / "bad" / f"{match_id}.log"
    assert seat_link.get_attribute("href") == log.as_uri()
    browser.find_element("id", "next").click()  # stepping keeps the logs in the address
    assert "logs=bad" in browser.current_url
    browser.get(seat_link.get_attribute("href") or "")
    assert "bad: about to answer 999" in browser.find_element("tag name", "body").text


def test_each_bots_page_shows_its_mistakes_reply_times_and_faults_linked_to_their_moves(
    browser: WebDriver, two_player: Tournament
) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    from arena.analysis.diagnose import diagnose

    store = ResultStore.open_existing(two_player.output)
    try:
        expected = {bot.bot: bot for bot in diagnose(store)}
    finally:
        store.close()
    _open(browser, two_player.index)
    links = {
        link.text: link.get_attribute("href")
        for link in browser.find_elements("css selector", "#standings-table a.bot-link")
    }
    assert set(links) == set(expected)
    random = expected["random-0"]
    assert sum(random.mistakes.values()) > 0  # a random bot errs: something to show
    browser.get(links["random-0"] or "")
    counts = {
        row.get_attribute("data-category"): int(row.get_attribute("data-count") or -1)
        for row in browser.find_elements("css selector", "#mistake-table tbody tr")
    }
    assert counts == {category.value: random.mistakes[category] for category in random.mistakes} | {
        category: 0
        for category in counts
        if random.mistakes[category] == 0  # type: ignore[index]
    }
    steps = browser.find_elements("css selector", "#mistake-steps li.mistake")
    assert len(steps) == len(random.steps)
    line = int(steps[0].get_attribute("data-line") or 0)
    steps[0].find_element("css selector", "a.move-link").click()
    WebDriverWait(browser, 20, poll_frequency=0.02).until(
        lambda driver: driver.find_element("id", "table").get_attribute("data-line") == str(line)
    )
    browser.get(links["bad"] or "")
    faults = browser.find_elements("css selector", "#faults li.fault")
    assert [fault.get_attribute("data-reason") for fault in faults] == [f.reason.value for f in expected["bad"].faults]
    assert browser.find_element("id", "replies").text.startswith("Reply times")
    assert "CPU ms" in browser.find_element("id", "reply-table").text  # a subprocess bot: its times were kept


def test_a_bots_page_shows_its_fair_play_flag_linked_to_the_decisions_behind_it(
    browser: WebDriver, tmp_path: Path
) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    from arena.analysis.diagnose import fair_play
    from arena.report import write_report
    from tests.analysis.cheats import seer_tournament

    output = seer_tournament(tmp_path)
    report = write_report(output)
    store = ResultStore.open_existing(output)
    try:
        expected = fair_play(store)
    finally:
        store.close()
    (flag,) = expected.bot("seer").flags
    _open(browser, report.index.parent / "bots" / "seer.html")
    (shown,) = browser.find_elements("css selector", "#fair-play-flags li.flag")
    assert shown.get_attribute("data-flag") == flag["flag"]
    assert f"p = {flag['p_value']:.2g}" in shown.text and f"{flag['observed']} observed" in shown.text
    links = shown.find_elements("css selector", "a.move-link")
    assert [link.text for link in links] == [f"{step['match_id']}, line {step['line']}" for step in flag["steps"]]
    flagged = browser.find_elements("css selector", "#fair-play-table tr[data-flagged='true']")
    assert [row.find_element("css selector", "th").text for row in flagged] == ["knows more than it can see"]
    links[0].click()
    WebDriverWait(browser, 20, poll_frequency=0.02).until(
        lambda driver: driver.find_element("id", "table").get_attribute("data-line") == str(flag["steps"][0]["line"])
    )
    _open(browser, report.index.parent / "bots" / "random.html")
    assert browser.find_element("id", "no-flags").text == "No flag."
    assert browser.find_elements("css selector", "#fair-play-table tr[data-flagged='false']")


FITS = """
const box = document.querySelector('#standings .scroll');
const ids = [...document.querySelectorAll('#matches tr.match > th > *, #faults-table td.match > *')];
return {
  standings: [box.scrollWidth, box.clientWidth],
  page: [document.documentElement.scrollWidth, document.documentElement.clientWidth],
  ids: ids.length,
  broken: ids.filter((id) => id.getClientRects().length > 1).map((id) => id.textContent),
};
"""
"""How the index sits in the window: the standings' box (its width, and the width it shows), the page's, and the
match ids broken across lines (an inline element broken over two lines has a box on each)."""


def test_the_report_fits_a_projector_at_1024_by_768_and_never_breaks_a_match_id(
    browser: WebDriver, two_player: Tournament, three_player: Tournament, gauntlet: Tournament
) -> None:
    size = browser.get_window_size()
    browser.set_window_size(1024, 768)
    try:
        for tournament in (two_player, three_player, gauntlet):
            _open(browser, tournament.index)
            fits = browser.execute_script(FITS)
            matches = len(browser.find_elements("css selector", "#matches tr.match"))
            faults = len(browser.find_elements("css selector", "#faults-table tr.fault"))
            assert fits["ids"] == matches + faults > 0
            assert fits["standings"][0] <= fits["standings"][1], tournament.output.name  # no sideways scrolling
            assert fits["page"][0] <= fits["page"][1], tournament.output.name
            assert fits["broken"] == [], tournament.output.name
        assert browser.find_element("css selector", "#matches a.replay-link").text.startswith("gauntlet-student-")
    finally:
        browser.set_window_size(size["width"], size["height"])


TICKS = "return [...document.querySelectorAll('svg.chart text.tick')].map((tick) => tick.textContent);"


def test_no_axis_label_reads_negative_zero(
    browser: WebDriver,
    tmp_path: Path,
    two_player: Tournament,
    three_player: Tournament,
    gauntlet: Tournament,
    sequential: Tournament,
) -> None:
    # a range from below zero, by less than a step, to above: the tick at zero was computed as -0.0
    chart = line_chart([0, 1, 2], ["start", "1", "2"], {"a": (0.0, -7.5, 30.0), "b": (0.0, 4.0, -0.3)}, "x", "y")
    page = tmp_path / "chart.html"
    page.write_text(document("chart", chart), encoding="utf-8")
    browser.get(page.as_uri())
    ticks = browser.execute_script(TICKS)
    assert "0" in ticks and "10" in ticks
    for tournament in (two_player, three_player, gauntlet, sequential):
        _open(browser, tournament.index)
        ticks += browser.execute_script(TICKS)
    assert [tick for tick in ticks if re.fullmatch(r"[-+\u2212]0(\.0*)?", tick)] == []


def _one_win_in_nine(output: Path, bot: str) -> None:
    """`bot` in 9 two-player matches, 1 of them won: its 3 matches recorded twice more (under other ids), and its
    opponent the winner in all but the first."""
    with sqlite3.connect(output / "results.sqlite") as db:
        cursor = db.execute("SELECT * FROM matches")
        columns = [column[0] for column in cursor.description]
        mine = [row for row in (dict(zip(columns, values, strict=True)) for values in cursor) if bot in row["seats"]]
        insert = f"INSERT INTO matches ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
        for copy in (1, 2):
            for row in mine:
                db.execute(insert, [*(row | {"match_id": f"{row['match_id']}-copy{copy}"}).values()])
        matches = db.execute("SELECT match_id, seats FROM matches WHERE seats LIKE ?", (f'%"{bot}"%',)).fetchall()
        for number, (match_id, seats) in enumerate(matches):
            seat = json.loads(seats).index(bot)
            winner = seat if number == 0 else 1 - seat
            db.execute(
                "UPDATE matches SET winners = ?, ranking = ? WHERE match_id = ?",
                (json.dumps([winner]), json.dumps([[winner], [1 - winner]]), match_id),
            )
    db.close()


def test_the_win_rate_interval_is_rounded_as_arena_standings_rounds_it(
    browser: WebDriver, two_player: Tournament, tmp_path: Path
) -> None:
    """1 win in 9: the interval's top is 0.43499971, which `arena standings --format json` keeps as 0.435; written
    from that, the page said 44% where the terminal says 43%."""
    output = tmp_path / "one-in-nine"
    shutil.copytree(two_player.output, output)
    _one_win_in_nine(output, "random-0")
    stream = io.StringIO()
    with contextlib.redirect_stdout(stream):
        assert main(["standings", str(output)]) == 0
    terminal = next(line for line in stream.getvalue().splitlines() if " random-0 " in line)
    assert "11.1% [2%, 43%]" in terminal
    _open(browser, write_index(output))
    row = browser.find_element("css selector", '#standings-table tr[data-bot="random-0"]')
    assert (row.get_attribute("data-matches"), row.get_attribute("data-wins")) == ("9", "1")
    assert row.find_element("css selector", ".interval-text").text == "11% [2%, 43%]"
    label = row.find_element("css selector", "svg.interval").get_attribute("aria-label")
    assert label == "win rate 11%, 95% interval 2% to 43%"


def test_a_count_and_its_noun_agree_on_the_report(browser: WebDriver, two_player: Tournament) -> None:
    _open(browser, two_player.index)
    stderr = browser.find_elements("css selector", "#faults-table td.stderr summary")
    assert stderr and {summary.text for summary in stderr} == {"1 line"}  # bad wrote one line before it faulted
    summary = browser.find_element("id", "summary").text
    assert "· 4 bots · 6 matches played ·" in summary


def test_a_bots_page_writes_one_of_each_in_the_singular(browser: WebDriver, tmp_path: Path) -> None:
    from arena.analysis.diagnose import BotDiagnosis, MistakeStep
    from arena.analysis.fairplay import BotFairPlay
    from arena.analysis.mistakes import Category
    from arena.engine import FaultReason
    from arena.matches import FaultRow

    bot = BotDiagnosis(
        "lonely",
        1000,
        decisions=1,
        mistakes=Counter({Category.IMPOSSIBLE_GUESS: 1}),
        steps=[MistakeStep("gauntlet-lonely-0001-d1", 4, Category.IMPOSSIBLE_GUESS)],
        cpu_ms=[5.0],
        wall_ms=[6.0],
        faults=[FaultRow("gauntlet-lonely-0001-d1", 0, "lonely", FaultReason.TIMEOUT, "too slow", "", False)],
    )
    page = tmp_path / "lonely.html"
    page.write_text(render_bot_page(bot, BotFairPlay("lonely", True, None, ()), set(), ()), encoding="utf-8")
    _open(browser, page)
    assert browser.find_element("id", "summary").text == (
        "1 decision · 1 provable mistake · 0 fair-play flags · 1 fault"
    )
    assert browser.find_element("id", "closest").text.endswith("of the limit of 1000 ms (1 reply).")


def test_a_finished_one_round_tournament_never_says_only_one_round_so_far(
    browser: WebDriver, sequential: Tournament, three_player: Tournament
) -> None:
    _open(browser, sequential.index)
    note = browser.find_element("id", "chart-note").text
    assert note.startswith("A sequential test is played as one round, so a per-round chart would hold one point")
    store = ResultStore.open_existing(three_player.output)
    try:
        first = [stored.record() for stored in store.matches() if stored.job.round == 1]
        bots = bots_of(store)
    finally:
        store.close()
    assert "Only one round has results so far" in rating_chart(bots, first, "swiss").note  # still running: true
    assert "so far" not in rating_chart(bots, first, "swiss", complete=True).note  # a Swiss of rounds: 1, ended

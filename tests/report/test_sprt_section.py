"""A sequential test's figures as `arena sprt` prints them and the report's section shows them: the same lines, in
plain words (no negative zero, a count that agrees with its noun, why the matches are not twice the pairs)."""

from __future__ import annotations

import contextlib
import io
from dataclasses import replace
from typing import TYPE_CHECKING

from arena.analysis.sprt import Decision, Settings, State, advance, describe, start
from arena.cli import main
from arena.config import SprtConfig
from tests.report.conftest import Tournament

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

CONFIG = SprtConfig("new", "old", elo0=0, elo1=10, max_pairs=1000)
SETTINGS = Settings(CONFIG.elo0, CONFIG.elo1, CONFIG.alpha, CONFIG.beta, CONFIG.max_pairs)


def _state(scores: list[float | None], recorded: int | None = None) -> State:
    return replace(advance(SETTINGS, start(SETTINGS), scores), recorded=recorded)


def _line(lines: list[str], key: str) -> str:
    return next(line for line in lines if line.startswith(f"{key}: "))


def test_an_elo_of_zero_is_written_without_a_sign() -> None:
    """Pairs all scoring 1 of 2 estimate 0 Elo exactly, which -400 log10(1) makes -0.0."""
    lines = describe(CONFIG, _state([1.0] * 5, 10))
    assert _line(lines, "Elo") == "Elo: 0.0 [0.0, 0.0] (95%)"
    assert "-0.0" not in "\n".join(lines)
    assert _line(describe(CONFIG, _state([2.0, 0.0, 2.0], 6)), "Elo").startswith("Elo: +")  # a real sign stays


def test_a_count_of_one_pair_is_singular() -> None:
    lines = describe(replace(CONFIG, max_pairs=1), _state([1.0], 2))
    assert lines[0].endswith(", at most 1 pair")
    assert _line(lines, "matches").startswith("matches: 2 matches in the 1 pair counted (a pair is one deal played")


def test_the_matches_line_says_why_they_are_not_twice_the_pairs() -> None:
    decided = _state([2.0] * 200)
    assert decided.decision is Decision.H1
    pairs = decided.pairs
    lines = describe(CONFIG, replace(decided, recorded=2 * pairs + 10))
    assert _line(lines, "pairs").startswith(f"pairs: {pairs}; ")
    assert _line(lines, "matches") == (
        f"matches: {2 * pairs} matches in the {pairs} pairs counted (a pair is one deal played twice, the candidate in"
        " a seat and then the baseline in it: at a table of two, the seats swapped); 10 more matches recorded, not"
        " counted: they were played after the pair that decided (under way on other workers), and do not change it"
    )
    waiting = _line(describe(CONFIG, _state([2.0, 1.0, None, 2.0], 7)), "matches")
    assert waiting.startswith("matches: 4 matches in the 2 pairs counted (")
    assert waiting.endswith(
        "; 3 more matches recorded, not counted: the count stops at the first pair with a match not recorded"
        " (unfinished, or failed on the arena's side), until it is played"
    )
    assert _line(describe(CONFIG, _state([], 0)), "matches").startswith("matches: no pair counted yet (a pair is")


def test_the_report_shows_the_lines_arena_sprt_prints(browser: WebDriver, sequential: Tournament) -> None:
    stream = io.StringIO()
    with contextlib.redirect_stdout(stream):
        assert main(["sprt", str(sequential.output)]) == 0
    printed = stream.getvalue().splitlines()
    browser.get(sequential.index.resolve().as_uri())
    shown = [item.text for item in browser.find_elements("css selector", "#sprt .sprt-summary li")]
    assert shown == printed
    assert _line(shown, "decision") == "decision: no decision within max_pairs"
    assert shown[0].endswith(", at most 6 pairs")
    assert _line(shown, "matches").startswith("matches: 12 matches in the 6 pairs counted (a pair is one deal")
    assert "· 12 matches played ·" in browser.find_element("id", "summary").text

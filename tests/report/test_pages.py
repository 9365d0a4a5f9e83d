"""The report's data, without a browser: the viewer's embedded states, broken replays, escaping, the CLI."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from arena.cli import main
from arena.replay import Resimulation, parse_replay, read_replay
from arena.report import replay_steps, write_report
from arena.report.replay_page import render_replay
from tests.report.conftest import Tournament

SAMPLES = Path(__file__).resolve().parents[1] / "replay" / "samples"
SIX = SAMPLES / "valid" / "00000-2019-6p-1334274723.jsonl"


def embedded(page: str) -> dict[str, object]:
    """The JSON a viewer page embeds for its script."""
    found = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', page, re.S)
    assert found
    return json.loads(found.group(1))


def run_cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(args))
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("replay", sorted((SAMPLES / "valid").glob("*.jsonl")), ids=lambda path: path.stem)
def test_a_seats_embedded_state_is_its_engine_view_and_nothing_more(replay: Path) -> None:
    """What the page carries for "as seat N" (not only what it draws) holds no card seat N may not know."""
    steps = replay_steps(read_replay(replay))
    assert steps.error is None
    views = []
    for line, match in Resimulation(read_replay(replay)).steps():
        if line.data["type"] in ("match_start", "round_start", "decision", "fault", "round_end", "match_end"):
            views.append([match.view(seat) for seat in range(len(match.players))])
    assert len(views) == len(steps.steps)
    for step, seat_views in zip(steps.steps, views, strict=True):
        for seat, (state, view) in enumerate(zip(step.seats, seat_views, strict=True)):
            assert state["deck_cards"] is None and state["set_aside"] is None
            assert state["deck"] == view.deck
            hands = [player["hand"] for player in state["players"]]
            assert hands == [[c.label for c in view.hand] if s == seat else None for s in range(len(hands))]


def test_a_fault_is_found_at_its_own_step() -> None:
    steps = replay_steps(read_replay(SIX))
    lines = {seat: steps.steps[steps.fault_step(seat) or 0].line for seat in (1, 2)}
    assert lines == {1: 2, 2: 23}
    assert steps.steps[steps.fault_step(1) or 0].title.endswith("faults (handshake)")
    assert steps.fault_step(0) is None


def test_a_replay_that_breaks_the_rules_is_shown_up_to_the_bad_line(tmp_path: Path) -> None:
    bad = SAMPLES / "invalid" / "wrong-round-winner.jsonl"
    steps = replay_steps(read_replay(bad))
    assert steps.error is not None and steps.error.startswith("line 20: ")
    assert steps.steps and steps.steps[-1].line < 20
    page = tmp_path / "bad.html"
    status, out, err = run_cli("replay", str(bad), "--html", str(page))
    assert status == 1 and f"{bad}:20: " in err and out.strip() == f"replay viewer: {page}"
    text = page.read_text()
    assert 'id="replay-error"' in text and "line 20: " in text


def test_names_and_details_from_outside_are_escaped() -> None:
    """A replay's names and a fault's detail are text from people: never markup, never the end of the script."""
    hostile = "</script><b id=pwned>x</b>&amp;"
    lines = SIX.read_text().splitlines()
    start = json.loads(lines[0])
    start["players"][0] = hostile
    fault = json.loads(lines[1])
    fault["detail"] = hostile
    replay = parse_replay([json.dumps(start), json.dumps(fault), *lines[2:]])
    page = render_replay(replay_steps(replay))
    assert "<b id=pwned>" not in page and page.count("</script>") == 2  # the data's and the viewer's
    data = embedded(page)
    assert data["players"][0] == hostile  # type: ignore[index]
    assert hostile in json.dumps(data)


def test_arena_report_writes_the_index_and_a_page_per_match(two_player: Tournament, tmp_path: Path) -> None:
    output = tmp_path / "copy"
    shutil.copytree(two_player.output, output)
    status, out, _ = run_cli("report", str(output))
    assert status == 0 and out.strip() == f"report: {output / 'report' / 'index.html'}"
    pages = sorted(p.stem for p in (output / "report" / "replays").glob("*.html"))
    assert pages == sorted(p.stem for p in (output / "replays").glob("*.jsonl"))
    status, _, _ = run_cli("report", str(output), "--replay-pages", "2")
    kept = sorted(p.stem for p in (output / "report" / "replays").glob("*.html"))
    assert status == 0 and len(kept) == 2  # the others' stale pages are gone
    index = (output / "report" / "index.html").read_text()
    faulted = {m for m in re.findall(r'<tr class="fault" data-match="([^"]+)"', index)}
    assert set(kept) <= faulted  # matches with faults get their pages first
    assert index.count('class="replay-link"') == 2


def test_an_interrupted_tournament_has_a_report_of_what_is_finished(two_player: Tournament, tmp_path: Path) -> None:
    output = tmp_path / "interrupted"
    shutil.copytree(two_player.output, output)
    with sqlite3.connect(output / "results.sqlite") as db:
        first = db.execute("SELECT match_id FROM matches ORDER BY match_id LIMIT 1").fetchone()[0]
        db.execute("DELETE FROM faults WHERE match_id = ?", (first,))
        db.execute("DELETE FROM matches WHERE match_id = ?", (first,))
        db.execute("DELETE FROM meta WHERE key = 'completed_at'")
    db.close()
    index = write_report(output).index.read_text()
    assert 'data-complete="false"' in index and "not finished" in index
    assert f'data-match="{first}"' not in index
    assert index.count('<tr class="match"') == 5


def test_a_faults_detail_and_stderr_are_text_on_the_report(two_player: Tournament, tmp_path: Path) -> None:
    output = tmp_path / "hostile"
    shutil.copytree(two_player.output, output)
    with sqlite3.connect(output / "results.sqlite") as db:
        db.execute("UPDATE faults SET detail = '<img src=x id=pwned>', stderr_tail = '</pre><script>alert(1)</script>'")
    db.close()
    index = write_report(output).index.read_text()
    assert "<img src=x" not in index and "<script>alert" not in index
    assert "&lt;img src=x id=pwned&gt;" in index and "&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in index


def test_the_help_states_the_default_number_of_replay_pages() -> None:
    from arena.cli import REPLAY_PAGES_HELP
    from arena.report import REPLAY_PAGES

    assert REPLAY_PAGES is None and "or 'all' (the default;" in REPLAY_PAGES_HELP

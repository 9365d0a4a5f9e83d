"""The report's files, without a browser: each match's data, broken replays, escaping, the CLI."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from arena.cli import main
from arena.replay import parse_replay, read_replay
from arena.report import replay_data, write_report
from arena.report.compact import embedded_json, script
from arena.report.page import json_script
from arena.report.replay_page import render_viewer
from tests.report.conftest import Tournament

SAMPLES = Path(__file__).resolve().parents[1] / "replay" / "samples"
SIX = SAMPLES / "valid" / "00000-2019-6p-1334274723.jsonl"


def inline_data(page: str) -> dict[str, Any]:
    """The match data a page carries inline, as the viewer's global gets it."""
    found = re.search(r"\(window\.ARENA_REPLAYS = window\.ARENA_REPLAYS \|\| \{\}\)\[(.*?)\] = (.*?);\n", page)
    assert found
    return json.loads(found.group(2))


def run_cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(args))
    return status, out.getvalue(), err.getvalue()


def test_the_worker_writes_each_matchs_data_as_the_report_rebuilds_it_from_the_replay(two_player: Tournament) -> None:
    """The file the worker wrote from its Match and the one `arena report` makes from the replay are the same
    bytes: either can stand for the other (an older output, a cluster's worker without the output folder)."""
    written = sorted((two_player.output / "report" / "matches").glob("*.js"))
    replays = sorted((two_player.output / "replays").glob("*.jsonl"))
    assert [p.stem for p in written] == [p.stem for p in replays] and written
    for data, replay in zip(written, replays, strict=True):
        rebuilt = replay_data(read_replay(replay))
        assert rebuilt is not None and rebuilt["error"] is None
        assert data.read_text() == script(rebuilt)


def test_a_matchs_data_is_small_and_holds_no_step(two_player: Tournament, three_player: Tournament) -> None:
    for tournament in (two_player, three_player):
        for path in (tournament.output / "report" / "matches").glob("*.js"):
            assert path.stat().st_size < 20_000
            data = inline_data(path.read_text())
            assert set(data) == {
                "format",
                "match_id",
                "ruleset",
                "seed",
                "players",
                "target",
                "values",
                "cards",
                "records",
                "error",
            }
    viewer = (two_player.output / "report" / "viewer.html").read_text()
    assert "ARENA_REPLAYS = " not in viewer  # the one viewer page holds no match of its own


def test_a_matchs_seed_reaches_the_viewer_as_text_every_digit_of_it(two_player: Tournament) -> None:
    """A JavaScript number keeps 53 bits; a match's seed has up to 63, and the viewer shows it."""
    seeds = []
    for replay in sorted((two_player.output / "replays").glob("*.jsonl")):
        seeds.append(json.loads(replay.read_text().splitlines()[0])["seed"])
        data = inline_data((two_player.output / "report" / "matches" / f"{replay.stem}.js").read_text())
        assert data["seed"] == str(seeds[-1])
    assert max(seeds) > 2**53  # as a number, it would have been shown rounded


def test_a_replay_that_breaks_the_rules_is_shown_up_to_the_bad_line(tmp_path: Path) -> None:
    bad = SAMPLES / "invalid" / "wrong-round-winner.jsonl"
    data = replay_data(read_replay(bad))
    assert data is not None and str(data["error"]).startswith("line 20: ")
    assert data["lines"] and data["lines"][-1] < 20
    page = tmp_path / "bad.html"
    status, out, err = run_cli("replay", str(bad), "--html", str(page))
    assert status == 1 and f"{bad}:20: " in err and out.strip() == f"replay viewer: {page}"
    assert inline_data(page.read_text()) == data


def test_names_and_details_from_outside_are_escaped() -> None:
    """A replay's names and a fault's detail are text from people: never markup, never the end of the script."""
    hostile = "</script><b id=pwned>x</b>&amp;"
    lines = SIX.read_text().splitlines()
    start = json.loads(lines[0])
    start["players"][0] = hostile
    fault = json.loads(lines[1])
    fault["detail"] = hostile
    replay = parse_replay([json.dumps(start), json.dumps(fault), *lines[2:]])
    data = replay_data(replay)
    assert data is not None
    page = render_viewer(script(data))
    assert "<b id=pwned>" not in page and page.count("</script>") == 1  # the viewer's own, once
    shown = inline_data(page)
    assert shown["players"][0] == hostile
    assert hostile in json.dumps(shown)


def test_arena_report_rebuilds_every_matchs_data_and_removes_what_is_stale(
    two_player: Tournament, tmp_path: Path
) -> None:
    output = tmp_path / "copy"
    shutil.copytree(two_player.output, output)
    matches = output / "report" / "matches"
    before = {p.name: p.read_text() for p in matches.glob("*.js")}
    shutil.rmtree(output / "report")  # as for an output written before there was a data file per match
    (output / "report" / "replays").mkdir(parents=True)
    (output / "report" / "replays" / "rr-0001.html").write_text("an older report's page")
    status, out, err = run_cli("report", str(output))
    assert status == 0 and out.strip() == f"report: {output / 'report' / 'index.html'}" and err == ""
    assert {p.name: p.read_text() for p in matches.glob("*.js")} == before
    assert not (output / "report" / "replays").exists()
    (matches / "gone.js").write_text("a match no longer in the results")
    status, _, err = run_cli("report", str(output), "--replay-pages", "2")
    assert status == 0 and "--replay-pages is retired and ignored" in err
    assert sorted(p.name for p in matches.glob("*.js")) == sorted(before)
    index = (output / "report" / "index.html").read_text()
    assert index.count('class="replay-link') == len(before)
    assert 'http-equiv="refresh"' not in index


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


def test_integers_javascript_would_round_reach_a_page_as_text() -> None:
    """Past 2**53 - 1 a JavaScript number rounds: such an integer, wherever it sits in the data, is written as its
    digits; smaller ones, and booleans, stay as they are."""
    value = {"seed": 2**63 - 1, "n": [2**53 - 1, -(2**53), {"deep": 2**53}], "ok": True, "small": 7}
    assert json.loads(embedded_json(value)) == {
        "seed": str(2**63 - 1),
        "n": [2**53 - 1, str(-(2**53)), {"deep": str(2**53)}],
        "ok": True,
        "small": 7,
    }
    page = json_script("data", value)
    assert page.startswith('<script type="application/json" id="data">{"seed":"9223372036854775807",')

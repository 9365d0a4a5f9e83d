"""`arena diagnose`, the gradebook's columns and check-bot's summary, through the CLI on real tournaments."""

from __future__ import annotations

import csv
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from arena.analysis import Category, diagnose_replay
from arena.analysis.diagnose import fair_play
from arena.analysis.fairplay import Flag, notes_from_json
from arena.analysis.report import NOT_TESTED
from arena.analysis.watch import fair_play_of_replay
from arena.replay import read_replay
from arena.store import ResultStore
from tests.analysis.cheats import seer_tournament
from tests.test_author_loop import run_arena, tournament
from tests.test_cli import arena

FIRST_LEGAL = "import sys\nfrom arena.sdk import run\nrun(lambda message: 0)\n"
"""Always the first legal answer: a Guard naming the Priest, a Princess played when she comes first..."""


def _first_legal_tournament(tmp_path: Path, marker: str, extra: str = "") -> Path:
    (tmp_path / "first").mkdir()
    (tmp_path / "first" / "bot.py").write_text(FIRST_LEGAL)
    return tournament(
        tmp_path,
        f"""\
        - {{name: first, command: [python3, first/bot.py, {marker}]}}
        - {{name: random, builtin: random}}
        - {{name: heuristic, builtin: heuristic}}
        """,
        extra=extra,
    )


def test_arena_diagnose_reports_each_bots_mistakes_with_their_lines_reply_times_and_faults(
    tmp_path: Path, marker: str
) -> None:
    path = _first_legal_tournament(tmp_path, marker, extra="repeats: 2\n")
    assert run_arena("run", path, "--quiet", cwd=tmp_path).returncode == 0
    output = tmp_path / "out"
    done = arena("diagnose", output, "--format", "json")
    assert done.returncode == 0, done.stderr
    bots = {bot["bot"]: bot for bot in json.loads(done.stdout)["bots"]}
    assert list(bots) == ["first", "random", "heuristic"]
    for bot in bots.values():
        assert set(bot) >= {"bot", "decisions", "mistakes", "mistake_steps", "reply_ms", "move_ms", "faults"}
        assert set(bot["mistakes"]) == {category.value for category in Category}
        assert sum(bot["mistakes"].values()) == len(bot["mistake_steps"])
        assert bot["move_ms"] == 1000
    first = bots["first"]
    assert first["reply_ms"]["p50"] <= first["reply_ms"]["p95"] <= first["reply_ms"]["max"] < 1000
    assert bots["random"]["reply_ms"] is None  # played in-process: no reply times
    assert bots["heuristic"]["mistakes"][Category.IMPOSSIBLE_GUESS] == 0
    assert sum(bots["random"]["mistakes"].values()) > 0
    # every step is a decision of that bot at that line of its match's replay, and judged so from the replay
    for name, bot in bots.items():
        for step in bot["mistake_steps"]:
            lines = read_replay(output / "replays" / f"{step['match_id']}.jsonl")
            line = lines[step["line"] - 1].data
            seats = lines[0].data["players"]
            assert line["type"] == "decision" and seats[line["seat"]] == name
            judged = diagnose_replay(lines)[line["seat"]].mistakes
            assert (step["line"], Category(step["category"])) in judged

    # an honest program has its fair-play statistics, and no flag; bots played in-process are not tested
    fair = first["fair_play"]
    assert fair["tested"] and fair["flags"] == [], fair
    assert set(fair) == {"tested", "flags", "knows_more", "spares"}
    assert fair["knows_more"] is not None and fair["knows_more"]["decisions"] > 0
    for name in ("random", "heuristic"):
        assert bots[name]["fair_play"] == {"tested": False, "flags": [], "knows_more": None, "spares": []}
    assert arena("diagnose", output, "--bot", "random").stdout.splitlines()[-1] == f"  fair play: {NOT_TESTED}"
    with sqlite3.connect(output / "results.sqlite") as db:  # as recorded before notes were kept: from the replays
        db.execute("DELETE FROM fair_play")
    again = {
        bot["bot"]: bot["fair_play"] for bot in json.loads(arena("diagnose", output, "--format", "json").stdout)["bots"]
    }
    assert again == {name: bot["fair_play"] for name, bot in bots.items()}  # the same bots noted, the same figures

    table = arena("diagnose", output, "--bot", "first").stdout.splitlines()
    assert table[0].startswith(f"first: {first['decisions']} decisions; provable mistakes: ")
    assert f"  reply times ({first['decisions']} replies), CPU ms: median " in "\n".join(table)
    assert table[-2:] == ["  faults: none", "  fair play: no flag"]
    unknown = arena("diagnose", output, "--bot", "nobody")
    assert unknown.returncode == 2 and "no bot 'nobody'" in unknown.stderr


def test_matches_recorded_without_diagnostics_are_judged_from_their_replays(tmp_path: Path, marker: str) -> None:
    path = _first_legal_tournament(tmp_path, marker)
    assert run_arena("run", path, "--quiet", cwd=tmp_path).returncode == 0
    output = tmp_path / "out"
    before = json.loads(arena("diagnose", output, "--format", "json").stdout)
    with sqlite3.connect(output / "results.sqlite") as db:  # as an output written before there were diagnostics
        db.execute("DELETE FROM seat_stats")
    after = json.loads(arena("diagnose", output, "--format", "json").stdout)
    for old, new in zip(before["bots"], after["bots"], strict=True):
        assert (new["decisions"], new["mistakes"], new["mistake_steps"]) == (
            old["decisions"],
            old["mistakes"],
            old["mistake_steps"],
        )
        assert new["reply_ms"] is None  # not kept then


def test_the_gradebook_has_a_column_per_mistake_category_and_the_p95_reply_time(tmp_path: Path, marker: str) -> None:
    (tmp_path / "student").mkdir()
    (tmp_path / "student" / "bot.py").write_text(FIRST_LEGAL)
    path = tmp_path / "g.yaml"
    path.write_text(
        "name: g\nformat: gauntlet\nplayers_per_match: 2\nseed: 2\noutput: out\n"
        "gauntlet: {candidates: [student, lazy]}\nbots:\n"
        f"  - {{name: student, command: [python3, student/bot.py, {marker}]}}\n"
        "  - {name: lazy, builtin: random}\n  - {name: ref, builtin: heuristic}\n"
    )
    assert run_arena("run", path, "--quiet", cwd=tmp_path).returncode == 0
    rows = {row["bot"]: row for row in csv.DictReader((tmp_path / "out" / "gauntlet.csv").open())}
    diagnosed = {
        bot["bot"]: bot for bot in json.loads(arena("diagnose", tmp_path / "out", "--format", "json").stdout)["bots"]
    }
    for name in ("student", "lazy"):
        row, bot = rows[name], diagnosed[name]
        assert int(row["decisions"]) == bot["decisions"]
        for category in Category:
            column = f"mistakes_{category.value.replace('-', '_')}_per_100"
            assert float(row[column]) == round(100 * bot["mistakes"][category] / bot["decisions"], 2)
    assert float(rows["student"]["reply_ms_p95"]) == diagnosed["student"]["reply_ms"]["p95"]
    assert rows["lazy"]["reply_ms_p95"] == ""  # in-process: none


def test_the_notes_kept_as_each_match_is_played_are_those_of_its_replay(tmp_path: Path) -> None:
    bots = "- {name: a, builtin: random, subprocess: true}\n- {name: b, builtin: heuristic, subprocess: true}\n"
    path = tournament(tmp_path, bots, extra="repeats: 3\n")
    assert run_arena("run", path, "--quiet", cwd=tmp_path).returncode == 0
    output = tmp_path / "out"
    store = ResultStore.open_existing(output)
    try:
        kept = store.fair_play_notes()
        matches = [match for match in store.matches() if len(match.job.seats) > 1]
    finally:
        store.close()
    assert matches and set(kept) == {match.job.match_id for match in matches}
    for match in matches:
        again = fair_play_of_replay(read_replay(output / "replays" / f"{match.job.match_id}.jsonl"))
        assert notes_from_json(match.job.match_id, match.job.seats, kept[match.job.match_id]) == again
        assert again is not None and again.chances and again.aims is not None
    # notes of another layout (an older arena's, a newer one's) are taken again from the replay, not trusted
    store = ResultStore.open_existing(output)
    try:
        before = fair_play(store).bot("a").json()
        other = '{"version": 0, "chances": []}'
        with sqlite3.connect(output / "results.sqlite") as db:
            db.execute("UPDATE fair_play SET notes = ?", (other,))
        assert notes_from_json("m", ("a", "b"), other) is None
        assert fair_play(store).bot("a").json() == before
    finally:
        store.close()


def test_a_seat_that_reads_the_hidden_hands_is_flagged_in_arena_diagnose(tmp_path: Path) -> None:
    output = seer_tournament(tmp_path)
    done = arena("diagnose", output, "--format", "json")
    assert done.returncode == 0, done.stderr
    bots = {bot["bot"]: bot["fair_play"] for bot in json.loads(done.stdout)["bots"]}
    assert bots["random"]["flags"] == []
    (flag,) = bots["seer"]["flags"]
    assert flag["flag"] == Flag.KNOWS_MORE.value
    assert flag["p_value"] < flag["threshold"] and flag["observed"] > flag["expected"]
    assert flag["steps"]
    for step in flag["steps"]:  # a Guard, Baron or Prince of the seer's, at that line of that match's replay
        lines = read_replay(output / "replays" / f"{step['match_id']}.jsonl")
        line = lines[step["line"] - 1].data
        assert line["type"] == "decision" and lines[0].data["players"][line["seat"]] == "seer"
    table = arena("diagnose", output, "--bot", "seer").stdout.splitlines()
    shown = table[table.index("  fair play:") + 1]
    first = flag["steps"][0]
    assert shown.startswith(f"    {Flag.KNOWS_MORE.value}: p = ") and f"{first['match_id']}:{first['line']}" in shown


def test_check_bot_prints_the_same_summary_and_keeps_the_replays_it_names(tmp_path: Path, marker: str) -> None:
    (tmp_path / "bot.py").write_text(FIRST_LEGAL)
    replays = tmp_path / "replays"
    bot = [sys.executable, str(tmp_path / "bot.py"), marker]
    done = subprocess.run(
        [sys.executable, "-m", "arena", "check-bot", "--matches", "2", "--replays", str(replays), "--", *bot],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    summary = next(line for line in lines if " decisions; provable mistakes: " in line)
    decisions = int(summary.split()[0])
    named = [line for line in lines if line.startswith("  impossible-guess ")]
    assert named, done.stdout  # the first legal Guard names the Priest whether or not both are in sight
    assert any(line.startswith(f"  reply times ({decisions} replies), CPU ms: median ") for line in lines)
    judged = 0
    for replay in sorted(replays.glob("check-*.jsonl")):
        lines_of = read_replay(replay)
        seat = lines_of[0].data["players"].index("bot")
        judged += diagnose_replay(lines_of)[seat].decisions
    assert judged == decisions
    hint = "  (a mistake's line is one of its match's replay: --replays DIR writes them)"
    assert hint not in done.stdout
    unkept = subprocess.run(
        [sys.executable, "-m", "arena", "check-bot", "--matches", "1", "--", *bot], capture_output=True, text=True
    )
    assert unkept.returncode == 0 and hint in unkept.stdout.splitlines(), unkept.stdout


def test_the_gradebook_names_a_candidates_fair_play_flag(tmp_path: Path) -> None:
    output = seer_tournament(tmp_path, gauntlet=True)
    (row,) = csv.DictReader((output / "gauntlet.csv").open())
    shown = json.loads(arena("diagnose", output, "--bot", "seer", "--format", "json").stdout)["bots"][0]
    (flag,) = shown["fair_play"]["flags"]
    assert row["bot"] == "seer" and row["fair_play_flags"] == "1"
    assert row["fair_play"] == f"{Flag.KNOWS_MORE.value} p={flag['p_value']:.2g}"


def test_a_bot_that_never_answered_a_move_is_said_so_not_that_its_times_were_not_kept() -> None:
    from arena.analysis.diagnose import BotDiagnosis
    from arena.analysis.report import replies
    from arena.engine import FaultReason
    from arena.matches import FaultRow

    silent = BotDiagnosis("silent", 1000)
    silent.faults = [
        FaultRow(f"m{n}", 0, "silent", FaultReason.HANDSHAKE, "no hello within 10000 ms", "", False) for n in range(3)
    ]
    assert replies(silent) == "reply times: none: it never answered a move (its faults: handshake 3)"
    in_process = BotDiagnosis("random", 1000, decisions=40)
    assert replies(in_process) == "reply times: none kept (played in-process, or recorded before they were kept)"
    late = BotDiagnosis("slow", 100, decisions=2, cpu_ms=[1.0, 2.0, 130.0], wall_ms=[2.0, 3.0, 140.0])
    late.faults = [
        FaultRow("m0", 0, "slow", FaultReason.TIMEOUT, "no reply to act within 100 ms", "", False),
        FaultRow("m1", 0, "slow", FaultReason.TIMEOUT, "no reply to match_start within 100 ms", "", False),
    ]  # a move too late is among the reply times; a late match_start is not
    assert replies(late).startswith("reply times (3 replies, 1 too late), CPU ms: median 2.0, 95% 130, most 130 of 100")

"""A bot author's loop through the CLI, as a real subprocess: what `validate` says before a run, where a bot's
stderr is kept and how `arena logs` and the report show it, and head to head at any table size."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import sys
import textwrap
from itertools import combinations
from pathlib import Path

from arena.config import config_hash, load_config
from tests.test_cli import arena

CHATTY = """
import sys
from arena.sdk import run

print("warming up", file=sys.stderr, flush=True)

class Chatty:
    def match_start(self, message):
        print("start", message["match_id"], file=sys.stderr, flush=True)

    def act(self, message):
        print("act", message["match_id"], file=sys.stderr, flush=True)
        return 0

run(Chatty())
"""


def tournament(folder: Path, bots: str, *, players: int = 2, extra: str = "") -> Path:
    path = folder / "t.yaml"
    header = f"name: loop\nformat: round-robin\nplayers_per_match: {players}\nseed: 4\nconcurrency: 2\noutput: out\n"
    path.write_text(header + extra + "bots:\n" + textwrap.indent(textwrap.dedent(bots), "  "))
    return path


def run_arena(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_each_bots_stderr_is_kept_match_by_match_and_shown_by_arena_logs_and_the_report(
    tmp_path: Path, marker: str
) -> None:
    (tmp_path / "chatty").mkdir()
    (tmp_path / "chatty" / "bot.py").write_text(CHATTY)
    path = tournament(
        tmp_path,
        f"""\
        - {{name: chatty, command: [python3, chatty/bot.py, {marker}]}}
        - {{name: quiet, builtin: random, subprocess: true}}
        - {{name: heuristic, builtin: heuristic}}
        """,
    )
    ran = run_arena("run", path, "--quiet", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    output = tmp_path / "out"
    chatty_matches = sorted(row["match_id"] for row in _results(output) if "chatty" in row["seats"])
    logs = output / "logs" / "chatty"
    assert sorted(log.stem for log in logs.glob("*.log")) == chatty_matches
    first = (logs / f"{chatty_matches[0]}.log").read_text()
    assert first.startswith("warming up\n")  # before its first match: in the first match's log
    for match_id in chatty_matches:
        lines = (logs / f"{match_id}.log").read_text().splitlines()
        assert f"start {match_id}" in lines
        assert {line.split()[1] for line in lines if line.startswith(("start ", "act "))} == {match_id}
    assert not (output / "logs" / "quiet").exists()  # a bot that wrote nothing has no log
    assert not (output / "logs" / "heuristic").exists()

    listed = arena("logs", output)
    assert listed.returncode == 0, listed.stderr
    size = sum(log.stat().st_size for log in logs.glob("*.log"))
    assert size < 1024  # a few lines a match: said in bytes, not "0 KiB"
    assert listed.stdout.startswith(f"chatty: {len(chatty_matches)} matches, {size} bytes in "), listed.stdout
    every = arena("logs", output, "chatty")
    assert every.stdout.count("==> ") == len(chatty_matches)
    assert every.stdout.index(f"==> {chatty_matches[0]} ") < every.stdout.index(f"==> {chatty_matches[1]} ")
    one = arena("logs", output, "chatty", chatty_matches[1])
    assert one.stdout == (logs / f"{chatty_matches[1]}.log").read_text()
    missing = arena("logs", output, "quiet")
    assert missing.returncode == 2 and "quiet wrote nothing to its stderr" in missing.stderr
    assert "(bots with logs: chatty)" in missing.stderr
    nobody = arena("logs", output, "zzz")
    assert nobody.returncode == 2 and f"no bot 'zzz' played in {output} (bots: " in nobody.stderr
    unplayed = next(row["match_id"] for row in _results(output) if "chatty" not in row["seats"])
    absent = arena("logs", output, "chatty", unplayed)
    assert absent.returncode == 2 and f"logs: chatty did not play {unplayed} (" in absent.stderr
    unknown = arena("logs", output, "chatty", "rr-9999")
    assert unknown.returncode == 2 and "no match 'rr-9999' in" in unknown.stderr

    index = (output / "report" / "index.html").read_text()
    assert 'href="../logs/chatty/"' in index
    for match_id in chatty_matches:
        assert f'href="../logs/chatty/{match_id}.log"' in index
        assert f"viewer.html#match={match_id}&amp;logs=chatty" in index
    assert "../logs/quiet/" not in index


def test_validate_says_how_many_matches_tables_and_rounds_and_how_long_is_left(tmp_path: Path) -> None:
    four = tournament(
        tmp_path,
        """\
        - {name: a, builtin: random}
        - {name: b, builtin: random}
        - {name: c, builtin: heuristic}
        - {name: d, builtin: heuristic}
        """,
        players=4,
        extra="repeats: 3\n",
    )
    checked = arena("validate", four)
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.splitlines() == [
        f"{four}: ok — round-robin, 4 bots, 4 per table, ruleset 2019",
        "  3 matches: 1 table (each its own group of bots), each played 3 times",
    ]
    ran = run_arena("run", four, "--quiet", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    again = arena("validate", four).stdout.splitlines()
    assert again[2].startswith(f"  3 played already in {tmp_path / 'out'}: nothing left to play (")

    swiss = tmp_path / "swiss.yaml"
    swiss.write_text(
        "name: s\nformat: swiss\nrounds: 4\nplayers_per_match: 2\noutput: s\nbots:\n"
        + "".join(f"  - {{name: b{n}, builtin: random}}\n" for n in range(7))
    )
    assert arena("validate", swiss).stdout.splitlines()[1] == "  16 matches: 4 rounds of 4 tables"  # a bye each


def test_validate_estimates_the_rest_from_the_matches_played(tmp_path: Path) -> None:
    path = tournament(
        tmp_path,
        """\
        - {name: a, builtin: random}
        - {name: b, builtin: random}
        - {name: c, builtin: heuristic}
        """,
    )
    path.write_text(path.read_text().replace("seed: 4\n", ""))  # as by default: its seed drawn, nothing said of it
    assert run_arena("run", path, "--quiet", cwd=tmp_path).returncode == 0
    path.write_text(path.read_text().replace("concurrency: 2\n", "concurrency: 2\nrepeats: 200\n"))
    database = tmp_path / "out" / "results.sqlite"
    before = database.read_bytes()
    # Another configuration for the same output: validate says, as run would, that it does not go there.
    refused, run = arena("validate", path), run_arena("run", path, "--quiet", cwd=tmp_path)
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr.startswith(f"arena: {tmp_path / 'out'} holds the results of a different configuration")
    assert (
        "(repeats: (none) → 200)" in refused.stderr and "`output:`" in refused.stderr and "--restart" in refused.stderr
    )
    assert (run.returncode, run.stderr) == (2, refused.stderr)
    assert database.read_bytes() == before
    # The same output as an interrupted run of the longer tournament leaves it: 3 of its 600 matches played.
    with contextlib.closing(sqlite3.connect(database)) as connection, connection:
        connection.execute("UPDATE meta SET value = ? WHERE key = 'config_hash'", (config_hash(load_config(path)),))
    before = database.read_bytes()
    said = arena("validate", path).stdout.splitlines()
    assert said[1] == "  600 matches: 3 tables (each its own group of bots), each played 200 times"
    assert said[2].startswith(f"  3 played already in {tmp_path / 'out'}: about ")
    assert " left (" in said[2] and "s a match so far, 2 workers)" in said[2]
    assert database.read_bytes() == before  # validate changes nothing


def test_standings_show_head_to_head_at_tables_of_four(tmp_path: Path) -> None:
    path = tournament(
        tmp_path,
        """\
        - {name: r1, builtin: random}
        - {name: r2, builtin: random}
        - {name: h1, builtin: heuristic}
        - {name: h2, builtin: heuristic}
        - {name: h3, builtin: heuristic}
        """,
        players=4,
        extra="repeats: 2\n",
    )
    assert run_arena("run", path, "--quiet", cwd=tmp_path).returncode == 0
    output = tmp_path / "out"
    expected: dict[tuple[str, str], list[int]] = {}
    for row in _results(output):
        place = {bot: number for number, group in enumerate(row["ranking"]) for bot in group}
        for a, b in combinations(row["seats"], 2):
            for x, y in ((a, b), (b, a)):
                tally = expected.setdefault((x, y), [0, 0, 0])
                tally[0 if place[x] < place[y] else 1 if place[x] > place[y] else 2] += 1

    table = arena("standings", output).stdout
    heading = "head to head (at the tables they shared: times the row finished ahead of the column, behind it, level)"
    assert heading in table
    lines = table[table.index(heading) :].splitlines()[1:]
    columns = lines[0].split()
    cells = {line.split()[0]: dict(zip(columns, line.split()[1:], strict=True)) for line in lines[1:]}
    for (a, b), (ahead, behind, level) in expected.items():
        assert cells[a][b] == f"{ahead}-{behind}-{level}"

    rows = json.loads(arena("standings", output, "--format", "json").stdout)
    for row in rows:
        for other, pair in row["head_to_head"].items():
            assert [pair["ahead"], pair["behind"], pair["level"]] == expected[(row["bot"], other)]
            assert pair["matches"] == sum(expected[(row["bot"], other)])


def _results(output: Path) -> list[dict]:
    done = arena("results", output, "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_restart_says_what_it_discards(tmp_path: Path) -> None:
    path = tournament(tmp_path, "- {name: a, builtin: random}\n- {name: b, builtin: random}\n")
    path.write_text(path.read_text().replace("seed: 4\n", ""))
    assert run_arena("run", path, "--quiet", cwd=tmp_path).returncode == 0
    again = run_arena("run", path, "--quiet", "--restart", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    said = f"arena: --restart: the 1 match recorded in {tmp_path / 'out'} is discarded; a new seed is drawn"
    assert said in again.stderr, again.stderr

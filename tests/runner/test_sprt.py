"""A sequential test of two bots as `arena run` plays it: pairs on the same deals, a decision as soon as a bound
is reached, the same at any concurrency and after a kill, `arena sprt`, and the report's chart."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.analysis.sprt import llr
from arena.config import load_config
from arena.errors import ConfigError
from arena.store import ResultStore
from tests.runner.test_tournament import committed
from tests.test_cli import arena


def sprt_file(
    tmp_path: Path,
    name: str,
    candidate: str = "heuristic",
    baseline: str = "random",
    *,
    players: int = 2,
    field: tuple[str, ...] = (),
    concurrency: int = 2,
    section: dict[str, object] | None = None,
) -> Path:
    """A test of built-in bots (two copies of one are called new and old); `section`: sprt's keys over defaults."""
    names = ("new", "old") if candidate == baseline else (candidate, baseline)
    bots = [(names[0], candidate), (names[1], baseline), *((f"field-{n}", kind) for n, kind in enumerate(field))]
    sprt: dict[str, object] = {"candidate": names[0], "baseline": names[1], "elo0": 0, "elo1": 10, "max_pairs": 2000}
    sprt |= {"field": [f"field-{n}" for n in range(len(field))]} if field else {}
    sprt |= section or {}
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        f"name: {name}\nformat: sprt\nplayers_per_match: {players}\nseed: 5\nconcurrency: {concurrency}\n"
        f"sandbox: none\noutput: {name}\nsprt: {json.dumps(sprt)}\nbots:\n"
        + "".join(f"  - {{name: {bot}, builtin: {kind}}}\n" for bot, kind in bots)
    )
    return path


def run(path: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(path), "--quiet"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def result_of(output: Path) -> dict:
    done = arena("sprt", output, "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_much_stronger_candidate_is_accepted_in_few_pairs_and_the_printed_llr_is_the_formula(tmp_path: Path) -> None:
    path = sprt_file(tmp_path, "strong")
    done = run(path)
    result = result_of(tmp_path / "strong")
    assert result["decision"] == "H1"
    assert result["pairs"] < 300  # heuristic against random, H1 at 10 Elo: about a hundred pairs
    assert sum(result["pentanomial"]) == result["pairs"]
    assert result["llr"] == pytest.approx(llr(result["pentanomial"], result["elo0"], result["elo1"]), abs=1e-4)
    assert result["llr"] >= result["upper_bound"] == pytest.approx(2.9444, abs=1e-4)
    assert result["elo"] > 100 and result["elo_ci95"][0] < result["elo"]
    assert "decision: H1 accepted: new is stronger than old" not in done.stdout  # its names are heuristic, random
    assert "decision: H1 accepted: heuristic is stronger than random" in done.stdout
    # both matches of a pair: the same deal, the seats swapped
    store = ResultStore.open_existing(tmp_path / "strong")
    try:
        jobs = {stored.job.match_id: stored.job for stored in store.matches()}
    finally:
        store.close()
    first, second = jobs["sprt-000001-a"], jobs["sprt-000001-b"]
    assert first.deal_key == second.deal_key == "sprt-000001" and first.seed == second.seed
    assert first.seats == ("heuristic", "random") and second.seats == ("random", "heuristic")
    index = (tmp_path / "strong" / "report" / "index.html").read_text()
    assert f'<section id="sprt" data-decision="H1" data-pairs="{result["pairs"]}"' in index
    assert 'id="sprt-chart"' in index


def test_two_copies_of_one_bot_accept_h0_or_run_to_max_pairs(tmp_path: Path) -> None:
    path = sprt_file(tmp_path, "same", "random", "random", section={"elo1": 40, "max_pairs": 150})
    run(path)
    result = result_of(tmp_path / "same")
    assert result["decision"] in ("H0", "none")
    assert result["decision"] == "H0" or result["pairs"] == 150
    assert result["llr"] < result["upper_bound"]


def test_the_same_seed_gives_the_same_test_at_any_concurrency(tmp_path: Path) -> None:
    one = sprt_file(tmp_path, "one", "heuristic", "random", section={"elo1": 20}, concurrency=1)
    two = sprt_file(tmp_path, "two", "heuristic", "random", section={"elo1": 20}, concurrency=2)
    run(one)
    run(two)
    assert result_of(tmp_path / "one") == result_of(tmp_path / "two")


def test_a_test_killed_outright_resumes_to_the_same_decision_and_counts(tmp_path: Path) -> None:
    whole = sprt_file(tmp_path, "whole", "random", "random", section={"elo1": 40, "max_pairs": 200})
    run(whole)
    path = sprt_file(tmp_path, "killed", "random", "random", section={"elo1": 40, "max_pairs": 200})
    output = tmp_path / "killed"
    process = subprocess.Popen([sys.executable, "-m", "arena", "run", str(path), "--quiet"], stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while committed(output) == 0 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert process.poll() is None, "the test should commit its pairs as it goes"
    os.kill(process.pid, signal.SIGKILL)
    process.wait(10)
    assert process.stderr is not None
    process.stderr.close()
    run(path)
    assert result_of(output) == result_of(tmp_path / "whole")


def test_at_a_table_of_four_the_candidate_and_the_baseline_take_the_same_seat_against_the_same_field(
    tmp_path: Path,
) -> None:
    path = sprt_file(tmp_path, "four", players=4, field=("random", "random", "random"), section={"elo1": 20})
    run(path)
    result = result_of(tmp_path / "four")
    assert result["decision"] == "H1"
    assert result["pentanomial"][1] == result["pentanomial"][3] == 0  # one match each: no half points
    store = ResultStore.open_existing(tmp_path / "four")
    try:
        jobs = {stored.job.match_id: stored.job for stored in store.matches()}
    finally:
        store.close()
    for number in range(1, 5):
        first, second = jobs[f"sprt-{number:06d}-a"], jobs[f"sprt-{number:06d}-b"]
        seat = (number - 1) % 4
        assert first.seats[seat] == "heuristic" and second.seats[seat] == "random"
        assert [s for i, s in enumerate(first.seats) if i != seat] == ["field-0", "field-1", "field-2"]
        assert [s for i, s in enumerate(second.seats) if i != seat] == ["field-0", "field-1", "field-2"]
        assert first.seed == second.seed


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"candidate": "nobody"}, "sprt.candidate: no bot named 'nobody' in bots"),
        ({"elo1": -5}, "sprt.elo1: must be above elo0 (0), not -5"),
        ({"field": ["old"]}, "sprt.field: only for tables of more than 2: at 2, candidate and baseline meet"),
        ({"alpha": 0.7}, "sprt.alpha: must be less than 0.5, not the number 0.7"),
    ],
)
def test_a_bad_sprt_section_is_named_by_line_and_field(tmp_path: Path, change: dict, problem: str) -> None:
    path = sprt_file(tmp_path, "bad", section=change)
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert f"{path}:8: {problem}" in str(raised.value).splitlines(), str(raised.value)

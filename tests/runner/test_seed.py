"""Secret deals: a tournament without a written seed draws one for its output folder, keeps it there, and deals
every rerun and resume of that folder with it; no bot can find it by trying seeds, nor read it anywhere it looks.
A written seed plays the same tournament in any folder, and one short enough to guess is said once."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from arena.cli import main
from arena.config import TournamentConfig, load_config
from arena.engine import Match, get_ruleset
from arena.matches import match_seed
from arena.replay.lines import record_line
from arena.runner.executor import LocalExecutor
from arena.runner.tournament import run_tournament
from arena.store import ResultStore
from tests.runner.test_tournament import StopAfter, results

MakeFile = Callable[..., Path]

COMMON_SEEDS = (1, 42, 1234, 12345, 31337, 2024, 2025, 2026, 0xDEADBEEF)
"""Seeds people write, beside 0 to 3000: those of the issue's attack, which found the default seed 0 at once."""
DEAL = ("first", "set_aside", "removed_face_up", "hands", "deck")
"""What a round_start line says of the deal."""


def seed_of(output: Path) -> int | None:
    store = ResultStore.open_existing(output)
    try:
        return store.tournament_seed
    finally:
        store.close()


def first_deal(replay: Path) -> tuple[str, tuple[str, ...], dict[str, object]]:
    """The match's id, seats and first round's deal, as its replay records them."""
    lines = [json.loads(line) for line in replay.read_text().splitlines()]
    start = lines[0]
    deal = next(line for line in lines if line["type"] == "round_start")
    return start["match_id"], tuple(start["players"]), {key: deal[key] for key in DEAL}


def seeds_dealing(
    candidates: Iterable[int], match_id: str, deal_key: str, seats: tuple[str, ...], deal: dict[str, object]
) -> list[int]:
    """The attack: the tournament seeds among candidates whose first deal of this match is this one, computed as
    any bot can, with the public engine and the match's id (its deal_key, unless the match is a duplicate)."""
    ruleset = get_ruleset("2019")
    found = []
    for candidate in candidates:
        match = Match(ruleset, list(seats), match_seed(candidate, deal_key))
        match.deal_round()
        line = record_line(match.records[0], match_id)
        assert line is not None
        if {key: line[key] for key in DEAL} == deal:
            found.append(candidate)
    return found


def candidates() -> list[int]:
    return sorted({*range(3001), *COMMON_SEEDS})


def test_the_attack_finds_a_written_seed_from_one_deal() -> None:
    """So that its finding nothing below means something."""
    seats = ("random-0", "random-1")
    match = Match(get_ruleset("2019"), list(seats), match_seed(42, "rr-0001"))
    match.deal_round()
    line = record_line(match.records[0], "rr-0001")
    assert line is not None
    assert seeds_dealing(candidates(), "rr-0001", "rr-0001", seats, {key: line[key] for key in DEAL}) == [42]


def test_no_common_seed_deals_a_tournament_run_with_the_default_settings(tournament_file: MakeFile) -> None:
    """The issue's attack: a bot tried the seeds 0 to 3000 and some common ones, and found the default seed 0
    from its first round. With the seed drawn for the folder, none of them deals what was dealt."""
    config = load_config(tournament_file(builtins=("random", "random"), seed=None, extra="repeats: 2\n"))
    run_tournament(config, progress=False)
    replays = sorted((config.output / "replays").glob("*.jsonl"))
    assert len(replays) == 2
    for replay in replays:
        match_id, seats, deal = first_deal(replay)
        assert seeds_dealing(candidates(), match_id, match_id, seats, deal) == []
    seed = seed_of(config.output)
    assert seed is not None and seed.bit_length() > 64  # at most 64: one chance in 2**64
    match_id, seats, deal = first_deal(replays[0])
    assert seeds_dealing([seed], match_id, match_id, seats, deal) == [seed]  # the kept seed is the one dealt with


def test_each_new_folder_of_a_file_without_a_seed_deals_its_own_and_a_restart_deals_anew(
    tournament_file: MakeFile,
) -> None:
    path = tournament_file(builtins=("random", "random"), seed=None)
    one = load_config(path)
    two = load_config(tournament_file(builtins=("random", "random"), seed=None, output="two"))
    run_tournament(one, progress=False)
    run_tournament(two, progress=False)
    first = seed_of(one.output)
    assert first != seed_of(two.output)
    assert first_deal(one.output / "replays" / "rr-0001.jsonl") != first_deal(two.output / "replays" / "rr-0001.jsonl")
    assert run_tournament(one, progress=False).kept == 1 and seed_of(one.output) == first  # a rerun: the same
    assert run_tournament(one, progress=False, restart=True).played == 1 and seed_of(one.output) != first


def test_a_resumed_tournament_keeps_its_drawn_seed_and_the_seed_plays_it_again_elsewhere(
    tournament_file: MakeFile, capsys: pytest.CaptureFixture[str]
) -> None:
    """Interrupted, then resumed: the same results, replay for replay, as an uninterrupted run of the same file
    with that seed written in it, in another folder. The standings give the seed once every match is played."""
    config = load_config(tournament_file(name="r", output="halves", programs=1, seed=None))
    with pytest.raises(KeyboardInterrupt):
        run_tournament(config, progress=False, executor=StopAfter(2))
    drawn = seed_of(config.output)
    assert drawn is not None and 2 <= len(results(config.output)) < 6
    capsys.readouterr()
    assert main(["standings", str(config.output)]) == 0
    assert str(drawn) not in capsys.readouterr().out  # standings are shared while it runs: not yet
    summary = run_tournament(config, progress=False)
    assert summary.kept >= 2 and summary.kept + summary.played == 6
    assert seed_of(config.output) == drawn
    assert main(["standings", str(config.output)]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[1] == f"seed: {drawn} (written in the file, it plays this tournament again anywhere)"

    whole = load_config(tournament_file(name="r", output="whole", programs=1, seed=drawn))
    run_tournament(whole, progress=False)
    assert results(whole.output) == results(config.output)
    assert replays(whole.output) == replays(config.output)


def replays(output: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted((output / "replays").glob("*.jsonl"))}


def test_a_written_seed_of_256_bits_plays_the_same_tournament_in_any_folder(tournament_file: MakeFile) -> None:
    seed = 2**256 - 12345
    one = load_config(tournament_file(builtins=("random", "heuristic", "random"), seed=hex(seed)))
    two = load_config(tournament_file(builtins=("random", "heuristic", "random"), seed=seed, output="two"))
    run_tournament(one, progress=False)
    run_tournament(two, progress=False)
    assert seed_of(one.output) == seed_of(two.output) == seed
    assert results(one.output) == results(two.output)
    assert replays(one.output) == replays(two.output)
    assert [row["seed"] for row in results(one.output)] == [
        match_seed(seed, str(row["deal_key"])) for row in results(one.output)
    ]


SNOOP = """
import glob, os, sys
import arena.sdk as sdk


def show(*what):
    print(*what, file=sys.stderr, flush=True)


show("argv", sys.argv)
show("environ", dict(os.environ))
for pattern in ("/proc/*/cmdline", "/proc/*/environ"):
    for path in glob.glob(pattern):
        try:
            show(path, open(path, "rb").read())
        except OSError:
            pass
for folder in {os.getcwd(), os.path.dirname(os.path.abspath(__file__))}:
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                show("file", os.path.join(root, name), open(os.path.join(root, name), "rb").read(100_000))
            except OSError:
                pass

loads = sdk._loads


def logged(raw):
    show("message", raw)
    return loads(raw)


sdk._loads = logged  # every message the arena sends, as it comes
sdk.run(lambda message: 0, name="snoop")
"""


def test_nothing_a_bot_sees_holds_the_tournaments_seed_or_a_matchs(tmp_path: Path) -> None:
    """A bot that shows in its log everything it is sent and everything it is given: its command line and
    environment (and those of every process it can see), its directory and its working directory. No seed is in
    it. (What else it can reach on the machine is the sandbox's matter: tests/sandbox.)"""
    (tmp_path / "snoop").mkdir()
    (tmp_path / "snoop" / "bot.py").write_text(SNOOP)
    path = tmp_path / "t.yaml"
    path.write_text(
        textwrap.dedent("""\
        name: snoop
        format: round-robin
        players_per_match: 2
        repeats: 2
        concurrency: 1
        limits: {stderr_kb: 8192}
        output: out
        bots:
          - {name: snoop, command: [python3, snoop/bot.py]}
          - {name: random, builtin: random}
        """)
    )
    ran = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(path), "--quiet"], capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    output = tmp_path / "out"
    seed = seed_of(output)
    assert seed is not None
    hidden = {str(seed), f"{seed:x}", f"{seed:X}", *(str(row["seed"]) for row in results(output))}
    logs = [log.read_text(errors="replace") for log in sorted((output / "logs" / "snoop").glob("*.log"))]
    assert len(logs) == 2 and "environ" in logs[0] and all("message" in log for log in logs)  # it did look
    assert '"match_id":"rr-0001"' in logs[0].replace(" ", "")
    assert [secret for secret in hidden if any(secret in log for log in logs)] == []


WEAK = "is short enough to guess, and bots could predict every deal from it"


@pytest.mark.parametrize(("seed", "said"), [(42, True), (2**128 + 1, False), (None, False)])
def test_arena_run_says_once_that_a_short_written_seed_can_be_guessed(
    tournament_file: MakeFile, seed: int | None, said: bool
) -> None:
    """Once, however many workers play: they do not say it again."""
    path = tournament_file(builtins=("random", "heuristic", "random"), seed=seed)
    ran = subprocess.run([sys.executable, "-m", "arena", "run", str(path), "--quiet"], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert ran.stderr.count(WEAK) == int(said), ran.stderr
    if said:
        line = next(line for line in ran.stderr.splitlines() if WEAK in line)
        assert line.startswith(f"arena: {path}: seed 42 ")
        assert "leave seed out" in line and "python3 -c 'import secrets; print(secrets.randbits(128))'" in line


def test_the_workers_get_each_matchs_seed_and_not_the_tournaments(tournament_file: MakeFile) -> None:
    """A Dask executor ships the configuration to a cluster's machines: the tournament's seed stays in the arena."""
    seen: list[TournamentConfig] = []

    def executor(config: TournamentConfig, workers: int) -> LocalExecutor:
        seen.append(config)
        return LocalExecutor(config, workers)

    seed = 2**100 + 7
    config = load_config(tournament_file(builtins=("random", "random"), seed=seed))
    assert str(seed) in config.raw_text
    run_tournament(config, progress=False, executor=executor)
    assert [(given.seed, given.raw_text) for given in seen] == [(None, "")]
    assert [row["seed"] for row in results(config.output)] == [match_seed(seed, "rr-0001")]

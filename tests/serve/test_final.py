"""The final tournament at the deadline: a real tournament file written from the ladder file and the active
versions, played by run_tournament on real bots (examples/random_bot.py, at sandbox none), resumed by a second
run, refused with other versions unless restarted; its gradebook a row per bot with gauntlet.csv's columns."""

from __future__ import annotations

import csv
import functools
import shutil
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from arena.cli import main
from arena.config import BotEntry, Format, load_config
from arena.errors import ArenaError, StoreError, UsageError
from arena.matches import MatchFailed, MatchJob, MatchOutcome
from arena.runner.tournament import run_tournament
from arena.serve import final as final_module
from arena.serve.checks import version_command
from arena.serve.final import (
    FINAL_FILE,
    GRADEBOOK,
    check_time,
    final_config_text,
    play_final,
    run_final,
    write_final,
)
from arena.serve.ladder import LadderConfig, load_ladder
from arena.serve.server import open_ladder
from arena.serve.store import Entrant, LadderStore
from arena.serve.uploads import Preset, store_upload
from arena.store import ResultStore
from tests.executors import InProcess
from tests.serve.conftest import RANDOM_BOT, ROOT, ladder_file

ROUND_ROBIN = "  final: {format: round-robin, repeats: 1, duplicate: true}\n"
GAUNTLET = "  final: {format: gauntlet, repeats: 1, duplicate: true}\n"
PAST = "  deadline: 2020-01-01T00:00:00Z\n"
FUTURE = "  deadline: 2999-01-01T00:00:00+01:00\n"


def ladder_with(
    folder: Path,
    extra: str = ROUND_ROBIN,
    names: tuple[str, ...] = ("ada", "bob"),
    bots: str | None = None,
    top: str = "",
) -> tuple[LadderConfig, LadderStore, Path, dict[str, Entrant]]:
    """A ladder at sandbox none whose entrants `names` each have examples/random_bot.py as their active version
    (stored as an upload, marked passed without running its check); `bots` replaces the reference bots, `top` is
    added to the tournament part."""
    path = ladder_file(folder, extra)
    text = path.read_text()
    start, end = text.index("bots:\n"), text.index("ladder:\n")
    path.write_text(text[:start] + top + (bots if bots is not None else text[start:end]) + text[end:])
    ladder = load_ladder(path)
    store, versions = open_ladder(ladder)
    added = store.add_entrants([(name, f"{name}@uni.example") for name in names])
    entrants = {entrant.name: entrant for entrant, _ in added}
    for entrant in entrants.values():
        activate(store, versions, entrant)
    return ladder, store, versions, entrants


def activate(store: LadderStore, versions: Path, entrant: Entrant, data: bytes = RANDOM_BOT) -> str:
    """Upload `data` as the entrant's new version and mark it passed: it becomes the active one."""
    version = store_upload(data, "bot.py", Preset.PYTHON, versions)
    store.add_version(entrant.id, version.digest, "bot.py", version.preset.value, version.command, version.protocol)
    store.checked(entrant.id, version.digest, True, {"passed": True})
    assert store.active()[entrant.id] == version.digest
    return version.digest


def recorded(output: Path) -> list[str]:
    store = ResultStore.open_existing(output)
    try:
        return sorted(match.job.match_id for match in store.matches())
    finally:
        store.close()


def gradebook(output: Path) -> list[dict[str, str]]:
    with (output / GRADEBOOK).open(newline="") as file:
        return list(csv.DictReader(file))


# ------------------------------------------------------------------------------------------------ refusals


def test_refused_before_the_deadline_unless_now_and_on_a_ladder_without_one(tmp_path: Path) -> None:
    ladder, _, _, _ = ladder_with(tmp_path, FUTURE + ROUND_ROBIN)
    with pytest.raises(UsageError, match=r"deadline is 2999-01-01T00:00:00\+01:00, .* from now.*--now") as refused:
        write_final(ladder)
    assert "\n" not in str(refused.value)
    assert not (ladder.data / FINAL_FILE).exists()
    check_time(ladder, now=True)
    check_time(ladder, clock=lambda: datetime(2998, 12, 31, 23, 0, tzinfo=UTC))  # the deadline itself, in UTC
    with pytest.raises(UsageError, match="1 h 0 min from now"):
        check_time(ladder, clock=lambda: datetime(2998, 12, 31, 22, 0, tzinfo=UTC))
    (tmp_path / "open").mkdir()
    open_ended = load_ladder(ladder_file(tmp_path / "open"))
    with pytest.raises(UsageError, match=r"sets no deadline .*--now"):
        check_time(open_ended)


def test_refused_with_fewer_entrants_than_a_table_has_seats(tmp_path: Path) -> None:
    ladder, store, versions, _ = ladder_with(tmp_path, PAST + ROUND_ROBIN, names=("ada",))
    (bob, _), (carl, _) = store.add_entrants([("bob", "bob@uni.example"), ("carl", "carl@uni.example")])
    failed = store_upload(b"print('no bot')\n", "bot.py", Preset.PYTHON, versions)
    store.add_version(bob.id, failed.digest, "bot.py", "python", failed.command, failed.protocol)
    store.checked(bob.id, failed.digest, False, {"passed": False})  # bob's only version failed its check
    with pytest.raises(UsageError, match=r"at least 2 entrants with an active version .*; 1 has one") as refused:
        write_final(ladder)
    assert "\n" not in str(refused.value)
    assert not (ladder.data / FINAL_FILE).exists()
    activate(store, versions, carl)
    assert "name: carl" in final_config_text(ladder, store, versions)


def test_an_entrant_named_as_a_reference_bot_is_refused(tmp_path: Path) -> None:
    ladder, store, versions, _ = ladder_with(tmp_path, names=("ada", "random"))
    with pytest.raises(UsageError, match="entrant 'random' named as a reference bot"):
        final_config_text(ladder, store, versions)


# ------------------------------------------------------------------------------------------------ the file


def test_a_command_that_would_start_otherwise_from_the_data_folder_is_refused(tmp_path: Path) -> None:
    ladder, store, versions, entrants = ladder_with(tmp_path)
    # `versions` names no file of the upload (the ladder passes it as it is), but names the data folder's versions.
    odd = store_upload(
        RANDOM_BOT, "bot.py", Preset.COMMAND, versions, command="python3 bot.py versions", protocol="zmq"
    )
    store.add_version(entrants["bob"].id, odd.digest, "bot.py", "command", odd.command, odd.protocol)
    store.checked(entrants["bob"].id, odd.digest, True, {"passed": True})
    with pytest.raises(ArenaError, match="bob would start otherwise in the final than in the ladder"):
        write_final(ladder, now=True)


def test_the_file_loads_as_written_and_is_the_same_text_for_the_same_versions(tmp_path: Path) -> None:
    shutil.copy(ROOT / "examples" / "random_bot.py", tmp_path / "reference_bot.py")
    bots = (
        "bots:\n"
        "  - {name: random, builtin: random}\n"
        "  - {name: searcher, builtin: search, subprocess: true, options: {playouts: 50, seed: 3}}\n"
        "  - {name: mine, command: [python3, reference_bot.py], protocol: stdio}\n"
    )
    extra = "  final: {format: swiss, rounds: 4, duplicate: true}\n"
    ladder, store, versions, entrants = ladder_with(tmp_path, extra, names=("ada", "1e3", "0o17"), bots=bots)
    final = write_final(ladder, now=True)
    text = final.path.read_bytes()
    assert final.path == ladder.data / FINAL_FILE
    assert write_final(ladder, now=True).path.read_bytes() == text  # byte for byte
    assert final_config_text(ladder, store, versions).encode() == text
    assert b"\nseed:" not in text  # drawn for the output folder and kept there

    config = load_config(final.path)
    assert config == final.config
    tournament = ladder.tournament
    assert config.name == "test-ladder-final" and config.format is Format.SWISS and config.rounds == 4
    assert config.duplicate and config.gauntlet is None and config.seed is None
    assert config.output == tournament.output == (tmp_path / "final").resolve()
    for field in ("ruleset", "players_per_match", "sandbox", "timing", "limits", "concurrency", "executor"):
        assert getattr(config, field) == getattr(tournament, field), field
    # The entrants' active versions, started exactly as the ladder starts them; then the references as written.
    chosen = [
        (entrants[name], store.version(entrants[name].id, store.active()[entrants[name].id])) for name in entrants
    ]
    assert config.bots == (
        *(BotEntry(e.name, command=version_command(e.name, v, versions)) for e, v in chosen if v is not None),
        *tournament.bots,
    )
    assert [bot.name for bot in config.bots] == ["ada", "1e3", "0o17", "random", "searcher", "mine"]  # still strings
    assert config.bots[4].options == (("playouts", 50), ("seed", 3)) and config.bots[4].subprocess
    digest = store.active()[entrants["ada"].id]
    assert f"- versions/{digest}/bot.py\n  protocol: zmq\n  dir: versions/{digest}\n".encode() in text
    assert f"  - {tmp_path.resolve() / 'reference_bot.py'}\n  protocol: stdio\n".encode() in text

    activate(store, versions, entrants["ada"], RANDOM_BOT + b"# a new version\n")
    changed = write_final(ladder, now=True)
    assert changed.path.read_bytes() != text
    assert changed.entrants["ada"] == store.active()[entrants["ada"].id] != digest


def test_a_seed_and_a_cluster_written_in_the_ladder_file_are_the_final_s(tmp_path: Path) -> None:
    seed = 2**200 + 7
    top = f"seed: {seed}\nexecutor: {{type: dask, address: 'tcp://head:8786', max_bot_mb: 30}}\n"
    ladder, store, versions, _ = ladder_with(tmp_path, top=top)
    text = final_config_text(ladder, store, versions)
    assert f"\nseed: {seed}\n" in text and "\nexecutor:\n  type: dask\n  address: tcp://head:8786\n" in text
    config = write_final(ladder, now=True).config
    assert config.seed == seed and config.executor == ladder.tournament.executor


def test_a_gauntlet_final_has_the_entrants_as_candidates_and_the_references_as_field(tmp_path: Path) -> None:
    ladder, _, _, _ = ladder_with(tmp_path, GAUNTLET, names=("ada", "bob"))
    summary = run_final(ladder, now=True, progress=False)
    config = load_config(summary.file)
    assert config.format is Format.GAUNTLET and config.gauntlet is not None
    assert config.gauntlet.candidates == ("ada", "bob") and config.gauntlet.repeats == 1
    output = summary.run.output
    assert len(recorded(output)) == summary.run.matches == 2 * 2 * 2  # 2 candidates x 2 of the field, duplicated
    # gradebook.csv is gauntlet.csv with the reference bots' rows and the kind and version columns besides.
    with (output / "gauntlet.csv").open(newline="") as file:
        candidates = list(csv.DictReader(file))
    rows = gradebook(output)
    assert [row["bot"] for row in rows if row["kind"] == "entrant"] == [row["bot"] for row in candidates]
    for mine, theirs in zip([row for row in rows if row["kind"] == "entrant"], candidates, strict=True):
        assert {key: mine[key] for key in theirs} == theirs
    assert list(rows[0]) == [*list(candidates[0])[:2], "kind", "version", "email", *list(candidates[0])[2:]]
    assert {row["bot"] for row in rows if row["kind"] == "reference"} == {"random", "heuristic"}


# ------------------------------------------------------------------------------------------------ the run


def test_the_final_plays_every_match_once_resumes_and_needs_restart_for_other_versions(tmp_path: Path) -> None:
    ladder, store, versions, entrants = ladder_with(tmp_path, PAST + ROUND_ROBIN)
    ((cyd, _),) = store.add_entrants([("cyd", "cyd@uni.example")])  # whose every version failed its check
    first = run_final(ladder, progress=False)
    output = first.run.output
    assert output == ladder.tournament.output
    assert first.run.matches == first.run.played == len(recorded(output)) == 6 * 2  # 4 bots in pairs, duplicated
    assert not first.run.failed and first.report.is_file() and first.report == output / "report" / "index.html"

    rows = gradebook(output)
    assert first.gradebook == output / GRADEBOOK
    absent = rows.pop()  # the gradebook has every entrant: cyd, who had no version in the final, last
    assert (absent["bot"], absent["kind"], absent["email"], absent["rank"]) == ("cyd", "entrant", cyd.email, "")
    assert absent["version"] == "none passed its check"
    assert sorted(row["bot"] for row in rows) == ["ada", "bob", "heuristic", "random"]
    assert {row["bot"]: row["email"] for row in rows}["ada"] == "ada@uni.example"
    for column in ("rank", "bot", "kind", "version", "score", "wins", "matches", "rating", "faults", "field_rank"):
        assert column in rows[0], column
    for column in ("faults_crash", "decisions", "reply_ms_p95", "fair_play_flags", "fair_play"):
        assert column in rows[0], column
    assert {row["bot"]: row["kind"] for row in rows} == {
        "ada": "entrant",
        "bob": "entrant",
        "random": "reference",
        "heuristic": "reference",
    }
    by_bot = {row["bot"]: row for row in rows}
    assert by_bot["ada"]["version"] == store.active()[entrants["ada"].id][:12] and by_bot["random"]["version"] == ""
    assert sorted(by_bot[name]["rank"] for name in ("ada", "bob")) in (["1", "2"], ["1", "1"])
    assert by_bot["random"]["rank"] == "" and by_bot["random"]["fair_play"] == "not tested"
    assert all(row["matches"] == "6" for row in rows)  # a round-robin: everyone meets everyone, twice
    assert sorted(row["field_rank"] for row in rows)[0] == "1"

    again = run_final(ladder, progress=False)
    assert again.run.played == 0 and again.run.kept == again.run.matches == first.run.matches
    assert gradebook(output) == [*rows, absent]  # the same results, the same gradebook

    activate(store, versions, entrants["bob"], RANDOM_BOT + b"# bob's second version\n")
    with pytest.raises(StoreError, match=r"bots: bob changed .*--restart") as refused:
        run_final(ladder, progress=False)
    assert "\n" not in str(refused.value)
    assert len(recorded(output)) == first.run.matches  # nothing lost
    final = write_final(ladder)
    restarted = play_final(ladder, final, restart=True, progress=False)
    assert restarted.run.played == restarted.run.matches == first.run.matches and restarted.run.kept == 0
    assert {row["bot"]: row["version"] for row in gradebook(output)}["bob"] == store.active()[entrants["bob"].id][:12]


def test_no_gradebook_is_written_while_matches_of_the_final_failed_in_the_arena(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Grades from a final that lacks matches would grade on part of it: the gradebook waits for every match."""
    ladder, _, _, _ = ladder_with(tmp_path, PAST + ROUND_ROBIN)

    class FirstFails(InProcess):
        def run(self, jobs: Sequence[MatchJob]) -> Iterator[MatchOutcome]:
            for number, job in enumerate(jobs):
                yield MatchFailed(job, "an arena bug", "") if number == 0 else self.worker.attempt(job)

    monkeypatch.setattr(final_module, "run_tournament", functools.partial(run_tournament, executor=FirstFails))
    first = run_final(ladder, progress=False)
    output = first.run.output
    assert first.run.failed and first.gradebook is None and not (output / GRADEBOOK).exists()
    monkeypatch.undo()
    again = run_final(ladder, progress=False)
    assert again.run.played == 1 and not again.run.failed
    assert again.gradebook == output / GRADEBOOK and len(gradebook(output)) == 4


def test_the_command_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ladder, _, _, _ = ladder_with(tmp_path, FUTURE + ROUND_ROBIN)
    source = str(ladder.source)
    assert main(["serve-admin", "final", source]) == 2
    err = capsys.readouterr().err
    assert err.startswith("arena: the ladder's deadline is 2999-01-01T00:00:00+01:00") and err.count("\n") == 1

    assert main(["serve-admin", "final", source, "--now"]) == 0
    out = capsys.readouterr().out.splitlines()
    output = ladder.tournament.output
    assert out[0].startswith("test-ladder-final: 12 matches (12 played now), ")
    assert out[1:] == [
        f"results: {output}",
        f"report: {output / 'report' / 'index.html'}",
        f"gradebook: {output / GRADEBOOK}",
    ]
    assert (output / GRADEBOOK).is_file() and (output / "report" / "index.html").is_file()
    assert main(["serve-admin", "final", source, "--now"]) == 0
    assert "(0 played now, 12 kept from an earlier run)" in capsys.readouterr().out

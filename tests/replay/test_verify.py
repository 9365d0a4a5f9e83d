"""The verifier accepts every legal replay and names the first line of an illegal one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.errors import ReplayError, ReplayMismatch
from arena.replay import parse_replay, read_replay, replay_lines, verify
from arena.replay.lines import dump_line
from tests.engine.test_properties import play_random, random_plan

SAMPLES = Path(__file__).parent / "samples"


@pytest.mark.parametrize("path", sorted((SAMPLES / "valid").glob("*.jsonl")), ids=lambda p: p.name)
def test_independent_valid_replays_verify(path: Path) -> None:
    result = verify(read_replay(path))
    assert result.match is not None and result.match.result is not None
    expected = json.loads(path.read_text().splitlines()[-1])
    assert list(result.match.result.winners) == sorted(expected["winners"])


def test_a_ranking_that_splits_the_disqualified_is_accepted_with_a_warning() -> None:
    result = verify(read_replay(SAMPLES / "valid" / "00047-2019-4p-1968528650.jsonl"))
    assert result.warnings == [
        "line 59: the ranking splits the disqualified seats into [[2], [0, 1]]; RULES.md has them share last place"
    ]


@pytest.mark.parametrize(
    ("name", "line", "message"),
    [
        ("guard-names-guard", 3, "a guard may not name guard"),
        ("wrong-round-winner", 20, "round 1: won by seat 2 (showdown: 1 prince, 2 princess, 3 handmaid)"),
        ("wrong-first-player", 21, "seat 0 may not start: round 2 starts with round 1's winner (2)"),
        ("tokens-not-carried", 21, "round 2 starts with tokens [0, 0, 0, 0], but round 1 ended with [0, 0, 1, 0]"),
    ],
)
def test_independent_invalid_replays_fail_at_the_wrong_line(name: str, line: int, message: str) -> None:
    with pytest.raises(ReplayMismatch) as failure:
        verify(read_replay(SAMPLES / "invalid" / f"{name}.jsonl"))
    assert failure.value.line == line
    assert message in failure.value.message


def _lines(ruleset: str, players: int, seed: int, faults: list[int]) -> list[dict]:
    match = play_random(random_plan(ruleset, players, seed, faults))
    return list(replay_lines(match, f"m-{seed}"))


def _verify_dicts(lines: list[dict]) -> None:
    verify(parse_replay([dump_line(line) for line in lines]))


@pytest.mark.parametrize(
    ("ruleset", "players", "faults"),
    [("2019", 2, []), ("2019", 4, [40]), ("2019", 6, [0, 10, 200]), ("classic", 3, [5]), ("classic", 4, [])],
)
def test_our_own_replays_verify(ruleset: str, players: int, faults: list[int]) -> None:
    for seed in range(5):
        _verify_dicts(_lines(ruleset, players, seed, faults))


def test_an_illegal_decision_fails_at_its_line() -> None:
    lines = _lines("2019", 4, 3, [])
    index = next(i for i, line in enumerate(lines) if line["type"] == "decision" and line["decision"] == "play")
    lines[index]["action"] = {"card": "guard", "target": 9, "guess": "guard"}
    with pytest.raises(ReplayMismatch) as failure:
        _verify_dicts(lines)
    assert failure.value.line == index + 1


def test_a_decision_by_the_wrong_seat_fails_at_its_line() -> None:
    lines = _lines("classic", 3, 8, [])
    index = next(i for i, line in enumerate(lines) if line["type"] == "decision")
    lines[index]["seat"] = (lines[index]["seat"] + 1) % 3
    with pytest.raises(ReplayMismatch, match="is to decide, not seat") as failure:
        _verify_dicts(lines)
    assert failure.value.line == index + 1


@pytest.mark.parametrize("field", ["winners", "tokens", "spy_bonus"])
def test_an_altered_round_outcome_fails_at_its_line(field: str) -> None:
    lines = _lines("2019", 3, 21, [])
    index = next(i for i, line in enumerate(lines) if line["type"] == "round_end")
    end = lines[index]
    if field == "winners":
        end["winners"] = [(end["winners"][0] + 1) % 3]
    elif field == "tokens":
        end["tokens"] = [t + 1 for t in end["tokens"]]
    else:
        end["spy_bonus"] = 2 if end["spy_bonus"] != 2 else 1
    with pytest.raises(ReplayMismatch) as failure:
        _verify_dicts(lines)
    assert failure.value.line == index + 1


def test_an_altered_match_outcome_fails_at_its_line() -> None:
    lines = _lines("2019", 2, 5, [])
    lines[-1]["winners"] = [1 - lines[-1]["winners"][0]]
    with pytest.raises(ReplayMismatch, match="the match was won by") as failure:
        _verify_dicts(lines)
    assert failure.value.line == len(lines)


def test_a_missing_round_end_is_named() -> None:
    lines = _lines("2019", 4, 5, [])
    index = next(i for i, line in enumerate(lines) if line["type"] == "round_end")
    del lines[index]
    with pytest.raises(ReplayMismatch, match="round 1 is over, won by") as failure:
        _verify_dicts(lines)
    assert failure.value.line == index + 1


def test_a_truncated_replay_is_not_valid() -> None:
    lines = _lines("2019", 4, 5, [])[:-3]
    with pytest.raises(ReplayMismatch, match="the replay stops before the match is over") as failure:
        _verify_dicts(lines)
    assert failure.value.line is None


def test_lines_of_other_types_are_skipped() -> None:
    lines = _lines("2019", 3, 2, [])
    lines.insert(3, {"type": "play", "seat": 0, "card": "guard"})
    _verify_dicts(lines)


def test_a_wrong_target_for_the_table_size_is_named() -> None:
    lines = _lines("2019", 3, 2, [])
    lines[0]["target"] = 7
    with pytest.raises(ReplayMismatch, match="a 3-player 2019 match is played to 5 tokens, not 7"):
        _verify_dicts(lines)


def test_unreadable_replays_name_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text('{"type": "match_start"}\nnot json\n')
    with pytest.raises(ReplayError, match=r"broken.jsonl:2: not JSON"):
        read_replay(path)
    with pytest.raises(ReplayError, match="cannot read"):
        read_replay(tmp_path / "missing.jsonl")


def test_a_replay_reproduces_the_match_exactly() -> None:
    original = play_random(random_plan("2019", 5, 77, [30]))
    result = verify(parse_replay([dump_line(line) for line in replay_lines(original, "x")]))
    assert result.match is not None
    assert list(result.match.records) == list(original.records)

"""The encoding a policy plays by: the same vector from the engine's view as from the protocol's `act` message,
checked against real messages of a bot process in a real tournament, and answers that decode to what was played."""

from __future__ import annotations

import hashlib
import itertools
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from arena.engine import Card, Keep, Match, Observer, Play, get_ruleset
from arena.engine.actions import keep_legal
from arena.envs import action_space, decode, encode, encode_view, observation_size
from arena.protocol import act_message, parse_action
from arena.replay import read_replay
from arena.replay.verify import Resimulation
from tests.conftest import ROOT
from tests.test_author_loop import _results, run_arena, tournament

DIGEST_BOT = """
import hashlib, random, sys
import numpy as np
from arena.envs import decode, encode
from arena.sdk import run

class Digest:
    def match_start(self, message):
        self.ruleset = message["ruleset"]
        self.rng = random.Random(message["match_id"])

    def act(self, message):
        observation, mask = encode(message, self.ruleset)
        index = self.rng.choice(np.flatnonzero(mask).tolist())
        digest = hashlib.sha256(observation.tobytes() + mask.tobytes()).hexdigest()
        print("turn", message["match_id"], index, digest, file=sys.stderr, flush=True)
        return decode(index, message, self.ruleset)["index"]

run(Digest())
"""


def digest(observation: np.ndarray, mask: np.ndarray) -> str:
    return hashlib.sha256(observation.tobytes() + mask.tobytes()).hexdigest()


def seat_turns(replay: Path, name: str) -> list[tuple[str, object]]:
    """Re-played from the replay: at each of `name`'s turns, encode_view's digest and the answer it gave."""
    lines = read_replay(replay)
    seat = lines[0].data["players"].index(name)
    ruleset = get_ruleset(lines[0].data["ruleset"])
    turns: list[tuple[str, object]] = []
    observer: Observer | None = None
    for number, (_, match) in enumerate(Resimulation(lines).steps()):
        if observer is None:
            observer = Observer(match, seat)
            observer.take_events()  # what match_start told the seat
        following = lines[number + 1].data if number + 1 < len(lines) else {}
        if following.get("type") == "decision" and following["seat"] == seat:
            observation, mask = encode_view(observer.view(), observer.take_events(), ruleset)
            turns.append((digest(observation, mask), parse_action(following["action"])))
    return turns


@pytest.mark.parametrize("players", [2, 3])
def test_a_bot_process_encodes_its_act_messages_as_the_engine_encodes_its_views(tmp_path: Path, players: int) -> None:
    (tmp_path / "digest").mkdir()
    (tmp_path / "digest" / "bot.py").write_text(DIGEST_BOT)
    path = tournament(
        tmp_path,
        """\
        - {name: digest, command: [python3, digest/bot.py]}
        - {name: random, builtin: random}
        - {name: heuristic, builtin: heuristic}
        """,
        players=players,
    )
    ran = run_arena("run", path, "--quiet", "--replay-pages", "0", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    output = tmp_path / "out"
    results = _results(output)
    played = [row["match_id"] for row in results if "digest" in row["seats"]]
    assert played and all(not row["faults"] for row in results)
    space = action_space("2019")
    turns_seen = 0
    for match_id in played:
        said = [line.split() for line in (output / "logs" / "digest" / f"{match_id}.log").read_text().splitlines()]
        said = [(index, sent) for word, match, index, sent in said if word == "turn" and match == match_id]
        expected = seat_turns(output / "replays" / f"{match_id}.jsonl", "digest")
        assert [sent for _, sent in said] == [made for made, _ in expected]
        seat = next(row for row in results if row["match_id"] == match_id)["seats"].index("digest")
        for (index, _), (_, answer) in zip(said, expected, strict=True):
            assert space.index_of(answer, seat, players) == int(index)
        turns_seen += len(said)
    assert turns_seen > 20


def test_every_answer_has_one_index_and_decodes_back_to_itself() -> None:
    for ruleset in ("2019", "classic"):
        space = action_space(ruleset)
        assert len(set(space.keys)) == space.size
        rules = get_ruleset(ruleset)
        for players in range(rules.min_players, rules.max_players + 1):
            match = Match(rules, [f"p{seat}" for seat in range(players)], seed=players)
            rng = random.Random(players)
            while match.result is None:
                if match.decision is None:
                    match.deal_round()
                    continue
                view = match.view(match.decision.seat)
                for action in view.legal:
                    index = space.index_of(action, view.seat, players)
                    assert space.legal(view.legal, view.seat, players).at(index) is action
                match.apply(rng.choice(view.legal))


def test_every_chancellor_choice_of_every_hand_has_an_index_of_its_own() -> None:
    """A keep's index names the card kept and the first put under: with the hand, that is the whole choice."""
    space = action_space("2019")
    cards = get_ruleset("2019").cards
    for size in (2, 3):
        for hand in itertools.combinations_with_replacement(cards, size):
            legal = keep_legal(hand)
            indices = space.indices(legal, seat=0, players=4)
            assert len(set(indices)) == len(legal), hand
            assert [space.legal(legal, 0, 4).at(index) for index in indices] == list(legal)


def test_targets_are_numbered_from_the_actor_so_a_policy_is_the_same_at_every_seat() -> None:
    space = action_space("2019")
    from_seat_0 = space.index_of(Play(Card.GUARD, 1, Card.PRIEST), seat=0, players=4)
    from_seat_3 = space.index_of(Play(Card.GUARD, 0, Card.PRIEST), seat=3, players=4)
    assert from_seat_0 == from_seat_3
    from_seat_2 = Play(Card.GUARD, 3, Card.PRIEST)
    assert (
        space.legal((Play(Card.GUARD, 2, Card.PRIEST), from_seat_2), seat=2, players=4).at(from_seat_0) is from_seat_2
    )
    keep = Keep(Card.SPY, (Card.GUARD, Card.PRINCESS))
    assert space.index_of(keep, seat=1, players=2) == space.index_of(keep, seat=0, players=3)


def test_the_observation_has_one_length_at_every_table_the_seats_a_table_lacks_left_empty() -> None:
    rules = get_ruleset("2019")
    for players in (2, 6):
        match = Match(rules, [f"p{seat}" for seat in range(players)], seed=11)
        match.deal_round()
        seat = match.decision.seat
        view = match.view(seat)
        observation, mask = encode(act_message("m", view, 1000, []), "2019")
        assert observation.shape == (observation_size("2019"),)
        assert mask.sum() == len(view.legal)
        cards = rules.cards
        held = np.zeros(len(cards))
        for card in view.hand:
            held[cards.index(card)] += 1
        assert (observation[: len(cards)] == held).all()
        seated = [observation[2 * len(cards) + 3 + relative * (5 + 2 * len(cards))] for relative in range(6)]
        assert seated == [1.0] * players + [0.0] * (6 - players)


def test_decoding_an_answer_that_is_not_legal_says_so() -> None:
    match = Match(get_ruleset("2019"), ["a", "b"], seed=3)
    match.deal_round()
    view = match.view(match.decision.seat)
    message = act_message("m", view, 1000, [])
    _, mask = encode(message)
    illegal = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(ValueError, match="not among the legal answers"):
        decode(illegal, message)
    legal = int(np.flatnonzero(mask)[0])
    reply = decode(legal, message)
    assert reply["type"] == "action" and parse_action(message["legal"][reply["index"]]) in view.legal


def test_a_policy_bot_needs_numpy_alone_and_the_environments_name_the_extra_they_need() -> None:
    script = """
import sys
sys.modules["pettingzoo"] = sys.modules["gymnasium"] = None  # as where they are not installed
from arena.envs import decode, encode
print("encoding loaded")
try:
    from arena.envs import loveletter_v0
except ModuleNotFoundError as error:
    print(error)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "encoding loaded"
    assert lines[1].endswith('the environments need pip install "loveletter-arena[rl]"'), lines

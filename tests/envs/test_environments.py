"""The training environments against PettingZoo's and Gymnasium's own checks, and what a learner relies on:
the same seed plays the same game, rewards as documented, an illegal answer costs the match, replays verify."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test

from arena.engine import Observer, get_ruleset
from arena.envs import action_space, encode_view, loveletter_v0
from arena.errors import PluginError
from arena.plugins.registry import BotRegistry
from arena.plugins.spec import BotSpec


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(("players", "ruleset"), [(2, "2019"), (4, "2019"), (6, "2019"), (3, "classic")])
def test_the_aec_environment_passes_pettingzoos_api_test(players: int, ruleset: str) -> None:
    api_test(loveletter_v0.env(players=players, ruleset=ruleset), num_cycles=200)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_the_single_agent_environment_passes_gymnasiums_check_env() -> None:
    check_env(loveletter_v0.single_agent(opponents=["heuristic", "random"], seed=3), skip_render_check=False)


def play_aec(seed: int, players: int = 4, **options: object) -> tuple[list[tuple[str, int]], dict[str, float]]:
    """A match of masked random answers, drawn from `seed`: (agent, answer) in order, and each agent's total reward."""
    env = loveletter_v0.env(players=players, **options)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    moves: list[tuple[str, int]] = []
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, _ = env.last()
        totals[agent] += reward
        if termination or truncation:
            env.step(None)
            continue
        answer = int(rng.choice(np.flatnonzero(observation["action_mask"])))
        moves.append((agent, answer))
        env.step(answer)
    return moves, totals


@pytest.mark.parametrize(("players", "ruleset"), [(2, "2019"), (4, "2019"), (6, "2019"), (4, "classic")])
def test_each_agent_observes_what_its_seat_is_told_and_nothing_more(players: int, ruleset: str) -> None:
    """At every turn, the environment's observation is encode_view of the seat's own view and the events the
    engine told it since its previous turn: what the protocol's act message would say. Some answers are illegal,
    so that seats leave the match part-way; some turns are answered unobserved, and other seats are observed in
    between, as a learner may."""
    env = loveletter_v0.env(players=players, ruleset=ruleset)
    space = action_space(ruleset)
    turns = 0
    for seed in range(12):
        env.reset(seed=seed)
        match = env.unwrapped.match
        observers = [Observer(match, seat) for seat in range(players)]
        rng = np.random.default_rng(seed)
        for agent in env.agent_iter():
            if rng.random() < 0.2:
                env.unwrapped.observe(str(rng.choice(env.possible_agents)))
            observer = observers[env.possible_agents.index(agent)]
            if not env.terminations[agent] and rng.random() < 0.1:  # answered without a look
                view = observer.view()
                observer.take_events()
                env.step(space.index_of(view.legal[int(rng.integers(len(view.legal)))], view.seat, players))
                continue
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            expected = encode_view(observer.view(), observer.take_events(), get_ruleset(ruleset))
            assert (observation["observation"] == expected[0]).all() and (
                observation["action_mask"] == expected[1]
            ).all()
            turns += 1
            mask = observation["action_mask"]
            illegal = rng.random() < 0.01
            env.step(int(rng.choice(np.flatnonzero(mask == 0 if illegal else mask))))
    assert turns > 12 * 20
    assert space.size == len(expected[1])


@pytest.mark.parametrize("opponents", [["heuristic"], ["random", "heuristic", "random"]])
def test_the_learner_observes_what_its_seat_is_told_match_after_match(opponents: list[str]) -> None:
    """The single-agent environment keeps one encoder for all its matches: each observation is still encode_view
    of the learner's own view and events, in the 2-player rounds (face-up cards) and at a table of 4."""
    env = loveletter_v0.single_agent(opponents=opponents, seed=5)
    turns = 0
    for _ in range(8):
        observation, info = env.reset()
        observer = Observer(env.match, env.seat)
        over = False
        while not over:
            expected, mask = encode_view(observer.view(), observer.take_events(), get_ruleset("2019"))
            assert observation.dtype == np.uint8 and (observation == expected).all()
            assert (info["action_mask"] == mask).all()
            observation, _, over, _, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
            turns += 1
    assert turns > 8 * 5


def test_the_same_seed_plays_the_same_game_and_another_seed_another() -> None:
    assert play_aec(5) == play_aec(5)
    assert play_aec(5)[0] != play_aec(6)[0]


def test_the_match_reward_is_one_to_each_winner_and_minus_one_to_the_others() -> None:
    for seed in range(5):
        _, totals = play_aec(seed)
        assert sorted(totals.values()) in ([-1.0, -1.0, -1.0, 1.0], [-1.0, -1.0, 1.0, 1.0])


def test_the_round_reward_is_given_at_every_rounds_end() -> None:
    env = loveletter_v0.env(players=3, reward="round")
    env.reset(seed=2)
    rng = np.random.default_rng(2)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, _ = env.last()
        totals[agent] += reward
        env.step(None if termination or truncation else int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    match = env.unwrapped.match
    rounds = [record for record in match.records if type(record).__name__ == "RoundEnded"]
    for seat, agent in enumerate(env.possible_agents):
        won = sum(seat in record.winners for record in rounds)
        assert totals[agent] == won - (len(rounds) - won)


def test_an_illegal_answer_puts_the_agent_out_of_the_match_with_minus_one_and_the_others_play_on() -> None:
    env = loveletter_v0.env(players=3)
    env.reset(seed=4)
    cheat = env.agent_selection
    _, mask = env.observe(cheat).values()
    env.step(int(np.flatnonzero(mask == 0)[0]))
    assert env.agent_selection == cheat  # its last step: told it is out
    _, reward, termination, _, info = env.last()
    assert (reward, termination, info) == (-1.0, True, {"illegal": True})
    env.step(None)
    assert cheat not in env.agents and len(env.agents) == 2
    rng = np.random.default_rng(4)
    for agent in env.agent_iter():
        assert agent != cheat
        observation, reward, termination, truncation, _ = env.last()
        env.step(None if termination or truncation else int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    assert env.unwrapped.match.result is not None


def test_a_saved_match_is_a_replay_the_arena_verifies(tmp_path: Path) -> None:
    env = loveletter_v0.env(players=4, ruleset="classic")
    play = np.random.default_rng(1)
    env.reset(seed=1)
    for _ in env.agent_iter():
        observation, _, termination, truncation, _ = env.last()
        env.step(None if termination or truncation else int(play.choice(np.flatnonzero(observation["action_mask"]))))
    env.unwrapped.save_replay(tmp_path / "match.jsonl")
    verified = subprocess.run(
        [sys.executable, "-m", "arena", "replay", "--verify", str(tmp_path / "match.jsonl")],
        capture_output=True,
        text=True,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    lines = (tmp_path / "match.jsonl").read_text().splitlines()
    lines[2] = (
        lines[2].replace('"seat": 0', '"seat": 1')
        if '"seat": 0' in lines[2]
        else lines[2].replace('"seat": ', '"seat": 9')
    )
    (tmp_path / "tampered.jsonl").write_text("\n".join(lines) + "\n")
    tampered = subprocess.run(
        [sys.executable, "-m", "arena", "replay", "--verify", str(tmp_path / "tampered.jsonl")],
        capture_output=True,
        text=True,
    )
    assert tampered.returncode != 0


def test_the_learner_moves_only_on_its_turns_and_gets_the_match_reward_at_the_end() -> None:
    env = loveletter_v0.single_agent(opponents=["heuristic"], seed=7)
    space = action_space("2019")
    seats, results = set(), []
    for _ in range(6):
        _, info = env.reset()
        seats.add(env.seat)
        over, reward = False, 0.0
        while not over:
            match = env.match
            assert match.decision.seat == env.seat
            legal = np.flatnonzero(info["action_mask"])
            assert sorted(legal) == sorted(space.indices(match.view(env.seat).legal, env.seat, 2))
            _, reward, over, truncated, info = env.step(int(legal[0]))
            assert not truncated
        assert reward == (1.0 if env.seat in match.result.winners else -1.0)
        results.append(reward)
    assert seats == {0, 1}  # the learner's seat is drawn for each match


def test_the_learner_that_answers_illegally_has_lost() -> None:
    env = loveletter_v0.single_agent(opponents=["random", "random"], seed=1)
    _, info = env.reset()
    _, reward, over, _, info = env.step(int(np.flatnonzero(info["action_mask"] == 0)[0]))
    assert (reward, over, info["illegal"]) == (-1.0, True, True)


@pytest.mark.parametrize("action", [-1, 187, 10**6])
def test_an_action_outside_the_space_is_refused_by_both_environments_and_costs_nothing(action: int) -> None:
    """Not an answer at all, but a learner's bug: a ValueError, and the match goes on as if it was not made."""
    aec = loveletter_v0.env(players=2)
    aec.reset(seed=1)
    agent = aec.agent_selection
    with pytest.raises(ValueError, match=f"action {action} is outside the action space \\(0 to 186\\)"):
        aec.step(action)
    assert aec.agent_selection == agent and not aec.terminations[agent]
    assert aec.unwrapped.match.disqualified == ()
    single = loveletter_v0.single_agent(opponents=["random"], seed=1)
    single.reset()
    with pytest.raises(ValueError, match="outside the action space"):
        single.step(action)
    assert single.match.disqualified == ()


def test_an_action_outside_the_space_keeps_the_reward_the_agent_is_owed() -> None:
    env = loveletter_v0.env(players=3, reward="round")
    env.reset(seed=2)
    rng = np.random.default_rng(2)
    for _ in env.agent_iter():
        observation, owed, termination, truncation, _ = env.last()
        assert not (termination or truncation)
        if owed:
            break
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    assert owed in (1.0, -1.0)
    with pytest.raises(ValueError, match="outside the action space"):
        env.step(500)
    assert env.last()[1] == owed


def test_render_shows_the_table_and_only_the_hand_of_the_player_to_move() -> None:
    env = loveletter_v0.env(players=2, render_mode="ansi")
    env.reset(seed=3)
    text = env.render()
    match = env.unwrapped.match
    mover = match.decision.seat
    assert f"{match.players[mover]} to play, holding" in text
    assert text.count("holding") == 1


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"players": 7}, "for 2 to 6 players"),
        ({"players": 5, "ruleset": "classic"}, "for 2 to 4 players"),
        ({"reward": "turn"}, "reward is 'match' or 'round'"),
        ({"render_mode": "human"}, "render_mode is None or 'ansi'"),
    ],
)
def test_bad_options_are_refused_with_a_reason(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        loveletter_v0.env(**options)


def test_an_opponent_not_installed_is_refused_with_the_names_there_are() -> None:
    with pytest.raises(PluginError, match=r"no bot named 'nonesuch' is installed \(installed: .*heuristic"):
        loveletter_v0.single_agent(opponents=["nonesuch"])


def test_an_opponent_that_plays_only_as_a_subprocess_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = BotRegistry()
    registry.registrar("some-bots", "1.0").add(BotSpec("java-only", "a JVM bot", ("java", "Bot"), Path(".")))
    monkeypatch.setattr(loveletter_v0, "load_registry", lambda: registry)
    with pytest.raises(ValueError, match="bot 'java-only' plays only as a subprocess"):
        loveletter_v0.single_agent(opponents=["java-only"])

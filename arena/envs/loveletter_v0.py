"""Love Letter as a PettingZoo AEC environment, and as a Gymnasium environment for one learner against built-in
bots. The engine plays the rules; each agent observes exactly its seat's view (arena.envs.encoding).

    from arena.envs import loveletter_v0
    env = loveletter_v0.env(players=4)
    env.reset(seed=1)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        mask = observation["action_mask"]
        env.step(None if termination or truncation else int(np.flatnonzero(mask)[0]))

An answer that is not legal is what it is in a tournament: the seat's fault, and it is out of the match.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers import OrderEnforcingWrapper
from pettingzoo.utils.wrappers.order_enforcing import AECOrderEnforcingIterable, AECOrderEnforcingIterator

from arena.engine import (
    Card,
    EventFeed,
    FaultReason,
    Match,
    Observer,
    Phase,
    Play,
    Played,
    RoundEnded,
    get_ruleset,
)
from arena.envs.encoding import (
    SHOWING,
    Table,
    ViewEncoder,
    action_space,
    layout,
    observation_high,
    observation_size,
    seen_in,
)
from arena.players import MatchInfo, Player
from arena.plugins import load_registry
from arena.replay import write_replay

REWARDS = ("match", "round")


def env(**options: Any) -> AECEnv:
    """The AEC environment, with PettingZoo's usual check of the order of calls around it."""
    return OrderEnforcing(raw_env(**options))


class OrderEnforcing(OrderEnforcingWrapper):
    """PettingZoo's order checks, without its cost at every step: last(), step() and the attributes agent_iter
    reads at each turn go straight to the environment once it has been reset (through the wrapper's __getattr__
    they took a third of a step's time). It and NextTurn keep the checks of PettingZoo's own classes (1.24 to 1.27),
    the private _has_reset and _has_updated included; api_test runs them (tests/envs/test_environments.py)."""

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self.env.last(observe)

    def step(self, action: Any) -> None:
        if self._has_reset and self.env.agents:
            self._has_updated = True
            self.env.step(action)
        else:
            super().step(action)  # its error or warning

    def agent_iter(self, max_iter: int = 2**63) -> AECOrderEnforcingIterable:
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return TurnsInOrder(self, max_iter)

    @property
    def agents(self) -> list[str]:
        if not self._has_reset:
            raise AttributeError("agents cannot be accessed before reset")
        return self.env.agents

    @property
    def agent_selection(self) -> str:
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        return self.env.agent_selection


class TurnsInOrder(AECOrderEnforcingIterable):
    def __iter__(self) -> AECOrderEnforcingIterator:
        return NextTurn(self.env, self.max_iter)


class NextTurn(AECOrderEnforcingIterator):
    """PettingZoo's iterator and its check that each turn was stepped, reading the environment directly."""

    def __next__(self) -> str:
        wrapper = self.env
        env = wrapper.env
        if not env.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        assert wrapper._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        wrapper._has_updated = False
        return env.agent_selection


class OneMatch:
    """What both environments do with the match being played: show it, and write it as a replay."""

    match: Match | None
    match_id: str
    render_mode: str | None

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.match is None:
            return None
        return table_text(self.match)

    def save_replay(self, path: str | Path) -> None:
        """The match played so far as a replay of the arena's format (arena replay FILE, --verify, --html)."""
        assert self.match is not None
        write_replay(Path(path), self.match, self.match_id)


class raw_env(OneMatch, AECEnv):
    """players: 2 to 6 (classic: 2 to 4); reward: "match" (+1 to the match's winners, -1 to the others, at its end)
    or "round" (the same at every round's end); seed: the first match's, unless reset gives one."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "name": "loveletter_v0", "is_parallelizable": False}

    def __init__(
        self,
        players: int = 2,
        ruleset: str = "2019",
        seed: int | None = None,
        render_mode: str | None = None,
        reward: str = "match",
    ) -> None:
        super().__init__()
        self.ruleset = get_ruleset(ruleset)
        if not self.ruleset.min_players <= players <= self.ruleset.max_players:
            raise ValueError(
                f"the {ruleset} ruleset is for {self.ruleset.min_players} to {self.ruleset.max_players} players"
            )
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode is None or 'ansi', not {render_mode!r}")
        if reward not in REWARDS:
            raise ValueError(f"reward is 'match' or 'round', not {reward!r}")
        self.players = players
        self.render_mode = render_mode
        self.reward = reward
        self.possible_agents = [f"player_{seat}" for seat in range(players)]
        self._seat = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        self._space = action_space(self.ruleset.name)
        size = observation_size(self.ruleset.name)
        observation = spaces.Dict(
            {
                "observation": spaces.Box(low=0, high=observation_high(self.ruleset), shape=(size,), dtype=np.uint8),
                "action_mask": spaces.Box(low=0, high=1, shape=(self._space.size,), dtype=np.int8),
            }
        )
        self.observation_spaces = dict.fromkeys(self.possible_agents, observation)
        self.action_spaces = {agent: spaces.Discrete(self._space.size) for agent in self.possible_agents}
        self._seeds = random.Random(seed)
        self._next_seed = seed
        self._layout = layout(self.ruleset.name)
        self.match: Match | None = None
        self.match_id = ""

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._seeds = random.Random(seed)
            self._next_seed = seed
        match_seed = self._next_seed if self._next_seed is not None else self._seeds.randrange(2**62)
        self._next_seed = None
        self.match = Match(self.ruleset, list(self.possible_agents), match_seed)
        self.match_id = f"env-{match_seed}"
        self._table = Table(self._layout, self.players)
        self._answers = self._space.legal((), 0, self.players)
        self._shown: list[dict[int, Card]] = [{} for _ in range(self.players)]
        """Per seat, the cards it was privately shown since its last turn, by the seat holding each."""
        self._rounds_seen = 0
        self._rewarded = True
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self._advance()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        match = self.match
        assert match is not None
        seat = self._seat[agent]
        decision = match.decision
        mine = decision if decision is not None and decision.seat == seat else None
        observation = self._table.encode(  # the fields of the seat's View, without the cost of making one
            seat,
            match.hand(seat),
            None if mine is None else mine.kind,
            match.deck_size,
            match.removed_face_up,
            match.public_seats(),
        )
        answers = self._space.legal(() if mine is None else mine.legal, seat, self.players)
        if mine is not None:
            self._answers = answers  # for the step that answers it
        return {"observation": observation, "action_mask": answers.mask.copy()}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        match = self.match
        assert match is not None
        decision = match.decision
        assert decision is not None
        seat = decision.seat
        answers = self._answers
        if answers.legal is not decision.legal or answers.seat != seat:  # the turn was not observed
            answers = self._space.legal(decision.legal, seat, self.players)
        chosen = None if action is None else answers.at(int(action))  # before any change: it may raise
        self._cumulative_rewards[agent] = 0.0  # last() has given the agent what it was owed
        if self._rewarded:
            self._clear_rewards()
        if self._shown[seat]:  # what it was shown is in the observation it answered
            self._shown[seat] = {}
            self._table.write_seen(seat, {})
        if chosen is not None:
            match.apply(chosen)
            if type(chosen) is Play and chosen.card in SHOWING:  # the only answers that show a seat a card
                self._note_sights()
        else:  # as in a tournament: the seat is out of the match, and has lost it
            match.disqualify(seat, FaultReason.ILLEGAL, f"action {action} is not among the legal answers")
            self.infos[agent] = {"illegal": True}
            self.rewards[agent] = -1.0
            self.terminations[agent] = True
        self._rewarded = self._advance() or chosen is None
        # Most steps end no round and no match: no reward to add, no agent to retire.
        if self._rewarded:
            self._accumulate_rewards()
            self._deads_step_first()

    def _note_sights(self) -> None:
        """Give each seat what the play just made privately showed it: a Priest's card, a Baron's compared."""
        assert self.match is not None
        record = next(record for record in reversed(self.match.records) if type(record) is Played)
        compared = dict(record.compared)
        play = (record.seat, record.card, record.target, record.seen, compared)
        for seat in compared or (record.seat,):
            self._shown[seat].update(seen_in(seat, (play,)))
            self._table.write_seen(seat, self._shown[seat])

    def _advance(self) -> bool:
        """Deal until a decision is due or the match is over; give the rewards of the rounds and match that
        ended. True when it gave a reward or ended the match."""
        match = self.match
        assert match is not None
        decision = match.decision
        if decision is None:  # the round or the match is over
            while match.phase is Phase.DEAL:
                match.deal_round()
            decision = match.decision
        given = False
        if self.reward == "round":
            for record in match.records[self._rounds_seen :]:
                if isinstance(record, RoundEnded):
                    self._award(record.winners)
                    given = True
            self._rounds_seen = len(match.records)
        if decision is not None:
            self.agent_selection = self.possible_agents[decision.seat]
            return given
        result = match.result  # dealt until a decision is due: with none due, the match is over
        assert result is not None
        if self.reward == "match":
            self._award(result.winners)
        self.terminations = dict.fromkeys(self.agents, True)
        return True

    def _award(self, winners: Collection[int]) -> None:
        """+1 to each winner still playing, -1 to the others."""
        for agent in self.agents:
            if not self.terminations[agent]:
                self.rewards[agent] += 1.0 if self._seat[agent] in winners else -1.0

    def close(self) -> None:
        pass


def table_text(match: Match) -> str:
    """The table as a text, the player to move's hand in it (nothing of the others' hands)."""
    lines = [f"round {match.round}, {match.view(0).deck} cards in the deck"]
    seat = match.decision.seat if match.decision is not None else None
    for player in match.view(0).players:
        state = "out of the match" if player.disqualified else "in" if player.in_round else "out of the round"
        shield = ", protected" if player.protected else ""
        discards = " ".join(card.label for card in player.discards) or "-"
        lines.append(f"  {player.name}: {player.tokens} tokens, {state}{shield}; discards: {discards}")
    if seat is not None:
        hand = " ".join(card.label for card in match.view(seat).hand)
        lines.append(f"{match.players[seat]} to play, holding {hand}")
    return "\n".join(lines)


class SingleAgentEnv(OneMatch, gymnasium.Env):
    """One learner against built-in bots, as a Gymnasium environment: the observation is the learner's vector,
    the legal answers are in info["action_mask"], and the opponents move in between its turns."""

    metadata = {"render_modes": ["ansi"]}  # noqa: RUF012  (gymnasium.Env declares it an instance variable)

    def __init__(
        self,
        opponents: Sequence[str] = ("random",),
        seed: int | None = None,
        ruleset: str = "2019",
        seat: int | None = None,
        reward: str = "match",
        render_mode: str | None = None,
        move_ms: int = 1000,
    ) -> None:
        registry = load_registry()
        self._makers = []
        for name in opponents:
            make = registry.lookup(name).spec.player
            if make is None:
                raise ValueError(f"bot {name!r} plays only as a subprocess: it cannot be an in-process opponent")
            self._makers.append(make)
        self.ruleset = get_ruleset(ruleset)
        self.players = 1 + len(opponents)
        if not self.ruleset.min_players <= self.players <= self.ruleset.max_players:
            raise ValueError(
                f"{len(opponents)} opponents: the {ruleset} ruleset is for 1 to {self.ruleset.max_players - 1}"
            )
        if seat is not None and not 0 <= seat < self.players:
            raise ValueError(f"seat {seat} is not at a table of {self.players}")
        if reward not in REWARDS:
            raise ValueError(f"reward is 'match' or 'round', not {reward!r}")
        self.names = ["learner", *opponents]
        self.fixed_seat = seat
        self.reward = reward
        self.render_mode = render_mode
        self.move_ms = move_ms
        self._space = action_space(self.ruleset.name)
        self.observation_space = spaces.Box(
            low=0, high=observation_high(self.ruleset), shape=(observation_size(self.ruleset.name),), dtype=np.uint8
        )
        self.action_space = spaces.Discrete(self._space.size)
        self._encoder = ViewEncoder(self.ruleset)
        self._first_seed = seed
        self.match: Match | None = None
        self.seat = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed if seed is not None else self._first_seed)
        self._first_seed = None
        rng = self.np_random
        self.seat = self.fixed_seat if self.fixed_seat is not None else int(rng.integers(self.players))
        names = list(self.names[1:])
        names.insert(self.seat, "learner")
        match_seed = int(rng.integers(2**62))
        self.match = Match(self.ruleset, names, match_seed)
        self.match_id = f"env-{match_seed}"
        feed = EventFeed(self.match)
        self._observers = [Observer(self.match, seat, feed) for seat in range(self.players)]
        makers = iter(self._makers)
        self._opponents: dict[int, Player] = {}
        for seat in range(self.players):
            if seat == self.seat:
                continue
            player = next(makers)(self.move_ms)
            info = MatchInfo(self.match_id, self.ruleset.name, seat, tuple(names), self.match.target)
            player.start_match(info, self._observers[seat])
            self._opponents[seat] = player
        self._rounds_seen = 0
        reward = self._play_opponents()
        observation, mask = self._observe()
        return observation, {"action_mask": mask, "reward_before_first_turn": reward}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        match = self.match
        assert match is not None and match.decision is not None and match.decision.seat == self.seat
        chosen = self._space.legal(match.decision.legal, self.seat, self.players).at(int(action))
        info: dict[str, Any] = {}
        if chosen is not None:
            match.apply(chosen)
        else:
            match.disqualify(self.seat, FaultReason.ILLEGAL, f"action {action} is not among the legal answers")
            info["illegal"] = True
        reward = self._play_opponents()
        observation, mask = self._observe()
        info["action_mask"] = mask
        return observation, reward, match.phase is Phase.OVER or self.seat in match.disqualified, False, info

    def _play_opponents(self) -> float:
        """Deal and let the opponents move until the learner is to move or the match is over; its reward."""
        match = self.match
        assert match is not None
        reward = 0.0
        while True:
            while match.phase is Phase.DEAL:
                match.deal_round()
            reward += self._rewards()
            if match.phase is Phase.OVER or self.seat in match.disqualified:
                if match.phase is Phase.OVER:
                    for seat, player in self._opponents.items():
                        assert match.result is not None
                        player.end_match(match.result, self._observers[seat])
                return reward
            decision = match.decision
            assert decision is not None
            if decision.seat == self.seat:
                return reward
            match.apply(self._opponents[decision.seat].act(decision, self._observers[decision.seat]))

    def _rewards(self) -> float:
        match = self.match
        assert match is not None
        found = 0.0
        if self.reward == "round":
            for record in match.records[self._rounds_seen :]:
                if isinstance(record, RoundEnded):
                    found += 1.0 if self.seat in record.winners else -1.0
        self._rounds_seen = len(match.records)
        if self.reward == "match" and match.phase is Phase.OVER and match.result is not None:
            found += 1.0 if self.seat in match.result.winners else -1.0
        elif self.reward == "match" and self.seat in match.disqualified and match.phase is not Phase.OVER:
            found -= 1.0  # out of the match: it cannot win it
        return found

    def _observe(self) -> tuple[np.ndarray, np.ndarray]:
        assert self.match is not None
        observer = self._observers[self.seat]
        return self._encoder.encode(observer.view(), observer.take_events())


def single_agent(**options: Any) -> SingleAgentEnv:
    """One learner against built-in bots: opponents=["heuristic", "random", ...], seed, ruleset, seat (default: a
    seat drawn for each match), reward ("match" or "round"), render_mode (None or "ansi")."""
    return SingleAgentEnv(**options)

"""Players: what answers the decisions of a seat."""

from arena.players.base import MatchInfo, Player
from arena.players.random_player import RandomPlayer

__all__ = ["MatchInfo", "Player", "RandomPlayer"]

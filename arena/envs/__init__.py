"""Training environments of the engine (PettingZoo, Gymnasium) and the encoding a trained policy plays by.

Needs the rl extra: pip install "loveletter-arena[rl]".
"""

from arena.envs import loveletter_v0
from arena.envs.encoding import ActionSpace, action_space, decode, encode, encode_view, observation_size

__all__ = ["ActionSpace", "action_space", "decode", "encode", "encode_view", "loveletter_v0", "observation_size"]

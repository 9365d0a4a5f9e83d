"""Training environments of the engine (PettingZoo, Gymnasium) and the encoding a trained policy plays by.

Needs the rl extra: pip install "loveletter-arena[rl]". The encoding needs numpy alone, so that a bot that
only plays a trained policy needs neither PettingZoo nor Gymnasium: the environments load when first asked for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

try:
    from arena.envs.encoding import ActionSpace, action_space, decode, encode, encode_view, observation_size
except ModuleNotFoundError as error:  # numpy
    raise ModuleNotFoundError(f'{error}: arena.envs needs pip install "loveletter-arena[rl]"') from error

if TYPE_CHECKING:
    from arena.envs import loveletter_v0

__all__ = ["ActionSpace", "action_space", "decode", "encode", "encode_view", "loveletter_v0", "observation_size"]


def __getattr__(name: str) -> Any:
    if name == "loveletter_v0":
        try:
            return importlib.import_module("arena.envs.loveletter_v0")
        except ModuleNotFoundError as error:  # pettingzoo, gymnasium
            raise ModuleNotFoundError(f'{error}: the environments need pip install "loveletter-arena[rl]"') from error
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

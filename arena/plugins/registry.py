"""Every known bot by name, each with the distribution that registered it.

A plugin's hook gets a registrar bound to its own distribution, so a bot is always attributed to the
package it came from and a name taken twice is an error that names both packages, never a silent
override that depends on the order of sys.path.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from arena.errors import PluginError
from arena.players.values import Transport
from arena.plugins.spec import BotSpec, RegisteredBot

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
"""A bot's name: what configuration files and the command line use, so no spaces and no slashes."""
PROTOCOLS = tuple(transport.value for transport in Transport)


class BotRegistry(Mapping[str, RegisteredBot]):
    """Registered bots in the order they were added; read-only as a mapping, filled through registrars."""

    def __init__(self) -> None:
        self._bots: dict[str, RegisteredBot] = {}

    def registrar(self, distribution: str, version: str) -> Registrar:
        """What a plugin's `arena_register_bots` hook receives: adds bots in the name of `distribution`."""
        return Registrar(self, distribution, version)

    def lookup(self, name: str) -> RegisteredBot:
        """The bot called `name`, or a PluginError that lists the names there are."""
        try:
            return self._bots[name]
        except KeyError:
            known = ", ".join(sorted(self._bots)) or "none"
            raise PluginError(f"no bot named {name!r} is installed (installed: {known})") from None

    def _add(self, bot: RegisteredBot) -> None:
        name = bot.spec.name
        previous = self._bots.get(name)
        if previous is not None:
            if previous.distribution == bot.distribution:
                raise PluginError(f"bot name {name!r} is registered twice by {_who(bot)}")
            raise PluginError(f"bot name {name!r} is registered by both {_who(previous)} and {_who(bot)}")
        self._bots[name] = bot

    def __getitem__(self, name: str) -> RegisteredBot:
        return self._bots[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._bots)

    def __len__(self) -> int:
        return len(self._bots)

    def __repr__(self) -> str:
        return f"BotRegistry({list(self._bots)})"


class Registrar:
    """A registry seen from one distribution: `add` checks the spec and records who registered it."""

    def __init__(self, registry: BotRegistry, distribution: str, version: str) -> None:
        self._registry = registry
        self.distribution = distribution
        self.version = version

    def add(self, spec: BotSpec) -> None:
        who = f"{self.distribution} {self.version}".strip()
        if not isinstance(spec, BotSpec):
            raise PluginError(f"{who}: registry.add() takes a BotSpec, not {type(spec).__name__}")
        problem = _problem(spec)
        if problem:
            raise PluginError(f"{who}: bot {spec.name!r}: {problem}")
        self._registry._add(RegisteredBot(spec, self.distribution, self.version))


def _problem(spec: BotSpec) -> str | None:
    """What is wrong with a spec that the arena could not list or start, if anything."""
    if not isinstance(spec.name, str) or not NAME.match(spec.name):
        return "a name is letters, digits, '.', '_' and '-', starting with a letter or digit"
    if spec.protocol not in PROTOCOLS:
        return f"protocol must be zmq or stdio, not {spec.protocol!r}"
    if not spec.command or not all(isinstance(part, str) for part in spec.command):
        return "command must be a non-empty tuple of strings"
    if spec.player is not None and not callable(spec.player):
        return "player must be a callable that makes a Player"
    return None


def _who(bot: RegisteredBot) -> str:
    return f"{bot.distribution} {bot.version}".strip()

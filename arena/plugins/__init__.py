"""Bots from plugins: pluggy hooks, entry-point discovery, and the registry of every known bot."""

from arena.plugins.hookspecs import BotRegistrar, hookimpl
from arena.plugins.manager import GROUP, load_registry
from arena.plugins.registry import BotRegistry
from arena.plugins.spec import BotOption, BotSpec, RegisteredBot

__all__ = ["GROUP", "BotOption", "BotRegistrar", "BotRegistry", "BotSpec", "RegisteredBot", "hookimpl", "load_registry"]

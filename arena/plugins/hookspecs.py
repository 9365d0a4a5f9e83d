"""The hooks a plugin may implement. Built-in bots are registered through them like any other plugin's."""

from __future__ import annotations

from typing import Protocol

import pluggy

from arena.plugins.spec import BotSpec

PROJECT = "arena"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class BotRegistrar(Protocol):
    def add(self, spec: BotSpec) -> None: ...


@hookspec
def arena_register_bots(registry: BotRegistrar) -> None:
    """Add this plugin's bots to the registry with `registry.add(BotSpec(...))`."""

"""Finding the installed bot plugins and asking each for its bots.

Every distribution that declares an entry point in the group `loveletter_arena` is a plugin:

    [project.entry-points.loveletter_arena]
    my-bots = "my_bots.plugin"      # a module (or object) with an `arena_register_bots` hookimpl

The built-in bots come the same way, from this project's own pyproject.toml (`builtin = "arena.bots.plugin"`).
pluggy loads the entry points (`PluginManager.load_setuptools_entrypoints`); around it this module
makes every failure name the distribution at fault, which pluggy alone does not:

- two distributions declaring the same entry-point name: an error naming both (pluggy would load the
  first one on sys.path and silently skip the other); the same distribution found twice on sys.path
  (e.g. an egg-info in the current directory beside the installed copy) is one distribution;
- a plugin that fails to import, or implements a hook that does not exist: an error naming the
  distribution, its version, the entry point and the original error;
- a hook that raises: the hook is called plugin by plugin, so the error names the distribution;
- a bot name registered twice: an error naming both distributions (see `arena.plugins.registry`).

Set the environment variable ARENA_DISABLE_PLUGINS=1 to load only the built-in bots (those of
loveletter-arena): the way out when a broken third-party package stops the arena from starting.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
from dataclasses import dataclass

import pluggy

from arena.errors import PluginError
from arena.plugins import hookspecs
from arena.plugins.hookspecs import PROJECT
from arena.plugins.registry import BotRegistry

GROUP = "loveletter_arena"
"""The entry-point group a bot package declares its plugin in."""
OWN_DISTRIBUTION = "loveletter-arena"
"""This project's distribution: its plugins stay loaded when third-party plugins are disabled."""
DISABLE_VARIABLE = "ARENA_DISABLE_PLUGINS"


@dataclass(frozen=True, slots=True)
class Found:
    """One entry point of the group, with the distribution that declares it."""

    name: str
    value: str
    distribution: str
    version: str

    @property
    def own(self) -> bool:
        return _normalize(self.distribution) == _normalize(OWN_DISTRIBUTION)

    def describe(self) -> str:
        return f"{self.distribution} {self.version} (entry point {self.name} = {self.value})"


def plugins_disabled() -> bool:
    """Is ARENA_DISABLE_PLUGINS set (to anything but empty or 0)?"""
    return os.environ.get(DISABLE_VARIABLE, "").strip() not in ("", "0")


def find_entry_points() -> list[Found]:
    """The group's entry points in the order pluggy loads them: that of `importlib.metadata.distributions()`."""
    found = []
    for dist in importlib.metadata.distributions():
        entries = [entry for entry in dist.entry_points if entry.group == GROUP]
        if entries:  # a distribution's metadata is parsed only then: most installed ones have no bots
            name = dist.metadata["Name"] or "?"
            found += [Found(entry.name, entry.value, name, dist.version or "?") for entry in entries]
    return found


def load_plugins(*, third_party: bool | None = None) -> pluggy.PluginManager:
    """A plugin manager with every plugin of the group loaded (only this project's when `third_party` is
    false; by default unless ARENA_DISABLE_PLUGINS is set)."""
    if third_party is None:
        third_party = not plugins_disabled()
    found = find_entry_points()
    own_names = {entry.name for entry in found if entry.own}
    # Disabled plugins are blocked by entry-point name, which is all pluggy knows; one that takes a name of
    # this project's would be blocked with it, so a clash is checked for even then.
    _check_unique([entry for entry in found if third_party or entry.name in own_names])
    manager = pluggy.PluginManager(PROJECT)
    manager.add_hookspecs(hookspecs)
    if not third_party:
        for name in {entry.name for entry in found if not entry.own}:
            manager.set_blocked(name)
    try:
        manager.load_setuptools_entrypoints(GROUP)
    except Exception as error:
        entry = _failed_entry(manager, found)
        where = entry.describe() if entry else f"a plugin in entry-point group {GROUP}"
        raise PluginError(f"plugin {where} failed to load: {_describe_error(error)}") from error
    try:
        manager.check_pending()  # a hookimpl of no known hook is a typo that would silently register nothing
    except pluggy.PluginValidationError as error:
        raise PluginError(f"plugin {_describe_plugin(manager, error.plugin)}: {error}") from error
    return manager


def collect_bots(manager: pluggy.PluginManager) -> BotRegistry:
    """Ask each plugin in turn, this project's first, for its bots: a plugin's failure names its distribution."""
    registry = BotRegistry()
    plugins = [(plugin, dist.project_name, dist.version) for plugin, dist in manager.list_plugin_distinfo()]
    plugins.sort(key=lambda item: (_normalize(item[1]) != _normalize(OWN_DISTRIBUTION), _normalize(item[1])))
    everyone = manager.get_plugins()
    for plugin, distribution, version in plugins:
        hook = manager.subset_hook_caller("arena_register_bots", remove_plugins=everyone - {plugin})
        try:
            hook(registry=registry.registrar(distribution, version))
        except PluginError:
            raise  # already says which distribution
        except Exception as error:
            raise PluginError(
                f"plugin {_describe_plugin(manager, plugin)} failed in arena_register_bots: {_describe_error(error)}"
            ) from error
    return registry


_cache: dict[bool, BotRegistry] = {}


def load_registry(*, fresh: bool = False, third_party: bool | None = None) -> BotRegistry:
    """Every installed bot. Loaded once per process (plugins are imported then); `fresh` loads again."""
    if third_party is None:
        third_party = not plugins_disabled()
    if fresh or third_party not in _cache:
        _cache[third_party] = collect_bots(load_plugins(third_party=third_party))
    return _cache[third_party]


def _check_unique(found: list[Found]) -> None:
    """pluggy keys plugins by entry-point name and skips a second one of the same name: refuse it instead."""
    first: dict[str, Found] = {}
    for entry in found:
        seen = first.setdefault(entry.name, entry)
        if _normalize(seen.distribution) != _normalize(entry.distribution):
            raise PluginError(
                f"entry point {entry.name!r} in group {GROUP} is declared by both"
                f" {seen.distribution} {seen.version} and {entry.distribution} {entry.version}:"
                " uninstall one, or rename its entry point"
            )


def _failed_entry(manager: pluggy.PluginManager, found: list[Found]) -> Found | None:
    """The entry point pluggy was loading when it raised: the first, in its own order, not yet registered."""
    for entry in found:
        if not manager.has_plugin(entry.name) and not manager.is_blocked(entry.name):
            return entry
    return None


def _describe_plugin(manager: pluggy.PluginManager, plugin: object) -> str:
    for loaded, dist in manager.list_plugin_distinfo():
        if loaded is plugin:
            return f"{dist.project_name} {dist.version} (entry point {manager.get_name(plugin)})"
    return repr(manager.get_name(plugin) or plugin)


def _describe_error(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def _normalize(name: str) -> str:
    """A distribution's name as packaging compares it (PEP 503): My_Bots and my-bots are one."""
    return re.sub(r"[-_.]+", "-", name).lower()

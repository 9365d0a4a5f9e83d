"""A tournament's configuration: the values (arena.config.values) and reading them from a YAML file
(arena.config.loader, imported only when a file is read: it brings YAML and pydantic)."""

from __future__ import annotations

from pathlib import Path

from arena.config.values import (
    NAME_MAX,
    BotEntry,
    ExecutorConfig,
    ExecutorType,
    Format,
    GauntletConfig,
    SprtConfig,
    TournamentConfig,
    bot_directory,
    config_hash,
    seed_warning,
)


def load_config(path: Path | str) -> TournamentConfig:
    """Read, check and resolve a tournament file; ConfigError listing every problem found."""
    from arena.config.loader import load_config as load

    return load(path)


__all__ = [
    "NAME_MAX",
    "BotEntry",
    "ExecutorConfig",
    "ExecutorType",
    "Format",
    "GauntletConfig",
    "SprtConfig",
    "TournamentConfig",
    "bot_directory",
    "config_hash",
    "load_config",
    "seed_warning",
]

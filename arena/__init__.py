"""loveletter-arena: a tournament harness in which bots play Love Letter."""

from __future__ import annotations

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    """`__version__`, looked up when first asked for: every Python bot imports `arena.sdk`, and
    importlib.metadata alone took a third of a bot's start-up."""
    if name != "__version__":
        raise AttributeError(f"module 'arena' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("loveletter-arena")
    except PackageNotFoundError:  # running from a source tree that is not installed
        found = "0+unknown"
    globals()["__version__"] = found
    return found

"""loveletter-arena: a tournament harness in which bots play Love Letter."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("loveletter-arena")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = ["__version__"]

"""The built-in bots, installed as `arena.bots` (this folder, mapped by pyproject.toml's package-dir). Each is
registered through the `loveletter_arena` entry point group by `arena.bots.plugin`, exactly as a third-party package
registers its own, and each runs in-process or as a sandboxed subprocess (`python -m arena.bots.<module>`) speaking
PROTOCOL.md."""

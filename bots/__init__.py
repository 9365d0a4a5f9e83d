"""The built-in bots. Each is registered through the `loveletter_arena` entry point group by
`bots.plugin`, exactly as a third-party package registers its own, and each runs in-process or as a
sandboxed subprocess (`python -m bots.<module>`) speaking PROTOCOL.md."""

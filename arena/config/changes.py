"""What changed between the configuration whose results an output folder holds and the file given now, in the
words of the file: a folder refuses another configuration, and the user needs to know which lines to look at."""

from __future__ import annotations

from typing import Any

import yaml

UNHASHED = frozenset({"concurrency", "output", "executor", "bot_uids"})
"""Keys that do not decide the results (and the file's own `x-` keys, anchors for the rest)."""
UNHASHED_WITHIN = frozenset({("limits", "memory_mechanism")})
"""Keys within a section that do not either (how memory_mb is held)."""
SHOWN = 40
"""Characters of a value shown at most."""


def changed_fields(stored_text: str, current_text: str) -> list[str]:
    """Each field that differs, as `field: old → new` (`bots: alice added, bob changed`); empty when the two
    texts cannot be read or differ in nothing this can name (a bot's files, a path moved)."""
    try:
        stored, current = yaml.safe_load(stored_text), yaml.safe_load(current_text)
    except yaml.YAMLError:
        return []
    if not isinstance(stored, dict) or not isinstance(current, dict):
        return []
    found: list[str] = []
    for key in sorted(set(stored) | set(current), key=str):
        if key in UNHASHED or str(key).startswith("x-") or stored.get(key) == current.get(key):
            continue
        old, new = stored.get(key), current.get(key)
        if key == "bots" and isinstance(old, list) and isinstance(new, list):
            found.append(f"bots: {_bots(old, new)}")
        elif isinstance(old, dict) and isinstance(new, dict):
            found += [
                f"{key}.{inner}: {_shown(old.get(inner))} → {_shown(new.get(inner))}"
                for inner in sorted(set(old) | set(new), key=str)
                if old.get(inner) != new.get(inner) and (key, inner) not in UNHASHED_WITHIN
            ]
        else:
            found.append(f"{key}: {_shown(old)} → {_shown(new)}")
    return found


def _bots(old: list[Any], new: list[Any]) -> str:
    before, after = _by_name(old), _by_name(new)
    parts = [f"{name} added" for name in after if name not in before]
    parts += [f"{name} removed" for name in before if name not in after]
    parts += [
        f"{name} changed ({_fields(before[name], after[name])})"
        for name in after
        if name in before and before[name] != after[name]
    ]
    if not parts:
        parts = ["their order changed"]
    return ", ".join(parts)


def _fields(old: dict[str, Any], new: dict[str, Any]) -> str:
    keys = [key for key in sorted(set(old) | set(new), key=str) if old.get(key) != new.get(key)]
    return ", ".join(f"{key}: {_shown(old.get(key))} → {_shown(new.get(key))}" for key in keys)


def _by_name(bots: list[Any]) -> dict[str, Any]:
    return {str(bot.get("name")): bot for bot in bots if isinstance(bot, dict)}


def _shown(value: object) -> str:
    if value is None:
        return "(none)"
    text = value if isinstance(value, str) else yaml.safe_dump(value, default_flow_style=True, width=1 << 16)
    text = text.strip().removesuffix("...").strip()  # a scalar's dump ends its document
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"

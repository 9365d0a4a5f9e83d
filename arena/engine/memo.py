"""A small cache keyed by object identity, for values derived from immutable objects that recur."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class IdentityMemo(Generic[K, V]):
    """`memo(obj)` is `derive(obj)`, computed once per object while the object lives in the cache.

    Keys are held (so an id is never reused for another object while cached); the cache empties
    itself past `size` entries, which bounds memory without bookkeeping.
    """

    def __init__(self, derive: Callable[[K], V], size: int = 8192) -> None:
        self._derive = derive
        self._size = size
        self._entries: dict[int, tuple[K, V]] = {}

    def __call__(self, key: K) -> V:
        entry = self._entries.get(id(key))
        if entry is not None and entry[0] is key:
            return entry[1]
        if len(self._entries) >= self._size:
            self._entries.clear()
        value = self._derive(key)
        self._entries[id(key)] = (key, value)
        return value

    def many(self, keys: Iterable[K]) -> list[V]:
        """`[memo(key) for key in keys]`, with the lookups inline: hot callers pass a few keys at a time."""
        entries = self._entries
        values = []
        for key in keys:
            entry = entries.get(id(key))
            values.append(entry[1] if entry is not None and entry[0] is key else self(key))
        return values

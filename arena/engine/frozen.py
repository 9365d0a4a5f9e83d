"""`@frozen`: the engine's immutable values, made faster than dataclasses make them.

The `__init__` of a frozen dataclass sets every field through `object.__setattr__`: 2.6 µs for
eight fields here, against 1.5 µs when the slots are set through their descriptors. The engine
makes about seven such objects per move (records, events, views), so this is worth 10% of
in-process play and 4% of a bot's whole path (BENCHMARKS.md).
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields
from typing import Any, TypeVar, dataclass_transform

T = TypeVar("T")


@dataclass_transform(frozen_default=True)
def frozen(cls: type[T]) -> type[T]:
    """`@dataclass(frozen=True, slots=True)`, with an `__init__` that fills the slots directly."""
    made: Any = dataclass(frozen=True, slots=True)(cls)
    if hasattr(made, "__post_init__"):
        raise TypeError(f"@frozen does not call {made.__name__}.__post_init__")
    namespace: dict[str, object] = {}
    parameters, lines = [], []
    for f in fields(made):
        if f.default_factory is not MISSING or not f.init or f.kw_only:
            raise TypeError(f"@frozen takes plain fields and defaults only, not the options of {f.name!r}")
        namespace[f"set_{f.name}"] = getattr(made, f.name).__set__
        if f.default is MISSING:
            parameters.append(f.name)
        else:
            namespace[f"default_{f.name}"] = f.default
            parameters.append(f"{f.name}=default_{f.name}")
        lines.append(f"\n    set_{f.name}(self, {f.name})")
    exec(f"def __init__(self, {', '.join(parameters)}):{''.join(lines) or ' pass'}", namespace)
    init: Any = namespace["__init__"]
    init.__qualname__ = f"{made.__qualname__}.__init__"
    made.__init__ = init
    return made

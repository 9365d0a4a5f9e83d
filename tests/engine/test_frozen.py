"""`@frozen` makes the same values as `@dataclass(frozen=True, slots=True)`, only faster."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from arena.engine.frozen import frozen


@frozen
class Sample:
    seat: int
    card: str = "guard"
    target: int | None = None


def test_fields_defaults_equality_hash_and_repr_are_a_dataclasss() -> None:
    made = Sample(1, target=2)
    assert (made.seat, made.card, made.target) == (1, "guard", 2)
    assert made == Sample(1, "guard", 2) and hash(made) == hash(Sample(1, "guard", 2))
    assert repr(made) == "Sample(seat=1, card='guard', target=2)"
    assert dataclasses.astuple(made) == (1, "guard", 2)
    assert not hasattr(made, "__dict__")


def test_values_cannot_be_changed_and_survive_pickling() -> None:
    made = Sample(0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.seat = 3  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(made)) == made


def test_missing_or_unknown_arguments_fail_as_for_any_function() -> None:
    with pytest.raises(TypeError):
        Sample()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Sample(1, colour="red")  # type: ignore[call-arg]


def test_field_options_it_would_ignore_are_refused() -> None:
    with pytest.raises(TypeError, match="hand"):

        @frozen
        class WithFactory:
            hand: list[int] = dataclasses.field(default_factory=list)

    with pytest.raises(TypeError, match="__post_init__"):

        @frozen
        class WithPostInit:
            seat: int

            def __post_init__(self) -> None:
                pass

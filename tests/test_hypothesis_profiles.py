"""The Hypothesis profile a run gets from its environment."""

from __future__ import annotations

from hypothesis import settings

from tests.hypothesis_profiles import chosen_profile


def test_the_profile_is_named_or_follows_ci() -> None:
    assert chosen_profile({}) == "dev"
    assert chosen_profile({"CI": "true"}) == "ci"
    assert chosen_profile({"CI": "false"}) == "dev"
    assert chosen_profile({"CI": "true", "HYPOTHESIS_PROFILE": "dev"}) == "dev"
    assert chosen_profile({"HYPOTHESIS_PROFILE": "ci"}) == "ci"


def test_the_ci_profile_gives_the_same_examples_every_run() -> None:
    ci = settings.get_profile("ci")
    assert ci.derandomize and ci.database is None and ci.deadline is None and ci.print_blob
    assert ci.max_examples == 100
    assert settings.get_profile("dev").deadline is None

"""Hypothesis profiles: `ci`, the same examples on every run, and `dev`, new examples each run.

Chosen by HYPOTHESIS_PROFILE (ci or dev); without it, `ci` where CI is "true" (as CI systems set it) and
`dev` elsewhere. Under `ci` a failure is the same failure on a rerun, and print_blob gives the line that
replays it anywhere (@reproduce_failure). Neither has a deadline: the machine is shared, and a test's
speed is the benchmarks' to measure, not a reason to fail it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from hypothesis import HealthCheck, settings

PROFILE_VARIABLE = "HYPOTHESIS_PROFILE"
CI_EXAMPLES = 100
"""A test's examples under `ci` unless it sets its own count (as Hypothesis's default)."""

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=CI_EXAMPLES,
    deadline=None,
    print_blob=True,
    database=None,  # derandomized examples are the same each run: nothing to remember between runs
    suppress_health_check=[HealthCheck.too_slow],  # a timing judgement, as a deadline is
)
settings.register_profile("dev", deadline=None, print_blob=True)


def chosen_profile(environment: Mapping[str, str] = os.environ) -> str:
    """The profile the environment asks for."""
    named = environment.get(PROFILE_VARIABLE)
    if named:
        return named
    return "ci" if environment.get("CI") == "true" else "dev"


def load() -> str:
    """Load the chosen profile (an unknown name is an error: a typo would silently test less)."""
    profile = chosen_profile()
    settings.load_profile(profile)
    return profile

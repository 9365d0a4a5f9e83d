"""Fuzzed replies, over both transports, through a real bot process: each judged as PROTOCOL.md says.

Each transport gets 16,000 replies (hypothesis draws some, and a seed for the rest: see fuzz.batches);
benchmarks/fuzz_replies.py sends a million.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from tests.players.fuzz import ReplayBot, Tally, batches, real_decisions

EXAMPLES = 25
DRAWN, MADE, MUTATED = 10, 250, 140
"""Per example: 400 replies, so 10,000 per transport."""
OFFERED = real_decisions()


@pytest.mark.parametrize("protocol", ["zmq", "stdio"])
def test_every_fuzzed_reply_is_accepted_or_the_right_fault(protocol: str, tmp_path: Path, marker: str) -> None:
    bot = ReplayBot(tmp_path / "replay", protocol, marker)
    tally = Tally()

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
    )
    @given(batches(OFFERED, DRAWN, MADE, MUTATED))
    def replies_are_judged_alike(cases: list) -> None:
        seen = len(tally.failures)
        bot.run(cases, tally)
        assert tally.failures[seen:] == []

    try:
        replies_are_judged_alike()
    finally:
        bot.close()
    assert tally.judged + tally.blank >= EXAMPLES * (DRAWN + MADE + MUTATED)
    assert tally.failures == []
    for verdict in ("accepted", "malformed", "illegal"):
        assert tally.verdicts.get(verdict, 0) > tally.judged // 20, tally.verdicts

"""No channel between two bots at strict (issue 34, part 2).

For each channel of the issue, a pair of bots (tests/sandbox/covert/pair.py): a sender that encodes its hand, a
receiver that decodes it, played turn by turn with each bot frozen off its turn, as the arena plays them
(covert/driver.py). Where the channel is open (level none: trusted bots share the machine) the pair must decode
far above chance, which shows that the pair works and that its test can fail; at strict, over 200 turns, the
receiver must guess right no more often than a blind guess would (1 in 8), by an exact binomial test.

Some channels are left to benchmarks/covert_channels.py (MEASURED): the page cache, which every process that
reads a file shares (no filter can hide from a reader how long its read took, nor which pages the kernel mapped
around the one it touched), and the user's count of user namespaces, which no bounded pair can read on a machine
whose limit is tens of thousands.

Only none and strict are played here. Two channels are open at basic for an ordinary user and closed for root
(whose bots have user ids of their own), as docs/configuration.md says: the access times of files both read
(`atime`: root's basic bot sees the whole tree read-only) and the user's count of pending signals (`sigpending`:
only strict gives an ordinary user's bot a count of its own). At strict both are closed as root and as an ordinary
user, and their tests hold either way.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

from arena.sandbox import SandboxLevel
from tests.sandbox.conftest import children_of_this_process, poll_until, strict_or_skip
from tests.sandbox.covert import pair
from tests.sandbox.covert.driver import CHANNELS, binomial_tail, mutual_information, play

MEASURED = {
    "read-timing": "the page cache is shared: a first read of a page another bot read is fast",
    "fault-around": "the page cache is shared: a fault maps with its page those around it that are cached",
    "userns": (
        "the receiver counts the namespaces it can still make, up to pair.PROBE_MAX: a limit in the tens of "
        "thousands (the machine's, unless its user holds nearly all) is out of its reach, so no control decodes"
    ),
}
"""Channels measured by the benchmark, not asserted closed: those a shared kernel cannot close, and one whose pair
cannot show here that it works (where the limit is within its reach, in a user namespace whose
user.max_user_namespaces is lowered to 1,000, it decodes every turn at none)."""
TESTED = [channel for channel in CHANNELS if channel not in MEASURED]
ALPHA = 1e-4
"""How unlikely a blind receiver's score must be for the pair to count as decoding. The secret values are seeded,
and a receiver with nothing to go on names one card (pair.BLIND, or what a static file decodes to), so a closed
channel's test scores the same every run: for these seeds, whatever card it sticks to, at most 40 of 200, where 45
would count as decoding."""
STRICT_TURNS = 200
CONTROL_TURNS = 24
SLOW_CONTROLS = {"uptime": (320, 0.005)}
"""Turns and unit of a pair that decodes only part of the time: more turns to show that it beats chance, and a
larger step, to be seen on a busy machine (the idle time only moves while some CPU is idle: with both cores busy,
as in .ci/run's subsets side by side, 160 turns decoded 37 right, p = 0.00015; 320 at that rate give p < 1e-7)."""


@pytest.fixture
def leaves_nothing() -> Iterator[None]:
    """Every bot process of the pair reaped once it is played."""
    before = children_of_this_process()
    yield
    poll_until(lambda: not children_of_this_process() - before, what="every bot of the pair to be reaped")


@pytest.mark.parametrize("channel", TESTED)
def test_where_the_channel_is_open_its_pair_decodes_the_hand(channel: str, leaves_nothing: None) -> None:
    turns, unit = SLOW_CONTROLS.get(channel, (CONTROL_TURNS, None))
    run = play(channel, SandboxLevel.NONE, turns, seed=f"open-{channel}", unit=unit)
    assert run.p_value < ALPHA, run.summary()
    assert not pair.leftovers(run.tag)


@pytest.mark.parametrize("channel", TESTED)
def test_at_strict_no_pair_decodes_the_hand_better_than_chance(channel: str, leaves_nothing: None) -> None:
    strict_or_skip()
    run = play(channel, SandboxLevel.STRICT, STRICT_TURNS, seed=f"strict-{channel}")
    assert run.turns == STRICT_TURNS
    assert run.p_value >= ALPHA, run.summary()
    assert not pair.leftovers(run.tag)


def test_the_binomial_tail_is_exact() -> None:
    assert binomial_tail(0, 200, 1 / 8) == 1.0
    assert binomial_tail(2, 3, 0.5) == 0.5
    assert binomial_tail(200, 200, 1 / 8) == 2.0**-600
    assert binomial_tail(40, 200, 1 / 8) < 0.01 < binomial_tail(33, 200, 1 / 8)


def test_mutual_information_is_the_bits_the_guesses_carry() -> None:
    values = [v for v in range(1, 9) for _ in range(10)]
    assert mutual_information(values, values) == pytest.approx(3.0)
    assert mutual_information(values, [1] * len(values)) == 0.0
    assert mutual_information(values, [(v + 1) // 2 for v in values]) == pytest.approx(2.0)
    assert math.isclose(mutual_information([], []), 0.0)

"""Bot user ids: a range no user, group or subordinate range holds, chosen from the machine's real id files."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.sandbox import SetupError, users

STEP = 65_536


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Id files as `useradd` leaves them after four users: each with 65,536 subordinate ids from 100000 on, so
    that the range once fixed, 200000-265535, is covered twice over."""
    names = ("walker", "ada", "grace", "linus")
    (tmp_path / "passwd").write_text(
        "root:x:0:0:root:/root:/bin/bash\n"
        + "".join(f"{n}:x:{1000 + i}:{1000 + i}::/home/{n}:/bin/sh\n" for i, n in enumerate(names))
    )
    (tmp_path / "group").write_text("root:x:0:\n" + "".join(f"{n}:x:{1000 + i}:\n" for i, n in enumerate(names)))
    subordinate = "".join(f"{n}:{100_000 + i * STEP}:{STEP}\n" for i, n in enumerate(names))
    (tmp_path / "subuid").write_text(subordinate)
    (tmp_path / "subgid").write_text(subordinate)
    monkeypatch.setattr(users, "ID_FILES", (str(tmp_path / "passwd"), str(tmp_path / "group")))
    monkeypatch.setattr(users, "SUBORDINATE_FILES", (str(tmp_path / "subuid"), str(tmp_path / "subgid")))
    return tmp_path


def test_the_lowest_range_nobody_holds_is_chosen_past_the_subordinate_ranges(machine: Path) -> None:
    chosen = users.choose()
    assert chosen == range(100_000 + 4 * STEP, 100_000 + 5 * STEP)
    assert not any(held.ids.start < chosen.stop and chosen.start < held.ids.stop for held in users.reservations())


def test_a_range_asked_for_that_a_user_holds_is_refused_naming_who_holds_it(machine: Path) -> None:
    with pytest.raises(SetupError) as refused:
        users.choose(users.parse_range("200000-265535"))
    message = str(refused.value)
    assert f"{machine / 'subuid'}: ada 165536\u2013231071" in message
    assert f"{machine / 'subuid'}: grace 231072\u2013296607" in message
    assert "ARENA_BOT_UIDS=FIRST-LAST" in message and "bot_uids" in message


def test_a_free_range_asked_for_is_taken_as_it_is(machine: Path) -> None:
    assert users.choose(users.parse_range("600000-600009")) == range(600_000, 600_010)


def test_with_no_free_range_the_error_names_the_holders_and_the_fix(machine: Path) -> None:
    (machine / "subuid").write_text(f"everyone:100000:{users.MAX_ID - 100_000}\n")
    with pytest.raises(SetupError, match=r"no 65536 free bot user ids from 200000 on: reserved by .*everyone"):
        users.choose()


@pytest.mark.parametrize("written", ["300000", "300000-", "b-c", "5-4", "0-10", f"1-{2**32}"])
def test_a_range_written_wrong_is_refused_saying_how_to_write_it(written: str) -> None:
    with pytest.raises(ValueError, match=r"FIRST-LAST|at least 1"):
        users.parse_range(written)


def test_ids_this_user_namespace_does_not_map_are_never_chosen(monkeypatch: pytest.MonkeyPatch, machine: Path) -> None:
    monkeypatch.setattr(users, "usable", lambda: [range(0, 300_000)])  # a container's map
    with pytest.raises(SetupError, match="no 65536 free bot user ids"):
        users.choose()
    with pytest.raises(SetupError, match="not all mapped here"):
        users.choose(range(290_000, 310_000))

"""The tournament's seed as the store keeps it: drawn for a new folder, kept as text in its meta, read back on a
resume, drawn again on a restart; a written seed kept as written, however large; a folder begun before seeds
were kept resumes with the seed it was begun with."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from arena.errors import StoreError
from arena.matches import DRAWN_SEED_BITS, GUESSABLE_SEEDS
from arena.store import ResultStore
from arena.store.database import DATABASE, LEGACY_SEED, STORE_VERSION, TOURNAMENT_SEED, recorded_seed


def opened(output: Path, seed: int | None = None, *, restart: bool = False) -> int | None:
    """The folder's seed once the store is created or resumed as `arena run` does it."""
    store = ResultStore.create_or_resume(output, "hash", {"name": "seeds"}, restart, seed)
    try:
        return store.tournament_seed
    finally:
        store.close()


def kept_text(output: Path) -> str:
    """The seed as the database holds it."""
    with sqlite3.connect(output / DATABASE) as db:
        row = db.execute("SELECT value, typeof(value) FROM meta WHERE key = ?", (TOURNAMENT_SEED,)).fetchone()
    db.close()
    assert row[1] == "text"  # SQLite's integers hold 64 bits: a seed of 128 (up to 256) would not fit
    return str(row[0])


def test_a_new_folder_draws_a_seed_of_128_bits_and_keeps_it_as_text(tmp_path: Path) -> None:
    seed = opened(tmp_path / "out")
    assert seed is not None and GUESSABLE_SEEDS <= seed < 2**DRAWN_SEED_BITS  # below 2**64: one chance in 2**64
    assert kept_text(tmp_path / "out") == str(seed)
    assert recorded_seed(tmp_path / "out") == seed


def test_a_resumed_folder_reads_its_seed_and_a_restart_draws_another(tmp_path: Path) -> None:
    first = opened(tmp_path / "out")
    assert opened(tmp_path / "out") == first
    restarted = opened(tmp_path / "out", restart=True)
    assert restarted != first
    assert opened(tmp_path / "out") == restarted


def test_each_new_folder_draws_its_own_seed(tmp_path: Path) -> None:
    seeds = {opened(tmp_path / f"out-{n}") for n in range(8)}
    assert len(seeds) == 8


def test_a_written_seed_is_kept_as_written_however_large(tmp_path: Path) -> None:
    large = 2**256 - 1
    assert opened(tmp_path / "out", large) == large
    assert kept_text(tmp_path / "out") == str(large)
    assert opened(tmp_path / "out", large) == large
    assert opened(tmp_path / "small", 42) == 42


def test_a_written_seed_other_than_the_folders_is_refused(tmp_path: Path) -> None:
    """config_hash counts a file without a seed as seed 0: only the store tells `seed: 0` from a drawn seed."""
    drawn = opened(tmp_path / "out")
    with pytest.raises(StoreError, match=r"another seed than 0.*--restart"):
        opened(tmp_path / "out", 0)
    assert opened(tmp_path / "out") == drawn  # refused, and nothing changed
    assert opened(tmp_path / "out", 0, restart=True) == 0


def test_a_folder_begun_before_seeds_were_kept_resumes_with_the_seed_it_was_begun_with(tmp_path: Path) -> None:
    for written, expected in ((None, LEGACY_SEED), (42, 42)):
        output = tmp_path / f"out-{written}"
        opened(output, written)
        with sqlite3.connect(output / DATABASE) as db:  # as an arena of store version 2 left it
            db.execute("DELETE FROM meta WHERE key = ?", (TOURNAMENT_SEED,))
            db.execute("UPDATE meta SET value = '2' WHERE key = 'store_version'")
        db.close()
        store = ResultStore.open_existing(output)  # a reader upgrades it, and cannot know the seed
        assert store.tournament_seed is None
        assert store.meta()["store_version"] == str(STORE_VERSION)
        store.close()
        assert opened(output, written) == expected
        assert kept_text(output) == str(expected)

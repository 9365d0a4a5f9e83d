"""Limits.disk_mb: what a bot may have written, its workdir and /tmp together (disk.py, diskwatch.py)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from arena.sandbox import Limits, SandboxLevel, disk, diskwatch
from arena.sandbox.disk import DiskKind, DiskSpace, Usage
from tests.sandbox.conftest import DEADLINE_S, LIMITED_LEVELS, Bots, poll_until

MIB = 1024 * 1024

FILL = """
import errno, json, os, sys, time
written, failure = {}, None
for where in os.environ["WHERE"].split(":"):
    written[where] = 0
    try:
        with open(os.path.join(where, "fill"), "wb", buffering=0) as stream:
            for _ in range(int(os.environ.get("MEGABYTES", 64))):
                written[where] += stream.write(b"x" * (1024 * 1024))
    except OSError as error:
        failure = errno.errorcode[error.errno]
        break
print(json.dumps({"written": written, "failure": failure}), file=sys.stderr, flush=True)
time.sleep(30)
"""


def _last_json(text: str) -> dict[str, object]:
    return json.loads(text.strip().splitlines()[-1])


def _limits(disk_mb: int) -> Limits:
    return Limits(disk_mb=disk_mb, file_size_mb=1024)


@LIMITED_LEVELS
def test_a_bot_that_fills_its_disk_gets_enospc_and_no_fault(bots: Bots, level: SandboxLevel) -> None:
    bot = bots.start(level, FILL, env={"WHERE": "."}, limits=_limits(8))
    poll_until(lambda: "failure" in bot.stderr_tail(), what="the bot to fill its disk")
    seen = _last_json(bot.stderr_tail())
    assert seen["failure"] == "ENOSPC"
    assert 6 * MIB <= seen["written"]["."] <= 8 * MIB
    poll_until(lambda: bot.peak_disk() >= 6 * MIB, what="the watch to see what it wrote")
    assert bot.peak_disk() <= 8 * MIB
    bot.kill()
    assert bot.exit_fault() == ("crash", "killed by the arena"), "a full disk alone is no fault"
    assert not bot.workdir.exists()


def test_under_strict_the_workdir_and_tmp_share_one_space_and_the_host_disk_gets_nothing(bots: Bots) -> None:
    bot = bots.start(SandboxLevel.STRICT, FILL, env={"WHERE": "/tmp:.", "MEGABYTES": "5"}, limits=_limits(8))
    poll_until(lambda: "failure" in bot.stderr_tail(), what="the bot to fill its disk")
    seen = _last_json(bot.stderr_tail())
    assert seen["failure"] == "ENOSPC"
    assert sum(seen["written"].values()) <= 8 * MIB
    assert seen["written"]["/tmp"] == 5 * MIB and seen["written"]["."] >= MIB
    assert list(bot.workdir.iterdir()) == [], "nothing reached the host's disk"
    assert os.path.getsize(Path(str(bot.files_path())) / "fill") == seen["written"]["."]


def test_under_strict_dev_is_read_only_and_dev_shm_small(bots: Bots) -> None:
    script = """
    import errno, json, os, sys
    def attempt(path, megabytes):
        try:
            with open(path, "wb", buffering=0) as stream:
                for _ in range(megabytes):
                    stream.write(b"x" * (1024 * 1024))
            return "ok"
        except OSError as error:
            return errno.errorcode[error.errno]
    print(json.dumps({"dev": attempt("/dev/fill", 1), "shm": attempt("/dev/shm/fill", 128)}), file=sys.stderr)
    """
    bot = bots.start(SandboxLevel.STRICT, script, limits=_limits(512))
    assert bot.wait(DEADLINE_S) == 0, bot.stderr_tail()
    assert _last_json(bot.stderr_tail()) == {"dev": "EROFS", "shm": "ENOSPC"}


@LIMITED_LEVELS
def test_a_bot_that_dies_of_its_full_disk_is_a_limit_fault(bots: Bots, level: SandboxLevel) -> None:
    script = """
    with open("fill", "wb", buffering=0) as stream:
        while True:
            stream.write(b"x" * (1024 * 1024))
    """
    bot = bots.start(level, script, limits=_limits(4))
    assert bot.wait(DEADLINE_S) == 1
    assert bot.exit_fault() == ("limit", "disk: its 4 MB were full (No space left on device)")


@LIMITED_LEVELS
def test_a_bot_that_keeps_writing_to_its_full_disk_is_stopped(bots: Bots, level: SandboxLevel) -> None:
    script = """
    import os, time
    fd = os.open("fill", os.O_WRONLY | os.O_CREAT)
    block = b"x" * 65536
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.write(fd, block)
        except OSError:
            pass
    """
    bot = bots.start(level, script, limits=_limits(4))
    assert bot.wait(DEADLINE_S) == -9, "stopped long before its own deadline"
    kind, detail = bot.exit_fault()
    assert kind == "limit"
    assert detail.startswith("disk: kept writing after its 4 MB were full")


FLOOD = """
import errno, json, os, sys, time
made, failure = 0, None
try:
    while made < 20_000:
        open(f"f{made}", "w").close()
        made += 1
except OSError as error:
    failure = errno.errorcode[error.errno]
print(json.dumps({"made": made, "failure": failure}), file=sys.stderr, flush=True)
time.sleep(30)
"""


def test_an_inode_flood_under_strict_is_stopped_by_the_watch(bots: Bots) -> None:
    bot = bots.start(SandboxLevel.STRICT, FLOOD, limits=_limits(1))  # 1 MB: at most 256 files
    assert bot.wait(DEADLINE_S) == -9
    assert bot.exit_fault() == ("limit", "disk: wrote more than 256 files (each counts as 4 KB of its 1 MB)")


@pytest.mark.skipif(os.geteuid() != 0, reason="root only: basic bots get a tmpfs in a mount namespace as root")
def test_an_inode_flood_under_basic_as_root_meets_the_inode_limit(bots: Bots) -> None:
    bot = bots.start(SandboxLevel.BASIC, FLOOD, limits=_limits(1))
    poll_until(lambda: "failure" in bot.stderr_tail(), what="the bot to report")
    assert _last_json(bot.stderr_tail()) == {"made": 256, "failure": "ENOSPC"}


@pytest.mark.skipif(os.geteuid() != 0, reason="root only: a basic bot's /tmp files are its UID's")
def test_under_basic_as_root_what_a_bot_writes_in_tmp_counts_and_is_removed(bots: Bots) -> None:
    script = """
    import os, time
    os.makedirs("/tmp/mine", exist_ok=True)
    with open("/tmp/mine/fill", "wb", buffering=0) as stream:
        for _ in range(16):
            stream.write(b"x" * (1024 * 1024))
            time.sleep(0.05)
    time.sleep(30)
    """
    bot = bots.start(SandboxLevel.BASIC, script, limits=_limits(8))
    assert bot.wait(DEADLINE_S) == -9
    assert bot.exit_fault() == (
        "limit",
        "disk: wrote more than its 8 MB (its workdir and temporary files together)",
    )
    bot.kill()
    assert not Path("/tmp/mine").exists(), "what the bot's UID left in /tmp goes with it"


def _measured(path: Path, disk_mb: int) -> tuple[diskwatch.Watched, list[str]]:
    stops: list[str] = []
    space = DiskSpace.of(DiskKind.MEASURED, path, disk_mb)
    watched = diskwatch.Watched(space, lambda: str(path), lambda: [os.getpid()], lambda r: not stops.append(r))
    return watched, stops


def test_a_measured_workdir_over_the_limit_is_stopped(tmp_path: Path) -> None:
    watched, stops = _measured(tmp_path, disk_mb=2)
    subprocess.run(["dd", "if=/dev/zero", f"of={tmp_path / 'a'}", "bs=1M", "count=1"], check=True, capture_output=True)
    diskwatch.look(watched)
    assert stops == [] and watched.peak_bytes >= MIB
    (tmp_path / "sub").mkdir()
    subprocess.run(
        ["dd", "if=/dev/zero", f"of={tmp_path / 'sub' / 'b'}", "bs=1M", "count=2"], check=True, capture_output=True
    )
    diskwatch.look(watched)
    assert stops == ["disk: wrote more than its 2 MB (its workdir and temporary files together)"]


def test_measuring_counts_a_file_once_however_linked_and_never_follows_links(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "big").write_bytes(b"x" * MIB)
    work = tmp_path / "work"
    work.mkdir()
    (work / "own").write_bytes(b"y" * MIB)
    os.link(work / "own", work / "again")
    (work / "there").symlink_to(outside)
    found = disk.tree_usage([work])
    assert found.files == 2  # own (with its second name), the link; nothing of outside
    assert MIB <= found.bytes < 2 * MIB


def test_each_file_counts_at_least_one_page() -> None:
    assert Usage(bytes=0, files=10).counted() == 10 * disk.FILE_BYTES
    assert Usage(bytes=MIB, files=1).counted() == MIB
    assert DiskSpace.of(DiskKind.TMPFS, Path("/tmp"), 1).max_files == 256

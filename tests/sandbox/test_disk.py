"""Limits.disk_mb: what a bot may have written, its workdir and /tmp together (disk.py, diskwatch.py).

A tmpfs holds it at strict, and at basic where the arena is root; at basic without root it is measured."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from arena.sandbox import Limits, SandboxLevel, disk, diskwatch
from arena.sandbox.disk import DiskSpace, Usage
from tests.sandbox.conftest import DEADLINE_S, Bots, poll_until

MIB = 1024 * 1024
ROOT = os.geteuid() == 0
TMPFS_LEVELS = pytest.mark.parametrize(
    "level", [SandboxLevel.STRICT, *([SandboxLevel.BASIC] if ROOT else [])], ids=lambda level: level.value
)
"""Where a bot's space is a tmpfs, whose writes past the limit fail with ENOSPC."""
only_root = pytest.mark.skipif(not ROOT, reason="as root a basic bot's space is a tmpfs")
only_user = pytest.mark.skipif(ROOT, reason="without root a basic bot's space is measured")

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
FLOOD = """
import errno, json, os, sys, time
if os.environ.get("HIDE"):  # point the workdir's name elsewhere, as a bot hiding from the watch would
    here = os.getcwd()
    os.rename(here, here + ".gone")
    os.symlink("/dev/shm", here)
    os.chdir(here + ".gone")
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


def _last_json(text: str) -> dict[str, object]:
    return json.loads(text.strip().splitlines()[-1])


def _limits(disk_mb: int) -> Limits:
    return Limits(disk_mb=disk_mb, file_size_mb=1024)


def _reported(bot: object) -> dict[str, object]:
    poll_until(lambda: "{" in bot.stderr_tail(), what="the bot to report")  # type: ignore[attr-defined]
    return _last_json(bot.stderr_tail())  # type: ignore[attr-defined]


@TMPFS_LEVELS
def test_a_bot_that_fills_its_disk_gets_enospc_and_no_fault(bots: Bots, level: SandboxLevel) -> None:
    bot = bots.start(level, FILL, env={"WHERE": "."}, limits=_limits(8))
    seen = _reported(bot)
    assert seen["failure"] == "ENOSPC"
    assert 6 * MIB <= seen["written"]["."] <= 8 * MIB  # type: ignore[index]
    poll_until(lambda: bot.peak_disk() >= 6 * MIB, what="the watch to see what it wrote")
    assert bot.peak_disk() <= 8 * MIB
    bot.kill()
    assert bot.exit_fault() == ("crash", "killed by the arena"), "a full disk alone is no fault"


def test_under_strict_the_workdir_and_tmp_share_one_space(bots: Bots) -> None:
    bot = bots.start(SandboxLevel.STRICT, FILL, env={"WHERE": "/tmp:.", "MEGABYTES": "5"}, limits=_limits(8))
    seen = _reported(bot)
    assert seen["failure"] == "ENOSPC"
    written: dict[str, int] = seen["written"]  # type: ignore[assignment]
    assert written["/tmp"] == 5 * MIB and MIB <= written["."] <= 3 * MIB
    assert os.path.getsize(Path(str(bot.files_path())) / "fill") == written["."]


def test_under_strict_dev_is_read_only_and_dev_shm_small_and_counted(bots: Bots) -> None:
    script = """
    import errno, json, sys, time
    def attempt(path, megabytes):
        try:
            with open(path, "wb", buffering=0) as stream:
                for _ in range(megabytes):
                    stream.write(b"x" * (1024 * 1024))
            return "ok"
        except OSError as error:
            return errno.errorcode[error.errno]
    said = {"dev": attempt("/dev/fill", 1), "shm": attempt("/dev/shm/fill", 6)}
    print(json.dumps(said), file=sys.stderr, flush=True)
    attempt("/tmp/fill", 6)
    time.sleep(30)
    """
    bot = bots.start(SandboxLevel.STRICT, script, limits=_limits(8))  # /dev/shm holds 8 MB too, but not with /tmp
    assert bot.wait(DEADLINE_S) == -9, "stopped: 12 MB in its two spaces together"
    assert _last_json(bot.stderr_tail()) == {"dev": "EROFS", "shm": "ok"}
    assert bot.exit_fault() == ("limit", "disk: wrote more than its 8 MB (its workdir and temporary files together)")


@TMPFS_LEVELS
def test_a_bot_that_dies_of_its_full_disk_is_a_limit_fault(bots: Bots, level: SandboxLevel) -> None:
    script = """
    with open("fill", "wb", buffering=0) as stream:
        while True:
            stream.write(b"x" * (1024 * 1024))
    """
    bot = bots.start(level, script, limits=_limits(4))
    assert bot.wait(DEADLINE_S) == 1
    assert bot.exit_fault() == ("limit", "disk: its 4 MB were full (No space left on device)")


@TMPFS_LEVELS
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


@TMPFS_LEVELS
def test_a_bot_that_fills_its_disk_and_writes_on_elsewhere_is_not_stopped(bots: Bots, level: SandboxLevel) -> None:
    script = """
    import os, sys, time
    try:
        with open("fill", "wb", buffering=0) as stream:
            while True:
                stream.write(b"x" * (1024 * 1024))
    except OSError:
        pass
    null = os.open("/dev/null", os.O_WRONLY)
    deadline = time.monotonic() + 1.5
    while time.monotonic() < deadline:  # logs on, as a chatty bot does
        os.write(null, b"a line of its log\\n")
    print("done", file=sys.stderr, flush=True)
    """
    bot = bots.start(level, script, limits=_limits(4))
    assert bot.wait(DEADLINE_S) == 0, bot.stderr_tail()


@pytest.mark.parametrize("hide", [False, True], ids=["plain", "workdir-renamed-to-a-link"])
def test_an_inode_flood_under_strict_is_stopped_by_the_watch(bots: Bots, hide: bool) -> None:
    bot = bots.start(SandboxLevel.STRICT, FLOOD, env={"HIDE": "1"} if hide else {}, limits=_limits(1))
    assert bot.wait(DEADLINE_S) == -9, bot.stderr_tail()
    assert bot.exit_fault() == ("limit", "disk: wrote more than 256 files (each counts as 4 KB of its 1 MB)")


@only_root
def test_an_inode_flood_under_basic_as_root_meets_the_inode_limit(bots: Bots) -> None:
    bot = bots.start(SandboxLevel.BASIC, FLOOD, limits=_limits(1))
    assert _reported(bot) == {"made": 256, "failure": "ENOSPC"}


@only_root
def test_under_basic_as_root_the_shared_temporary_folders_are_read_only(bots: Bots) -> None:
    script = """
    import errno, json, os, sys
    said = {}
    for path in ("/tmp", "/var/tmp", "/run/lock", "/dev/shm"):
        if os.path.isdir(path):
            try:
                open(os.path.join(path, "arena-test-written"), "w").close()
                said[path] = "ok"
            except OSError as error:
                said[path] = errno.errorcode[error.errno]
    print(json.dumps(said), file=sys.stderr)
    """
    bot = bots.start(SandboxLevel.BASIC, script, limits=_limits(8))
    assert bot.wait(DEADLINE_S) == 0, bot.stderr_tail()
    said = _last_json(bot.stderr_tail())
    assert said.pop("/dev/shm") == "ok", "a /dev/shm of its own"
    assert set(said.values()) == {"EROFS"}
    assert not any(Path(path, "arena-test-written").exists() for path in ("/tmp", "/var/tmp", "/run/lock", "/dev/shm"))


@only_user
def test_a_measured_bot_over_its_limit_is_stopped_however_it_hides_its_files(bots: Bots) -> None:
    script = """
    import os, time
    os.mkdir("hidden", 0o300)  # it may write there; the arena's user, the same, may not list it
    with open("hidden/fill", "wb") as stream:
        stream.write(b"x" * (3 << 20))
    kept = open("gone", "wb")
    kept.write(b"y" * (3 << 20))
    kept.flush()
    os.unlink("gone")  # deleted, still held open: still on the disk
    time.sleep(30)
    """
    bot = bots.start(SandboxLevel.BASIC, script, limits=_limits(4))
    assert bot.wait(DEADLINE_S) == -9, bot.stderr_tail()
    assert bot.exit_fault() == ("limit", "disk: wrote more than its 4 MB (its workdir and temporary files together)")
    bot.kill()
    assert not bot.workdir.exists(), "a directory the bot closed to its own user is removed too"


def _measured(path: Path, disk_mb: int) -> tuple[diskwatch.Watched, list[str]]:
    stops: list[str] = []
    space = DiskSpace.measured(path, disk_mb)
    watched = diskwatch.Watched(space, lambda: disk.tree_usage([path]), lambda: [], lambda r: not stops.append(r))
    return watched, stops


def _dd(path: Path, megabytes: int) -> None:
    subprocess.run(["dd", "if=/dev/zero", f"of={path}", "bs=1M", f"count={megabytes}"], check=True, capture_output=True)


def test_a_measured_workdir_over_the_limit_is_stopped(tmp_path: Path) -> None:
    watched, stops = _measured(tmp_path, disk_mb=2)
    _dd(tmp_path / "a", 1)
    diskwatch.look(watched)
    assert stops == [] and watched.peak_bytes >= MIB
    (tmp_path / "sub").mkdir()
    _dd(tmp_path / "sub" / "b", 2)
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
    assert DiskSpace.tmpfs(Path("/tmp/w"), Path("/tmp"), 1).max_files == 256


def test_a_machine_busy_with_other_work_does_not_slow_the_disk_watch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each look waits half a second for a core, as on a loaded machine: a workdir filled past its limit just after a
    look is still stopped within seconds (the watch backed off by the time a look took: ten seconds)."""
    measured = diskwatch.look

    def waiting_for_a_core(bot: diskwatch.Watched) -> None:
        time.sleep(0.5)
        measured(bot)

    monkeypatch.setattr(diskwatch, "look", waiting_for_a_core)
    watched, stops = _measured(tmp_path, disk_mb=2)
    watching = diskwatch.DiskWatch()
    watching.add(1, watched)
    try:
        time.sleep(0.7)  # the first look is done
        _dd(tmp_path / "fill", 3)
        poll_until(lambda: bool(stops), 4.0)
    finally:
        watching.remove(1)
    assert stops and "wrote more than its 2 MB" in stops[0]

"""Bot directories packed for a cluster and unpacked on a worker: real files, links, and hostile blobs."""

from __future__ import annotations

import io
import os
import stat
import tarfile
from pathlib import Path

import pytest

from arena.runner.bundles import BundleError, pack, unpack


def bot_directory(tmp_path: Path) -> Path:
    """A bot as users keep one: its code, a virtual environment's links, a link inside, a link leading out."""
    directory = tmp_path / "alice"
    (directory / "src").mkdir(parents=True)
    (directory / "src" / "bot.py").write_text("print('hello')\n")
    (directory / "run.sh").write_text("#!/bin/sh\n")
    (directory / "run.sh").chmod(0o755)
    (directory / "venv" / "bin").mkdir(parents=True)
    (directory / "venv" / "bin" / "python").symlink_to("/usr/bin/python3")
    (directory / "venv" / "bin" / "python3").symlink_to("python")  # leads out too, through the link beside it
    (directory / "main.py").symlink_to("src/bot.py")
    (directory / "code").symlink_to("src")
    (tmp_path / "grades.txt").write_text("secret\n")
    (directory / "grades").symlink_to("../grades.txt")
    (directory / "sneaky").symlink_to("code/../../grades.txt")  # lexically inside, really out
    (directory / "back").symlink_to("../alice/src/bot.py")  # out and back in: named alice only here
    (directory / "__pycache__").mkdir()
    (directory / "__pycache__" / "x.pyc").write_bytes(b"\0")
    return directory


def test_links_inside_travel_as_links_and_links_leading_out_are_left_behind_and_named(tmp_path: Path) -> None:
    bundle = pack(bot_directory(tmp_path), bot="alice", cap_mb=1)
    assert {(link.path, link.target) for link in bundle.dropped} == {
        ("venv/bin/python", "/usr/bin/python3"),
        ("venv/bin/python3", "python"),
        ("grades", "../grades.txt"),
        ("sneaky", "code/../../grades.txt"),
        ("back", "../alice/src/bot.py"),
    }
    target = tmp_path / "worker" / "alice"
    target.parent.mkdir()
    unpack(bundle.blob, target)
    assert (target / "main.py").is_symlink() and os.readlink(target / "main.py") == "src/bot.py"
    assert (target / "main.py").read_text() == "print('hello')\n"
    assert (target / "code" / "bot.py").read_text() == "print('hello')\n"
    for left in ("grades", "sneaky", "back", "venv/bin/python", "venv/bin/python3", "__pycache__"):
        assert not os.path.lexists(target / left)
    assert stat.S_IMODE((target / "run.sh").stat().st_mode) == 0o755
    assert stat.S_IMODE((target / "src" / "bot.py").stat().st_mode) == 0o644


def test_packing_never_reads_what_a_link_leads_to(tmp_path: Path) -> None:
    directory = bot_directory(tmp_path)
    bundle = pack(directory, bot="alice", cap_mb=1)
    with tarfile.open(fileobj=io.BytesIO(bundle.blob), mode="r:gz") as archive:
        names = {member.name: member for member in archive}
        contents = b"".join(archive.extractfile(m).read() for m in names.values() if m.isreg())  # type: ignore[union-attr]
    assert names["main.py"].issym() and names["code"].issym()
    assert b"secret" not in contents  # the file behind the link leading out was not read into the blob


def test_a_file_over_the_cap_is_refused_naming_the_bot_and_the_file(tmp_path: Path) -> None:
    directory = bot_directory(tmp_path)
    (directory / "weights.bin").write_bytes(b"\1" * (2 * 1024 * 1024))
    with pytest.raises(BundleError, match=r"^bot alice: .*/alice/weights\.bin is 2 MB, over executor\.max_bot_mb"):
        pack(directory, bot="alice", cap_mb=1)


def test_a_directory_over_the_cap_packed_is_refused(tmp_path: Path) -> None:
    directory = bot_directory(tmp_path)
    for n in range(3):
        (directory / f"noise-{n}.bin").write_bytes(os.urandom(600 * 1024))
    with pytest.raises(BundleError, match=r"^bot alice: .*alice is over executor\.max_bot_mb \(1 MB\) packed"):
        pack(directory, bot="alice", cap_mb=1)


def test_a_special_file_is_refused_naming_it(tmp_path: Path) -> None:
    directory = bot_directory(tmp_path)
    os.mkfifo(directory / "pipe")
    with pytest.raises(BundleError, match=r"^bot alice: .*/alice/pipe is a special file"):
        pack(directory, bot="alice", cap_mb=1)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_an_unreadable_file_is_refused_naming_it(tmp_path: Path) -> None:
    directory = bot_directory(tmp_path)
    (directory / "private.key").write_text("x")
    (directory / "private.key").chmod(0)
    with pytest.raises(BundleError, match=r"^bot alice: .*/alice/private\.key cannot be read"):
        pack(directory, bot="alice", cap_mb=1)


def blob_of(*members: tuple[tarfile.TarInfo, bytes | None]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            archive.addfile(info, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def member(name: str, kind: bytes = tarfile.REGTYPE, linkname: str = "", mode: int = 0o644) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, linkname, mode
    return info


@pytest.mark.parametrize(
    ("members", "problem"),
    [
        ([(member("/etc/cron.d/x"), b"x")], "unsafe name"),
        ([(member("../outside"), b"x")], "unsafe name"),
        ([(member("a/../../outside"), b"x")], "unsafe name"),
        ([(member("out", tarfile.SYMTYPE, "/etc"), None)], "absolute path"),
        ([(member("out", tarfile.SYMTYPE, "../.."), None)], "leads out"),
        ([(member("d", tarfile.SYMTYPE, "x/../.."), None), (member("x", tarfile.DIRTYPE), None)], "leads out"),
        ([(member("etc", tarfile.SYMTYPE, "real"), None), (member("etc/passwd"), b"x")], "twice"),
        (  # inside when made, out once the link it goes through exists
            [
                (member("d", tarfile.DIRTYPE), None),
                (member("d/inner", tarfile.SYMTYPE, "."), None),
                (member("top", tarfile.SYMTYPE, "d/inner/../.."), None),
            ],
            "top leads out",
        ),
        (
            [(member("up", tarfile.SYMTYPE, ".."), None), (member("up/x/y", tarfile.SYMTYPE, "z"), None)],
            "lies beyond up",
        ),
        ([(member("hard", tarfile.LNKTYPE, "x"), None)], "not a file, directory or link"),
        ([(member("null", tarfile.CHRTYPE), None)], "not a file, directory or link"),
        ([(member("fifo", tarfile.FIFOTYPE), None)], "not a file, directory or link"),
        ([(member("x"), b"1"), (member("x"), b"2")], "twice"),
    ],
)
def test_a_hostile_blob_is_refused_and_writes_nothing_outside(
    tmp_path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]], problem: str
) -> None:
    target = tmp_path / "box" / "bot"
    target.parent.mkdir()
    before = set(tmp_path.rglob("*"))
    with pytest.raises(BundleError, match=problem):
        unpack(blob_of(*members), target)
    assert {path for path in tmp_path.rglob("*") if not path.is_relative_to(target)} == before | {target.parent}
    assert all(Path(os.path.realpath(path)).is_relative_to(target) for path in target.rglob("*"))


def test_set_id_bits_are_dropped(tmp_path: Path) -> None:
    target = tmp_path / "bot"
    unpack(blob_of((member("tool", mode=0o6755), b"#!/bin/sh\n")), target)
    assert stat.S_IMODE((target / "tool").stat().st_mode) == 0o755

"""An upload kept as an immutable, content-named bot version, or refused with a message that names the problem and
nothing left behind: real files and real zips, the hostile ones written entry by entry (links, devices, names
that climb out, lying sizes, a gigabyte bomb)."""

from __future__ import annotations

import functools
import io
import os
import stat
import struct
import warnings
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from arena.players.values import BotCommand
from arena.serve.uploads import BotVersion, Preset, UploadLimits, UploadRefused, store_upload, version_digest

BOT = b"from arena.sdk import run\n"
ELF_PROGRAM = b"\x7fELF\x02\x01\x01" + bytes(57)


def zipped(files: dict[str, bytes], modes: dict[str, int] | None = None) -> bytes:
    """A zip of the files (a name ending in / is a folder), with Unix mode bits where given."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            mode = (modes or {}).get(name)
            if mode is not None:
                info.external_attr = mode << 16
            archive.writestr(info, content)
    return buffer.getvalue()


def raw_zip(entries: list[tuple[bytes, bytes, int, int]]) -> bytes:
    """A zip written byte by byte, for what zipfile will not write: each entry is (name, deflated stream, CRC-32,
    declared size), the size and the name taken as they are."""
    local, central = b"", b""
    for name, stream, crc, size in entries:
        offset = len(local)
        local += struct.pack("<4s2B4HL2L2H", b"PK\x03\x04", 20, 0, 0, 8, 0, 0x21, crc, len(stream), size, len(name), 0)
        local += name + stream
        central += struct.pack(
            "<4s4B4HL2L5H2L",
            *(b"PK\x01\x02", 20, 3, 20, 0, 0, 8, 0, 0x21, crc, len(stream), size, len(name), 0, 0, 0, 0),
            *((stat.S_IFREG | 0o644) << 16, offset),
        )
        central += name
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(entries), len(entries), len(central), len(local), 0)
    return local + central + end


def deflated(content: bytes) -> tuple[bytes, int, int]:
    """content as raw_zip takes it: its deflate stream, its CRC-32 and its size."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    return compressor.compress(content) + compressor.flush(), zlib.crc32(content), len(content)


@functools.cache
def bomb(mebibytes: int) -> bytes:
    """A genuine zip bomb: one entry of `mebibytes` MiB of zeros, deflated, with its true size and CRC. Its stream
    repeats one self-contained deflate block (a full flush ends it), so a gigabyte is built without compressing
    one, which zipfile's own writer takes seconds to do."""
    zeros = bytes(2**20)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(mebibytes):
        crc = zlib.crc32(zeros, crc)
    return raw_zip([(b"zeros.bin", block * mebibytes + compressor.flush(), crc, mebibytes * 2**20)])


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "versions"
    folder.mkdir()
    return folder


def stored(root: Path) -> list[str]:
    return sorted(path.name for path in root.iterdir())


def files_of(version: BotVersion) -> dict[str, bytes]:
    return {
        path.relative_to(version.directory).as_posix(): path.read_bytes()
        for path in version.directory.rglob("*")
        if path.is_file()
    }


# ------------------------------------------------------------------------------------------------ kept


def test_a_single_python_file_is_a_version_named_by_its_content(root: Path) -> None:
    version = store_upload(BOT, "bot.py", Preset.PYTHON, root)
    assert version.directory == root / version.digest
    assert stored(root) == [version.digest]
    assert files_of(version) == {"bot.py": BOT}
    assert (version.command, version.protocol, version.entry) == (("python3", "bot.py"), "zmq", "bot.py")
    assert version.digest == version_digest(version.directory, Preset.PYTHON, version.command, version.protocol)
    started = BotCommand.in_directory("x", version.command, version.protocol, version.directory)
    assert started.command == ("python3", os.path.realpath(version.directory / "bot.py"))


def test_a_zip_of_one_folder_is_unwrapped_and_keeps_no_empty_folder(root: Path) -> None:
    upload = zipped(
        {
            "mybot/": b"",
            "mybot/bot.py": BOT,
            "mybot/lib/util.py": b"X = 1\n",
            "mybot/empty/": b"",
            "mybot/zeros.bin": bytes(512 * 1024),  # compresses 500 times over, but is below the ratio's floor
        }
    )
    version = store_upload(upload, "mybot.zip", Preset.PYTHON, root)
    assert files_of(version) == {"bot.py": BOT, "lib/util.py": b"X = 1\n", "zeros.bin": bytes(512 * 1024)}
    assert not (version.directory / "empty").exists()
    assert version.entry == "bot.py"


def test_a_zip_made_by_macos_finder_is_unwrapped_without_what_finder_adds(root: Path) -> None:
    upload = zipped(
        {
            "mybot/bot.py": BOT,
            "mybot/.DS_Store": b"\0\0\0\1Bud1",
            "__MACOSX/": b"",
            "__MACOSX/mybot/._bot.py": b"\0\5\26\7",
        }
    )
    version = store_upload(upload, "mybot.zip", Preset.PYTHON, root)
    assert files_of(version) == {"bot.py": BOT} and version.entry == "bot.py"


def test_a_zip_is_known_by_its_content_not_its_name(root: Path) -> None:
    version = store_upload(zipped({"main.py": BOT}), "upload.bin", Preset.PYTHON, root)
    assert files_of(version) == {"main.py": BOT}


def test_the_same_upload_twice_is_one_version(root: Path) -> None:
    first = store_upload(zipped({"bot.py": BOT}), "a.zip", Preset.PYTHON, root)
    again = store_upload(zipped({"bot.py": BOT}), "b.zip", Preset.PYTHON, root)
    assert again == first
    assert stored(root) == [first.digest]


def test_the_same_files_with_another_preset_protocol_or_mode_are_another_version(root: Path) -> None:
    python = store_upload(BOT, "bot.py", Preset.PYTHON, root)
    command = store_upload(BOT, "bot.py", Preset.COMMAND, root, command="python3 bot.py", protocol="zmq")
    stdio = store_upload(BOT, "bot.py", Preset.PYTHON, root, protocol="stdio")
    executable = store_upload(zipped({"bot.py": BOT}, {"bot.py": 0o100755}), "b.zip", Preset.PYTHON, root)
    assert python.command == command.command
    digests = {python.digest, command.digest, stdio.digest, executable.digest}
    assert len(digests) == 4
    assert stored(root) == sorted(digests)


def test_a_version_is_read_only(root: Path) -> None:
    upload = zipped({"bot.py": BOT, "lib/": b"", "lib/run.sh": b"#!/bin/sh\n"}, {"lib/run.sh": 0o100755})
    version = store_upload(upload, "bot.zip", Preset.PYTHON, root)
    modes = {
        path.relative_to(root).as_posix(): stat.S_IMODE(path.stat().st_mode)
        for path in (version.directory, *version.directory.rglob("*"))
    }
    digest = version.digest
    assert modes == {digest: 0o555, f"{digest}/bot.py": 0o444, f"{digest}/lib": 0o555, f"{digest}/lib/run.sh": 0o555}
    if os.geteuid() != 0:  # root writes through any mode bits
        with pytest.raises(PermissionError):
            (version.directory / "bot.py").write_bytes(b"changed")
        with pytest.raises(PermissionError):
            (version.directory / "new.py").write_bytes(b"added")


@pytest.mark.parametrize(
    ("preset", "files", "command", "protocol", "entry"),
    [
        (Preset.PYTHON, {"main.py": BOT, "util.py": b""}, ("python3", "main.py"), "zmq", "main.py"),
        (Preset.PYTHON, {"bot.py": BOT, "main.py": BOT}, ("python3", "bot.py"), "zmq", "bot.py"),
        (Preset.PYTHON, {"player.py": BOT, "README.md": b""}, ("python3", "player.py"), "zmq", "player.py"),
        (Preset.JAVA, {"Bot.java": b"class Bot {}", "Util.java": b""}, ("java", "Bot.java"), "stdio", "Bot.java"),
        (Preset.JAVA, {"Player.java": b"class Player {}"}, ("java", "Player.java"), "stdio", "Player.java"),
        (Preset.JAVA, {"player.jar": b"PK", "lib/x.jar": b""}, ("java", "-jar", "player.jar"), "stdio", "player.jar"),
        (Preset.NODE, {"index.js": b"", "util.js": b""}, ("node", "index.js"), "stdio", "index.js"),
        (Preset.NODE, {"player.js": b""}, ("node", "player.js"), "stdio", "player.js"),
        (Preset.C, {"bot": ELF_PROGRAM, "bot.c": b"int main;"}, ("./bot",), "zmq", "bot"),
        (Preset.C, {"player": ELF_PROGRAM, "player.c": b"int main;"}, ("./player",), "zmq", "player"),
    ],
)
def test_each_preset_finds_its_entry(
    root: Path, preset: Preset, files: dict[str, bytes], command: tuple[str, ...], protocol: str, entry: str
) -> None:
    version = store_upload(zipped(files), "bot.zip", preset, root)
    assert (version.preset, version.command, version.protocol, version.entry) == (preset, command, protocol, entry)
    started = BotCommand.in_directory("x", version.command, version.protocol, version.directory)
    assert os.path.realpath(version.directory / entry) in started.command


def test_the_c_preset_takes_the_only_executable_and_makes_it_runnable(root: Path) -> None:
    upload = zipped({"run.sh": b"#!/bin/sh\n", "notes.txt": b""}, {"run.sh": 0o100755})
    version = store_upload(upload, "bot.zip", Preset.C, root)
    assert (version.command, version.entry) == (("./run.sh",), "run.sh")
    single = store_upload(ELF_PROGRAM, "mybot", Preset.C, root)  # no mode bits in a single file: its header
    assert (single.command, single.entry) == (("./mybot",), "mybot")
    assert os.access(single.directory / "mybot", os.X_OK)
    started = BotCommand.in_directory("x", single.command, single.protocol, single.directory)
    assert started.command == (os.path.realpath(single.directory / "mybot"),)


def test_a_single_jar_is_kept_whole(root: Path) -> None:
    jar = zipped({"META-INF/MANIFEST.MF": b"Main-Class: Bot\n", "Bot.class": b"\xca\xfe\xba\xbe"})
    version = store_upload(jar, "bot.jar", Preset.JAVA, root)
    assert files_of(version) == {"bot.jar": jar}
    assert version.command == ("java", "-jar", "bot.jar")


def test_the_command_preset_runs_the_students_command(root: Path) -> None:
    upload = zipped({"bot/": b"", "bot/run.sh": b"#!/bin/sh\n", "bot/bot.py": BOT})  # one folder: unwrapped
    version = store_upload(upload, "bot.zip", Preset.COMMAND, root, command="./run.sh --fast 'a b'", protocol="stdio")
    assert (version.command, version.protocol, version.entry) == (("./run.sh", "--fast", "a b"), "stdio", "run.sh")
    assert os.access(version.directory / "run.sh", os.X_OK)  # a zip from Windows has no mode bits
    module = store_upload(BOT, "bot.py", Preset.COMMAND, root, command="python3 -u bot.py", protocol="zmq")
    assert (module.command, module.entry) == (("python3", "-u", "bot.py"), "bot.py")


# ------------------------------------------------------------------------------------------------ refused


def refused(root: Path, upload: bytes, filename: str = "bot.zip", preset: Preset = Preset.PYTHON, **kwargs: Any) -> str:
    """The refusal's message, once it is checked that root holds nothing (no version, no temporary folder)."""
    with pytest.raises(UploadRefused) as refusal:
        store_upload(upload, filename, preset, root, **kwargs)
    assert stored(root) == []
    return str(refusal.value)


def with_info(
    name: str, content: bytes = b"x", *, mode: int | None = None, alter: Callable[[zipfile.ZipInfo], None] | None = None
) -> bytes:
    """A zip of bot.py and one entry written by hand; `alter` changes its ZipInfo after it is written (the
    central directory, written last, is what is read)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("bot.py", BOT)
        info = zipfile.ZipInfo(name)
        if mode is not None:
            info.external_attr = mode << 16
        archive.writestr(info, content)
        if alter is not None:
            alter(info)
    return buffer.getvalue()


def encrypted(info: zipfile.ZipInfo) -> None:
    info.flag_bits |= 0x1


def duplicated(names: list[str]) -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w") as archive:
        warnings.simplefilter("ignore")  # zipfile warns of a duplicate name, and writes it
        for name in names:
            archive.writestr(name, BOT)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("upload", "problem"),
    [
        (with_info("link.py", b"/etc/passwd", mode=stat.S_IFLNK | 0o777), "'link.py' is a symbolic link"),
        (with_info("../escape.py"), "'../escape.py' has a '..'"),
        (with_info("lib/../../escape.py"), "'lib/../../escape.py' has a '..'"),
        (with_info("/etc/x"), "'/etc/x' is an absolute path"),
        (with_info("C:/x.py"), "'C:/x.py' starts with a drive letter"),
        (with_info("lib\\x.py"), "'lib\\\\x.py' has a backslash"),
        (with_info("tty", b"", mode=stat.S_IFCHR | 0o666), "'tty' is a character device"),
        (with_info("disk", b"", mode=stat.S_IFBLK | 0o666), "'disk' is a block device"),
        (with_info("pipe", b"", mode=stat.S_IFIFO | 0o666), "'pipe' is a FIFO"),
        (with_info("secret.py", b"x", alter=encrypted), "'secret.py' is encrypted"),
        (duplicated(["bot.py", "bot.py"]), "'bot.py' and 'bot.py' are the same path"),
        (duplicated(["bot.py", "./bot.py"]), "'bot.py' and './bot.py' are the same path"),
        (duplicated(["lib/x.py", "lib//x.py"]), "'lib/x.py' and 'lib//x.py' are the same path"),
        (duplicated(["lib", "lib/x.py"]), "'lib' is a file, but other entries are inside it"),
        (raw_zip([(b"bot\x00.py", *deflated(BOT))]), "'bot\\x00.py' has the control character '\\x00'"),
        (zipped({f"f{index}.py": b"" for index in range(201)}), "201 entries, more than the 200 allowed"),
        (zipped({"lib/": b""}), "holds no files"),
        (b"not a zip at all", "bot.zip is not a zip archive"),
        (zipped({"bot.py": BOT})[:-30], "bot.zip is not a zip archive"),  # its end cut off
    ],
)
def test_a_hostile_or_broken_zip_is_refused_naming_the_entry(root: Path, upload: bytes, problem: str) -> None:
    assert problem in refused(root, upload)


def test_a_bomb_is_refused_by_its_ratio(root: Path) -> None:
    message = refused(root, bomb(1024))
    assert "'zeros.bin' unpacks to 1024.0 MB from 1.0 MB, more than 200 times its packed size" in message
    assert "'zeros.bin' unpacks to 4.0 MB" in refused(root, bomb(4))  # below the size limit, still a bomb


def test_a_bomb_is_refused_by_its_unpacked_size_whatever_the_ratio(root: Path) -> None:
    message = refused(root, bomb(1024), limits=UploadLimits(max_ratio=10**9))
    assert "the zip unpacks to 1024.0 MB, more than the 50.0 MB allowed" in message


def test_declared_sizes_are_added_up(root: Path) -> None:
    upload = zipped({"bot.py": BOT, "a.bin": os.urandom(600), "b.bin": os.urandom(600)})
    assert "more than the 1.0 KB allowed" in refused(root, upload, limits=UploadLimits(max_unpacked_bytes=1024))


def test_a_lying_size_is_caught_while_unpacking_and_the_half_written_folder_removed(root: Path) -> None:
    stream, crc, _ = deflated(bytes(4 * 2**20))
    upload = raw_zip([(b"bot.py", *deflated(BOT)), (b"data.bin", stream, crc, 10)])  # 4 MB declared as 10 bytes
    message = refused(root, upload, limits=UploadLimits(max_unpacked_bytes=2**20))
    assert "'data.bin' is damaged" in message


def test_an_upload_too_large_is_refused_before_it_is_read(root: Path) -> None:
    message = refused(root, b"x" * 101, "bot.py", limits=UploadLimits(max_upload_bytes=100))
    assert "the upload is 101 bytes, more than the 100 bytes allowed" in message


@pytest.mark.parametrize(
    ("filename", "problem"),
    [
        ("", "is not a file's name"),
        (".", "is not a file's name"),
        ("..", "is not a file's name"),
        ("../bot.py", "has a / or \\ in it"),
        ("lib/bot.py", "has a / or \\ in it"),
        ("C:\\Users\\me\\bot.py", "has a / or \\ in it"),
        ("-rf.py", "starts with '-'"),
        ("bot\x00.py", "has the control character '\\x00'"),
        ("bot\n.py", "has the control character '\\n'"),
        ("b" * 300 + ".py", "longer than 255 bytes"),
    ],
)
def test_a_hostile_file_name_is_refused(root: Path, filename: str, problem: str) -> None:
    assert problem in refused(root, BOT, filename)


def test_no_entry_is_refused_listing_what_was_looked_for_and_found(root: Path) -> None:
    message = refused(root, zipped({"a.py": b"", "b.py": b"", "notes.txt": b""}))
    assert message == (
        "the python preset needs bot.py or main.py, or a single .py file, at the top level;"
        " the upload has a.py, b.py, notes.txt"
    )
    many = refused(root, zipped({f"src/f{index:02}.js": b"" for index in range(12)} | {"x": b""}), preset=Preset.NODE)
    assert many.endswith(
        "the upload has src/f00.js, src/f01.js, src/f02.js, src/f03.js, src/f04.js, src/f05.js,"
        " src/f06.js, src/f07.js, src/f08.js, src/f09.js and 3 more"
    )
    assert "needs a program named bot" in refused(root, zipped({"a": ELF_PROGRAM, "b": ELF_PROGRAM}), preset=Preset.C)
    assert "the upload has -m.py" in refused(root, zipped({"-m.py": BOT}))  # python3 would take it as an option


@pytest.mark.parametrize(
    ("preset", "arguments", "problem"),
    [
        (Preset.PYTHON, {"protocol": "http"}, "the protocol must be zmq or stdio, not 'http'"),
        (Preset.COMMAND, {"command": "python3 bot.py"}, "the command preset needs its protocol"),
        (Preset.COMMAND, {"command": "  ", "protocol": "zmq"}, "needs a command"),
        (Preset.COMMAND, {"command": "python3 'bot.py", "protocol": "zmq"}, "cannot be read"),
        (Preset.COMMAND, {"command": "./run.sh", "protocol": "zmq"}, "runs ./run.sh, which is not a file"),
        (Preset.PYTHON, {"command": "python3 other.py"}, "the python preset chooses its own command"),
        ("cobol", {}, "unknown language preset 'cobol'"),
    ],
)
def test_a_wrong_choice_is_refused(root: Path, preset: Preset, arguments: dict[str, str], problem: str) -> None:
    assert problem in refused(root, BOT, "bot.py", preset, **arguments)

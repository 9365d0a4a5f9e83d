"""One upload (a single source file, or a zip of a bot's folder) kept as an immutable bot version named by its
content, or refused with a message for the student while nothing is written.

An upload comes from a student's browser, so everything about it is hostile until checked: a zip's names may
climb out of the folder, its entries may be links or devices, its sizes may lie, it may be a bomb. Every check
that needs no unpacking is made before anything is written; the rest are made while unpacking into a temporary
folder inside `root`, which a refusal or any error removes. Only a finished, sealed (read-only) tree is renamed
to `root/<digest>`, in one step, so a version is either all there or not there at all, and never changes after.

The digest (a version's name) is the SHA-256, in hex, of this manifest as JSON with sorted keys, no spaces and
only ASCII (`json.dumps(manifest, sort_keys=True, separators=(",", ":"), ensure_ascii=True)`, encoded as UTF-8)::

    {"format": "loveletter-arena/bot-version/1",
     "preset": "python", "command": ["python3", "bot.py"], "protocol": "zmq",
     "files": [[path, sha256, executable], ...]}

where `files` lists every file of the unpacked tree, sorted by path: its path relative to the version's folder
in POSIX form ("lib/util.py"), the SHA-256 of its bytes in hex, and whether it is executable (true or false).
Folders are not listed: a version keeps no empty folder, so its files alone are its tree. The preset, command
and protocol are in it because they are part of what the version runs: the same files uploaded as another
preset are another version. `version_digest` computes it from a folder on disk.
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import os
import re
import shlex
import shutil
import stat
import tempfile
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path, PurePosixPath

from arena.players.values import Transport

DIGEST_FORMAT = "loveletter-arena/bot-version/1"
"""The manifest's first field: a later change to the manifest's form changes it, so old and new names never mix."""
RATIO_FLOOR = 2**20
"""An entry is judged by its compression ratio only above this unpacked size: small text compresses well too."""
CHUNK = 2**16
"""Bytes unpacked at a time: the running count of bytes written stops a lying archive within one chunk."""
NAME_MAX = 255
"""The longest file name (in UTF-8 bytes) that Linux file systems take."""
LISTED = 10
"""File names a refusal lists at most: enough to see what was uploaded, short enough to read."""
ELF = b"\x7fELF"


class Preset(StrEnum):
    """The language a student says the upload is in: it decides how the bot is started."""

    PYTHON = "python"
    JAVA = "java"
    NODE = "node"
    C = "c"
    COMMAND = "command"


@dataclass(frozen=True, slots=True)
class UploadLimits:
    """How much one upload may be: a ladder's disk and the server's memory are shared by every student."""

    max_upload_bytes: int = 5 * 2**20
    """The upload itself, zip or file."""
    max_files: int = 200
    """Entries in a zip, folders included."""
    max_unpacked_bytes: int = 50 * 2**20
    """The sum of the unpacked sizes: a zip bomb stops here, even one whose declared sizes lie."""
    max_ratio: int = 200
    """An entry larger than RATIO_FLOOR unpacked may be at most this many times its compressed size."""


DEFAULT_LIMITS = UploadLimits()


class UploadRefused(Exception):
    """An upload not kept. Its str() is shown to the student as it is: it says what is wrong, and names the entry."""


@dataclass(frozen=True, slots=True)
class BotVersion:
    """A stored upload: the folder of its files and how to start it, as a tournament file would say it."""

    digest: str
    """The SHA-256 of the manifest (see the module's docstring): the version's name and its folder's."""
    directory: Path
    """root/<digest>: the unpacked files, read-only for everyone."""
    preset: Preset
    command: tuple[str, ...]
    """As a tournament file's `command:`, its arguments naming files relative to `directory`
    (BotCommand.in_directory makes them absolute)."""
    protocol: str
    """A Transport value: "zmq" or "stdio"."""
    entry: str
    """The file the command runs, relative to `directory` ("" for a command preset naming none of its files)."""


@dataclass(frozen=True, slots=True)
class _Member:
    """A checked zip entry: where it goes (path parts under the version's folder) and what it is."""

    info: zipfile.ZipInfo
    parts: tuple[str, ...]
    is_dir: bool
    executable: bool


def store_upload(
    data: bytes,
    filename: str,
    preset: Preset,
    root: Path,
    limits: UploadLimits = DEFAULT_LIMITS,
    command: str | None = None,
    protocol: str | None = None,
) -> BotVersion:
    """Check an upload and keep it as root/<digest>, or raise UploadRefused having written nothing.

    A zip is known by its content (a jar is kept whole, being a zip by design); anything else is one file named
    `filename`. The same upload twice gives the version kept the first time. Errors that are not the upload's
    fault (a full disk) are raised as they are, also having written nothing."""
    if len(data) > limits.max_upload_bytes:
        raise UploadRefused(f"the upload is {_size(len(data))}, more than the {_size(limits.max_upload_bytes)} allowed")
    if not data:
        raise UploadRefused("the upload is empty")
    preset = _preset(preset)
    written = _command(preset, command)  # the command first: with neither given, the command is missed first
    transport = _protocol(preset, protocol)
    archive = _archive(data, filename)
    members = _members(archive, limits) if archive is not None else []
    name = _plain_name(filename) if archive is None else ""
    root.mkdir(parents=True, exist_ok=True)
    temporary = Path(tempfile.mkdtemp(prefix=".upload-", dir=root))
    try:
        if archive is not None:
            _extract(archive, members, temporary, limits)
        else:
            _write(temporary / name, data, executable=False)
        started, entry = _start(preset, temporary, written)
        digest = version_digest(temporary, preset, started, transport)
        version = BotVersion(digest, root / digest, preset, started, transport, entry)
        _seal(temporary)
        if version.directory.exists():  # the same content again: the version kept the first time stands
            _remove(temporary)
            return version
        try:
            os.rename(temporary, version.directory)
        except OSError as error:  # the same content stored meanwhile by another request
            if error.errno not in (errno.EEXIST, errno.ENOTEMPTY) or not version.directory.is_dir():
                raise
            _remove(temporary)
        return version
    except BaseException:
        _remove(temporary)
        raise


def version_digest(directory: Path, preset: Preset, command: Sequence[str], protocol: str) -> str:
    """The name of the version whose files are in `directory` (the module's docstring defines it): recomputed from
    a stored version, it shows whether the version is still what was uploaded."""
    files: list[tuple[str, str, bool]] = []
    for folder, folders, names in os.walk(directory):
        for name in (*folders, *names):
            path = Path(folder, name)
            mode = path.lstat().st_mode
            if stat.S_ISDIR(mode):
                continue
            if not stat.S_ISREG(mode):
                raise ValueError(f"{path} is neither a file nor a folder: a bot version holds no other kind")
            content = hashlib.sha256()
            with path.open("rb") as source:
                while chunk := source.read(CHUNK):
                    content.update(chunk)
            files.append((path.relative_to(directory).as_posix(), content.hexdigest(), bool(mode & stat.S_IXUSR)))
    manifest = {
        "format": DIGEST_FORMAT,
        "preset": Preset(preset).value,
        "command": list(command),
        "protocol": Transport(protocol).value,
        "files": [list(file) for file in sorted(files)],
    }
    text = json.dumps(manifest, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ------------------------------------------------------------------------------------------------ the choices


def _preset(preset: Preset | str) -> Preset:
    """The preset as given; a web form's string is taken too, since the caller may pass the field as it came."""
    try:
        return Preset(preset)
    except ValueError:
        known = ", ".join(p.value for p in Preset)
        raise UploadRefused(f"unknown language preset {preset!r} (known: {known})") from None


def _protocol(preset: Preset, protocol: str | None) -> str:
    """The protocol given, else the preset's own: the SDKs' usual one for its language."""
    names = " or ".join(transport.value for transport in Transport)
    if protocol is None:
        if preset is Preset.COMMAND:
            raise UploadRefused(f"the command preset needs its protocol: {names}")
        return Transport.STDIO.value if preset in (Preset.JAVA, Preset.NODE) else Transport.ZMQ.value
    if protocol not in tuple(Transport):
        raise UploadRefused(f"the protocol must be {names}, not {protocol!r}")
    return Transport(protocol).value


def _command(preset: Preset, command: str | None) -> tuple[str, ...] | None:
    """The command preset's command, split as a shell would; the other presets choose their own, so one given to
    them would be silently ignored: refused instead."""
    if preset is not Preset.COMMAND:
        if command is not None and command.strip():
            raise UploadRefused(f"the {preset} preset chooses its own command: choose the command preset to give one")
        return None
    if command is None or not command.strip():
        raise UploadRefused("the command preset needs a command, e.g. python3 bot.py")
    try:
        parts = tuple(shlex.split(command))
    except ValueError as error:
        raise UploadRefused(f"the command {command!r} cannot be read: {error}") from None
    if not parts:
        raise UploadRefused("the command preset needs a command, e.g. python3 bot.py")
    return parts


LOOKS_FOR = {
    Preset.PYTHON: "bot.py or main.py, or a single .py file, at the top level",
    Preset.JAVA: "Bot.java or Main.java, a single .java file, or a single .jar file, at the top level",
    Preset.NODE: "bot.js, main.js or index.js, or a single .js file, at the top level",
    Preset.C: "a program named bot, or a single executable (or ELF) file, at the top level",
}
"""What each preset's entry is, in the words of a refusal."""


def _start(preset: Preset, directory: Path, command: tuple[str, ...] | None) -> tuple[tuple[str, ...], str]:
    """The command that starts the bot and the file it runs, found in the unpacked tree; the file is made
    executable where the command runs it directly."""
    if preset is Preset.COMMAND:
        assert command is not None
        return command, _command_entry(directory, command)
    # A name starting with '-' would be read as an option by python3, java or node: never an entry.
    top = sorted(path.name for path in directory.iterdir() if path.is_file() and not path.name.startswith("-"))
    found = _found(preset, directory, top)
    if found is None:
        raise UploadRefused(f"the {preset} preset needs {LOOKS_FOR[preset]}; the upload has {_listing(directory)}")
    started, entry = found
    if preset is Preset.C:
        _make_executable(directory / entry)
    return started, entry


def _found(preset: Preset, directory: Path, top: Sequence[str]) -> tuple[tuple[str, ...], str] | None:
    """A preset's command and entry, from the names of the files at the top level (None: no entry)."""
    if preset is Preset.PYTHON:
        entry = _pick(top, ("bot.py", "main.py"), ".py")
        return None if entry is None else (("python3", entry), entry)
    if preset is Preset.JAVA:
        entry = _pick(top, ("Bot.java", "Main.java"), ".java")
        if entry is not None:
            return ("java", entry), entry  # Java 11's launcher compiles and runs a single source file
        entry = _only([name for name in top if name.endswith(".jar")])
        return None if entry is None else (("java", "-jar", entry), entry)
    if preset is Preset.NODE:
        entry = _pick(top, ("bot.js", "main.js", "index.js"), ".js")
        return None if entry is None else (("node", entry), entry)
    entry = "bot" if "bot" in top else _only([name for name in top if _is_program(directory / name)])
    # With a slash, BotCommand.in_directory takes the program in the bot's folder rather than on PATH.
    return None if entry is None else ((f"./{entry}",), entry)


def _pick(names: Sequence[str], preferred: Sequence[str], suffix: str) -> str | None:
    """The first preferred name present, else the only name ending in suffix."""
    for name in preferred:
        if name in names:
            return name
    return _only([name for name in names if name.endswith(suffix)])


def _only(names: Sequence[str]) -> str | None:
    return names[0] if len(names) == 1 else None


def _is_program(path: Path) -> bool:
    """Executable by its mode bits (a zip from Linux or macOS keeps them) or by its header (one from Windows
    does not)."""
    if path.stat().st_mode & stat.S_IXUSR:
        return True
    with path.open("rb") as source:
        return source.read(len(ELF)) == ELF


def _command_entry(directory: Path, command: tuple[str, ...]) -> str:
    """The first of the command's words that names a file of the upload (""): its program, if written with a
    slash, must be one, and is made executable (a zip from Windows loses the bit)."""
    program = command[0]
    if "/" in program and not program.startswith("/"):
        relative = _relative(program)
        if relative is None or not (directory / relative).is_file():
            raise UploadRefused(
                f"the command runs {program}, which is not a file of the upload; the upload has {_listing(directory)}"
            )
        _make_executable(directory / relative)
        return relative
    for word in command[1:]:
        relative = _relative(word)
        if relative is not None and (directory / relative).is_file():
            return relative
    return ""


def _relative(word: str) -> str | None:
    """word as a path inside the version's folder ("./run.sh" is "run.sh"), or None if it cannot be one."""
    path = PurePosixPath(word)
    if not word or path.is_absolute() or ".." in path.parts or not path.parts:
        return None
    return path.as_posix()


def _make_executable(path: Path) -> None:
    path.chmod(0o755)


def _listing(directory: Path) -> str:
    """The upload's files for a refusal: at most LISTED of them."""
    files = sorted(path.relative_to(directory).as_posix() for path in directory.rglob("*") if path.is_file())
    if not files:
        return "no files"
    shown = ", ".join(files[:LISTED])
    return shown + (f" and {len(files) - LISTED} more" if len(files) > LISTED else "")


# ------------------------------------------------------------------------------------------------ the upload


def _archive(data: bytes, filename: str) -> zipfile.ZipFile | None:
    """The upload as a zip, known by its content (a browser's name for it may be anything), or None for a single
    file. A jar is a zip too, but one that the java preset runs whole."""
    if filename.lower().endswith(".jar") or not zipfile.is_zipfile(io.BytesIO(data)):
        if filename.lower().endswith(".zip"):
            raise UploadRefused(f"{filename} is not a zip archive that can be read: zip the folder again")
        return None
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, EOFError, NotImplementedError, OverflowError) as error:
        raise UploadRefused(f"the zip archive cannot be read ({error}): zip the folder again") from None


def _plain_name(filename: str) -> str:
    """A single file's name, which becomes a file in the version's folder: a plain name, never a path."""
    shown = repr(filename[:100])
    if filename in ("", ".", ".."):
        raise UploadRefused(f"the file name {shown} is not a file's name")
    if "/" in filename or "\\" in filename:
        raise UploadRefused(f"the file name {shown} has a / or \\ in it: upload the file itself, named plainly")
    if filename.startswith("-"):
        raise UploadRefused(f"the file name {shown} starts with '-', which a command would read as an option")
    _check_part(filename, f"the file name {shown}")
    return filename


def _check_part(part: str, shown: str) -> None:
    """One component of a path: no control characters (NUL ends a name in C), not too long, valid text."""
    control = next((char for char in part if ord(char) < 32 or ord(char) == 127), None)
    if control is not None:
        raise UploadRefused(f"{shown} has the control character {control!r} in its name")
    try:
        encoded = part.encode("utf-8")
    except UnicodeEncodeError:
        raise UploadRefused(f"{shown} is not a valid name (it is not Unicode text)") from None
    if len(encoded) > NAME_MAX:
        raise UploadRefused(f"{shown} has a name longer than {NAME_MAX} bytes")


def _members(archive: zipfile.ZipFile, limits: UploadLimits) -> list[_Member]:
    """Every entry checked from the zip's directory, before anything is written; a single top-level folder
    unwrapped, since students zip their bot's folder rather than its contents."""
    infos = archive.infolist()
    if len(infos) > limits.max_files:
        raise UploadRefused(
            f"the zip has {len(infos)} entries, more than the {limits.max_files} allowed (folders count)"
        )
    members: list[_Member] = []
    seen: dict[tuple[str, ...], str] = {}
    for info in infos:
        member = _member(info, limits)
        if member is None or member.parts[0] == "__MACOSX" or member.parts[-1] == ".DS_Store":
            continue  # the folder "./", or what macOS's Finder adds to every zip it makes
        if member.parts in seen:
            first = seen[member.parts]
            raise UploadRefused(f"entries {_shown(first)} and {_shown(info.orig_filename)} are the same path")
        seen[member.parts] = info.orig_filename
        members.append(member)
    folders = {member.parts[:depth] for member in members for depth in range(1, len(member.parts))}
    for member in members:
        if not member.is_dir and member.parts in folders:
            raise UploadRefused(f"entry {_shown(member.info.orig_filename)} is a file, but other entries are inside it")
    declared = sum(member.info.file_size for member in members if not member.is_dir)
    if declared > limits.max_unpacked_bytes:
        raise UploadRefused(
            f"the zip unpacks to {_size(declared)}, more than the {_size(limits.max_unpacked_bytes)} allowed"
        )
    return _unwrap(members)


def _member(info: zipfile.ZipInfo, limits: UploadLimits) -> _Member | None:
    """One entry checked: its name, its kind, its encryption and its compression ratio (None: the folder "./")."""
    raw = info.orig_filename  # as in the archive: zipfile's filename cuts it at a NUL
    shown = f"entry {_shown(raw)}"
    if "\\" in raw:
        raise UploadRefused(f"{shown} has a backslash in its name: zip the folder with a tool that writes / paths")
    if raw.startswith("/"):
        raise UploadRefused(f"{shown} is an absolute path: it would land outside the bot's folder")
    if re.match(r"[A-Za-z]:", raw):
        raise UploadRefused(f"{shown} starts with a drive letter: it would land outside the bot's folder")
    parts = tuple(part for part in raw.split("/") if part not in ("", "."))
    if ".." in parts:
        raise UploadRefused(f"{shown} has a '..' in its path: it would land outside the bot's folder")
    for part in parts:
        _check_part(part, shown)
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    if stat.S_ISLNK(mode):
        raise UploadRefused(f"{shown} is a symbolic link: a bot version holds files and folders only")
    if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
        raise UploadRefused(f"{shown} is {_kind(kind)}: a bot version holds files and folders only")
    is_dir = raw.endswith("/") or kind == stat.S_IFDIR
    if not parts:
        if is_dir:
            return None
        raise UploadRefused(f"{shown} has no name")
    if info.flag_bits & 0x1:
        raise UploadRefused(f"{shown} is encrypted: zip the folder again without a password")
    if not is_dir and info.file_size > RATIO_FLOOR and info.file_size > limits.max_ratio * info.compress_size:
        raise UploadRefused(
            f"{shown} unpacks to {_size(info.file_size)} from {_size(info.compress_size)}, more than"
            f" {limits.max_ratio} times its packed size (a zip bomb?)"
        )
    return _Member(info, parts, is_dir, not is_dir and bool(mode & 0o111))


def _unwrap(members: list[_Member]) -> list[_Member]:
    """The members of the only top-level folder, moved up to the top, if every entry is inside that folder."""
    tops = {member.parts[0] for member in members}
    if len(tops) != 1 or not all(len(member.parts) > 1 or member.is_dir for member in members):
        return members
    return [
        _Member(member.info, member.parts[1:], member.is_dir, member.executable)
        for member in members
        if len(member.parts) > 1
    ]


def _extract(archive: zipfile.ZipFile, members: list[_Member], target: Path, limits: UploadLimits) -> None:
    """Unpack the files into target, counting the bytes as they come: an archive whose declared sizes lie stops
    at the limit all the same. Folders are made as the files need them; empty ones are not kept."""
    base = os.path.realpath(target)
    unpacked = 0
    for member in members:
        if member.is_dir:
            continue
        shown = f"entry {_shown(member.info.orig_filename)}"
        path = target.joinpath(*member.parts)
        if not os.path.realpath(path).startswith(base + os.sep):
            raise UploadRefused(f"{shown} would land outside the bot's folder")
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with archive.open(member.info) as source, _created(path, member.executable) as out:
                while chunk := source.read(CHUNK):
                    unpacked += len(chunk)
                    if unpacked > limits.max_unpacked_bytes:
                        raise UploadRefused(
                            f"the zip unpacks to more than the {_size(limits.max_unpacked_bytes)} allowed"
                            f" (passed while unpacking {shown}, which declared {_size(member.info.file_size)})"
                        )
                    out.write(chunk)
        except NotImplementedError:
            raise UploadRefused(
                f"{shown} is compressed in a way this server cannot unpack: zip it again with the usual deflate"
            ) from None
        except (zipfile.BadZipFile, zlib.error, EOFError, ValueError) as error:
            raise UploadRefused(f"{shown} is damaged ({error}): zip the folder again") from None
        path.chmod(0o755 if member.executable else 0o644)
    if not any(target.iterdir()):
        raise UploadRefused("the zip holds no files")


def _created(path: Path, executable: bool) -> io.BufferedWriter:
    """A new file, never one already there nor through a link."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    return os.fdopen(os.open(path, flags, 0o755 if executable else 0o644), "wb")


def _write(path: Path, data: bytes, *, executable: bool) -> None:
    with _created(path, executable) as out:
        out.write(data)
    path.chmod(0o755 if executable else 0o644)


# ------------------------------------------------------------------------------------------------ the folder


def _seal(directory: Path) -> None:
    """Read-only for everyone, the folder itself too: no later step (a check, a match) can change a version."""
    for folder, _, names in os.walk(directory, topdown=False):
        for name in names:
            path = Path(folder, name)
            path.chmod(0o555 if path.stat().st_mode & stat.S_IXUSR else 0o444)
        os.chmod(folder, 0o555)


def _remove(directory: Path) -> None:
    """Remove a temporary folder, sealed or not (a sealed folder's entries cannot be deleted until it is writable)."""
    if not directory.exists():
        return
    for folder, _, _ in os.walk(directory):
        os.chmod(folder, 0o755)
    shutil.rmtree(directory)


# ------------------------------------------------------------------------------------------------ words


def _shown(name: str) -> str:
    """A name from the archive as a refusal quotes it: its control characters visible, a long one cut."""
    return repr(name if len(name) <= 100 else name[:100] + "...")


def _kind(kind: int) -> str:
    kinds = {
        stat.S_IFCHR: "a character device",
        stat.S_IFBLK: "a block device",
        stat.S_IFIFO: "a FIFO (named pipe)",
        stat.S_IFSOCK: "a socket",
    }
    return kinds.get(kind, f"a special file (type {kind:#o})")


def _size(count: int) -> str:
    if count >= 2**20:
        return f"{count / 2**20:.1f} MB"
    if count >= 2**10:
        return f"{count / 2**10:.1f} KB"
    return f"{count} bytes"

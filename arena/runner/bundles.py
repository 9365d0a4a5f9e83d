"""A bot's directory as one blob for a cluster worker, and back again.

Packing never follows a link: a link that stays inside the directory travels as a link, one that leads
out is left behind and named to the caller (a strict sandbox shows a bot nothing outside its directory,
so it could not follow that link either, and following it would ship files of the arena's machine).
Whatever cannot travel (a file over the cap, a file the arena cannot read, a socket, FIFO or device) is
refused before the first match, naming the bot and the file.

Unpacking checks every member itself, on every Python (tarfile's extraction filters came with 3.11.4):
relative names without `..`, regular files, directories and links only, no set-id bits, files written
before any link exists and each link checked to stay inside once made.
"""

from __future__ import annotations

import io
import os
import shutil
import stat
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from arena.errors import UsageError

SKIPPED = ("__pycache__", ".git")
MIB = 1024 * 1024


class BundleError(UsageError):
    """A bot directory that cannot be shipped, or a blob that is not one this module packed."""


@dataclass(frozen=True, slots=True)
class DroppedLink:
    path: str
    """Relative to the bot's directory."""
    target: str


@dataclass(frozen=True, slots=True)
class Bundle:
    blob: bytes
    """tar.gz bytes."""
    dropped: tuple[DroppedLink, ...]
    """Links leading out of the directory, left behind."""


def pack(directory: Path, *, bot: str, cap_mb: int, skip: Path | None = None) -> Bundle:
    """The bot's directory as tar.gz bytes, refused past `cap_mb` packed. `skip` (the tournament's output,
    when it lies inside) stays out."""
    directory = Path(os.path.abspath(directory))
    real_root = Path(os.path.realpath(directory))
    cap = cap_mb * MIB
    buffer = io.BytesIO()
    dropped: list[DroppedLink] = []

    def refuse(path: Path, problem: str) -> BundleError:
        return BundleError(f"bot {bot}: {path} {problem}; a cluster run ships the bot's directory to every worker")

    def unreadable(error: OSError) -> None:
        raise refuse(Path(error.filename or directory), f"cannot be read ({error.strerror})")

    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=6) as archive:
        for here, dirs, files in os.walk(directory, onerror=unreadable):
            base = Path(here)
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED and (skip is None or base / d != skip))
            for name in [*dirs, *sorted(files)]:
                path = base / name
                member = str(path.relative_to(directory))
                info = os.lstat(path)
                entry = tarfile.TarInfo(member)
                entry.mtime = int(info.st_mtime)
                entry.mode = stat.S_IMODE(info.st_mode) & 0o755
                if stat.S_ISLNK(info.st_mode):
                    target = os.readlink(path)
                    if _leads_out(member, target) or not Path(os.path.realpath(path)).is_relative_to(real_root):
                        dropped.append(DroppedLink(member, target))
                        continue
                    entry.type, entry.linkname = tarfile.SYMTYPE, target
                    archive.addfile(entry)
                elif stat.S_ISDIR(info.st_mode):
                    entry.type = tarfile.DIRTYPE
                    archive.addfile(entry)
                elif stat.S_ISREG(info.st_mode):
                    if info.st_size > cap:
                        raise refuse(path, f"is {info.st_size / MIB:.0f} MB, over executor.max_bot_mb ({cap_mb} MB)")
                    try:
                        stream = path.open("rb")
                    except OSError as error:
                        raise refuse(path, f"cannot be read ({error.strerror})") from None
                    with stream:
                        entry.size = info.st_size
                        archive.addfile(entry, stream)
                    if buffer.tell() > cap:
                        raise refuse(
                            directory, f"is over executor.max_bot_mb ({cap_mb} MB) packed, at {member}: make it smaller"
                        )
                else:
                    raise refuse(path, "is a special file (a socket, FIFO or device), which cannot be shipped")
    if buffer.tell() > cap:
        raise refuse(directory, f"is over executor.max_bot_mb ({cap_mb} MB) packed: make it smaller")
    return Bundle(buffer.getvalue(), tuple(dropped))


def unpack(blob: bytes, target: Path) -> None:
    """Unpack a blob made by pack() into the new directory `target`."""
    target.mkdir(mode=0o755)
    real_root = Path(os.path.realpath(target))
    links: list[tuple[Path, str]] = []
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as archive:
        for member in archive:
            path = target / _relative(member.name)
            if member.isdir():
                path.mkdir(mode=0o755, parents=True, exist_ok=True)
            elif member.isreg():
                path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
                mode = 0o755 if member.mode & 0o111 else 0o644
                source = archive.extractfile(member)
                assert source is not None  # a regular file's member always has its data
                try:
                    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
                except FileExistsError:
                    raise BundleError(f"a bot blob names {member.name} twice") from None
                with source, os.fdopen(fd, "wb") as out:
                    shutil.copyfileobj(source, out)
                os.chmod(path, mode)  # the umask may have taken bits the bot's own user needs
            elif member.issym():
                if os.path.isabs(member.linkname):
                    raise BundleError(f"a bot blob's link {member.name} leads to an absolute path")
                links.append((path, member.linkname))
            else:
                raise BundleError(f"a bot blob holds {member.name}, which is not a file, directory or link")
    # A link is judged once all exist: one that stays inside when made may lead out through a link made after it.
    made: list[Path] = []
    try:
        for path, linkname in sorted(links, key=lambda link: len(link[0].parts)):
            _make_parents(target, path)
            try:
                os.symlink(linkname, path)
            except FileExistsError:
                raise BundleError(f"a bot blob names {path.relative_to(target)} twice") from None
            made.append(path)
        for path in made:
            if not Path(os.path.realpath(path)).is_relative_to(real_root):
                raise BundleError(f"a bot blob's link {path.relative_to(target)} leads out of the bot's directory")
    except BundleError:
        for path in made:
            path.unlink()
        raise


def _make_parents(target: Path, path: Path) -> None:
    """The directories above `path`, made through no link: a link made before may lead anywhere."""
    current = target
    for part in path.relative_to(target).parts[:-1]:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            raise BundleError(f"a bot blob's link {path.relative_to(target)} lies beyond {current.relative_to(target)}")
        current.mkdir(mode=0o755, exist_ok=True)


def _leads_out(member: str, target: str) -> bool:
    """A link leads out when its text does, whatever it meets on the way: on a worker the directory has
    another name, so a link out and back in through the directory's own name would not come back."""
    if os.path.isabs(target):
        return True
    return os.path.normpath(os.path.join(os.path.dirname(member), target)).split(os.sep)[0] == os.pardir


def _relative(name: str) -> PurePosixPath:
    path = PurePosixPath(name)
    if not name or path.is_absolute() or ".." in path.parts or "\0" in name:
        raise BundleError(f"a bot blob holds the unsafe name {name!r}")
    return path

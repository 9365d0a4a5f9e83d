"""Showing a bot with a UID of its own what it needs, at the same paths, where the host closes the way.

As root every bot runs as a UID that owns nothing, so one directory of mode 0700 on the way (/root, where
pyenv puts Python; a `mktemp -d` folder holding the bots) keeps it from its interpreter or its own files,
though the arena's user reads them. Before the child drops to that UID it is still root: it enters a mount
namespace of its own and there

- covers each closed directory on the way with a small tmpfs (mode 0755) that holds only the way on, so
  nothing else of that directory shows;
- binds back, at its own path, each thing the bot needs (the arena's Python, bwrap, the bot's directory);
- shows a closed directory that the bot needs entry by entry, and a closed file as a readable copy kept in
  the bot's private tree.

The host is never changed, and nobody else sees these mounts. plan() does the looking, in the parent; the
child only makes the system calls of the View (child.py). bwrap, started by the bot's UID inside that
namespace, then finds every source of its own binds where the arena sees it.
"""

from __future__ import annotations

import logging
import os
import shutil
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from arena.sandbox.errors import SandboxError

log = logging.getLogger(__name__)

MAX_WALK = 20_000
"""Entries of a bot's directory looked at for closed files; past that the rest is shown as it is."""
MAX_STEPS = 4_000
"""Mounts and mount points of one view: a directory closed entry by entry with more than that is refused."""
MAX_COPY_BYTES = 256 * 1024 * 1024
"""Closed files copied for one bot, in bytes."""
TMPFS_OPTIONS = b"mode=0755,size=1m"


@dataclass(frozen=True, slots=True)
class Need:
    """A path the bot must reach. deep: the bot's own files, where a closed file anywhere inside is shown too
    (elsewhere, the arena's Python for instance, only the way to the path and the path itself are opened).
    given: a directory handed to the bot's UID (its workdir, its socket's): only the way to it is opened."""

    path: Path
    deep: bool = False
    given: bool = False


class StepKind(Enum):
    TMPFS = "tmpfs"  # cover a closed directory
    MKDIR = "mkdir"  # a directory inside a cover
    FILE = "file"  # an empty file inside a cover: the mount point of a file
    SYMLINK = "symlink"  # a symbolic link of the host, recreated inside a cover (target: the link's text)
    BIND = "bind"  # View.sources[source] bound on path


@dataclass(frozen=True, slots=True)
class Step:
    kind: StepKind
    path: bytes
    target: bytes = b""
    source: int = -1


@dataclass(frozen=True, slots=True)
class View:
    """What the child does: open every source (O_PATH, before anything is covered), then the steps in order."""

    sources: tuple[bytes, ...] = ()
    steps: tuple[Step, ...] = ()
    closed: tuple[Path, ...] = ()
    """The closed paths that made the view needed, first met first: for messages."""

    def __bool__(self) -> bool:
        return bool(self.steps)


EMPTY = View()


class _Kind(Enum):
    COVER = "cover"
    BIND = "bind"
    LINK = "link"


@dataclass(frozen=True, slots=True)
class _Node:
    kind: _Kind
    source: Path | None = None
    directory: bool = True
    link: str = ""


def _bits(info: os.stat_result, uid: int) -> tuple[int, int]:
    """The read and search/execute bits of the permission class that user uid (in group uid alone) falls in."""
    if info.st_uid == uid:
        return stat.S_IRUSR, stat.S_IXUSR
    if info.st_gid == uid:
        return stat.S_IRGRP, stat.S_IXGRP
    return stat.S_IROTH, stat.S_IXOTH


def passable(info: os.stat_result, uid: int) -> bool:
    """Whether user uid (in group uid and no other: a bot's UID) may pass through this directory."""
    _, search = _bits(info, uid)
    return bool(info.st_mode & search)


def readable(info: os.stat_result, uid: int) -> bool:
    """Whether user uid may use this entry as its owner may: list and pass a directory, read a file, and run it
    if its owner may."""
    read, execute = _bits(info, uid)
    runs = stat.S_ISDIR(info.st_mode) or (stat.S_ISREG(info.st_mode) and info.st_mode & stat.S_IXUSR)
    needed = read | execute if runs else read
    return info.st_mode & needed == needed


class _Planner:
    def __init__(self, uid: int, box: Path) -> None:
        self.uid = uid
        self.box = box
        self.nodes: dict[Path, _Node] = {}
        self.closed: list[Path] = []
        self.copied_bytes = 0
        self.copies = 0

    def route(self, need: Need) -> None:
        """Open the way to the need's path, then (unless it is given to the bot) the path itself."""
        form, deep = need.path, need.deep
        covered = False  # whether the parent of `here` is a cover of ours
        for depth in range(2, len(form.parts) + 1):
            here = Path(*form.parts[:depth])
            node = self.nodes.get(here)
            if node is not None and here == form and deep and node.kind is _Kind.BIND and node.source == here:
                dirty = self._closed_within(here)  # shown whole for another need, but closed files inside?
                if dirty:
                    del self.nodes[here]
                    self._expose(here, os.lstat(here), covered, dirty)
                return
            if node is not None:
                if node.kind is _Kind.LINK or here == form:
                    return  # a link (the resolved form takes its way), or already shown
                covered = node.kind is _Kind.COVER  # inside a bind the host's own entries follow
                continue
            try:
                info = os.lstat(here)
            except OSError:
                return  # nothing there: nothing to show
            if stat.S_ISLNK(info.st_mode):
                if covered:
                    self.nodes[here] = _Node(_Kind.LINK, link=os.readlink(here))
                return  # the resolved form is routed too
            if here == form:
                if need.given:
                    if covered:
                        self.nodes[here] = _Node(_Kind.BIND, source=here)
                else:
                    self._expose(here, info, covered, self._closed_within(here) if deep else None)
                return
            if not stat.S_ISDIR(info.st_mode):
                return
            if covered:
                self.nodes[here] = _Node(_Kind.COVER)
            elif not passable(info, self.uid):
                self.closed.append(here)
                self.nodes[here] = _Node(_Kind.COVER)
                covered = True

    def _expose(self, here: Path, info: os.stat_result, covered: bool, dirty: set[Path] | None) -> None:
        """Make here usable: bound as it is, or covered and shown entry by entry, or copied."""
        clean = readable(info, self.uid) and (dirty is None or here not in dirty)
        if stat.S_ISDIR(info.st_mode):
            if clean:
                if covered:
                    self.nodes[here] = _Node(_Kind.BIND, source=here)
                return
            if not readable(info, self.uid):
                self.closed.append(here)
            self.nodes[here] = _Node(_Kind.COVER)
            with os.scandir(here) as entries:
                for entry in sorted(entries, key=lambda e: e.name):
                    path = Path(entry.path)
                    inner = entry.stat(follow_symlinks=False)
                    if stat.S_ISLNK(inner.st_mode):
                        self.nodes[path] = _Node(_Kind.LINK, link=os.readlink(path))
                    else:
                        self._expose(path, inner, True, dirty)
                    if len(self.nodes) > MAX_STEPS:
                        raise SandboxError(
                            f"{here} is closed to other users and too large to show to a bot entry by entry"
                            f" (over {MAX_STEPS} entries): give the bot a directory of its own"
                        )
        elif stat.S_ISREG(info.st_mode):
            if clean:
                if covered:
                    self.nodes[here] = _Node(_Kind.BIND, source=here, directory=False)
                return
            self.closed.append(here)
            self.nodes[here] = _Node(_Kind.BIND, source=self._copy(here, info), directory=False)
        elif covered and clean:  # a socket or a FIFO the bot may use
            self.nodes[here] = _Node(_Kind.BIND, source=here, directory=False)

    def _copy(self, path: Path, info: os.stat_result) -> Path:
        """A copy of a closed file, readable by the bot (and runnable if the original is), in its private tree."""
        self.copied_bytes += info.st_size
        if self.copied_bytes > MAX_COPY_BYTES:
            raise SandboxError(
                f"the bot's files closed to other users, {path} among them, are over {MAX_COPY_BYTES >> 20} MB"
                " to copy into its private directory: give the bot a directory of its own"
            )
        files = self.box / "files"
        files.mkdir(mode=0o700, exist_ok=True)  # root's alone: the bot meets the copy only where it is bound
        self.copies += 1
        copy = files / str(self.copies)
        mode = 0o755 if info.st_mode & 0o111 else 0o644
        flags = os.O_NOFOLLOW | os.O_CLOEXEC  # never a link swapped in for the file, on either side
        source = os.open(path, os.O_RDONLY | flags)
        try:
            target = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL | flags, mode)
            try:
                with open(source, "rb", closefd=False) as reader, open(target, "wb", closefd=False) as writer:
                    shutil.copyfileobj(reader, writer)
                os.fchmod(target, mode)
            finally:
                os.close(target)
        finally:
            os.close(source)
        return copy

    def _closed_within(self, top: Path) -> set[Path]:
        """The entries under top (top included) that the bot could not use, and every directory holding one."""
        dirty: set[Path] = set()
        seen = 0
        for root, dirs, files in os.walk(top):
            here = Path(root)
            for name in (*dirs, *files):
                seen += 1
                path = here / name
                try:
                    info = os.lstat(path)
                except OSError:
                    continue
                if not stat.S_ISLNK(info.st_mode) and not readable(info, self.uid):
                    dirty.add(path)
                    dirty.update(p for p in path.parents if p.is_relative_to(top))
            if seen > MAX_WALK:
                log.debug("sandbox: looked at the first %d entries of %s for closed files", seen, top)
                break
        try:
            if not readable(os.stat(top), self.uid):
                dirty.add(top)
        except OSError:
            pass
        return dirty

    def view(self) -> View:
        sources: list[bytes] = []
        steps: list[Step] = []
        for path in sorted(self.nodes, key=lambda p: (len(p.parts), p)):  # parents before children
            node = self.nodes[path]
            parent = self.nodes.get(path.parent)
            in_cover = parent is not None and parent.kind is _Kind.COVER
            where = os.fsencode(path)
            if node.kind is _Kind.LINK:
                steps.append(Step(StepKind.SYMLINK, where, target=os.fsencode(node.link)))
            elif node.kind is _Kind.COVER:
                steps.append(Step(StepKind.MKDIR if in_cover else StepKind.TMPFS, where))
            else:
                assert node.source is not None
                if in_cover:
                    steps.append(Step(StepKind.MKDIR if node.directory else StepKind.FILE, where))
                sources.append(os.fsencode(node.source))
                steps.append(Step(StepKind.BIND, where, source=len(sources) - 1))
        return View(tuple(sources), tuple(steps), tuple(dict.fromkeys(self.closed)))


def _forms(path: Path) -> tuple[Path, ...]:
    """The path as written and as its symbolic links lead: the bot may take either way."""
    written = Path(os.path.abspath(path))
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):  # a loop of links
        return (written,)
    return tuple(dict.fromkeys((written, resolved)))


def plan(needs: Iterable[Need], uid: int, box: Path) -> View:
    """The view that lets user uid reach every need at its own path; EMPTY when it reaches them already.

    Closed files of deep needs are copied into box/files (root-owned, removed with the box).
    """
    planner = _Planner(uid, box)
    forms: dict[Path, Need] = {}
    for need in needs:
        for form in _forms(need.path):
            known = forms.get(form, need)
            forms[form] = Need(form, known.deep or need.deep, known.given and need.given)
    # Shallow first: a directory shown whole makes the needs inside it no work, and a cover is made only on the
    # way to something deeper.
    for form in sorted(forms, key=lambda f: (len(f.parts), not forms[f].deep, f)):
        planner.route(forms[form])
    return planner.view()

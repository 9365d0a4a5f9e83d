"""A process that outlives a killed arena just long enough to kill the bots it left.

The parent-death signal covers a bot's first process only, and only once armed: a bot's grandchild that
left its parent, a bwrap sandbox that was still setting up (bwrap arms --die-with-parent in its child just
before exec), or a bot frozen in a v1 cgroup (where even SIGKILL waits for a thaw) outlive an arena killed
with SIGKILL. So each arena process starts one guardian, tells it over a pipe which bots are alive (their
marker, UID, cgroups and private folder), and the guardian, when the pipe closes, thaws and kills whatever is
left of them and removes their cgroups and folders (so that a laptop's /tmp does not fill up with the working
files of the bots of arenas that were killed). An arena that exits cleanly has told it that no bot is left: it
just exits.

The guardian runs this file as a script (``python -I -S guardian.py``): standard library only, so it
starts in milliseconds and imports nothing of the arena.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

log = logging.getLogger(__name__)

SWEEP_S = 10.0  # how long the guardian keeps killing what it finds
POLL_S = 0.02


class _Link:
    """The arena's end: the write end of the pipe to this process's guardian (one per process, fork-aware)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._pid: int | None = None  # of the process the guardian guards
        self.guardian: int | None = None
        self._broken = False
        os.register_at_fork(after_in_child=self._forget_in_child)

    def _forget_in_child(self) -> None:
        # A forked process starts a guardian of its own; no lock here: another thread may have held it.
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
        self._fd, self._pid, self.guardian, self._broken = None, None, None, False
        self._lock = threading.Lock()

    def send(self, event: dict[str, object]) -> None:
        line = (json.dumps(event) + "\n").encode()
        with self._lock:
            if self._broken:
                return
            try:
                if self._fd is None or self._pid != os.getpid():
                    self._fd, self.guardian = _start()
                    self._pid = os.getpid()
                os.write(self._fd, line)  # one line, under PIPE_BUF: written whole
            except OSError as error:  # bots still start: only an arena killed outright may then leave some
                self._broken = True
                log.warning("sandbox: no guardian to kill the bots a killed arena leaves (%s)", error)


def _start() -> tuple[int, int]:
    """Start a guardian: the write end of its pipe, and its pid."""
    from arena.sandbox.procfs import MARKER_VARIABLE  # here, not above: the guardian itself imports no arena code

    read_end, write_end = os.pipe()  # not inherited by bots: they get only the descriptors they are passed
    try:
        process = subprocess.Popen(
            [sys.executable, "-I", "-S", __file__, MARKER_VARIABLE],
            stdin=read_end,
            stdout=subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C for the arena's terminal is not for the guardian
        )
    finally:
        os.close(read_end)
    return write_end, process.pid


_link = _Link()


def guardian_pid() -> int | None:
    """This process's guardian, once a bot has started."""
    return _link.guardian if _link._pid == os.getpid() else None


def watch(marker: str, uid: int | None, thaw: tuple[Path, bytes] | None, cgroups: Sequence[Path], base: Path) -> None:
    """Before a bot starts: should this process die, kill what carries marker or runs as uid, and remove base."""
    event: dict[str, object] = {
        "watch": marker,
        "uid": uid,
        "thaw": None if thaw is None else [os.fsdecode(thaw[0]), thaw[1].decode()],
        "cgroups": [os.fsdecode(path) for path in cgroups],
        "base": os.fsdecode(base),
    }
    _link.send(event)


def forget(marker: str) -> None:
    """After a bot is killed and released: nothing of it is left to kill."""
    _link.send({"forget": marker})


# The guardian process.


def _environ_has(pid: str, entries: set[bytes]) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as file:
            return not entries.isdisjoint(file.read().split(b"\0"))
    except OSError:
        return False


def _runs_as(pid: str, uids: set[int]) -> bool:
    """Whether pid runs as one of uids and is not a zombie (a zombie is dead: its parent has yet to reap it)."""
    try:
        with open(f"/proc/{pid}/status") as file:
            fields = dict(line.split(":", 1) for line in file if ":" in line)
        return not fields["State"].strip().startswith("Z") and not uids.isdisjoint(
            int(field) for field in fields["Uid"].split()[:3]
        )
    except (OSError, KeyError, ValueError):
        return False


def _kill_as(uid: int) -> None:
    """kill(-1, SIGKILL) as uid reaches every process of it at once (the guardian has one thread: fork is safe)."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def _write(path: str, value: str) -> None:
    with contextlib.suppress(OSError), open(path, "w") as file:
        file.write(value)


def _remove_tree(base: str) -> None:
    """A bot's private folder, the directories the bot closed to its own user opened up first."""
    todo = [base]
    while todo:
        directory = todo.pop()
        with contextlib.suppress(OSError):
            os.chmod(directory, 0o700, follow_symlinks=False)
            with os.scandir(directory) as entries:
                todo += [entry.path for entry in entries if entry.is_dir(follow_symlinks=False)]
    shutil.rmtree(base, ignore_errors=True)


def sweep(watched: Sequence[dict[str, object]], marker_variable: str, seconds: float = SWEEP_S) -> None:
    """Thaw, kill and wait until none of the watched bots' processes is left, then remove their cgroups and
    their private folders."""
    entries = {f"{marker_variable}={event['watch']}".encode() for event in watched}
    uids = {int(event["uid"]) for event in watched if isinstance(event["uid"], int)}
    deadline = time.monotonic() + seconds
    while True:
        for event in watched:
            if isinstance(thaw := event["thaw"], list):
                _write(str(thaw[0]), str(thaw[1]))
        pids = (pid for pid in os.listdir("/proc") if pid.isdigit())
        left = [pid for pid in pids if _environ_has(pid, entries) or (uids and _runs_as(pid, uids))]
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(int(pid), signal.SIGKILL)
        if os.geteuid() == 0:
            for uid in uids:
                _kill_as(uid)
        if not left or time.monotonic() > deadline:
            break
        time.sleep(POLL_S)
    left_dirs = [str(path) for event in watched for path in event["cgroups"]]  # type: ignore[attr-defined]
    stop = time.monotonic() + 2.0
    while left_dirs and time.monotonic() < stop:  # a killed process leaves its cgroup soon after
        for path in list(left_dirs):
            with contextlib.suppress(OSError):
                os.rmdir(path)
            if not os.path.exists(path):
                left_dirs.remove(path)
        time.sleep(POLL_S)
    for event in watched:
        if isinstance(base := event.get("base"), str):
            _remove_tree(base)


def main(argv: Sequence[str]) -> int:
    marker_variable = argv[1]
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    watched: dict[str, dict[str, object]] = {}
    for line in sys.stdin.buffer:
        event = json.loads(line)
        if "forget" in event:
            watched.pop(event["forget"], None)
        else:
            watched[event["watch"]] = event
    if watched:
        sweep(list(watched.values()), marker_variable)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

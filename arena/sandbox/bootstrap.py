"""The first program of every bot process: it makes the bot's place, then becomes the bot (execve).

The arena has threads, and a child forked from it must not run Python before exec: it could wait forever on a
lock another thread held at the fork. So subprocess starts this program (its fork and exec run in C), and this
fresh, single-threaded interpreter joins the bot's cgroups, shows the bot its files (as root), drops to the bot's
ids, arms the parent-death signal, sets the rlimits and the CPU, and executes the bot.

It runs as `python -I -S -B bootstrap.py SETUP_FD STATUS_FD` (child.py) and imports the standard library and
linux.py beside it only: the arena package costs more to import than the rest of a start. It reads its setup
from the first descriptor and reports on the second, a pipe that closes at exec: nothing read before end of file
means the bot runs.
"""

from __future__ import annotations

import marshal
import os
import resource
import signal
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing, like json, importlib.util or pathlib, would add a tenth to the start
    from typing import Any, NoReturn

TMPFS_STEP, MKDIR_STEP, FILE_STEP, SYMLINK_STEP = "tmpfs", "mkdir", "file", "symlink"  # views.StepKind's values


def _module(name: str) -> dict[str, Any]:
    """The functions of linux.py or landlock.py (beside this file, standard library only), by name."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    with open(path, "rb") as file:
        code = compile(file.read(), path, "exec")
    namespace: dict[str, Any] = {"__name__": f"arena_sandbox_{name}"}
    exec(code, namespace)
    return namespace


def _show(linux: dict[str, Any], view: dict[str, Any]) -> None:
    """Carry out a view (views.py): paths the bot's UID cannot reach on the host become reachable, here only.

    The sources are opened once the mount namespace is this process's own (a mount of another namespace cannot
    be bound) and before any cover hides them; each is bound through its descriptor, closed again at exec.
    """
    opened = [os.open(source, os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW) for source in view["sources"]]
    mask = os.umask(0)
    for kind, path, target, source in view["steps"]:
        if kind == TMPFS_STEP:
            linux["mount_tmpfs"](path, view["cover_options"])
        elif kind == MKDIR_STEP:
            os.mkdir(path, 0o755)
        elif kind == FILE_STEP:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC, 0o644))
        elif kind == SYMLINK_STEP:
            os.symlink(target, path)
        else:
            linux["bind_mount"](b"/proc/self/fd/%d" % opened[source], path)
    os.umask(mask)


def _make_own_space(linux: dict[str, Any], space: dict[str, Any]) -> None:
    """A basic bot's writable space (disk.py): a tmpfs on the workdir, one on /dev/shm, and everything else shown
    read-only (before Linux 5.12, every other directory anyone may write in)."""
    workdir = space["workdir"]
    whole = linux["read_only_tree"](b"/")  # no file's access time moves either: it would be a signal to a bot
    linux["mount_tmpfs"](workdir, space["workdir_options"], executable=True)  # a bot may build a helper
    if not whole:  # before Linux 5.12: what anyone may write in, each read-only, after the workdir (a tmpfs
        for path, flags in space["read_only"]:  # under /tmp stays writable in /tmp's bind)
            linux["read_only"](path, flags)
    if os.path.isdir(b"/dev/shm"):
        linux["mount_tmpfs"](b"/dev/shm", space["shm_options"])
    os.chdir(workdir)  # the start's own chdir came first, into the directory now covered


def _join_cgroups(setup: dict[str, Any]) -> None:
    for procs in setup["cgroup_procs"]:
        try:
            fd = os.open(procs, os.O_WRONLY)
            try:
                os.write(fd, b"0")  # "0" is the writing process itself
            finally:
                os.close(fd)
        except OSError as error:
            error.filename = procs
            raise


def _place(linux: dict[str, Any], setup: dict[str, Any]) -> None:
    """The bot's mount namespace: its view of the files and its own space (root)."""
    view, space = setup["view"], setup["space"]
    if view or space or setup["namespaces"]:
        linux["private_mount_namespace"]()
    if view:
        _show(linux, view)
    if space:
        _make_own_space(linux, space)


def _become_bot(linux: dict[str, Any], setup: dict[str, Any], parent_pid: int) -> None:
    """The bot's ids, death signal, limits, CPU and confinement, in this order."""
    uid, gid = setup["uid"], setup["gid"]
    if uid is not None and gid is not None:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
    # After the uid change, which clears it. The signal comes when the forking *thread* exits: bots are always
    # started from the sandbox's own long-lived spawner thread for that reason (spawner.py).
    linux["set_parent_death_signal"](signal.SIGKILL)
    if os.getppid() != parent_pid:
        raise OSError(0, "the arena exited while the bot started")
    for which, soft, hard in setup["rlimits"]:
        resource.setrlimit(which, (soft, hard))
    if setup["cpu"] is not None:
        os.sched_setaffinity(0, {setup["cpu"]})
    if setup["landlock"] is not None:  # last but one: it forbids the mounts made before
        setup["landlock_module"]["restrict"](*setup["landlock"])
    if setup["seccomp"] is not None:
        linux["install_seccomp"](setup["seccomp"])
    if setup["sysinfo"] is not None:  # the arena answers sysinfo() (sysinfo.py): it gets the listener
        program, number, channel = setup["sysinfo"]
        listener = linux["install_listener"](program, number)
        socket = sys.modules["socket"]  # imported by main() while the interpreter's files were still in reach
        with socket.socket(fileno=channel) as arena:
            socket.send_fds(arena, [b"listener"], [listener])
        os.close(listener)


def _prepare(setup: dict[str, Any], status: int) -> None:
    """Everything before the bot's exec. With namespaces this process is the first of a PID namespace the arena
    made for it (child.py): it makes the namespaces and mounts, forks the bot, and stays as the namespace's init
    (_serve_as_init), which the bot's exit ends; the bot returns from here."""
    linux = _module("linux")
    if setup["landlock"] is not None:  # read now: once the bot's ids are taken, this folder may be closed to them
        setup["landlock_module"] = _module("landlock")
    _join_cgroups(setup)  # first: all the bot starts is in its cgroups (the init's memory so far is not counted)
    if not setup["namespaces"]:
        _place(linux, setup)
        _become_bot(linux, setup, setup["parent_pid"])
        return
    linux["set_parent_death_signal"](signal.SIGKILL)
    _place(linux, setup)
    linux["unshare"](linux["CLONE_NEWIPC"] | linux["CLONE_NEWNET"], "CLONE_NEWIPC | CLONE_NEWNET")
    init = os.getpid()
    bot = os.fork()
    if bot:
        _serve_as_init(bot, status)
    linux["mount_proc"](b"/proc")  # the PID namespace's own: the bot's processes and no other
    _become_bot(linux, setup, init)


def _serve_as_init(bot: int, status: int) -> NoReturn:
    """Reap whatever re-parents here until the bot exits, then exit as bwrap's init does: the bot's status, or
    128 + N for a bot killed by signal N (faults.returncode_from_status). The kernel ends the namespace's other
    processes with it."""
    os.close(status)  # the bot's copy tells the arena when it runs
    for fd in (0, 1, 2):  # the bot's streams end with the bot
        os.dup2(os.open(os.devnull, os.O_RDWR), fd)
    while True:
        try:
            pid, code = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(255)
        if pid == bot:
            os._exit(128 + os.WTERMSIG(code) if os.WIFSIGNALED(code) else os.WEXITSTATUS(code))


def _fail(status: int, stage: str, error: BaseException) -> NoReturn:
    if isinstance(error, OSError):
        filename = os.fsdecode(error.filename) if error.filename is not None else None
        report = {"stage": stage, "errno": error.errno, "strerror": error.strerror or str(error), "filename": filename}
    else:  # a fault of this program's own: the arena names it, the bot does not start
        report = {"stage": stage, "errno": None, "strerror": f"{type(error).__name__}: {error}", "filename": None}
    try:
        os.write(status, marshal.dumps(report))
    finally:  # the arena may be gone: nobody to tell
        os._exit(127)


def _read_setup(fd: int) -> dict[str, Any]:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    os.close(fd)
    return marshal.loads(b"".join(chunks))


def _as_a_new_program() -> None:
    """The signal state a program expects at its start, not this interpreter's nor the arena's: an ignored signal
    stays ignored across exec, and Python ignores SIGPIPE and SIGXFSZ (a bot past its file size limit would not
    be killed, as faults.py expects), a shell's background job SIGINT, nohup SIGHUP; nothing blocked, whatever
    thread started this."""
    for number in signal.valid_signals():
        if number not in (signal.SIGKILL, signal.SIGSTOP) and signal.getsignal(number) == signal.SIG_IGN:
            signal.signal(number, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, set())


def main(setup_fd: int, status: int) -> NoReturn:
    stage = "setup"
    try:
        os.set_inheritable(status, False)  # so that a successful exec closes it
        setup = _read_setup(setup_fd)
        if setup["sysinfo"] is not None:
            import socket  # noqa: F401  (now: once the bot's ids are taken, the standard library may be out of reach)
        _prepare(setup, status)
        _as_a_new_program()
        stage = "exec"
        argv = setup["argv"]
        os.execve(argv[0], argv, setup["env"])
    except BaseException as error:
        _fail(status, stage, error)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))

"""Bots whose files lie where users really keep them: in a private folder, under /root, as an ordinary user.

As root each bot runs as a UID of its own, for which a folder of mode 0700 (mktemp -d, /root) closes the way
to its interpreter and its files. Those root-only tests skip otherwise; the ordinary user's are run by root
through setpriv (a fresh UID, a venv it can read), or directly when the tests run as an ordinary user.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.sandbox import LaunchSpec, SandboxError, SandboxLevel, bwrap, launch, levels, notices, views
from arena.sandbox.command import blocked_for_others
from tests.sandbox.conftest import ALL_LEVELS, DEADLINE_S, ROOT, assert_all_gone, poll_until, strict_or_skip

CHECKOUT = Path(__file__).resolve().parents[2]
EXAMPLE = CHECKOUT / "examples" / "random_bot.py"
root_only = pytest.mark.skipif(not ROOT, reason="only a root arena gives bots UIDs of their own")

# The bot: imports a module beside it, reads a data file beside it, says what it sees of the folder around.
BOT = """
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import helper
data = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data.txt")).read().strip()
print(helper.GREETING, data, os.getuid(), file=sys.stderr)
secret = os.environ.get("SECRET")
if secret:
    try:
        open(secret).read()
        print("read", secret, file=sys.stderr)
        raise SystemExit(3)
    except OSError as error:
        print("cannot read the secret:", error, file=sys.stderr)
"""


def _write_bot(directory: Path, mode: int = 0o644) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "helper.py").write_text("GREETING = 'hello'\n")
    (directory / "data.txt").write_text("from the data file\n")
    script = directory / "bot.py"
    script.write_text(textwrap.dedent(BOT))
    for path in (directory / "helper.py", directory / "data.txt", script):
        path.chmod(mode)
    return script


@pytest.fixture
def private_folder() -> Iterator[Path]:
    """A `mktemp -d` folder: mode 0700, owned by the arena's user."""
    path = Path(tempfile.mkdtemp(prefix="arena-test-private-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def under_root() -> Iterator[Path]:
    """A folder under /root (mode 0700), as a root user's project would be."""
    if not ROOT:
        pytest.skip("needs root")
    path = Path(tempfile.mkdtemp(prefix="arena-test-", dir="/root"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _run(level: SandboxLevel, script: Path, bot_dir: Path, env: dict[str, str] | None = None) -> tuple[int | None, str]:
    bot = launch(LaunchSpec(command=(sys.executable, str(script)), bot_dir=bot_dir, level=level, env=env or {}))
    with bot:
        code = bot.wait(DEADLINE_S)
        if code is not None:
            bot.exit_fault()  # waits for the end of its stderr
        return code, bot.stderr_tail()


LAYOUTS = ["bots-in-private-folder", "private-folder-is-the-bot-dir", "closed-files", "under-root"]


@root_only
@ALL_LEVELS
@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_bot_in_a_closed_place_starts_with_its_interpreter_and_files(
    level: SandboxLevel, layout: str, private_folder: Path, request: pytest.FixtureRequest
) -> None:
    if layout == "bots-in-private-folder":
        bot_dir = private_folder / "bots" / "good"
        script = _write_bot(bot_dir)
    elif layout == "private-folder-is-the-bot-dir":
        bot_dir = private_folder
        script = _write_bot(bot_dir)
    elif layout == "closed-files":  # written with umask 077: nothing of it is open to other users
        bot_dir = private_folder / "bots" / "good"
        script = _write_bot(bot_dir, mode=0o600)
        bot_dir.chmod(0o700)
        (bot_dir / "tool.sh").write_text("#!/bin/sh\n")
        (bot_dir / "tool.sh").chmod(0o700)
    else:
        bot_dir = request.getfixturevalue("under_root") / "bots" / "good"
        script = _write_bot(bot_dir)
    assert blocked_for_others(bot_dir / "data.txt", need_read=True) is not None
    code, stderr = _run(level, script, bot_dir)
    assert code == 0, stderr
    assert "hello from the data file" in stderr
    if level is not SandboxLevel.NONE:
        assert f" {os.getuid()}\n" not in stderr + "\n", "the bot ran as the arena's user"


@root_only
@pytest.mark.parametrize("level", [SandboxLevel.STRICT, SandboxLevel.BASIC], ids=lambda level: level.value)
def test_what_else_a_closed_folder_holds_stays_out_of_reach(level: SandboxLevel, private_folder: Path) -> None:
    secret = private_folder / "secret.txt"
    secret.write_text("secret\n")
    secret.chmod(0o644)  # open itself: only the folder's mode keeps it from other users
    bot_dir = private_folder / "bots" / "good"
    script = _write_bot(bot_dir)
    code, stderr = _run(level, script, bot_dir, env={"SECRET": str(secret)})
    assert code == 0, stderr
    assert "cannot read the secret" in stderr


@root_only
def test_the_host_keeps_its_modes_and_mounts_and_the_copies_go(private_folder: Path) -> None:
    bot_dir = private_folder / "bots" / "good"
    script = _write_bot(bot_dir, mode=0o600)
    mounts = Path("/proc/self/mountinfo").read_text()
    bot = launch(LaunchSpec(command=(sys.executable, str(script)), bot_dir=bot_dir, level=SandboxLevel.BASIC))
    with bot:
        assert bot.wait(DEADLINE_S) == 0, bot.stderr_tail()
        box = bot.workdir.parent
        assert sorted(p.name for p in (box / "files").iterdir()) == ["1", "2", "3"]  # bot.py, data.txt, helper.py
        assert Path("/proc/self/mountinfo").read_text() == mounts
    assert not box.exists()
    assert private_folder.stat().st_mode & 0o777 == 0o700
    assert (bot_dir / "bot.py").stat().st_mode & 0o777 == 0o600


def test_a_view_covers_a_closed_folder_and_binds_back_only_what_is_needed(private_folder: Path) -> None:
    bot_dir = private_folder / "bots" / "good"
    _write_bot(bot_dir)
    (private_folder / "other").mkdir()
    box = private_folder / "box"
    box.mkdir()
    view = views.plan([views.Need(bot_dir, deep=True)], 3_900_000_000, box)
    steps = [(step.kind, os.fsdecode(step.path)) for step in view.steps]
    assert steps == [
        (views.StepKind.TMPFS, str(private_folder)),
        (views.StepKind.MKDIR, str(private_folder / "bots")),
        (views.StepKind.MKDIR, str(bot_dir)),
        (views.StepKind.BIND, str(bot_dir)),
    ]
    assert view.sources == (os.fsencode(bot_dir),)
    assert view.closed == (private_folder,)
    # An open tree needs no view. (Not a system folder: Debian's chromium leaves /usr/lib/chromium/extensions 700.)
    elsewhere = Path(tempfile.mkdtemp(prefix="arena-test-open-"))
    try:
        elsewhere.chmod(0o755)
        (elsewhere / "lib" / "deeper").mkdir(parents=True, mode=0o755)
        (elsewhere / "lib" / "deeper" / "module.py").write_text("")
        (elsewhere / "lib" / "deeper" / "module.py").chmod(0o644)
        assert views.plan([views.Need(elsewhere / "lib", deep=True)], 3_900_000_000, box) == views.EMPTY
        # A link elsewhere to a file deep inside the bot's directory changes nothing of how that is shown.
        (elsewhere / "bot-link").symlink_to(bot_dir / "bot.py")
        linked = views.plan([views.Need(elsewhere / "bot-link"), views.Need(bot_dir, deep=True)], 3_900_000_000, box)
        assert linked == view
    finally:
        shutil.rmtree(elsewhere)


def test_a_closed_directory_is_shown_entry_by_entry_and_a_closed_file_as_a_copy(private_folder: Path) -> None:
    bot_dir = private_folder  # mode 0700 itself
    _write_bot(bot_dir)
    (bot_dir / "data.txt").chmod(0o600)
    (bot_dir / "link").symlink_to("data.txt")
    box = Path(tempfile.mkdtemp(prefix="arena-test-box-"))
    try:
        view = views.plan([views.Need(bot_dir, deep=True)], 3_900_000_000, box)
        kinds = {os.fsdecode(step.path): step.kind for step in view.steps if step.kind is not views.StepKind.BIND}
        assert kinds == {
            str(bot_dir): views.StepKind.TMPFS,
            str(bot_dir / "bot.py"): views.StepKind.FILE,
            str(bot_dir / "data.txt"): views.StepKind.FILE,
            str(bot_dir / "helper.py"): views.StepKind.FILE,
            str(bot_dir / "link"): views.StepKind.SYMLINK,
        }
        copy = box / "files" / "1"
        assert os.fsencode(copy) in view.sources and os.fsencode(bot_dir / "bot.py") in view.sources
        assert copy.read_text() == "from the data file\n" and copy.stat().st_mode & 0o777 == 0o644
        assert view.closed == (bot_dir, bot_dir / "data.txt")
    finally:
        shutil.rmtree(box)


def _mapped_root(code: str, max_user_namespaces: int | None = None) -> subprocess.CompletedProcess[str]:
    """Run Python code as root in a user namespace of its own mapping UIDs 0-999999 to the same, optionally with
    user.max_user_namespaces there: a machine whose sysctl refuses bwrap its user namespace."""
    helper = f"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
go_r, go_w = os.pipe()
ready_r, ready_w = os.pipe()
pid = os.fork()
if pid == 0:
    if libc.unshare(0x10000000) != 0:  # CLONE_NEWUSER
        os._exit(90)
    os.write(ready_w, b"x")
    os.read(go_r, 1)
    if {max_user_namespaces!r} is not None:
        with open("/proc/sys/user/max_user_namespaces", "w") as stream:
            stream.write("{max_user_namespaces}")
    os.execv(sys.executable, [sys.executable, "-c", {code!r}])
os.read(ready_r, 1)
for name in ("uid_map", "gid_map"):
    with open(f"/proc/{{pid}}/{{name}}", "w") as stream:
        stream.write("0 0 1000000")
os.write(go_w, b"x")
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""
    env = {k: v for k, v in os.environ.items() if k != notices.SHARED_VARIABLE}
    return subprocess.run(
        [sys.executable, "-c", helper], capture_output=True, text=True, timeout=120, cwd=CHECKOUT, env=env
    )


@root_only
def test_refused_user_namespaces_are_said_with_the_sysctl_that_allows_them() -> None:
    done = _mapped_root(
        "from arena.sandbox import SandboxLevel, resolve_level\nprint(*resolve_level(SandboxLevel.STRICT), sep='\\n')",
        max_user_namespaces=0,
    )
    assert done.returncode == 0, done.stderr
    level, warning = done.stdout.splitlines()[:2]
    assert level == "SandboxLevel.BASIC"
    assert warning.startswith("sandbox: bubblewrap cannot run here (this machine refuses it user namespaces:")
    assert "allow them with `sysctl -w user.max_user_namespaces=10000`" in warning
    assert "bwrap said: Creating new namespace failed" in warning


@pytest.mark.parametrize(
    ("sysctls", "advice"),
    [
        (
            {"kernel/apparmor_restrict_unprivileged_userns": "1"},
            "`sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`",
        ),
        ({"kernel/apparmor_restrict_unprivileged_userns": "1"}, "AppArmor profile for /opt/bwrap that allows `userns`"),
        ({"kernel/unprivileged_userns_clone": "0"}, "`sysctl -w kernel.unprivileged_userns_clone=1`"),
        ({"user/max_user_namespaces": "0"}, "`sysctl -w user.max_user_namespaces=10000`"),
        ({"user/max_user_namespaces": "15000"}, "a container's seccomp or AppArmor profile may"),
    ],
)
def test_each_refusal_of_user_namespaces_is_told_with_its_remedy(
    tmp_path: Path, sysctls: dict[str, str], advice: str
) -> None:
    for name, value in sysctls.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(value + "\n")
    said = bwrap.explain_failure("bwrap: setting up uid map: Permission denied", "/opt/bwrap", proc_sys=tmp_path)
    assert said.startswith("this machine refuses it user namespaces: ")
    assert advice in said
    assert said.endswith("bwrap said: setting up uid map: Permission denied")
    for other in ("bwrap: Can't find source path /x", "bwrap: setting up uid map: Invalid argument"):
        assert bwrap.explain_failure(other, "/opt/bwrap", proc_sys=tmp_path) == other


def _without_sys_admin(code: str) -> subprocess.CompletedProcess[str]:
    """Run Python code as root without CAP_SYS_ADMIN (as in a default container): no mount namespace of its own."""
    env = {k: v for k, v in os.environ.items() if k != notices.SHARED_VARIABLE}
    command = ["setpriv", "--bounding-set", "-sys_admin", "--inh-caps", "-sys_admin", sys.executable, "-c", code]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=CHECKOUT, env=env)


@root_only
@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv (util-linux)")
def test_without_a_mount_namespace_such_bots_run_as_the_arenas_user_said_once(private_folder: Path) -> None:
    bot_dir = private_folder / "bots" / "good"
    script = _write_bot(bot_dir)
    code = f"""
import sys
from arena.sandbox import LaunchSpec, SandboxLevel, launch
spec = LaunchSpec(command=(sys.executable, {str(script)!r}), bot_dir={str(bot_dir)!r}, level=SandboxLevel.BASIC)
for _ in range(3):
    with launch(spec) as bot:
        code = bot.wait(10)
        bot.exit_fault()
        print(code, bot.stderr_tail().strip())
"""
    done = _without_sys_admin(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["0 hello from the data file 0"] * 3, done.stdout + done.stderr
    warnings = [line for line in done.stderr.splitlines() if "out of reach of the bots' own user ids" in line]
    assert len(warnings) == 1, done.stderr
    assert "Operation not permitted" in warnings[0] and "run as the arena's user, root" in warnings[0]


@root_only
@pytest.mark.skipif(shutil.which("setpriv") is None or not os.access("/usr/bin/python3", os.X_OK), reason="setpriv")
def test_without_a_mount_namespace_bots_whose_files_are_open_keep_their_own_user_id() -> None:
    bot_dir = Path(tempfile.mkdtemp(prefix="arena-test-open-"))
    try:
        bot_dir.chmod(0o755)
        script = _write_bot(bot_dir)  # it says its uid last
        code = f"""
from arena.sandbox import LaunchSpec, SandboxLevel, launch
spec = LaunchSpec(command=("/usr/bin/python3", {str(script)!r}), bot_dir={str(bot_dir)!r}, level=SandboxLevel.BASIC)
with launch(spec) as bot:
    print(bot.wait(10), bot.stderr_tail().strip().replace("\\n", " "))
"""
        done = _without_sys_admin(code)
        assert done.returncode == 0, done.stderr
        status, *said = done.stdout.split()
        assert status == "0" and said[:4] == ["hello", "from", "the", "data"], done.stdout + done.stderr
        assert int(said[-1]) >= 200_000, done.stdout + done.stderr  # a bot UID, not root's 0
        assert "out of reach" not in done.stderr
    finally:
        shutil.rmtree(bot_dir, ignore_errors=True)


def _bots_dir_project(folder: Path, level: SandboxLevel) -> Path:
    """The layout of the issue: bots/NAME/ in a private folder, the tournament beside, a built-in bot too."""
    bot_dir = folder / "bots" / "good_req"
    bot_dir.mkdir(parents=True)
    shutil.copy(EXAMPLE, bot_dir / "good_req.py")
    tournament = folder / "t.yaml"
    tournament.write_text(
        textwrap.dedent(f"""
        name: t
        format: round-robin
        players_per_match: 2
        seed: 1
        concurrency: 2
        sandbox: {level.value}
        limits: {{move_ms: 2000}}
        bots:
          - {{name: random, builtin: random, subprocess: true}}
          - {{name: heuristic, builtin: heuristic}}
          - {{name: good_req, command: [python3, bots/good_req/good_req.py]}}
        """)
    )
    return tournament


def _arena(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k != notices.SHARED_VARIABLE}
    return subprocess.run(
        [sys.executable, "-m", "arena", *map(str, args)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env=clean | (env or {}),
    )


def _faults(output: Path) -> list[dict[str, object]]:
    import json

    done = _arena("results", output, "--format", "json", cwd=output)
    assert done.returncode == 0, done.stderr
    return [fault for match in json.loads(done.stdout) for fault in match["faults"]]


@root_only
@ALL_LEVELS
def test_check_bot_and_run_both_pass_a_bot_of_a_private_folder(level: SandboxLevel, private_folder: Path) -> None:
    tournament = _bots_dir_project(private_folder, level)
    checked = _arena(
        "check-bot",
        "--sandbox",
        level.value,
        "--matches",
        "1",
        "--",
        "python3",
        "bots/good_req/good_req.py",
        cwd=private_folder,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"sandbox {level.value}," in checked.stdout and "PASS: no faults" in checked.stdout, checked.stdout
    ran = _arena("run", tournament, cwd=CHECKOUT)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ", 0 faults," in ran.stdout, _faults(private_folder / "results" / "t")
    assert "out of reach" not in ran.stderr and "cannot run" not in ran.stderr, ran.stderr


def test_the_fallback_warning_is_printed_once_per_run_not_per_worker(private_folder: Path) -> None:
    tournament = _bots_dir_project(private_folder, SandboxLevel.STRICT)
    ran = _arena("run", tournament, cwd=CHECKOUT, env={bwrap.CHOICE_VARIABLE: "/nonexistent/bwrap"})
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stderr.count("bubblewrap cannot run here (/nonexistent/bwrap not found)") == 1, ran.stderr
    assert ", 0 faults," in ran.stdout, _faults(private_folder / "results" / "t")


@root_only
def test_the_demo_runs_strict_with_no_fault_from_a_private_folder(private_folder: Path) -> None:
    (private_folder / "tournaments").mkdir()
    (private_folder / "examples").mkdir()
    shutil.copy(CHECKOUT / "tournaments" / "demo.yaml", private_folder / "tournaments")
    shutil.copy(EXAMPLE, private_folder / "examples")
    ran = _arena("run", private_folder / "tournaments" / "demo.yaml", cwd=private_folder)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "demo: 12 matches (12 played now), 0 faults" in ran.stdout, _faults(
        private_folder / "tournaments" / "results" / "demo"
    )
    assert ran.stderr == "", ran.stderr


def test_arena_bwrap_names_the_bwrap_else_the_systems_is_preferred_else_the_bundled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv(bwrap.CHOICE_VARIABLE, raising=False)
    assert bwrap.bwrap_path() == str(fake)
    monkeypatch.setenv("PATH", "/nonexistent")
    assert bwrap.bwrap_path() == bwrap.bundled_path()
    monkeypatch.setenv(bwrap.CHOICE_VARIABLE, str(fake))
    assert bwrap.bwrap_path() == str(fake)
    monkeypatch.setenv(bwrap.CHOICE_VARIABLE, str(tmp_path / "missing"))
    assert bwrap.bwrap_path() is None
    assert bwrap.wanted() == str(tmp_path / "missing")


@pytest.fixture
def forced_bwrap(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The bwrap of the parameter (bundled, system) made the one used, the probes forgotten before and after."""
    path = bwrap.bundled_path() if request.param == "bundled" else shutil.which(bwrap.BWRAP)
    if path is None:
        pytest.skip(f"no {request.param} bwrap here")
    monkeypatch.setenv(bwrap.CHOICE_VARIABLE, path)
    levels.reset()
    yield path
    monkeypatch.undo()
    levels.reset()


@pytest.mark.parametrize("forced_bwrap", ["bundled", "system"], indirect=True)
def test_a_strict_bot_runs_under_the_bundled_and_under_the_system_bwrap(
    forced_bwrap: str, private_folder: Path
) -> None:
    assert levels.resolve_level(SandboxLevel.STRICT) == (SandboxLevel.STRICT, None)
    bot_dir = private_folder / "bots" / "good"
    script = _write_bot(bot_dir)
    script.write_text(script.read_text() + "import sys; sys.stdin.read()\n")
    bot = launch(
        LaunchSpec(command=(sys.executable, str(script)), bot_dir=bot_dir, level=SandboxLevel.STRICT, stdio=True)
    )
    with bot:
        poll_until(lambda: "hello from the data file" in bot.stderr_tail(), what="the bot to start")
        assert os.readlink(f"/proc/{bot.pid}/exe") == os.path.realpath(forced_bwrap)
    assert_all_gone({bot.pid})


def _ordinary_user_python(tmp_path: Path) -> tuple[list[str], Path, dict[str, str]]:
    """How to run the arena as an ordinary user: (command prefix, a private folder of that user, environment).

    As root: a fresh UID through setpriv, with a venv of the system's Python whose site-packages are the test
    venv's, linked file by file, with the arena's packages linked in too (the test venv's interpreter, under
    /root, and this checkout, maybe in a private folder, may be out of that UID's reach).
    """
    env = {k: v for k, v in os.environ.items() if k != notices.SHARED_VARIABLE}
    if not ROOT:
        return [sys.executable], Path(tempfile.mkdtemp(dir=tmp_path)), env
    system = Path("/usr/bin/python3")
    site = Path(next(p for p in sys.path if p.endswith("site-packages") and p.startswith(sys.prefix)))
    if shutil.which("setpriv") is None or not system.exists():
        pytest.skip("needs setpriv and /usr/bin/python3")
    version = subprocess.run([system, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True)
    if version.stdout.strip() != str(sys.version_info[:2]):
        pytest.skip("the system's Python is another version than the test venv's")
    uid = 2_000_000_000 + os.getpid() % 1000  # below 2**31: bwrap writes its uid map with %d
    shared = Path(tempfile.mkdtemp(prefix="arena-test-user-"))
    shared.chmod(0o755)
    venv = shared / "venv"
    subprocess.run([system, "-m", "venv", "--without-pip", venv], check=True, timeout=60)
    target = venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    shutil.rmtree(target)
    try:
        shutil.copytree(site, target, copy_function=os.link)
        if not (target / "arena").exists():  # an editable install: its finder leads into the checkout
            for finder in target.glob("__editable__*"):
                finder.unlink()
            ignore = shutil.ignore_patterns("__pycache__")
            for source, installed in (("arena", "arena"), ("bots", "arena/bots"), ("docs", "arena/docs")):
                shutil.copytree(CHECKOUT / source, target / installed, copy_function=os.link, ignore=ignore)
    except OSError:
        pytest.skip("the test venv or this checkout is on another file system than the temporary directory")
    folder = shared / "home"
    folder.mkdir(mode=0o700)
    os.chown(folder, uid, uid)
    prefix = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", str(venv / "bin" / "python3")]
    return prefix, folder, {"PATH": "/usr/bin:/bin", "HOME": str(folder), "LANG": "C.UTF-8"}


@ALL_LEVELS
def test_an_ordinary_user_checks_and_runs_a_bot_of_a_private_folder(level: SandboxLevel, tmp_path: Path) -> None:
    prefix, folder, env = _ordinary_user_python(tmp_path)
    try:
        owner = folder.stat().st_uid
        tournament = _bots_dir_project(folder, level)
        for path in (
            folder / "bots",
            folder / "bots" / "good_req",
            folder / "bots" / "good_req" / "good_req.py",
            tournament,
        ):
            os.chown(path, owner, owner)

        def arena(*args: str | Path) -> subprocess.CompletedProcess[str]:
            command = [*prefix, "-m", "arena", *map(str, args)]
            return subprocess.run(
                command, capture_output=True, text=True, timeout=300, cwd=folder, env=env, stdin=subprocess.DEVNULL
            )

        checked = arena(
            "check-bot", "--sandbox", level.value, "--matches", "1", "--", "python3", "bots/good_req/good_req.py"
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert f"sandbox {level.value}," in checked.stdout and "PASS: no faults" in checked.stdout, checked.stdout
        ran = arena("run", tournament)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert ", 0 faults," in ran.stdout, ran.stdout + ran.stderr
    finally:
        if ROOT:
            shutil.rmtree(folder.parent, ignore_errors=True)


@pytest.mark.skipif(not os.environ.get("CI"), reason="CI only (CI=true): there strict must run, not be skipped")
def test_in_ci_the_strict_sandbox_runs_with_the_bwrap_that_pip_installs() -> None:
    assert levels.resolve_level(SandboxLevel.STRICT) == (SandboxLevel.STRICT, None)
    assert bwrap.bundled_path() is not None
    if shutil.which(bwrap.BWRAP) is None:
        assert bwrap.bwrap_path() == bwrap.bundled_path()


def test_a_strict_bots_file_argument_outside_what_it_sees_is_refused_by_name(private_folder: Path) -> None:
    strict_or_skip()
    bot_dir = private_folder / "bots" / "good"
    script = _write_bot(bot_dir)
    outside = private_folder / "elsewhere.txt"
    outside.write_text("x\n")
    with pytest.raises(SandboxError, match=f"bot argument {outside} is outside the bot's directory {bot_dir}"):
        launch(LaunchSpec(command=(sys.executable, str(script), str(outside)), bot_dir=bot_dir))
    code, stderr = _run(SandboxLevel.STRICT, script, bot_dir, env={})
    assert code == 0, stderr
    bot = launch(LaunchSpec(command=(sys.executable, str(script), "/dev/null"), bot_dir=bot_dir))  # bwrap's own
    with bot:
        assert bot.wait(DEADLINE_S) == 0, bot.stderr_tail()


@root_only
def test_an_arena_installed_in_a_private_folder_still_gives_bots_their_own_ids(private_folder: Path) -> None:
    """As from a clone in a `mktemp -d` folder: what bootstrap.py reads of the arena's package it reads before it
    takes the bot's ids, which may not enter that folder."""
    shutil.copytree(CHECKOUT / "arena", private_folder / "arena", ignore=shutil.ignore_patterns("__pycache__"))
    code = f"import sys; sys.path.insert(0, {str(private_folder)!r})\n" + (
        "import arena; from arena.sandbox import levels\n"
        "assert arena.__file__.startswith(sys.path[0]), arena.__file__\n"
        "print(levels.probe_views())"
    )
    env = {k: v for k, v in os.environ.items() if k != notices.SHARED_VARIABLE}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "None", done.stdout  # a view can be made: bots get ids of their own

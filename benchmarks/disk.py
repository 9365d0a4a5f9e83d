"""What a hostile bot can put on the machine's disk, and how soon it is stopped (Limits.disk_mb).

For each level that limits bots (strict; basic, which as root gets a tmpfs too), real bots try:
- `fill`: 100 files of 60 MB (6 GB) in its workdir, then the same in /tmp, ignoring every error;
- `flood`: a million empty files (an inode flood);
- `retry`: fill its space, then retry the write forever.
It reports what the bot managed to write, what reached the host's temporary folder (its free space before
and after), how the bot ended and how long it took.

    python benchmarks/disk.py [--disk-mb 256]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from arena.sandbox import LaunchSpec, Limits, SandboxLevel, launch, resolve_level

BOTS = {
    "fill": """
        import os, sys
        written = 0
        for where in (".", "/tmp"):
            for number in range(100):
                try:
                    with open(os.path.join(where, f"big{number}"), "wb", buffering=0) as stream:
                        for _ in range(60):
                            written += stream.write(b"x" * (1 << 20))
                except OSError:
                    pass
        print(f"wrote {written >> 20} MB", file=sys.stderr)
    """,
    "flood": """
        import sys
        made = 0
        try:
            while made < 1_000_000:
                open(f"f{made}", "w").close()
                made += 1
        except OSError as error:
            print(f"made {made} files, then {error.strerror}", file=sys.stderr)
        print(f"made {made} files", file=sys.stderr)
    """,
    "retry": """
        import os
        fd = os.open("fill", os.O_WRONLY | os.O_CREAT)
        while True:
            try:
                os.write(fd, b"x" * 65536)
            except OSError:
                pass
    """,
}


def _free(path: str) -> int:
    found = os.statvfs(path)
    return found.f_bavail * found.f_frsize


def run(level: SandboxLevel, name: str, disk_mb: int, bot_dir: Path) -> str:
    script = bot_dir / f"{name}.py"
    script.write_text(textwrap.dedent(BOTS[name]))
    spec = LaunchSpec(
        command=(sys.executable, str(script)),
        bot_dir=bot_dir,
        level=level,
        limits=Limits(disk_mb=disk_mb, file_size_mb=1024, cpu_s=60),
    )
    host_tmp = tempfile.gettempdir()
    before = _free(host_tmp)
    started = time.monotonic()
    with launch(spec) as bot:
        code = bot.wait(60)
        seconds = time.monotonic() - started
        lowest = before - _free(host_tmp)
        peak = bot.peak_disk()
        if code is None:
            ending = "still running after 60 s"
        else:
            kind, detail = bot.exit_fault()
            ending = "exited 0" if code == 0 else f"{kind}: {detail}"
        said = bot.stderr_tail().strip().splitlines()
    reached = max(lowest, 0) >> 20
    return (
        f"| {level.value} | {name} | {said[-1] if said else ''} | {peak >> 20} MB | {reached} MB |"
        f" {ending} | {seconds:.1f} s |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--disk-mb", type=int, default=256)
    args = parser.parse_args()
    levels = [SandboxLevel.BASIC]
    if resolve_level(SandboxLevel.STRICT)[0] is SandboxLevel.STRICT:
        levels.insert(0, SandboxLevel.STRICT)
    bot_dir = Path(tempfile.mkdtemp(prefix="arena-disk-bench-"))
    bot_dir.chmod(0o755)
    print(f"disk_mb {args.disk_mb}, arena uid {os.geteuid()}, host temporary folder {tempfile.gettempdir()}")
    print("| level | bot | the bot says | peak seen | host disk used | ending | wall |")
    print("|---|---|---|---|---|---|---|")
    for level in levels:
        for name in BOTS:
            print(run(level, name, args.disk_mb, bot_dir), flush=True)


if __name__ == "__main__":
    main()

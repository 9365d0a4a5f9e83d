"""`arena serve` under a course's load: 150 entrants, 1,000 uploads and 50 clients polling the leaderboard.

In a temporary folder: a 2-player ladder file (sandbox strict, or basic with a note where strict cannot run; the
`random` and `heuristic` built-ins as reference bots; concurrency 2; default limits) and 150 entrants added with
`LadderStore.add_entrants`. The server is started as `arena serve` starts it (arena.serve.server.serve: the
checker and the ladder running, the Starlette app behind uvicorn), uvicorn on a free loopback port in a thread of
this process, so that every request goes over real HTTP. Then, for `--minutes`:

- `--pollers` clients each GET /api/leaderboard every `--poll-s` seconds (never two at once: a slow answer delays
  its client's next request), each its own keep-alive connection, all in one child process so that their Python
  does not share this process's lock with the server's; every answer's latency and status is kept;
- `--uploads` uploads spread evenly over the run, entrant after entrant (round-robin), each a new version:
  examples/random_bot.py with a comment line of its own, or (a `--failing` share of them) a bot that crashes
  at start, whose check fails. Each upload is a browser's: it signs in with the entrant's link (once per entrant;
  its session cookie kept), loads the entrant's page for the form's CSRF token, and POSTs the file to /upload.

The check's upload-to-verdict time runs from the POST's answer to the verdict's time in the ladder's store
(`checked_at`, written as the version leaves `checking`); verdicts not given when the run ends are counted as
pending, with the age of the oldest. Matches are the ladder's own count (Ladder.ratings) at the start and end of
the run. CPU time is this process's and its reaped children's (getrusage), the pollers' process apart; the
machine's share of busy CPU is read from /proc/stat.

The report adds a table minute by minute (matches, leaderboard latency, the entrant's page, uploads, verdicts,
checks waiting), the errors the server logged, counted, and the processes left under this one after shutdown.

usage: python benchmarks/serve.py [--minutes M] [--entrants N] [--uploads N] [--failing SHARE] [--pollers N]
                                  [--poll-s S] [--upload-threads N] [--basic] [--json]

    .venv/bin/python benchmarks/serve.py --minutes 1 --uploads 60 --pollers 10    # a quick run
    .venv/bin/python benchmarks/serve.py                                           # the course: about 10 minutes
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import logging
import math
import multiprocessing
import os
import queue
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported when the server starts: the pollers' process needs none of it
    from arena.serve.checks import Checker
    from arena.serve.scheduler import Ladder
    from arena.serve.store import Entrant, LadderStore, Version

ROOT = Path(__file__).resolve().parent.parent
RANDOM_BOT = (ROOT / "examples" / "random_bot.py").read_text()
CRASHING_BOT = '"""A bot that crashes at start: its check fails (benchmarks/serve.py)."""\n\nraise SystemExit(3)\n'
HOST = "127.0.0.1"
TIMEOUT_S = 120.0
"""The longest any request of the benchmark waits for its answer."""
CSRF = re.compile(r'name="csrftoken" value="([^"]+)"')


def write_ladder(folder: Path, sandbox: str) -> Path:
    path = folder / "ladder.yaml"
    path.write_text(
        "name: bench-ladder\n"
        'ruleset: "2019"\n'
        "players_per_match: 2\n"
        f"sandbox: {sandbox}\n"
        "concurrency: 2\n"
        "output: final\n"
        "bots:\n"
        "  - {name: random, builtin: random}\n"
        "  - {name: heuristic, builtin: heuristic}\n"
        "ladder:\n"
        "  data: data\n"
    )
    return path


def sandbox_level() -> str:
    """Strict, where it runs. Probed in a process of its own: starting a sandbox makes a process the subreaper of
    whatever it starts after, which `arena serve`'s own process never is (its checks run in a process of theirs)."""
    probe = "from arena.sandbox.levels import probe_strict; print(probe_strict() or '')"
    problem = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
    if not problem:
        return "strict"
    print(f"note: the strict sandbox cannot run here ({problem}): the ladder runs at sandbox basic")
    return "basic"


# ------------------------------------------------------------------------------------------------ the server


@dataclass
class Served:
    store: LadderStore
    checker: Checker
    games: Ladder
    port: int
    players: int


@contextlib.contextmanager
def served(ladder_path: Path, entrants: int) -> Iterator[tuple[Served, list[tuple[Entrant, str]]]]:
    """The ladder's server as `arena serve` runs it (arena.serve.server.serve), uvicorn in a thread on a free
    loopback port; the entrants added first, each with its sign-in token. Stopped in serve()'s order on exit."""
    import uvicorn

    from arena.serve.app import Server, create_app
    from arena.serve.checks import Checker
    from arena.serve.ladder import load_ladder
    from arena.serve.scheduler import Ladder
    from arena.serve.server import open_ladder, standings

    ladder = load_ladder(ladder_path)
    store, versions = open_ladder(ladder)
    people = store.add_entrants([(f"student{n:03d}", f"student{n:03d}@uni.example") for n in range(entrants)])
    checker = Checker(store, versions, ladder)
    games = Ladder(ladder, store, versions)
    server = Server(ladder, store, checker, versions, games, standings=lambda: standings(ladder, store, games))
    checker.start()
    games.start()
    web = uvicorn.Server(
        uvicorn.Config(create_app(server), host=HOST, port=0, log_level="warning", timeout_graceful_shutdown=5)
    )
    thread = threading.Thread(target=web.run, name="uvicorn", daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not web.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start listening")
            time.sleep(0.01)
        port = web.servers[0].sockets[0].getsockname()[1]
        yield Served(store, checker, games, port, ladder.tournament.players_per_match), people
    finally:
        web.should_exit = True
        thread.join(30)
        games.stop(timeout=60)
        checker.stop(timeout=120)  # the check under way is cut short; the waiting ones wait for the next start
        if thread.is_alive():
            print("warning: uvicorn did not stop within 30 s")


def matches_played(served: Served) -> int:
    """The ladder's recorded matches, as its leaderboard counts them."""
    return sum(matches for _, _, matches in served.games.ratings().values()) // served.players


# ------------------------------------------------------------------------------------------------ HTTP


class Browser:
    """One entrant's browser: its session cookie, kept from answer to answer."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.cookies: dict[str, str] = {}
        self.connection: http.client.HTTPConnection | None = None

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, bytes, float]:
        """The answer's status and body, and its latency in seconds (a reused connection the server has closed
        is opened again once, as a browser does, the retry timed too)."""
        headers = dict(headers or {})
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        started = time.perf_counter()
        for attempt in (1, 2):
            reused = self.connection is not None
            if self.connection is None:
                self.connection = http.client.HTTPConnection(HOST, self.port, timeout=TIMEOUT_S)
            try:
                self.connection.request(method, path, body=body, headers=headers)
                answer = self.connection.getresponse()
                data = answer.read()
                break
            except (OSError, http.client.HTTPException):
                self.close()
                if not reused or attempt == 2:
                    raise
        for line in answer.headers.get_all("set-cookie") or ():
            cookie: SimpleCookie = SimpleCookie()
            cookie.load(line)
            for name, morsel in cookie.items():
                if morsel.value and morsel["max-age"] != "0":
                    self.cookies[name] = morsel.value
                else:
                    self.cookies.pop(name, None)
        return answer.status, data, time.perf_counter() - started

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def multipart(fields: dict[str, str], filename: str, content: bytes) -> tuple[bytes, str]:
    """A form as a browser posts it: its fields, then the file. The body and its content type."""
    boundary = uuid.uuid4().hex
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for name, value in fields.items()
    ]
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n'
        "Content-Type: text/x-python\r\n\r\n".encode()
        + content
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


# ------------------------------------------------------------------------------------------------ the pollers


def poll_leaderboards(port: int, pollers: int, period: float, start: float, end: float, out: str) -> None:
    """In a child process: `pollers` clients, each GET /api/leaderboard every `period` s from `start` to `end`
    (wall clock), their first requests spread over one period. Writes [[at, seconds, status], ...] and this
    process's CPU seconds to `out` (status 0: no answer)."""
    found: list[tuple[float, float, int]] = []

    def client(offset: float) -> None:
        browser = Browser(port)
        due = start + offset
        while due < end:
            time.sleep(max(0.0, due - time.time()))
            at = time.time()
            try:
                status, _, seconds = browser.request("GET", "/api/leaderboard")
            except (OSError, http.client.HTTPException):
                status, seconds = 0, time.time() - at
            found.append((at - start, seconds, status))
            due = max(due + period, time.time())  # a slow answer delays the next: no burst to catch up
        browser.close()

    threads = [
        threading.Thread(target=client, args=(period * n / pollers,), name=f"poller-{n}") for n in range(pollers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    Path(out).write_text(json.dumps({"requests": found, "cpu_s": usage.ru_utime + usage.ru_stime}))


# ------------------------------------------------------------------------------------------------ the uploads


@dataclass
class Upload:
    index: int
    entrant: Entrant
    token: str
    failing: bool
    due: float
    """Wall-clock time it is scheduled for."""
    started: float = math.nan
    page_s: float = math.nan
    post_s: float = math.nan
    answered: float = math.nan
    """Wall-clock time of the POST's answer."""
    status: int = 0
    digest: str | None = None
    error: str | None = None


@dataclass
class Uploader:
    served: Served
    browsers: dict[int, Browser] = field(default_factory=dict)
    known: dict[int, set[str]] = field(default_factory=dict)
    signed_in_s: list[float] = field(default_factory=list)
    locks: dict[int, threading.Lock] = field(default_factory=dict)

    def run(self, uploads: Sequence[Upload], threads: int) -> None:
        """Every upload at its time (or as soon as a thread is free, if they fall behind)."""
        for upload in uploads:
            self.browsers.setdefault(upload.entrant.id, Browser(self.served.port))
            self.known.setdefault(upload.entrant.id, set())
            self.locks.setdefault(upload.entrant.id, threading.Lock())
        waiting: queue.Queue[Upload] = queue.Queue()
        for upload in uploads:
            waiting.put(upload)

        def work() -> None:
            while True:
                try:
                    upload = waiting.get_nowait()
                except queue.Empty:
                    return
                time.sleep(max(0.0, upload.due - time.time()))
                with self.locks[upload.entrant.id]:
                    try:
                        self.upload(upload)
                    except (OSError, http.client.HTTPException, RuntimeError) as error:
                        upload.error = f"{type(error).__name__}: {error}"

        workers = [threading.Thread(target=work, name=f"uploader-{n}") for n in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()

    def upload(self, upload: Upload) -> None:
        entrant = upload.entrant
        browser = self.browsers[entrant.id]
        upload.started = time.time()
        if not browser.cookies:
            status, _, seconds = browser.request("GET", f"/sign-in/{upload.token}")
            if status != 303:
                raise RuntimeError(f"sign-in answered {status}")
            self.signed_in_s.append(seconds)
        status, page, upload.page_s = browser.request("GET", f"/entrants/{entrant.name}")
        token = CSRF.search(page.decode("utf-8", "replace"))
        if status != 200 or token is None:
            raise RuntimeError(f"the entrant's page answered {status}" + ("" if token else ", with no form"))
        content = CRASHING_BOT if upload.failing else RANDOM_BOT
        content += f"\n# upload {upload.index} of benchmarks/serve.py\n"
        body, kind = multipart(
            {"csrftoken": token.group(1), "preset": "python", "protocol": "", "command": ""},
            "bot.py",
            content.encode(),
        )
        upload.status, _, upload.post_s = browser.request("POST", "/upload", body, {"Content-Type": kind})
        upload.answered = time.time()
        browser.close()  # the next upload of this entrant is minutes away: its connection would time out
        new = {version.digest for version in self.served.store.versions(entrant.id)} - self.known[entrant.id]
        self.known[entrant.id] |= new
        if upload.status == 303:
            if len(new) != 1:
                raise RuntimeError(f"the upload was accepted but {len(new)} new versions are in the store")
            upload.digest = new.pop()


# ------------------------------------------------------------------------------------------------ figures


def percentile(values: Sequence[float], share: float) -> float:
    """The nearest-rank percentile (nan for no values)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, math.ceil(share * len(ordered)) - 1))]


def cpu_times() -> tuple[int, int]:
    """The machine's busy and total CPU time so far, in clock ticks (/proc/stat)."""
    with open("/proc/stat") as stat:
        ticks = [int(value) for value in stat.readline().split()[1:]]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle and iowait
    return sum(ticks) - idle, sum(ticks)


def rusage_s() -> float:
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return sum(u.ru_utime + u.ru_stime for u in usage)


def descendants(root: int) -> list[str]:
    """The processes below `root` now, as "PID NAME (STATE) COMMAND LINE" (a zombie has no command line)."""
    parents: dict[int, int] = {}
    names: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
        parents[int(entry.name)] = int(fields.get("PPid", "0").strip())
        state = fields.get("State", "?").strip().split()[0]
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            command = ""
        names[int(entry.name)] = f"{fields.get('Name', '?').strip()} ({state}) {command[:100]}".strip()
    found = []
    for pid in parents:
        ancestor = parents.get(pid, 0)
        while ancestor not in (0, 1, root):
            ancestor = parents.get(ancestor, 0)
        if ancestor == root and not _resource_tracker(pid):
            found.append(f"{pid} {names[pid]}")
    return found


def _resource_tracker(pid: int) -> bool:
    """multiprocessing's own helper process (started with the pollers' process, ended at exit)."""
    try:
        return b"resource_tracker" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


class Tally(logging.Handler):
    """The server's logged errors, counted by logger and message (the first line of the exception's, if any),
    instead of a traceback each on the terminal."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.found: dict[str, int] = {}

    def emit(self, record: logging.LogRecord) -> None:
        what = record.getMessage()
        if record.exc_info is not None and record.exc_info[1] is not None:
            error = record.exc_info[1]
            what = f"{type(error).__name__}: {error}"
        key = f"{record.name}: {what.splitlines()[0] if what else ''}"
        self.found[key] = self.found.get(key, 0) + 1


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


@dataclass
class Run:
    """What one run measured, read before the server is stopped."""

    sandbox: str
    start: float
    end: float
    """When the pollers stopped (wall clock)."""
    finished: float
    """When the last upload was answered and the pollers had stopped."""
    uploads: list[Upload]
    uploader: Uploader
    matches: int
    cpu_s: float
    busy_share: float
    load: tuple[float, float, float]
    versions: dict[tuple[int, str], Version]
    """Every version in the store at the end, by (entrant, digest)."""
    queued: int
    checking: int
    samples: list[tuple[float, int, int]]
    """At the start and every 5 s: (seconds into the run, matches played, versions waiting for their check)."""
    logged: dict[str, int]
    ladder_error: str | None
    polled: dict[str, Any] = field(default_factory=dict)
    leftover: list[str] = field(default_factory=list)


def measure(args: argparse.Namespace, folder: Path) -> Run:
    sandbox = "basic" if args.basic else sandbox_level()
    tally = Tally()
    logging.getLogger().addHandler(tally)
    seconds = args.minutes * 60
    spawn = multiprocessing.get_context("spawn")
    with served(write_ladder(folder, sandbox), args.entrants) as (server, people):
        start = time.time() + 5  # the pollers' process is started and has imported by then
        end = start + seconds
        out = folder / "pollers.json"
        pollers = spawn.Process(
            target=poll_leaderboards, args=(server.port, args.pollers, args.poll_s, start, end, str(out))
        )
        pollers.start()
        failing_every = 1 / args.failing if args.failing > 0 else math.inf
        uploads = [
            Upload(
                index=n,
                entrant=people[n % len(people)][0],
                token=people[n % len(people)][1],
                failing=math.floor((n + 1) / failing_every) > math.floor(n / failing_every),
                due=start + seconds * n / max(1, args.uploads),
            )
            for n in range(args.uploads)
        ]
        uploader = Uploader(server)
        samples: list[tuple[float, int, int]] = []
        sampling = threading.Event()

        def sample() -> None:
            while not sampling.wait(5.0):
                samples.append((time.time() - start, matches_played(server), server.checker.waiting()))

        sampler = threading.Thread(target=sample, name="sampler")
        time.sleep(max(0.0, start - time.time()))
        matches_before, cpu_before, busy_before = matches_played(server), rusage_s(), cpu_times()
        samples.append((0.0, matches_before, server.checker.waiting()))
        sampler.start()
        uploader.run(uploads, args.upload_threads)
        pollers.join(max(0.0, end - time.time()) + 2 * TIMEOUT_S)
        sampling.set()
        sampler.join()
        finished = time.time()
        busy_after = cpu_times()
        matches_after = matches_played(server)
        samples.append((finished - start, matches_after, server.checker.waiting()))
        run = Run(
            sandbox=sandbox,
            start=start,
            end=end,
            finished=finished,
            uploads=uploads,
            uploader=uploader,
            matches=matches_after - matches_before,
            cpu_s=rusage_s() - cpu_before,
            busy_share=(busy_after[0] - busy_before[0]) / max(1, busy_after[1] - busy_before[1]),
            load=os.getloadavg(),
            versions={(v.entrant, v.digest): v for v in server.store.versions()},
            queued=server.checker.waiting(),
            checking=int(server.checker.current is not None),
            samples=samples,
            logged=dict(tally.found),
            ladder_error=server.games.last_error,
        )
    run.leftover = descendants(os.getpid())
    if pollers.is_alive():
        pollers.kill()
        raise RuntimeError("the pollers' process did not end")
    run.polled = json.loads(out.read_text())
    return run


def figures(args: argparse.Namespace, run: Run) -> dict[str, Any]:
    elapsed = run.finished - run.start
    minutes = elapsed / 60
    requests = run.polled["requests"]
    latencies = [seconds for _, seconds, status in requests if status == 200]
    uploads = run.uploads
    accepted = [u for u in uploads if u.digest is not None]
    verdicts: list[float] = []
    pending: list[float] = []
    unexpected: list[str] = []
    checks: dict[str, list[float]] = {"passed": [], "failed": []}
    for upload in accepted:
        assert upload.digest is not None
        version = run.versions[(upload.entrant.id, upload.digest)]
        if version.checked_at is None:
            pending.append(run.finished - upload.answered)
            continue
        verdicts.append(version.checked_at - upload.answered)
        checks[version.status.value].append(float((version.report or {}).get("seconds", math.nan)))
        if (version.status.value == "passed") == upload.failing:
            faults = "; ".join(f"{f['reason']}: {f['detail']}" for f in (version.report or {}).get("faults", ()))
            kind = "the crashing bot" if upload.failing else "the random bot"
            unexpected.append(f"upload {upload.index}, {kind}: {version.status.value} ({faults or 'no fault'})")
    checked_at = [v.checked_at for v in run.versions.values() if v.checked_at is not None]
    check_s = checks["passed"] + checks["failed"]
    posts = [u.post_s for u in uploads if u.status]
    pages = [u.page_s for u in uploads if not math.isnan(u.page_s)]
    return {
        "sandbox": run.sandbox,
        "entrants": args.entrants,
        "minutes": round(minutes, 2),
        "load_average": [round(value, 2) for value in run.load],
        "machine_busy_share": round(run.busy_share, 3),
        "cpu_s_tree": round(run.cpu_s, 1),
        "cpu_s_pollers": round(run.polled["cpu_s"], 1),
        "cpu_cores_server": round((run.cpu_s - run.polled["cpu_s"]) / elapsed, 2),
        "matches": run.matches,
        "matches_per_hour": round(run.matches / elapsed * 3600),
        "ladder_error": run.ladder_error,
        "leaderboard": {
            "clients": args.pollers,
            "period_s": args.poll_s,
            "requests": len(requests),
            "per_s": round(len(requests) / (run.end - run.start), 1),
            "errors": len(requests) - len(latencies),
            "p50_ms": ms(percentile(latencies, 0.50)),
            "p95_ms": ms(percentile(latencies, 0.95)),
            "p99_ms": ms(percentile(latencies, 0.99)),
            "max_ms": ms(max(latencies, default=math.nan)),
        },
        "uploads": {
            "made": len(uploads),
            "per_minute": round(len(uploads) / minutes, 1),
            "accepted": len(accepted),
            "refused_rate_limit": sum(1 for u in uploads if u.status == 429),
            "refused_other": sum(1 for u in uploads if u.status not in (0, 303, 429)),
            "errors": sum(1 for u in uploads if u.error is not None),
            "first_errors": [u.error for u in uploads if u.error is not None][:3],
            "late_max_s": round(max((u.started - u.due for u in uploads if not math.isnan(u.started)), default=0), 1),
            "sign_in_p50_ms": ms(percentile(run.uploader.signed_in_s, 0.5)),
            "page_p50_ms": ms(percentile(pages, 0.5)),
            "page_p99_ms": ms(percentile(pages, 0.99)),
            "post_p50_ms": ms(percentile(posts, 0.5)),
            "post_p99_ms": ms(percentile(posts, 0.99)),
            "post_max_ms": ms(max(posts, default=math.nan)),
        },
        "checks": {
            "verdicts": len(verdicts),
            "passed": len(checks["passed"]),
            "failed": len(checks["failed"]),
            "unexpected": len(unexpected),
            "first_unexpected": unexpected[:3],
            "verdicts_per_minute": round(sum(1 for t in checked_at if t >= run.start) / minutes, 1),
            "check_p50_s_passing": round(percentile(checks["passed"], 0.5), 1),
            "check_p50_s_failing": round(percentile(checks["failed"], 0.5), 1),
            "check_mean_s": round(sum(check_s) / len(check_s), 2) if check_s else math.nan,
            "check_p95_s": round(percentile(check_s, 0.95), 1),
            "checker_busy_share": round(sum(check_s) / elapsed, 2),
            "to_verdict_p50_s": round(percentile(verdicts, 0.5), 1),
            "to_verdict_p95_s": round(percentile(verdicts, 0.95), 1),
            "to_verdict_max_s": round(max(verdicts, default=math.nan), 1),
            "pending": len(pending),
            "pending_oldest_s": round(max(pending, default=0.0), 1),
            "queued": run.queued,
            "in_check": run.checking,
            "abandoned": max(0, len(pending) - run.queued - run.checking),
        },
        "timeline": timeline(run, requests, checked_at),
        "errors_logged": run.logged,
        "leftover_processes": {
            "zombies": sum(1 for line in run.leftover if " (Z)" in line),
            "alive": [line for line in run.leftover if " (Z)" not in line],
        },
    }


def timeline(run: Run, requests: Sequence[Sequence[float]], checked_at: Sequence[float]) -> list[dict[str, Any]]:
    """Minute by minute: the ladder's matches, the leaderboard's latency, the entrants' pages, the uploads
    answered, the verdicts given, and the checks waiting at the minute's end."""
    rows = []
    played = run.samples[0][1]
    count = max(1, math.ceil((run.finished - run.start - 10) / 60))  # a last few seconds join the last minute
    for minute in range(count):
        low = run.start + 60 * minute
        high = run.start + 60 * (minute + 1) if minute + 1 < count else run.finished + 1
        board = [seconds for at, seconds, status in requests if status == 200 and low <= run.start + at < high]
        pages = [u.page_s for u in run.uploads if low <= u.started < high and not math.isnan(u.page_s)]
        _, matches, waiting = [sample for sample in run.samples if run.start + sample[0] < high][-1]
        rows.append(
            {
                "minute": minute + 1,
                "matches": matches - played,
                "leaderboard_p50_ms": ms(percentile(board, 0.5)),
                "leaderboard_p99_ms": ms(percentile(board, 0.99)),
                "page_p50_ms": ms(percentile(pages, 0.5)),
                "uploads": sum(1 for u in run.uploads if low <= u.answered < high),
                "verdicts": sum(1 for t in checked_at if low <= t < high),
                "waiting": waiting,
            }
        )
        played = matches
    return rows


def without_nan(value: Any) -> Any:
    """JSON's null for a figure with nothing to measure (NaN is not JSON)."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {key: without_nan(item) for key, item in value.items()}
    if isinstance(value, list):
        return [without_nan(item) for item in value]
    return value


def report(found: dict[str, Any]) -> None:
    board, up, checks = found["leaderboard"], found["uploads"], found["checks"]
    print(
        f"arena serve, sandbox {found['sandbox']}, {found['entrants']} entrants, {found['minutes']:.1f} minutes"
        f" (load average at the end {', '.join(map(str, found['load_average']))};"
        f" the machine's CPUs {found['machine_busy_share']:.0%} busy)"
    )
    print(f"  ladder: {found['matches']} matches, {found['matches_per_hour']:,} an hour")
    if found["ladder_error"]:
        print(f"    the ladder's last failure: {found['ladder_error']}")
    print(
        f"  leaderboard: {board['clients']} clients every {board['period_s']} s, {board['requests']} requests"
        f" ({board['per_s']}/s), {board['errors']} errors; p50 {board['p50_ms']} ms, p95 {board['p95_ms']} ms,"
        f" p99 {board['p99_ms']} ms, max {board['max_ms']} ms"
    )
    print(
        f"  uploads: {up['made']} ({up['per_minute']}/min), {up['accepted']} accepted,"
        f" {up['refused_rate_limit']} refused by the hourly limit, {up['refused_other']} otherwise, {up['errors']}"
        f" errors; at most {up['late_max_s']} s behind schedule"
    )
    for error in up["first_errors"]:
        print(f"    {error}")
    print(
        f"    sign-in p50 {up['sign_in_p50_ms']} ms; entrant's page p50 {up['page_p50_ms']} ms,"
        f" p99 {up['page_p99_ms']} ms; POST p50 {up['post_p50_ms']} ms, p99 {up['post_p99_ms']} ms,"
        f" max {up['post_max_ms']} ms"
    )
    print(
        f"  checks: {checks['verdicts']} verdicts ({checks['passed']} passed, {checks['failed']} failed,"
        f" {checks['unexpected']} not as expected), {checks['verdicts_per_minute']}/min against"
        f" {up['per_minute']} uploads/min"
    )
    print(
        f"    one check: p50 {checks['check_p50_s_passing']} s passing, {checks['check_p50_s_failing']} s failing;"
        f" mean {checks['check_mean_s']} s, p95 {checks['check_p95_s']} s; the checker busy"
        f" {checks['checker_busy_share']:.0%} of the run"
    )
    print(
        f"    upload to verdict: p50 {checks['to_verdict_p50_s']} s, p95 {checks['to_verdict_p95_s']} s,"
        f" max {checks['to_verdict_max_s']} s; at the end {checks['pending']} pending (the oldest"
        f" {checks['pending_oldest_s']} s): {checks['queued']} queued, {checks['in_check']} in its check,"
        f" {checks['abandoned']} abandoned (the check ended in an error of the arena's own)"
    )
    for verdict in checks["first_unexpected"]:
        print(f"    {verdict}")
    print(
        f"  CPU: {found['cpu_s_tree']} s in this process tree, of which {found['cpu_s_pollers']} s the pollers';"
        f" the server's: {found['cpu_cores_server']} cores on average"
    )
    print("  minute  matches  board p50/p99 ms  page p50 ms  uploads  verdicts  waiting")
    for row in found["timeline"]:
        board = f"{row['leaderboard_p50_ms']:>7} / {row['leaderboard_p99_ms']:<7}"
        print(
            f"  {row['minute']:>6}  {row['matches']:>7}  {board}  {row['page_p50_ms']:>11}  {row['uploads']:>7}"
            f"  {row['verdicts']:>8}  {row['waiting']:>7}"
        )
    left = found["leftover_processes"]
    print(f"  errors logged by the server: {sum(found['errors_logged'].values())}")
    for what, count in found["errors_logged"].items():
        print(f"    {count} x {what}")
    print(f"  processes left under this one after shutdown: {left['zombies']} zombies, {len(left['alive'])} alive")
    for line in left["alive"]:
        print(f"    {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--entrants", type=int, default=150)
    parser.add_argument("--uploads", type=int, default=1000)
    parser.add_argument("--failing", type=float, default=0.1, help="the share of uploads that crash at start")
    parser.add_argument("--pollers", type=int, default=50)
    parser.add_argument("--poll-s", type=float, default=1.0)
    parser.add_argument("--upload-threads", type=int, default=4, help="uploads in progress at once, at most")
    parser.add_argument("--basic", action="store_true", help="sandbox basic instead of strict")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="arena-bench-serve-", ignore_cleanup_errors=True) as folder:
        found = figures(args, measure(args, Path(folder)))
    if args.json:
        print(json.dumps(without_nan(found), indent=2))
    else:
        report(found)


if __name__ == "__main__":
    main()

"""The `arena` command: parses arguments, calls the library, prints."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import secrets
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from arena import __version__
from arena.engine import RULESETS, Match, get_ruleset
from arena.errors import ArenaError, ReplayMismatch, UsageError
from arena.players.values import Timing, Transport
from arena.replay import Narrator, Resimulation, read_replay, write_replay
from arena.sandbox.spec import Limits, MemoryMechanism

if TYPE_CHECKING:
    from arena.config import TournamentConfig
    from arena.plugins import BotOption


def _play(args: argparse.Namespace) -> int:
    from arena.players import RandomPlayer
    from arena.runner import play_match

    ruleset = get_ruleset(args.ruleset)
    if not ruleset.min_players <= args.players <= ruleset.max_players:
        raise UsageError(
            f"--players: the {ruleset.name} ruleset is for {ruleset.min_players}"
            f" to {ruleset.max_players} players, not {args.players}"
        )
    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    match_id = args.match_id or f"play-{seed}"
    names = [f"random-{seat}" for seat in range(args.players)]
    match = Match(ruleset, names, seed)
    result = play_match(match, [RandomPlayer(seed) for _ in names], match_id).result
    if args.account:
        for line in Narrator(match, match_id).lines():
            print(line)
    else:
        winners = ", ".join(names[s] for s in result.winners)
        print(
            f"match {match_id}: ruleset {ruleset.name}, seed {seed}, {match.round} rounds, {match.target} tokens to win"
        )
        print(f"winner{'s' if len(result.winners) != 1 else ''}: {winners}")
        for place, seats in enumerate(result.ranking, start=1):
            print(f"  {place}. " + ", ".join(f"{names[s]} ({_tokens(result.tokens[s])})" for s in seats))
    if args.replay:
        write_replay(args.replay, match, match_id)
        print(f"replay written to {args.replay}")
    return 0


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _tokens(count: int) -> str:
    return _plural(count, "token", "tokens")


def _replay(args: argparse.Namespace) -> int:
    lines = read_replay(args.file)
    resimulation = Resimulation(lines)
    error: ReplayMismatch | None = None
    try:
        resimulation.run()
    except ReplayMismatch as mismatch:
        error = mismatch
    if args.html is not None:
        from arena.report import write_replay_page

        write_replay_page(args.file, args.html)
        print(f"replay viewer: {args.html}")
    elif not args.verify and resimulation.match is not None:
        for line in Narrator(resimulation.match, resimulation.match_id).lines():
            print(line)
    for warning in resimulation.warnings:
        print(f"{args.file}: warning: {warning}", file=sys.stderr)
    if error is not None:
        print(f"{args.file}:{error.line or lines[-1].number}: {error.message}", file=sys.stderr)
        return 1
    if args.verify:
        match = resimulation.match
        assert match is not None and match.result is not None
        print(f"{args.file}: valid ({match.ruleset.name}, {len(match.players)} players, {match.round} rounds)")
    return 0


def _bot_name(command: Sequence[str]) -> str:
    """The bot's script when the command names one (python3 alice/bot.py -> bot), else its program."""
    scripts = [Path(part) for part in command[1:] if Path(part).suffix and Path(part).is_file()]
    return (scripts[0] if scripts else Path(command[0])).stem


def _check_bot(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from arena.checkbot import check_bot, describe
    from arena.config import bot_directory
    from arena.players.values import BotCommand
    from arena.sandbox import LaunchSpec, SandboxError, SandboxLevel, SetupError, preflight, resolve_level

    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        raise UsageError("check-bot: give the bot's command after --, e.g. arena check-bot -- python3 bot.py")
    if args.dir is not None and not args.dir.is_dir():
        raise UsageError(f"check-bot: --dir {args.dir}: not a directory")
    if min(args.matches, args.move_ms, args.startup_ms, args.memory_mb, args.disk_mb, args.cpu_s, args.wall_factor) < 1:
        raise UsageError(
            "check-bot: --matches, --move-ms, --startup-ms, --wall-factor, --memory-mb, --disk-mb and --cpu-s must be"
            " at least 1"
        )
    level, warning = resolve_level(SandboxLevel(args.sandbox))
    if warning:
        print(warning, file=sys.stderr)
    name = args.name or _bot_name(command)
    if args.dir is not None:
        bot = BotCommand.in_directory(name, tuple(command), args.protocol, args.dir)
    else:  # as a tournament file here would give it: that of its first file argument, else here
        bot = BotCommand.in_directory(name, tuple(command), args.protocol, Path.cwd())
        bot = replace(bot, directory=bot_directory(command, None, Path.cwd().resolve()))
    timing = Timing(move_ms=args.move_ms, startup_ms=args.startup_ms, wall_factor=args.wall_factor, ponder=args.ponder)
    limits = Limits(
        memory_mb=args.memory_mb,
        cpu_s=args.cpu_s,
        disk_mb=args.disk_mb,
        memory_mechanism=MemoryMechanism(args.memory_mechanism),
    )
    ruleset = get_ruleset(args.ruleset)
    print(
        f"checking {name}: {' '.join(command)} (protocol {args.protocol}, sandbox {level.value},"
        f" ruleset {ruleset.name}, {_plural(args.matches, 'match', 'matches')} per table size)"
    )
    print(f"  the bot's directory: {bot.directory}")
    try:  # what a start would refuse, said before the first one
        preflight(LaunchSpec(command=bot.command, bot_dir=bot.directory, level=level), level)
    except SandboxError as error:
        print(f"FAIL: {error}")
        return 1
    echo = _stderr_echo(name) if args.stderr else None
    if args.replays is not None:
        args.replays.mkdir(parents=True, exist_ok=True)
    try:
        report = check_bot(
            bot,
            ruleset,
            matches=args.matches,
            timing=timing,
            sandbox=level,
            limits=limits,
            seed=args.seed,
            stderr_echo=echo,
            replays=args.replays,
        )
    except SetupError as error:
        print(f"ERROR: the arena could not start your bot here: {error}; this is not your bot's fault")
        return 2
    if args.replays is not None:
        print(f"replays: {args.replays} (arena replay FILE --html OUT.html shows one move by move)")
    for line in describe(report):
        print(line)
    return 0 if report.clean else 1


def _stderr_echo(name: str) -> Callable[[bytes], None]:
    """Show the bot's stderr as it comes, each line marked with its name (check-bot --stderr)."""
    pending = bytearray()

    def echo(chunk: bytes) -> None:
        pending.extend(chunk)
        *lines, rest = pending.split(b"\n")
        for line in lines:
            sys.stderr.write(f"[{name}] {line.decode('utf-8', errors='replace')}\n")
        sys.stderr.flush()
        pending[:] = rest

    return echo


def _bots(args: argparse.Namespace) -> int:
    """Every installed bot; under each, the options a tournament file may set for it (`options:`)."""
    from arena.plugins import load_registry
    from arena.plugins.manager import DISABLE_VARIABLE, plugins_disabled

    bots = list(load_registry().values())
    if plugins_disabled():
        print(f"arena: {DISABLE_VARIABLE} is set: built-in bots only", file=sys.stderr)
    if args.format == "json":
        listing = [
            {
                "name": bot.name,
                "description": bot.spec.description,
                "distribution": bot.distribution,
                "version": bot.version,
                "protocol": bot.spec.protocol,
                "in_process": bot.spec.player is not None,
                "options": [_option_json(option) for option in bot.spec.options],
            }
            for bot in bots
        ]
        print(json.dumps(listing, indent=2))
        return 0
    rows = [(bot.name, bot.spec.description, f"{bot.distribution} {bot.version}") for bot in bots]
    widths = [max((len(row[column]) for row in rows), default=0) for column in range(2)]
    for bot, (name, description, source) in zip(bots, rows, strict=True):
        print(f"{name:<{widths[0]}}  {description:<{widths[1]}}  {source}")
        for option in bot.spec.options:
            default = "not set unless given" if option.default is None else f"default {option.default}"
            kind = f"{option.kind.__name__} {option.minimum} to {option.maximum}, {default}"
            print(f"{'':<{widths[0]}}  option {option.name} ({kind}): {option.help}")
    return 0


def _option_json(option: BotOption) -> dict[str, object]:
    return {
        "name": option.name,
        "type": option.kind.__name__,
        "default": option.default,
        "minimum": option.minimum,
        "maximum": option.maximum,
        "help": option.help,
    }


def _doctor(args: argparse.Namespace) -> int:
    from arena.doctor import diagnose
    from arena.sandbox import Limits, SandboxLevel

    if args.file is not None:
        config = _tournament_part(args.file)  # a ladder file's too: the sandbox its bots get
        asked, limits, output, ids = config.sandbox, config.limits, config.output, config.bot_uids
        what = f"{args.file} (sandbox {asked.value})"
    else:
        asked, limits, output, ids = SandboxLevel(args.sandbox), Limits(), Path.cwd(), None
        what = f"sandbox {asked.value}"
    found = diagnose(asked, limits, output, ids)
    if args.format == "json":
        print(json.dumps(found.as_json(), indent=2))
        return 0 if found.ok else 1
    print(f"arena doctor: what this machine gives {what}")
    print(f"  level: {found.level.value}{'' if found.level is asked else f' (not {asked.value}: {found.why})'}")
    width = max(len(fact.name) for fact in found.facts)
    for fact in found.facts:
        print(f"  {fact.name + ':':<{width + 1}} {fact.value}{'  << short of what is asked' if fact.short else ''}")
    print(f"hostile bots, at {found.level.value}:")
    for check in found.checks:
        print(f"  {'PASS' if check.passed else 'FAIL'} {check.name}: {check.detail}")
    if found.ok:
        print("ok: this machine gives what was asked")
    else:
        print("NOT OK: see the lines above (`arena docs configuration`, section arena doctor, says what each means)")
    return 0 if found.ok else 1


def _is_ladder(path: Path) -> bool:
    """A ladder file (a tournament file with a ladder: section, arena serve's) rather than a tournament's."""
    try:
        return any(line.startswith("ladder:") for line in path.read_text(encoding="utf-8").splitlines())
    except (OSError, UnicodeDecodeError):
        return False  # load_config says what is wrong with it


def _tournament_part(path: Path) -> TournamentConfig:
    """A tournament file's configuration, or a ladder file's tournament part."""
    from arena.config import load_config

    if _is_ladder(path):
        from arena.serve.ladder import load_ladder

        return load_ladder(path).tournament
    return load_config(path)


def _serve(args: argparse.Namespace) -> int:
    from arena.sandbox import SandboxLevel
    from arena.serve.ladder import load_ladder

    try:
        for module in ("itsdangerous", "jinja2", "multipart", "starlette", "uvicorn", "wtforms"):  # the serve extra
            importlib.import_module(module)
    except ImportError as error:
        raise UsageError(
            f'arena serve needs the serve extra ({error.name} is missing): pip install "loveletter-arena[serve]"'
        ) from None
    from arena.serve.server import serve

    ladder = load_ladder(args.file)
    if ladder.tournament.sandbox is SandboxLevel.NONE:
        print(
            "arena: warning: sandbox: none: every uploaded bot runs as this user, unconfined: it can read the other"
            " entrants' code and the ladder's data; use strict for a ladder of other people's programs",
            file=sys.stderr,
        )
    print(
        f"arena: serving {ladder.tournament.name} on http://{args.host}:{args.port}/ (Ctrl-C stops it)", file=sys.stderr
    )
    serve(ladder, args.host, args.port, secure_cookies=args.https)
    return 0


def _serve_add(args: argparse.Namespace) -> int:
    from arena.serve.ladder import load_ladder
    from arena.serve.roster import add_roster, sign_in_link, write_links
    from arena.serve.server import open_ladder
    from arena.serve.store import Role

    ladder = load_ladder(args.file)
    store, _ = open_ladder(ladder)
    references = [bot.name for bot in ladder.tournament.bots]
    added = add_roster(store, args.roster, Role.ORGANISER if args.organisers else Role.ENTRANT, references)
    if args.links is not None:
        write_links(args.links, added, args.base_url)
        print(f"added {len(added)}; their sign-in links are in {args.links}")
    else:
        for entrant, token in added:
            print(f"{entrant.name},{entrant.email},{sign_in_link(args.base_url, token)}")
    return 0


def _serve_link(args: argparse.Namespace) -> int:
    from arena.serve.ladder import load_ladder
    from arena.serve.roster import sign_in_link
    from arena.serve.server import open_ladder

    store, _ = open_ladder(load_ladder(args.file))
    entrant = store.entrant_named(args.name)
    if entrant is None:
        raise UsageError(f"no entrant named {args.name!r} in this ladder")
    print(sign_in_link(args.base_url, store.new_link(entrant.id)))
    return 0


def _serve_final(args: argparse.Namespace) -> int:
    from arena.report.live import LiveStandings
    from arena.runner.tournament import failure_line
    from arena.serve.final import play_final, write_final
    from arena.serve.ladder import load_ladder

    ladder = load_ladder(args.file)
    final = write_final(ladder, now=args.now)
    config = final.config
    print(f"arena: {_plural(len(final.entrants), 'entrant', 'entrants')} in the final: {final.path}", file=sys.stderr)
    _say_sandbox_fallback(config)
    if args.restart:
        _say_restart(config)
    live = LiveStandings(config.output)
    try:
        summary = play_final(ladder, final, restart=args.restart, live=live)
    except BaseException:
        live.stop()
        raise
    run = summary.run
    kept = f", {run.kept} kept from an earlier run" if run.kept else ""
    print(
        f"{config.name}: {_plural(run.matches, 'match', 'matches')} ({run.played} played now{kept}),"
        f" {_plural(run.faults, 'fault', 'faults')}, {run.seconds:.1f} s"
    )
    for problem in summary.report_problems:
        print(f"arena: no replay viewer data for {problem}", file=sys.stderr)
    print(f"results: {run.output}")
    print(f"report: {summary.report}")
    if summary.gradebook is not None:
        print(f"gradebook: {summary.gradebook}")
    failures = failure_line(run)
    if failures is not None and summary.gradebook is None:
        failures += f"; no gradebook until every match is played: run `arena serve-admin final {args.file}` again"
    if failures is not None:
        print(failures, file=sys.stderr)
        return 1
    return 0


def _validate(args: argparse.Namespace) -> int:
    from arena.config import Format, config_hash, load_config
    from arena.runner.schedule import preview
    from arena.store.database import (
        another_configuration,
        another_seed,
        recorded_config_hash,
        recorded_config_text,
        recorded_durations,
        recorded_seed,
    )

    if _is_ladder(args.file):
        from arena.serve.ladder import load_ladder

        ladder = load_ladder(args.file)  # every problem at once, as for a tournament file
        deadline = "no deadline" if ladder.deadline is None else f"deadline {ladder.deadline.isoformat()}"
        references = ", ".join(bot.name for bot in ladder.tournament.bots)
        print(
            f"{args.file}: a ladder ({ladder.tournament.name}): {ladder.tournament.players_per_match} players a"
            f" table, reference bots {references}, data in {ladder.data}, {deadline}, final:"
            f" {ladder.final.format.value}"
        )
        return 0
    config = load_config(args.file)  # a ConfigError lists every problem; main() prints it (exit status 2)
    _say_seed_warning(config, args.file)
    stored, this = recorded_config_hash(config.output), config_hash(config)
    if stored is not None and stored != this:  # as arena run would refuse it
        raise another_configuration(config.output, recorded_config_text(config.output), config.raw_text)
    kept = recorded_seed(config.output)
    if config.seed is not None and kept is not None and kept != config.seed:
        raise another_seed(config.output, config.seed)
    size = preview(config)
    print(
        f"{args.file}: ok — {config.format.value}, {_plural(len(config.bots), 'bot', 'bots')},"
        f" {config.players_per_match} per table, ruleset {config.ruleset}"
    )
    matches = _plural(size.matches, "match", "matches")
    if config.sprt is not None:
        print(
            f"  {config.sprt.candidate} against {config.sprt.baseline} in pairs of matches on the same deals, until"
            f" the test decides: at most {config.sprt.max_pairs} pairs ({matches})"
        )
    elif config.format is Format.SWISS:
        print(f"  {matches}: {_plural(size.rounds, 'round', 'rounds')} of {_plural(size.tables, 'table', 'tables')}")
    else:
        times = size.matches // size.tables
        again = f", each played {times} times" if times > 1 and size.matches % size.tables == 0 else ""
        print(f"  {matches}: {_plural(size.tables, 'table', 'tables')} (each its own group of bots){again}")
    durations = recorded_durations(config.output)
    if durations and config.sprt is not None:  # its length is the test's to decide
        state = _sprt_lines(config.output, "table")[3].removeprefix("decision: ")
        print(f"  {len(durations)} played already in {config.output}: {state}")
    elif durations:
        left = max(0, size.matches - len(durations))
        each = sum(durations) / len(durations)
        workers = max(1, min(config.concurrency, left))
        when = f"about {_duration(each * left / workers)} left" if left else "nothing left to play"
        print(
            f"  {len(durations)} played already in {config.output}: {when}"
            f" ({each:.1f} s a match so far, {_plural(config.concurrency, 'worker', 'workers')})"
        )
    return 0


def _duration(seconds: float) -> str:
    """A rough span of time: seconds, minutes or hours."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _size(size: int) -> str:
    """A size as a person reads it: 243 bytes, 1.5 KiB, 12 KiB, 3.2 MiB."""
    if size < 1024:
        return _plural(size, "byte", "bytes")
    value, unit = size / 1024, "KiB"
    if value >= 1024:
        value, unit = value / 1024, "MiB"
    return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"


def _seats_by_match(output: Path) -> dict[str, tuple[str, ...]]:
    """Each recorded match's seats, for saying whether a bot played it (empty where no results can be read)."""
    from arena.errors import StoreError
    from arena.store import ResultStore

    try:
        store = ResultStore.open_existing(output)
    except StoreError:
        return {}
    try:
        return {match.job.match_id: match.job.seats for match in store.matches()}
    finally:
        store.close()


def _logs(args: argparse.Namespace) -> int:
    from arena.store.logs import LOGS, log_path, logged_bots, match_logs

    output: Path = args.output
    if not output.is_dir():
        raise UsageError(f"logs: {output}: no such folder")
    bots = logged_bots(output)
    if args.bot is None:
        if not bots:
            print(f"no bot wrote to its stderr in {output} (its logs would be in {output / LOGS})")
        for bot in bots:
            logs = match_logs(output, bot)
            size = sum(path.stat().st_size for path in logs)
            print(f"{bot}: {_plural(len(logs), 'match', 'matches')}, {_size(size)} in {output / LOGS / bot}")
        return 0
    if args.bot not in bots:
        seats = _seats_by_match(output)  # read only to say why there is no log
        known = f" (bots with logs: {', '.join(bots)})" if bots else ""
        if seats and not any(args.bot in played for played in seats.values()):
            everyone = sorted({bot for played in seats.values() for bot in played})
            raise UsageError(f"logs: no bot {args.bot!r} played in {output} (bots: {', '.join(everyone)})")
        raise UsageError(f"logs: {args.bot} wrote nothing to its stderr in {output}{known}")
    if args.match is not None:
        path = log_path(output, args.bot, args.match)
        if not path.is_file():
            seats = _seats_by_match(output)
            if seats and args.match not in seats:
                raise UsageError(f"logs: no match {args.match!r} in {output} (arena results {output} lists them)")
            if seats and args.bot not in seats[args.match]:
                raise UsageError(f"logs: {args.bot} did not play {args.match} ({', '.join(seats[args.match])} did)")
            raise UsageError(f"logs: {args.bot} wrote nothing to its stderr in match {args.match} ({path})")
        sys.stdout.write(path.read_text(encoding="utf-8"))
        return 0
    for path in match_logs(output, args.bot):
        print(f"==> {path.stem} ({path}) <==")
        text = path.read_text(encoding="utf-8")
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def _diagnose(args: argparse.Namespace) -> int:
    from arena.analysis.diagnose import diagnose, fair_play
    from arena.analysis.report import describe, fair_play_lines
    from arena.store import ResultStore

    store = ResultStore.open_existing(args.output)
    try:
        known = json.loads(store.meta().get("bots", "[]"))
        if args.bot is not None and args.bot not in known:
            raise UsageError(f"diagnose: no bot {args.bot!r} in {args.output} (bots: {', '.join(known)})")
        found = diagnose(store, None if args.bot is None else [args.bot])
        fair = fair_play(store, [bot.bot for bot in found])
    finally:
        store.close()
    if args.format == "json":
        shown = [{**bot.json(), "fair_play": fair.bot(bot.bot).json()} for bot in found]
        print(json.dumps({"bots": shown}, indent=2))
    else:
        for bot in found:
            for line in [*describe(bot), *fair_play_lines(fair.bot(bot.bot))]:
                print(line)
    return 0


def _sprt(args: argparse.Namespace) -> int:
    for line in _sprt_lines(args.output, args.format):
        print(line)
    return 0


def _sprt_lines(output: Path, fmt: str) -> list[str]:
    from arena.analysis.sprt import as_json, describe, stored_test
    from arena.store import ResultStore

    store = ResultStore.open_existing(output)
    try:
        config, state = stored_test(store)
    finally:
        store.close()
    return [json.dumps(as_json(config, state), indent=2)] if fmt == "json" else describe(config, state)


def _run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from arena.config import load_config
    from arena.runner.tournament import failure_line, run_tournament

    config = load_config(args.file)
    if args.concurrency is not None:
        if args.concurrency < 1:
            raise UsageError(f"--concurrency must be at least 1, not {args.concurrency}")
        config = replace(config, concurrency=args.concurrency)
    if args.dask is not None:
        from arena.config import ExecutorType

        config = replace(config, executor=replace(config.executor, type=ExecutorType.DASK, address=args.dask))
    _say_seed_warning(config, args.file)
    _say_sandbox_fallback(config)
    _retired_replay_pages(args.replay_pages)
    if args.restart:
        _say_restart(config)
    from arena.report.live import LiveStandings

    live = LiveStandings(config.output)
    try:
        summary = run_tournament(config, restart=args.restart, progress=False if args.quiet else None, live=live)
    except BaseException:
        live.stop()
        raise
    kept = f", {summary.kept} kept from an earlier run" if summary.kept else ""
    print(
        f"{config.name}: {_plural(summary.matches, 'match', 'matches')} ({summary.played} played now{kept}),"
        f" {_plural(summary.faults, 'fault', 'faults')}, {summary.seconds:.1f} s"
    )
    if config.sprt is not None:
        for line in _sprt_lines(summary.output, "table"):
            print(line)
    print(f"results: {summary.output}")
    print(f"report: {_write_report(summary.output)}")
    failures = failure_line(summary)
    if failures is not None:
        print(failures, file=sys.stderr)
        return 1
    return 0


def _say_seed_warning(config: TournamentConfig, shown: Path) -> None:
    """A written seed a bot could know: every deal would follow from it. Said once, before the run (its workers
    do not load the file)."""
    from arena.config import seed_warning

    warning = seed_warning(config)
    if warning is not None:
        print(f"arena: {shown}: {warning}", file=sys.stderr)


def _say_restart(config: TournamentConfig) -> None:
    """What --restart throws away, said before it does."""
    from arena.store.database import recorded_durations

    recorded = len(recorded_durations(config.output))
    if recorded:
        seed = "" if config.seed is not None else "; a new seed is drawn for the deals"
        print(
            f"arena: --restart: the {_plural(recorded, 'match', 'matches')} recorded in {config.output}"
            f" {'is' if recorded == 1 else 'are'} discarded{seed}",
            file=sys.stderr,
        )


def _say_sandbox_fallback(config: TournamentConfig) -> None:
    """Before the workers start, say once what the sandbox cannot do here; they inherit that it was said.

    Only when some bot will run as a process here: built-in bots with an in-process player need no sandbox, and
    a cluster's workers have sandboxes of their own.
    """
    from arena.config import ExecutorType
    from arena.plugins import load_registry
    from arena.sandbox import resolve_level

    if config.executor.type is not ExecutorType.LOCAL:
        return
    in_process = {bot.name for bot in config.bots if bot.builtin is not None and not bot.subprocess}
    if in_process:
        registry = load_registry()
        in_process = {
            bot.name for bot in config.bots if bot.name in in_process and registry.lookup(bot.builtin or "").spec.player
        }
    if len(in_process) < len(config.bots):
        _, warning = resolve_level(config.sandbox)
        if warning:
            print(warning, file=sys.stderr)


REPLAY_PAGES_HELP = argparse.SUPPRESS
"""--replay-pages is retired: still accepted (and said to be ignored) so that old scripts run, but not listed."""


def _retired_replay_pages(given: str | None) -> None:
    if given is not None:
        print(
            "arena: --replay-pages is retired and ignored: every match gets a small viewer file"
            " (OUTPUT/report/matches/), opened by the one viewer page",
            file=sys.stderr,
        )


def _write_report(output: Path) -> Path:
    """The HTML report of `output`; a match whose replay cannot be read is named on stderr, without viewer data."""
    from arena.report import write_report

    report = write_report(output)
    for problem in report.problems:
        print(f"arena: no replay viewer data for {problem}", file=sys.stderr)
    return report.index


def _report(args: argparse.Namespace) -> int:
    _retired_replay_pages(args.replay_pages)
    print(f"report: {_write_report(args.output)}")
    return 0


def _results(args: argparse.Namespace) -> int:
    from arena.store import ResultStore
    from arena.store.export import match_rows, write_rows

    store = ResultStore.open_existing(args.output)
    try:
        write_rows(match_rows(store), args.format, sys.stdout)
    finally:
        store.close()
    return 0


def _standings(args: argparse.Namespace) -> int:
    from arena.store import ResultStore
    from arena.store.export import print_standings, standing_rows, write_rows

    store = ResultStore.open_existing(args.output)
    try:
        if args.format == "table":
            print_standings(store, sys.stdout)
        else:
            write_rows(standing_rows(store), args.format, sys.stdout)
    finally:
        store.close()
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arena",
        description="Love Letter tournaments between bots.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    play = commands.add_parser(
        "play",
        help="play one match in-process between random players",
        description="Play one match between built-in random players and print the outcome.",
    )
    play.add_argument("--players", type=int, default=4, help="number of seats (default: 4)")
    play.add_argument("--ruleset", choices=sorted(RULESETS), default="2019", help="default: 2019")
    play.add_argument("--seed", type=int, help="seed of the match (default: a random one, printed)")
    play.add_argument("--match-id", help="identity written to the replay (default: play-SEED)")
    play.add_argument("--replay", type=Path, metavar="FILE", help="write the replay (JSON Lines) here")
    play.add_argument("--account", action="store_true", help="print the whole match, move by move")
    play.set_defaults(run=_play)

    replay = commands.add_parser(
        "replay",
        help="print or verify a replay",
        description=(
            "Print a readable account of a replay, or with --verify re-simulate it and name the"
            " first line that disagrees with the rules (exit status 1)."
        ),
    )
    replay.add_argument("file", type=Path, metavar="FILE", help="a replay file (JSON Lines)")
    replay.add_argument("--verify", action="store_true", help="check it against the rules only")
    replay.add_argument(
        "--html",
        type=Path,
        metavar="OUT.html",
        help="write a self-contained replay viewer page (step through the match, full view or as one seat saw it)",
    )
    replay.set_defaults(run=_replay)

    check = commands.add_parser(
        "check-bot",
        help="check a bot before submitting it",
        description=(
            "Start a bot exactly as a tournament would, check its handshake, play matches against random"
            " players at every table size of the ruleset, and print each fault with its reason and the"
            " bot's stderr, its provable mistakes and its reply times (the ones too late among them). Exit status 0"
            " only for a clean bot."
        ),
        usage="arena check-bot [options] -- CMD [ARGS ...]",
    )
    timing, limits = Timing(), Limits()
    check.add_argument(
        "--protocol",
        choices=[transport.value for transport in Transport],
        default=Transport.ZMQ.value,
        help=f"default: {Transport.ZMQ.value}",
    )
    check.add_argument("--sandbox", choices=["strict", "basic", "none"], default="strict", help="default: strict")
    check.add_argument("--ruleset", choices=sorted(RULESETS), default="2019", help="default: 2019")
    check.add_argument("--matches", type=int, default=3, help="matches per table size (default: 3)")
    check.add_argument(
        "--move-ms",
        type=int,
        default=timing.move_ms,
        help=f"CPU time allowed per reply, all the bot's processes (default: {timing.move_ms})",
    )
    check.add_argument(
        "--wall-factor",
        type=int,
        default=timing.wall_factor,
        help=f"the wall-clock cap per reply, in times --move-ms (default: {timing.wall_factor})",
    )
    check.add_argument(
        "--ponder", action="store_true", help="let the bot run off its turn (by default it is frozen off turn)"
    )
    check.add_argument(
        "--startup-ms",
        type=int,
        default=timing.startup_ms,
        help=f"time allowed to say hello (default: {timing.startup_ms})",
    )
    check.add_argument(
        "--memory-mb",
        type=int,
        default=limits.memory_mb,
        help=f"memory the bot's processes may use together (default: {limits.memory_mb})",
    )
    check.add_argument(
        "--memory-mechanism",
        choices=[mechanism.value for mechanism in MemoryMechanism],
        default=limits.memory_mechanism.value,
        help=f"how the memory limit is held: a cgroup, or rlimit (RLIMIT_DATA and a watch); default:"
        f" {limits.memory_mechanism.value}",
    )
    check.add_argument(
        "--disk-mb",
        type=int,
        default=limits.disk_mb,
        help=f"what the bot may have written, workdir and /tmp (default: {limits.disk_mb})",
    )
    check.add_argument(
        "--cpu-s", type=int, default=limits.cpu_s, help=f"CPU time limit per process (default: {limits.cpu_s})"
    )
    check.add_argument(
        "--dir",
        type=Path,
        help="the bot's directory, in which its relative file arguments are taken (default: as a tournament file"
        " here would set it: the directory of the first file its command names, else here)",
    )
    check.add_argument("--name", help="the bot's name (default: from its command)")
    check.add_argument("--seed", type=int, default=1, help="seed of the matches (default: 1)")
    check.add_argument(
        "--stderr", action="store_true", help="show what the bot writes to its stderr as it comes, marked [NAME]"
    )
    check.add_argument(
        "--replays",
        type=Path,
        metavar="DIR",
        help="write each match's replay to DIR/MATCH.jsonl (a mistake or fault names its match and line)",
    )
    check.add_argument("command", nargs=argparse.REMAINDER, help="the bot's command, after --")
    check.set_defaults(run=_check_bot)

    bots = commands.add_parser(
        "bots",
        help="list the installed bots",
        description=(
            "List every bot the installed plugins register: its name, description, and the distribution"
            " (and version) it comes from. Bots come from the entry-point group loveletter_arena, the"
            " built-in ones included; see examples/third-party-bot/."
        ),
        epilog="Set ARENA_DISABLE_PLUGINS=1 to load only the built-in bots (third-party plugins are skipped).",
    )
    bots.add_argument("--format", choices=["text", "json"], default="text", help="default: text")
    bots.set_defaults(run=_bots)

    doctor = commands.add_parser(
        "doctor",
        help="check this machine's sandbox before a tournament",
        description=(
            "What this machine gives a tournament's bots: the sandbox level they get here and why; what the"
            " machine offers it (bubblewrap, cgroups, Landlock, seccomp, free bot user ids, the output disk); and a"
            " short suite of hostile bots played against the real sandbox (the network, files outside a bot's"
            " directory, another bot's files, signals outside its tree, a fork bomb, memory, disk, CPU off its"
            " turn), each PASS only if its attack failed. With FILE, for that tournament's sandbox level, limits,"
            " bot ids and output. Exit status 0 if the machine gives all that is asked, else 1."
            " See `arena docs configuration` (section arena doctor)."
        ),
    )
    doctor.add_argument("file", type=Path, nargs="?", metavar="FILE", help="a tournament file (YAML)")
    doctor.add_argument(
        "--sandbox", choices=["strict", "basic", "none"], default="strict", help="without FILE (default: strict)"
    )
    doctor.add_argument("--format", choices=["table", "json"], default="table", help="default: table")
    doctor.set_defaults(run=_doctor)

    validate = commands.add_parser(
        "validate",
        help="check a tournament file",
        description=(
            "Check a tournament's YAML file: its keys and types, the ruleset and table size, the bots (installed"
            " ones exist, command bots' files and directories are there) and the format's section, and says how"
            " much of it its output folder holds already. Prints every problem as FILE:LINE: field: problem (exit"
            " status 2), or a summary. Like arena run, it refuses an output folder that holds another"
            " configuration's results. See `arena docs configuration`."
        ),
    )
    validate.add_argument("file", type=Path, metavar="FILE", help="a tournament file (YAML)")
    validate.set_defaults(run=_validate)

    run = commands.add_parser(
        "run",
        help="run a tournament from its YAML file",
        description=(
            "Run every match of a tournament, each in its sandbox, and record it in the output folder as it"
            " ends. Run it again to resume an interrupted tournament: finished matches are kept and the"
            " results end up the same as an uninterrupted run's. A different configuration for the same"
            " output folder is refused unless --restart."
        ),
    )
    run.add_argument("file", type=Path, help="the tournament's YAML file (see `arena docs configuration`)")
    run.add_argument("--concurrency", type=int, help="worker processes (default: the file's, else the cores)")
    run.add_argument(
        "--dask", metavar="ADDRESS", help="play the matches on the Dask cluster at ADDRESS (tcp://host:8786)"
    )
    run.add_argument("--restart", action="store_true", help="discard the results already in the output folder")
    run.add_argument("--quiet", action="store_true", help="no progress bar (it is shown only on a terminal anyway)")
    run.add_argument("--replay-pages", metavar="N", help=REPLAY_PAGES_HELP)
    run.set_defaults(run=_run)

    standings = commands.add_parser(
        "standings",
        help="print a tournament's standings",
        description=(
            "Rank, bot, matches, wins with a 95% interval on the win rate, score, tie-breaks, rating and"
            " faults by kind, from the results in OUTPUT (finished or interrupted)."
        ),
    )
    standings.add_argument("output", type=Path, help="the tournament's output folder")
    standings.add_argument("--format", choices=["table", "json", "csv"], default="table", help="default: table")
    standings.set_defaults(run=_standings)

    report = commands.add_parser(
        "report",
        help="write a tournament's HTML report",
        description=(
            "Write OUTPUT/report/index.html from the results in OUTPUT (finished or interrupted): standings with"
            " 95% intervals, head-to-head, a rating chart, every fault linked to its move, every match linked to"
            " the replay viewer (viewer.html, and a small data file per match in OUTPUT/report/matches/)."
            " Self-contained: open it from the disk, no network."
        ),
    )
    report.add_argument("output", type=Path, help="the tournament's output folder")
    report.add_argument("--replay-pages", metavar="N", help=REPLAY_PAGES_HELP)
    report.set_defaults(run=_report)

    diagnose = commands.add_parser(
        "diagnose",
        help="each bot's provable mistakes, reply times and faults",
        description=(
            "For each bot of the tournament in OUTPUT: its decisions and provable mistakes (moves wrong whatever the"
            " hidden cards were, judged from what the bot itself knew: self-elimination, impossible-guess,"
            " missed-known-guess, known-losing-baron; `arena docs diagnostics`), each with its match and replay line;"
            " its reply times (median, 95th percentile, most) against move_ms; and its faults by reason."
        ),
    )
    diagnose.add_argument("output", type=Path, help="the tournament's output folder")
    diagnose.add_argument("--bot", help="only this bot")
    diagnose.add_argument("--format", choices=["table", "json"], default="table", help="default: table")
    diagnose.set_defaults(run=_diagnose)

    sprt = commands.add_parser(
        "sprt",
        help="where a sequential test of two bots stands",
        description=(
            "The sequential probability ratio test of a tournament of format sprt (`arena docs sprt`): the pairs"
            " counted, their pentanomial [LL, LD, DD+WL, WD, WW], the log-likelihood ratio and its bounds, the"
            " decision (H0, H1 or none yet) and the Elo difference with its 95% interval."
        ),
    )
    sprt.add_argument("output", type=Path, help="the tournament's output folder")
    sprt.add_argument("--format", choices=["table", "json"], default="table", help="default: table")
    sprt.set_defaults(run=_sprt)

    logs = commands.add_parser(
        "logs",
        help="print what a bot wrote to its stderr, match by match",
        description=(
            "Each bot's stderr is kept match by match in OUTPUT/logs/BOT/MATCH.log (the first stderr_kb KiB of a"
            " match, then its last 16 KiB). Without BOT: the bots that wrote something. With BOT: each of its logs"
            " in match order, or with MATCH that one."
        ),
    )
    logs.add_argument("output", type=Path, help="the tournament's output folder")
    logs.add_argument("bot", nargs="?", help="a bot's name")
    logs.add_argument("match", nargs="?", help="a match's id (e.g. rr-0003)")
    logs.set_defaults(run=_logs)

    results = commands.add_parser(
        "results",
        help="list every match of a tournament",
        description="Every finished match in OUTPUT: table, seats, seed, ranking, tokens, faults, replay.",
    )
    results.add_argument("output", type=Path, help="the tournament's output folder")
    results.add_argument("--format", choices=["json", "csv"], default="json", help="default: json")
    results.set_defaults(run=_results)

    serve = commands.add_parser(
        "serve",
        help="run a bot ladder's web server (uploads, checks, leaderboard)",
        description=(
            "Serve one ladder from its file (a tournament file with a ladder: section; see `arena docs serve`):"
            " entrants sign in with their personal link, upload bots, see each upload checked in the sandbox, and"
            ' the leaderboard at / updates itself. Needs the serve extra: pip install "loveletter-arena[serve]".'
        ),
    )
    serve.add_argument("file", type=Path, metavar="LADDER", help="the ladder's YAML file")
    serve.add_argument(
        "--host", default="127.0.0.1", help="the address to listen on (default: 127.0.0.1, this machine only)"
    )
    serve.add_argument("--port", type=int, default=8000, help="default: 8000")
    serve.add_argument(
        "--https",
        action="store_true",
        help="entrants reach the server over HTTPS (a reverse proxy in front): cookies go over HTTPS only",
    )
    serve.set_defaults(run=_serve)

    admin = commands.add_parser(
        "serve-admin",
        help="the organiser's commands for a ladder: add entrants, make sign-in links, play the final",
        description="The organiser's commands for the ladder of LADDER (they work while the server runs).",
    )
    actions = admin.add_subparsers(dest="action", required=True, metavar="ACTION")
    add = actions.add_parser(
        "add-entrants",
        help="add everyone on a roster (CSV: name,email) and write their sign-in links",
        description=(
            "Add everyone on ROSTER, a CSV file whose first line names its columns (at least name and email), as"
            " a course's roster comes; every line is checked first, and no one is added if any line is wrong."
            " Each entrant's personal sign-in link goes to --links (CSV: name,email,link, readable by you only),"
            " to be mailed; without --links they are printed."
        ),
    )
    add.add_argument("file", type=Path, metavar="LADDER", help="the ladder's YAML file")
    add.add_argument("roster", type=Path, metavar="ROSTER", help="CSV: name,email")
    add.add_argument("--organisers", action="store_true", help="add them as organisers (they see and do everything)")
    add.add_argument(
        "--links", type=Path, metavar="FILE", help="write the sign-in links here (CSV) instead of printing them"
    )
    add.add_argument("--base-url", default="http://127.0.0.1:8000", help="the server's address as entrants reach it")
    add.set_defaults(run=_serve_add)
    link = actions.add_parser(
        "new-link",
        help="replace an entrant's sign-in link (the old one stops working)",
        description="Make a new sign-in link for the entrant NAME and print it; the old link stops working.",
    )
    link.add_argument("file", type=Path, metavar="LADDER", help="the ladder's YAML file")
    link.add_argument("name", metavar="NAME")
    link.add_argument("--base-url", default="http://127.0.0.1:8000", help="the server's address as entrants reach it")
    link.set_defaults(run=_serve_link)
    final = actions.add_parser(
        "final",
        help="play the final tournament of the entrants' active versions (after the deadline)",
        description=(
            "Play the ladder's final: every entrant's active version (the newest that passed its check) and the"
            " reference bots, in the format of ladder.final, as `arena run` plays a tournament file. The file is"
            " written to DATA/final.yaml (DATA: the ladder's data folder), the results go to the ladder file's"
            " output folder, with the report and gradebook.csv (a row per entrant and per reference bot). Run"
            " again, it resumes: only what is not played yet is played. Refused before the deadline (without"
            " --now) and with fewer entrants with an active version than a table has seats."
        ),
    )
    final.add_argument("file", type=Path, metavar="LADDER", help="the ladder's YAML file")
    final.add_argument("--now", action="store_true", help="play it before the deadline, or on a ladder without one")
    final.add_argument(
        "--restart",
        action="store_true",
        help="discard the final's results kept in the output folder and play it again (needed when the active"
        " versions, or the ladder file, changed since it was played)",
    )
    final.set_defaults(run=_serve_final)

    docs = commands.add_parser(
        "docs",
        help="read the documentation installed with the arena",
        description=(
            "The documentation as Markdown, wherever the arena was installed from: without TOPIC, the topics with"
            " their titles; with TOPIC, its text (e.g. arena docs configuration | less); --path, where its file is."
        ),
    )
    docs.add_argument("topic", nargs="?", help="a topic: configuration, protocol, bots, diagnostics, ...")
    docs.add_argument("--path", action="store_true", help="print the file's path instead of its text")
    docs.set_defaults(run=_docs)
    return parser


def _docs(args: argparse.Namespace) -> int:
    from importlib.resources import as_file, files

    topics = {path.name.removesuffix(".md"): path for path in files("arena.docs").iterdir() if path.name[-3:] == ".md"}
    if args.topic is None:
        for name, path in sorted(topics.items()):
            title = path.read_text(encoding="utf-8").partition("\n")[0].lstrip("# ")
            print(f"{name:14} {title}")
        return 0
    topic = args.topic.removesuffix(".md").removeprefix("docs/")
    if topic not in topics:
        raise UsageError(f"docs: no topic {args.topic!r} (topics: {', '.join(sorted(topics))})")
    if args.path:
        with as_file(topics[topic]) as path:
            print(path)
        return 0
    sys.stdout.write(topics[topic].read_text(encoding="utf-8"))
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _ensure_standard_streams() -> None:
    """Started with fd 0, 1 or 2 closed, the arena would hand that number to a socket or a pipe."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            os.open(os.devnull, os.O_RDWR)  # takes the lowest free number: this one


def main(argv: Sequence[str] | None = None) -> int:
    _ensure_standard_streams()
    args = build_parser().parse_args(argv)
    signal.signal(signal.SIGTERM, _interrupt)  # stop as for Ctrl-C: clean up, leave no bot behind
    try:
        return args.run(args)
    except ArenaError as error:
        print(f"arena: {error}", file=sys.stderr)
        return error.exit_status
    except KeyboardInterrupt as interrupt:
        print(f"arena: {str(interrupt) or 'interrupted'}", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (e.g. `arena replay F | head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    finally:
        if "arena.sandbox.process" in sys.modules:  # a bot may have been started
            sys.modules["arena.sandbox.process"].kill_all()


if __name__ == "__main__":
    sys.exit(main())

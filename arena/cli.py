"""The `arena` command: parses arguments, calls the library, prints."""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from collections.abc import Sequence
from pathlib import Path

from arena import __version__
from arena.engine import RULESETS, Match, get_ruleset
from arena.errors import ArenaError, ReplayMismatch, UsageError
from arena.players import RandomPlayer
from arena.replay import Narrator, Resimulation, read_replay, write_replay
from arena.runner import play_match


def _play(args: argparse.Namespace) -> int:
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
    result = play_match(match, [RandomPlayer(seed) for _ in names], match_id)
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


def _tokens(count: int) -> str:
    return f"{count} token" if count == 1 else f"{count} tokens"


def _replay(args: argparse.Namespace) -> int:
    lines = read_replay(args.file)
    resimulation = Resimulation(lines)
    error: ReplayMismatch | None = None
    try:
        resimulation.run()
    except ReplayMismatch as mismatch:
        error = mismatch
    if not args.verify and resimulation.match is not None:
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
    replay.set_defaults(run=_replay)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except ArenaError as error:
        print(f"arena: {error}", file=sys.stderr)
        return error.exit_status
    except KeyboardInterrupt:
        print("arena: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (e.g. `arena replay F | head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())

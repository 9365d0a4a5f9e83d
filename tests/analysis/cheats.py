"""A finished tournament in which one bot, `seer`, named the target's real card with every Guard: its matches were
played again with the cheat and their replays rewritten, as if the bot had read the deal."""

from __future__ import annotations

import random
import shutil
import sqlite3
from pathlib import Path

from arena.engine import Match, Phase, get_ruleset
from arena.replay import read_replay, write_replay
from tests.analysis.test_fairplay import at_random, foresight
from tests.test_author_loop import run_arena, tournament


def seer_tournament(folder: Path, gauntlet: bool = False) -> Path:
    """The output folder of 12 two-player matches of `seer` against `random`, replays rewritten; the notes the
    workers kept, and the viewer's data, are dropped, so that both are made again from the rewritten replays (and
    with `gauntlet`, seer the candidate, its gradebook too, by `arena run` again)."""
    extra = "gauntlet: {candidates: [seer], repeats: 12}\n" if gauntlet else "repeats: 12\n"
    bots = "- {name: seer, builtin: random, subprocess: true}\n- {name: random, builtin: random, subprocess: true}\n"
    path = tournament(folder, bots, extra=extra)  # programs, as a course's are: the arena notes their fair play
    if gauntlet:
        path.write_text(path.read_text().replace("format: round-robin", "format: gauntlet"))
    assert run_arena("run", path, "--quiet", cwd=folder).returncode == 0
    output = folder / "out"
    replays = sorted((output / "replays").glob("*.jsonl"))
    assert len(replays) >= 12
    for number, replay in enumerate(replays):  # each match played again, the seer's Guards naming the real card
        names = read_replay(replay)[0].data["players"]
        match, rng = Match(get_ruleset("2019"), names, number), random.Random(number)
        while match.phase is not Phase.OVER:
            decision = match.decision
            if decision is None:
                match.deal_round()
                continue
            policy = foresight if names[decision.seat] == "seer" else at_random
            match.apply(policy(match, decision, rng))
        write_replay(replay, match, replay.stem)
    with sqlite3.connect(output / "results.sqlite") as db:  # as a folder recorded before the notes were kept
        db.execute("DELETE FROM fair_play")
    shutil.rmtree(output / "report" / "matches", ignore_errors=True)
    if gauntlet:
        assert run_arena("run", path, "--quiet", cwd=folder).returncode == 0  # every match kept: the files again
    return output

"""A third-party bot plays: in-process through its player, and as a subprocess through its command."""

from __future__ import annotations

import json
from pathlib import Path

from tests.plugins.conftest import run

MATCH = """
import dataclasses, json, sys
from arena.engine import RULESETS, Match
from arena.players.host import BotHost
from arena.players.values import Timing
from arena.players.remote import RemotePlayer
from arena.plugins import load_registry
from arena.runner import play_match
from arena.sandbox import SandboxLevel

registry = load_registry()
first, rival = registry["first-legal"], registry["random"]
assert first.distribution == "loveletter-firstbot", first


def match():
    return Match(RULESETS["2019"], ["first-legal", "random"], 11)


def report(outcome):
    return {"faults": [f.detail for f in outcome.faults], "tokens": list(outcome.result.tokens)}


in_process = play_match(match(), [first.spec.player(1000), rival.spec.player(1000)], "plugin-match")
command = first.bot_command()
command = dataclasses.replace(command, command=command.command + (sys.argv[1],))  # the test's marker
with BotHost(command, Timing(move_ms=5000, startup_ms=10000), SandboxLevel.NONE) as host:
    remote = play_match(match(), [RemotePlayer(host), rival.spec.player(1000)], "plugin-match")
    stopped = host.shutdown()
print(json.dumps({"in_process": report(in_process), "subprocess": report(remote), "shutdown": str(stopped)}))
"""


def test_the_example_bot_plays_alike_in_process_and_as_a_subprocess(
    firstbot: Path, tmp_path: Path, marker: str
) -> None:
    ran = run(["-c", MATCH, marker], [firstbot], tmp_path)
    assert ran.returncode == 0, ran.stderr
    played = json.loads(ran.stdout)
    assert played["in_process"]["faults"] == [] and played["subprocess"]["faults"] == []
    assert max(played["in_process"]["tokens"]) > 0
    assert played["subprocess"] == played["in_process"]  # same bot, same seed: the same match either way
    assert played["shutdown"] == "None"


TOURNAMENT = """name: plugins
format: round-robin
players_per_match: 2
repeats: 2
output: out
bots:
  - {name: plugin, builtin: first-legal}
  - {name: ours, builtin: random}
"""


def test_a_third_party_bot_played_in_process_is_noted_for_fair_play_and_the_arenas_own_is_not(
    firstbot: Path, tmp_path: Path
) -> None:
    (tmp_path / "t.yaml").write_text(TOURNAMENT)
    ran = run(["-m", "arena", "run", "t.yaml", "--quiet"], [firstbot], tmp_path)
    assert ran.returncode == 0, ran.stderr
    shown = run(["-m", "arena", "diagnose", "out", "--format", "json"], [firstbot], tmp_path)
    tested = {bot["bot"]: bot["fair_play"]["tested"] for bot in json.loads(shown.stdout)["bots"]}
    assert tested == {"plugin": True, "ours": False}  # installed code, but not the arena's: it is checked

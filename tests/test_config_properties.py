"""Properties of load_config: any text, any YAML document, any valid tournament changed here and there gives
a ConfigError whose every line names the file and a line of it, or a TournamentConfig that holds together;
never another exception.

Fully arbitrary documents mostly fail at the top (not a mapping, keys missing); documents made from a valid
tournament by a few changes at any depth (a value replaced, a key dropped, renamed or added, a tag or an
anchor put in the text) reach the validator's deep paths: bots, limits, gauntlet, executor, the checks
across keys, and the YAML constructors of explicit tags.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from arena.config import NAME_MAX, Format, TournamentConfig, config_hash, load_config
from arena.engine import RULESETS
from arena.errors import ConfigError
from arena.plugins.registry import NAME
from arena.sandbox import SandboxLevel

VALID: dict[str, Any] = {
    "name": "night",
    "ruleset": "2019",
    "format": "round-robin",
    "players_per_match": 2,
    "repeats": 2,
    "seed": 5,
    "concurrency": 2,
    "sandbox": "strict",
    "limits": {"move_ms": 800, "startup_ms": 9000, "memory_mb": 256, "memory_mechanism": "rlimit"},
    "output": "results/night",
    "executor": {"type": "local"},
    "bots": [
        {"name": "a", "builtin": "random"},
        {"name": "b", "builtin": "heuristic", "subprocess": True},
        {"name": "alice", "command": ["python3", "students/alice/bot.py"], "protocol": "stdio"},
    ],
}
GAUNTLET = {**VALID, "format": "gauntlet", "gauntlet": {"candidates": ["alice"], "repeats": 2}}
del GAUNTLET["repeats"]
SWISS = {**VALID, "format": "swiss", "rounds": 3, "executor": {"type": "dask", "address": "tcp://h:8786"}}
del SWISS["repeats"]

YAML_WORDS = ["no", "on", "off", "yes", "~", "null", "1:30", "010", "0x1F", "0o17", "2024-05-01", ".inf", "<<", ""]
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats()
    | st.text(max_size=10)
    | st.sampled_from([*YAML_WORDS, "round-robin", "gauntlet", "swiss", "strict", "none", "dask", "random", "a"])
)
KEYS = st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=8) | st.sampled_from([*VALID, "x-anchor"])
YAML_VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3), max_leaves=8
)
NEAR_VALUES = st.sampled_from(
    [0, -1, 1, 2, 7, 2**63, 2**256, "2", 2.0, True, None, [], {}, "", "a", "random", "dask", "students/alice"]
)
"""Values just off what a field wants: a number out of range, a number as text, a list for a scalar."""
KNOWN_KEYS = sorted({*VALID, *VALID["limits"], *VALID["bots"][2], "gauntlet", "candidates", "rounds", "dir", "x-y"})
TEXT_EDITS = st.sampled_from(
    [
        *("!!float ", "!!bool ", "!!timestamp ", "!!int ", "!!binary ", "!!set ", "!!str ", "!!null ", "!!omap "),
        *("!!python/object:os.system ", "!custom ", "&x ", "*x ", "*nowhere ", "<<: ", "? ", "- ", "[", "{", "'"),
        *('"', "#", "|", ">", "%", "@", "\t", "\n", "\n  ", ":", ": ", ",", "\x00", "\ufeff", "\\"),
    ]
)


def locations(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a document: each key of each mapping, each index of each list."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += locations(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += locations(item, (*path, index))
    return found


def _container(document: Any, path: tuple[Any, ...]) -> Any:
    for part in path[:-1]:
        document = document[part]
    return document


@st.composite
def near_valid_documents(draw: st.DrawFn) -> Any:
    """A valid tournament with a few changes, each at any depth."""
    document = copy.deepcopy(draw(st.sampled_from([VALID, GAUNTLET, SWISS])))
    for _ in range(draw(st.integers(1, 4))):
        places = [path for path in locations(document) if path]
        if not places:
            break
        top = [path for path in places if len(path) == 1]
        path = draw(st.sampled_from(top if top and draw(st.booleans()) else places))  # the top's keys half the time
        parent, last = _container(document, path), path[-1]
        change = draw(st.sampled_from(["replace", "near", "drop", "drop", "add", "rename", "wrap"]))
        if change == "replace":
            parent[last] = draw(YAML_VALUES)
        elif change == "near":
            parent[last] = draw(NEAR_VALUES)
        elif change == "drop":
            del parent[last]
        elif change == "wrap":
            parent[last] = draw(st.sampled_from([[parent[last]], {"value": parent[last]}]))
        elif isinstance(parent, dict):
            key = draw(st.sampled_from(KNOWN_KEYS) | st.text(min_size=1, max_size=8))
            if change == "rename":
                parent[key if key != last else f"{key}s"] = parent.pop(last)
            else:
                parent[key] = draw(NEAR_VALUES | YAML_VALUES)
        else:
            bots = document.get("bots")  # a change before may have made it anything: a number, a mapping
            known = bots if isinstance(bots, list) and bots else [{}]
            parent.insert(last, copy.deepcopy(draw(st.sampled_from(known) | YAML_VALUES)))
    return document


@st.composite
def edited_texts(draw: st.DrawFn) -> str:
    """A near-valid document as YAML text, with a few YAML tokens put in: tags, anchors, merge keys, quotes."""
    text = yaml.safe_dump(draw(near_valid_documents()), default_flow_style=draw(st.booleans()), allow_unicode=True)
    for _ in range(draw(st.integers(0, 3))):
        spots = [match.end() for match in re.finditer(r": |- |\n", text)] or [0]
        where = draw(st.sampled_from(spots))
        text = text[:where] + draw(TEXT_EDITS) + text[where:]
    return text


DOCUMENTS = (
    near_valid_documents().map(lambda document: yaml.safe_dump(document, allow_unicode=True))
    | edited_texts()
    | near_valid_documents().map(lambda document: yaml.safe_dump(document, default_flow_style=True))
    | YAML_VALUES.map(lambda document: yaml.safe_dump(document, allow_unicode=True))
    | st.text(max_size=60)
)


@pytest.fixture(scope="module")
def directory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project directory with the command bot's script, so that the command checks are reached."""
    root = tmp_path_factory.mktemp("config-properties")
    script = root / "students" / "alice" / "bot.py"
    script.parent.mkdir(parents=True)
    script.write_text("print('hello')\n")
    return root


def lines_of(text: str) -> int:
    """The lines YAML sees (it breaks lines at \\r and a few Unicode breaks too)."""
    return len(re.findall("\r\n|[\r\n\x85\u2028\u2029]", text)) + 1


def check_holds_together(config: TournamentConfig) -> None:
    rules = RULESETS[config.ruleset]
    assert NAME.match(config.name) and len(config.name) <= NAME_MAX
    assert rules.min_players <= config.players_per_match <= rules.max_players
    names = config.bot_names
    assert len(set(names)) == len(names) >= config.players_per_match
    assert (config.format is Format.GAUNTLET) == (config.gauntlet is not None)
    if config.gauntlet is not None:
        assert len(set(config.gauntlet.candidates)) == len(config.gauntlet.candidates)
        assert set(config.gauntlet.candidates) <= set(names)
    assert min(config.rounds, config.repeats, config.concurrency) >= 1
    assert config.seed is None or 0 <= config.seed < 2**256
    assert config.output.is_absolute()
    if config.sandbox is not SandboxLevel.NONE:  # the sandbox shows a bot its directory: no results in there
        for bot in config.bots:
            assert bot.command is None or not config.output.is_relative_to(bot.command.directory)
    assert re.fullmatch("[0-9a-f]{64}", config_hash(config))


def load_or_report(directory: Path, text: str) -> TournamentConfig | ConfigError:
    path = directory / "tournament.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        config = load_config(path)
    except ConfigError as error:
        assert error.problems
        for problem in error.problems:
            where = re.match(rf"{re.escape(str(path))}:([0-9]+): \S", problem)
            assert where and "\n" not in problem, problem
            assert 1 <= int(where.group(1)) <= lines_of(text), problem
        return error
    check_holds_together(config)
    return config


@settings(max_examples=150)
@given(text=DOCUMENTS)
@example(text="seed: !!float abc\n")
@example(text="seed: !!bool maybe\n")
@example(text="seed: !!timestamp 2024-13-45\n")
@example(text="seed: !!int {a: 1}\n")
@example(text="a: " + "[" * 1000 + "]" * 1000 + "\n")
@example(text="name: &x [*x]\n")
@example(text="' ': 0\n")
@example(text='"a\\nb": 0\n')
@example(text=yaml.safe_dump({**VALID, "output": "a\0b"}))
def test_any_document_loads_or_is_reported_by_file_and_line(directory: Path, text: str) -> None:
    load_or_report(directory, text)


def test_the_documents_reach_valid_tournaments_and_every_section(directory: Path) -> None:
    """The strategy is near enough to be worth it: the unchanged tournaments load, and changes at every
    section's depth are reported at that section."""
    for document in (VALID, GAUNTLET, SWISS):
        assert isinstance(load_or_report(directory, yaml.safe_dump(document)), TournamentConfig)
    deep = {**VALID, "limits": {**VALID["limits"], "move_ms": 0}}
    deep["bots"] = [*VALID["bots"][:2], {**VALID["bots"][2], "protocol": "tcp"}]
    error = load_or_report(directory, yaml.safe_dump(deep))
    assert isinstance(error, ConfigError)
    assert [problem.split(": ")[1] for problem in error.problems] == ["bots[2].protocol", "limits.move_ms"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("seed: !!float abc", "2: not a valid float: 'abc' (could not convert string to float: 'abc')"),
        ("seed: !!bool maybe", "2: not a valid bool: 'maybe'"),
        ("seed: !!timestamp 2024-13-45", "2: not a valid timestamp: '2024-13-45' (month must be in 1..12)"),
        ("seed: !!int {a: 1}", "2: an integer, not a collection"),
        ("seed: 1\x1f", "2: unacceptable character #x001f: special characters are not allowed"),
        ("seed: " + "[" * 1000 + "]" * 1000, "2: nested too deep for a configuration file"),
    ],
)
def test_what_the_yaml_reader_refuses_is_reported_at_its_line(directory: Path, text: str, problem: str) -> None:
    """Found by the property above: each was a traceback (ValueError, KeyError, AttributeError, AssertionError,
    ReaderError, RecursionError)."""
    error = load_or_report(directory, f"name: x\n{text}\n")
    assert isinstance(error, ConfigError)
    assert error.problems == (f"{directory / 'tournament.yaml'}:{problem}",)

"""A tournament's configuration: one YAML file in, a frozen dataclass tree out, or every problem at once.

Three layers, each for one reason:

- a YAML loader that resolves scalars as YAML 1.2 does: only ``true``/``false`` are booleans, so a bot
  called ``no`` or a sandbox ``off`` stays a string; no sexagesimal ``1:30``, no octal ``010``, no dates;
- pydantic models (``extra="forbid"``, strict types) for the shape: keys, types, ranges, one field at a time;
- checks across keys and against the world (rulesets, installed bots, files), run on the raw data so that
  they are reported together with the shape's problems instead of after they are fixed.

Every problem is mapped back to a line of the file through the composed YAML node tree and reported as
``FILE:LINE: field.path: problem`` in one ConfigError. The result, TournamentConfig (arena.config.values),
holds no pydantic: the runner and the store see plain values with absolute paths. See docs/configuration.md.

A file that extends a tournament file (a ladder file: arena.serve.ladder) is read by the same functions, so that
its problems are found and said alike: load_file (read, parse, locate, render), validate_model (a Model's shape
and checks, as problems), validate_tournament and build_tournament (the tournament part), and
folder_in_bot_directory (a folder of the arena's own that a sandboxed bot would see).
"""

from __future__ import annotations

import difflib
import os
import re
import types
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, TypeVar, Union, get_args, get_origin

import yaml
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, ValidationError
from pydantic_core import ErrorDetails, PydanticCustomError

from arena.config.values import (
    DEFAULT_MAX_BOT_MB,
    DEFAULT_ROUNDS,
    DEFAULT_RULESET,
    NAME_MAX,
    BotEntry,
    ExecutorConfig,
    ExecutorType,
    Format,
    GauntletConfig,
    SprtConfig,
    TournamentConfig,
    bot_directory,
)
from arena.engine import RULESETS
from arena.errors import ConfigError
from arena.players.values import BotCommand, Timing, Transport
from arena.plugins.registry import NAME
from arena.sandbox import Limits, MemoryMechanism, SandboxError, SandboxLevel, users
from arena.sandbox.command import bot_path
from arena.sandbox.command import resolve as find_program

Loc = tuple[str | int, ...]


def load_config(path: Path | str) -> TournamentConfig:
    """Read, check and resolve a tournament file; ConfigError listing every problem found."""
    model, source = load_file(path, validate_tournament)
    return build_tournament(model, source)


M = TypeVar("M")
LineOf = Callable[[Loc], int]
"""The line of the file a path of keys is on: for a problem that names another place of the file."""


@dataclass(frozen=True, slots=True)
class Source:
    """A configuration file as read: where relative paths in it start, and its text, kept with the results."""

    path: Path
    """Absolute, not resolved: as the user named it."""
    base: Path
    """Its folder, resolved."""
    text: str


def load_file(
    path: Path | str, validate: Callable[[dict[str, Any], Source, LineOf], tuple[M | None, list[Problem]]]
) -> tuple[M, Source]:
    """Read and parse a configuration file, and validate its top-level mapping (without its x- keys); the
    validator's result, or one ConfigError with every problem found, the YAML's and the validator's, each as
    FILE:LINE: field.path: problem. Tournament files (load_config) and the files that extend them
    (arena.serve.ladder) are read by this one function, so that both say their problems alike."""
    path = Path(path)
    shown = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(shown, [f"{shown}: no such file"]) from None
    except IsADirectoryError:
        raise ConfigError(shown, [f"{shown}: a directory, not a configuration file"]) from None
    except UnicodeDecodeError as error:
        raise ConfigError(shown, [f"{shown}: not UTF-8 text (byte {error.start})"]) from None
    except OSError as error:
        raise ConfigError(shown, [f"{shown}: cannot read it: {error.strerror}"]) from None
    absolute = path.absolute()
    source = Source(absolute, absolute.parent.resolve(), text)
    parsed, root, data, problems = _parse(text)
    model: M | None = None
    if parsed:  # the data's problems join those of the duplicate keys
        if not isinstance(data, dict):
            what = "empty" if data is None else f"a {_kind(data)}"
            problems.append(Problem((), f"the file is {what}: it must be a mapping (name: ..., bots: ...)"))
        else:
            # Top-level keys starting with x- are the file's own: a place for YAML anchors, as in Compose files.
            data = {key: value for key, value in data.items() if not (isinstance(key, str) and key.startswith("x-"))}
            model, found = validate(data, source, lambda loc: _locate(root, loc)[1])
            problems += found
    if problems or model is None:
        raise ConfigError(shown, _render(problems, root, shown))
    return model, source


# ------------------------------------------------------------------------------------------------ YAML

_BOOL = "tag:yaml.org,2002:bool"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_DROPPED = {_BOOL, _INT, _FLOAT, "tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:value"}


class _Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core-schema scalars: `no`, `on`, `1:30`, `010` and `2024-05-01` mean what
    they look like (a string, a string, a string, ten, a string)."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        """SafeLoader's constructors trust an explicit tag: `!!float abc`, `!!bool maybe` and `!!timestamp
        2024-13-45` fail inside them (ValueError, KeyError), not as YAML errors. Each becomes one, at its node."""
        try:
            return super().construct_object(node, deep)
        except yaml.YAMLError:
            raise
        except (ValueError, KeyError, TypeError, AttributeError, OverflowError) as error:
            value = repr(node.value) if isinstance(node, yaml.ScalarNode) else "a collection"
            why = f" ({error})" if type(error) is ValueError else ""  # the others say nothing a reader needs
            raise yaml.constructor.ConstructorError(
                None, None, f"not a valid {node.tag.rsplit(':', 1)[-1]}: {value}{why}", node.start_mark
            ) from None


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in _DROPPED]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
_Loader.add_implicit_resolver(_INT, re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"), list("-+0123456789"))
_Loader.add_implicit_resolver(
    _FLOAT,
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+.0123456789"),
)


def _construct_int(loader: yaml.SafeLoader, node: yaml.Node) -> int:
    if not isinstance(node, yaml.ScalarNode):  # `!!int {a: 1}`
        raise yaml.constructor.ConstructorError(None, None, "an integer, not a collection", node.start_mark)
    text = loader.construct_scalar(node)
    try:
        return int(text, 0) if text.startswith(("0o", "0x")) else int(text, 10)
    except ValueError:
        raise yaml.constructor.ConstructorError(None, None, f"not an integer: {text!r}", node.start_mark) from None


_Loader.add_constructor(_INT, _construct_int)


def _parse(text: str) -> tuple[bool, yaml.Node | None, object, list[Problem]]:
    """Whether the text is YAML, its node tree (for line numbers), its data, and its duplicate keys or its
    syntax error."""
    try:
        loader = _Loader(text)  # its reader refuses a character YAML does not allow (a control character) here
    except yaml.YAMLError as error:
        return False, None, None, [_syntax_problem(error, text)]
    try:
        root = loader.get_single_node()
        duplicates = list(_duplicate_keys(root))
        # Constructing merges `<<` keys into their mappings in place, so the tree then has a line for them.
        data = loader.construct_document(root) if root is not None else None
    except yaml.YAMLError as error:
        return False, None, None, [_syntax_problem(error, text)]
    except RecursionError:  # PyYAML composes nested collections by recursion: some hundreds deep is its end
        line = loader.get_mark().line + 1
        return False, None, None, [Problem((), "nested too deep for a configuration file", line=line)]
    finally:
        loader.dispose()
    return True, root, data, duplicates


def _syntax_problem(error: yaml.YAMLError, text: str) -> Problem:
    if isinstance(error, yaml.MarkedYAMLError):
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark else 1
        problem = error.problem or str(error)
        if error.context and error.context_mark and error.context_mark is not mark:
            problem += f" ({error.context}, line {error.context_mark.line + 1})"
        return Problem((), problem, line=line)
    position = getattr(error, "position", 0) or 0
    return Problem((), str(error).splitlines()[0], line=text.count("\n", 0, position) + 1)


def _duplicate_keys(node: yaml.Node | None, loc: Loc = (), seen: set[int] | None = None) -> Iterator[Problem]:
    """A key given twice in one mapping: YAML keeps the last silently, which hides a mistake."""
    seen = set() if seen is None else seen
    if node is None or id(node) in seen:
        return
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        first: dict[str, int] = {}
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
                continue
            line = key.start_mark.line + 1
            if key.value in first:
                yield Problem((*loc, key.value), f"given twice (first on line {first[key.value]})", line=line)
            else:
                first[key.value] = line
            yield from _duplicate_keys(value, (*loc, key.value), seen)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            yield from _duplicate_keys(item, (*loc, index), seen)


def _locate(root: yaml.Node | None, loc: Loc) -> tuple[yaml.Node | None, int]:
    """The node at `loc` (None if the path leaves the tree) and its line: a key's own line, else the closest
    parent's."""
    if root is None:
        return None, 1
    node: yaml.Node = root
    line = root.start_mark.line + 1
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            pair = next(
                (
                    pair
                    for pair in reversed(node.value)
                    if isinstance(pair[0], yaml.ScalarNode) and pair[0].value == str(part)
                ),
                None,
            )
            if pair is None:
                return None, line
            line = pair[0].start_mark.line + 1
            node = pair[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return None, line
    return node, line


# ------------------------------------------------------------------------------------------------ shape


def _custom(message: str) -> PydanticCustomError:
    return PydanticCustomError("arena", message)


def _safe_name(value: str) -> str:
    """Names end up in file names and on the command line: no spaces, no slashes."""
    if not NAME.match(value):
        raise _custom("must be letters, digits, '.', '_' and '-', starting with a letter or digit")
    if len(value) > NAME_MAX:
        raise _custom(f"must be at most {NAME_MAX} characters")
    return value


def _number_as_text(value: object) -> object:
    """`ruleset: 2019` is a number to YAML; the ruleset's name is the string."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _id_range(value: str) -> str:
    try:
        users.parse_range(value)
    except ValueError as error:
        raise _custom(str(error)) from None
    return value


def _known_ruleset(value: str) -> str:
    if value not in RULESETS:
        raise _custom(f"unknown ruleset {value!r}{_suggest(value, list(RULESETS))} (known: {', '.join(RULESETS)})")
    return value


def _command_list(value: object) -> object:
    if value is None:
        return value
    if isinstance(value, str):
        raise _custom(
            f"must be a list of strings, e.g. [{', '.join(value.split()) or 'python3, bot.py'}], not a string"
        )
    if not isinstance(value, list) or not value or not all(isinstance(part, str) and part for part in value):
        raise _custom("must be a non-empty list of strings")
    return value


SEED_LIMIT = 2**256
"""A written seed is below this: room for one as strong as any a tournament needs."""

_Name = Annotated[str, AfterValidator(_safe_name)]
Positive = Annotated[int, Field(ge=1)]
_TIMING = Timing()
_LIMITS = Limits()


def _cores() -> int:
    """The cores this process may use (its affinity), not those the machine has."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class Model(BaseModel):
    """A mapping of a configuration file: no key it does not name, no value of another type."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    sections: ClassVar[tuple[str, ...]] = ()
    """The sub-mappings an unknown key of this mapping is looked for in, to say where it belongs."""


MB = TypeVar("MB", bound=BaseModel)


class _Limits(Model):
    move_ms: Positive = _TIMING.move_ms
    startup_ms: Positive = _TIMING.startup_ms
    wall_factor: Positive = _TIMING.wall_factor
    ponder: bool = _TIMING.ponder
    memory_mb: Positive = _LIMITS.memory_mb
    cpu_s: Positive = _LIMITS.cpu_s
    processes: Positive = _LIMITS.processes
    open_files: Positive = _LIMITS.open_files
    file_size_mb: Positive = _LIMITS.file_size_mb
    disk_mb: Positive = _LIMITS.disk_mb
    stderr_kb: Positive = _LIMITS.stderr_kb
    memory_mechanism: Literal["auto", "cgroup", "rlimit"] = "auto"


class _Bot(Model):
    name: _Name
    builtin: str | None = None
    subprocess: StrictBool | None = None
    options: dict[str, Any] | None = None
    """Checked against the bot's own options (_bot_checks), which say each one's kind."""
    command: Annotated[list[str], BeforeValidator(_command_list)] | None = None
    protocol: Literal["zmq", "stdio"] | None = None
    dir: Annotated[str, Field(min_length=1)] | None = None


class _Gauntlet(Model):
    candidates: Annotated[list[str], Field(min_length=1)]
    repeats: Positive = 1


class _Sprt(Model):
    candidate: _Name
    baseline: _Name
    elo0: float = 0.0
    elo1: float = 5.0
    alpha: Annotated[float, Field(gt=0, lt=0.5)] = 0.05
    beta: Annotated[float, Field(gt=0, lt=0.5)] = 0.05
    max_pairs: Positive = 20_000
    field: list[_Name] = []


class _Executor(Model):
    type: Literal["local", "dask"] = "local"
    address: Annotated[str, Field(min_length=1)] | None = None
    max_bot_mb: Positive = DEFAULT_MAX_BOT_MB


class _Tournament(Model):
    sections = ("limits", "gauntlet", "sprt")

    name: _Name
    ruleset: Annotated[str, BeforeValidator(_number_as_text), AfterValidator(_known_ruleset)] = DEFAULT_RULESET
    format: Literal["round-robin", "swiss", "gauntlet", "sprt"]
    players_per_match: int
    rounds: Positive = DEFAULT_ROUNDS
    repeats: Positive = 1
    duplicate: bool = False
    seed: Annotated[int, Field(ge=0, lt=SEED_LIMIT)] | None = None
    concurrency: Positive = Field(default_factory=_cores)
    sandbox: Literal["strict", "basic", "none"] = "strict"
    bot_uids: Annotated[str, AfterValidator(_id_range)] | None = None
    limits: _Limits = _Limits()
    output: Annotated[str, Field(min_length=1)] | None = None
    bots: Annotated[list[_Bot], Field(min_length=1)]
    gauntlet: _Gauntlet | None = None
    sprt: _Sprt | None = None
    executor: _Executor = _Executor()


TournamentModel = _Tournament
"""A tournament file's shape, validated (validate_tournament), to be built (build_tournament)."""


# ------------------------------------------------------------------------------------------------ checks


@dataclass(frozen=True, slots=True)
class Problem:
    loc: Loc
    message: str
    line: int | None = None
    """The line, when known without the tree (a syntax error, a key given twice)."""
    at: Loc | None = None
    """The key to point at when not `loc` itself (a missing section: the key that asks for it)."""


def validate_tournament(
    data: dict[str, Any], source: Source, line_of: LineOf
) -> tuple[_Tournament | None, list[Problem]]:
    """A tournament file's model, or None; and every problem: the shape's, then the checks'."""
    return validate_model(_Tournament, data, _checks(data, source.base, line_of))


def validate_model(model: type[MB], data: object, checks: Iterable[Problem]) -> tuple[MB | None, list[Problem]]:
    """The model, or None; and every problem: the shape's, in a configuration file's words, then the checks' on
    fields the shape did not already fault. `checks` run on the raw data (a generator: it is run after the
    shape's check)."""
    problems: list[Problem] = []
    validated = None
    try:
        validated = model.model_validate(data)
    except ValidationError as error:
        problems = [Problem(tuple(detail["loc"]), _message(detail, model)) for detail in error.errors()]
    faulted = {problem.loc for problem in problems}
    problems += [problem for problem in checks if not any(problem.loc[: len(loc)] == loc for loc in faulted)]
    return validated, problems


def _checks(data: Mapping[str, Any], base: Path, line_of: Callable[[Loc], int]) -> Iterator[Problem]:
    """What one field's type cannot say. Reads the raw data and skips what has the wrong type: the shape's
    check reports that."""
    fmt = data.get("format")
    ruleset = _number_as_text(data.get("ruleset", DEFAULT_RULESET))
    ppm = data.get("players_per_match")
    ppm = ppm if isinstance(ppm, int) and not isinstance(ppm, bool) else None
    if isinstance(ruleset, str) and ruleset in RULESETS and ppm is not None:
        rules = RULESETS[ruleset]
        if not rules.min_players <= ppm <= rules.max_players:
            yield Problem(
                ("players_per_match",),
                f"the {ruleset} ruleset is for {rules.min_players} to {rules.max_players} players, not {ppm}",
            )
    formats = [member.value for member in Format]
    if fmt in formats:
        if "rounds" in data and fmt != Format.SWISS:
            yield Problem(("rounds",), f"only for format swiss, not {fmt}")
        if "repeats" in data and fmt != Format.ROUND_ROBIN:
            where = "; a gauntlet has gauntlet.repeats" if fmt == Format.GAUNTLET else ""
            yield Problem(("repeats",), f"only for format round-robin, not {fmt}{where}")
        if fmt == Format.GAUNTLET and data.get("gauntlet") is None:
            yield Problem(
                ("gauntlet",), "required for format gauntlet, e.g. gauntlet: {candidates: [alice, bob]}", at=("format",)
            )
        if fmt != Format.GAUNTLET and "gauntlet" in data:
            yield Problem(("gauntlet",), f"only for format gauntlet, not {fmt}")
        if fmt == Format.SPRT and data.get("sprt") is None:
            yield Problem(
                ("sprt",), "required for format sprt, e.g. sprt: {candidate: new, baseline: old}", at=("format",)
            )
        if fmt != Format.SPRT and "sprt" in data:
            yield Problem(("sprt",), f"only for format sprt, not {fmt}")
        if fmt == Format.SPRT and "duplicate" in data:
            yield Problem(("duplicate",), "not for format sprt: its pairs are duplicate matches already")
    executor = data.get("executor")
    if isinstance(executor, dict):
        kind = executor.get("type", "local")
        if kind == "dask" and executor.get("address") is None:
            yield Problem(
                ("executor", "address"), "required for type dask, e.g. address: tcp://host:8786", at=("executor",)
            )
        if kind == "local":
            for key in ("address", "max_bot_mb"):
                if key in executor:
                    yield Problem(("executor", key), "only for type dask: a local run ships nothing")
    output = data.get("output")
    if isinstance(output, str) and "\0" in output:
        yield Problem(("output",), "must not hold a NUL character (\\0): no path can")
    elif isinstance(output, str) and output and (base / output).exists() and not (base / output).is_dir():
        yield Problem(("output",), f"{base / output} is a file, not a directory")
    yield from _output_checks(data, base)

    bots = data.get("bots")
    if not isinstance(bots, list):
        return
    names: dict[str, int] = {}
    for index, bot in enumerate(bots):
        if not isinstance(bot, dict):
            continue
        name = bot.get("name")
        if isinstance(name, str):
            if name in names:
                first = names[name]
                yield Problem(
                    ("bots", index, "name"),
                    f"{name!r} is taken: bots[{first}] (line {line_of(('bots', first, 'name'))}) has it",
                )
            else:
                names[name] = index
        yield from _bot_checks(bot, ("bots", index), base, data.get("sandbox", "strict"))
    if ppm is not None and ppm >= 1 and bots and len(bots) < ppm:
        yield Problem(("bots",), f"{_count(len(bots), 'bot')}, too few for {ppm} per table (players_per_match)")
        return
    gauntlet = data.get("gauntlet")
    if fmt == Format.GAUNTLET and isinstance(gauntlet, dict) and isinstance(gauntlet.get("candidates"), list):
        yield from _gauntlet_checks(gauntlet["candidates"], names, ppm)
    sprt = data.get("sprt")
    if fmt == Format.SPRT and isinstance(sprt, dict):
        yield from _sprt_checks(sprt, names, ppm)


def _output_checks(data: Mapping[str, Any], base: Path) -> Iterator[Problem]:
    """A sandbox shows a bot its own directory, so results kept inside it would be the bot's to read: the
    folder's seed (every deal follows from it), the other matches' replays, the other bots' logs. Only trusted
    code (sandbox none) may have them there."""
    output = _output_path(data, base)
    if output is None:
        return
    yield from folder_in_bot_directory(
        data,
        base,
        output,
        ("output",),
        what=f"{output} is" if "output" in data else f"the default output folder, {output}, is",
        kept="the results kept there, the seed that decides every deal among them",
        called="the output",
        written="output" in data,
    )


def folder_in_bot_directory(
    data: Mapping[str, Any], base: Path, folder: Path, loc: Loc, *, what: str, kept: str, called: str, written: bool
) -> Iterator[Problem]:
    """A folder of the arena's own (`folder`, resolved; at `loc` of the file, or its default when not `written`)
    inside the directory of one of the file's sandboxed command bots, which would be the bot's to read: one
    problem per such directory, in the words `what` (the folder, "... is"), `kept` (what the bot could read)
    and `called` (the folder's name in the advice). Only trusted code (sandbox none) may have it there."""
    if data.get("sandbox", "strict") == SandboxLevel.NONE.value:
        return
    bots = data.get("bots")
    sharing: dict[Path, list[tuple[int, str]]] = {}
    for index, bot in enumerate(bots if isinstance(bots, list) else []):
        directory = _command_bot_directory(bot, base)
        if directory is not None and folder.is_relative_to(directory):
            sharing.setdefault(directory, []).append((index, str(bot.get("name", f"bots[{index}]"))))
    for directory, shown in sharing.items():
        one = len(shown) == 1
        whose = f"bot {shown[0][1]!r}" if one else "bots " + ", ".join(repr(name) for _, name in shown)
        yield Problem(
            loc,
            f"{what} inside the directory of {whose}, {directory}, which the sandbox shows"
            f" {'the bot: it' if one else 'each of them: they'} could read {kept}; put {called} outside it, or"
            f" {'the bot' if one else 'each bot'} in a folder of its own",
            at=loc if written else ("bots", shown[0][0]),
        )


def _output_path(data: Mapping[str, Any], base: Path) -> Path | None:
    """The output folder, resolved as the configuration will be; None when the file does not say it clearly."""
    output, name = data.get("output"), data.get("name")
    if "output" in data and not (isinstance(output, str) and output and "\0" not in output):
        return None
    if output is None and not (isinstance(name, str) and NAME.match(name)):
        return None
    return (base / (output or f"results/{name}")).resolve()


def _command_bot_directory(bot: object, base: Path) -> Path | None:
    """A command bot's own directory, which its sandbox shows it; None for a built-in bot, or one whose command
    or dir is malformed or names a missing script (reported by the other checks: its directory is not known)."""
    if not isinstance(bot, dict) or bot.get("builtin") is not None:
        return None
    command, written = bot.get("command"), bot.get("dir")
    if not (isinstance(command, list) and command and all(isinstance(part, str) and part for part in command)):
        return None
    if written is not None and not (isinstance(written, str) and written and (base / written).is_dir()):
        return None
    directory = bot_directory(command, written, base).resolve()
    if next(_missing_scripts(command, (), base, directory, False), None) is not None:
        return None
    return directory


def _sprt_checks(sprt: Mapping[str, Any], names: Mapping[str, int], ppm: int | None) -> Iterator[Problem]:
    used: dict[str, Loc] = {}
    for key in ("candidate", "baseline"):
        name = sprt.get(key)
        if isinstance(name, str):
            if name not in names:
                yield Problem(("sprt", key), f"no bot named {name!r} in bots{_suggest(name, list(names))}")
            elif name in used:
                yield Problem(
                    ("sprt", key), f"{name!r} is the {used[name][-1]} too: a bot is not tested against itself"
                )
            used.setdefault(name, ("sprt", key))
    field = sprt.get("field", [])
    if isinstance(field, list):
        for index, name in enumerate(field):
            if not isinstance(name, str):
                continue
            if name not in names:
                yield Problem(("sprt", "field", index), f"no bot named {name!r} in bots{_suggest(name, list(names))}")
            elif name in used:
                yield Problem(("sprt", "field", index), f"{name!r} is named twice")
            used.setdefault(name, ("sprt", "field", index))
        if ppm is not None and ppm > 2 and len(field) != ppm - 1:
            need = f"{_count(ppm - 1, 'bot')} besides the one tested"
            yield Problem(("sprt", "field"), f"{_count(len(field), 'bot')} for tables of {ppm}: it needs {need}")
        if ppm == 2 and field:
            yield Problem(("sprt", "field"), "only for tables of more than 2: at 2, candidate and baseline meet")
    elo0, elo1 = sprt.get("elo0", 0.0), sprt.get("elo1", 5.0)
    if isinstance(elo0, int | float) and isinstance(elo1, int | float) and not elo0 < elo1:
        yield Problem(("sprt", "elo1"), f"must be above elo0 ({elo0}), not {elo1}")
    for name, index in names.items():
        if name not in used and len(used) >= 2:
            yield Problem(
                ("bots", index, "name"), f"{name!r} plays no part in the sprt: not its candidate, baseline or field"
            )


def _gauntlet_checks(candidates: list[Any], names: Mapping[str, int], ppm: int | None) -> Iterator[Problem]:
    chosen: set[str] = set()
    for index, candidate in enumerate(candidates):
        if not isinstance(candidate, str):
            continue
        loc = ("gauntlet", "candidates", index)
        if candidate in chosen:
            yield Problem(loc, f"{candidate!r} is named twice")
        elif candidate not in names:
            yield Problem(loc, f"no bot named {candidate!r} in bots{_suggest(candidate, list(names))}")
        chosen.add(candidate)
    field_size = len([name for name in names if name not in chosen])
    if ppm is not None and ppm >= 2 and field_size < ppm - 1:
        yield Problem(
            ("gauntlet", "candidates"),
            f"{_count(field_size, 'bot')} left for the field, too few for {ppm} per table: it needs {ppm - 1}",
        )


def _bot_checks(bot: Mapping[str, Any], loc: Loc, base: Path, sandbox: object) -> Iterator[Problem]:
    builtin, command = bot.get("builtin"), bot.get("command")
    if builtin is not None and command is not None:
        yield Problem((*loc, "command"), "a bot has builtin or command, not both")
    elif builtin is None and command is None:
        yield Problem(loc, "needs builtin (an installed bot) or command (a program to start)")
    if builtin is None and "subprocess" in bot:
        yield Problem((*loc, "subprocess"), "only for a built-in bot: a command bot always runs as a subprocess")
    if builtin is None and "options" in bot:
        yield Problem((*loc, "options"), "only for a built-in bot: a command bot takes its options in its command")
    if builtin is not None:
        for key in ("protocol", "dir"):
            if key in bot:
                yield Problem((*loc, key), f"only for a command bot: a built-in bot brings its own {key}")
        if isinstance(builtin, str):
            from arena.plugins import load_registry  # imports every installed plugin: only when needed

            registry = load_registry()
            known = list(registry)
            if builtin not in known:
                yield Problem(
                    (*loc, "builtin"),
                    f"no bot {builtin!r} is installed{_suggest(builtin, known)}"
                    f" (installed: {', '.join(sorted(known)) or 'none'}; see arena bots)",
                )
            elif isinstance(bot.get("options"), dict):
                for problem in registry[builtin].option_problems(bot["options"]):
                    yield Problem((*loc, "options"), f"{problem}; see arena bots")
        return
    written = bot.get("dir")
    if isinstance(written, str) and written and not (base / written).is_dir():
        yield Problem((*loc, "dir"), f"no such directory: {base / written}")
        return
    if not (isinstance(command, list) and command and all(isinstance(part, str) and part for part in command)):
        return
    directory = bot_directory(command, written if isinstance(written, str) else None, base)
    try:  # as the launcher will: a program with a slash in its directory or the YAML's, else on the bot's PATH
        find_program(_absolute_command(command, base), directory, _bot_path(sandbox))
    except SandboxError as error:
        yield Problem((*loc, "command"), str(error))
    yield from _missing_scripts(command, loc, base.resolve(), directory, sandbox == SandboxLevel.NONE.value)
    if sandbox == SandboxLevel.STRICT.value:
        for old, new in zip(command, _absolute_command(command, base), strict=True):
            if new != old and not Path(new).is_relative_to(directory):
                yield Problem(
                    (*loc, "command"),
                    f"{old} is outside the bot's directory {directory}, which is all a strict sandbox shows"
                    " of its files: move it there, or set dir",
                )


SCRIPT_SUFFIXES = frozenset({".py", ".pyc", ".pyz", ".js", ".mjs", ".cjs", ".jar", ".rb", ".pl", ".lua", ".php", ".sh"})
"""An argument of a command bot ending so names the bot's source: a typo in it would only show as a crash."""


def _missing_scripts(command: list[str], loc: Loc, base: Path, directory: Path, unsandboxed: bool) -> Iterator[Problem]:
    """The arguments that name a script which is not there. Relative to the YAML file's folder, where the arena
    finds it; or, at sandbox none only, to the bot's directory, where the bot starts (elsewhere it starts in a
    folder of its own). Code (after -c), lists (a classpath) and options are not names."""
    for position, part in enumerate(command[1:], start=1):
        named = Path(part).suffix in SCRIPT_SUFFIXES and command[position - 1] != "-c"
        if not named or part.startswith("-") or os.pathsep in part or any(c.isspace() for c in part):
            continue
        in_directory = (directory / part).exists()
        if (base / part).exists() or (unsandboxed and in_directory):
            continue
        where = f"{base} nor in {directory}" if unsandboxed and directory != base else str(base)
        if in_directory:
            where += "; a sandboxed bot does not start in its directory: write the path from the YAML file's folder"
        yield Problem((*loc, "command", position), f"no such file: {part} (not in {where})")


def _bot_path(sandbox: object) -> str:
    """The PATH a bot's program is looked up on (an unknown level, reported elsewhere, as strict)."""
    return bot_path(SandboxLevel.NONE if sandbox == SandboxLevel.NONE.value else SandboxLevel.STRICT)


def _absolute_command(written: Sequence[str], base: Path) -> tuple[str, ...]:
    """The arguments that name files made absolute (BotCommand.in_directory) and resolved as well: a path
    through `..` fails inside a sandbox that shows the target's directory but not the one it was written from."""
    absolute = BotCommand.in_directory("-", tuple(written), Transport.ZMQ, base).command
    return tuple(str(Path(new).resolve()) if new != old else old for old, new in zip(written, absolute, strict=True))


# ------------------------------------------------------------------------------------------------ words


def _message(detail: ErrorDetails, model: type[BaseModel]) -> str:
    """pydantic's error, validating `model`, in the words of a configuration file."""
    kind, value, ctx = detail["type"], detail.get("input"), detail.get("ctx") or {}
    if kind == "arena":
        return detail["msg"]
    if kind == "missing":
        return "required"
    if kind == "extra_forbidden":
        return _unknown_key(tuple(detail["loc"]), model)
    if kind == "string_type":
        hint = f" (quote it: {_scalar_hint(value)})" if isinstance(value, (bool, int, float)) else ""
        return f"must be a string, not {_shown(value)}{hint}"
    if kind in ("int_type", "int_from_float", "int_parsing"):
        return f"must be a whole number, not {_shown(value)}"
    if kind == "bool_type":
        return f"must be true or false, not {_shown(value)}"
    if kind == "literal_error":
        return f"must be {ctx.get('expected', 'one of the listed values')}, not {_shown(value)}"
    if kind == "list_type":
        return f"must be a list, not {_shown(value)}"
    if kind in ("too_short", "string_too_short"):
        return "must not be empty"
    if kind == "greater_than_equal":
        return f"must be at least {ctx['ge']}, not {_shown(value)}"
    if kind == "less_than":
        return f"must be less than {_bound(ctx['lt'])}, not {_shown(value)}"
    if kind in ("model_type", "dict_type", "model_attributes_type"):
        return f"must be a mapping (key: value), not {_shown(value)}"
    message = detail["msg"]
    return message[:1].lower() + message[1:]


def _bound(limit: object) -> str:
    """A range's end as a reader writes it: 2**256 rather than its 78 digits."""
    if isinstance(limit, int) and limit > 2**32 and limit & (limit - 1) == 0:
        return f"2**{limit.bit_length() - 1}"
    return str(limit)


def _unknown_key(loc: Loc, model: type[BaseModel]) -> str:
    key = str(loc[-1])
    known = _keys_at(loc[:-1], model)
    suggestion = _suggest(key, known)
    if suggestion:
        return f"unknown key{suggestion}"
    here = _model_at(loc[:-1], model)
    for section in here.sections if isinstance(here, type) and issubclass(here, Model) else ():
        if key in _keys_at((*loc[:-1], section), model):
            return f"unknown key here; it belongs under {section} ({section}: {{{key}: ...}})"
    return f"unknown key (known here: {', '.join(known)})"


def _keys_at(loc: Loc, model: type[BaseModel]) -> list[str]:
    """The keys `model` allows at `loc` (a mapping's path, list indices included)."""
    annotation = _model_at(loc, model)
    return list(annotation.model_fields) if annotation is not None else []


def _model_at(loc: Loc, model: type[BaseModel]) -> type[BaseModel] | None:
    """The model of the mapping at `loc` in `model`; None where there is none (a list, a value, no such key)."""
    annotation: Any = model
    for part in loc:
        annotation = _unwrap(annotation)
        if isinstance(part, int):
            args = get_args(annotation)
            annotation = args[0] if get_origin(annotation) is list and args else None
        elif isinstance(annotation, type) and issubclass(annotation, BaseModel) and part in annotation.model_fields:
            annotation = annotation.model_fields[part].annotation
        else:
            return None
    annotation = _unwrap(annotation)
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def _unwrap(annotation: Any) -> Any:
    """X from X | None and from Annotated[X, ...]."""
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation = get_args(annotation)[0]
        elif origin in (Union, types.UnionType):
            members = [arg for arg in get_args(annotation) if arg is not type(None)]
            if len(members) != 1:
                return annotation
            annotation = members[0]
        else:
            return annotation


def _suggest(word: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    if not close:
        lowered = {choice.lower(): choice for choice in choices}
        close = [lowered[word.lower()]] if word.lower() in lowered else []
    return f"; did you mean {close[0]!r}?" if close else ""


def _shown(value: object) -> str:
    if value is None:
        return "an empty value"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        return repr(value)
    return f"a {_kind(value)}"


def _kind(value: object) -> str:
    if isinstance(value, dict):
        return "mapping"
    if isinstance(value, list):
        return "list"
    return type(value).__name__


def _scalar_hint(value: object) -> str:
    text = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return f'"{text}"'


def _count(count: int, one: str) -> str:
    return f"{count} {one if count == 1 else one + 's'}"


def _path(loc: Loc) -> str:
    """bots[1].command, as a reader of the file would write it; a key that is not a plain word quoted, so that a
    blank, a dot or a line break in it cannot blur the path or split the problem's line."""
    text = ""
    for part in loc:
        key = str(part) if _PLAIN_KEY.fullmatch(str(part)) else repr(str(part))
        text += f"[{part}]" if isinstance(part, int) else (f".{key}" if text else key)
    return text


_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _render(problems: Sequence[Problem], root: yaml.Node | None, shown: str) -> list[str]:
    """FILE:LINE: field.path: problem, in the order of the file, each once."""
    lines: list[tuple[int, str]] = []
    for problem in problems:
        line = problem.line if problem.line is not None else _locate(root, problem.at or problem.loc)[1]
        where = _path(problem.loc)
        lines.append(
            (line, f"{shown}:{line}: {where}: {problem.message}" if where else f"{shown}:{line}: {problem.message}")
        )
    unique = dict.fromkeys(text for _, text in sorted(lines, key=lambda item: item[0]))
    return list(unique)


# ------------------------------------------------------------------------------------------------ build


def build_tournament(model: _Tournament, source: Source) -> TournamentConfig:
    """The configuration a valid tournament file describes: plain values, absolute paths."""
    base = source.base
    limits = model.limits
    return TournamentConfig(
        name=model.name,
        ruleset=model.ruleset,
        format=Format(model.format),
        players_per_match=model.players_per_match,
        rounds=model.rounds,
        repeats=model.repeats,
        duplicate=model.duplicate,
        seed=model.seed,
        concurrency=model.concurrency,
        sandbox=SandboxLevel(model.sandbox),
        timing=Timing(
            move_ms=limits.move_ms,
            startup_ms=limits.startup_ms,
            wall_factor=limits.wall_factor,
            ponder=limits.ponder,
        ),
        limits=Limits(
            memory_mb=limits.memory_mb,
            cpu_s=limits.cpu_s,
            processes=limits.processes,
            open_files=limits.open_files,
            file_size_mb=limits.file_size_mb,
            disk_mb=limits.disk_mb,
            stderr_kb=limits.stderr_kb,
            memory_mechanism=MemoryMechanism(limits.memory_mechanism),
        ),
        output=(base / (model.output or f"results/{model.name}")).resolve(),
        bots=tuple(_entry(bot, base) for bot in model.bots),
        gauntlet=None
        if model.gauntlet is None
        else GauntletConfig(tuple(model.gauntlet.candidates), model.gauntlet.repeats),
        sprt=None
        if model.sprt is None
        else SprtConfig(**{**model.sprt.model_dump(), "field": tuple(model.sprt.field)}),
        source=source.path,
        raw_text=source.text,
        executor=ExecutorConfig(ExecutorType(model.executor.type), model.executor.address, model.executor.max_bot_mb),
        bot_uids=users.parse_range(model.bot_uids) if model.bot_uids is not None else None,
    )


def _entry(bot: _Bot, base: Path) -> BotEntry:
    if bot.builtin is not None:
        options = tuple(sorted((bot.options or {}).items()))
        return BotEntry(bot.name, builtin=bot.builtin, subprocess=bool(bot.subprocess), options=options)
    assert bot.command is not None
    written = tuple(bot.command)
    protocol = Transport(bot.protocol or Transport.ZMQ)
    command = _absolute_command(written, base)
    return BotEntry(bot.name, command=BotCommand(bot.name, command, protocol, bot_directory(written, bot.dir, base)))


__all__ = [
    "LineOf",
    "Loc",
    "Model",
    "Positive",
    "Problem",
    "Source",
    "TournamentModel",
    "build_tournament",
    "folder_in_bot_directory",
    "load_config",
    "load_file",
    "validate_model",
    "validate_tournament",
]

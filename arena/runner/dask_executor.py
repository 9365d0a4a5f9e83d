"""Matches on a Dask cluster: the same MatchWorker, on other machines, through the same executor seam.

The arena process stays the only writer of the store: each match is a Dask task whose result (a MatchDone,
replay text included) streams back as it finishes. Workers share no file system with the arena: each
command bot's directory travels as a tar.gz blob (capped), unpacked once per worker process into a private
directory; built-in and plugin bots come from the packages installed on the worker. A match is a pure
function of its job, so a task lost with its worker is simply played again from its seed elsewhere, and
recorded once, since only finished tasks come back. See docs/cluster.md.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import shutil
import tempfile
import threading
import traceback
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import CancelledError
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.config import BotEntry, TournamentConfig
from arena.errors import UsageError, WorkerFailed
from arena.matches import MatchDone, MatchFailed, MatchJob, MatchOutcome
from arena.players.values import BotCommand
from arena.runner import bundles
from arena.runner.worker import MatchWorker

if TYPE_CHECKING:
    from distributed import Client

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 30
RETRIES = 2
"""Further tries of a task that raised outside the match (the match's own errors come back as MatchFailed); a
worker that dies is handled by the scheduler itself, which plays the task elsewhere."""
EXTRA_HINT = 'pip install "loveletter-arena[dask]"'


class ClusterError(WorkerFailed):
    """The cluster could not carry the run: no scheduler, a lost scheduler, a match that kills its workers."""


@dataclass(frozen=True, slots=True)
class PackedBot:
    digest: str
    blob: bytes
    directory: str
    """Where the bot's files are on the arena's machine: its command's paths are rewritten from it."""


@dataclass(frozen=True, slots=True)
class PackedConfig:
    """What every worker needs once: the configuration and the bots' files. Scattered to every worker."""

    token: str
    config: TournamentConfig
    bots: dict[str, PackedBot]


def _distributed() -> Any:
    try:
        import distributed
    except ImportError as error:
        raise UsageError(
            f"executor type dask needs the dask extra, which is not installed ({error}): {EXTRA_HINT}"
        ) from None
    return distributed


def pack_config(config: TournamentConfig) -> PackedConfig:
    """Every command bot's directory packed, before the first match: a problem with one is found now, and a
    link left behind is named once."""
    bots: dict[str, PackedBot] = {}
    for entry in config.bots:
        if entry.command is None:
            continue
        directory = entry.command.directory
        skip = config.output if config.output.is_relative_to(directory) else None
        bundle = bundles.pack(directory, bot=entry.name, cap_mb=config.executor.max_bot_mb, skip=skip)
        if bundle.dropped:
            links = ", ".join(f"{link.path} -> {link.target}" for link in bundle.dropped)
            log.warning(
                "dask: bot %s: links leading out of its directory are not shipped to the workers (the strict"
                " sandbox would not show their targets either): %s",
                entry.name,
                links,
            )
        bots[entry.name] = PackedBot(hashlib.sha256(bundle.blob).hexdigest(), bundle.blob, str(directory))
    return PackedConfig(uuid.uuid4().hex, config, bots)


class DaskExecutor:
    """Each match a task on the cluster at config.executor.address; `workers` is the cluster's business."""

    def __init__(self, config: TournamentConfig, workers: int) -> None:
        distributed = _distributed()
        address = config.executor.address
        if not address:
            raise UsageError("executor type dask needs an address: executor: {type: dask, address: tcp://host:8786}")
        self._distributed = distributed
        self._address = address
        self._packed = pack_config(config)  # before connecting: a bot over the cap fails at once
        try:
            self._client: Client = distributed.Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
        except (OSError, TimeoutError) as error:
            raise ClusterError(f"cannot reach the Dask scheduler at {address}: {error}") from None
        try:
            self._client.register_plugin(_cleanup_plugin(distributed), name="loveletter-arena-cleanup")
            self._shared = self._client.scatter(self._packed, broadcast=True, hash=False)
        except BaseException:
            self._client.close()
            raise

    def run(self, jobs: Sequence[MatchJob]) -> Iterator[MatchOutcome]:
        futures = {
            self._client.submit(
                play_remote,
                job,
                self._shared,
                key=f"arena-{job.match_id}-{self._packed.token}",
                pure=False,
                retries=RETRIES,
            ): job
            for job in jobs
        }
        try:
            for future in self._distributed.as_completed(futures, loop=self._client.loop):
                job = futures.pop(future)
                outcome = self._result(future, job)
                # Released before the caller sees it: the scheduler would otherwise play the match again if the
                # worker holding its result died, perhaps after this run has released its bots.
                future.release()
                yield outcome
        finally:
            for future in futures:
                future.cancel()

    def _result(self, future: Any, job: MatchJob) -> MatchOutcome:
        try:
            done = future.result()
        except (CancelledError, self._distributed.client.FutureCancelledError):
            raise self._lost() from None
        except self._distributed.KilledWorker as error:  # as a dead local worker: this match fails, the run goes on
            return MatchFailed(job, f"every worker that played it died ({error})\n")
        except (OSError, TimeoutError) as error:
            if self._client.status not in ("running", "connecting"):
                raise self._lost() from None
            raise ClusterError(f"match {job.match_id}: {error!r}") from error
        except Exception as error:  # the task failed outside the match, as often as it was tried
            return MatchFailed(job, "".join(traceback.format_exception(error)))
        assert isinstance(done, MatchDone | MatchFailed)
        return done

    def _lost(self) -> ClusterError:
        return ClusterError(
            f"lost the Dask scheduler at {self._address}; finished matches are kept: run the same command again"
            " to resume"
        )

    def close(self) -> None:
        """Ask each worker to shut this run's bots down, then disconnect."""
        try:
            if self._client.status == "running":
                self._client.run(release, self._packed.token)
        except (OSError, TimeoutError) as error:
            log.warning("dask: could not ask the workers to stop this run's bots: %s", error)
        finally:
            self._client.close()

    def terminate(self) -> None:
        """Stop at once (Ctrl-C): cancel what is queued, stop the bots, disconnect."""
        self.close()


# ------------------------------------------------------------------------------------------ on the workers

_lock = threading.Lock()
_workers: dict[str, MatchWorker] = {}
"""One MatchWorker per run per worker process, so its bot processes are kept from match to match."""
_playing: dict[str, int] = {}
"""Per run, its matches being played on this worker now."""
_released: set[str] = set()
"""Runs that have ended: a task of theirs that still arrives starts no bot."""
_root: Path | None = None
_unpacked: dict[str, Path] = {}
"""A bot blob's digest -> its directory on this worker."""


def play_remote(job: MatchJob, packed: PackedConfig) -> MatchOutcome:
    """A Dask task: play one match on this worker, as a local worker process would, errors included."""
    token = packed.token
    try:
        with _lock:
            if token in _released:
                return MatchFailed(job, "the run had already ended when this match reached the worker\n")
            worker = _workers.get(token)
            if worker is None:
                try:
                    here = _localised(packed)
                except Exception as error:  # a torn blob, a full disk: this worker's failure, not a bot's
                    reason = f"a cluster worker could not unpack a bot: {type(error).__name__}: {error}"
                    return MatchFailed(job, traceback.format_exc(), reason)
                worker = _workers[token] = MatchWorker(here)
            _playing[token] = _playing.get(token, 0) + 1
    except Exception:
        return MatchFailed(job, traceback.format_exc())
    try:
        return worker.attempt(job)
    finally:
        with _lock:
            _playing[token] -= 1
            ended = _ended(token)
        if ended is not None:
            ended.close()


def release(token: str) -> None:
    """Shut down the bots a run kept on this worker (the arena calls it at the end of the run). A match of the
    run may still be played here, one the scheduler ran again after a worker died: then they are shut down as
    it ends, not under it (it would start them again, and nobody would stop them)."""
    with _lock:
        _released.add(token)
        ended = _ended(token)
    if ended is not None:
        ended.close()


def _ended(token: str) -> MatchWorker | None:
    """The run's worker, taken away, once the run is released and none of its matches plays here (under _lock)."""
    if token not in _released or _playing.get(token):
        return None
    _playing.pop(token, None)
    return _workers.pop(token, None)


def _localised(packed: PackedConfig) -> TournamentConfig:
    """The configuration with each command bot's files unpacked here and its command pointing at them."""
    bots = []
    for entry in packed.config.bots:
        shipped = packed.bots.get(entry.name)
        if entry.command is None or shipped is None:
            bots.append(entry)
            continue
        bots.append(BotEntry(entry.name, command=_moved(entry.command, shipped, _unpack(shipped))))
    return replace(packed.config, bots=tuple(bots))


def _moved(command: BotCommand, shipped: PackedBot, here: Path) -> BotCommand:
    old = Path(shipped.directory)
    parts = tuple(
        str(here / Path(part).relative_to(old)) if Path(part).is_absolute() and Path(part).is_relative_to(old) else part
        for part in command.command
    )
    return replace(command, command=parts, directory=here)


def _unpack(shipped: PackedBot) -> Path:
    global _root
    if shipped.digest in _unpacked:
        return _unpacked[shipped.digest]
    if _root is None:
        _root = Path(tempfile.mkdtemp(prefix="arena-bots-"))
        _root.chmod(0o711)  # a bot with a UID of its own reaches its directory, but lists no other
    target = _root / shipped.digest
    partial = _root / f"{shipped.digest}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    bundles.unpack(shipped.blob, partial)
    partial.rename(target)
    _unpacked[shipped.digest] = target
    return target


def _close_all() -> None:
    global _root
    with _lock:
        workers = list(_workers.values())
        _workers.clear()
    for worker in workers:
        with contextlib.suppress(Exception):
            worker.close()
    if _root is not None:
        shutil.rmtree(_root, ignore_errors=True)
        _root = None
        _unpacked.clear()


def _cleanup_plugin(distributed: Any) -> Any:
    """A Dask worker plugin: a worker that closes stops every kept bot and removes the unpacked bots. Made
    here, as distributed is an optional import."""

    class Cleanup(distributed.WorkerPlugin):
        idempotent = True

        def teardown(self, worker: object) -> None:
            _close_all()

    return Cleanup()


__all__ = ["ClusterError", "DaskExecutor", "play_remote"]
